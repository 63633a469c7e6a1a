"""Node shapes: what a node holds as the kubelet reports it allocatable, per provider rule.

Expected figures come from the sources named at each table: Karpenter's own test expectations
(aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/suite_test.go), GKE's published
example, and nodes measured by 2i2c (2i2c-org/infrastructure deployer/commands/generate/
resource_allocation/instance_capacities.yaml, issue #2121).
"""

from __future__ import annotations

import dataclasses
import itertools
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.model.errors import InputError
from components.model.nodes.aws_instances import EC2_INSTANCES, Ec2Instance
from components.model.nodes.catalog import AWS_GPU_INSTANCES, GKE_ACCELERATORS
from components.model.nodes.gke_machines import GCE_MACHINES
from components.model.nodes.shapes import (
    KARPENTER_DEFAULT_ROOT_VOLUME_GIB,
    Gi,
    Ki,
    Mi,
    NodeShape,
    Resources,
    eks_node_shape,
    eks_node_shape_or_none,
    eni_max_pods,
    existing_node_shape,
    format_apart,
    format_resource,
    gke_ephemeral_allocatable,
    gke_node_shape,
    gke_node_shape_or_none,
    karpenter_node_shape,
    karpenter_node_shape_or_none,
    kubelet_nodefs_eviction,
)

# ---------------------------------------------------------------------------------------------
# Resources
# ---------------------------------------------------------------------------------------------

amounts = st.integers(min_value=0, max_value=2**50)
resources = st.builds(Resources, amounts, amounts, amounts, amounts, amounts)


@given(resources, resources)
def test_resources_add_then_subtract_is_identity(a: Resources, b: Resources) -> None:
    assert (a + b) - b == a


@given(resources, resources)
def test_first_misfit_names_a_resource_exactly_when_it_does_not_fit(
    request_: Resources, held: Resources
) -> None:
    misfit = request_.first_misfit(held)
    over = [name for name, amount in request_.items() if amount > held.get(name)]
    assert misfit == (over[0] if over else None)
    assert request_.fits_in(held) == (not over)


@given(resources, resources)
def test_max_is_per_resource(a: Resources, b: Resources) -> None:
    m = a.max(b)
    assert all(m.get(n) == max(a.get(n), b.get(n)) for n, _ in m.items())


def test_first_misfit_reports_kubernetes_names_in_order() -> None:
    held = Resources(cpu=1000, memory=Gi, ephemeral_storage=Gi, pods=10, gpus=1)
    assert Resources(gpus=2).first_misfit(held) == "nvidia.com/gpu"
    assert Resources(ephemeral_storage=2 * Gi, gpus=2).first_misfit(held) == "ephemeral-storage"
    assert Resources(cpu=1001, memory=2 * Gi).first_misfit(held) == "cpu"
    assert Resources(cpu=1000, memory=Gi, ephemeral_storage=Gi, pods=10, gpus=1).fits_in(held)


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("cpu", 40_000, "40"),
        ("cpu", 23_870, "23870m"),
        ("memory", 360 * Gi, "360Gi"),
        ("memory", 320 * Gi + 512 * Mi, "320.5Gi"),
        ("ephemeral-storage", 47_060_071_478, "43.83Gi"),
        ("memory", 2 * 1024 * Gi, "2Ti"),
        ("pods", 110, "110"),
        ("nvidia.com/gpu", 2, "2"),
    ],
)
def test_format_resource(name: str, value: int, text: str) -> None:
    assert format_resource(name, value) == text


@pytest.mark.parametrize(
    ("name", "value", "other", "texts"),
    [
        ("cpu", 8000, 7910, ("8", "7910m")),
        ("memory", 180 * Gi, 160 * Gi, ("180Gi", "160Gi")),
        ("memory", Gi, Gi, ("1Gi", "1Gi")),  # equal amounts read equal
        # Rounding would show 179Gi against 179Gi: both exactly (seed 2143733283's message).
        ("ephemeral-storage", 192200835072, 192198877184, ("192200835072", "192198877184")),
    ],
)
def test_format_apart_never_shows_two_amounts_alike(
    name: str, value: int, other: int, texts: tuple[str, str]
) -> None:
    assert format_apart(name, value, other) == texts


# ---------------------------------------------------------------------------------------------
# GKE Standard
# ---------------------------------------------------------------------------------------------


def test_gke_ephemeral_formula_gives_gkes_published_allocatable_to_the_byte() -> None:
    # GKE docs "Plan GKE Standard node sizes" example node (and 2i2c's GKE 1.25 nodes): a 100 GB
    # boot disk, ephemeral-storage capacity 98831908Ki, allocatable "47060071478".
    assert gke_ephemeral_allocatable(98_831_908 * Ki, 100 * Gi) == 47_060_071_478


def test_kubelet_nodefs_eviction_is_float32_ten_percent() -> None:
    # int64(float64(cap) * float64(float32(0.1))): one byte more than an exact 10% here
    assert kubelet_nodefs_eviction(98_831_908 * Ki) == 10_120_387_530


# Measured GKE nodes (2i2c instance_capacities.yaml / #2121, 100 GB boot disks, GKE 1.25):
# machine type -> (allocatable CPU millicores, allocatable memory GiB to 3 decimals)
GKE_MEASURED = {
    "n2-highmem-2": (1930, 12.972),
    "n2-highmem-4": (3920, 27.738),
    "n2-highmem-8": (7910, 57.27),
    "n2-highmem-16": (15890, 116.549),
    "n2-highmem-32": (31850, 240.079),
    "n1-highmem-4": (3920, 22.192),
    "e2-highmem-16": (15890, 116.549),
    "n1-standard-2": (1930, 5.483),
    "n1-standard-8": (7910, 25.888),
    "n1-standard-16": (15890, 53.571),
}


@pytest.mark.parametrize(("machine_type", "measured"), GKE_MEASURED.items())
def test_gke_allocatable_against_measured_nodes(
    machine_type: str, measured: tuple[int, float]
) -> None:
    cpu, memory_gib = measured
    shape = gke_node_shape(machine_type)
    assert shape.allocatable.cpu == cpu
    # The documented tables and cluster-autoscaler's kernel estimate land within a few MiB
    # above (n1-standard-2: +3.0 MiB) to ~390 MiB below what the kubelet reported.
    gap = memory_gib * Gi - shape.allocatable.memory
    assert -4 * Mi <= gap <= 400 * Mi, gap / Mi
    # boot disk: the docs' 47060071478, ours from the estimated COS capacity, ~61 MB lower
    assert 47_060_071_478 - 70 * Mi <= shape.allocatable.ephemeral_storage <= 47_060_071_478
    assert shape.allocatable.pods == 110


def test_gke_a2_ultragpu_2g_does_not_hold_the_gke_dev_seldon_server() -> None:
    shape = gke_node_shape("a2-ultragpu-2g", disk_gb=100)
    assert (shape.capacity.cpu, shape.capacity.gpus) == (24_000, 2)
    assert shape.allocatable.cpu == 24_000 - 130
    assert 320 * Gi < shape.allocatable.memory < 321 * Gi
    assert 46.9e9 < shape.allocatable.ephemeral_storage < 47.1e9
    server = Resources(cpu=40_000, memory=360 * Gi, ephemeral_storage=290 * Gi, pods=1)
    assert shape.first_misfit(server) == "cpu"
    assert shape.first_misfit(Resources(cpu=20_000, memory=360 * Gi)) == "memory"
    assert shape.first_misfit(Resources(ephemeral_storage=290 * Gi)) == "ephemeral-storage"
    # the boundary: exactly the allocatable fits, one unit more of any resource does not
    assert shape.first_misfit(shape.allocatable) is None
    for field, name in (("memory", "memory"), ("ephemeral_storage", "ephemeral-storage")):
        over = dataclasses.replace(shape.allocatable, **{field: shape.allocatable.get(name) + 1})
        assert shape.first_misfit(over) == name


@pytest.mark.parametrize(
    ("machine_type", "vcpus", "memory_gib", "gpus"),
    [
        ("a2-highgpu-1g", 12, 85, 1),
        ("a2-megagpu-16g", 96, 1360, 16),
        ("a3-highgpu-8g", 208, 1872, 8),
        ("a3-ultragpu-8g", 224, 2952, 8),
        ("g2-standard-8", 8, 32, 1),
        ("g2-standard-96", 96, 384, 8),
        ("g4-standard-48", 48, 180, 1),
        ("n1-standard-8", 8, 30, 0),
        ("n1-highcpu-4", 4, 3686 / 1024, 0),
        ("c3-standard-22", 22, 88, 0),
    ],
)
def test_gke_machine_shapes(machine_type: str, vcpus: int, memory_gib: float, gpus: int) -> None:
    machine = GCE_MACHINES[machine_type]
    assert (machine.vcpus, machine.memory_mib) == (vcpus, round(memory_gib * 1024))
    assert gke_node_shape(machine_type).capacity.gpus == gpus


def test_gke_kube_reserved_cpu_grows_400m_above_110_pods() -> None:
    at_110 = gke_node_shape("n2-standard-8", max_pods=110)
    at_111 = gke_node_shape("n2-standard-8", max_pods=111)
    assert at_110.allocatable.cpu - at_111.allocatable.cpu == 400
    assert (at_110.allocatable.pods, at_111.allocatable.pods) == (110, 111)


def test_gke_gpus_attach_to_n1_only() -> None:
    assert gke_node_shape("n1-standard-8").allocatable.gpus == 0
    assert gke_node_shape("n1-standard-8", gpus=2).allocatable.gpus == 2
    # a time-shared G2 node advertises more nvidia.com/gpu than it has GPUs
    assert gke_node_shape("g2-standard-8", gpus=4).allocatable.gpus == 4
    with pytest.raises(InputError, match="e2-standard-4 takes no GPUs"):
        gke_node_shape("e2-standard-4", gpus=1)


def test_gke_custom_machine_types_are_read_from_the_name() -> None:
    assert gke_node_shape("custom-4-16384").capacity.cpu == 4000
    assert gke_node_shape("n2-custom-8-65536-ext").capacity.memory < 64 * Gi


@pytest.mark.parametrize(
    ("machine_type", "message", "allowed"),
    [
        (
            "n2-standard-3",
            "'n2-standard-3' is not a known n2-standard machine type",
            "n2-standard-2, ",
        ),
        ("a4-highgpu-8g", "is not in the node-shape catalog", "a2-ultragpu-*"),
        # Listed (2 guestCpus, 4 GB) but not modelled: GKE's shared-core CPU reservation.
        ("e2-medium", "is a shared-core machine type", "e2-standard-2"),
        ("", "is not in the node-shape catalog", "custom-<vCPUs>-<MiB>"),
    ],
)
def test_gke_unknown_machine_types_are_refused_by_name(
    machine_type: str, message: str, allowed: str
) -> None:
    with pytest.raises(InputError, match=message) as err:
        gke_node_shape(machine_type)
    assert allowed in err.value.allowed
    assert gke_node_shape_or_none(machine_type) is None


@pytest.mark.parametrize("bad", [0, -1, True, "100"])
def test_gke_disk_must_be_a_positive_whole_number(bad: object) -> None:
    with pytest.raises(InputError, match="disk_gb"):
        gke_node_shape("n2-standard-8", disk_gb=bad)  # type: ignore[arg-type]


@given(
    st.sampled_from(sorted(m for m in GCE_MACHINES if not GCE_MACHINES[m].shared_core)),
    st.integers(min_value=10, max_value=4000),
)
def test_gke_allocatable_is_positive_and_below_capacity(machine_type: str, disk_gb: int) -> None:
    shape = gke_node_shape(machine_type, disk_gb=disk_gb)
    reserved = shape.reserved
    assert all(amount >= 0 for _, amount in reserved.items())
    assert reserved.cpu > 0 and reserved.memory > 0 and reserved.ephemeral_storage > 0
    assert shape.allocatable.cpu > 0 and shape.allocatable.memory > 0
    assert shape.allocatable.ephemeral_storage > 0


@given(st.integers(min_value=10, max_value=4000))
def test_gke_a_bigger_boot_disk_never_holds_less(disk_gb: int) -> None:
    small = gke_node_shape("g2-standard-8", disk_gb=disk_gb).allocatable.ephemeral_storage
    big = gke_node_shape("g2-standard-8", disk_gb=disk_gb + 1).allocatable.ephemeral_storage
    assert big > small


@pytest.mark.parametrize(
    "family",
    ["e2-standard", "n1-standard", "n1-highmem", "n1-highcpu", "n2-highmem", "g2-standard"],
)
def test_gke_bigger_machines_of_a_series_hold_more(family: str) -> None:
    rows = sorted(
        (m for m in GCE_MACHINES.values() if m.name.startswith(family + "-")), key=lambda m: m.vcpus
    )
    shapes = [gke_node_shape(m.name).allocatable for m in rows]
    assert all(a.cpu < b.cpu and a.memory < b.memory for a, b in itertools.pairwise(shapes))


def test_every_gke_gpu_machine_of_the_catalog_has_a_shape() -> None:
    for accelerator in GKE_ACCELERATORS.values():
        for machine_type, counts in accelerator.machines.items():
            if machine_type.endswith("-"):
                continue  # N1 families: checked by size below
            assert gke_node_shape(machine_type).capacity.gpus == counts[0], machine_type
    for size in (1, 2, 4, 8, 16, 32, 64, 96):
        assert gke_node_shape(f"n1-standard-{size}", gpus=1).capacity.cpu == size * 1000


# ---------------------------------------------------------------------------------------------
# Karpenter: its own numbers
# ---------------------------------------------------------------------------------------------


def test_karpenter_overhead_for_m5_xlarge_is_karpenters_test_expectation() -> None:
    # suite_test.go "Kube Reserved Resources / should use defaults": cpu 80m, memory 893Mi,
    # ephemeral-storage 1Gi; eviction 100Mi and ~2Gi for the default 20Gi root volume.
    shape = karpenter_node_shape("m5.xlarge", disk_gib=KARPENTER_DEFAULT_ROOT_VOLUME_GIB)
    eviction_and_kube = shape.reserved
    assert eviction_and_kube.cpu == 80
    assert eviction_and_kube.memory == (893 + 100) * Mi
    assert eviction_and_kube.ephemeral_storage == 1 * Gi + 2 * Gi
    # capacity: 16384 MiB less ceil(7.5%) = 1229 MiB; 4 ENIs x 14 + 2 pods
    assert shape.capacity == Resources(
        cpu=4000, memory=15155 * Mi, ephemeral_storage=20 * Gi, pods=58, gpus=0
    )
    assert shape.allocatable == Resources(
        cpu=3920, memory=14162 * Mi, ephemeral_storage=17 * Gi, pods=58, gpus=0
    )


@pytest.mark.parametrize(
    ("ami_family", "pods", "kube_reserved_memory_mib"),
    # suite_test.go "should set max-pods to user-defined value": t3.large with maxPods 10
    [("AL2023", 10, 640), ("Bottlerocket", 10, 365)],
)
def test_karpenter_max_pods_and_memory_overhead_per_ami_family(
    ami_family: str, pods: int, kube_reserved_memory_mib: int
) -> None:
    shape = karpenter_node_shape("t3.large", ami_family=ami_family, max_pods=10)
    assert shape.capacity.pods == pods
    assert shape.reserved.memory == (kube_reserved_memory_mib + 100) * Mi


def test_karpenter_default_max_pods_is_the_eni_limit() -> None:
    # suite_test.go "should default max pods based off of network interfaces": t3.large 35,
    # m6idn.32xlarge 394 (8 ENIs on its default card of 2, 50 IPv4 each: vpclimits v1.14.1)
    assert karpenter_node_shape("t3.large").capacity.pods == 35
    m6idn = Ec2Instance("m6idn.32xlarge", 128, 524288, 8, 50, "x86_64")
    assert eni_max_pods(m6idn) == 394
    assert eni_max_pods(m6idn, reserved_enis=8) == 0


@pytest.mark.parametrize(
    ("instance_type", "memory", "cpu"),
    # suite_test.go "shouldn't report more resources than are actually available": what the
    # kubelet reported on launched nodes; Karpenter's estimate must not exceed it.
    [("m5.large", 7_220_184 * Ki, 1930)],
)
def test_karpenter_never_promises_more_than_a_launched_node_reported(
    instance_type: str, memory: int, cpu: int
) -> None:
    allocatable = karpenter_node_shape(instance_type).allocatable
    assert allocatable.memory <= memory
    assert allocatable.cpu <= cpu


def test_karpenter_graviton_loses_64mib_before_the_overhead() -> None:
    shape = karpenter_node_shape("g5g.xlarge")
    assert shape.capacity.memory == (8192 - 64 - 610) * Mi  # ceil(8128 * 0.075) = 610
    assert shape.capacity.gpus == 1


def test_karpenter_refuses_unknown_types_and_families() -> None:
    with pytest.raises(InputError, match=re.escape("'m5.3xlarge' is not a known m5 size")) as err:
        karpenter_node_shape("m5.3xlarge")
    assert "m5.large, m5.xlarge" in err.value.allowed
    with pytest.raises(InputError, match="not in the node-shape catalog") as err:
        karpenter_node_shape("x2iedn.xlarge")
    assert "g6e.*" in err.value.allowed
    assert karpenter_node_shape_or_none("x2iedn.xlarge") is None
    with pytest.raises(InputError, match="AMI family 'AL2' is not modelled"):
        karpenter_node_shape("m5.large", ami_family="AL2")


# ---------------------------------------------------------------------------------------------
# EKS managed node groups (AL2023 nodeadm)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance_type", "eni_pods", "mng_pods"),
    [
        ("m5.large", 29, 29),  # 3 x (10 - 1) + 2
        ("m5.xlarge", 58, 58),
        ("g5.xlarge", 58, 58),
        ("g5.12xlarge", 737, 250),  # 48 vCPUs: managed node groups cap at 250
        ("g5.4xlarge", 234, 110),  # 16 vCPUs: capped at 110
        ("g6.8xlarge", 234, 234),  # 32 vCPUs: under the 250 cap
        ("g5.48xlarge", 345, 250),  # 7 ENIs on the default card
        ("p5.48xlarge", 100, 100),  # 2 ENIs on the default card of 32
        ("t3.large", 35, 35),
        ("g4dn.4xlarge", 29, 29),
    ],
)
def test_eks_max_pods(instance_type: str, eni_pods: int, mng_pods: int) -> None:
    assert eni_max_pods(EC2_INSTANCES[instance_type]) == eni_pods
    assert karpenter_node_shape(instance_type).capacity.pods == eni_pods  # no cap
    assert eks_node_shape(instance_type).capacity.pods == mng_pods
    # nodeadm reserves memory for its own ENI figure, whatever the managed node group caps
    assert eks_node_shape(instance_type).reserved.memory == (11 * eni_pods + 255 + 100) * Mi


# Measured EKS nodes (2i2c instance_capacities.yaml; eksctl node groups, whose kube-reserved is
# the same 11 x pods + 255 Mi): instance type -> (allocatable CPU m, allocatable memory GiB)
EKS_MEASURED = {
    "m5.large": (1930, 6.803),
    "m5.xlarge": (3920, 14.202),
    "r5.xlarge": (3920, 29.916),
    "r5.4xlarge": (15890, 121.492),
    "r5.16xlarge": (63770, 490.108),
    "g4dn.xlarge": (3920, 14.666),
    "g4dn.2xlarge": (7910, 30.227),
}


@pytest.mark.parametrize(("instance_type", "measured"), EKS_MEASURED.items())
def test_eks_allocatable_never_exceeds_measured_nodes(
    instance_type: str, measured: tuple[int, float]
) -> None:
    cpu, memory_gib = measured
    shape = eks_node_shape(instance_type)
    assert shape.allocatable.cpu == cpu
    # the 7.5% VM-overhead estimate errs low: by 63 MiB on m5.large, ~5% on r5.16xlarge
    assert 0.94 * memory_gib * Gi < shape.allocatable.memory <= memory_gib * Gi


def test_eks_ephemeral_storage_is_the_root_volume_less_1gi_and_10_percent() -> None:
    shape = eks_node_shape("g5.2xlarge", disk_gib=100)
    assert shape.allocatable.ephemeral_storage == 100 * Gi - Gi - kubelet_nodefs_eviction(100 * Gi)
    # eks-karpenter's 70B model: ~140 GB of weights do not fit a 100 GiB root volume
    assert shape.first_misfit(Resources(ephemeral_storage=140 * 10**9)) == "ephemeral-storage"


def test_eks_gpus() -> None:
    assert eks_node_shape("g5.12xlarge").capacity.gpus == 4
    assert eks_node_shape("g5.12xlarge", gpus=16).allocatable.gpus == 16  # time-sliced
    with pytest.raises(InputError, match=re.escape("m5.large has no NVIDIA GPUs")):
        eks_node_shape("m5.large", gpus=1)
    assert eks_node_shape_or_none("m5.3xlarge") is None
    with pytest.raises(InputError, match="for an EKS node group"):
        eks_node_shape("m5.3xlarge")


@given(
    st.sampled_from(sorted(EC2_INSTANCES)),
    st.integers(min_value=8, max_value=4000),
)
def test_aws_allocatable_is_positive_below_capacity_and_grows_with_the_disk(
    instance_type: str, disk_gib: int
) -> None:
    for build in (eks_node_shape, karpenter_node_shape):
        shape: NodeShape = build(instance_type, disk_gib=disk_gib)
        assert all(amount >= 0 for _, amount in shape.reserved.items())
        assert shape.allocatable.cpu > 0 and shape.allocatable.ephemeral_storage > 0
        bigger = build(instance_type, disk_gib=disk_gib + 1).allocatable.ephemeral_storage
        assert bigger > shape.allocatable.ephemeral_storage
    small_memory = EC2_INSTANCES[instance_type].memory_mib <= 1024
    assert small_memory or karpenter_node_shape(instance_type).allocatable.memory > 0


def test_every_aws_gpu_instance_of_the_catalog_has_a_shape() -> None:
    for name, gpu in AWS_GPU_INSTANCES.items():
        assert EC2_INSTANCES[name].arch == gpu.arch, name
        assert karpenter_node_shape(name).capacity.gpus == gpu.gpus


# ---------------------------------------------------------------------------------------------
# Existing nodes
# ---------------------------------------------------------------------------------------------


def test_existing_nodes_take_the_stack_declared_allocatable() -> None:
    shape = existing_node_shape(
        "gpu-rack",
        {
            "cpu": "32",
            "memory": "250Gi",
            "ephemeral-storage": "400Gi",
            "pods": 110,
            "nvidia.com/gpu": 4,
        },
    )
    expected = Resources(cpu=32_000, memory=250 * Gi, ephemeral_storage=400 * Gi, pods=110, gpus=4)
    assert shape.allocatable == shape.capacity == expected
    minimal = existing_node_shape("r", {"cpu": "3920m", "memory": 1000, "ephemeral-storage": "1G"})
    assert minimal.allocatable == Resources(3920, 1000, 10**9, 110, 0)


@pytest.mark.parametrize(
    ("allocatable", "message", "path"),
    [
        ({"cpu": "1", "memory": "1Gi"}, "must give ephemeral-storage", ""),
        (
            {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi", "gpu": 1},
            "'gpu' is not a resource",
            "gpu",
        ),
        (
            {"cpu": "one", "memory": "1Gi", "ephemeral-storage": "1Gi"},
            "not a valid quantity",
            "cpu",
        ),
        (
            {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi", "pods": "1.5"},
            "not a whole number",
            "pods",
        ),
        (["cpu"], "is not a mapping", ""),
    ],
)
def test_existing_nodes_refuse_bad_declarations(
    allocatable: object, message: str, path: str
) -> None:
    with pytest.raises(InputError, match=message) as err:
        existing_node_shape("n", allocatable)  # type: ignore[arg-type]
    assert err.value.path == path
