"""KServe LLMInferenceServices (`serving.kserve.io` v1alpha2, and v1alpha1 read alike): a pod
template for every pod the controller will make from the spec (`model.serving.llmisvc.generated_pods`:
decode `<name>-kserve`, the LeaderWorkerSet `<name>-kserve-mn` leader and workers, prefill
`<name>-kserve-prefill` / `<name>-kserve-mn-prefill`, the scheduler
`<name>-kserve-router-scheduler`), with the containers the presets and the controller add, the
wiring of its `gpu-inference.dev/pool.<component>` annotation, and for the vLLM pods what vLLM is
told (`LLMPod`: parallelism, model, max-model-len, memory utilisation) for the LLM rules.

Resource ids: `LLMInferenceService/<name>/<workload>` for a Deployment's pods and
`LLMInferenceService/<name>/<workload>/leader|worker` for a LeaderWorkerSet's, `<name>` the graph
entry's name and `<workload>` the controller's.

What vLLM gets (KServe v0.20.0 presets, charts/kserve-runtime-configs
files/llmisvcconfigs/resources.yaml): a single-node pod runs `vllm serve` with
`--tensor-parallel-size` from `parallelism.tensor` and nothing from `parallelism.pipeline` /
`data` (only the container's args or `VLLM_ADDITIONAL_ARGS` can add them); a data-parallel
worker group (`worker` with `data`) runs `--data-parallel-size data --data-parallel-size-local
dataLocal` engines of `tensor` GPUs; a pipeline worker group (`worker` with `pipeline`) has
`pipeline` pods, but v0.20.0 ships no preset for it (ConfigNotFound), so it is judged as vLLM
would run it (pipeline x tensor GPUs over the group). The options read from the `main`
container (`model.serving.llmisvc.vllm_flags`): --tensor-parallel-size, --pipeline-parallel-size,
--max-model-len, --gpu-memory-utilization, --dtype, --kv-cache-dtype; they win over the
`gpu-inference.dev/max-model-len` / `gpu-memory-utilization` annotations (vLLM sees them). A
worker pod is judged by its own container alone: KServe v0.20.0 builds the workers from
`spec.worker` only (`workload_multi_node.go` expectedMainMultiNodeLWS) and vLLM's headless
workers read their own command line, so a worker without `--max-model-len` runs at the model's
full length whatever the annotations say.

`baseRefs`: the LLMInferenceServiceConfigs of the graph it names (in the service's namespace,
else `kserve`, as the controller looks them up) are merged under its spec
(`model.serving.llmisvc.merge_specs`); one the graph does not have is not known, and the service is
judged without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...model.serving.llmisvc import (
    DOWNLOAD_SCHEMES,
    KSERVE_NAMESPACE,
    MODEL_ROLES,
    ROLE_WIRING,
    WORKER_ROLES,
    GeneratedPods,
    generated_pods,
    merge_specs,
    pod_containers,
    vllm_flags,
)
from ..contract import (
    GPU_MEMORY_UTILIZATION_ANNOTATION,
    MAX_MODEL_LEN_ANNOTATION,
    MODEL_ANNOTATION,
    MODEL_DTYPE_ANNOTATION,
    WIRED_POOL_ANNOTATION,
    wired_annotation,
)
from ..read import (
    Gang,
    LLMPod,
    Template,
    as_int,
    as_list,
    as_map,
    is_type,
    metadata,
    namespace_of,
    resource_id,
    split_pools,
)


def _plain(value: Any) -> Any:
    """A plain dict / list copy of the inputs (the model layer takes dicts)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _part(spec: Mapping[str, Any], role: str) -> Mapping[str, Any]:
    """The part of the spec a role's pods come from: the top level, prefill or the scheduler."""
    if role == "scheduler":
        return as_map(as_map(spec.get("router")).get("scheduler"))
    return as_map(spec.get("prefill")) if role.startswith("prefill") else spec


def _replicas(part: Mapping[str, Any]) -> tuple[bool, int, int | None]:
    """(scaled to zero, fewest replicas, most replicas): `replicas` (absent: 1) or WVA `scaling`
    (minReplicas 1 or more by the CRD, absent 1; maxReplicas absent: unbounded)."""
    scaling = part.get("scaling")
    if isinstance(scaling, Mapping):
        return (
            False,
            max(as_int(scaling.get("minReplicas")) or 1, 1),
            as_int(scaling.get("maxReplicas")),
        )
    replicas = as_int(part.get("replicas"))
    replicas = 1 if replicas is None else replicas
    return replicas == 0, replicas, replicas


def _number(
    flags: Mapping[str, str], flag: str, annotations: Mapping[str, Any], key: str | None, kind: type
) -> Any:
    """vLLM's `--flag` (what vLLM gets), else the annotation `key`; None when neither; a
    `bad` text when the one given is not a number."""
    if flags.get(flag):
        text, where = flags[flag], f"the vLLM option --{flag} (vLLM refuses it)"
    elif key is not None and annotations.get(key) not in (None, ""):
        text, where = str(annotations[key]), f"the annotation {key}"
    else:
        return None
    try:
        return kind(text.strip())
    except ValueError:
        return f"{where}: {text!r} is not a number"


def _dtype(text: str | None) -> str | None:
    """vLLM's `--dtype` / `--kv-cache-dtype` value as a dtype of `llm.DTYPE_BYTES` (`auto`: none;
    `fp8_e4m3` / `fp8_e5m2`: fp8)."""
    if not text or text == "auto":
        return None
    return "fp8" if text.startswith("fp8") else text


def llm_pod(
    cr: str, g: GeneratedPods, spec: Mapping[str, Any], annotations: Mapping[str, Any]
) -> LLMPod:
    """What vLLM in the pods of `g` is told (see the module docstring)."""
    part = _part(spec, g.role)
    par = as_map(part.get("parallelism"))
    containers, _ = pod_containers(g)
    main = next((c for c in containers if c.get("name") == "main"), {})
    flags = vllm_flags(main)
    bad: list[str] = []
    data, data_local = as_int(par.get("data")), as_int(par.get("dataLocal"))
    if part.get("worker") is not None and (data or data_local):
        mode, size = "data", max((data or 1) // (data_local or 1), 1)
    elif part.get("worker") is not None and as_int(par.get("pipeline")):
        mode, size, data, data_local = "pipeline", as_int(par.get("pipeline")) or 1, None, None
    else:
        mode, size, data, data_local = "single", 1, None, None
    # A worker pod runs vLLM headless with its own command line only (KServe builds it from
    # spec.worker alone): what the service's annotations say of its vLLM is not what it gets.
    said: Mapping[str, Any] = {} if g.role in WORKER_ROLES else annotations
    read = {
        "tensor": _number(flags, "tensor-parallel-size", said, None, int),
        "pipeline": _number(flags, "pipeline-parallel-size", said, None, int),
        "length": _number(flags, "max-model-len", said, MAX_MODEL_LEN_ANNOTATION, int),
        "util": _number(
            flags, "gpu-memory-utilization", said, GPU_MEMORY_UTILIZATION_ANNOTATION, float
        ),
    }
    for what, value in list(read.items()):
        if isinstance(value, str):
            bad.append(value)
            read[what] = None
    tensor = read["tensor"] or as_int(par.get("tensor")) or 1
    pipeline = (as_int(par.get("pipeline")) if mode == "pipeline" else read["pipeline"]) or 1
    length, util = read["length"], read["util"]
    model = as_map(spec.get("model"))
    uri = str(model.get("uri") or "")
    enabled = as_map(spec.get("storageInitializer")).get("enabled") is not False
    stated = annotations.get(MODEL_DTYPE_ANNOTATION)
    return LLMPod(
        cr=cr,
        role=g.role,
        mode=mode,
        tensor=max(tensor, 1),
        pipeline=max(pipeline, 1),
        data=data,
        data_local=data_local,
        expert=bool(par.get("expert")),
        pods_per_group=size,
        model=str(annotations[MODEL_ANNOTATION]) if annotations.get(MODEL_ANNOTATION) else None,
        uri=uri,
        max_model_len=length,
        gpu_memory_utilization=util,
        dtype=_dtype(flags.get("dtype")) or (str(stated).strip().lower() if stated else None),
        kv_dtype=_dtype(flags.get("kv-cache-dtype")),
        downloads=enabled and uri.split("://", 1)[0] in DOWNLOAD_SCHEMES,
        unreadable=tuple(bad),
    )


def _wiring(role: str, annotations: Mapping[str, Any]) -> tuple[str, ...]:
    for component in ROLE_WIRING[role]:
        key = wired_annotation(component)
        if key in annotations:
            return split_pools(annotations[key])
    return split_pools(annotations.get(WIRED_POOL_ANNOTATION))


def llm_configs(graph: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The graph's LLMInferenceServiceConfigs' specs by (namespace, name)."""
    out = {}
    for entry in graph:
        if is_type(str(entry.get("type", "")), "serving.kserve.io", "LLMInferenceServiceConfig"):
            inputs = as_map(entry.get("inputs"))
            name = str(metadata(inputs).get("name") or entry.get("name"))
            out[(namespace_of(inputs), name)] = _plain(as_map(inputs.get("spec")))
    return out


def _with_base_refs(
    spec: dict[str, Any], namespace: str, configs: Mapping[tuple[str, str], dict[str, Any]]
) -> dict[str, Any]:
    bases = []
    for ref in as_list(spec.get("baseRefs")):
        ref_name = str(as_map(ref).get("name") or "")
        found = configs.get((namespace, ref_name), configs.get((KSERVE_NAMESPACE, ref_name)))
        if found is not None:
            bases.append(found)
    return merge_specs(*bases, spec) if bases else spec


def llm_inference_service_templates(
    entry: Mapping[str, Any], configs: Mapping[tuple[str, str], dict[str, Any]]
) -> list[Template]:
    """A pod template per pod the controller makes, wired by the annotation of its component
    (`model.serving.llmisvc.ROLE_WIRING`), else by the CR's `gpu-inference.dev/pool`."""
    typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
    inputs = as_map(entry.get("inputs"))
    md = metadata(inputs)
    annotations = as_map(md.get("annotations"))
    spec = _plain(as_map(inputs.get("spec")))
    spec = _with_base_refs(spec, namespace_of(inputs), configs)
    cr = {"metadata": {"name": str(md.get("name") or name)}, "spec": spec}
    try:
        pods = generated_pods(cr)
    except (AttributeError, TypeError, ValueError):
        return []  # a part of the spec is not an object: the API server refuses the CR
    rid = resource_id(typ, name)
    out = []
    for g in pods:
        zero, least, most = _replicas(_part(spec, g.role))
        per_group = 1
        if g.role.endswith("worker"):
            per_group = (as_int(g.group_size) or 1) - 1
            if per_group <= 0:
                continue  # a group of one pod is its leader alone
            most = None if most is None else most * per_group
        containers, inits = pod_containers(g)
        added = tuple(c["name"] for c in [*g.added_containers, *g.added_init_containers])
        component = g.workload
        if g.kind == "LeaderWorkerSet":
            component += "/" + g.role.rsplit("-", 1)[-1]
        model_pod = g.role in MODEL_ROLES
        out.append(
            Template(
                type=typ,
                name=name,
                component=component,
                namespace=namespace_of(inputs),
                fragment=g.pod_spec,
                containers=list(containers),
                init_containers=list(inits),
                wired=_wiring(g.role, annotations),
                scales_to_zero=zero,
                max_replicas=most,
                always=least * per_group,
                gang=Gang(f"{rid}/{g.workload}", per_group, g.role.endswith("leader"))
                if g.kind == "LeaderWorkerSet"
                else None,
                model_annotations=annotations if model_pod else {},
                annotations=annotations,
                added=added,
                llm=llm_pod(rid, g, spec, annotations) if model_pod else None,
            )
        )
    return out
