"""What an EC2NodeClass says of its nodes, in fit (GI021 / GI024) and in Karpenter's scale-up
(GI026), issue #29 items 3-5: RAID0 instance store as ephemeral storage, kubelet kubeReserved /
systemReserved / evictionHard / maxPods, and a node class the graph does not hold (unknown: GI022,
never a 20 GiB guess)."""

from __future__ import annotations

import copy
from typing import Any

from test_fit import H100, LLAMA_70B, codes, node_class

from components.check import check
from components.model.nodes.karpenter_kubelet import KarpenterKubelet
from components.model.nodes.shapes import karpenter_node_shape


def _with(nc: dict, **spec: Any) -> dict:
    out = copy.deepcopy(nc)
    out["inputs"]["spec"].update(spec)
    return out


def test_raid0_instance_store_holds_the_weights_that_the_root_volume_does_not():
    """p5.48xlarge has 30400 GB of instance store: with RAID0 a 100Gi root volume no longer
    decides (a false GI024 before)."""
    small = node_class("100Gi")
    assert ("GI024", "InferenceService/llama-70b/predictor") in codes([H100, small, LLAMA_70B])
    raid0 = _with(small, instanceStorePolicy="RAID0")
    assert codes([H100, raid0, LLAMA_70B]) == []


def test_a_node_class_not_in_the_graph_is_not_given_a_20gib_disk():
    """Its volume is unknown: GI022 says fit was not judged there, no GI024 from a guess."""
    report = check([H100, LLAMA_70B])
    found = {f.code: f for f in report.findings}
    assert "GI024" not in found and "GI021" not in found
    assert found["GI022"].severity == "info"
    assert "its EC2NodeClass h100 is not in the graph" in found["GI022"].message


def test_kube_reserved_cpu_is_taken_from_what_a_pod_may_ask():
    """kubeReserved cpu 100 on p5.48xlarge (192 vCPUs): a pod asking 150 CPUs no longer fits
    (GI021), and Karpenter has no instance type for it either."""
    big = copy.deepcopy(LLAMA_70B)
    big["inputs"]["spec"]["predictor"]["model"]["resources"]["requests"]["cpu"] = "150"
    nc = node_class("300Gi")
    assert codes([H100, nc, big]) == []
    reserved = _with(nc, kubelet={"kubeReserved": {"cpu": "100"}})
    assert ("GI021", "InferenceService/llama-70b/predictor") in codes([H100, reserved, big])


def test_system_reserved_and_eviction_hard_are_in_the_fit_shape():
    nc = _with(
        node_class("300Gi"),
        kubelet={"systemReserved": {"memory": "10Gi"}, "evictionHard": {"memory.available": "5%"}},
    )
    (pool,) = [p for p in check([H100, nc, LLAMA_70B]).pools if p.name == "h100"]
    shapes = {n.shape.name: n.shape for n in pool.nodes if n.shape is not None}
    expected = karpenter_node_shape(
        "p5.48xlarge",
        disk_gib=300,
        kubelet=KarpenterKubelet.of(
            system_reserved={"memory": "10Gi"}, eviction_hard={"memory.available": "5%"}
        ),
    )
    assert shapes["p5.48xlarge"].allocatable == expected.allocatable


def test_eviction_soft_changes_no_allocatable():
    """types.go evictionThreshold: evictionSoft is only a warning threshold."""
    nc = node_class("300Gi")
    soft = _with(nc, kubelet={"evictionSoft": {"memory.available": "100Gi"}})

    def shape(graph: list) -> Any:
        (pool,) = [p for p in check(graph).pools if p.name == "h100"]
        return [n.shape.allocatable for n in pool.nodes if n.shape is not None]

    assert shape([H100, soft, LLAMA_70B]) == shape([H100, nc, LLAMA_70B])
