"""Karpenter's provisioning decision in pure Python (components.model.autoscalers.karpenter_launch), on cases
reasoned from kubernetes-sigs/karpenter v1.14.1 (each also held against Karpenter itself by
tests/e2e/test_karpenter_differential.py), and its requirement algebra against Kubernetes' own
label matching."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.model.autoscalers.karpenter_launch import (
    Launch,
    NodeClassInfo,
    NodePoolSpec,
    PendingPod,
    admits_cpu_types,
    catalog_instance_types,
    choose,
    launch,
)
from components.model.autoscalers.karpenter_requirements import (
    Req,
    Requirements,
    nodepool_problem,
    requirement_problem,
)
from components.model.nodes.shapes import Resources
from components.model.scheduling.affinity import NodeSelectorRequirement
from components.model.scheduling.taints import Taint, Toleration

TYPES = catalog_instance_types(NodeClassInfo(disk_gib=100))
RESERVED_TYPES = catalog_instance_types(NodeClassInfo(disk_gib=100, reservations=True))
GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
TOL = (Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),)
FAMILY = "karpenter.k8s.aws/instance-family"
COUNT = "karpenter.k8s.aws/instance-gpu-count"
TYPE = "node.kubernetes.io/instance-type"
CT = "karpenter.sh/capacity-type"
G6 = (
    "g6.12xlarge",
    "g6.16xlarge",
    "g6.24xlarge",
    "g6.2xlarge",
    "g6.48xlarge",
    "g6.4xlarge",
    "g6.8xlarge",
    "g6.xlarge",
)


def pool(name: str = "g6", *reqs: tuple[str, str, tuple[str, ...]], **kw) -> NodePoolSpec:
    kw.setdefault("taints", (GPU_TAINT,))
    return NodePoolSpec(name, requirements=reqs or ((FAMILY, "In", ("g6",)),), **kw)


def gpu_pod(gpus: int = 1, **kw) -> PendingPod:
    kw.setdefault("tolerations", TOL)
    kw.setdefault("requests", Resources(cpu=1000, memory=8 * 2**30, pods=1, gpus=gpus))
    return PendingPod(**kw)


def test_a_family_pool_offers_every_size_the_pod_fits_spot_and_on_demand():
    assert launch(gpu_pod(), pool(), TYPES) == Launch("g6", G6, ("on-demand", "spot"))
    assert launch(gpu_pod(4), pool(), TYPES).instance_types == (
        "g6.12xlarge",
        "g6.24xlarge",
        "g6.48xlarge",
    )


def test_limits_compare_capacity_not_allocatable():
    only_p5 = pool("p5", (TYPE, "In", ("p5.48xlarge",)), limits={"nvidia.com/gpu": 4})
    out = launch(gpu_pod(), only_p5, TYPES)
    assert (out.launches, out.cause) == (False, "limits")
    assert launch(gpu_pod(), replace(only_p5, limits={"nvidia.com/gpu": 8}), TYPES).launches
    # cpu: g6.xlarge has 4 vCPUs of capacity (3.92 allocatable): a limit of 4 keeps it only.
    small = pool("g6", (TYPE, "In", ("g6.xlarge", "g6.2xlarge")), limits={"cpu": 4000})
    assert launch(gpu_pod(), small, TYPES).instance_types == ("g6.xlarge",)
    assert launch(gpu_pod(), replace(small, limits={"nodes": 0}), TYPES).cause == "limits"


def test_reserved_needs_a_selected_reservation_and_then_is_all_karpenter_asks_for():
    reserved = pool("g6", (FAMILY, "In", ("g6",)), (CT, "In", ("reserved",)))
    assert launch(gpu_pod(), reserved, TYPES).cause == "capacity-type"
    assert launch(gpu_pod(), reserved, RESERVED_TYPES).capacity_types == ("reserved",)
    mixed = pool("g6", (FAMILY, "In", ("g6",)), (CT, "In", ("reserved", "on-demand")))
    assert launch(gpu_pod(), mixed, TYPES).capacity_types == ("on-demand",)
    assert launch(gpu_pod(), mixed, RESERVED_TYPES).capacity_types == ("reserved",)


def test_requests_against_allocatable_to_the_byte():
    g6 = next(t for t in TYPES if t.name == "g6.4xlarge")
    assert g6.allocatable is not None
    single = pool("g6", (COUNT, "In", ("1",)), (FAMILY, "In", ("g6",)))
    at = Resources(cpu=1000, memory=g6.allocatable.memory, pods=1, gpus=1)
    biggest = max(
        (t for t in TYPES if t.name.startswith("g6.") and t.capacity.gpus == 1),
        key=lambda t: t.allocatable.memory if t.allocatable else 0,
    )
    assert biggest.allocatable is not None
    edge = Resources(cpu=1000, memory=biggest.allocatable.memory, pods=1, gpus=1)
    assert launch(gpu_pod(requests=edge), single, TYPES).instance_types == (biggest.name,)
    over = replace(edge, memory=edge.memory + 1)
    assert launch(gpu_pod(requests=over), single, TYPES).cause == "requests"
    assert g6.name in launch(gpu_pod(requests=at), single, TYPES).instance_types


def test_taints_every_effect_and_prefer_no_schedule_relaxed():
    assert launch(gpu_pod(tolerations=()), pool(), TYPES).cause == "taints"
    soft = pool(taints=(Taint("soft", "", "PreferNoSchedule"),))
    assert launch(gpu_pod(tolerations=()), soft, TYPES).launches


def test_required_terms_relaxed_in_order_and_preferences_narrow_until_relaxed():
    first_impossible = gpu_pod(
        required=(((COUNT, "In", ("16",)),), ((COUNT, "In", ("4",)),)),
    )
    assert launch(first_impossible, pool(), TYPES).instance_types == ("g6.12xlarge", "g6.24xlarge")
    prefers = gpu_pod(
        preferred=((10, ((TYPE, "In", ("g6.xlarge",)),)), (50, ((TYPE, "In", ("g6.2xlarge",)),)))
    )
    assert launch(prefers, pool(), TYPES).instance_types == ("g6.2xlarge",)
    impossible = gpu_pod(preferred=((10, ((TYPE, "In", ("p5.48xlarge",)),)),))
    assert launch(impossible, pool(), TYPES).instance_types == G6


def test_a_pod_karpenter_ignores_and_a_nodepool_it_never_readies():
    assert launch(gpu_pod(node_selector={CT: "bogus"}), pool(), TYPES).cause == "pod"
    hostname = gpu_pod(node_selector={"kubernetes.io/hostname": "n"})
    assert launch(hostname, pool(), TYPES).cause == "pod"
    away = gpu_pod(required=((("karpenter.sh/nodepool", "DoesNotExist", ()),),))
    assert launch(away, pool(), TYPES).cause == "pod"
    bad = pool(problem=nodepool_problem([("karpenter.sh/nodepool", "In", ("x",))], {}))
    assert launch(gpu_pod(), bad, TYPES).cause == "nodepool"
    assert launch(gpu_pod(dra=True), pool(), TYPES).cause == "dra"


def test_a_key_of_the_nodepools_own_takes_the_value_the_pod_selects():
    """Found by the differential: Karpenter labels the node with the value the pod asks for
    (`team In [a, b]`, `team Exists`), and a well-known key the NodePool does not name (a zone)
    may be asked for."""
    team = pool("g6", (FAMILY, "In", ("g6",)), ("example.com/team", "In", ("a", "b")))
    assert launch(gpu_pod(node_selector={"example.com/team": "a"}), team, TYPES).launches
    assert (
        launch(gpu_pod(node_selector={"example.com/team": "c"}), team, TYPES).cause
        == "requirements"
    )
    anyone = pool("g6", (FAMILY, "In", ("g6",)), ("example.com/team", "Exists", ()))
    assert launch(gpu_pod(node_selector={"example.com/team": "z"}), anyone, TYPES).launches
    zone = gpu_pod(node_selector={"topology.kubernetes.io/zone": "us-west-2a"})
    assert launch(zone, pool(), TYPES).launches
    unknown = gpu_pod(node_selector={"example.com/other": "x"})
    assert launch(unknown, pool(), TYPES).cause == "requirements"


def test_the_heaviest_pool_first_then_by_name_descending():
    pools = [(pool(n, weight=w), TYPES) for n, w in (("a", 0), ("b", 0), ("c", 10))]
    chosen = choose(gpu_pod(), pools)
    assert chosen is not None and chosen.node_pool == "c"
    chosen = choose(gpu_pod(), pools[:2])
    assert chosen is not None and chosen.node_pool == "b"


def test_a_lighter_pool_that_fits_the_pod_as_written_beats_a_heavier_one_after_relaxing():
    """Karpenter relaxes the pod only once no NodePool takes it as written (trySchedule loops
    over every template before `Preferences.Relax`)."""
    prefers_g5 = gpu_pod(preferred=((10, ((FAMILY, "In", ("g5",)),)),))
    heavy = (pool("heavy", weight=50), TYPES)  # g6 only
    light = (pool("light", (FAMILY, "In", ("g5",))), TYPES)
    chosen = choose(prefers_g5, [heavy, light])
    assert chosen is not None and chosen.node_pool == "light"
    chosen = choose(gpu_pod(), [heavy, light])
    assert chosen is not None and chosen.node_pool == "heavy"


def test_whether_a_nodepool_admits_cpu_instance_types():
    assert admits_cpu_types(pool("any", ("kubernetes.io/arch", "In", ("amd64",))))
    assert not admits_cpu_types(pool())
    assert not admits_cpu_types(pool("gpu", (COUNT, "Gt", ("0",))))


@pytest.mark.parametrize(
    ("key", "op", "values", "problem"),
    [
        (CT, "In", ("bogus",), "no valid values"),
        (CT, "In", ("bogus", "spot"), None),
        (COUNT, "Gt", ("-1",), "single positive integer"),
        ("karpenter.sh/anything", "In", ("x",), "domain Karpenter reserves"),
        ("karpenter.k8s.aws/instance-family", "In", ("g6",), None),
        (COUNT, "Gte", ("4",), None),
        (FAMILY, "Matches", ("g6",), "unsupported operator"),
    ],
)
def test_requirement_validation(key, op, values, problem):
    found = requirement_problem(key, op, values)
    assert (found is None) if problem is None else (problem in (found or ""))


# The algebra: one requirement against a node's labels means what Kubernetes means.
_KEYS = ("k", "n")
_VALUES = ("a", "b", "1", "2", "10")
_REQ = st.builds(
    lambda key, op, values, number: (
        key,
        op,
        values if op in ("In", "NotIn") else (number,) if op in ("Gt", "Lt") else (),
    ),
    st.sampled_from(_KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")),
    st.lists(st.sampled_from(_VALUES), min_size=1, max_size=3, unique=True).map(tuple),
    st.sampled_from(("0", "1", "2", "9")),
)
_LABELS = st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(_VALUES), max_size=2)


@given(_REQ, _LABELS)
def test_a_requirement_admits_a_node_exactly_as_kubernetes_matches_it(r, labels):
    """A node with these labels (a key it lacks: DoesNotExist) against one requirement."""
    node = Requirements(Req.of(k, "In", [v]) for k, v in labels.items())
    node.add(*(Req.of(k, "DoesNotExist") for k in _KEYS if k not in labels))
    ours = node.intersects(Requirements([Req.of(*r)])) is None
    assert ours == NodeSelectorRequirement(*r).matches(labels)


def test_disjoint_values_intersect_to_does_not_exist_as_in_karpenter():
    """Karpenter's `Intersection` of `In [a]` and `In [b]` is the empty set, which is its
    DoesNotExist (requirement.go): it then admits a node without the key, where Kubernetes would
    admit no node. The scheduler reaches it only within one side (two expressions on one key in a
    pod's term); across pod and NodePool `Compatible` refuses first."""
    both = Requirements([Req.of("k", "In", ["a"])]).add(Req.of("k", "In", ["b"]))
    assert both.get("k").operator == "DoesNotExist"
    bare = Requirements([Req.of("k", "DoesNotExist")])
    assert bare.intersects(both) is None
    assert Requirements([Req.of("k", "In", ["a"])]).compatible(
        Requirements([Req.of("k", "In", ["b"])])
    )
