"""An EC2NodeClass's kubelet settings and instance-store policy in the node Karpenter believes it
launches (issue #29 items 3 and 4): each row from the line of aws/karpenter-provider-aws v1.14.1
`pkg/providers/instancetype/types.go` it rests on, and the default shapes against the allocatable
Karpenter's own generated reference lists."""

from __future__ import annotations

import math

import pytest

from components.model.nodes.aws_instances import instance_store_gb
from components.model.nodes.karpenter_kubelet import KarpenterKubelet
from components.model.nodes.shapes import Gi, Mi, karpenter_node_shape

G6 = "g6.xlarge"  # 4 vCPUs, ENI pods 58, instance store 250 GB
BASE = karpenter_node_shape(G6, disk_gib=20)


def _shape(**kubelet: object) -> object:
    return karpenter_node_shape(G6, disk_gib=20, kubelet=KarpenterKubelet.of(**kubelet))


# aws/karpenter-provider-aws v1.14.1 website/content/en/docs/reference/instance-types.md
# ("Resources" of each type: what Karpenter computes with its defaults, a 20Gi AL2023 volume).
@pytest.mark.parametrize(
    ("instance_type", "cpu", "memory_mi", "pods"),
    [
        ("g5.xlarge", 3920, 14162, 58),
        ("g5g.xlarge", 3920, 6525, 58),
        ("g6.12xlarge", 47810, 178933, 234),
        ("g6e.48xlarge", 191450, 1449132, 492),
        ("m5.large", 1930, 6903, 29),
        ("p4d.24xlarge", 95690, 1082712, 737),
        ("p5.48xlarge", 191450, 1938410, 100),
    ],
)
def test_default_shapes_are_what_karpenters_reference_lists(
    instance_type: str, cpu: int, memory_mi: int, pods: int
):
    a = karpenter_node_shape(instance_type, disk_gib=20).allocatable
    assert (a.cpu, a.memory // Mi, round(a.ephemeral_storage / Gi), a.pods) == (
        cpu,
        memory_mi,
        17,
        pods,
    )


def test_kube_reserved_replaces_the_default_key_by_key():
    """kubeReservedResources: `lo.Assign(defaults, kubeReserved)`."""
    s = _shape(kube_reserved={"cpu": "1"})
    assert s.allocatable.cpu == 4000 - 1000
    assert s.allocatable.memory == BASE.allocatable.memory  # memory default kept
    s = _shape(kube_reserved={"memory": "2Gi", "ephemeral-storage": "3Gi"})
    assert s.capacity.memory - s.allocatable.memory == 2 * Gi + 100 * Mi  # + eviction 100Mi
    assert BASE.allocatable.ephemeral_storage - s.allocatable.ephemeral_storage == 2 * Gi
    assert s.allocatable.cpu == BASE.allocatable.cpu


def test_kube_reserved_pid_changes_nothing_the_scheduler_counts():
    assert _shape(kube_reserved={"pid": "1000"}).allocatable == BASE.allocatable


def test_system_reserved_is_withheld_on_top():
    """systemReservedResources: the map as it is."""
    s = _shape(system_reserved={"cpu": "500m", "memory": "1Gi"})
    assert s.allocatable.cpu == BASE.allocatable.cpu - 500
    assert s.allocatable.memory == BASE.allocatable.memory - Gi


@pytest.mark.parametrize(
    ("eviction_hard", "memory_held", "disk_held"),
    [
        ({}, 100 * Mi, math.ceil(20 * Gi / 100 * 10)),  # defaults: 100Mi and 10% of the volume
        ({"memory.available": "500Mi"}, 500 * Mi, math.ceil(20 * Gi / 100 * 10)),
        ({"nodefs.available": "15%"}, 100 * Mi, math.ceil(20 * Gi / 100 * 15)),
        ({"nodefs.available": "2Gi"}, 100 * Mi, 2 * Gi),
        ({"nodefs.available": "100%"}, 100 * Mi, 0),  # mustParsePercentage: 100% means 0
    ],
)
def test_eviction_hard_replaces_the_thresholds(
    eviction_hard: dict, memory_held: int, disk_held: int
):
    """evictionThreshold / computeEvictionSignal: a percentage of the capacity (ceil)."""
    s = _shape(eviction_hard=eviction_hard)
    kube_memory = BASE.capacity.memory - BASE.allocatable.memory - 100 * Mi
    assert s.capacity.memory - s.allocatable.memory == kube_memory + memory_held
    assert s.capacity.ephemeral_storage - s.allocatable.ephemeral_storage == Gi + disk_held


def test_memory_available_as_a_percentage_of_the_memory_capacity():
    s = _shape(eviction_hard={"memory.available": "5%"})
    kube_memory = BASE.capacity.memory - BASE.allocatable.memory - 100 * Mi
    held = math.ceil(BASE.capacity.memory / 100 * 5)
    assert s.capacity.memory - s.allocatable.memory == kube_memory + held


@pytest.mark.parametrize(
    ("ami_family", "pods_per_core", "pods"),
    [
        ("AL2023", None, 58),
        ("AL2023", 2, 8),  # min(podsPerCore x vCPUs, ENI pods)
        ("AL2023", 100, 58),
        ("Bottlerocket", 2, 58),  # PodsPerCoreEnabled false on Bottlerocket
    ],
)
def test_pods_per_core_caps_pods_on_al2023_only(ami_family: str, pods_per_core: int, pods: int):
    s = karpenter_node_shape(
        G6,
        disk_gib=20,
        ami_family=ami_family,
        kubelet=KarpenterKubelet.of(pods_per_core=pods_per_core),
    )
    assert s.capacity.pods == pods


def test_raid0_makes_ephemeral_storage_the_instance_store():
    """ephemeralStorage: with RAID0, `%dG` of InstanceStorageInfo.TotalSizeInGB."""
    s = _shape(raid0=True)
    store = 250 * 1_000_000_000
    assert s.capacity.ephemeral_storage == store
    assert s.allocatable.ephemeral_storage == store - Gi - math.ceil(store / 100 * 10)


def test_raid0_on_a_type_without_instance_store_keeps_the_root_volume():
    assert instance_store_gb("m5.large") == 0
    s = karpenter_node_shape("m5.large", disk_gib=50, kubelet=KarpenterKubelet.of(raid0=True))
    assert s.capacity.ephemeral_storage == 50 * Gi


@pytest.mark.parametrize(
    ("instance_type", "gb"),
    [
        ("g4dn.xlarge", 125),
        ("g5.48xlarge", 7600),
        ("p5.48xlarge", 30400),
        ("g5g.xlarge", 0),
        ("p3.8xlarge", 0),  # listed without the label in the v1.12 reference page
    ],
)
def test_instance_store_is_the_reference_lists_local_nvme(instance_type: str, gb: int):
    """website/content/en/docs/reference/instance-types.md: karpenter.k8s.aws/instance-local-nvme."""
    assert instance_store_gb(instance_type) == gb
