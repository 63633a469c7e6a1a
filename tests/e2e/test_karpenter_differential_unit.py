"""The pure half of the Karpenter differential (karpenter_cases.py), without Go: what the judge is
asked (instance types from our catalog's shapes, pods as the API server would default them, the
graph's NodePools) and the check's answers it is compared with."""

from __future__ import annotations

import sys
from pathlib import Path

import karpenter_judge as kj
from karpenter_cases import (
    AZURE_INPUT_LABELS,
    AZURE_ZONE,
    KarpenterPair,
    choices_from_graph,
    draw_cases,
    judge_instance_types,
    pairs_from_graph,
    request_provider,
)

from components.model.autoscalers.karpenter_launch import (
    Launch,
    NodeClassInfo,
    catalog_instance_types,
)
from components.model.nodes.shapes import karpenter_node_shape

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "check"))
from scale_graphs import (
    deployment,
    nodeclass,
    nodepool,
    pod,
    req,
)

G6 = [req("karpenter.k8s.aws/instance-family", "In", "g6")]


def test_instance_types_carry_our_shapes_capacity_and_overhead():
    types = judge_instance_types(catalog_instance_types(NodeClassInfo(disk_gib=100)))
    (g6,) = [t for t in types if t["name"] == "g6.xlarge"]
    shape = karpenter_node_shape("g6.xlarge", disk_gib=100)
    assert g6["capacity"] == {
        "cpu": "4000m",
        "memory": str(shape.capacity.memory),
        "ephemeral-storage": str(100 * 2**30),
        "pods": str(shape.capacity.pods),
        "nvidia.com/gpu": "1",
    }
    reserved = shape.capacity - shape.allocatable
    assert g6["overhead"] == {
        "kubeReserved": {
            "cpu": f"{reserved.cpu}m",
            "memory": str(reserved.memory),
            "ephemeral-storage": str(reserved.ephemeral_storage),
        }
    }
    assert g6["labels"]["karpenter.k8s.aws/instance-gpu-name"] == "l4"
    assert [o["capacityType"] for o in g6["offerings"]] == ["on-demand", "spot"]


def test_reserved_offerings_only_where_the_node_class_selects_reservations():
    types = judge_instance_types(
        catalog_instance_types(NodeClassInfo(disk_gib=100, reservations=True))
    )
    (p5,) = [t for t in types if t["name"] == "p5.48xlarge"]
    reserved = [o for o in p5["offerings"] if o["capacityType"] == "reserved"]
    assert reserved == [
        {
            "capacityType": "reserved",
            "zone": "us-west-2a",
            "price": reserved[0]["price"],
            "reservationID": "cr-p5.48xlarge",
            "reservationCapacity": 1,
        }
    ]


def test_pairs_and_request_of_a_graph():
    spec = pod("g6", tolerations=[])
    spec["containers"][0]["resources"]["requests"].pop("nvidia.com/gpu")  # the limit alone
    graph = [
        nodeclass("gpu", reservations=True),
        nodeclass("small", volume="20Gi"),
        nodepool("g6", G6),
        nodepool(
            "p5", [req("node.kubernetes.io/instance-type", "In", "p5.48xlarge")], node_class="small"
        ),
        deployment("a", spec),
    ]
    pairs, request = pairs_from_graph("g", graph)
    assert request is not None
    assert [(p.pod, p.node_pool, p.ours.launches, p.check_lands) for p in pairs] == [
        ("Deployment/a", "g6", True, True),
        ("Deployment/a", "p5", False, False),
    ]
    assert pairs[0].ours.capacity_types == ("reserved",)
    assert request["perNodePool"] is True
    assert [p["metadata"]["name"] for p in request["nodePools"]] == ["g6", "p5"]
    assert set(request["nodeClassInstanceTypes"]) == {"gpu", "small"}
    (judged,) = request["pods"]
    container = judged["spec"]["containers"][0]
    # The API server copies a limit to the absent request: the judge gets it done.
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "1"
    # ExtendedResourceToleration's toleration, as on EKS.
    assert judged["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_a_pair_agrees_only_with_the_same_instance_and_capacity_types():
    ours = Launch("g6", ("g6.xlarge",), ("on-demand",))
    pair = KarpenterPair("s", "Deployment/a", "g6", ours, True, "p0")
    assert not pair.agrees  # not judged yet
    pair.judge = kj.Verdict("p0", True, "g6", ("g6.xlarge",), ("on-demand",), "", "g6")
    assert pair.agrees
    pair.judge = kj.Verdict("p0", True, "g6", ("g6.xlarge",), ("on-demand", "spot"), "", "g6")
    assert not pair.agrees
    pair.judge = kj.Verdict("p0", False, "", (), (), "all available instance types exceed", "g6")
    assert not pair.agrees
    refused = KarpenterPair("s", "Deployment/a", "g6", Launch("g6", cause="limits"), False, "p0")
    refused.judge = pair.judge
    assert refused.agrees


def test_generated_cases_are_the_same_for_the_same_seed():
    first = draw_cases(20, 5)
    assert first == draw_cases(20, 5)
    assert first != draw_cases(20, 6)
    kinds = {e["type"].rsplit(":", 1)[-1] for case in first for e in case}
    assert kinds == {"EC2NodeClass", "NodePool", "DaemonSet", "Deployment"}


def test_choices_ask_for_every_nodepool_at_once():
    graph = [
        nodeclass(),
        nodepool("heavy", G6, weight=50),
        nodepool("light", [req("karpenter.k8s.aws/instance-family", "In", "g5")]),
        deployment("a", pod()),
    ]
    choices, request = choices_from_graph("g", graph)
    assert request is not None and request["perNodePool"] is False
    (choice,) = choices
    assert choice.ours is not None and choice.ours.node_pool == "heavy"
    assert choices_from_graph("one", graph[:2] + graph[3:]) == ([], None)


def test_a_pod_no_node_of_the_pool_holds_does_not_land_there():
    """Seed 2143733283's disagreement: 8 CPUs asked of g4dn.2xlarge (7910m allocatable). The check
    says it with GI021 (fit) rather than GI026, and Karpenter launches nothing: the pair says
    "does not land", as the judge does."""
    graph = [
        nodeclass("gpu"),
        nodepool("g4dn", [req("node.kubernetes.io/instance-type", "In", "g4dn.2xlarge")]),
        deployment("a", pod("g4dn", cpu="8")),
    ]
    (pair,), _ = pairs_from_graph("g", graph)
    assert (pair.ours.launches, pair.ours.cause, pair.check_lands) == (False, "requests", False)
    assert "it requests 8 cpu but the most the instance types" in pair.ours.reason
    assert "beside their DaemonSets is 7785m (g4dn.2xlarge: 7910m allocatable less 125m" in (
        pair.ours.reason
    )


# ---------------------------------------------------------------------------------------------
# AKS node auto-provisioning: the judge's `azure` build
# ---------------------------------------------------------------------------------------------


def _nap_graph() -> list[dict]:
    import karpenter_cases_azure as kca

    node_class = {
        "type": kca.NODECLASS,
        "name": "a100",
        "inputs": {"metadata": {"name": "a100"}, "spec": {"osDiskSizeGB": 128}},
    }
    pool = {
        "type": "kubernetes:karpenter.sh/v1:NodePool",
        "name": "a100",
        "inputs": {
            "metadata": {"name": "a100"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"gpu-inference.dev/pool": "a100"}},
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.azure.com",
                            "kind": "AKSNodeClass",
                            "name": "a100",
                        },
                        "requirements": [req("karpenter.azure.com/sku-gpu-name", "In", "A100")],
                        "taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
                    },
                }
            },
        },
    }
    return [node_class, pool, deployment("model", pod("a100", gpus=1, tolerations=[]))]


def test_a_nap_graph_asks_the_azure_judge_with_what_the_sku_api_gives():
    """Only the SKU API's numbers and the node class's OS SKU go as labels (the judge derives
    family, series, version and GPU name from the size's name itself), on-demand and spot only,
    and no ExtendedResourceToleration on AKS: the pod keeps exactly its own tolerations."""
    pairs, request = pairs_from_graph("nap", _nap_graph())
    assert request is not None and request_provider(request) == "azure"
    (types,) = request["nodeClassInstanceTypes"].values()
    (nc24,) = [t for t in types if t["name"] == "Standard_NC24ads_A100_v4"]
    assert set(nc24["labels"]) <= AZURE_INPUT_LABELS
    assert nc24["labels"]["karpenter.azure.com/sku-gpu-count"] == "1"
    assert [o["capacityType"] for o in nc24["offerings"]] == ["on-demand", "spot"]
    assert {o["zone"] for o in nc24["offerings"]} == {AZURE_ZONE}
    (judged,) = request["pods"]
    assert "tolerations" not in judged["spec"]  # the sku=gpu taint keeps it out
    (pair,) = pairs
    assert not pair.ours.launches and pair.ours.cause == "taints"


def test_eks_graphs_still_go_to_the_aws_build_with_extended_resource_toleration():
    graph = [nodeclass(), nodepool("g6", G6), deployment("a", pod("g6", tolerations=[]))]
    _, request = pairs_from_graph("eks", graph)
    assert request is not None and request_provider(request) == "aws"
    (judged,) = request["pods"]
    assert judged["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
