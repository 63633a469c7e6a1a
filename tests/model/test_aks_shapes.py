"""Azure GPU VM sizes and AKS node shapes, held to the sources named in
`components.model.nodes.azure_vms` and `aks_shapes`.

The observed nodes are `kubectl describe node` outputs of real AKS nodes published on GitHub
(capacity and allocatable as the kubelet reported them); the expected size-name parts are what
Azure/skewer v0.0.24 `GetVMSize` returns for each catalog name (run on them, values transcribed).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.model.errors import InputError
from components.model.nodes.aks_shapes import (
    aks_cpu_reserved,
    aks_ephemeral_capacity,
    aks_eviction_memory,
    aks_memory_reserved,
    aks_node_shape,
    aks_node_shape_or_none,
    karpenter_azure_overhead,
    nap_node_shape,
    parse_kubernetes_version,
)
from components.model.nodes.azure_vms import (
    AZURE_GPU_VMS,
    azure_series_sizes,
    azure_vm,
    parse_vm_size,
)
from components.model.nodes.gpus import GPU_MODELS
from components.model.nodes.shapes import (
    Gi,
    Ki,
    Mi,
    Resources,
    disk_to_hold,
    kubelet_nodefs_eviction,
    larger_to_hold,
    reshaped,
)

# (vCPUs, memory GiB of the VM size, pods, kubelet version, capacity Ki, allocatable Ki, cpu m)
OBSERVED = [
    # Standard_D2_v2, kubelet v1.25.6 (2023-07-20)
    (2, 7, 110, (1, 25), 7098320, 4653008, 1900),
    # Standard_NC24ads_A100_v4, 30 pods (Azure CNI), before 1.29
    (24, 220, 30, (1, 27), 226783616, 214314368, 23660),
    # 8 vCPU / 32 GiB, 110 pods, before 1.29 (AKS docs' own "kubectl describe node" sample)
    (8, 32, 110, (1, 28), 32863116, 28362636, 7820),
    # 2 vCPU / 8 GiB, 110 pods, 2025-10-30
    (2, 8, 110, (1, 32), 8129936, 5930384, 1900),
    # 4 vCPU / 32 GiB, 250 pods (Azure CNI Overlay), 2025-02-21
    (4, 32, 250, (1, 30), 32865016, 27591416, 3860),
    # Standard_DC4s_v3, 250 pods, 2025-06
    (4, 32, 250, (1, 31), 32864252, 27590652, 3860),
]


@pytest.mark.parametrize("vcpus,gib,pods,version,capacity,allocatable,cpu", OBSERVED)
def test_reservations_reproduce_observed_aks_nodes(
    vcpus: int,
    gib: int,
    pods: int,
    version: tuple[int, int],
    capacity: int,
    allocatable: int,
    cpu: int,
) -> None:
    reserved = aks_memory_reserved(gib * 1024, pods, version) + aks_eviction_memory(version)
    assert reserved == (capacity - allocatable) * Ki
    assert vcpus * 1000 - aks_cpu_reserved(vcpus) == cpu


def test_cpu_reservation_is_the_docs_table() -> None:
    table = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
    assert {c: aks_cpu_reserved(c) for c in table} == table


def test_memory_rule_changes_at_1_29() -> None:
    # 25% of 8 GiB is below 20 MiB x 110 + 50 MiB: the lesser wins from 1.29.
    assert aks_memory_reserved(8 * 1024, 110, (1, 29)) == 2048 * Mi
    assert aks_memory_reserved(8 * 1024, 110, (1, 28)) == int(1024 * 1.8) * Mi
    assert aks_memory_reserved(220 * 1024, 30, None) == 650 * Mi
    assert (aks_eviction_memory((1, 28)), aks_eviction_memory(None)) == (750 * Mi, 100 * Mi)


def test_a_128_gib_os_disk_gives_what_aks_nodes_report() -> None:
    capacity = aks_ephemeral_capacity(128)
    assert capacity == 129886128 * Ki
    assert capacity - kubelet_nodefs_eviction(capacity) == 119703055367


def test_agent_pool_node_errs_low_against_the_observed_a100_node() -> None:
    shape = aks_node_shape("Standard_NC24ads_A100_v4", max_pods=30, kubernetes_version="1.27")
    assert shape.allocatable.cpu == 23660
    assert shape.allocatable.memory <= 214314368 * Ki
    assert shape.allocatable.ephemeral_storage == 119703055367
    assert (shape.capacity.gpus, shape.capacity.pods) == (1, 30)


def test_unknown_max_pods_takes_the_least_favourable_defaults() -> None:
    unknown = aks_node_shape("Standard_NC4as_T4_v3")
    assert unknown.allocatable.pods == 30
    assert unknown.reserved.memory == 5050 * Mi + 100 * Mi  # reserved as for 250 pods


@pytest.mark.parametrize(
    "kwargs,problem",
    [
        ({"max_pods": 5}, "max_pods 5 is not a whole number >= 10"),
        ({"max_pods": 251}, "max_pods 251 is above AKS's 250"),
        ({"kubernetes_version": "latest"}, "Kubernetes version 'latest' is not MAJOR.MINOR"),
        ({"os_disk_gb": 0}, "os_disk_gb 0 is not a whole number >= 1"),
    ],
)
def test_bad_shape_options_are_refused(kwargs: dict, problem: str) -> None:
    with pytest.raises(InputError) as e:
        aks_node_shape("Standard_NC4as_T4_v3", **kwargs)
    assert e.value.problem.startswith(problem)


def test_karpenter_azure_numbers() -> None:
    """instancetype.go for Standard_NC24ads_A100_v4 (24 vCPUs, 220 GiB, 1 GPU): capacity memory
    220Gi less ceil(7.5%), ephemeral osDiskSizeGB x 10^9; kube-reserved 340m and the memory
    brackets (11.16 GiB, truncated to MiB); eviction 750Mi."""
    vm = azure_vm("Standard_NC24ads_A100_v4")
    capacity, reserved, eviction = karpenter_azure_overhead(vm, 128, 250)
    assert capacity == Resources(24000, 220 * Gi - 17716740096, 128 * 10**9, 250, 1)
    assert reserved == Resources(cpu=340, memory=11427 * Mi)
    assert eviction == Resources(memory=750 * Mi)
    node = nap_node_shape("Standard_NC24ads_A100_v4", max_pods=250)
    assert node.allocatable.memory == capacity.memory - 11427 * Mi - 750 * Mi
    assert node.allocatable.ephemeral_storage == 119703055367


def test_fixes_reshape_aks_nodes_within_their_series() -> None:
    shape = aks_node_shape("Standard_NC24ads_A100_v4")
    bigger = larger_to_hold(shape, Resources(cpu=40_000))
    assert bigger is not None and bigger.name == "Standard_NC48ads_A100_v4"
    disk = disk_to_hold(shape, Resources(ephemeral_storage=500 * Gi))
    assert disk is not None and 500 < disk <= 2048
    assert reshaped(shape, disk=disk).allocatable.ephemeral_storage >= 500 * Gi  # type: ignore[union-attr]
    assert disk_to_hold(shape, Resources(ephemeral_storage=3000 * Gi)) is None  # past 2048 GiB


# ---------------------------------------------------------------------------------------------
# The catalog
# ---------------------------------------------------------------------------------------------

SKEWER = {  # name -> (series, version, accelerator), skewer v0.0.24 GetVMSize
    "Standard_NC4as_T4_v3": ("NCas_v3", "3", "T4"),
    "Standard_NC64as_T4_v3": ("NCas_v3", "3", "T4"),
    "Standard_NC8ads_A10_v4": ("NCads_v4", "4", "A10"),
    "Standard_NV36adms_A10_v5": ("NVadms_v5", "5", "A10"),
    "Standard_NV72ads_A10_v5": ("NVads_v5", "5", "A10"),
    "Standard_NC24ads_A100_v4": ("NCads_v4", "4", "A100"),
    "Standard_NC80adis_H100_v5": ("NCadis_v5", "5", "H100"),
    "Standard_ND96asr_v4": ("NDasr_v4", "4", None),
    "Standard_ND96amsr_A100_v4": ("NDamsr_v4", "4", "A100"),
    "Standard_ND96isr_H100_v5": ("NDisr_v5", "5", "H100"),
    "Standard_ND96isr_H200_v5": ("NDisr_v5", "5", "H200"),
}


@pytest.mark.parametrize("name,expected", sorted(SKEWER.items()))
def test_size_names_parse_as_skewer_parses_them(name: str, expected: tuple) -> None:
    parts = parse_vm_size(name)
    assert parts is not None
    assert (parts.family, parts.series, parts.version, parts.accelerator) == ("N", *expected)


def test_every_catalog_size_parses_and_names_its_gpu_unless_the_name_does_not() -> None:
    for name, vm in AZURE_GPU_VMS.items():
        parts = parse_vm_size(name)
        assert parts is not None, name
        assert parts.accelerator in (vm.gpu_model, None), name


def test_catalog_rows_from_the_sources() -> None:
    """Spot checks against the SKU API figures (cluster-autoscaler's MemoryMb), size pages and
    cluster-autoscaler's `NvidiaEnabledSKUs`."""
    a100 = azure_vm("Standard_NC24ads_A100_v4")
    assert (a100.vcpus, a100.memory_mib, a100.gpus, a100.gpu_memory_gib) == (24, 225280, 1, 80)
    assert azure_vm("Standard_ND96amsr_A100_v4").memory_mib == 1843200  # SKU API, not 1900
    assert azure_vm("Standard_ND96asr_v4").gpu_memory_gib == 40
    assert azure_vm("Standard_NC40ads_H100_v5").gpu_memory_gib == 94  # H100 NVL
    assert azure_vm("Standard_NV6ads_A10_v5").gpu_share == "1/6"
    assert azure_vm("Standard_NC32ads_A10_v4").temp_disk_gib is None
    labelled = {n for n, v in AZURE_GPU_VMS.items() if v.ca_accelerator_label}
    assert {"Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_ND96asr_v4"} <= labelled
    assert not labelled & {"Standard_NV36ads_A10_v5", "Standard_ND96isr_H100_v5"}


@given(st.sampled_from(sorted(AZURE_GPU_VMS)))
def test_a_size_is_its_row_and_its_gpu_record(name: str) -> None:
    vm = AZURE_GPU_VMS[name]
    gpu = next(g for g in GPU_MODELS.values() if g.azure == vm.gpu_model)
    assert vm.gpus >= 1 and vm.vcpus >= 1
    if vm.gpu_share is None:
        assert vm.gpu_memory_gib in {
            g.memory_gib for g in GPU_MODELS.values() if g.azure == vm.gpu_model
        }
    else:  # a slice of one GPU: its share of the whole GPU's memory
        part, whole = (int(x) for x in vm.gpu_share.split("/"))
        assert vm.gpu_memory_gib * whole == part * (gpu.memory_gib or 0)
    same_series = [AZURE_GPU_VMS[n] for n in azure_series_sizes(vm.series)]
    assert {(v.gpu_model, v.ca_accelerator_label) for v in same_series} == {
        (vm.gpu_model, vm.ca_accelerator_label)
    }
    assert aks_node_shape(name).capacity.gpus == vm.gpus


@pytest.mark.parametrize(
    "name,problem",
    [
        ("standard_nc24ads_a100_v4", "VM size 'standard_nc24ads_a100_v4' is spelled"),
        ("Standard_NC6s_v3", "Standard_NC6s_v3 has NVIDIA GPUs, but its series is retired"),
        ("Standard_ND96isr_MI300X_v5", "Standard_ND96isr_MI300X_v5 has AMD GPUs"),
        ("Standard_D4s_v5", "Standard_D4s_v5 is not a GPU VM size"),
        ("NC24ads_A100_v4", "VM size 'NC24ads_A100_v4' is not an Azure VM size name"),
        (42, "VM size 42 is not an Azure VM size name"),
    ],
)
def test_unknown_sizes_are_refused_saying_why(name: object, problem: str) -> None:
    with pytest.raises(InputError) as e:
        azure_vm(name)
    assert e.value.problem.startswith(problem)
    assert aks_node_shape_or_none(name) is None  # type: ignore[arg-type]


def test_kubernetes_versions() -> None:
    assert parse_kubernetes_version("1.33") == (1, 33)
    assert parse_kubernetes_version("v1.29.4") == (1, 29)
    assert parse_kubernetes_version("1.x") is None
