"""What the placement check returns: findings, the pools and workloads it read, the report."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import NoneType
from typing import Any

from ..model.nodes.daemonsets import DaemonOverhead
from ..model.nodes.shapes import NodeShape, Resources, format_resource
from ..model.scheduling import (
    NodeSelectorTerm,
    Placement,
    Taint,
)
from .contract import (
    SEVERITIES,
)

# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


def _positive(term: NodeSelectorTerm) -> bool:
    return bool(term.match_fields) or any(
        r.operator in ("In", "Exists", "Gt", "Lt") for r in term.match_expressions or ()
    )


def asks_for(placement: Placement, labels: Mapping[str, str], node_name: str | None) -> bool:
    """The pod asks for this node by label (taints and GPUs aside): its nodeSelector matches,
    and a required node affinity term matches; at least one of them asks for something (a
    nodeSelector, or a term with In / Exists / Gt / Lt: a term of only NotIn / DoesNotExist
    avoids nodes rather than choosing them)."""
    if any(labels.get(k) != v for k, v in (placement.node_selector or {}).items()):
        return False
    req = placement.node_affinity.required if placement.node_affinity else None
    if req is None:
        return bool(placement.node_selector)
    return any(
        t.matches(labels, node_name) and (bool(placement.node_selector) or _positive(t))
        for t in req
    )


@dataclass(frozen=True)
class Finding:
    """One problem: a stable `code` (`registry.RULES`), its severity, the resource it is
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
    """One node (or the node template of a cloud pool): its effective labels and taints, and its
    GPU count when the node says it (existing nodes; None: the pool's `gpus_per_node`)."""

    name: str | None
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    gpus: int | None = None
    shape: NodeShape | None = None
    """What the node holds allocatable (CPU, memory, ephemeral storage, pods), when known."""
    daemons: DaemonOverhead = field(default_factory=DaemonOverhead)
    """The DaemonSet pods the node runs (the provider's and the graph's) and what they hold."""
    daemon_kind: str = "none"
    """Which of the provider's own DaemonSets it runs (`model.nodes.daemonsets.system_daemons`)."""

    dra_devices: tuple[Mapping[str, Any], ...] | None = None
    """The devices NVIDIA's DRA driver publishes for it (ResourceSlice devices), when the node is
    set up for DRA (`readers.dra.is_dra_node`); None: it is not."""

    gpu_driver: str | None = None
    """Who installs the NVIDIA GPU driver on a GKE GPU node: `gke` (GKE's automatic install,
    `DEFAULT` / `LATEST`: such nodes carry `cloud.google.com/gke-gpu-driver-version`), else its OS
    image (`cos`, `ubuntu`, `other`), which a GPU driver installer DaemonSet for that image must
    serve; None: not a GKE GPU node."""

    gpu_memory_gib: float | None = None
    """Memory of one of its GPUs, where the pool's nodes differ (a Karpenter NodePool's instance
    types, a ComputeClass's priorities, Autopilot's accelerators); None: the pool's."""
    origin: str | None = None
    """What the autoscaler makes this node from, as a message names it (`instance type
    g6.xlarge`, `priority 2 (g2-standard-8)`); None: the pool's one kind of node."""

    @functools.cached_property
    def room(self) -> Resources | None:
        """What the node leaves the pods that are not DaemonSets: its allocatable less what its
        DaemonSets hold (None: its shape is unknown); made once per node, every pod asks."""
        if self.shape is None:
            return None
        return self.shape.allocatable - self.daemons.total


@dataclass(frozen=True)
class SharedGpus:
    """A pool whose `nvidia.com/gpu` are shares of physical GPUs, and who shares them."""

    strategy: str  # "time-sharing" | "mps" (GKE) | "time-slicing" | "mps" (device plugin)
    by: str  # "GKE" | "the NVIDIA device plugin"
    refuses_more_than_one: bool  # a container asking more than 1 fails at admission
    physical_gpus: int | None = None  # per node (GKE MPS allows more than 1 on 1-GPU nodes)

    def describe(self) -> str:
        return f"{self.by} {self.strategy}"


@dataclass(frozen=True)
class PoolFacts:
    """A node pool as the check sees it (effective labels and taints include the cloud's own)."""

    name: str
    provider: str  # "gke" | "eks" | "aks" | "existing"
    resources: tuple[str, ...]
    nodes: tuple[NodeTemplate, ...]
    gpus_per_node: int | None  # None: unknown
    gpu: bool
    accelerator: str | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    spot: bool = False
    builtin_device_plugin: bool = False
    gpu_memory_gib: float | None = None  # memory of one GPU; None: unknown
    node_group: str | None = None  # EKS: nodeGroupName (its ASG is eks-<name>-<id>)
    keys: tuple[str, ...] = ()  # `type::name` of its resources (what dependsOn names)
    shared_gpus: SharedGpus | None = None
    shape_note: str | None = None  # why some node's shape is unknown (fit not judged there)

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

    @functools.cached_property
    def label_values(self) -> dict[str, frozenset[str]]:
        """Every value each label key has on some node of the pool."""
        found: dict[str, set[str]] = {}
        for n in self.nodes:
            for k, v in n.labels.items():
                found.setdefault(k, set()).add(v)
        return {k: frozenset(v) for k, v in found.items()}

    def may_match(self, placement: Placement) -> bool:
        """False when the pod's nodeSelector names a label value no node of the pool has (then
        no node matches: a quick answer before each node is read)."""
        values = self.label_values
        return all(v in values.get(k, ()) for k, v in (placement.node_selector or {}).items())

    def admits(self, placement: Placement) -> bool:
        """The scheduler's label and taint filters let the pod onto a node of the pool."""
        return self.may_match(placement) and any(
            placement.admits(n.labels, n.taints, n.name) for n in self.nodes
        )

    def fits(self, gpus: int) -> bool:
        """A node of the pool has `gpus` GPUs to give (unknown counts are given the benefit)."""
        return any(self.node_fits(n, gpus) for n in self.nodes)

    def node_fits(self, node: NodeTemplate, gpus: int) -> bool:
        """This node has `gpus` GPUs to give (its own count, else the pool's; unknown: yes)."""
        count = node.gpus if node.gpus is not None else self.gpus_per_node
        return gpus == 0 or count is None or count >= gpus

    def lands(self, placement: Placement, gpus: int) -> bool:
        """The pod can land on a node of the pool: one node both lets it in (labels, taints) and
        has the GPUs it asks for. The scheduler checks both on the same node: in a pool whose
        nodes have different GPU counts, the pool's smallest count does not decide."""
        return self.may_match(placement) and any(
            placement.admits(n.labels, n.taints, n.name) and self.node_fits(n, gpus)
            for n in self.nodes
        )

    def most_gpus_admitting(self, placement: Placement) -> int | None:
        """The largest GPU count among the nodes whose labels and taints let the pod in (None:
        none does, or a count is unknown): what a pod that gets in can ask for at most."""
        counts = [
            n.gpus if n.gpus is not None else self.gpus_per_node
            for n in self.nodes
            if placement.admits(n.labels, n.taints, n.name)
        ]
        if not counts or any(c is None for c in counts):
            return None
        return max(c for c in counts if c is not None)

    def selected_by(self, placement: Placement) -> bool:
        """The pod's nodeSelector / required affinity picks a node of this pool by its labels
        (taints and GPUs aside). A pod that selects nothing selects no pool."""
        return self.may_match(placement) and any(
            asks_for(placement, n.labels, n.name) for n in self.nodes
        )

    def why_not(self, placement: Placement, gpus: int = 0) -> list[str]:
        """What keeps the pod off this pool: labels, untolerated taints, the GPU count. Reads the
        first node whose labels the pod selects (else the first node)."""
        labels_only = Placement(placement.node_selector, (), placement.node_affinity)
        node = next(
            (n for n in self.nodes if labels_only.admits(n.labels, (), n.name)), self.nodes[0]
        )
        reasons = placement.why_not(node.labels, node.taints, node.name)
        if not self.node_fits(node, gpus):
            count = node.gpus if node.gpus is not None else self.gpus_per_node
            reasons.append(f"its nodes have {count} GPU(s), the pod requests {gpus}")
        return reasons

    def to_json(self) -> dict[str, Any]:
        return {
            "accelerator": self.accelerator,
            "builtinDevicePlugin": self.builtin_device_plugin,
            "gpu": self.gpu,
            "gpuMemoryGib": self.gpu_memory_gib,
            "gpusPerNode": self.gpus_per_node,
            "labels": dict(sorted(self.labels.items())),
            "maxNodes": self.max_nodes,
            "minNodes": self.min_nodes,
            "name": self.name,
            "nodes": sorted(n.name for n in self.nodes if n.name),
            "provider": self.provider,
            "resources": list(self.resources),
            "sharedGpus": self.shared_gpus.describe() if self.shared_gpus else None,
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
    max_replicas: int | None = None  # None: unbounded or unknown
    model_size_gb: float | None = None  # weights, when the workload states them
    requests: Resources | None = None  # what the pod asks a node for (None: not readable)
    unfit: tuple[str, ...] = ()  # pools it lands on by placement but whose nodes cannot hold it
    claimed_gpus: int = 0  # whole GPUs its DRA claims ask for (gpu.nvidia.com), beside `gpus`

    @property
    def gpu_devices(self) -> int:
        """The GPUs its containers use: `nvidia.com/gpu`, or whole GPUs taken by claim."""
        return self.gpus or self.claimed_gpus

    def to_json(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "daemonSet": self.daemonset,
            "deploymentMode": self.deployment_mode,
            "gpus": self.gpus,
            "kind": self.kind,
            "maxReplicas": self.max_replicas,
            "modelSizeGb": self.model_size_gb,
            "name": self.name,
            "namespace": self.namespace,
            "placement": _sorted_json(self.placement),
            "pools": list(self.pools),
            "resource": self.resource,
            "scalesToZero": self.scales_to_zero,
            "requests": {k: format_resource(k, v) for k, v in self.requests.items()}
            if self.requests is not None
            else None,
            "type": self.type,
            "unfitPools": list(self.unfit),
            "wired": list(self.wired),
            **({"claimedGpus": self.claimed_gpus} if self.claimed_gpus else {}),
        }


@dataclass(frozen=True)
class Report:
    pools: list[PoolFacts]
    workloads: list[WorkloadFacts]
    findings: list[Finding]
    extended_resource_toleration: bool
    capacity: list[Any] = field(default_factory=list)
    """The capacity proof's cases (`capacity.model.CapacityCase`), for the judges; not in JSON."""
    not_judged: tuple[str, ...] = ()
    """The pod templates (`WorkloadFacts.resource`) some rule could not judge (GI022, GI059...)."""

    @property
    def judged_clean(self) -> list[WorkloadFacts]:
        """The pod templates every rule judged, with no error or warning of their own."""
        flagged = {f.resource for f in self.findings if f.severity in ("error", "warning")}
        skipped = set(self.not_judged)
        return [w for w in self.workloads if w.resource not in flagged | skipped]

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
                    "judgedClean": len(self.judged_clean),
                    "notJudged": len(self.not_judged),
                    "warnings": counts["warning"],
                },
                "notJudged": list(self.not_judged),
                "workloads": [w.to_json() for w in self.workloads],
            }
        )


def _sorted_json(value: Any) -> Any:
    # Plain dicts, lists and scalars first: an ABC check (`Mapping`) on each of a large report's
    # 40 000 values cost more than the sorting.
    if isinstance(value, str | int | float | NoneType):
        return value
    if isinstance(value, list | tuple):
        return [_sorted_json(v) for v in value]
    if isinstance(value, dict | Mapping):
        return {str(k): _sorted_json(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, Decimal):
        return str(value)
    return value
