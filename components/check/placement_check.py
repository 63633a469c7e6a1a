"""Static placement check: where every pod template in a resource graph can land, and what is wrong.

Pure Python (imports no Pulumi). The input is the resource graph, a list of `{type, name, inputs}`
(optionally `parent`, `dependsOn`) with Pulumi type tokens and the inputs as registered (camelCase),
the shape `mockrun.Graph.as_graph()` and `resources.json` hold. Only type tokens and inputs are
read, so a hand-written program that registers the same resource types is checked the same way.

    report = check(graph)                  # extended_resource_toleration=None: inferred
    report.errors                          # the error findings
    report.to_json()                       # stable, JSON-serialisable, keys sorted
    render_markdown(report)                # table workload -> pools -> findings + Mermaid diagram

Node pools (each pool is one or more node templates with effective labels and taints):
- `gcp:container/nodePool:NodePool`: `nodeConfig.labels` / `.taints` (cloud casing), GPUs from
  `nodeConfig.guestAccelerators[{type, count}]` or, for machine types that come with GPUs, from
  `catalog.gke_gpus_for_machine(nodeConfig.machineType)`. GKE adds to every GPU pool the taint
  `nvidia.com/gpu=present:NoSchedule` and the labels `cloud.google.com/gke-accelerator=<type>`,
  `cloud.google.com/gke-accelerator-count=<n>`; to every pool `cloud.google.com/gke-nodepool=<name>`
  (when `name` is set; an auto-named pool's name is not known before deploy), and
  `cloud.google.com/gke-spot=true` (spot) / `cloud.google.com/gke-preemptible=true` (preemptible).
  Nodes: `autoscaling.minNodeCount/maxNodeCount` or `totalMinNodeCount/totalMaxNodeCount`, else
  the fixed `nodeCount` (or `initialNodeCount`).
- `aws:eks/nodeGroup:NodeGroup`: `labels`, `taints` (cloud casing), GPUs per node from
  `catalog.aws_instance(instanceTypes[i]).gpus` (several types: the smallest), nodes from
  `scalingConfig.minSize/maxSize`. EKS adds `eks.amazonaws.com/nodegroup=<nodeGroupName>` (when
  set) and `eks.amazonaws.com/capacityType=ON_DEMAND|SPOT`; it adds NO GPU taint.
- `kubernetes:core/v1:NodePatch`: `metadata.labels`, `spec.taints` (Kubernetes casing). GPUs per
  node from the first of `GPU_COUNT_KEYS` found in the node's annotations or labels, else unknown.
  NodePatches carrying the same `gpu-inference.dev/pool` label form one pool (a pod lands on the
  pool when it lands on any of its nodes); a NodePatch without it is a pool of its own.
Pool identity: the `POOL_LABEL` (`gpu-inference.dev/pool`) label value if present, else the
resource name. A pool is a GPU pool when its nodes have GPUs (or, for a NodePatch with no count,
when an NVIDIA / cloud accelerator label or an `nvidia.com/gpu` taint says so).

Pod templates (workloads):
- `kubernetes:serving.kserve.io/v1beta1:InferenceService`: `spec.predictor`, `spec.transformer`,
  `spec.explainer`; the component is the pod-spec fragment (nodeSelector, affinity, tolerations);
  GPUs from its containers (`model`, a framework key such as `triton`, `containers[*]`).
  `minReplicas` absent = 1. Deployment mode from the annotation `serving.kserve.io/deploymentMode`
  (`Serverless` / `Knative` / `RawDeployment` / `Standard`; absent = the KServe Helm release's
  `kserve.controller.deploymentMode` when the graph has one, else Serverless). Only a Serverless
  (Knative) component with `minReplicas: 0` scales to zero (RawDeployment never does: kserve #3514),
  and not when Knative's `enable-scale-to-zero` is "false" in the graph.
- `kubernetes:mlops.seldon.io/v1alpha1:Server`: its ServerConfig's podSpec merged with its own
  `spec.podSpec` exactly as Seldon's operator does it (`mergePodSpecs`: mergo with override and
  append-slice): maps such as nodeSelector merge key by key (the Server's value wins), lists such
  as tolerations and node-selector terms are appended, containers are merged by name (resources key
  by key). `replicas` absent = 1; a Server is a StatefulSet that the operator does not scale to
  zero, so only `replicas: 0` counts as scaled to zero. A ServerConfig is a template, not a
  workload. A Server whose ServerConfig is not in the graph uses its own podSpec; `mlserver` and
  `triton` (the ServerConfigs Seldon installs) have their default capabilities.
- `kubernetes:apps/v1:Deployment` / `StatefulSet` (`spec.template.spec`, `replicas` absent = 1,
  scaled to zero only at `replicas: 0`) and `DaemonSet` (on every node it tolerates, never scaled
  to zero; the cluster autoscaler ignores DaemonSet pods when it drains a node, so DaemonSets are
  exempt from the cpu-on-gpu-pool, never-scales-to-zero and wildcard findings).
- GPUs a pod requests: `nvidia.com/gpu` requests (limits when no request) summed over containers,
  or the largest init container's, whichever is larger.
- The pools a pod can land on: `scheduling.Placement.from_pod_spec(fragment).admits(...)` against
  each node of each pool, with the tolerations the ExtendedResourceToleration admission plugin adds
  to pods requesting extended resources when the cluster enables it
  (`extended_resource_toleration`; None = on when any pool is GKE or EKS, off for graphs with only
  existing nodes). The cluster may have nodes the graph does not declare (a default pool): a pod
  that can land on none of the graph's pools is reported only when it asks for GPUs or is wired.

Wiring (the contract workload components emit): `WIRED_POOL_ANNOTATION`
(`gpu-inference.dev/pool`) in the CR's (or Deployment's) `metadata.annotations`, value a pool name
or a comma-separated list in preference order (spot first, on-demand fallback). On an
InferenceService, `gpu-inference.dev/pool.<component>` (`wired_annotation(component)`; component
predictor / transformer / explainer) wins over the CR-level one, which applies to every component
without its own; an empty per-component value (`gpu-inference.dev/pool.transformer: ""`) says the
component is wired to no pool (a CPU transformer next to a GPU predictor). A Seldon Server without
one uses its ServerConfig's. A workload without wiring gets every check except wrong-pool /
wired-pool-unreachable.

Device plugins: the GKE-managed NVIDIA device plugin tolerates every NoSchedule / NoExecute taint
(kubernetes `cluster/addons/device-plugins/nvidia-gpu/daemonset.yaml`: `operator: Exists` for both
effects), so GKE pools are exempt unless their nodes carry `gke-no-default-nvidia-gpu-device-plugin
=true` (the GPU operator setup). EKS Bottlerocket NVIDIA AMIs run the device plugin on the host.
Every other GPU pool (EKS AL2 / AL2023 NVIDIA AMIs, existing nodes) needs a device plugin
DaemonSet: the check uses the ones in the graph (a DaemonSet whose name or image names the NVIDIA
device plugin, or a Helm release of chart `nvidia-device-plugin`: `values.tolerations`, default
`CriticalAddonsOnly Exists` + `nvidia.com/gpu Exists NoSchedule`; its NFD worker, deployed when
`nfd.enabled` or else `gfd.enabled`, uses `values.nfd.worker.tolerations`, default
`nvidia.com/gpu=present` with `Equal`: NVIDIA/k8s-device-plugin #1934). The pool is served when one
plugin tolerates all its taints. With none in the graph the chart's defaults are assumed (GI012).
Only tolerations are checked, not the plugin's own nodeSelector / affinity.

Findings (stable codes):

| code  | severity | what                                                                      |
| ----- | -------- | ------------------------------------------------------------------------- |
| GI001 | error    | no-pool: a GPU-requesting or wired pod can land on no pool in the graph   |
| GI002 | error    | wrong-pool: can land on a pool it is not wired to                         |
| GI003 | error    | cpu-on-gpu-pool: requests no GPU but can land on a GPU pool (pins a node) |
| GI004 | error    | too-many-gpus: requests more GPUs than the nodes of every pool it can land on have |
| GI005 | error    | knative-flag: Serverless InferenceService sets nodeSelector / affinity / tolerations while the Knative podspec feature is not "enabled" (the webhook rejects it) |
| GI006 | info     | knative-config-absent: such an InferenceService, but the graph has no Knative config (KnativeServing or config-features): the cluster's must enable the flags |
| GI007 | error    | device-plugin-taint: a GPU pool's taint is not tolerated by the device plugin in the graph (the node exposes no GPUs) |
| GI008 | warning  | never-scales-to-zero: a pool with min 0 nodes hosts workloads that never scale to zero (named) |
| GI009 | warning  | wildcard-toleration: a pod can land on GPU pools only thanks to `operator: Exists` with no key |
| GI010 | warning  | seldon-model-unmatched: a Model's requirements match no Server's capabilities, or its pinned Server does not exist (or lacks them) |
| GI011 | error    | wired-pool-unreachable: cannot land on a pool it is wired to (or the pool is not in the graph) |
| GI012 | warning  | device-plugin-absent: a GPU pool that needs a device plugin DaemonSet has a taint the upstream chart's defaults do not tolerate, and the graph installs none |
| GI013 | error    | invalid-spec: a taint, toleration, selector or GPU quantity Kubernetes would refuse |
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from ..model.catalog import aws_instance, gke_gpus_for_machine
from ..model.errors import InputError
from ..model.scheduling import (
    FILTERING_EFFECTS,
    GPU_RESOURCE,
    Placement,
    Taint,
    Toleration,
    extended_resource_tolerations,
    parse_quantity,
    untolerated,
)

# ---------------------------------------------------------------------------------------------
# Contract
# ---------------------------------------------------------------------------------------------

WIRED_POOL_ANNOTATION = "gpu-inference.dev/pool"
"""Annotation on a workload CR / Deployment: the pool it is wired to (comma list = preference)."""
WIRED_COMPONENT_POOL_ANNOTATION = "gpu-inference.dev/pool.{component}"
"""Per-component wiring on an InferenceService (`component`: predictor, transformer, explainer);
wins over `WIRED_POOL_ANNOTATION`."""
POOL_LABEL = "gpu-inference.dev/pool"
PRESENT_LABELS_ANNOTATION = "gpu-inference.dev/present-labels"
"""Node label naming the pool a node belongs to (pool identity)."""
GPU_COUNT_KEYS = (
    "gpu-inference.dev/gpus-per-node",
    "nvidia.com/gpu.count",
    "cloud.google.com/gke-accelerator-count",
)
"""Annotation or label keys a NodePatch may carry to say how many GPUs the node has."""

SEVERITIES = ("error", "warning", "info")

CODES: dict[str, tuple[str, str]] = {
    "GI001": ("error", "no-pool"),
    "GI002": ("error", "wrong-pool"),
    "GI003": ("error", "cpu-on-gpu-pool"),
    "GI004": ("error", "too-many-gpus"),
    "GI005": ("error", "knative-flag"),
    "GI006": ("info", "knative-config-absent"),
    "GI007": ("error", "device-plugin-taint"),
    "GI008": ("warning", "never-scales-to-zero"),
    "GI009": ("warning", "wildcard-toleration"),
    "GI010": ("warning", "seldon-model-unmatched"),
    "GI011": ("error", "wired-pool-unreachable"),
    "GI012": ("warning", "device-plugin-absent"),
    "GI013": ("error", "invalid-spec"),
}

GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_PATCH = "kubernetes:core/v1:NodePatch"
INFERENCE_SERVICE = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
SELDON_SERVER = "kubernetes:mlops.seldon.io/v1alpha1:Server"
SELDON_SERVER_CONFIG = "kubernetes:mlops.seldon.io/v1alpha1:ServerConfig"
SELDON_MODEL = "kubernetes:mlops.seldon.io/v1alpha1:Model"
KNATIVE_SERVING = "kubernetes:operator.knative.dev/v1beta1:KnativeServing"
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
APPS_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
ISVC_COMPONENTS = ("predictor", "transformer", "explainer")

KNATIVE_FEATURE_FOR_FIELD = {
    "nodeSelector": "kubernetes.podspec-nodeselector",
    "affinity": "kubernetes.podspec-affinity",
    "tolerations": "kubernetes.podspec-tolerations",
}
SERVERLESS_MODES = ("Serverless", "Knative")
RAW_MODES = ("RawDeployment", "Standard")
DEPLOYMENT_MODE_ANNOTATION = "serving.kserve.io/deploymentMode"

GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
GKE_ACCELERATOR_COUNT_LABEL = "cloud.google.com/gke-accelerator-count"
GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
GKE_PREEMPTIBLE_LABEL = "cloud.google.com/gke-preemptible"
GKE_NO_DEFAULT_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
GKE_GPU_TAINT = Taint(GPU_RESOURCE, "present", "NoSchedule")
EKS_NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_LABEL = "eks.amazonaws.com/capacityType"

DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_DEFAULT_TOLERATIONS = (
    Toleration("CriticalAddonsOnly", "Exists"),
    Toleration(GPU_RESOURCE, "Exists", "", "NoSchedule"),
)
NFD_WORKER_DEFAULT_TOLERATIONS = (
    Toleration("node-role.kubernetes.io/master", "Equal", "", "NoSchedule"),
    Toleration(GPU_RESOURCE, "Equal", "present", "NoSchedule"),
)
_DEVICE_PLUGIN_MARKERS = ("nvidia-device-plugin", "k8s-device-plugin", "nvidia-gpu-device-plugin")

SELDON_CAPABILITIES_ENV = "SELDON_SERVER_CAPABILITIES"
SELDON_DEFAULT_CAPABILITIES: dict[str, frozenset[str]] = {
    "mlserver": frozenset(
        [
            "mlserver",
            "alibi-detect",
            "alibi-explain",
            "huggingface",
            "lightgbm",
            "mlflow",
            "python",
            "sklearn",
            "spark-mlib",
            "xgboost",
        ]
    ),
    "triton": frozenset(
        ["triton", "dali", "fil", "onnx", "openvino", "python", "pytorch", "tensorflow", "tensorrt"]
    ),
}
SELDON_SERVER_CHARTS = ("seldon-core-v2-runtime", "seldon-core-v2-servers")
KSERVE_CHARTS = ("kserve", "kserve-resources")

# Keys of a KServe component that are pod-spec fields or component settings, never a container.
_COMPONENT_NON_CONTAINER_KEYS = frozenset(
    {
        "affinity",
        "nodeSelector",
        "tolerations",
        "securityContext",
        "dnsConfig",
        "logger",
        "batcher",
        "workerSpec",
        "readinessGates",
        "overhead",
        "annotations",
        "labels",
        "topologySpreadConstraints",
    }
)
_CONTAINER_MARKERS = ("resources", "storageUri", "image", "modelFormat", "runtime", "args")


def wired_annotation(component: str) -> str:
    """The per-component wiring annotation of an InferenceService component."""
    return WIRED_COMPONENT_POOL_ANNOTATION.format(component=component)


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """One problem: a stable `code` (see the module docstring), its severity, the resource it is
    about (`Kind/name[/component]`), a one-line message and a one-line fix."""

    code: str
    severity: str
    resource: str
    message: str
    fix: str

    def to_json(self) -> dict[str, str]:
        return {
            "code": self.code,
            "fix": self.fix,
            "message": self.message,
            "resource": self.resource,
            "severity": self.severity,
        }

    def sort_key(self) -> tuple[int, str, str, str, str]:
        return (SEVERITIES.index(self.severity), self.code, self.resource, self.message, self.fix)


@dataclass(frozen=True)
class NodeTemplate:
    """One node (or the node template of a cloud pool): its effective labels and taints."""

    name: str | None
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]


@dataclass(frozen=True)
class PoolFacts:
    """A node pool as the check sees it (effective labels and taints include the cloud's own)."""

    name: str
    provider: str  # "gke" | "eks" | "existing"
    resources: tuple[str, ...]
    nodes: tuple[NodeTemplate, ...]
    gpus_per_node: int | None  # None: unknown
    gpu: bool
    accelerator: str | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    spot: bool = False
    builtin_device_plugin: bool = False

    @property
    def labels(self) -> dict[str, str]:
        """Labels every node of the pool has."""
        first, *rest = self.nodes
        return {k: v for k, v in first.labels.items() if all(n.labels.get(k) == v for n in rest)}

    @property
    def taints(self) -> tuple[Taint, ...]:
        """Taints of any node of the pool (sorted, without duplicates)."""
        return tuple(sorted({t for n in self.nodes for t in n.taints}))

    @property
    def resource(self) -> str:
        return self.resources[0]

    def admits(self, placement: Placement) -> bool:
        return any(placement.admits(n.labels, n.taints, n.name) for n in self.nodes)

    def why_not(self, placement: Placement) -> list[str]:
        node = self.nodes[0]
        return placement.why_not(node.labels, node.taints)

    def to_json(self) -> dict[str, Any]:
        return {
            "accelerator": self.accelerator,
            "builtinDevicePlugin": self.builtin_device_plugin,
            "gpu": self.gpu,
            "gpusPerNode": self.gpus_per_node,
            "labels": dict(sorted(self.labels.items())),
            "maxNodes": self.max_nodes,
            "minNodes": self.min_nodes,
            "name": self.name,
            "nodes": sorted(n.name for n in self.nodes if n.name),
            "provider": self.provider,
            "resources": list(self.resources),
            "spot": self.spot,
            "taints": [str(t) for t in self.taints],
        }


@dataclass(frozen=True)
class WorkloadFacts:
    """One pod template and where it can land."""

    resource: str  # Kind/name[/component]
    type: str
    name: str
    kind: str
    component: str | None
    namespace: str
    pools: tuple[str, ...]  # sorted
    wired: tuple[str, ...]  # preference order
    gpus: int
    scales_to_zero: bool
    daemonset: bool = False
    deployment_mode: str | None = None
    placement: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "daemonSet": self.daemonset,
            "deploymentMode": self.deployment_mode,
            "gpus": self.gpus,
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "placement": _sorted_json(self.placement),
            "pools": list(self.pools),
            "resource": self.resource,
            "scalesToZero": self.scales_to_zero,
            "type": self.type,
            "wired": list(self.wired),
        }


@dataclass(frozen=True)
class Report:
    pools: list[PoolFacts]
    workloads: list[WorkloadFacts]
    findings: list[Finding]
    extended_resource_toleration: bool

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def ok(self) -> bool:
        """No error (warnings and info allowed)."""
        return not self.errors

    def findings_for(self, resource: str) -> list[Finding]:
        return [f for f in self.findings if f.resource == resource]

    def to_json_text(self) -> str:
        """`placement.json`: `to_json()` as indented JSON text ending in a newline (byte-stable)."""
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def to_json(self) -> dict[str, Any]:
        """A plain, stable dict (keys sorted at every level); `json.dumps` it as it is."""
        counts = {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}
        return _sorted_json(
            {
                "extendedResourceToleration": self.extended_resource_toleration,
                "findings": [f.to_json() for f in self.findings],
                "pools": [p.to_json() for p in self.pools],
                "summary": {
                    "errors": counts["error"],
                    "info": counts["info"],
                    "warnings": counts["warning"],
                },
                "workloads": [w.to_json() for w in self.workloads],
            }
        )


# ---------------------------------------------------------------------------------------------
# Reading the graph
# ---------------------------------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): _label_text(v) for k, v in _map(value).items()}


def _label_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value.strip())
    return None


def _kind(typ: str) -> str:
    return typ.rsplit(":", 1)[-1]


def _group(typ: str) -> str:
    """`kubernetes:serving.kserve.io/v1beta1:InferenceService` -> `serving.kserve.io`."""
    parts = typ.split(":")
    return parts[1].split("/", 1)[0] if len(parts) == 3 else ""


def _is(typ: str, group: str, kind: str) -> bool:
    return typ.startswith("kubernetes:") and _group(typ) == group and _kind(typ) == kind


def _rid(typ: str, name: str, component: str | None = None) -> str:
    rid = f"{_kind(typ)}/{name}"
    return f"{rid}/{component}" if component else rid


def _metadata(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(inputs.get("metadata"))


def _namespace(inputs: Mapping[str, Any]) -> str:
    return str(_metadata(inputs).get("namespace") or "default")


def _split_pools(value: Any) -> tuple[str, ...]:
    if not isinstance(value, str):
        return ()
    return tuple(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))


class _Findings:
    def __init__(self) -> None:
        self.items: set[Finding] = set()

    def add(self, code: str, resource: str, message: str, fix: str) -> None:
        self.items.add(Finding(code, CODES[code][0], resource, message, fix))

    def sorted(self) -> list[Finding]:
        return sorted(self.items, key=Finding.sort_key)


def _taint(data: Any, where: str, out: _Findings) -> Taint | None:
    try:
        return Taint.from_dict(_map(data))
    except (InputError, KeyError, TypeError, ValueError) as e:
        out.add("GI013", where, f"invalid taint {dict(_map(data))!r}: {e}", "fix the taint")
        return None


def _taints(items: Any, where: str, out: _Findings) -> list[Taint]:
    taints = [_taint(t, where, out) for t in _list(items)]
    return [t for t in taints if t is not None]


# -- pools --------------------------------------------------------------------------------------


@dataclass
class _PoolDraft:
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


def _gke_pool(entry: Mapping[str, Any], out: _Findings) -> _PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    nc = _map(inputs.get("nodeConfig"))
    labels = _str_map(nc.get("labels"))
    taints = _taints(nc.get("taints"), rid, out)
    accelerator: str | None = None
    gpus = 0
    for acc in _list(nc.get("guestAccelerators")):
        acc = _map(acc)
        if acc.get("type"):
            accelerator = str(acc["type"])
        gpus += _int(acc.get("count")) or 0
    if gpus == 0 and isinstance(nc.get("machineType"), str):
        attached = gke_gpus_for_machine(str(nc["machineType"]))
        if attached:
            accelerator, gpus = attached
    gpu = gpus > 0
    effective = dict(labels)
    if gpu:
        if accelerator:
            effective[GKE_ACCELERATOR_LABEL] = accelerator
        effective[GKE_ACCELERATOR_COUNT_LABEL] = str(gpus)
        if GKE_GPU_TAINT not in taints:
            taints.append(GKE_GPU_TAINT)
    if isinstance(inputs.get("name"), str) and inputs["name"]:
        effective[GKE_NODEPOOL_LABEL] = str(inputs["name"])
    spot = nc.get("spot") is True
    if spot:
        effective[GKE_SPOT_LABEL] = "true"
    if nc.get("preemptible") is True:
        effective[GKE_PREEMPTIBLE_LABEL] = "true"
    auto = _map(inputs.get("autoscaling"))
    if auto:
        lo = _int(auto.get("minNodeCount"))
        hi = _int(auto.get("maxNodeCount"))
        if lo is None and hi is None:
            lo, hi = _int(auto.get("totalMinNodeCount")), _int(auto.get("totalMaxNodeCount"))
        lo = 0 if lo is None and hi is not None else lo
    else:
        lo = _int(inputs.get("nodeCount"))
        if lo is None:
            lo = _int(inputs.get("initialNodeCount"))
        hi = lo
    return _PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="gke",
        resource=rid,
        node=NodeTemplate(None, effective, tuple(taints)),
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        min_nodes=lo,
        max_nodes=hi,
        spot=spot,
        builtin_device_plugin=effective.get(GKE_NO_DEFAULT_PLUGIN_LABEL) != "true",
    )


def _looks_like_gpu_instance(instance_type: str) -> bool:
    family = instance_type.split(".", 1)[0]
    return family[:1] in ("g", "p") and family[1:2].isdigit()


def _eks_pool(entry: Mapping[str, Any], out: _Findings) -> _PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    labels = _str_map(inputs.get("labels"))
    taints = _taints(inputs.get("taints"), rid, out)
    ami = str(inputs.get("amiType") or "")
    gpu_ami = "NVIDIA" in ami or "GPU" in ami
    counts: list[int | None] = []
    accelerator = None
    for it in _list(inputs.get("instanceTypes")):
        try:
            inst = aws_instance(str(it))
        except InputError:
            gpu_like = gpu_ami or _looks_like_gpu_instance(str(it))
            counts.append(None if gpu_like else 0)
            continue
        counts.append(inst.gpus)
        accelerator = accelerator or inst.accelerator_label
    if not counts:
        counts = [None if gpu_ami else 0]  # EKS's default instance type (t3.medium) has none
    known = [c for c in counts if c is not None]
    gpus = min(known) if len(known) == len(counts) else None
    gpu = gpus is None or gpus > 0
    effective = dict(labels)
    if isinstance(inputs.get("nodeGroupName"), str) and inputs["nodeGroupName"]:
        effective[EKS_NODEGROUP_LABEL] = str(inputs["nodeGroupName"])
    capacity = str(inputs.get("capacityType") or "ON_DEMAND")
    effective[EKS_CAPACITY_LABEL] = capacity
    scaling = _map(inputs.get("scalingConfig"))
    return _PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="eks",
        resource=rid,
        node=NodeTemplate(None, effective, tuple(taints)),
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        min_nodes=_int(scaling.get("minSize")),
        max_nodes=_int(scaling.get("maxSize")),
        spot=capacity == "SPOT",
        builtin_device_plugin=ami.startswith("BOTTLEROCKET") and "NVIDIA" in ami,
    )


def _present_labels(annotations: Mapping[str, str]) -> dict[str, str]:
    """Labels a NodePatch records as already on the node (NFD / GFD labels it does not patch)."""
    try:
        found = json.loads(annotations.get(PRESENT_LABELS_ANNOTATION, "{}"))
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _node_pool(entry: Mapping[str, Any], out: _Findings) -> _PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    md = _metadata(inputs)
    annotations = _str_map(md.get("annotations"))
    labels = {**_present_labels(annotations), **_str_map(md.get("labels"))}
    taints = _taints(_map(inputs.get("spec")).get("taints"), rid, out)
    gpus: int | None = None
    for key in GPU_COUNT_KEYS:
        found = _int(annotations.get(key, labels.get(key)))
        if found is not None:
            gpus = found
            break
    evidence = (
        any(k.startswith("nvidia.com/gpu") for k in labels)
        or GKE_ACCELERATOR_LABEL in labels
        or "k8s.amazonaws.com/accelerator" in labels
        or any(t.key == GPU_RESOURCE for t in taints)
    )
    node_name = str(md["name"]) if md.get("name") else None
    return _PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="existing",
        resource=rid,
        node=NodeTemplate(node_name, labels, tuple(taints)),
        gpus=gpus,
        gpu=(gpus or 0) > 0 or (gpus is None and evidence),
        accelerator=labels.get("nvidia.com/gpu.product") or labels.get(GKE_ACCELERATOR_LABEL),
    )


def _pools(graph: Sequence[Mapping[str, Any]], out: _Findings) -> list[PoolFacts]:
    drafts: dict[str, list[_PoolDraft]] = {}
    for entry in graph:
        typ = str(entry.get("type", ""))
        if typ == GKE_NODE_POOL:
            draft = _gke_pool(entry, out)
        elif typ == EKS_NODE_GROUP:
            draft = _eks_pool(entry, out)
        elif typ == NODE_PATCH:
            draft = _node_pool(entry, out)
        else:
            continue
        drafts.setdefault(draft.name, []).append(draft)
    pools = []
    for name in sorted(drafts):
        group = drafts[name]
        known = [d.gpus for d in group if d.gpus is not None]
        gpus = min(known) if known and len(known) == len(group) else None
        mins = [d.min_nodes for d in group]
        maxs = [d.max_nodes for d in group]
        pools.append(
            PoolFacts(
                name=name,
                provider=group[0].provider,
                resources=tuple(sorted(d.resource for d in group)),
                nodes=tuple(d.node for d in group),
                gpus_per_node=gpus,
                gpu=any(d.gpu for d in group),
                accelerator=next((d.accelerator for d in group if d.accelerator), None),
                min_nodes=None if None in mins else sum(m for m in mins if m is not None),
                max_nodes=None if None in maxs else sum(m for m in maxs if m is not None),
                spot=all(d.spot for d in group),
                builtin_device_plugin=all(d.builtin_device_plugin for d in group),
            )
        )
    return pools


# -- pod templates ------------------------------------------------------------------------------


@dataclass
class _Template:
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

    @property
    def resource(self) -> str:
        return _rid(self.type, self.name, self.component)


def _mergo(dst: Any, src: Any) -> Any:
    """Go's `mergo.Merge(dst, src, WithOverride, WithAppendSlice)` on plain data: maps merge key by
    key, lists append, a non-empty scalar of `src` replaces `dst`'s."""
    if isinstance(dst, Mapping) and isinstance(src, Mapping):
        out = dict(dst)
        for k, v in src.items():
            out[k] = _mergo(dst[k], v) if k in dst else v
        return out
    if isinstance(dst, list | tuple) and isinstance(src, list | tuple):
        return [*dst, *src]
    if src is None or src == "" or src == 0 or src is False:
        return dst
    return src


def merge_seldon_pod_specs(server_config: Mapping[str, Any], server: Mapping[str, Any]) -> dict:
    """A Server's effective podSpec: its ServerConfig's podSpec with the Server's merged in, as
    Seldon Core 2's operator does (`mergePodSpecs`): containers merged by name, everything else
    mergo with override and append-slice (nodeSelector keys merge, tolerations append)."""
    merged = dict(
        _mergo(dict(server_config), {k: v for k, v in server.items() if k != "containers"})
    )
    existing = [_map(c) for c in _list(server_config.get("containers"))]
    overrides = [_map(c) for c in _list(server.get("containers"))]
    containers: list[Any] = []
    for o in overrides:
        same = [e for e in existing if e.get("name") == o.get("name")]
        containers += [_mergo(e, o) for e in same] or [o]
    containers += [
        e for e in existing if not any(o.get("name") == e.get("name") for o in overrides)
    ]
    if containers:
        merged["containers"] = containers
    return merged


def _isvc_containers(component: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    containers = [_map(c) for c in _list(component.get("containers"))]
    for key in sorted(component):
        value = component[key]
        if key in _COMPONENT_NON_CONTAINER_KEYS or key == "containers":
            continue
        if isinstance(value, Mapping) and any(m in value for m in _CONTAINER_MARKERS):
            containers.append(value)
    return containers


def _knative_settings(
    graph: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, str] | None, str, bool]:
    """(features or None when the graph has no Knative config, where they are set, scale-to-zero
    allowed). The KnativeServing CR wins over a ConfigMap: the operator reverts ConfigMap edits."""
    operator: tuple[dict[str, str], str] | None = None
    configmap: tuple[dict[str, str], str] | None = None
    scale_to_zero = True
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = _map(entry.get("inputs"))
        if _is(typ, "operator.knative.dev", "KnativeServing"):
            config = _map(_map(inputs.get("spec")).get("config"))
            features = _str_map(config.get("features"))
            operator = (
                {**(operator[0] if operator else {}), **features},
                f"spec.config.features of KnativeServing {entry.get('name')}",
            )
            autoscaler = _str_map(config.get("autoscaler"))
            if autoscaler.get("enable-scale-to-zero", "").lower() == "false":
                scale_to_zero = False
        elif typ in ("kubernetes:core/v1:ConfigMapPatch", "kubernetes:core/v1:ConfigMap"):
            md = _metadata(inputs)
            if md.get("namespace") not in (None, "knative-serving"):
                continue
            data = _str_map(inputs.get("data"))
            if md.get("name") == "config-features":
                configmap = (
                    {**(configmap[0] if configmap else {}), **data},
                    f"data of {_kind(typ)} knative-serving/config-features",
                )
            elif (
                md.get("name") == "config-autoscaler"
                and data.get("enable-scale-to-zero", "").lower() == "false"
            ):
                scale_to_zero = False
    chosen = operator or configmap
    if chosen is None:
        return None, "", scale_to_zero
    return chosen[0], chosen[1], scale_to_zero


def _helm_releases(graph: Sequence[Mapping[str, Any]], chart: str) -> list[Mapping[str, Any]]:
    found = []
    for entry in graph:
        if entry.get("type") not in HELM_TYPES:
            continue
        inputs = _map(entry.get("inputs"))
        name = str(inputs.get("chart") or "").rstrip("/").rsplit("/", 1)[-1]
        if name == chart:
            found.append(entry)
    return found


def _kserve_default_mode(graph: Sequence[Mapping[str, Any]]) -> str:
    for chart in KSERVE_CHARTS:
        for entry in _helm_releases(graph, chart):
            values = _map(_map(entry.get("inputs")).get("values"))
            mode = _map(_map(values.get("kserve")).get("controller")).get("deploymentMode")
            if isinstance(mode, str) and mode:
                return mode
    return "Serverless"


def _templates(graph: Sequence[Mapping[str, Any]], scale_to_zero_allowed: bool) -> list[_Template]:
    templates: list[_Template] = []
    default_mode = _kserve_default_mode(graph)
    server_configs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in graph:
        typ = str(entry.get("type", ""))
        if _is(typ, "mlops.seldon.io", "ServerConfig"):
            inputs = _map(entry.get("inputs"))
            sc_name = str(_metadata(inputs).get("name") or entry.get("name"))
            server_configs[(_namespace(inputs), sc_name)] = inputs
    for entry in graph:
        typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
        inputs = _map(entry.get("inputs"))
        md = _metadata(inputs)
        annotations = _map(md.get("annotations"))
        ns = _namespace(inputs)
        spec = _map(inputs.get("spec"))
        if _is(typ, "serving.kserve.io", "InferenceService"):
            mode = str(annotations.get(DEPLOYMENT_MODE_ANNOTATION) or default_mode)
            serverless = mode in SERVERLESS_MODES
            cr_wired = _split_pools(annotations.get(WIRED_POOL_ANNOTATION))
            for comp in ISVC_COMPONENTS:
                component = spec.get(comp)
                if not isinstance(component, Mapping):
                    continue
                own_key = wired_annotation(comp)
                wired = _split_pools(annotations[own_key]) if own_key in annotations else cr_wired
                min_replicas = _int(component.get("minReplicas"))
                min_replicas = 1 if min_replicas is None else min_replicas
                templates.append(
                    _Template(
                        type=typ,
                        name=name,
                        component=comp,
                        namespace=ns,
                        fragment=component,
                        containers=_isvc_containers(component),
                        init_containers=[_map(c) for c in _list(component.get("initContainers"))],
                        wired=wired,
                        scales_to_zero=serverless and min_replicas == 0 and scale_to_zero_allowed,
                        serverless=serverless,
                        deployment_mode=mode,
                    )
                )
        elif _is(typ, "mlops.seldon.io", "Server"):
            sc_name = str(spec.get("serverConfig") or "")
            sc = server_configs.get((ns, sc_name))
            if sc is None:
                same = [v for (n, s), v in server_configs.items() if s == sc_name]
                sc = same[0] if len(same) == 1 else None
            sc_spec = _map(_map(sc.get("spec")).get("podSpec")) if sc else {}
            pod = merge_seldon_pod_specs(sc_spec, _map(spec.get("podSpec")))
            wired = _split_pools(annotations.get(WIRED_POOL_ANNOTATION))
            if not wired and sc:
                sc_annotations = _map(_metadata(sc).get("annotations"))
                wired = _split_pools(sc_annotations.get(WIRED_POOL_ANNOTATION))
            replicas = _int(spec.get("replicas"))
            templates.append(
                _Template(
                    type=typ,
                    name=name,
                    component=None,
                    namespace=ns,
                    fragment=pod,
                    containers=[_map(c) for c in _list(pod.get("containers"))],
                    init_containers=[_map(c) for c in _list(pod.get("initContainers"))],
                    wired=wired,
                    scales_to_zero=replicas == 0,
                )
            )
        elif typ.startswith("kubernetes:apps/") and _kind(typ) in APPS_KINDS:
            template = _map(spec.get("template"))
            pod_spec = _map(template.get("spec"))
            wired = _split_pools(annotations.get(WIRED_POOL_ANNOTATION)) or _split_pools(
                _map(_metadata(template).get("annotations")).get(WIRED_POOL_ANNOTATION)
            )
            daemonset = _kind(typ) == "DaemonSet"
            replicas = _int(spec.get("replicas"))
            templates.append(
                _Template(
                    type=typ,
                    name=name,
                    component=None,
                    namespace=ns,
                    fragment=pod_spec,
                    containers=[_map(c) for c in _list(pod_spec.get("containers"))],
                    init_containers=[_map(c) for c in _list(pod_spec.get("initContainers"))],
                    wired=wired,
                    scales_to_zero=not daemonset and replicas == 0,
                    daemonset=daemonset,
                )
            )
    return templates


def _resource_quantity(container: Mapping[str, Any], resource: str) -> Any:
    res = _map(container.get("resources"))
    requests, limits = _map(res.get("requests")), _map(res.get("limits"))
    return requests.get(resource, limits.get(resource))


def _gpus(template: _Template) -> int:
    """GPUs the pod needs: containers summed, or the largest init container, whichever is more.
    Raises InputError for a quantity Kubernetes would refuse."""

    def count(c: Mapping[str, Any]) -> int:
        q = _resource_quantity(c, GPU_RESOURCE)
        if q is None:
            return 0
        return int(parse_quantity(q).to_integral_value(rounding=ROUND_CEILING))

    main = sum(count(c) for c in template.containers)
    init = max((count(c) for c in template.init_containers), default=0)
    return max(main, init)


def _extended_resources(template: _Template) -> list[str]:
    names: set[str] = set()
    for c in [*template.containers, *template.init_containers]:
        res = _map(c.get("resources"))
        for part in ("requests", "limits"):
            names.update(str(k) for k in _map(res.get(part)))
    return sorted(names)


# -- device plugins -----------------------------------------------------------------------------


def _tolerations(items: Any) -> tuple[Toleration, ...]:
    return tuple(Toleration.from_dict(_map(t)) for t in _list(items))


def _device_plugins(
    graph: Sequence[Mapping[str, Any]], out: _Findings
) -> list[tuple[str, list[tuple[str, tuple[Toleration, ...]]]]]:
    """Each device plugin in the graph: (resource, [(part, tolerations)]) where the parts are the
    DaemonSets that must all run on a GPU node (the plugin, and NFD's worker when deployed)."""
    plugins = []
    for entry in _helm_releases(graph, DEVICE_PLUGIN_CHART):
        rid = _rid(str(entry["type"]), str(entry["name"]))
        values = _map(_map(entry.get("inputs")).get("values"))
        try:
            parts = [
                (
                    "device plugin",
                    _tolerations(values["tolerations"])
                    if "tolerations" in values
                    else DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
                )
            ]
            nfd = _map(values.get("nfd"))
            nfd_on = nfd.get("enabled")
            if nfd_on is None:
                nfd_on = _map(values.get("gfd")).get("enabled")
            if nfd_on is True:
                worker = _map(nfd.get("worker"))
                parts.append(
                    (
                        "NFD worker",
                        _tolerations(worker["tolerations"])
                        if "tolerations" in worker
                        else NFD_WORKER_DEFAULT_TOLERATIONS,
                    )
                )
        except (InputError, TypeError, ValueError) as e:
            out.add("GI013", rid, f"invalid toleration in the chart values: {e}", "fix it")
            continue
        plugins.append((rid, parts))
    for entry in graph:
        typ = str(entry.get("type", ""))
        if not (typ.startswith("kubernetes:apps/") and _kind(typ) == "DaemonSet"):
            continue
        inputs = _map(entry.get("inputs"))
        pod = _map(_map(_map(inputs.get("spec")).get("template")).get("spec"))
        names = [str(entry.get("name", "")), str(_metadata(inputs).get("name") or "")]
        names += [str(_map(c).get("image") or "") for c in _list(pod.get("containers"))]
        if not any(m in n for n in names for m in _DEVICE_PLUGIN_MARKERS):
            continue
        rid = _rid(typ, str(entry["name"]))
        try:
            plugins.append((rid, [("device plugin", _tolerations(pod.get("tolerations")))]))
        except (InputError, TypeError, ValueError):
            continue  # reported with the DaemonSet's own workload finding (GI013)
    return sorted(plugins, key=lambda p: p[0])


# ---------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------


def _names(items: Iterable[str]) -> str:
    items = list(items)
    return ", ".join(items) if items else "none"


def check(
    graph: Iterable[Mapping[str, Any]], *, extended_resource_toleration: bool | None = None
) -> Report:
    """Where every pod template in `graph` can land, and the findings (see the module docstring).

    `extended_resource_toleration`: whether the cluster runs Kubernetes' ExtendedResourceToleration
    admission plugin (GPU-requesting pods then tolerate `nvidia.com/gpu` taints by themselves);
    None infers it: on when any pool is GKE or EKS, off when the graph has only existing nodes.
    """
    entries = [e for e in graph if isinstance(e, Mapping) and "type" in e and "name" in e]
    out = _Findings()
    pools = _pools(entries, out)
    if extended_resource_toleration is None:
        extended_resource_toleration = any(p.provider in ("gke", "eks") for p in pools)
    pool_by_name = {p.name: p for p in pools}
    features, features_where, scale_to_zero_allowed = _knative_settings(entries)

    workloads: list[WorkloadFacts] = []
    lands_on: dict[str, list[WorkloadFacts]] = {p.name: [] for p in pools}
    for t in _templates(entries, scale_to_zero_allowed):
        rid = t.resource
        try:
            base = Placement.from_pod_spec(t.fragment)
            gpus = _gpus(t)
        except (InputError, KeyError, TypeError, ValueError) as e:
            out.add(
                "GI013",
                rid,
                f"its pod spec is not valid Kubernetes: {e}",
                "fix the nodeSelector / affinity / tolerations / nvidia.com/gpu quantity named",
            )
            continue
        placement = base
        if extended_resource_toleration:
            placement = base.with_tolerations(extended_resource_tolerations(_extended_resources(t)))
        admitted = [p for p in pools if p.admits(placement)]
        facts = WorkloadFacts(
            resource=rid,
            type=t.type,
            name=t.name,
            kind=_kind(t.type),
            component=t.component,
            namespace=t.namespace,
            pools=tuple(p.name for p in admitted),
            wired=t.wired,
            gpus=gpus,
            scales_to_zero=t.scales_to_zero,
            daemonset=t.daemonset,
            deployment_mode=t.deployment_mode,
            placement=base.to_pod_spec(),
        )
        workloads.append(facts)
        for p in admitted:
            lands_on[p.name].append(facts)
        _check_workload(t, facts, placement, admitted, pools, pool_by_name, out)
        if t.serverless:
            _check_knative(t, base, features, features_where, out)

    _check_pools(entries, pools, lands_on, out)
    _check_seldon_models(entries, out)
    workloads.sort(key=lambda w: w.resource)
    return Report(pools, workloads, out.sorted(), extended_resource_toleration)


def _check_workload(
    t: _Template,
    w: WorkloadFacts,
    placement: Placement,
    admitted: list[PoolFacts],
    pools: list[PoolFacts],
    pool_by_name: Mapping[str, PoolFacts],
    out: _Findings,
) -> None:
    rid = w.resource
    names = [p.name for p in admitted]
    gpu_pools = [p for p in admitted if p.gpu]
    missing = [n for n in w.wired if n not in pool_by_name]

    def reasons(pool: PoolFacts) -> str:
        return "; ".join(pool.why_not(placement)) or "refused"

    if not admitted and not t.daemonset and (w.gpus > 0 or w.wired):
        if w.wired:
            detail = "; ".join(
                f"pool {n}: {reasons(pool_by_name[n]) if n in pool_by_name else 'not in the graph'}"
                for n in w.wired
            )
            message = f"wired to {_names(w.wired)} but can land on no pool ({detail})"
            fix = (
                f"give it the placement of pool {w.wired[0]} (select its labels, tolerate its "
                "taints)"
                if not missing
                else f"wire it to a pool the graph has ({_names(p.name for p in pools)})"
            )
        else:
            detail = "; ".join(f"pool {p.name}: {reasons(p)}" for p in pools if p.gpu)
            message = f"requests {w.gpus} GPU(s) but can land on no pool" + (
                f" ({detail})" if detail else ": the graph has no GPU pool"
            )
            fix = "select a GPU pool's labels and tolerate its taints (or add a GPU pool)"
        out.add("GI001", rid, message, fix)

    if w.wired:
        extra = [n for n in names if n not in w.wired]
        if extra:
            out.add(
                "GI002",
                rid,
                f"wired to {_names(w.wired)} but can also land on {_names(extra)}",
                f"select a label only {_names(w.wired)} has (e.g. {POOL_LABEL}) and drop "
                f"tolerations that let it onto {_names(extra)}",
            )
        unreachable = [n for n in w.wired if n not in names]
        if admitted and unreachable:
            detail = "; ".join(
                f"pool {n}: {reasons(pool_by_name[n]) if n in pool_by_name else 'not in the graph'}"
                for n in unreachable
            )
            out.add(
                "GI011",
                rid,
                f"wired to {_names(w.wired)} but cannot land on {_names(unreachable)} ({detail})",
                "add the selector term and tolerations of every pool it is wired to",
            )

    if t.daemonset:
        return

    if w.gpus == 0 and gpu_pools:
        untainted = [p.name for p in gpu_pools if not _filtering(p.taints)]
        tolerated = [p for p in gpu_pools if _filtering(p.taints)]
        fixes = []
        if tolerated and any(x.is_wildcard for x in placement.tolerations or ()):
            fixes.append("drop its wildcard toleration (operator Exists, no key)")
        elif tolerated:
            taints = sorted({str(x) for p in tolerated for x in _filtering(p.taints)})
            fixes.append(f"drop its toleration for {_names(taints)} or select a CPU pool")
        if untainted:
            fixes.append(
                f"taint {_names(untainted)} (e.g. {GKE_GPU_TAINT}) so only GPU pods land there"
            )
        out.add(
            "GI003",
            rid,
            f"requests no GPU but can land on GPU pool(s) {_names(p.name for p in gpu_pools)}, "
            "keeping a GPU node up",
            "; ".join(fixes),
        )

    if w.gpus > 0 and admitted and all(p.gpus_per_node is not None for p in admitted):
        most = max(p.gpus_per_node or 0 for p in admitted)
        if w.gpus > most:
            sizes = ", ".join(f"{p.name}: {p.gpus_per_node}" for p in admitted)
            out.add(
                "GI004",
                rid,
                f"requests {w.gpus} GPU(s) per pod but the nodes it can land on have fewer "
                f"({sizes}): it stays Pending",
                f"request at most {most} GPU(s) or wire it to a pool with {w.gpus}+ GPUs per node",
            )

    wild = [x for x in placement.tolerations or () if x.is_wildcard]
    if wild and gpu_pools:
        tame = Placement(
            placement.node_selector,
            [x for x in placement.tolerations or () if not x.is_wildcard],
            placement.node_affinity,
        )
        only_wild = [p.name for p in gpu_pools if not p.admits(tame)]
        if only_wild:
            out.add(
                "GI009",
                rid,
                f"a toleration with operator Exists and no key lets it onto GPU pool(s) "
                f"{_names(only_wild)}",
                "replace the wildcard toleration with tolerations for the taints it needs",
            )


def _filtering(taints: Iterable[Taint]) -> list[Taint]:
    return [t for t in taints if t.effect in FILTERING_EFFECTS]


def _check_knative(
    t: _Template,
    base: Placement,
    features: Mapping[str, str] | None,
    where: str,
    out: _Findings,
) -> None:
    needed = [KNATIVE_FEATURE_FOR_FIELD[f] for f in sorted(base.uses)]
    if not needed:
        return
    if features is None:
        out.add(
            "GI006",
            t.resource,
            f"Serverless InferenceService uses {_names(sorted(base.uses))}, which need the Knative "
            f"features {_names(needed)}; the graph has no Knative config (KnativeServing or "
            "config-features), so the cluster's Knative must enable them",
            "enable them in the cluster's Knative (kubectl edit configmap config-features -n "
            "knative-serving) or install Knative from this program",
        )
        return
    off = [f for f in needed if features.get(f, "disabled").strip().lower() != "enabled"]
    if off:
        given = ", ".join(f"{f}={features.get(f, 'disabled (default)')}" for f in off)
        out.add(
            "GI005",
            t.resource,
            f"Serverless InferenceService sets {_names(sorted(base.uses))} but {given} in "
            f"{where}: Knative's webhook rejects it",
            f'set {_names(off)} to "enabled" in {where}, or use deploymentMode RawDeployment',
        )


def _check_pools(
    graph: Sequence[Mapping[str, Any]],
    pools: list[PoolFacts],
    lands_on: Mapping[str, list[WorkloadFacts]],
    out: _Findings,
) -> None:
    plugins = _device_plugins(graph, out)
    for pool in pools:
        if pool.min_nodes == 0:
            pinned = sorted(
                w.resource for w in lands_on[pool.name] if not w.scales_to_zero and not w.daemonset
            )
            if pinned:
                out.add(
                    "GI008",
                    pool.resource,
                    f"pool {pool.name} has min 0 nodes but hosts workloads that never scale to "
                    f"zero: {_names(pinned)}",
                    "let them scale to zero (Serverless InferenceService with minReplicas 0) or "
                    "accept that the pool keeps a node",
                )
        if not pool.gpu or pool.builtin_device_plugin:
            continue
        taints = [t for t in pool.taints if t.effect in FILTERING_EFFECTS]
        if not taints:
            continue
        if plugins:
            failures = []
            for rid, parts in plugins:
                missing = [
                    (part, untolerated(taints, tols))
                    for part, tols in parts
                    if untolerated(taints, tols)
                ]
                if not missing:
                    break
                failures.append((rid, missing))
            else:
                rid, missing = failures[0]
                detail = "; ".join(f"{part}: {_names(map(str, ts))}" for part, ts in missing)
                needed = sorted({str(t) for _, ts in missing for t in ts})
                out.add(
                    "GI007",
                    pool.resource,
                    f"GPU pool {pool.name} has taints the device plugin {rid} does not tolerate "
                    f"({detail}): its nodes would expose no GPUs",
                    f"add tolerations {{key, operator: Exists}} for {_names(needed)} to "
                    f"{rid} (values.tolerations and values.nfd.worker.tolerations for the chart)",
                )
        else:
            missing_default = untolerated(taints, DEVICE_PLUGIN_DEFAULT_TOLERATIONS)
            if missing_default:
                out.add(
                    "GI012",
                    pool.resource,
                    f"GPU pool {pool.name} ({pool.provider}) needs an NVIDIA device plugin "
                    "DaemonSet, the graph installs none, and the upstream chart's default "
                    f"tolerations do not cover {_names(map(str, missing_default))}",
                    "install the nvidia-device-plugin chart with tolerations for these taints "
                    "(or make sure the cluster's plugin has them)",
                )


def _check_seldon_models(graph: Sequence[Mapping[str, Any]], out: _Findings) -> None:
    server_configs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in graph:
        if _is(str(entry.get("type", "")), "mlops.seldon.io", "ServerConfig"):
            inputs = _map(entry.get("inputs"))
            name = str(_metadata(inputs).get("name") or entry.get("name"))
            server_configs[(_namespace(inputs), name)] = inputs
    servers: dict[str, dict[str, frozenset[str] | None]] = {}
    for entry in graph:
        if not _is(str(entry.get("type", "")), "mlops.seldon.io", "Server"):
            continue
        inputs = _map(entry.get("inputs"))
        ns = _namespace(inputs)
        name = str(_metadata(inputs).get("name") or entry.get("name"))
        servers.setdefault(ns, {})[name] = _server_capabilities(inputs, ns, server_configs)
    for chart in SELDON_SERVER_CHARTS:
        for release in _helm_releases(graph, chart):
            ns = str(_map(release.get("inputs")).get("namespace") or "default")
            for name, defaults in SELDON_DEFAULT_CAPABILITIES.items():
                servers.setdefault(ns, {}).setdefault(name, defaults)
    for entry in graph:
        typ = str(entry.get("type", ""))
        if not _is(typ, "mlops.seldon.io", "Model"):
            continue
        inputs = _map(entry.get("inputs"))
        spec = _map(inputs.get("spec"))
        ns = _namespace(inputs)
        rid = _rid(typ, str(entry.get("name")))
        reqs = frozenset(str(r).strip() for r in _list(spec.get("requirements")) if str(r).strip())
        in_ns = servers.get(ns, {})
        pinned = spec.get("server")
        if isinstance(pinned, str) and pinned:
            if pinned not in in_ns:
                out.add(
                    "GI010",
                    rid,
                    f"pinned to Server {pinned}, which is not in namespace {ns} "
                    f"(Servers there: {_names(sorted(in_ns))})",
                    f"create Server {pinned} in {ns} or pin the Model to an existing one",
                )
                continue
            caps = in_ns[pinned]
            if caps is not None and not reqs <= caps:
                out.add(
                    "GI010",
                    rid,
                    f"pinned to Server {pinned}, which lacks the capabilities "
                    f"{_names(sorted(reqs - caps))}",
                    f"add {_names(sorted(reqs - caps))} to Server {pinned}'s extraCapabilities",
                )
            continue
        if not reqs:
            continue
        if any(c is None or reqs <= c for c in in_ns.values()):
            continue
        have = "; ".join(f"{n}: {_names(sorted(c or ()))}" for n, c in sorted(in_ns.items()))
        out.add(
            "GI010",
            rid,
            f"requirements {_names(sorted(reqs))} match no Server's capabilities in {ns} "
            f"({have or 'no Servers'})",
            "add the requirement to a Server's extraCapabilities (or its ServerConfig's "
            f"{SELDON_CAPABILITIES_ENV})",
        )


def _server_capabilities(
    inputs: Mapping[str, Any],
    ns: str,
    server_configs: Mapping[tuple[str, str], Mapping[str, Any]],
) -> frozenset[str] | None:
    """What a Server advertises: `spec.capabilities` if set, else its ServerConfig's agent
    `SELDON_SERVER_CAPABILITIES`; plus `extraCapabilities`. None: unknown (ServerConfig elsewhere)."""
    spec = _map(inputs.get("spec"))
    extra = {str(c).strip() for c in _list(spec.get("extraCapabilities"))}
    own = _list(spec.get("capabilities"))
    if own:
        return frozenset({str(c).strip() for c in own} | extra)
    sc_name = str(spec.get("serverConfig") or "")
    sc = server_configs.get((ns, sc_name))
    pod = merge_seldon_pod_specs(
        _map(_map(_map(sc).get("spec")).get("podSpec")) if sc else {},
        _map(spec.get("podSpec")),
    )
    value: str | None = None
    for c in _list(pod.get("containers")):
        for env in _list(_map(c).get("env")):
            if _map(env).get("name") == SELDON_CAPABILITIES_ENV:
                value = str(_map(env).get("value") or "")
    if value is not None:
        return frozenset({v.strip() for v in value.split(",") if v.strip()} | extra)
    if sc is None and sc_name in SELDON_DEFAULT_CAPABILITIES:
        return SELDON_DEFAULT_CAPABILITIES[sc_name] | extra
    return None


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def _sorted_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _sorted_json(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [_sorted_json(v) for v in value]
    if isinstance(value, Decimal):
        return str(value)
    return value


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _mermaid_label(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("|", "#124;") + '"'


def render_markdown(report: Report) -> str:
    """`placement.md`: a summary, a table workload -> pools -> findings, the findings with their
    fixes, the pools, and a Mermaid `flowchart LR` of workload --> pool. Same report, same text."""
    counts = {s: sum(1 for f in report.findings if f.severity == s) for s in SEVERITIES}
    lines = [
        "# Placement check",
        "",
        f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info. "
        f"ExtendedResourceToleration: {'on' if report.extended_resource_toleration else 'off'}.",
        "",
        "## Workloads",
        "",
        "| Workload | GPUs | Scales to zero | Wired to | Can land on | Findings |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for w in report.workloads:
        codes = sorted({f.code for f in report.findings_for(w.resource)})
        lines.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    w.resource,
                    str(w.gpus),
                    "yes" if w.scales_to_zero else "no",
                    ", ".join(w.wired) or "-",
                    ", ".join(w.pools) or "-",
                    ", ".join(codes) or "-",
                )
            )
            + " |"
        )
    lines += ["", "## Findings", ""]
    if report.findings:
        lines += [
            "| Severity | Code | Resource | Message | Fix |",
            "| --- | --- | --- | --- | --- |",
        ]
        lines += [
            "| "
            + " | ".join(_cell(x) for x in (f.severity, f.code, f.resource, f.message, f.fix))
            + " |"
            for f in report.findings
        ]
    else:
        lines.append("None.")
    lines += [
        "",
        "## Pools",
        "",
        "| Pool | Provider | GPUs per node | Nodes | Labels | Taints |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for p in report.pools:
        gpus = "unknown" if p.gpus_per_node is None else str(p.gpus_per_node)
        if p.accelerator and p.gpu:
            gpus += f" ({p.accelerator})"
        nodes = "-" if p.min_nodes is None else f"{p.min_nodes}..{p.max_nodes}"
        labels = ", ".join(f"{k}={v}" for k, v in sorted(p.labels.items()))
        lines.append(
            "| "
            + " | ".join(
                _cell(x)
                for x in (
                    p.name,
                    p.provider,
                    gpus,
                    nodes,
                    labels or "-",
                    ", ".join(map(str, p.taints)) or "-",
                )
            )
            + " |"
        )
    lines += ["", "## Diagram", "", "```mermaid", "flowchart LR"]
    pool_ids = {p.name: f"p{i}" for i, p in enumerate(report.pools)}
    for i, w in enumerate(report.workloads):
        lines.append(f"  w{i}[{_mermaid_label(w.resource)}]")
    for p in report.pools:
        lines.append(f"  {pool_ids[p.name]}[({_mermaid_label(p.name)})]")
    for i, w in enumerate(report.workloads):
        for name in w.pools:
            if w.wired and name not in w.wired:
                lines.append(f"  w{i} -. not wired .-> {pool_ids[name]}")
            else:
                lines.append(f"  w{i} --> {pool_ids[name]}")
        for name in w.wired:
            if name not in w.pools and name in pool_ids:
                lines.append(f"  w{i} -- wired, cannot land --x {pool_ids[name]}")
    lines += ["```", ""]
    return "\n".join(lines)
