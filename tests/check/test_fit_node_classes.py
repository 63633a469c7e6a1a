"""What an EC2NodeClass says of its nodes, in fit (GI021 / GI024) and in Karpenter's scale-up
(GI026): RAID0 instance store as ephemeral storage, kubelet kubeReserved /
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
    big["inputs"]["spec"]["predictor"]["model"]["resources"].setdefault("limits", {})["cpu"] = "150"
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


# ---------------------------------------------------------------------------------------------
# GKE node pools: local SSDs, the OS image, shared-core machines
# ---------------------------------------------------------------------------------------------


def _gke(**node_config: Any) -> dict:
    nc = {"machineType": "g2-standard-8", "labels": {"pool": "l4"}, **node_config}
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": "l4",
        "inputs": {
            "name": "l4",
            "nodeConfig": nc,
            "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2},
        },
    }


def _disk_pod(size: str) -> dict:
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": "w",
        "inputs": {
            "metadata": {"name": "w", "namespace": "apps"},
            "spec": {
                "template": {
                    "spec": {
                        "nodeSelector": {"pool": "l4"},
                        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                        "containers": [
                            {
                                "name": "c",
                                "resources": {
                                    "requests": {"nvidia.com/gpu": 1, "ephemeral-storage": size},
                                    "limits": {"nvidia.com/gpu": 1},
                                },
                            }
                        ],
                    }
                }
            },
        },
    }


def test_local_ssd_ephemeral_storage_holds_what_the_boot_disk_does_not():
    """A false GI021 before: with ephemeralStorageLocalSsdConfig the kubelet's ephemeral storage
    is on the SSDs (cluster-autoscaler templates.go)."""
    assert "GI021" in {f.code for f in check([_gke(), _disk_pod("300Gi")]).errors}
    ssds = _gke(ephemeralStorageLocalSsdConfig={"localSsdCount": 2})
    assert check([ssds, _disk_pod("300Gi")]).errors == []


def test_local_ssd_count_left_to_the_machine_type_is_not_guessed():
    pool = _gke(ephemeralStorageLocalSsdConfig={})
    found = {f.code: f for f in check([pool, _disk_pod("300Gi")]).findings}
    assert "GI021" not in found
    assert "local SSD count" in found["GI022"].message


def test_ubuntu_nodes_have_their_own_kernel_and_disk_reservations():
    (cos,) = check([_gke()]).pools
    (ubuntu,) = check([_gke(imageType="UBUNTU_CONTAINERD")]).pools
    a, b = cos.nodes[0].shape, ubuntu.nodes[0].shape
    assert a is not None and b is not None
    assert a.capacity.memory - b.capacity.memory == 4 * 1024 * 1024
    assert a.capacity.ephemeral_storage != b.capacity.ephemeral_storage


def test_a_shared_core_pool_is_fit_unknown_with_its_reason():
    pool = {
        "type": "gcp:container/nodePool:NodePool",
        "name": "cpu",
        "inputs": {
            "name": "cpu",
            "nodeConfig": {"machineType": "e2-medium", "labels": {"pool": "cpu"}},
            "autoscaling": {"minNodeCount": 1, "maxNodeCount": 2},
        },
    }
    pod = _disk_pod("1Gi")
    spec = pod["inputs"]["spec"]["template"]["spec"]
    spec["nodeSelector"] = {"pool": "cpu"}
    spec["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    (found,) = [f for f in check([pool, pod]).findings if f.code == "GI022"]
    assert "shared-core" in found.message
