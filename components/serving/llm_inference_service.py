"""KServe `LLMInferenceService` (serving.kserve.io/v1alpha2, KServe v0.20.0) wired to node pools
through `Placement`.

The CR body is decided by the pure `llm_inference_service_body(args, name)`; the component is a
thin shell over it. What the controller makes from the body (names, presets, model download) is
in `components.model.serving.llmisvc`; what the model needs from its GPUs in `components.model.serving.llm`.

- `decode` (the spec's top level): replicas or autoscaling (WVA with KEDA or HPA), parallelism
  (tensor, pipeline, data, dataLocal, expert), the `main` container's GPUs / CPU / memory and
  extra vLLM arguments, the pool's placement; an optional multi-node `worker` (a LeaderWorkerSet:
  leader from `template`, workers from `worker`), on the same pool unless it names its own;
- `prefill`: the same shape, on its own pool (disaggregated prefill/decode);
- `router`: the managed Gateway API route on the default gateway (or `gateway_refs`), and the
  endpoint-picker scheduler with its own placement (a CPU pool);
- the model URI (hf://, s3://, pvc://, oci://) and name, LoRA adapters.

Only the `main` container's fields are written; the image and command come from KServe's presets
(merged by container name, the service's fields winning). Every pod template gets its pool's
placement: the presets carry none, so a template without one lands anywhere but a tainted pool.

Annotations for the placement check: `gpu-inference.dev/pool.<component>` (component decode,
worker, prefill, prefill-worker, scheduler) names the pools each part is wired to; the model's
size (`gpu-inference.dev/model-size-gb`, `-parameters`, `-dtype`), its table key
(`gpu-inference.dev/model`), `gpu-inference.dev/max-model-len` and
`gpu-inference.dev/gpu-memory-utilization` say what the fit check needs.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..kube.provider import create_opts, owned
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import MAX_REPLICAS
from ..model.scheduling import (
    NodeSelectorRequirement,
    Placement,
    validate_dns1035_label,
    validate_dns1123_label,
    validate_label_key,
)
from ..model.serving import llm, llmisvc
from ..model.serving.annotations import (
    GPU_MEMORY_UTILIZATION_ANNOTATION,
    MAX_MODEL_LEN_ANNOTATION,
    MODEL_ANNOTATION,
    MODEL_DTYPE_ANNOTATION,
    MODEL_PARAMETERS_ANNOTATION,
    MODEL_SIZE_ANNOTATION,
    WIRED_COMPONENT_POOL_ANNOTATION,
)
from .claims import GpuClaimArgs, claim_template, claimed_gpus, part_claim
from .workload import (
    EnvValue,
    container_resources,
    cr_metadata,
    effective_placement,
    env_list,
    placement_fields,
)

API_VERSION = llmisvc.API_VERSION
KIND = llmisvc.KIND
DEFAULT_NAMESPACE = "default"
STACK_NAMESPACE = "models"
"""A stack puts its models in its own namespace (made with its ServiceAccount), as for
InferenceServices."""
AUTOSCALERS = ("keda", "hpa")
_GATEWAY_REF = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


@dataclass
class LoRAAdapterArgs:
    """One LoRA adapter served beside the base model."""

    name: str
    """The adapter's model name in requests (unique, not the base model's name, not `.`/`..`)."""
    uri: str
    """Where the adapter is: hf://, s3:// or pvc://."""


@dataclass
class LLMWorkerArgs:
    """The worker pods of a multi-node (LeaderWorkerSet) workload."""

    gpus: Optional[int] = field(default=None, metadata=stack(ge=1))
    """NVIDIA GPUs of each worker's `main` container (request and limit); default: the
    leader's."""
    cpu: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """CPU request and limit of each worker's `main` container; default: the leader's."""
    memory: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Memory request and limit of each worker's `main` container; default: the leader's."""
    placement: Optional[Placement] = field(default=None, metadata=stack(hidden=True))
    """Where the workers land; default: the leader's placement."""
    extra_expressions: Optional[Sequence[NodeSelectorRequirement]] = None
    """Node-affinity expressions ANDed with the workers' pool's."""
    omit_gpu_toleration: Optional[bool] = False
    """Leave out the `nvidia.com/gpu` toleration (clusters with ExtendedResourceToleration)."""
    pools: Optional[Sequence[str]] = field(default=None, metadata=stack(hidden=True))
    """The pools the workers are wired to (annotation for the placement check); default: the
    leader's, unless the workers have a placement of their own."""
    gpu_claim: Optional[GpuClaimArgs] = None
    """GPUs by claim (DRA) of each worker's `main` container instead of `gpus`: a
    ResourceClaimTemplate `<name>-<part>-worker-gpu`; default: the leader's claim."""


@dataclass
class LLMWorkloadArgs:
    """The decode workload (the spec's top level) or the prefill workload."""

    gpus: Optional[int] = field(default=None, metadata=stack(ge=1))
    """NVIDIA GPUs of the `main` (vLLM) container per pod, request and limit: tensor parallelism
    (x dataLocal in data-parallel mode)."""
    cpu: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """CPU request and limit of the `main` container (`"8"`, `"500m"`)."""
    memory: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Memory request and limit of the `main` container (`"64Gi"`)."""
    replicas: Optional[int] = field(default=None, metadata=stack(ge=0, le=MAX_REPLICAS))
    """Fixed replicas (0 stops it); exclusive with max_replicas (autoscaling). KServe's default
    is 1."""
    min_replicas: Optional[int] = field(default=None, metadata=stack(ge=1, le=MAX_REPLICAS))
    """Autoscaling floor (1 or more; KServe's default 1)."""
    max_replicas: Optional[int] = field(default=None, metadata=stack(ge=1, le=MAX_REPLICAS))
    """Autoscaling ceiling: setting it turns on WVA autoscaling (`spec.scaling`)."""
    autoscaler: Optional[str] = field(default="keda", metadata=stack(choices=AUTOSCALERS))
    """The WVA actuator when autoscaling: keda or hpa (hpa needs a Prometheus Adapter)."""
    tensor: Optional[int] = field(default=None, metadata=stack(ge=1))
    """Tensor parallelism (vLLM `--tensor-parallel-size`)."""
    pipeline: Optional[int] = field(default=None, metadata=stack(ge=1))
    """Pipeline parallelism: only 1 at KServe v0.20.0, whose single-node presets pass vLLM only
    `--tensor-parallel-size` and whose multi-node pipeline presets are not shipped (put
    `--pipeline-parallel-size` in `args` to run it anyway)."""
    data: Optional[int] = field(default=None, metadata=stack(ge=1))
    """Data parallelism: engines in all (with data_local)."""
    data_local: Optional[int] = field(default=None, metadata=stack(ge=1))
    """Data-parallel engines per pod (with data); the LWS group has data / data_local pods."""
    expert: Optional[bool] = None
    """Expert parallelism (MoE models)."""
    env: Optional[Mapping[str, EnvValue]] = field(default=None, metadata=stack(syntax="env"))
    """Environment of the `main` container (e.g. `VLLM_ADDITIONAL_ARGS`): a string, or
    `{valueFrom: {secretKeyRef: {name, key}}}`, a value read from a Secret (a gated model's
    `HF_TOKEN`)."""
    args: Optional[Sequence[str]] = None
    """Extra vLLM arguments of the `main` container (after `--max-model-len`'s)."""
    placement: Optional[Placement] = field(default=None, metadata=stack(hidden=True))
    """Where the pods (the leaders, with a worker) land: a node pool's `placement`."""
    extra_expressions: Optional[Sequence[NodeSelectorRequirement]] = None
    """Node-affinity expressions ANDed with the pool's."""
    omit_gpu_toleration: Optional[bool] = False
    """Leave out the `nvidia.com/gpu` toleration (clusters with ExtendedResourceToleration)."""
    pools: Optional[Sequence[str]] = field(default=None, metadata=stack(hidden=True))
    """The pools this workload is wired to, in preference order (annotation for the check)."""
    worker: Optional[LLMWorkerArgs] = field(default=None, metadata=stack(hidden=True))
    """Multi-node: worker pods beside each leader (needs data / data_local parallelism)."""
    gpu_claim: Optional[GpuClaimArgs] = None
    """GPUs by claim (DRA) of the `main` container instead of `gpus`: a ResourceClaimTemplate
    `<name>-<part>-gpu` (part `decode` or `prefill`) and the container's claim on it; its
    count stands for `gpus` in the parallelism rules. Not with `gpus`; on a DRA pool."""


@dataclass
class LLMRouterArgs:
    """How requests reach the model: Gateway API route and the endpoint-picker scheduler."""

    enabled: Optional[bool] = True
    """Write `spec.router` (False: no route, no scheduler; the pods are reached directly)."""
    gateway_refs: Optional[Sequence[str]] = None
    """Gateways as `namespace/name`; default: KServe's default gateway
    (`kserve/kserve-ingress-gateway`)."""
    scheduler: Optional[bool] = field(default=True, metadata=stack("scheduler.enabled"))
    """Run the endpoint picker (an InferencePool in front of the pods)."""
    scheduler_replicas: Optional[int] = field(
        default=None, metadata=stack("scheduler.replicas", ge=1, le=MAX_REPLICAS)
    )
    """Scheduler replicas (1 or more; more turn on leader election)."""
    scheduler_placement: Optional[Placement] = field(default=None, metadata=stack(hidden=True))
    """Where the scheduler lands: a CPU pool's `placement`."""
    scheduler_cpu: Optional[str] = field(
        default=None, metadata=stack("scheduler.cpu", syntax="quantity")
    )
    """CPU request of the scheduler's `main` container (the preset requests 1, limit 6)."""
    scheduler_memory: Optional[str] = field(
        default=None, metadata=stack("scheduler.memory", syntax="quantity")
    )
    """Memory request of the scheduler's `main` container (the preset requests 2Gi, limit
    16Gi)."""
    scheduler_pools: Optional[Sequence[str]] = field(default=None, metadata=stack(hidden=True))
    """The pools the scheduler is wired to (annotation for the check)."""


@dataclass
class LLMInferenceServiceArgs:
    """Inputs of an `LLMInferenceService`; every default is here."""

    model_uri: str = field(metadata=stack())
    """Where the model is: hf://org/model, s3://bucket/path, pvc://claim/path, oci://image."""
    decode: LLMWorkloadArgs = field(metadata=stack(hidden=True))
    """The decode workload (all of it when there is no prefill)."""
    name: Optional[str] = field(
        default=None,
        metadata=stack(required=True, syntax="dns1035", doc="metadata.name (DNS-1035 label)."),
    )
    """metadata.name (DNS-1035 label); default: the component's name."""
    namespace: Optional[str] = field(
        default=DEFAULT_NAMESPACE, metadata=stack(syntax="dns1123", value=STACK_NAMESPACE)
    )
    """Namespace of the LLMInferenceService."""
    model_name: Optional[str] = None
    """The model's name in requests; KServe's default: metadata.name."""
    lora_adapters: Optional[Sequence[LoRAAdapterArgs]] = None
    """LoRA adapters downloaded and served beside the base model."""
    prefill: Optional[LLMWorkloadArgs] = field(default=None, metadata=stack(hidden=True))
    """A separate prefill workload (disaggregated prefill/decode)."""
    router: Optional[LLMRouterArgs] = field(default=None, metadata=stack(hidden=True))
    """Routing; default: the managed route on KServe's default gateway with a scheduler."""
    model: Optional[str] = field(default=None, metadata=stack(choices=tuple(llm.MODELS)))
    """The model's row in `components.model.serving.llm.MODELS` (e.g. `llama-3.1-70b`): its shape is
    checked against the parallelism here, and the check computes the fit from it."""
    model_size_gb: Optional[float] = field(
        default=None, metadata=stack(ge=0, le=llm.MAX_MODEL_SIZE_GB)
    )
    """Size of the weights in GB (when the model is not in the table)."""
    model_parameters: Optional[int] = field(
        default=None, metadata=stack(ge=1, le=llm.MAX_MODEL_PARAMETERS)
    )
    """Parameters of the model (with model_dtype, when the size is not given)."""
    model_dtype: Optional[str] = field(default=None, metadata=stack(choices=tuple(llm.DTYPE_BYTES)))
    """Weights dtype (bfloat16, float16, fp8, int4 ...)."""
    max_model_len: Optional[int] = field(default=None, metadata=stack(ge=1))
    """vLLM `--max-model-len`; vLLM's default is the model's max_position_embeddings."""
    gpu_memory_utilization: Optional[float] = field(default=None, metadata=stack(ge=0, le=1))
    """vLLM `--gpu-memory-utilization`; vLLM's default 0.9."""
    storage_initializer: Optional[bool] = None
    """False: no model download init container (the model is already on the nodes)."""
    service_account_name: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """The ServiceAccount the pods run as (decode, prefill, workers): KServe's storage
    initializer takes its download credentials from that ServiceAccount's Secrets (kserve
    v0.20.0 pkg/controller/v1alpha2/llmisvc/workload_storage.go `attachHfModelArtifact` /
    `attachS3ModelArtifact`: `CreateSecretVolumeAndEnvFromServiceAccount`; without one, the
    namespace's `default`, or with a routing sidecar the `<name>-kserve` one it makes, which
    reference none). The platform sets the model namespace's when it holds credentials."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """metadata.labels."""
    annotations: Optional[Mapping[str, str]] = None
    """Extra metadata.annotations."""


# ---------------------------------------------------------------------------------------------
# Validation and body (pure)
# ---------------------------------------------------------------------------------------------


def _count(value: object, path: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InputError(
            f"{path} {show(value)} is not an integer {least} or more", f"an int >= {least}", path
        )
    return value


def _uri(uri: object, schemes: Sequence[str], path: str) -> str:
    """KServe v0.20.0 `pkg/controller/v1alpha2/llmisvc/workload_storage.go`
    `attachModelArtifacts` cuts the URI at its first `://`: without one it answers "invalid model
    URI", with a scheme it does not load "unsupported schema in model URI"."""
    allowed = ", ".join(f"{s}://" for s in schemes)
    if not isinstance(uri, str) or "://" not in uri:
        raise InputError(
            f"URI {show(uri)} has no '://' (KServe v0.20.0's controller answers 'invalid model "
            "URI')",
            allowed,
            path,
        )
    if uri.split("://", 1)[0] not in schemes:
        raise InputError(
            f"URI {show(uri)} has a scheme KServe v0.20.0 cannot load for LLMs "
            "(its controller answers 'unsupported schema in model URI')",
            allowed,
            path,
        )
    return uri


def _strings(values: object, path: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InputError(f"{path} {show(values)} is not a list of strings", "a list", path)
    for v in values:
        if not isinstance(v, str) or not v:
            raise InputError(f"{path} entry {show(v)} is not a string", "strings", path)
    return list(values)


def _parallelism(w: LLMWorkloadArgs) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (
        ("tensor", w.tensor),
        ("pipeline", w.pipeline),
        ("data", w.data),
        ("dataLocal", w.data_local),
    ):
        if value is not None:
            out[key] = _count(value, key if key != "dataLocal" else "data_local", 1)
    if (w.data is None) != (w.data_local is None):
        raise InputError(
            "data and data_local parallelism must be set together (KServe's webhook: "
            "'dataLocal must be set when data is set')",
            "both or neither",
            "data" if w.data is None else "data_local",
        )
    if w.pipeline is not None and w.data is not None:
        raise InputError(
            "cannot set both pipeline parallelism and data parallelism (KServe's webhook)",
            "pipeline, or data + data_local",
            "pipeline",
        )
    if w.data is not None and w.data_local is not None and w.data % w.data_local:
        raise InputError(
            f"data {w.data} is not a multiple of data_local {w.data_local}: the LeaderWorkerSet "
            "has data / data_local pods",
            "data a multiple of data_local",
            "data",
        )
    if w.expert:
        out["expert"] = True
    return out


def _main_container(
    gpus: object, cpu: object, memory: object, env: object = None, args: object = None
) -> dict[str, Any]:
    main: dict[str, Any] = {"name": "main"}
    if args:
        main["args"] = args
    if env is not None:
        try:
            main["env"] = env_list(env)
        except InputError as e:
            raise e.at("env") from None
    res = container_resources(gpus, cpu, memory)  # type: ignore[arg-type]
    if res:
        main["resources"] = res
    return main


def _pod(
    main: dict[str, Any],
    placement: Optional[Placement],
    extra: Optional[Sequence[NodeSelectorRequirement]],
    omit: Optional[bool],
) -> tuple[dict[str, Any], Optional[Placement]]:
    gpu = "nvidia.com/gpu" in ((main.get("resources") or {}).get("requests") or {})
    eff = effective_placement(placement, extra, omit, gpu)
    pod: dict[str, Any] = dict(placement_fields(eff))
    if len(main) > 1:
        pod["containers"] = [main]
    return pod, eff


def _vllm_args(args: LLMInferenceServiceArgs, w: LLMWorkloadArgs) -> list[str]:
    out = []
    if args.max_model_len is not None:
        out.append(f"--max-model-len={args.max_model_len}")
    if args.gpu_memory_utilization is not None:
        out.append(f"--gpu-memory-utilization={args.gpu_memory_utilization:g}")
    if w.args is not None:
        out += _strings(w.args, "args")
    return out


def _claim(
    pod: dict[str, Any],
    claim: Optional[GpuClaimArgs],
    args: LLMInferenceServiceArgs,
    svc: str,
    part: str,
    templates: list[dict[str, Any]],
) -> None:
    """A part's claim wired into its pod template (the `main` container), its
    ResourceClaimTemplate kept in `templates`."""
    if claim is None:
        return
    main: dict[str, Any] = next(iter(pod.get("containers") or ()), {"name": "main"})
    pod["containers"] = [main]
    requests_gpus = "nvidia.com/gpu" in ((main.get("resources") or {}).get("requests") or {})
    namespace = args.namespace or DEFAULT_NAMESPACE
    template = part_claim(pod, "containers", claim, svc, part, namespace, requests_gpus)
    if template is not None:
        templates.append(template)


def _workload(
    args: LLMInferenceServiceArgs,
    w: LLMWorkloadArgs,
    part: str,
    shape: Optional[llm.ModelShape],
    svc: str = "",
    templates: Optional[list[dict[str, Any]]] = None,
) -> tuple[dict[str, Any], dict[str, Optional[Placement]]]:
    if not isinstance(w, LLMWorkloadArgs):
        raise InputError(f"{part} {show(w)} is not an LLMWorkloadArgs", "LLMWorkloadArgs(...)")
    body = _scaling(w)
    parallelism = _parallelism(w)
    if parallelism:
        body["parallelism"] = parallelism
    _check_presets(w, parallelism)
    main = _main_container(w.gpus, w.cpu, w.memory, w.env, _vllm_args(args, w) or None)
    template, leader = _pod(main, w.placement, w.extra_expressions, w.omit_gpu_toleration)
    key = "prefill" if part == "prefill" else "decode"
    claims = templates if templates is not None else []
    _claim(template, w.gpu_claim, args, svc, key, claims)
    if args.service_account_name:
        template["serviceAccountName"] = args.service_account_name
    body["template"] = template
    placements: dict[str, Optional[Placement]] = {key: leader}
    tensor = w.tensor or 1
    size = (w.data // w.data_local) if w.data and w.data_local else 1
    if w.worker is not None:
        _worker(args, w, key, svc, claims, body, placements)
    _check_parallelism(w, shape, tensor, size)
    return body, placements


def _scaling(w: LLMWorkloadArgs) -> dict[str, Any]:
    """`replicas`, or `scaling` (min / max replicas and the autoscaler): KServe's CRD takes one."""
    body: dict[str, Any] = {}
    if w.max_replicas is not None:
        if w.replicas is not None:
            raise InputError(
                "replicas and max_replicas are both set; KServe's CRD: 'replicas and scaling "
                "are mutually exclusive'",
                "replicas (fixed) or min/max_replicas (autoscaling)",
                "replicas",
            )
        hi = _count(w.max_replicas, "max_replicas", 1)
        scaling: dict[str, Any] = {"maxReplicas": hi}
        if w.min_replicas is not None:
            lo = _count(w.min_replicas, "min_replicas", 1)
            if lo > hi:
                raise InputError(
                    f"min_replicas {lo} is above max_replicas {hi}", "min <= max", "min_replicas"
                )
            scaling["minReplicas"] = lo
        actuator = w.autoscaler or "keda"
        if actuator not in AUTOSCALERS:
            raise InputError(
                f"autoscaler {show(actuator)} is not known", " or ".join(AUTOSCALERS), "autoscaler"
            )
        scaling["wva"] = {actuator: {}}
        body["scaling"] = scaling
    elif w.min_replicas is not None:
        raise InputError(
            "min_replicas without max_replicas", "max_replicas (autoscaling)", "min_replicas"
        )
    elif w.replicas is not None:
        body["replicas"] = _count(w.replicas, "replicas", 0)
    return body


def _check_presets(w: LLMWorkloadArgs, parallelism: dict[str, Any]) -> None:
    """Refuse what KServe v0.20.0's shipped presets cannot run."""
    if w.worker is not None and "data" not in parallelism:
        raise InputError(
            "a worker (multi-node) needs data / data_local parallelism: KServe v0.20.0 ships "
            "presets only for data-parallel workers (the pipeline-parallel ones it looks for, "
            "kserve-config-llm-worker-pipeline-parallel, are not installed: ConfigNotFound)",
            "data and data_local with worker, or no worker",
            "worker",
        )
    if (w.pipeline or 1) > 1:
        raise InputError(
            f"pipeline parallelism {w.pipeline} never reaches vLLM: KServe v0.20.0's single-node "
            "presets pass only --tensor-parallel-size (charts/kserve-runtime-configs "
            "files/llmisvcconfigs/resources.yaml), so its GPUs would sit idle, and the "
            "multi-node pipeline presets are not shipped",
            "tensor parallelism over the pod's GPUs, or --pipeline-parallel-size in args",
            "pipeline",
        )


def _worker(
    args: LLMInferenceServiceArgs,
    w: LLMWorkloadArgs,
    key: str,
    svc: str,
    claims: list[dict[str, Any]],
    body: dict[str, Any],
    placements: dict[str, Optional[Placement]],
) -> None:
    """The multi-node worker's pod (`body["worker"]`) and its placement."""
    if not isinstance(w.worker, LLMWorkerArgs):
        raise InputError(f"worker {show(w.worker)} is not an LLMWorkerArgs", "LLMWorkerArgs")
    k = w.worker
    try:
        # KServe v0.20.0 builds the workers from spec.worker alone
        # (pkg/controller/v1alpha2/llmisvc/workload_multi_node.go expectedMainMultiNodeLWS:
        # WorkerTemplate.Spec = *Spec.Worker), and vLLM's headless workers build their engine
        # from their own command line: every vLLM option and env var goes on them too.
        wmain = _main_container(
            k.gpus if k.gpus is not None else w.gpus,
            k.cpu if k.cpu is not None else w.cpu,
            k.memory if k.memory is not None else w.memory,
            w.env,
            _vllm_args(args, w) or None,
        )
        body["worker"], placements[f"{key}-worker"] = _pod(
            wmain,
            k.placement if k.placement is not None else w.placement,
            k.extra_expressions if k.extra_expressions is not None else w.extra_expressions,
            k.omit_gpu_toleration,
        )
        if args.service_account_name:
            body["worker"]["serviceAccountName"] = args.service_account_name
        worker_claim = k.gpu_claim if k.gpu_claim is not None else w.gpu_claim
        if k.gpus is not None and k.gpu_claim is None:
            worker_claim = None  # GPUs of its own, as nvidia.com/gpu
        _claim(body["worker"], worker_claim, args, svc, f"{key}-worker", claims)
    except InputError as e:
        raise e.at("worker") from None


def _check_parallelism(
    w: LLMWorkloadArgs, shape: Optional[llm.ModelShape], tensor: int, size: int
) -> None:
    """The GPUs per pod and per group against vLLM's parallel sizes and the model's heads."""
    gpus = w.gpus if w.gpus is not None else (claimed_gpus(w.gpu_claim) or None)
    if gpus is not None:
        problems = llm.parallelism_messages(
            shape,
            tensor=tensor,
            data=w.data,
            data_local=w.data_local,
            gpus_per_pod=gpus,
            pods_per_group=size if w.worker is not None else 1,
            pipeline=w.pipeline or 1,
        )
        if w.data is not None and w.worker is None and size > 1:
            problems.append(
                f"data {w.data} / data_local {w.data_local} needs {size} pods per group: a worker"
            )
        if shape is not None and tensor not in llm.tensor_sizes(shape, tensor):
            problems = []  # said below, at `tensor`
        if problems:
            raise InputError(
                problems[0],
                "tensor x data_local (or tensor) GPUs per pod",
                "gpus" if w.gpus is not None else "gpuClaim.count",
            )
    if shape is not None and tensor not in llm.tensor_sizes(shape, tensor):
        raise InputError(
            llm.parallelism_messages(shape, tensor=tensor)[0],
            f"a size vLLM accepts for {shape.name} ({shape.attention_heads} attention heads, "
            f"{shape.kv_heads} KV heads): " + ", ".join(map(str, llm.tensor_sizes(shape))),
            "tensor",
        )


def _router(r: LLMRouterArgs) -> tuple[Optional[dict[str, Any]], Optional[Placement]]:
    if not isinstance(r, LLMRouterArgs):
        raise InputError(f"router {show(r)} is not an LLMRouterArgs", "LLMRouterArgs(...)")
    if r.enabled is False:
        return None, None
    gateway: dict[str, Any] = {}
    if r.gateway_refs:
        refs = []
        for ref in _strings(r.gateway_refs, "gateway_refs"):
            if not _GATEWAY_REF.match(ref):
                raise InputError(
                    f"gateway ref {show(ref)} is not namespace/name",
                    "e.g. kserve/my-gateway",
                    "gateway_refs",
                )
            ns, gw = ref.split("/", 1)
            refs.append({"name": gw, "namespace": ns})
        gateway["refs"] = refs
    router: dict[str, Any] = {"gateway": gateway, "route": {}}
    placement = None
    if r.scheduler is not False:
        scheduler: dict[str, Any] = {}
        if r.scheduler_replicas is not None:
            scheduler["replicas"] = _count(r.scheduler_replicas, "scheduler_replicas", 1)
        main: dict[str, Any] = {"name": "main"}
        requests: dict[str, Any] = {}
        for key, value, path in (
            ("cpu", r.scheduler_cpu, "scheduler_cpu"),
            ("memory", r.scheduler_memory, "scheduler_memory"),
        ):
            if value is not None:
                try:
                    res = (
                        container_resources(cpu=value)
                        if key == "cpu"
                        else container_resources(memory=value)
                    )
                    requests[key] = res["requests"][key]
                except InputError as e:
                    raise e.at(path) from None
        if requests:
            main["resources"] = {"requests": requests}
        template, placement = _pod(main, r.scheduler_placement, None, False)
        if template:
            scheduler["template"] = template
        router["scheduler"] = scheduler
    elif r.scheduler_placement is not None:
        raise InputError(
            "scheduler_placement is set but the scheduler is off", "scheduler True", "scheduler"
        )
    return router, placement


def _annotations(args: LLMInferenceServiceArgs, shape: Optional[llm.ModelShape]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in dict(args.annotations or {}).items():
        try:
            validate_label_key(k)
        except InputError as e:
            raise e.at(f"annotations.{k}") from None
        if not isinstance(v, str):
            raise InputError(f"annotation {k} value {show(v)} is not a string", "a string")
        out[k] = v
    if shape is not None:
        out[MODEL_ANNOTATION] = shape.name
    if args.model_size_gb is not None:
        size = args.model_size_gb
        if isinstance(size, bool) or not isinstance(size, (int, float)) or size <= 0:
            raise InputError(f"model_size_gb {show(size)} is not a size", "GB > 0", "model_size_gb")
        out[MODEL_SIZE_ANNOTATION] = f"{size:g}"
    if args.model_parameters is not None:
        out[MODEL_PARAMETERS_ANNOTATION] = str(_count(args.model_parameters, "model_parameters", 1))
    if args.model_dtype is not None:
        try:
            llm.dtype_bytes(args.model_dtype)
        except InputError as e:
            raise e.at("model_dtype") from None
        out[MODEL_DTYPE_ANNOTATION] = args.model_dtype
    if args.max_model_len is not None:
        length = _count(args.max_model_len, "max_model_len", 1)
        if shape is not None and length > shape.max_position_embeddings:
            raise InputError(
                f"max_model_len {length} is above {shape.name}'s max_position_embeddings "
                f"{shape.max_position_embeddings} (vLLM: 'User-specified max_model_len ... is "
                "greater than the derived max_model_len')",
                f"at most {shape.max_position_embeddings}",
                "max_model_len",
            )
        out[MAX_MODEL_LEN_ANNOTATION] = str(length)
    if args.gpu_memory_utilization is not None:
        u = args.gpu_memory_utilization
        if isinstance(u, bool) or not isinstance(u, (int, float)) or not 0 < u <= 1:
            raise InputError(
                f"gpu_memory_utilization {show(u)} is out of range",
                "0 < u <= 1",
                "gpu_memory_utilization",
            )
        out[GPU_MEMORY_UTILIZATION_ANNOTATION] = f"{u:g}"
    return out


def _wire(out: dict[str, str], component: str, pools: object, path: str) -> None:
    if pools:
        names = _strings(pools, path)
        out[WIRED_COMPONENT_POOL_ANNOTATION.format(component=component)] = ",".join(names)


def _worker_pools(w: LLMWorkloadArgs) -> object:
    """The workers' pools: their own, else the leader's when they have the leader's placement
    (a placement of their own wires them to no pool)."""
    k = w.worker
    if k is None or k.pools:
        return k.pools if k is not None else None
    return w.pools if k.placement is None else None


def _names(args: LLMInferenceServiceArgs, name: str) -> tuple[str, str]:
    """(metadata.name, namespace), each a DNS label; the service account's too."""
    svc = args.name or name
    try:
        validate_dns1035_label(svc)
    except InputError as e:
        raise e.at("name") from None
    namespace = args.namespace or DEFAULT_NAMESPACE
    try:
        validate_dns1123_label(namespace)
    except InputError as e:
        raise e.at("namespace") from None
    if args.service_account_name is not None:
        try:
            validate_dns1123_label(args.service_account_name)
        except InputError as e:
            raise e.at("serviceAccountName") from None
    return svc, namespace


def _model(args: LLMInferenceServiceArgs, svc: str) -> dict[str, Any]:
    """`spec.model`: its URI, served name and LoRA adapters, as KServe's webhook takes them."""
    model: dict[str, Any] = {"uri": _uri(args.model_uri, llmisvc.MODEL_URI_SCHEMES, "model_uri")}
    base_name = args.model_name or svc
    if args.model_name is not None:
        if not isinstance(args.model_name, str) or not args.model_name.strip():
            raise InputError(f"model_name {show(args.model_name)} is empty", "a name", "model_name")
        model["name"] = args.model_name
    if args.lora_adapters:
        adapters, seen = [], set()
        for i, a in enumerate(args.lora_adapters):
            path = f"lora_adapters[{i}]"
            if not isinstance(a, LoRAAdapterArgs) or not isinstance(a.name, str) or not a.name:
                raise InputError(f"{path} has no name", "LoRAAdapterArgs(name, uri)", path)
            if a.name in (".", "..") or a.name in seen or a.name == base_name:
                raise InputError(
                    f"adapter name {a.name!r} is '.', '..', used twice or the base model's name "
                    "(KServe's webhook refuses it)",
                    "a unique name other than the model's",
                    f"{path}.name",
                )
            seen.add(a.name)
            uri = _uri(a.uri, llmisvc.LORA_URI_SCHEMES, f"{path}.uri")
            adapters.append({"name": a.name, "uri": uri})
        model["lora"] = {"adapters": adapters}
    return model


def _build(
    name: str, args: LLMInferenceServiceArgs
) -> tuple[dict[str, Any], dict[str, Optional[Placement]], list[dict[str, Any]]]:
    check_declared(args, "")  # this component's errors name the fields
    svc, namespace = _names(args, name)
    shape = None
    if args.model is not None:
        try:
            shape = llm.model_shape(args.model)
        except InputError as e:
            raise e.at("model") from None
    model = _model(args, svc)
    annotations = _annotations(args, shape)
    spec: dict[str, Any] = {"model": model}
    templates: list[dict[str, Any]] = []
    if args.storage_initializer is False:
        spec["storageInitializer"] = {"enabled": False}
    try:
        decode, placements = _workload(args, args.decode, "decode", shape, svc, templates)
    except InputError as e:
        raise e.at("decode") from None
    spec.update(decode)
    _wire(annotations, "decode", args.decode.pools, "decode.pools")
    if args.decode.worker is not None:
        _wire(annotations, "worker", _worker_pools(args.decode), "decode.worker.pools")
    if args.prefill is not None:
        try:
            prefill, more = _workload(args, args.prefill, "prefill", shape, svc, templates)
        except InputError as e:
            raise e.at("prefill") from None
        spec["prefill"] = prefill
        placements.update(more)
        _wire(annotations, "prefill", args.prefill.pools, "prefill.pools")
        if args.prefill.worker is not None:
            _wire(
                annotations, "prefill-worker", _worker_pools(args.prefill), "prefill.worker.pools"
            )
    try:
        router, scheduler = _router(args.router if args.router is not None else LLMRouterArgs())
    except InputError as e:
        raise e.at("router") from None
    if router is not None:
        spec["router"] = router
        if "scheduler" in router:
            placements["scheduler"] = scheduler
            if args.router is not None:
                _wire(
                    annotations, "scheduler", args.router.scheduler_pools, "router.scheduler_pools"
                )
    metadata = cr_metadata(svc, namespace, args.labels, annotations)
    body = {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}
    return body, placements, templates


def llm_inference_service_body(args: LLMInferenceServiceArgs, name: str = "") -> dict[str, Any]:
    """The LLMInferenceService CR as a plain dict; InputError (path relative to the args) for
    any bad input. `name`: the component's name (metadata.name unless `args.name`)."""
    return _build(name, args)[0]


def llm_inference_service_claims(
    args: LLMInferenceServiceArgs, name: str = ""
) -> list[dict[str, Any]]:
    """The ResourceClaimTemplates of the parts that claim their GPUs (`gpu_claim`)."""
    return _build(name, args)[2]


def llm_inference_service_placements(
    args: LLMInferenceServiceArgs, name: str = ""
) -> dict[str, Optional[Placement]]:
    """The effective placement of each pod template: decode, decode-worker, prefill,
    prefill-worker, scheduler (None: the template sets none)."""
    return _build(name, args)[1]


class LLMInferenceService(pulumi.ComponentResource):
    """One KServe LLMInferenceService, every pod it makes placed on a node pool.

    Pass `opts=ResourceOptions(depends_on=[install.ready])` (an `LLMServingInstall`) so that the
    CRDs, the controller and its presets exist first."""

    name: pulumi.Output[str]
    """metadata.name of the LLMInferenceService."""
    namespace: pulumi.Output[str]
    """Its namespace."""

    def __init__(
        self,
        name: str,
        args: LLMInferenceServiceArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        try:
            body, placements, templates = _build(name, args)
        except InputError as e:
            raise e.at(f"LLMInferenceService({name!r}).args") from None
        super().__init__("gpu-inference:index:LLMInferenceService", name, None, opts)
        self.manifest: dict[str, Any] = body
        self.component_placements = placements
        self.generated = llmisvc.generated_pods(body)
        # Each claiming part's template, before the pods that name it.
        self.claim_templates = [
            claim_template(f"{name}-{t['metadata']['name']}", t, self) for t in templates
        ]
        self.cr = k8s.apiextensions.CustomResource(
            name,
            api_version=API_VERSION,
            kind=KIND,
            metadata=owned(body["metadata"]),
            spec=body["spec"],
            opts=create_opts(self, self.claim_templates),
        )
        self.name = pulumi.Output.from_input(body["metadata"]["name"])
        self.namespace = pulumi.Output.from_input(body["metadata"]["namespace"])
        self.register_outputs({"name": self.name, "namespace": self.namespace})
