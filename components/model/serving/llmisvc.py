"""What KServe v0.20.0's LLMInferenceService controller makes from a spec: each workload, its
name, which part of the spec its pods come from, and what the presets and the controller add to
those pods. Pure: imports nothing but `components.model`; read by the serving component (names)
and meant for the check's LLMInferenceService reader.

Sources (kserve/kserve at tag v0.20.0, commit 1fb781055dd1567164358233e1125142ca6ef1fe):

- Names: `kmeta.ChildName(name, suffix)` (knative.dev/pkg kmeta/names.go at the pinned
  v0.0.0-20260120122510: over 63 characters the name becomes `name[:31-len(suffix)] +
  md5(name) + suffix`). Deployment `-kserve` (workload_single_node.go mainDeploymentName),
  `-kserve-prefill` (prefillDeploymentName), LeaderWorkerSet `-kserve-mn` / `-kserve-mn-prefill`
  (workload_multi_node.go), Deployment `-kserve-router-scheduler` (scheduler.go), InferencePool
  `-inference-pool`, HTTPRoute `-kserve-route`, Service `-kserve-workload-svc`.
- Which spec part: the controller first merges the well-known presets, then `spec.baseRefs` in
  order, then the service's own spec (highest precedence), as a strategic merge patch over the
  Go types (config_merge.go combineBaseRefsConfig / mergeSpecs); then it copies the merged
  `template` into the `-kserve` Deployment (or the LWS leader when `worker` is set),
  `worker` into the LWS worker template (size `parallelism.GetSize()`: data / dataLocal, or
  pipeline), `prefill.template` / `prefill.worker` likewise, and `router.scheduler.template`
  into the scheduler Deployment (replicas `router.scheduler.replicas`). In a PodSpec
  (k8s.io/api v0.34.5 core/v1 types.go) `containers` / `initContainers` merge by name,
  `nodeSelector` merges key by key, `tolerations` and node-selector terms are replaced whole by
  the later layer.
- Presets (charts/kserve-runtime-configs files/llmisvcconfigs/resources.yaml, installed with
  `kserve.llmisvcConfigs.enabled: true`): none carries nodeSelector, tolerations or affinity, so
  a pod's placement is exactly the service's (and its baseRefs'). Their containers:
  `kserve-config-llm-template` (no prefill, no worker) main `ghcr.io/llm-d/llm-d-cuda:v0.8.0`,
  no requests; `-decode-template` (with prefill) adds the sidecar `llm-d-routing-sidecar`
  (initContainer, restartPolicy Always, `resources: {}`); `-worker-data-parallel`,
  `-decode-worker-data-parallel`, `-prefill-template`, `-prefill-worker-data-parallel`: main with
  no requests (the decode one with the routing sidecar); `kserve-config-llm-scheduler`: main
  (endpoint picker) requests cpu 1 / memory 2Gi, limits cpu 6 / memory 16Gi, and `tokenizer`
  requests 256m / 500Mi, which the controller drops unless the scheduler config uses
  `precise-prefix-cache-scorer` (scheduler.go withRemoveUnnecessaryTokenizer, scheduler
  version >= 0.9.0: the preset's `app.kubernetes.io/version` is 0.9.0; the default configs use
  `prefix-cache-scorer`). The pipeline-parallel worker presets
  (`kserve-config-llm-worker-pipeline-parallel` ...) are referenced but shipped nowhere at
  v0.20.0: a `worker` with `pipeline` parallelism ends in ConfigNotFound.
- Model download (workload_storage.go attachModelArtifacts) on every workload pod (decode,
  leader, worker, prefill): `hf://` and `s3://` add the init container `storage-initializer`
  requesting cpu 100m / memory 100Mi, limits cpu 1 / memory 1Gi
  (charts/kserve-llmisvc-resources files/common/configmap-patch.yaml `storageInitializer`;
  pkg/utils/storage.go CreateInitContainerWithConfig), downloading into an emptyDir without a
  size limit (the node's ephemeral storage; no ephemeral-storage request). `pvc://` mounts the
  claim (no init container unless LoRA adapters are downloaded). `oci://` (modelcar) adds an init
  container `modelcar-init` and a container `modelcar`, each 10m / 15Mi (values
  `kserve.storage.cpuModelcar` / `memoryModelcar`). Other schemes (`gs://`, `https://`) are
  refused: "unsupported schema in model URI". The scheduler pod gets the same download for its
  tokenizer (`hf://`: tokenizer files only) before the tokenizer is dropped, so its
  `storage-initializer` stays. `spec.storageInitializer.enabled: false` removes the download.
- KV cache offloading (workload_kvcache.go attachFileSystemKVCacheTier, called for the decode or
  leader and the worker pods from `spec.kvCacheOffloading`, for the prefill ones from
  `spec.prefill.kvCacheOffloading`): each `secondary[].fileSystem.emptyDir.size` adds an emptyDir
  of that size limit and adds the size to the `main` container's ephemeral-storage request.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from ..errors import InputError
from ..scheduling.quantities import parse_quantity

API_VERSION = "serving.kserve.io/v1alpha2"
KIND = "LLMInferenceService"

MODEL_URI_SCHEMES = ("hf", "s3", "pvc", "oci", "oci+native")
"""Schemes attachModelArtifacts accepts at v0.20.0; anything else is refused by the controller."""
DOWNLOAD_SCHEMES = ("hf", "s3")
LORA_URI_SCHEMES = ("hf", "s3", "pvc")
"""LoRASpec.Adapters: 'supports hf://, s3://, and pvc:// schemes'."""

# What the serving component writes for the placement check, and the check reads (one spelling,
# here: the check may import the model layer, the serving layer may too).
WIRING_COMPONENTS = ("decode", "worker", "prefill", "prefill-worker", "scheduler")
"""The `<component>` of `gpu-inference.dev/pool.<component>` on an LLMInferenceService."""
ROLE_WIRING: dict[str, tuple[str, ...]] = {
    "decode": ("decode",),
    "leader": ("decode",),
    "worker": ("worker", "decode"),
    "prefill": ("prefill",),
    "prefill-leader": ("prefill",),
    "prefill-worker": ("prefill-worker", "prefill"),
    "scheduler": ("scheduler",),
}
"""For each pod role, the wiring components that name its pools, first found wins (a worker
without its own is wired like its leader)."""
MODEL_ROLES = ("decode", "leader", "worker", "prefill", "prefill-leader", "prefill-worker")
WORKER_ROLES = ("worker", "prefill-worker")
"""The pods KServe builds from a `worker` spec alone (a LeaderWorkerSet's non-leaders)."""
"""Roles whose pods run vLLM with the model's weights (the scheduler does not)."""

SUFFIX_DECODE = "-kserve"
SUFFIX_PREFILL = "-kserve-prefill"
SUFFIX_MULTI_NODE = "-kserve-mn"
SUFFIX_MULTI_NODE_PREFILL = "-kserve-mn-prefill"
SUFFIX_SCHEDULER = "-kserve-router-scheduler"
SUFFIX_INFERENCE_POOL = "-inference-pool"
SUFFIX_ROUTE = "-kserve-route"

STORAGE_INITIALIZER = {
    "name": "storage-initializer",
    "resources": {
        "requests": {"cpu": "100m", "memory": "100Mi"},
        "limits": {"cpu": "1", "memory": "1Gi"},
    },
}
MODELCAR = {
    "name": "modelcar",
    "resources": {
        "requests": {"cpu": "10m", "memory": "15Mi"},
        "limits": {"cpu": "10m", "memory": "15Mi"},
    },
}
MODELCAR_INIT = {**MODELCAR, "name": "modelcar-init"}
ROUTING_SIDECAR = {"name": "llm-d-routing-sidecar", "restartPolicy": "Always", "resources": {}}
SCHEDULER_MAIN = {
    "name": "main",
    "resources": {
        "requests": {"cpu": "1", "memory": "2Gi"},
        "limits": {"cpu": "6", "memory": "16Gi"},
    },
}
SCHEDULER_TOKENIZER = {
    "name": "tokenizer",
    "resources": {"requests": {"cpu": "256m", "memory": "500Mi"}},
}

_LONGEST = 63
_MD5_LEN = 32


def child_name(parent: str, suffix: str) -> str:
    """knative.dev/pkg kmeta.ChildName, for suffixes under 31 characters (all of KServe's)."""
    if len(parent) > _LONGEST - len(suffix):
        digest = hashlib.md5(parent.encode(), usedforsecurity=False).hexdigest()
        return parent[: _LONGEST - _MD5_LEN - len(suffix)] + digest + suffix
    return parent + suffix


@dataclass(frozen=True)
class GeneratedPods:
    """One pod template the controller creates: the workload's name and kind, the role of its
    pods, the spec path their PodSpec comes from, that PodSpec as the service states it, and the
    containers / init containers the presets and the controller add (by name; merged by name
    into the service's own, whose fields win)."""

    workload: str
    kind: str  # Deployment | LeaderWorkerSet
    role: str  # decode | leader | worker | prefill | prefill-leader | prefill-worker | scheduler
    spec_path: str
    pod_spec: dict[str, Any]
    added_containers: list[dict[str, Any]] = field(default_factory=list)
    added_init_containers: list[dict[str, Any]] = field(default_factory=list)
    replicas: int | None = None
    group_size: int | None = None  # LWS pods per group (leader included)
    kv_cache_disk: tuple[str, ...] = ()  # emptyDir KV cache tiers: sizes added to main's request


def _scheme(uri: str) -> str:
    return uri.split("://", 1)[0] if "://" in uri else ""


def _group_size(parallelism: dict[str, Any] | None) -> int | None:
    """LLMInferenceService ParallelismSpec.GetSize (types_func.go)."""
    p = parallelism or {}
    if p.get("data") or p.get("dataLocal"):
        return max(max(p.get("data") or 1, 1) // max(p.get("dataLocal") or 1, 1), 1)
    if p.get("pipeline"):
        return int(p["pipeline"])
    return None


def _download(spec: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(containers, init containers) the model download adds to a workload pod."""
    if (spec.get("storageInitializer") or {}).get("enabled") is False:
        return [], []
    model = spec.get("model") or {}
    scheme = _scheme(str(model.get("uri", "")))
    lora = bool(((model.get("lora") or {}).get("adapters")) or [])
    if scheme in ("oci",):
        return [dict(MODELCAR)], [dict(MODELCAR_INIT)] + (
            [dict(STORAGE_INITIALIZER)] if lora else []
        )
    if scheme in DOWNLOAD_SCHEMES or lora:
        return [], [dict(STORAGE_INITIALIZER)]
    return [], []


def _kv_cache_disk(part: dict[str, Any]) -> tuple[str, ...]:
    """The sizes of the emptyDir KV cache tiers of one workload spec (`spec` or `spec.prefill`)."""
    tiers = (part.get("kvCacheOffloading") or {}).get("secondary") or []
    sizes = []
    for tier in tiers:
        empty_dir = ((tier or {}).get("fileSystem") or {}).get("emptyDir")
        if isinstance(empty_dir, dict) and empty_dir.get("size") not in (None, ""):
            sizes.append(str(empty_dir["size"]))
    return tuple(sizes)


def generated_pods(cr: dict[str, Any]) -> list[GeneratedPods]:
    """Every pod template KServe v0.20.0 makes from this LLMInferenceService (its spec as given:
    merge its `baseRefs` first with `merge_specs`)."""
    name = (cr.get("metadata") or {}).get("name", "")
    spec = cr.get("spec") or {}
    has_prefill = spec.get("prefill") is not None
    out: list[GeneratedPods] = []
    containers, inits = _download(spec)
    for part, prefix in ((spec, ""), (spec.get("prefill"), "prefill")):
        if part is None:
            continue
        path = "spec.prefill" if prefix else "spec"
        sidecar = [dict(ROUTING_SIDECAR)] if has_prefill and not prefix else []
        replicas = part.get("replicas")
        if part.get("worker") is not None:
            lws = child_name(name, SUFFIX_MULTI_NODE_PREFILL if prefix else SUFFIX_MULTI_NODE)
            size = _group_size(part.get("parallelism"))
            roles = (("leader", "template"), ("worker", "worker"))
            for role, key in roles:
                if part.get(key) is None:
                    continue
                out.append(
                    GeneratedPods(
                        lws,
                        "LeaderWorkerSet",
                        f"{prefix}-{role}" if prefix else role,
                        f"{path}.{key}",
                        dict(part[key]),
                        list(containers),
                        (sidecar if role == "leader" else []) + list(inits),
                        replicas,
                        size,
                        _kv_cache_disk(part),
                    )
                )
        else:
            out.append(
                GeneratedPods(
                    child_name(name, SUFFIX_PREFILL if prefix else SUFFIX_DECODE),
                    "Deployment",
                    prefix or "decode",
                    f"{path}.template",
                    dict(part.get("template") or {}),
                    list(containers),
                    sidecar + list(inits),
                    replicas,
                    kv_cache_disk=_kv_cache_disk(part),
                )
            )
    scheduler = (spec.get("router") or {}).get("scheduler")
    if scheduler is not None and not ((scheduler.get("pool") or {}).get("ref")):
        out.append(
            GeneratedPods(
                child_name(name, SUFFIX_SCHEDULER),
                "Deployment",
                "scheduler",
                "spec.router.scheduler.template",
                dict(scheduler.get("template") or {}),
                [dict(SCHEDULER_MAIN)],
                list(inits)
                if _scheme(str((spec.get("model") or {}).get("uri", ""))) in DOWNLOAD_SCHEMES
                else [],
                scheduler.get("replicas"),
            )
        )
    return out


_MERGED_BY_NAME = ("containers", "initContainers", "env", "volumes")
"""PodSpec / Container lists whose Go types carry `patchMergeKey:"name"` (k8s.io/api core/v1)."""
KSERVE_NAMESPACE = "kserve"
"""Where the controller looks for an LLMInferenceServiceConfig not in the service's namespace
(config_merge.go getConfig: the service's namespace, then constants.KServeNamespace)."""


def strategic_merge(base: Any, over: Any, key: str = "") -> Any:
    """`over` on `base` as the controller's strategic merge patch does it (config_merge.go
    mergeSpecs: `strategicpatch.StrategicMergePatch` over the Go types), for what the check
    reads: objects merge key by key (null deletes); lists of containers, init containers, env
    and volumes merge by `name`, the later item's fields winning; every other list
    (tolerations, node-selector terms, args) is replaced whole."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = strategic_merge(out[k], v, k) if k in out else v
        return out
    if key in _MERGED_BY_NAME and isinstance(base, list) and isinstance(over, list):
        items = [dict(i) for i in base if isinstance(i, dict)]
        index = {i.get("name"): n for n, i in enumerate(items)}
        for item in (i for i in over if isinstance(i, dict)):
            n = index.get(item.get("name"))
            if n is None:
                index[item.get("name")] = len(items)
                items.append(dict(item))
            else:
                items[n] = strategic_merge(items[n], item)
        return items
    return over


def merge_specs(*specs: dict[str, Any]) -> dict[str, Any]:
    """The spec the controller works from: the LLMInferenceServiceConfigs' (`baseRefs`, in
    order), then the service's own, each merged over the ones before (config_merge.go
    MergeSpecs)."""
    out: dict[str, Any] = {}
    for spec in specs:
        out = strategic_merge(out, spec)
    return out


def merge_containers(added: list[dict[str, Any]], own: list[Any]) -> list[dict[str, Any]]:
    """The pod's containers: those the presets / controller add, each merged by name with the
    service's own of that name (the service's fields win), then the service's other ones."""
    return list(strategic_merge(list(added), list(own), "containers"))


def pod_containers(g: GeneratedPods) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(containers, init containers) of the pods of `g`, as the controller makes them."""
    containers = merge_containers(g.added_containers, _own(g.pod_spec, "containers"))
    if g.kv_cache_disk:
        containers = [_with_kv_cache_disk(c, g.kv_cache_disk) for c in containers]
    return (
        containers,
        merge_containers(g.added_init_containers, _own(g.pod_spec, "initContainers")),
    )


def _own(pod_spec: Mapping[str, Any], key: str) -> list[Any]:
    """The service's own containers under `key`: a value not of its shape reads as none (the API
    server refuses such a pod; a graph may hold anything)."""
    found = pod_spec.get(key)
    return [c for c in found if isinstance(c, Mapping)] if isinstance(found, list) else []


def _with_kv_cache_disk(container: dict[str, Any], sizes: tuple[str, ...]) -> dict[str, Any]:
    """`main` with the KV cache tiers' sizes added to its ephemeral-storage request (in bytes,
    as `resource.Quantity.Add` sums them); any other container as it is. A size that is not a
    quantity is kept as the request, for the pod's ask to refuse as any container's."""
    if container.get("name") != "main":
        return container
    resources = dict(container.get("resources") or {})
    requests = dict(resources.get("requests") or {})
    total = Decimal(0)
    for q in (*sizes, requests.get("ephemeral-storage", 0)):
        try:
            total += parse_quantity(q)
        except InputError:
            requests["ephemeral-storage"] = q
            break
    else:
        requests["ephemeral-storage"] = str(int(total.to_integral_value(rounding=ROUND_CEILING)))
    return {**container, "resources": {**resources, "requests": requests}}


VLLM_ARGS_ENV = "VLLM_ADDITIONAL_ARGS"
_FLAG_ALIASES = {"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size"}


def vllm_flags(container: dict[str, Any]) -> dict[str, str]:
    """The options the presets' `vllm serve` command line gets from the `main` container: it
    ends with `${VLLM_ADDITIONAL_ARGS} $@` (charts/kserve-runtime-configs
    files/llmisvcconfigs/resources.yaml), so the env var's words, then the container's `args`,
    come after the preset's own `--tensor-parallel-size`; the last occurrence wins (argparse).
    `--flag value` and `--flag=value` both read; `-tp` / `-pp` are vLLM's short forms."""
    words: list[str] = []
    for env in container.get("env") or []:
        if isinstance(env, dict) and env.get("name") == VLLM_ARGS_ENV:
            words += str(env.get("value") or "").split()
    words += [str(a) for a in container.get("args") or [] if not isinstance(a, dict)]
    flags: dict[str, str] = {}
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        name = _FLAG_ALIASES.get(name, name)
        if not name.startswith("--"):
            continue
        if not eq:
            nxt = words[i + 1] if i + 1 < len(words) else ""
            value = "" if nxt.startswith("-") else nxt
        flags[name[2:]] = value
    return flags
