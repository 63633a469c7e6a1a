"""What a rule of the placement check declares (`registry.RULES` lists them): its code, what it
judges and where, what holds it, and the function that judges. Pure data: the codes' table, the
findings table of docs/findings.md and the policy pack's code lists are all derived from it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

SEVERITIES = ("error", "warning", "info")
NOT_JUDGED_MODES = ("info", "error")
"""How a finding that says a rule could not judge is reported (`check(not_judged=...)`)."""

SCOPES = ("pod", "pool", "graph")
"""`pod`: run once per pod template with its `rules.PodContext`; `pool` and `graph`: run once
after every pod template, with the `rules.CheckContext`, judging each pool (a pool rule) or
what spans the graph (a graph rule: sets of pools, Seldon Models, Knative config, quotas)."""


@dataclass(frozen=True)
class PoolKind:
    """A kind of pool as the check reads it (`registry.kinds.pool_kinds` tells a pool's)."""

    name: str
    title: str
    resources: str  # the resource(s) the check reads it from


POOL_KINDS = (
    PoolKind("gke", "GKE node pool", "`gcp:container/nodePool:NodePool`"),
    PoolKind("compute_class", "GKE ComputeClass", "`cloud.google.com` `ComputeClass`"),
    PoolKind(
        "autopilot",
        "GKE Autopilot",
        "`gpu-inference:index:GkeAutopilotGpuPool`, or `gcp:container/cluster:Cluster` with "
        "`enableAutopilot: true` (when the graph has no GkeAutopilotGpuPool)",
    ),
    PoolKind("eks", "EKS managed node group", "`aws:eks/nodeGroup:NodeGroup`"),
    PoolKind(
        "asg",
        "self-managed Auto Scaling group",
        "`aws:autoscaling/group:Group` not tagged `eks:nodegroup-name`",
    ),
    PoolKind("karpenter", "Karpenter NodePool", "`karpenter.sh` `NodePool` of an `EC2NodeClass`"),
    PoolKind(
        "auto_mode",
        "EKS Auto Mode NodePool",
        "`karpenter.sh` `NodePool` of an `eks.amazonaws.com` `NodeClass`",
    ),
    PoolKind("aks", "AKS agent pool", "`azure-native:containerservice:AgentPool`"),
    PoolKind(
        "nap",
        "AKS node auto-provisioning NodePool",
        "`karpenter.sh` `NodePool` of an `AKSNodeClass`",
    ),
    PoolKind("existing", "existing nodes", "`kubernetes:core/v1:NodePatch`"),
)
POOL_KIND_NAMES = tuple(k.name for k in POOL_KINDS)

WORKLOAD_KINDS = (
    "InferenceService",
    "LLMInferenceService",
    "Server",
    "Model",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "LeaderWorkerSet",
)
"""The kinds whose pods (or, for a Seldon Model, whose placement on a Server) the check judges:
`WorkloadFacts.kind`."""
PODS = tuple(k for k in WORKLOAD_KINDS if k != "Model")
"""Every kind that makes pod templates."""
NO_DAEMONSETS = tuple(k for k in PODS if k != "DaemonSet")

KUBE_SCHEDULER = "kube-scheduler"
KARPENTER = "Karpenter's scheduler"
SOURCE_CHECKED = "source-checked: "
"""A rule's `judge`: the real component the e2e tier holds it against, or the upstream source a
table test holds it to (`checked(source)`)."""

EVERY_KIND: Mapping[str, str] = MappingProxyType(dict.fromkeys(POOL_KIND_NAMES, ""))


def on(*kinds: str, **conditions: str) -> Mapping[str, str]:
    """The pool kinds a rule judges: `kinds` always, `conditions` (kind=condition) only when the
    condition holds."""
    return MappingProxyType({**dict.fromkeys(kinds, ""), **conditions})


def every_kind_but(*kinds: str) -> Mapping[str, str]:
    return MappingProxyType({k: "" for k in POOL_KIND_NAMES if k not in kinds})


@dataclass(frozen=True)
class Rule:
    """One finding code and the rule that reports it."""

    code: str
    slug: str
    severities: tuple[str, ...]
    """The code's own severity first; the others it is reported at in the cases its doc names."""
    scope: str
    doc: str
    """Its row of the findings table: what it reports, for a user."""
    pools: Mapping[str, str] | None
    """Pool kind -> "" (judged) or the condition under which it is judged; a kind not named is
    not judged. None: the pool plays no part (the rule reads the pod spec or the graph)."""
    workloads: tuple[str, ...]
    """The workload kinds it judges (`WORKLOAD_KINDS`; () for a rule on pools or config alone)."""
    judge: str | None
    """What holds it (`KUBE_SCHEDULER`, `KARPENTER`, `checked(source)`); None: nothing does (a
    finding that says what was not judged, or a rule resting on the check's own model)."""
    run: str | None
    """`module:function` under `components.check`, called with the context of its scope
    (several codes may share one function: it runs once); None: reported wherever the input is
    read (GI013)."""
    not_judged: Mapping[str, str] = field(default_factory=dict)
    """Pool kind -> why the rule cannot judge it today (a failure it could miss)."""
    not_applicable: Mapping[str, str] | str = field(default_factory=dict)
    """Pool kind -> why the rule's failure cannot happen there; a string: the reason for every
    kind neither judged nor not judged. Every kind is one of the three (the coverage table of
    docs/findings.md has no silent cell: `cell`)."""
    policy: str | None = None
    """The policy pack's policy that reports it; None: the placement policy of its severity."""
    says_not_judged: bool = False
    """Its finding says a rule could not judge (what is missing, how to give it): an info finding
    that `check(not_judged="error")` (`--not-judged error`, for CI gates) reports as an error."""

    def __post_init__(self) -> None:
        problems = []
        if not re.fullmatch(r"GI\d{3}", self.code):
            problems.append("code is not GI + 3 digits")
        if not self.severities or not set(self.severities) <= set(SEVERITIES):
            problems.append(f"severities {self.severities} not of {SEVERITIES}")
        if self.scope not in SCOPES:
            problems.append(f"scope {self.scope!r} not of {SCOPES}")
        na = () if isinstance(self.not_applicable, str) else set(self.not_applicable)
        if set(na) & (set(self.pools or ()) | set(self.not_judged)):
            problems.append("a pool kind both n/a and judged or not judged")
        kinds = set(self.pools or ()) | set(self.not_judged) | set(na)
        if not kinds <= set(POOL_KIND_NAMES):
            problems.append(f"pool kinds {sorted(kinds - set(POOL_KIND_NAMES))} unknown")
        if set(self.pools or ()) & set(self.not_judged):
            problems.append("a pool kind both judged and not judged")
        if not set(self.workloads) <= set(WORKLOAD_KINDS):
            problems.append(f"workload kinds {set(self.workloads) - set(WORKLOAD_KINDS)} unknown")
        if self.judge not in (None, KUBE_SCHEDULER, KARPENTER) and not (
            self.judge.startswith(SOURCE_CHECKED) and self.judge != SOURCE_CHECKED
        ):
            problems.append(f"judge {self.judge!r}")
        if self.run is not None and not re.fullmatch(r"[a-z_.]+:[a-z_]+", self.run):
            problems.append(f"run {self.run!r} is not module:function")
        if self.says_not_judged and self.severities != ("info", "error"):
            problems.append("a not-judged finding is info, or an error under --not-judged error")
        if problems:
            raise ValueError(f"rule {self.code}: " + "; ".join(problems))

    @property
    def severity(self) -> str:
        """The code's own severity."""
        return self.severities[0]

    def cell(self, kind: str) -> tuple[str, str] | None:
        """(`judged` / `not judged` / `n/a` / `any`, the condition or the reason) of the rule on
        a pool kind; None: the registry says nothing (a silent cell)."""
        if self.pools is None:
            return "any", "the pool plays no part (it reads the pod spec or the graph)"
        if kind in self.pools:
            return "judged", self.pools[kind]
        if kind in self.not_judged:
            return "not judged", self.not_judged[kind]
        rest = self.not_applicable
        if isinstance(rest, str):
            return "n/a", rest
        if kind in rest:
            return "n/a", rest[kind]
        return None


def checked(source: str) -> str:
    """The `judge` of a rule held to an upstream source by a table test."""
    return SOURCE_CHECKED + source


# What the readers give each pool kind today: the kinds the rules that need it judge.

KNATIVE_FEATURES_SOURCE = checked(
    "knative/serving knative-v1.23.0 pkg/apis/config/features.go (model.serving.knative_features)"
)
DEVICE_PLUGIN_SOURCE = checked(
    "NVIDIA/k8s-device-plugin v0.17.1 deployments/helm/nvidia-device-plugin/values.yaml (its "
    "tolerations; its NFD worker's: NVIDIA/k8s-device-plugin#1934)"
)
DEVICE_PLUGIN_POOLS = on(
    "asg",
    "existing",
    eks="its amiType is not a Bottlerocket NVIDIA one",
    gke="its nodes carry gke-no-default-nvidia-gpu-device-plugin=true",
    karpenter="its AMI family is not Bottlerocket",
    aks="gpuProfile.driver is not None",
    nap="its AKSNodeClass gpu.mode is not None",
)
DEVICE_PLUGIN_GAPS = MappingProxyType(
    {
        "compute_class": "GKE runs the device plugin",
        "autopilot": "GKE runs the device plugin",
        "auto_mode": "Auto Mode runs the device plugin",
    }
)
FIT_POOLS = on(
    gke="its machine type in the catalog",
    compute_class="each priority's machine type in the catalog",
    eks="its instance type in the catalog",
    karpenter="its EC2NodeClass in the graph",
    aks="its VM size in the catalog",
    nap="its VM sizes in the catalog",
    existing="nodeAllocatable declared",
)
FIT_GAPS = MappingProxyType(
    {
        "asg": "its reader gives no node shape",
        "autopilot": "Autopilot sizes the node to the pod; its limits are not in the catalog",
        "auto_mode": "Auto Mode's node reservations are not modelled",
    }
)
CAPACITY_POOLS = on(
    gke="its machine type in the catalog",
    eks="its instance type in the catalog",
    aks="its VM size in the catalog",
    existing="nodeAllocatable declared",
)
_SEVERAL_SHAPES = "nodes of several shapes (GI044 when limits.nodes is set; unbounded otherwise)"
CAPACITY_GAPS = MappingProxyType(
    {
        "karpenter": _SEVERAL_SHAPES,
        "nap": _SEVERAL_SHAPES,
        "compute_class": "no max nodes",
        "autopilot": "no max nodes",
        "asg": "no node shape",
        "auto_mode": "no node shape",
    }
)
QUOTA_GAPS = MappingProxyType(
    dict.fromkeys(
        ("compute_class", "autopilot", "asg", "karpenter", "auto_mode", "aks", "nap", "existing"),
        "no quota model",
    )
)
VLLM_SOURCE = checked("vLLM (model.serving.llm: parallelism_issues and its sources)")
SLICED = "the graph's NVIDIA device plugin chart time-slices its GPUs"
DYNAMIC = "not static (no replicas)"

QUOTA_POLICY = "gpu-cloud-quota"
"""The policy pack's policy of the cloud quotas (the placement policies leave its codes to it)."""

KARPENTER_NO_DRA = "Karpenter provisions no pod with DRA claims (GI027)"

GPU_MEMORY_POOLS = on(
    gke="its accelerator's memory (the catalog's GPU records)",
    compute_class="each priority's GPU the pod can land on",
    autopilot="the accelerator the pod selects",
    eks="the least GPU memory of its instance types",
    asg="the least GPU memory of its instance types",
    karpenter="every instance type Karpenter's launch decision lists for the pod",
    auto_mode="every instance type Karpenter's launch decision lists for the pod",
    aks="its VM size's GPU",
    nap="every VM size Karpenter's launch decision lists for the pod",
    existing="its nodes state their GPU memory (nvidia.com/gpu.memory)",
)
"""Where GI019 reads the memory of the GPUs a pod gets; GI059 says when it is unknown."""


def by_autoscaler(gke: str, karpenter: str) -> Mapping[str, str]:
    """Why a cluster-autoscaler rule does not apply: GKE's and Karpenter's pools read no tags,
    existing nodes have no autoscaler."""
    return {
        "gke": gke,
        "compute_class": gke,
        "autopilot": gke,
        "karpenter": karpenter,
        "auto_mode": karpenter,
        "nap": karpenter,
        "existing": "existing nodes have no autoscaler",
    }
