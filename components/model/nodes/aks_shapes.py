"""What one AKS GPU node holds allocatable: an agent pool's node (AKS's reservations), a node
auto-provisioning node (Karpenter on Azure's own), and what Karpenter believes before launching.

Pure logic (imports nothing but `components.model`). The placement check judges fit with
`aks_node_shape` / `nap_node_shape`; the Karpenter model offers `karpenter_azure_overhead`.

INTERFACE:
- `aks_cpu_reserved(vcpus)`, `aks_memory_reserved(memory_mib, max_pods, version)`,
  `aks_eviction_memory(version)`, `aks_ephemeral_capacity(os_disk_gib)`
- `aks_node_shape(vm_size, *, os_disk_gb=128, max_pods=None, kubernetes_version=None)` and
  `aks_node_shape_or_none(...)`: a node of an agent pool
- `AKS_MEASURED_MEMTOTAL`, `aks_memory_capacity(vm)`, `aks_memory_uncertainty(vm)`: its memory
  capacity, from the measured nodes
- `karpenter_azure_overhead(vm)`: (capacity, kube-reserved, eviction) as Karpenter on Azure
  computes them; `nap_node_shape(vm_size, *, os_disk_gb=128, max_pods=None)`: its node

Sources:
- AKS "Node resource reservations" (MicrosoftDocs/azure-aks-docs `articles/aks/
  node-resource-reservations.md` @fb060abe): kube-reserved CPU 60/100/140/180/260/420/740
  millicores for 1/2/4/8/16/32/64 cores (6% of the first core, 4% of the second, 2% of the next
  two, 1% of each core above 4: the brackets Karpenter on Azure encodes, below); memory from AKS
  1.29: min(20 MB x max pods + 50 MB, 25% of the VM's memory) and an eviction threshold of 100
  Mi; before 1.29: 25% of the first 4 GB, 20% of the next 4, 10% of the next 8, 6% of the next
  112, 2% above 128 GB, and 750 Mi eviction. AKS sets no system-reserved.
  Checked against real AKS nodes (`kubectl describe node` output published on GitHub; the
  tests hold them): 2 vCPU / 7 GiB and 24 vCPU / 220 GiB (before 1.29), 2 vCPU / 8 GiB (110
  pods) and 4 vCPU / 32 GiB (250 pods) from 1.29: CPU to the millicore, memory reserved to the
  MiB with "MB" read as MiB, the brackets applied to the VM size's memory and the result
  truncated to whole MiB.
- Memory capacity: the kubelet reports the kernel's MemTotal, 1.69-3.29% below the VM size's
  memory on those nodes (`AKS_MEASURED_MEMTOTAL`); no AKS rule states it. An agent pool's node
  is taken at the top of that range (the A100 node's own 226783616Ki: allocatable 215.54 GiB
  with 30 pods from 1.29), and `aks_memory_uncertainty` is what the bottom of the range takes
  off it: a pod that fits only the top is not judged (the check's GI063), never an error. A NAP
  node keeps Karpenter on Azure's estimate (below), which is what Karpenter itself decides by.
- Ephemeral storage: the kubelet's filesystem on the OS disk. A 128 GiB OS disk reports
  129886128Ki (every AKS node in those outputs, managed or ephemeral OS disk) and allocatable
  119703055367 bytes: capacity less the kubelet's `nodefs.available<10%`. Other sizes are scaled
  from that one measured point (an estimate).
- Max pods: the agent pool's `maxPods`; when not set, AKS's default depends on the network plugin
  (30 for Azure CNI, 110 for kubenet, 250 for Azure CNI Overlay: Azure/karpenter-provider-azure
  v1.14.2 `pkg/consts/consts.go`, "match the aks defaults"), so the node is taken with 30 pods and
  the memory reserved for 250 (each the least favourable).
- Karpenter on Azure v1.14.2 `pkg/providers/instancetype/instancetype.go`: capacity = vCPUs,
  memory GiB (whole GiB) less ceil(7.5%), `osDiskSizeGB` x 10^9 ephemeral storage, max pods;
  kube-reserved by its `TaxBrackets` (CPU: 6% of the first core, 4%, 2% to 4 cores, 1% above;
  memory: 25%/20%/10%/6%/2% at 4/8/16/128 GiB, whatever the Kubernetes version), eviction
  `memory.available` 750Mi. It starts its nodes' kubelets with exactly these
  (`pkg/providers/imagefamily/resolver.go`: `--kube-reserved` from the instance type's overhead,
  `--eviction-hard` its threshold), so a NAP node's CPU and memory allocatable are Karpenter's
  own numbers (with its low memory estimate).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from ..errors import InputError, show
from .azure_vms import AzureGpuVm, azure_series_sizes, azure_vm, azure_vm_or_none
from .shapes import (
    Gi,
    Mi,
    NodeShape,
    Resources,
    cached_builder,
    kubelet_nodefs_eviction,
    register_shape_kind,
    whole_number,
)

AKS_DEFAULT_OS_DISK_GB = 128
"""The OS disk size a pool here gets unless told otherwise (what AKS itself picks for most GPU
sizes; `osDiskSizeGB` 0 means "AKS's default for the VM size")."""
AKS_MAX_PODS_RANGE = (10, 250)
"""AKS accepts 10..250 pods per node (AKSNodeClass CRD `maxPods` minimum/maximum, the same
bounds the AKS API enforces)."""
AKS_OS_DISK_MAX_GB = 2048  # AKSNodeClass CRD `osDiskSizeGB` maximum, the AKS API's bound too
AKS_DEFAULT_MAX_PODS = (30, 250)
"""Unknown network plugin: the fewest and the most pods AKS defaults to."""
AKS_MEMORY_RULE_CHANGE = (1, 29)
VM_MEMORY_OVERHEAD_PERCENT = 0.075  # Karpenter on Azure's default (`--vm-memory-overhead-percent`)
KARPENTER_EVICTION_MEMORY = 750 * Mi
# One measured point: a 128 GiB OS disk gives a 129886128Ki filesystem.
_MEASURED_DISK_GIB, _MEASURED_CAPACITY = 128, 129886128 * 1024
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")
AKS_MEASURED_MEMTOTAL: tuple[tuple[str, int, int], ...] = (
    ("Standard_D2_v2, kubelet v1.25.6", 7, 7098320),
    ("Standard_NC24ads_A100_v4, kubelet v1.27", 220, 226783616),
    ("8 vCPU / 32 GiB, v1.28 (AKS docs' describe node sample)", 32, 32863116),
    ("2 vCPU / 8 GiB, v1.32", 8, 8129936),
    ("4 vCPU / 32 GiB, v1.30", 32, 32865016),
    ("Standard_DC4s_v3, v1.31", 32, 32864252),
)
"""(node, VM size memory GiB, the kubelet's memory capacity in Ki) of real AKS nodes
(`kubectl describe node` outputs published on GitHub; the tests hold their reservations)."""
_MEMTOTAL_RATIOS = sorted(Fraction(ki, gib * 1024 * 1024) for _, gib, ki in AKS_MEASURED_MEMTOTAL)
MEMTOTAL_RANGE = (_MEMTOTAL_RATIOS[0], _MEMTOTAL_RATIOS[-1])
"""The least and the most of the VM size's memory the measured nodes report (exact ratios)."""

_SOURCE = (
    "AKS agent pool: Azure Resource SKU API (cluster-autoscaler-1.36.1 azure_instance_types.go); "
    "kube-reserved CPU and memory and eviction by AKS's node resource reservations (AKS docs, "
    "1.29 rule); memory capacity 1.69% below the VM size's, the least shortfall measured on AKS "
    "nodes (1.69-3.29%); ephemeral storage scaled from a measured 128 GiB OS disk, less 10% "
    "nodefs eviction"
)
_NAP_SOURCE = (
    "AKS node auto-provisioning: Karpenter on Azure v1.14.2 instancetype.go (its kube-reserved "
    "brackets, 750Mi eviction, 7.5% memory overhead, which its nodes' kubelets are started "
    "with); ephemeral storage as an AKS node's OS disk, less 10% nodefs eviction"
)


def parse_kubernetes_version(version: object) -> tuple[int, int] | None:
    """`1.33`, `1.33.2` or `v1.33.2` -> (1, 33); None for anything else."""
    m = _VERSION.match(version) if isinstance(version, str) else None
    return (int(m.group(1)), int(m.group(2))) if m else None


def aks_cpu_reserved(vcpus: int) -> int:
    """AKS's kube-reserved CPU in millicores (the docs' table, exact in whole millicores)."""
    cores = whole_number(vcpus, "vcpus", 1)
    reserved = 60
    if cores > 1:
        reserved += 40
    if cores > 2:
        reserved += 20 * (min(cores, 4) - 2)
    if cores > 4:
        reserved += 10 * (cores - 4)
    return reserved


def _brackets(amount: float, brackets: tuple[tuple[float, float], ...]) -> float:
    """Karpenter on Azure's `TaxBrackets.Calculate`, in the same float64 order."""
    tax, lower = 0.0, 0.0
    for upper_bound, rate in brackets:
        if lower > amount:
            continue
        upper = min(upper_bound, amount)
        tax += (upper - lower) * rate
        lower = upper_bound
    return tax


_MEMORY_BRACKETS = ((4.0, 0.25), (8.0, 0.20), (16.0, 0.10), (128.0, 0.06), (math.inf, 0.02))
_CPU_BRACKETS = ((1.0, 0.06), (2.0, 0.04), (4.0, 0.02), (math.inf, 0.01))


def aks_memory_reserved(
    memory_mib: int, max_pods: int, version: tuple[int, int] | None = None
) -> int:
    """AKS's kube-reserved memory in bytes for a VM size's memory: from 1.29 (and for an unknown
    version, every AKS version supported today being later) the lesser of 20 MiB per pod + 50
    MiB and 25% of the memory; before, the regressive brackets truncated to whole MiB."""
    if version is None or version >= AKS_MEMORY_RULE_CHANGE:
        return min(20 * max_pods + 50, memory_mib // 4) * Mi
    return int(1024 * _brackets(memory_mib / 1024, _MEMORY_BRACKETS)) * Mi


def aks_eviction_memory(version: tuple[int, int] | None = None) -> int:
    """The kubelet's `memory.available` hard-eviction threshold on AKS nodes."""
    return 100 * Mi if version is None or version >= AKS_MEMORY_RULE_CHANGE else 750 * Mi


def aks_ephemeral_capacity(os_disk_gib: int) -> int:
    """The kubelet's ephemeral-storage capacity on an OS disk of this size (the filesystem, scaled
    from the 128 GiB point measured on AKS nodes; rounded down to KiB)."""
    return (_MEASURED_CAPACITY * os_disk_gib // _MEASURED_DISK_GIB) // 1024 * 1024


def aks_memory_capacity(vm: AzureGpuVm, ratio: Fraction = MEMTOTAL_RANGE[1]) -> int:
    """An agent pool node's memory capacity in bytes: the VM size's memory at `ratio` (default
    the top of the measured range), rounded down to KiB as the kubelet reports it."""
    return math.floor(vm.memory_mib * 1024 * ratio) * 1024


def aks_memory_uncertainty(vm: AzureGpuVm) -> int:
    """Bytes between the top and the bottom of the measured range for this VM size: what a node
    may have less than its shape says."""
    return aks_memory_capacity(vm) - aks_memory_capacity(vm, MEMTOTAL_RANGE[0])


def _memory_capacity(vm: AzureGpuVm) -> int:
    """Karpenter on Azure's `CalculateMemoryWithoutOverhead`: whole GiB less ceil(7.5%)."""
    memory = int(vm.memory_gib) * Gi
    return memory - math.ceil(float(memory) * VM_MEMORY_OVERHEAD_PERCENT)


def _max_pods(max_pods: object) -> int | None:
    if max_pods is None:
        return None
    low, high = AKS_MAX_PODS_RANGE
    pods = whole_number(max_pods, "max_pods", low)
    if pods > high:
        raise InputError(f"max_pods {pods} is above AKS's {high}", f"{low} to {high}")
    return pods


def _unknown(vm_size: object) -> InputError:
    try:
        azure_vm(vm_size)
    except InputError as e:
        return e
    return InputError(f"VM size {show(vm_size)} is not in the catalog", "a catalog size")


def aks_node_shape_or_none(
    vm_size: str,
    *,
    os_disk_gb: int = AKS_DEFAULT_OS_DISK_GB,
    max_pods: int | None = None,
    kubernetes_version: str | None = None,
) -> NodeShape | None:
    """Like `aks_node_shape`, but None when the VM size is not in the catalog."""
    vm = azure_vm_or_none(vm_size)
    if vm is None:
        return None
    return _aks_shape(vm, os_disk_gb, max_pods, kubernetes_version)


def aks_node_shape(
    vm_size: str,
    *,
    os_disk_gb: int = AKS_DEFAULT_OS_DISK_GB,
    max_pods: int | None = None,
    kubernetes_version: str | None = None,
) -> NodeShape:
    """A node of an AKS agent pool of `vm_size` with an `os_disk_gb` OS disk (AKS sizes it in
    GiB), `max_pods` pods (None: AKS's default, not known here) on AKS `kubernetes_version`
    (None: 1.29 or later)."""
    vm = azure_vm_or_none(vm_size)
    if vm is None:
        raise _unknown(vm_size)
    return _aks_shape(vm, os_disk_gb, max_pods, kubernetes_version)


@cached_builder
def _aks_shape(
    vm: AzureGpuVm, os_disk_gb: object, max_pods: object, kubernetes_version: object
) -> NodeShape:
    disk = whole_number(os_disk_gb, "os_disk_gb", 1)
    pods = _max_pods(max_pods)
    version = None
    if kubernetes_version is not None:
        version = parse_kubernetes_version(kubernetes_version)
        if version is None:
            raise InputError(
                f"Kubernetes version {show(kubernetes_version)} is not MAJOR.MINOR[.PATCH]",
                "e.g. 1.33 or 1.33.2",
            )
    storage = aks_ephemeral_capacity(disk)
    capacity = Resources(
        cpu=vm.vcpus * 1000,
        memory=aks_memory_capacity(vm),
        ephemeral_storage=storage,
        pods=pods if pods is not None else AKS_DEFAULT_MAX_PODS[0],
        gpus=vm.gpus,
    )
    reserved_pods = pods if pods is not None else AKS_DEFAULT_MAX_PODS[1]
    allocatable = Resources(
        cpu=capacity.cpu - aks_cpu_reserved(vm.vcpus),
        memory=capacity.memory
        - aks_memory_reserved(vm.memory_mib, reserved_pods, version)
        - aks_eviction_memory(version),
        ephemeral_storage=storage - kubelet_nodefs_eviction(storage),
        pods=capacity.pods,
        gpus=capacity.gpus,
    )
    options = (
        ("os_disk_gb", os_disk_gb),
        ("max_pods", max_pods),
        ("kubernetes_version", kubernetes_version),
    )
    return NodeShape(vm.name, capacity, allocatable, _SOURCE, "aks", options)


# ---------------------------------------------------------------------------------------------
# Karpenter on Azure (node auto-provisioning)
# ---------------------------------------------------------------------------------------------


def karpenter_azure_overhead(
    vm: AzureGpuVm, os_disk_gb: int = AKS_DEFAULT_OS_DISK_GB, max_pods: int = 250
) -> tuple[Resources, Resources, Resources]:
    """(capacity, kube-reserved, eviction threshold) as Karpenter on Azure v1.14.2 computes them
    for an instance type (`computeCapacity`, `KubeReservedResources`, `EvictionThreshold`)."""
    capacity = Resources(
        cpu=vm.vcpus * 1000,
        memory=_memory_capacity(vm),
        ephemeral_storage=os_disk_gb * 1000**3,
        pods=max_pods,
        gpus=vm.gpus,
    )
    kube_reserved = Resources(
        cpu=int(1000 * _brackets(float(vm.vcpus), _CPU_BRACKETS)),
        memory=int(1024 * _brackets(vm.memory_gib, _MEMORY_BRACKETS)) * Mi,
    )
    return capacity, kube_reserved, Resources(memory=KARPENTER_EVICTION_MEMORY)


def nap_node_shape(
    vm_size: str, *, os_disk_gb: int = AKS_DEFAULT_OS_DISK_GB, max_pods: int | None = None
) -> NodeShape:
    """A node Karpenter on Azure launches: its kubelet reservations are Karpenter's own; the
    ephemeral storage is the OS disk's filesystem less the kubelet's 10% nodefs threshold (not
    Karpenter's `osDiskSizeGB` x 10^9, which over-counts it). `max_pods` None: the AKSNodeClass
    leaves it to the network plugin's default (30 taken)."""
    vm = azure_vm_or_none(vm_size)
    if vm is None:
        raise _unknown(vm_size)
    return _nap_shape(vm, os_disk_gb, max_pods)


@cached_builder
def _nap_shape(vm: AzureGpuVm, os_disk_gb: object, max_pods: object) -> NodeShape:
    disk = whole_number(os_disk_gb, "os_disk_gb", 1)
    pods = _max_pods(max_pods)
    capacity, kube_reserved, eviction = karpenter_azure_overhead(
        vm, disk, pods if pods is not None else AKS_DEFAULT_MAX_PODS[0]
    )
    storage = aks_ephemeral_capacity(disk)
    capacity = Resources(
        cpu=capacity.cpu,
        memory=capacity.memory,
        ephemeral_storage=storage,
        pods=capacity.pods,
        gpus=capacity.gpus,
    )
    allocatable = capacity - kube_reserved - eviction
    allocatable = Resources(
        cpu=allocatable.cpu,
        memory=allocatable.memory,
        ephemeral_storage=storage - kubelet_nodefs_eviction(storage),
        pods=allocatable.pods,
        gpus=allocatable.gpus,
    )
    options = (("os_disk_gb", os_disk_gb), ("max_pods", max_pods))
    return NodeShape(vm.name, capacity, allocatable, _NAP_SOURCE, "nap", options)


def nap_node_shape_or_none(
    vm_size: str, *, os_disk_gb: int = AKS_DEFAULT_OS_DISK_GB, max_pods: int | None = None
) -> NodeShape | None:
    """Like `nap_node_shape`, but None when the VM size is not in the catalog."""
    vm = azure_vm_or_none(vm_size)
    return None if vm is None else _nap_shape(vm, os_disk_gb, max_pods)


def _series_sizes(shape: NodeShape) -> list[str]:
    vm = azure_vm_or_none(shape.name)
    return azure_series_sizes(vm.series) if vm is not None else []


register_shape_kind("aks", aks_node_shape_or_none, "os_disk_gb", _series_sizes, AKS_OS_DISK_MAX_GB)
register_shape_kind("nap", nap_node_shape_or_none, "os_disk_gb", _series_sizes, AKS_OS_DISK_MAX_GB)
