"""The pure half of the Karpenter differential: a graph (an example stack's preview, or a generated
case) and our catalog turned into requests for Karpenter's own scheduler (`karpenter_judge`), and
the check's own answer for every (pod template, NodePool) pair.

The check's answer is what `components.check.scaleup` decides (the same readers, the same model):
whether Karpenter launches a node for the pod from that NodePool alone, from zero, with which
instance types and capacity types; and, for pods the check judges in full (GPU pods, or pools that
admit nothing but GPU instance types), whether the check lets the pod land there with no GI026 /
GI027 for that NodePool. The judge gets the same NodePools (as the graph holds them), the same
pods (the template's placement with the tolerations ExtendedResourceToleration adds on EKS, its
containers with limits copied to absent requests as the API server defaults them, overhead,
resource claims), and instance types built from the same catalog shapes for each node class
(capacity, kubeReserved = capacity - allocatable, labels, offerings: on-demand and spot, reserved
where the EC2NodeClass selects reservations).

Generated cases (`draw_cases`): NodePools with requirements (In, NotIn, Exists, DoesNotExist, Gt,
Lt, Gte, Lte) on GPU count, GPU name, family, category, size, instance type, arch, capacity type
and a key of their own (`example.com/team`: the node gets the value the pod selects),
limits, taints, weights, node classes (volume, AMI family, maxPods, kubeReserved, systemReserved,
evictionHard / evictionSoft, podsPerCore, instanceStorePolicy RAID0, reservations); DaemonSets
(requests, tolerations, selectors) whose overhead Karpenter adds; pods with requests at and around
the allocatable of a catalog instance type, selectors and required / preferred affinity on those
keys, tolerations, DRA claims.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import karpenter_judge as kj
from differential import daemon_specs
from generated_cases import draw_distinct
from hypothesis import strategies as st

from components.check import check
from components.check.graph import read_templates
from components.check.pod import extended_resources
from components.check.read import Findings, Template
from components.check.readers.karpenter import node_class_info, node_overlays
from components.check.scaleup import ScaleUp, karpenter_pod_requests, pending_pod
from components.model.autoscalers.karpenter_launch import (
    InstanceType,
    Launch,
    NodeClassInfo,
    catalog_instance_types,
    choose,
    daemon_overheads,
    launch,
)
from components.model.nodes.catalog import AWS_GPU_INSTANCES
from components.model.nodes.daemonsets import DaemonPod, system_daemons
from components.model.nodes.karpenter_kubelet import KarpenterKubelet
from components.model.nodes.shapes import RESOURCE_NAMES, Resources, karpenter_node_shape
from components.model.scheduling import Placement, extended_resource_tolerations

ZONE = "us-west-2a"
AZURE_ZONE = "eastus2-1"
# The labels of an Azure size the judge takes from the request (the SKU API's numbers, the node
# class's OS SKU, the architecture); it computes the others (`provider_azure.go`).
AZURE_INPUT_LABELS = frozenset(
    {
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "karpenter.azure.com/sku-cpu",
        "karpenter.azure.com/sku-memory",
        "kubernetes.azure.com/sku-cpu",
        "kubernetes.azure.com/sku-memory",
        "karpenter.azure.com/sku-gpu-count",
        "kubernetes.azure.com/os-sku",
    }
)
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
POOL_LABEL = "gpu-inference.dev/pool"


# ---------------------------------------------------------------------------------------------
# Requests for the judge
# ---------------------------------------------------------------------------------------------


def _quantities(res: Resources) -> dict[str, str]:
    out = {}
    for field, name in RESOURCE_NAMES.items():
        value = getattr(res, field)
        out[name] = f"{value}m" if name == "cpu" else str(value)
    return out


def judge_instance_types(
    types: Sequence[InstanceType], provider: str = "aws"
) -> list[dict[str, Any]]:
    """Our catalog's instance types as the judge takes them (one zone; prices only order). On
    Azure (`provider="azure"`) only the labels the SKU API's numbers and the node class give: the
    judge computes the rest from the size's name with Karpenter on Azure's own code."""
    zone = ZONE if provider == "aws" else AZURE_ZONE
    out = []
    for it in types:
        if it.allocatable is None:
            raise ValueError(
                f"{it.name}: allocatable unknown; the judge needs a node class we model"
            )
        reserved = it.capacity - it.allocatable
        offerings = []
        for o in it.offerings:
            price = it.capacity.cpu / 1000 / (3 if o.capacity_type == "spot" else 1)
            if o.capacity_type == "reserved":
                offerings.append(
                    kj.offering(
                        "reserved",
                        ZONE,
                        price=price / 2,
                        reservation_id=o.reservation_id,
                        reservation_capacity=1,
                    )
                )
            else:
                offerings.append(kj.offering(o.capacity_type, zone, price=price))
        out.append(
            kj.instance_type(
                it.name,
                capacity=_quantities(it.capacity),
                kube_reserved={
                    k: v
                    for k, v in _quantities(reserved).items()
                    if k in ("cpu", "memory", "ephemeral-storage")
                },
                labels=dict(it.labels)
                if provider == "aws"
                else {k: v for k, v in it.labels.items() if k in AZURE_INPUT_LABELS},
                offerings=offerings,
            )
        )
    return out


def _defaulted(container: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A container with exactly the template's resources, limits copied to absent requests (the
    API server's defaulting, which the judge does not run)."""
    res = container.get("resources") if isinstance(container.get("resources"), Mapping) else {}
    requests = dict(res.get("requests") or {})
    limits = dict(res.get("limits") or {})
    for k, v in limits.items():
        requests.setdefault(k, v)
    out: dict[str, Any] = {"name": name, "image": "judge"}
    body: dict[str, Any] = {}
    if requests:
        body["requests"] = {str(k): kj.quantity(v) for k, v in requests.items()}
    if limits:
        body["limits"] = {str(k): kj.quantity(v) for k, v in limits.items()}
    if res.get("claims"):
        body["claims"] = list(res["claims"])
    if body:
        out["resources"] = body
    if container.get("restartPolicy"):
        out["restartPolicy"] = container["restartPolicy"]
    return out


def judge_pod(name: str, t: Template, placement: Placement) -> dict[str, Any]:
    spec: dict[str, Any] = dict(placement.to_pod_spec())
    spec["containers"] = [_defaulted(c, f"c{i}") for i, c in enumerate(t.containers or [{}])]
    if t.init_containers:
        spec["initContainers"] = [_defaulted(c, f"i{i}") for i, c in enumerate(t.init_containers)]
    for key in ("overhead", "resourceClaims"):
        if t.fragment.get(key):
            spec[key] = t.fragment[key]
    return kj.pod_from_spec(name, spec)


# ---------------------------------------------------------------------------------------------
# Pairs
# ---------------------------------------------------------------------------------------------


@dataclass
class KarpenterPair:
    """One (pod template, NodePool): the check's answer, and Karpenter's once judged."""

    source: str
    pod: str  # the template's resource id
    node_pool: str
    ours: Launch
    check_lands: bool | None  # the check lets it land with no GI026 / GI027; None: not judged
    judge_pod: str  # the pod's name in the request
    judge: kj.Verdict | None = None
    daemon_bound: bool = False  # the check's answer differs without the DaemonSets' overhead
    kubelet_bound: bool = False  # ... or with the node class's kubelet / instance store defaults

    @property
    def agrees(self) -> bool:
        v = self.judge
        if v is None:
            return False
        same = v.scheduled == self.ours.launches
        if same and v.scheduled:
            same = (v.instance_types, v.capacity_types) == (
                self.ours.instance_types,
                self.ours.capacity_types,
            )
        if self.check_lands is not None:
            same = same and self.check_lands == v.scheduled
        return same

    def describe(self) -> str:
        v = self.judge
        theirs = (
            "not judged"
            if v is None
            else f"launches {list(v.instance_types)} {list(v.capacity_types)}"
            if v.scheduled
            else f"no ({v.error})"
        )
        ours = (
            f"launches {list(self.ours.instance_types)} {list(self.ours.capacity_types)}"
            if self.ours.launches
            else f"no ({self.ours.cause}: {self.ours.reason})"
        )
        return (
            f"{self.source}: {self.pod} on NodePool {self.node_pool}: check {ours}"
            f" (lands: {self.check_lands}); Karpenter {theirs}"
        )


def pairs_from_graph(
    source: str, graph: Sequence[Mapping[str, Any]]
) -> tuple[list[KarpenterPair], dict[str, Any] | None]:
    """Every (pod template, NodePool) pair of the graph with the check's answer, and the judge
    request (one case, each NodePool alone) that asks Karpenter; None when the graph has no
    NodePool or no pod."""
    entries = [dict(e) for e in graph]
    scale = ScaleUp(entries, Findings())
    report = check(entries)
    templates = [t for t in read_templates(entries, True) if not t.daemonset]
    if not scale.karpenter or not templates:
        return [], None
    workloads = {w.resource: w for w in report.workloads}
    pools = {k: p for p in report.pools for k in p.keys}
    provider = judge_provider(scale)
    # ExtendedResourceToleration where the check assumes it: on EKS, not on AKS.
    ert = provider == "aws"
    overlays = node_overlays(entries)
    pairs: list[KarpenterPair] = []
    pods = []
    for i, t in enumerate(templates):
        w = workloads.get(t.resource)
        if w is None:
            continue  # GI013: not valid Kubernetes
        placement = Placement.from_pod_spec(t.fragment)
        if ert:
            placement = placement.with_tolerations(
                extended_resource_tolerations(extended_resources(t))
            )
        name = f"p{i}"
        pods.append(judge_pod(name, t, placement))
        pod = pending_pod(placement, karpenter_pod_requests(t), scale.dra_use(t).any)
        for key, kp in scale.karpenter.items():
            ours = launch(pod, kp.spec, kp.instance_types, None, kp.overheads)
            bare = launch(pod, kp.spec, kp.instance_types)
            plain_types = defaults_of(kp, overlays, key)
            plain = launch(
                pod, kp.spec, plain_types, None, daemon_overheads(kp.spec, plain_types, kp.daemons)
            )
            facts = pools[key]
            judged = w.gpus > 0 or not kp.admits_cpu or scale.dra_use(t).any
            named = [
                f
                for f in report.findings
                if f.resource == w.resource
                and f.code in ("GI026", "GI027")
                and f"NodePool {kp.spec.name}" in f.message
            ]
            # A pool whose nodes cannot hold the pod is said by GI021 (fit), not GI026.
            lands = facts.name in w.pools and facts.name not in w.unfit and not named
            pairs.append(
                KarpenterPair(
                    source,
                    t.resource,
                    kp.spec.name,
                    ours,
                    lands if judged else None,
                    name,
                    daemon_bound=_decision(bare) != _decision(ours),
                    kubelet_bound=_decision(plain) != _decision(ours),
                )
            )
    node_pools = [
        {"metadata": {"name": kp.spec.name}, "spec": _spec_of(entries, key)}
        for key, kp in scale.karpenter.items()
    ]
    daemons = judged_daemons(scale)
    by_class = {
        kp.node_class.name: judge_instance_types(kp.instance_types, provider)
        for kp in scale.karpenter.values()
    }
    default = next(iter(by_class.values()))
    request = kj.request(
        instance_types=default,
        node_class_instance_types=by_class,
        node_pools=node_pools,
        pods=pods,
        daemon_sets=[kj.daemon_set(n, spec) for n, spec in daemon_specs(entries, daemons)],
        per_node_pool=True,
        name=source,
    )
    return pairs, request


@dataclass
class KarpenterChoice:
    """One pod against all the NodePools of its graph: which one Karpenter picks (by weight, then
    name, the least relaxed pod first), with which instance and capacity types."""

    source: str
    pod: str
    ours: Launch | None
    judge_pod: str
    judge: kj.Verdict | None = None

    @property
    def agrees(self) -> bool:
        v = self.judge
        if v is None or v.scheduled != (self.ours is not None):
            return False
        if self.ours is None:
            return True
        return (v.node_pool, v.instance_types, v.capacity_types) == (
            self.ours.node_pool,
            self.ours.instance_types,
            self.ours.capacity_types,
        )

    def describe(self) -> str:
        v = self.judge
        ours = (
            f"NodePool {self.ours.node_pool} {list(self.ours.instance_types)}"
            if self.ours
            else "none"
        )
        theirs = (
            "not judged"
            if v is None
            else f"NodePool {v.node_pool} {list(v.instance_types)}"
            if v.scheduled
            else f"none ({v.error})"
        )
        return f"{self.source}: {self.pod} with every NodePool: check {ours}; Karpenter {theirs}"


def choices_from_graph(
    source: str, graph: Sequence[Mapping[str, Any]]
) -> tuple[list[KarpenterChoice], dict[str, Any] | None]:
    """For a graph with two NodePools or more: each pod against all of them at once, the check's
    `karpenter_launch.choose` and the judge request (all NodePools together)."""
    pairs, request = pairs_from_graph(source, graph)
    if request is None or len(request["nodePools"]) < 2:
        return [], None
    entries = [dict(e) for e in graph]
    scale = ScaleUp(entries, Findings())
    ert = judge_provider(scale) == "aws"
    templates = {t.resource: t for t in read_templates(entries, True)}
    choices = []
    for judged in dict.fromkeys((p.pod, p.judge_pod) for p in pairs):
        t = templates[judged[0]]
        placement = Placement.from_pod_spec(t.fragment)
        if ert:
            placement = placement.with_tolerations(
                extended_resource_tolerations(extended_resources(t))
            )
        pod = pending_pod(placement, karpenter_pod_requests(t), scale.dra_use(t).any)
        pools = [(kp.spec, kp.instance_types) for kp in scale.karpenter.values()]
        choices.append(
            KarpenterChoice(source, judged[0], choose(pod, pools, judged_daemons(scale)), judged[1])
        )
    return choices, {**request, "perNodePool": False, "name": f"{source} (every NodePool)"}


def judge_provider(scale: ScaleUp) -> str:
    """Which build of the judge takes the graph's NodePools: `azure` for AKS node
    auto-provisioning (AKSNodeClass), else `aws`."""
    names = {kp.spec.provider.name for kp in scale.karpenter.values()}
    if len(names) > 1:
        raise ValueError(f"NodePools of more than one provider in one graph: {sorted(names)}")
    return "azure" if names == {"azure"} else "aws"


def request_provider(request: Mapping[str, Any]) -> str:
    """The judge build a request is for, from its NodePools' node classes."""
    groups = {
        p["spec"]["template"]["spec"]["nodeClassRef"].get("group") for p in request["nodePools"]
    }
    return "azure" if groups == {"karpenter.azure.com"} else "aws"


def judged_daemons(scale: ScaleUp) -> list[DaemonPod]:
    """The DaemonSet pods the check counts for the graph's NodePools, once each, in order (the
    judge gets them all: a NodePool whose node class the judge cannot take is not judged)."""
    seen: dict[str, DaemonPod] = {}
    for kp in scale.karpenter.values():
        for d in kp.daemons:
            seen.setdefault(d.name, d)
    return list(seen.values())


def attach_choices(choices: Sequence[KarpenterChoice], answer: kj.CaseAnswer) -> None:
    for c in choices:
        c.judge = answer.verdict(c.judge_pod)


def _spec_of(entries: Sequence[Mapping[str, Any]], key: str) -> dict[str, Any]:
    for e in entries:
        if f"{e['type']}::{e['name']}" == key:
            return dict(e["inputs"]["spec"])
    raise KeyError(key)


def attach(pairs: Sequence[KarpenterPair], answer: kj.CaseAnswer) -> None:
    """Give each pair Karpenter's verdict from the judge's answer to its case."""
    for p in pairs:
        p.judge = answer.verdict(p.judge_pod, p.node_pool)


def _decision(result: Launch) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    return (result.launches, result.instance_types, result.capacity_types)


def defaults_of(kp: Any, overlays: Any, key: str) -> list[InstanceType]:
    """The NodePool's instance types as they would be with its node class's kubelet settings and
    instance-store policy left at their defaults."""
    nc = kp.node_class
    if getattr(nc, "kubelet", None) is None or nc.kubelet.is_default:  # AKSNodeClass: none
        return list(kp.instance_types)
    return catalog_instance_types(replace(nc, kubelet=KarpenterKubelet()), overlays, kp.spec.name)


def summary(label: str, pairs: Sequence[KarpenterPair]) -> str:
    agreeing = sum(p.agrees for p in pairs)
    launched = sum(bool(p.judge and p.judge.scheduled) for p in pairs)
    daemons = [p for p in pairs if p.daemon_bound]
    kubelet = [p for p in pairs if p.kubelet_bound]
    return (
        f"{label}: {len(pairs)} (pod, NodePool) pairs compared, {agreeing} agreeing "
        f"({launched} launched, {len(pairs) - launched} not); decided by DaemonSet overhead: "
        f"{len(daemons)} ({sum(p.agrees for p in daemons)} agreeing), by node-class kubelet "
        f"settings / instance store: {len(kubelet)} ({sum(p.agrees for p in kubelet)} agreeing)"
    )


# ---------------------------------------------------------------------------------------------
# Generated cases
# ---------------------------------------------------------------------------------------------

GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
FAMILY = "karpenter.k8s.aws/instance-family"
CATEGORY = "karpenter.k8s.aws/instance-category"
SIZE = "karpenter.k8s.aws/instance-size"
TYPE = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
CAPACITY = "karpenter.sh/capacity-type"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
TYPES = sorted(AWS_GPU_INSTANCES)
_VALUES: dict[str, tuple[str, ...]] = {
    GPU_COUNT: ("0", "1", "2", "4", "8", "16"),
    GPU_NAME: ("l4", "a10g", "t4", "t4g", "h100", "h200", "a100", "l40s", "v100", "b200"),
    FAMILY: ("g6", "g5", "g4dn", "g6e", "g5g", "p5", "p4d", "p3", "p5en", "m5"),
    CATEGORY: ("g", "p", "m"),
    SIZE: ("xlarge", "2xlarge", "4xlarge", "12xlarge", "48xlarge", "metal"),
    TYPE: (
        "g6.xlarge",
        "g6.12xlarge",
        "g5.xlarge",
        "g5.48xlarge",
        "p5.48xlarge",
        "p5.4xlarge",
        "g4dn.metal",
        "g5g.xlarge",
    ),
    ARCH: ("amd64", "arm64"),
    CAPACITY: ("on-demand", "spot", "reserved"),
    "example.com/team": ("a", "b", "c"),
}
_NUMERIC = (GPU_COUNT,)
_KEYS = tuple(_VALUES)


def _requirement(rnd: random.Random, keys: Sequence[str] = _KEYS) -> dict[str, Any]:
    key = rnd.choice(keys)
    ops = (
        ("In", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Gt", "Lt", "Gte", "Lte")
        if key in _NUMERIC
        else ("In", "In", "In", "NotIn", "Exists")
    )
    op = rnd.choice(ops)
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    if op in ("Gt", "Lt", "Gte", "Lte"):
        return {
            "key": key,
            "operator": op,
            "values": [str(rnd.choice((0, 0, 1, 1, 2, 3, 4, 7, 8, 9)))],
        }
    values = rnd.sample(_VALUES[key], min(len(_VALUES[key]), rnd.choice((1, 1, 2, 3))))
    return {"key": key, "operator": op, "values": values}


def _node_class(rnd: random.Random, name: str) -> dict[str, Any]:
    family = rnd.choice(("al2023", "al2023", "bottlerocket"))
    spec: dict[str, Any] = {
        "role": "KarpenterNodeRole",
        "amiSelectorTerms": [{"alias": f"{family}@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
    }
    if rnd.random() < 0.6:
        device = "/dev/xvdb" if family == "bottlerocket" else "/dev/xvda"
        volume = rnd.choice((20, 50, 100, 200))
        spec["blockDeviceMappings"] = [{"deviceName": device, "ebs": {"volumeSize": f"{volume}Gi"}}]
    kubelet: dict[str, Any] = {}
    if rnd.random() < 0.2:
        kubelet["maxPods"] = rnd.choice((3, 8, 29, 110))
    if rnd.random() < 0.2:
        kubelet["kubeReserved"] = dict(
            rnd.sample(
                [
                    ("cpu", rnd.choice(("100m", "1", "2500m"))),
                    ("memory", rnd.choice(("1Gi", "4Gi"))),
                    ("ephemeral-storage", rnd.choice(("2Gi", "10Gi"))),
                ],
                rnd.randint(1, 3),
            )
        )
    if rnd.random() < 0.15:
        kubelet["systemReserved"] = {"cpu": rnd.choice(("200m", "1")), "memory": "512Mi"}
    if rnd.random() < 0.15:
        kubelet["evictionHard"] = dict(
            rnd.sample(
                [
                    ("memory.available", rnd.choice(("5%", "500Mi", "100%"))),
                    ("nodefs.available", rnd.choice(("5%", "15%", "2Gi"))),
                ],
                rnd.randint(1, 2),
            )
        )
    if rnd.random() < 0.1:  # a warning threshold: changes no allocatable (types.go)
        kubelet["evictionSoft"] = {"memory.available": "1Gi"}
    if rnd.random() < 0.1 and family == "al2023":  # PodsPerCoreEnabled on AL2023 only
        kubelet["podsPerCore"] = rnd.choice((1, 2, 10))
    if kubelet:
        spec["kubelet"] = kubelet
    if rnd.random() < 0.2:
        spec["instanceStorePolicy"] = "RAID0"
    if rnd.random() < 0.3:
        spec["capacityReservationSelectorTerms"] = [{"id": "cr-0123456789abcdef0"}]
    return {"type": NODECLASS, "name": name, "inputs": {"metadata": {"name": name}, "spec": spec}}


# NodePools shaped like ours (GPU count and manufacturer), then random requirements.
_OURS = (
    [],
    [{"key": GPU_COUNT, "operator": "Gt", "values": ["0"]}],
    [
        {
            "key": "karpenter.k8s.aws/instance-gpu-manufacturer",
            "operator": "In",
            "values": ["nvidia"],
        },
        {"key": GPU_COUNT, "operator": "Gt", "values": ["0"]},
    ],
)
_TAINTS = (
    [GPU_TAINT],
    [GPU_TAINT],
    [GPU_TAINT],
    [],
    [GPU_TAINT, {"key": "dedicated", "value": "llm", "effect": "NoSchedule"}],
    [{"key": "example.com/soft", "effect": "PreferNoSchedule"}],
)


def _node_pool(rnd: random.Random, name: str, node_class: str) -> dict[str, Any]:
    reqs = [*rnd.choice(_OURS)]
    reqs += [_requirement(rnd) for _ in range(rnd.choice((0, 1, 1, 1, 2, 2, 3)))]
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {POOL_LABEL: name}},
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.k8s.aws",
                    "kind": "EC2NodeClass",
                    "name": node_class,
                },
                "requirements": reqs,
                "taints": rnd.choice(_TAINTS),
            },
        }
    }
    limits = {}
    if rnd.random() < 0.3:
        limits["nvidia.com/gpu"] = rnd.choice(("0", "1", "2", "4", "8", "16", "32"))
    if rnd.random() < 0.15:
        limits["cpu"] = rnd.choice(("4", "8", "48", "96", "192"))
    if rnd.random() < 0.15:
        limits["memory"] = rnd.choice(("16Gi", "64Gi", "256Gi", "2000Gi"))
    if rnd.random() < 0.1:
        limits["nodes"] = rnd.choice(("0", "1", "3"))
    if limits:
        spec["limits"] = limits
    if rnd.random() < 0.25:
        spec["weight"] = rnd.randint(1, 100)
    return {"type": NODEPOOL, "name": name, "inputs": {"metadata": {"name": name}, "spec": spec}}


def _boundary(instance_type: str, node_class: Mapping[str, Any]) -> Resources:
    """The allocatable Karpenter computes for this instance type under this node class."""
    nc = node_class_info(node_class["name"], node_class["inputs"]["spec"], False)
    shape, _ = nc.shape(instance_type)
    if shape is None:
        return karpenter_node_shape(instance_type).allocatable
    return shape.allocatable


_TOLERATIONS = (
    [],
    [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    [
        {"key": "nvidia.com/gpu", "operator": "Exists"},
        {"key": "dedicated", "operator": "Equal", "value": "llm"},
    ],
    [{"operator": "Exists"}],
)


def _pod(rnd: random.Random, pools: Sequence[str], node_class: Mapping[str, Any]) -> dict[str, Any]:
    """Requests at or one unit around the allocatable of a catalog instance type (one resource at a
    time), selectors and affinity on the instance keys, tolerations, now and then a DRA claim."""
    edge = _boundary(rnd.choice(TYPES), node_class)
    if rnd.random() < 0.5:  # at what the node leaves beside EKS's own DaemonSets
        edge = edge - sum((d.requests for d in system_daemons("eks")), Resources())
    nudge = rnd.choice((-1, 0, 1))
    at_edge = rnd.choice(("cpu", "memory", "ephemeral-storage", None, None, None))
    requests: dict[str, Any] = {
        "cpu": f"{edge.cpu + nudge * 10}m"
        if at_edge == "cpu"
        else rnd.choice(("100m", "1", "4", "8")),
        "memory": str(edge.memory + nudge * 2**20)
        if at_edge == "memory"
        else rnd.choice(("1Gi", "8Gi", "30Gi", "180Gi")),
    }
    if at_edge == "ephemeral-storage":
        requests["ephemeral-storage"] = str(edge.ephemeral_storage + nudge * 2**20)
    container: dict[str, Any] = {"name": "main", "resources": {"requests": requests}}
    gpus = rnd.choice((0, 1, 1, 1, 1, 2, 4, 8))
    if gpus:
        if rnd.random() < 0.5:  # else the limit alone: the API server copies it to the request
            requests["nvidia.com/gpu"] = gpus
        container["resources"]["limits"] = {"nvidia.com/gpu": gpus}
    spec: dict[str, Any] = {"containers": [container]}
    selector: dict[str, str] = {}
    if rnd.random() < 0.75:
        selector[POOL_LABEL] = rnd.choice((*pools, *pools, "elsewhere"))
    if rnd.random() < 0.3:
        key = rnd.choice((GPU_COUNT, GPU_NAME, CAPACITY, TYPE, "example.com/team"))
        selector[key] = rnd.choice(_VALUES[key])
    if rnd.random() < 0.05:  # the one zone the judge's offerings are in
        selector["topology.kubernetes.io/zone"] = ZONE
    if selector:
        spec["nodeSelector"] = selector
    affinity: dict[str, Any] = {}
    if rnd.random() < 0.3:
        terms = [
            [_requirement(rnd) for _ in range(rnd.randint(1, 2))] for _ in range(rnd.randint(1, 2))
        ]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
        }
    if rnd.random() < 0.2:
        weights = rnd.sample(range(1, 101), rnd.randint(1, 2))
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": {"matchExpressions": [_requirement(rnd)]}} for w in weights
        ]
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    tolerations = rnd.choice(_TOLERATIONS)
    if tolerations:
        spec["tolerations"] = tolerations
    if rnd.random() < 0.04:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    return spec


def daemonset(
    rnd: random.Random,
    index: int,
    pools: Sequence[str],
    *,
    cpus: Sequence[str],
    memories: Sequence[str],
    tolerations: Sequence[list[dict[str, Any]]],
    selectors: Sequence[str],
    values: Mapping[str, Sequence[str]],
) -> dict[str, Any]:
    """A DaemonSet: requests from nothing to a few CPUs, one of `tolerations`, now and then a
    nodeSelector on a NodePool's label or one of `selectors` (a value from `values`)."""
    requests = {}
    if rnd.random() < 0.8:
        requests["cpu"] = rnd.choice(cpus)
    if rnd.random() < 0.6:
        requests["memory"] = rnd.choice(memories)
    container: dict[str, Any] = {"name": "d", "image": "judge"}
    if requests:
        container["resources"] = {"requests": requests}
    spec: dict[str, Any] = {"containers": [container]}
    chosen = rnd.choice(tolerations)
    if chosen:
        spec["tolerations"] = chosen
    if rnd.random() < 0.25:
        key = rnd.choice((POOL_LABEL, *selectors))
        value = rnd.choice(pools) if key == POOL_LABEL else rnd.choice(values[key])
        spec["nodeSelector"] = {key: value}
    return {
        "type": DAEMONSET,
        "name": f"ds{index}",
        "inputs": {
            "metadata": {"name": f"ds{index}", "namespace": "kube-system"},
            "spec": {"template": {"spec": spec}},
        },
    }


def _daemonset(rnd: random.Random, index: int, pools: Sequence[str]) -> dict[str, Any]:
    return daemonset(
        rnd,
        index,
        pools,
        cpus=("10m", "100m", "500m", "2", "4"),
        memories=("64Mi", "512Mi", "2Gi", "16Gi"),
        tolerations=_TOLERATIONS,
        selectors=(FAMILY, GPU_COUNT, "example.com/team"),
        values=_VALUES,
    )


def graph(
    rnd: random.Random,
    node_class: Callable[[random.Random, str], dict[str, Any]],
    node_pool: Callable[[random.Random, str, str], dict[str, Any]],
    pod: Callable[[random.Random, Sequence[str], Mapping[str, Any]], dict[str, Any]],
    daemon: Callable[[random.Random, int, Sequence[str]], dict[str, Any]],
) -> list[dict[str, Any]]:
    """One graph: one or two node classes, one or two NodePools, one to three pods (replicas 1,
    the first node class's), none to two DaemonSets, built by the provider's builders."""
    classes = [node_class(rnd, f"nc{i}") for i in range(rnd.randint(1, 2))]
    pools = [
        node_pool(rnd, f"np{i}", classes[i % len(classes)]["name"])
        for i in range(rnd.randint(1, 2))
    ]
    names = [p["name"] for p in pools]
    pods = [
        {
            "type": DEPLOYMENT,
            "name": f"w{i}",
            "inputs": {
                "metadata": {"name": f"w{i}", "namespace": "apps"},
                "spec": {"replicas": 1, "template": {"spec": pod(rnd, names, classes[0])}},
            },
        }
        for i in range(rnd.randint(1, 3))
    ]
    daemons = [daemon(rnd, i, names) for i in range(rnd.choice((0, 0, 1, 2)))]
    return [*classes, *pools, *daemons, *pods]


@st.composite
def case(draw: Any) -> list[dict[str, Any]]:
    """One graph (`graph`) of EC2NodeClasses, NodePools and pods, drawn from a Random that
    Hypothesis seeds, so that the odds written here are the odds drawn."""
    return graph(draw(st.randoms(use_true_random=True)), _node_class, _node_pool, _pod, _daemonset)


def draw_cases(count: int, seed: int) -> list[list[dict[str, Any]]]:
    """`count` distinct cases, the same ones for the same seed (and Hypothesis version)."""
    return draw_distinct(case(), count, seed)


__all__ = [
    "KarpenterChoice",
    "KarpenterPair",
    "NodeClassInfo",
    "attach",
    "attach_choices",
    "choices_from_graph",
    "daemonset",
    "draw_cases",
    "graph",
    "judge_instance_types",
    "judge_pod",
    "judge_provider",
    "pairs_from_graph",
    "request_provider",
    "summary",
]
