"""Reading a resource graph: the small helpers every reader shares, and what readers hand
the rules (`PoolDraft`, `Template`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from ..model.errors import InputError
from ..model.nodes.shapes import Resources
from ..model.scheduling import (
    Taint,
    Toleration,
)
from ..model.serving.requests import (
    AGENT,
    MODELCAR,
    MODELCAR_INIT,
    QUEUE_PROXY,
    STORAGE_INITIALIZER,
    pod_requests,
)
from .contract import (
    CODES,
    HELM_TYPES,
)
from .results import (
    Finding,
    NodeTemplate,
    SharedGpus,
)

# KServe v0.20.0 `pkg/webhook/admission/pod/storage_initializer_injector.go`: a `pvc://` URI is
# mounted, not downloaded, and an `oci://` one goes to the modelcar sidecar (`enableModelcar`
# is on in the chart's values): only other schemes get the storage-initializer init container,
# which writes the model into an emptyDir on the node's ephemeral storage.
NOT_DOWNLOADED = ("pvc://", "oci://")


def as_map(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # the graph's own: without the Mapping ABC's slower check
        return value
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def str_map(value: Any) -> dict[str, str]:
    return {str(k): label_text(v) for k, v in as_map(value).items()}


def label_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value.strip())
    return None


def kind_of(typ: str) -> str:
    return typ.rsplit(":", 1)[-1]


def group_of(typ: str) -> str:
    """`kubernetes:serving.kserve.io/v1beta1:InferenceService` -> `serving.kserve.io`."""
    parts = typ.split(":")
    return parts[1].split("/", 1)[0] if len(parts) == 3 else ""


@lru_cache(maxsize=4096)
def is_type(typ: str, group: str, kind: str) -> bool:
    """Whether `typ` is the Kubernetes type of `kind` in API group `group` (any version). Cached:
    the readers ask it of every entry, some 40,000 times for a 1000-model graph of 20 types."""
    return typ.startswith("kubernetes:") and group_of(typ) == group and kind_of(typ) == kind


def resource_id(typ: str, name: str, component: str | None = None) -> str:
    rid = f"{kind_of(typ)}/{name}"
    return f"{rid}/{component}" if component else rid


def metadata(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(inputs.get("metadata"))


def namespace_of(inputs: Mapping[str, Any]) -> str:
    return str(metadata(inputs).get("namespace") or "default")


def split_pools(value: Any) -> tuple[str, ...]:
    if not isinstance(value, str):
        return ()
    return tuple(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))


def dependency_key(ref: str) -> str:
    """`type::name` of a dependsOn entry, given as that or as a URN
    (`urn:pulumi:stack::project::parent$type::name`)."""
    if not ref.startswith("urn:"):
        return ref
    *_, qualified, name = ref.split("::")
    return f"{qualified.rsplit('$', 1)[-1]}::{name}"


class Findings:
    def __init__(self) -> None:
        self.items: set[Finding] = set()

    def add(
        self, code: str, resource: str, message: str, fix: str, severity: str | None = None
    ) -> None:
        """Record a finding; `severity` below the code's own where the code says so (GI016 on
        EKS managed node groups is a warning)."""
        self.items.add(Finding(code, severity or CODES[code][0], resource, message, fix))

    def sorted(self) -> list[Finding]:
        return sorted(self.items, key=Finding.sort_key)


def read_taint(data: Any, where: str, out: Findings) -> Taint | None:
    try:
        return Taint.from_dict(as_map(data))
    except (InputError, KeyError, TypeError, ValueError) as e:
        out.add("GI013", where, f"invalid taint {dict(as_map(data))!r}: {e}", "fix the taint")
        return None


def read_taints(items: Any, where: str, out: Findings) -> list[Taint]:
    taints = [read_taint(t, where, out) for t in as_list(items)]
    return [t for t in taints if t is not None]


def read_tolerations(items: Any) -> tuple[Toleration, ...]:
    return tuple(Toleration.from_dict(as_map(t)) for t in as_list(items))


def helm_releases(graph: Sequence[Mapping[str, Any]], chart: str) -> list[Mapping[str, Any]]:
    found = []
    for entry in graph:
        if entry.get("type") not in HELM_TYPES:
            continue
        inputs = as_map(entry.get("inputs"))
        name = str(inputs.get("chart") or "").rstrip("/").rsplit("/", 1)[-1]
        if name == chart:
            found.append(entry)
    return found


@dataclass
class PoolDraft:
    name: str
    provider: str
    resource: str
    node: NodeTemplate
    gpus: int | None
    gpu: bool
    accelerator: str | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    spot: bool = False
    builtin_device_plugin: bool = False
    more_nodes: tuple[NodeTemplate, ...] = ()  # further node shapes (a Karpenter NodePool's)
    gpu_memory_gib: float | None = None
    node_group: str | None = None  # EKS managed node group: nodeGroupName
    key: str = ""  # `type::name`, as dependsOn names it
    shared: SharedGpus | None = None  # its GPUs are shares (time-sharing / slicing, MPS)
    shape_note: str | None = None  # why a node's shape is unknown, when one is
    daemon_kind: str = "none"  # the provider's own DaemonSets: a key of SYSTEM_DAEMON_KINDS


def least(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known and len(known) == len(values) else None


@dataclass(frozen=True)
class LLMPod:
    """What vLLM in one pod of an LLMInferenceService is told, for the LLM rules (`check.llm`):
    the part of the spec it serves, its parallelism as vLLM gets it, the model and its limits."""

    cr: str  # the LLMInferenceService's resource id (`LLMInferenceService/<name>`)
    role: str  # decode | leader | worker | prefill | prefill-leader | prefill-worker
    mode: str  # single (one pod) | data (LWS, data parallel) | pipeline (LWS, pipeline)
    tensor: int
    pipeline: int
    data: int | None
    data_local: int | None
    expert: bool
    pods_per_group: int
    model: str | None  # MODEL_ANNOTATION: a row of `model.serving.llm.MODELS`
    uri: str
    max_model_len: int | None
    gpu_memory_utilization: float | None
    dtype: str | None
    kv_dtype: str | None
    downloads: bool  # the storage-initializer downloads the weights to the node's disk
    unreadable: tuple[str, ...] = ()  # annotations / flags that could not be read (GI013)


@dataclass(frozen=True)
class Gang:
    """Pods of a template that belong to groups, each group all-or-nothing (a LeaderWorkerSet's
    leader and its `size - 1` workers): `key` names the groups (templates of one LeaderWorkerSet
    share it), `per_group` pods of this template in each group, `leader`: the leaders' template."""

    key: str
    per_group: int
    leader: bool


def storage_reading(uri: Any) -> Any:
    """What the check reads of a container's `storageUri`, not its text: `download` (KServe's
    storage-initializer downloads it), `modelcar` (`oci://`: a modelcar sidecar serves the
    image), `mount` (`pvc://`); the value itself when it is not a non-empty text. Two texts of
    one reading make the same pods (`shapes.shape_key` relies on it)."""
    if not isinstance(uri, str) or not uri:
        return uri
    if uri.startswith("oci://"):
        return "modelcar"
    return "mount" if uri.startswith(NOT_DOWNLOADED) else "download"


@dataclass
class Template:
    type: str
    name: str
    component: str | None
    namespace: str
    fragment: Mapping[str, Any]  # nodeSelector / affinity / tolerations
    containers: list[Mapping[str, Any]]
    init_containers: list[Mapping[str, Any]]
    wired: tuple[str, ...]
    scales_to_zero: bool
    daemonset: bool = False
    serverless: bool = False
    deployment_mode: str | None = None
    max_replicas: int | None = None  # None: unbounded (Knative without maxReplicas) or unknown
    model_annotations: Mapping[str, Any] = field(default_factory=dict)  # where its size is stated
    annotations: Mapping[str, Any] = field(default_factory=dict)  # of the CR / Deployment
    added: tuple[str, ...] = ()  # containers a controller put into `containers` (Seldon's)
    llm: LLMPod | None = None  # a vLLM pod of an LLMInferenceService
    always: int | None = None  # pods that run all the time (fixed / min replicas); None: unknown
    gang: Gang | None = None  # its pods belong to groups placed whole (a LeaderWorkerSet's)
    queue_proxy: Mapping[str, Any] | None = None  # Knative's, as the graph's config sizes it
    added_node_selector: Mapping[str, str] = field(default_factory=dict)  # by a pod webhook

    @property
    def resource(self) -> str:
        return resource_id(self.type, self.name, self.component)

    def share(self, twin: Template) -> None:
        """Take over what `twin` derived from the same type, fragment and containers (a template
        of the same shape, `shapes.shape_key`): its containers as they run and its requests (its
        storage URIs stay its own: the shape has only their reading)."""
        for name in ("pod_containers", "ask"):
            if name in twin.__dict__:
                self.__dict__.setdefault(name, twin.__dict__[name])

    @cached_property
    def storage_uri(self) -> str | None:
        """The `storageUri` KServe's storage-initializer downloads for this component, if any."""
        if not is_type(self.type, "serving.kserve.io", "InferenceService"):
            return None
        for c in self.containers:
            uri = c.get("storageUri")
            if storage_reading(uri) == "download":
                return uri
        return None

    @cached_property
    def pod_containers(
        self,
    ) -> tuple[tuple[Mapping[str, Any], ...], tuple[Mapping[str, Any], ...], tuple[str, ...]]:
        """(containers, init containers, names of those a controller adds) of its pods: made
        once (the fit, the scale-up proof and their findings all read them)."""
        containers = list(self.containers)
        inits = list(self.init_containers)
        added = list(self.added)
        if self.serverless:
            containers.append(self.queue_proxy or QUEUE_PROXY.as_container())
            added.append(QUEUE_PROXY.name)
        if self.storage_uri:
            inits.append(STORAGE_INITIALIZER.as_container())
            added.append(STORAGE_INITIALIZER.name)
        if self.modelcar_uri:
            containers.append(MODELCAR.as_container())
            inits.append(MODELCAR_INIT.as_container())
            added += [MODELCAR.name, MODELCAR_INIT.name]
        isvc = is_type(self.type, "serving.kserve.io", "InferenceService")
        if isvc and (self.fragment.get("logger") or self.fragment.get("batcher")):
            containers.append(AGENT.as_container())
            added.append(AGENT.name)
        return tuple(containers), tuple(inits), tuple(added)

    @cached_property
    def modelcar_uri(self) -> str | None:
        """The `oci://` model image KServe's modelcar serves this InferenceService component, if
        any (KServe v0.20.0 `storage_initializer_injector.go` InjectModelcar: a `modelcar`
        sidecar and a `modelcar-init` init container; `oci+native://` mounts the image)."""
        if not is_type(self.type, "serving.kserve.io", "InferenceService"):
            return None
        for c in self.containers:
            uri = c.get("storageUri")
            if storage_reading(uri) == "modelcar":
                return uri
        return None

    @cached_property
    def ask(self) -> Resources:
        """What its pods ask a node for (`pod_requests` over `pod_containers` and the overhead),
        made once. Raises InputError (each time it is asked) for a bad quantity."""
        containers, inits, _ = self.pod_containers
        overhead = self.fragment.get("overhead")
        return pod_requests(containers, inits, as_map(overhead) if overhead else None)
