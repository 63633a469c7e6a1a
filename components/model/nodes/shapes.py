"""Node shapes: what one node of a pool holds, as the kubelet will report it allocatable.

Pure logic (imports no Pulumi). The placement check uses these shapes to judge whether a pod's
requests fit a node of the pool it lands on; config validation uses them to refuse machine and
instance types the catalog does not know (never guessed).

INTERFACE:
- `Resources(cpu, memory, ephemeral_storage, pods, gpus)`: cpu in millicores, memory and
  ephemeral storage in bytes; `+`, `-`, `.max()`, `.fits_in()`, `.first_misfit()`, `.get()`
- `NodeShape(name, capacity, allocatable, source)`; `.reserved`, `.first_misfit(request)`
- `gke_node_shape(machine_type, *, disk_gb=100, gpus=None, max_pods=110, image="cos",
  local_ssds=0)` (GKE Standard)
- `eks_node_shape(instance_type, *, disk_gib=100, gpus=None)` (EKS managed node group, AL2023)
- `karpenter_node_shape(instance_type, *, disk_gib=100, ami_family="AL2023", max_pods=None,
  vm_memory_overhead_percent=0.075)` (Karpenter's own numbers, aws provider v1.14.1)
- `*_or_none` variants of the three: None when the type is not in the catalog ("fit unknown")
- `existing_node_shape(name, allocatable)`: a stack-declared allocatable (Kubernetes quantities)
- `RESOURCE_NAMES`, `format_resource(name, value)` (for messages)
- `reshaped(shape, name=, disk=)`, `disk_to_hold(shape, request)`, `larger_to_hold(shape,
  request)`: the same kind of node with another type or disk (what the fit findings propose)

Every refusal is an `InputError` naming the type and the known types of its family.
"""

from __future__ import annotations

import functools
import math
import operator
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any, TypeVar

from ..errors import InputError, show
from ..scheduling import parse_quantity
from .aws_instances import (
    EC2_INSTANCES,
    Ec2Instance,
    ec2_families,
    ec2_family_sizes,
    instance_store_gb,
)
from .catalog import gke_gpus_for_machine, gke_machine_series
from .gke_machines import (
    GCE_MACHINE_SOURCES,
    GceMachine,
    gce_families,
    gce_family_sizes,
    gce_machine_family,
    gce_machine_or_none,
)
from .gke_storage import (
    LOCAL_SSD_GIB,
    gce_kernel_reserved,
    gke_boot_disk_capacity,
    gke_local_ssd_capacity,
)
from .karpenter_kubelet import KarpenterKubelet, eviction, reserved

Ki = 1024
Mi = 1024 * Ki
Gi = 1024 * Mi

# Kubernetes resource name of each `Resources` field, in the order misfits are reported.
RESOURCE_NAMES: dict[str, str] = {
    "cpu": "cpu",
    "memory": "memory",
    "ephemeral_storage": "ephemeral-storage",
    "pods": "pods",
    "gpus": "nvidia.com/gpu",
}


@dataclass(frozen=True)
class Resources:
    """Amounts of the resources a node holds or a pod asks for (whole units, never fractions)."""

    cpu: int = 0  # millicores
    memory: int = 0  # bytes
    ephemeral_storage: int = 0  # bytes
    pods: int = 0
    gpus: int = 0  # nvidia.com/gpu

    def _zip(self, other: Resources) -> Iterator[tuple[str, int, int]]:
        for name in _FIELDS:
            yield name, getattr(self, name), getattr(other, name)

    # Field by field, positionally (the fit check and pod requests add and subtract these for
    # every container and node: a dict of keyword arguments each time was most of their cost).

    def __add__(self, other: Resources) -> Resources:
        return Resources(*map(operator.add, _values(self), _values(other)))

    def __sub__(self, other: Resources) -> Resources:
        return Resources(*map(operator.sub, _values(self), _values(other)))

    def max(self, other: Resources) -> Resources:
        """Per resource, the larger of the two (how the scheduler treats init containers)."""
        return Resources(*map(max, _values(self), _values(other)))

    def get(self, name: str) -> int:
        """The amount of a resource by its Kubernetes name (`cpu`, `ephemeral-storage`, ...)."""
        return int(getattr(self, _FIELD_OF[name]))

    def items(self) -> Iterator[tuple[str, int]]:
        """(Kubernetes name, amount) for every resource."""
        for field_name, k8s_name in RESOURCE_NAMES.items():
            yield k8s_name, getattr(self, field_name)

    def first_misfit(self, allocatable: Resources) -> str | None:
        """The Kubernetes name of the first resource asked for beyond `allocatable`, else None."""
        for name, asked, held in self._zip(allocatable):
            if asked > held:
                return RESOURCE_NAMES[name]
        return None

    def fits_in(self, allocatable: Resources) -> bool:
        a = allocatable  # every field, spelled out: the fit check calls this for every node
        return (
            self.cpu <= a.cpu
            and self.memory <= a.memory
            and self.ephemeral_storage <= a.ephemeral_storage
            and self.pods <= a.pods
            and self.gpus <= a.gpus
        )


_FIELDS = tuple(f.name for f in fields(Resources))
_FIELD_OF = {k8s: name for name, k8s in RESOURCE_NAMES.items()}
_values = operator.attrgetter(*_FIELDS)


@dataclass(frozen=True)
class NodeShape:
    """One node of a pool: its capacity, what the kubelet leaves allocatable, and where the
    numbers come from."""

    name: str  # machine / instance type, or the existing nodes' name
    capacity: Resources
    allocatable: Resources
    source: str
    kind: str = "existing"  # "gke" | "eks" | "karpenter" | "existing"
    options: tuple[tuple[str, object], ...] = ()  # the builder's keyword arguments

    @property
    def reserved(self) -> Resources:
        """What the provider keeps back: kube-reserved, system-reserved and eviction thresholds."""
        return self.capacity - self.allocatable

    def first_misfit(self, request: Resources) -> str | None:
        return request.first_misfit(self.allocatable)


def format_resource(name: str, value: int) -> str:
    """An amount as a message shows it: `23870m` / `24` CPUs, `320.5Gi`, `110` pods."""
    if name == "cpu":
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if name in ("memory", "ephemeral-storage"):
        for unit, size in (("Ti", 1024 * Gi), ("Gi", Gi), ("Mi", Mi), ("Ki", Ki)):
            if abs(value) >= size:
                text = f"{value / size:.2f}".rstrip("0").rstrip(".")
                return f"{text}{unit}"
        return str(value)
    return str(value)


def format_apart(name: str, value: int, other: int) -> tuple[str, str]:
    """Two different amounts as a message compares them, never shown alike (`179Gi` against
    `179Gi`): where rounding would hide the difference, both are shown exactly."""
    a, b = format_resource(name, value), format_resource(name, other)
    if a == b and value != other:
        if name == "cpu":
            return f"{value}m", f"{other}m"
        return str(value), str(other)
    return a, b


# ---------------------------------------------------------------------------------------------
# Shared rules
# ---------------------------------------------------------------------------------------------

# The kubelet computes a percentage eviction threshold as
# `int64(float64(capacity.Value()) * float64(value.Percentage))` with `Percentage float32`
# (kubernetes/kubernetes `pkg/kubelet/eviction/api/types.go`, `GetThresholdQuantity`), so 10% is
# the float32 nearest 0.1. This reproduces GKE's published allocatable to the byte (see
# `gke_ephemeral_allocatable`).
_FLOAT32_TENTH: float = struct.unpack("f", struct.pack("f", 0.1))[0]


def kubelet_nodefs_eviction(capacity: int) -> int:
    """The kubelet's `nodefs.available<10%` hard-eviction threshold for a filesystem capacity."""
    return int(float(capacity) * _FLOAT32_TENTH)


_F = TypeVar("_F", bound=Callable[..., Any])


def cached_builder(build: _F) -> _F:
    """Memoise a shape builder (the fit findings rebuild shapes many times); arguments that are
    not hashable (bad input) go uncached, to the builder's own error."""
    memo = functools.lru_cache(maxsize=4096)(build)

    @functools.wraps(build)
    def wrapper(*args: Any) -> Any:
        try:
            return memo(*args)
        except TypeError as e:
            if "unhashable" not in str(e):
                raise
            return build(*args)

    return wrapper  # type: ignore[return-value]


_cached = cached_builder


def whole_number(value: object, what: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(
            f"{what} {show(value)} is not a whole number >= {minimum}",
            f"a whole number >= {minimum}",
        )
    return value


_whole = whole_number


# ---------------------------------------------------------------------------------------------
# GKE Standard node pools
# ---------------------------------------------------------------------------------------------

GKE_DEFAULT_MAX_PODS = 110  # GKE Standard's default maximum Pods per node
GKE_EVICTION_MEMORY = 100 * Mi  # kubelet evictionHard memory.available on GKE

# CPU kube-reserved: 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% of every
# core above 4, and 400m more when max Pods per node is above 110. Memory kube-reserved: 255 MiB
# on machines under 1 GiB, else 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6%
# of the next 112 and 2% above 128 GiB. These are the tables of GKE's docs page "Plan GKE
# Standard node sizes" (node allocatable resources), whose opening we could read but not the
# tables: the figures are transcribed from copies that cite that page (the CPU table in
# Karpenter's types.go and nodeadm's config.go, the memory table in kURL's docs, the +400m rule in
# Harvester's design docs) [secondary]. Checked against GKE nodes: CPU to the millicore for 2 to
# 64 vCPUs, memory within -4..+400 MiB (2i2c-org/infrastructure `deployer/commands/generate/
# resource_allocation/instance_capacities.yaml`, issue #2121, GKE 1.25; see the tests).
_GKE_CPU_BRACKETS = ((1000, Fraction(6, 100)), (1000, Fraction(1, 100)), (2000, Fraction(5, 1000)))
_GKE_CPU_ABOVE = Fraction(25, 10000)
_GKE_MEMORY_BRACKETS = (
    (4 * Gi, Fraction(25, 100)),
    (4 * Gi, Fraction(20, 100)),
    (8 * Gi, Fraction(10, 100)),
    (112 * Gi, Fraction(6, 100)),
)
_GKE_MEMORY_ABOVE = Fraction(2, 100)


def _tiered(amount: int, brackets: tuple[tuple[int, Fraction], ...], above: Fraction) -> Fraction:
    reserved = Fraction(0)
    for size, share in brackets:
        part = min(amount, size)
        reserved += part * share
        amount -= part
    return reserved + amount * above


def gke_cpu_reserved(millicores: int, max_pods: int = GKE_DEFAULT_MAX_PODS) -> int:
    """GKE's kube-reserved CPU (millicores, rounded up) for a node of `millicores` CPU."""
    reserved = math.ceil(_tiered(millicores, _GKE_CPU_BRACKETS, _GKE_CPU_ABOVE))
    return reserved + (400 if max_pods > GKE_DEFAULT_MAX_PODS else 0)


def gke_memory_reserved(machine_memory: int) -> int:
    """GKE's kube-reserved memory (bytes, rounded up to whole MiB) for a machine's memory.

    Applied to the machine type's memory (as the docs word it): against the GKE nodes measured
    by 2i2c (tests) this leaves allocatable at most 3 MiB above what the kubelet reported, and
    up to ~390 MiB below it on large nodes. Rounding to whole MiB is ours (not documented)."""
    if machine_memory < Gi:
        return 255 * Mi
    reserved = _tiered(machine_memory, _GKE_MEMORY_BRACKETS, _GKE_MEMORY_ABOVE)
    return math.ceil(reserved / Mi) * Mi


def gke_ephemeral_allocatable(capacity: int, disk_bytes: int) -> int:
    """Ephemeral storage allocatable on a GKE boot disk: capacity less the kubelet's 10% nodefs
    eviction threshold less GKE's kube-reserved storage, min(50% of disk, 6 GiB + 35% of disk,
    100 GiB) (GKE "Plan node sizes"). With the capacity GKE reports for a 100 GB disk
    (98831908Ki) this gives GKE's published 47060071478 bytes exactly."""
    reserved = min(-(-disk_bytes // 2), 6 * Gi + -(-35 * disk_bytes // 100), 100 * Gi)
    return capacity - kubelet_nodefs_eviction(capacity) - reserved


_GKE_SOURCE = (
    "GKE Standard: "
    + GCE_MACHINE_SOURCES
    + "; kube-reserved CPU/memory/ephemeral-storage by GKE's node allocatable tables "
    "(GKE docs 'Plan GKE Standard node sizes'); kernel memory and COS boot-disk overhead as "
    "kubernetes/autoscaler cluster-autoscaler-1.36.1 gce_reserved.go estimates them; eviction "
    "100Mi memory and 10% nodefs"
)


def _gke_unknown(machine_type: object) -> InputError:
    name = machine_type if isinstance(machine_type, str) else ""
    family = gce_machine_family(name)
    sizes = gce_family_sizes(family)
    if sizes:
        return InputError(
            f"machine type {show(machine_type)} is not a known {family} machine type",
            ", ".join(sizes),
        )
    return InputError(
        f"machine type {show(machine_type)} is not in the node-shape catalog (its vCPUs and "
        "memory are not known, so what its nodes hold cannot be judged)",
        "a machine type of these families: "
        + ", ".join(f"{f}-*" for f in gce_families())
        + ", or custom-<vCPUs>-<MiB>",
    )


def _gke_gpus(machine_type: str, gpus: object) -> int:
    built_in = gke_gpus_for_machine(machine_type)
    if gpus is None:
        return built_in[1] if built_in else 0
    count = _whole(gpus, "gpus")
    if count and built_in is None and gke_machine_series(machine_type) != "N1":
        raise InputError(
            f"{machine_type} takes no GPUs: GPUs attach to N1 machine types or come built into "
            "A2, A3, G2 and G4 machine types",
            "gpus: 0 on this machine type",
        )
    return count


def gke_node_shape_or_none(
    machine_type: str,
    *,
    disk_gb: int = 100,
    gpus: int | None = None,
    max_pods: int = GKE_DEFAULT_MAX_PODS,
    image: str = "cos",
    local_ssds: int = 0,
) -> NodeShape | None:
    """Like `gke_node_shape`, but None when the catalog has no shape for the machine type (it
    lacks it, or it is shared-core)."""
    machine = gce_machine_or_none(machine_type)
    if machine is None or machine.shared_core:
        return None
    return _gke_shape(machine, disk_gb, gpus, max_pods, image, local_ssds)


def gke_node_shape(
    machine_type: str,
    *,
    disk_gb: int = 100,
    gpus: int | None = None,
    max_pods: int = GKE_DEFAULT_MAX_PODS,
    image: str = "cos",
    local_ssds: int = 0,
) -> NodeShape:
    """A GKE Standard node of `machine_type` with a `disk_gb` boot disk (GKE's `diskSizeGb`,
    which Compute Engine sizes in GiB: cluster-autoscaler reads it as `DiskSizeGb * GiB`), its
    OS `image` (`cos` or `ubuntu`: `gke_storage`) and, with `local_ssds`, ephemeral storage on
    that many local SSDs (`ephemeralStorageLocalSsdConfig.localSsdCount`) instead of the boot
    disk.

    `gpus` is the `nvidia.com/gpu` the node advertises: None means the GPUs the machine type
    comes with (0 for N1, which takes them attached: pass the count); a time-shared pool
    advertises more. On local SSDs GKE's kube-reserved ephemeral storage is taken as on a boot
    disk of their raw size (at most 100 GiB): GKE's own table for local SSDs could not be read,
    and this errs low."""
    machine = gce_machine_or_none(machine_type)
    if machine is None:
        raise _gke_unknown(machine_type)
    return _gke_shape(machine, disk_gb, gpus, max_pods, image, local_ssds)


@_cached
def _gke_shape(
    machine: GceMachine,
    disk_gb: object,
    gpus: object,
    max_pods: object,
    image: object = "cos",
    local_ssds: object = 0,
) -> NodeShape:
    if image not in ("cos", "ubuntu"):
        raise InputError(f"image {show(image)} is not modelled", "cos, ubuntu")
    if machine.shared_core:
        raise InputError(
            f"{machine.name} is a shared-core machine type: GKE's CPU reservation for it is "
            "not known here",
            "a machine type with whole vCPUs (e.g. e2-standard-2)",
        )
    disk = _whole(disk_gb, "disk_gb", 1) * Gi
    pods = _whole(max_pods, "max_pods", 1)
    ssds = _whole(local_ssds, "local_ssds", 0)
    memory = machine.memory_mib * Mi
    cpu = machine.vcpus * 1000
    if ssds:
        raw = ssds * LOCAL_SSD_GIB * Gi
        storage = gke_local_ssd_capacity(ssds, str(image))
        ephemeral = gke_ephemeral_allocatable(storage, raw)
    else:
        storage = gke_boot_disk_capacity(disk, str(image))
        ephemeral = gke_ephemeral_allocatable(storage, disk)
    capacity = Resources(
        cpu=cpu,
        memory=memory - gce_kernel_reserved(memory, str(image)),
        ephemeral_storage=storage,
        pods=pods,
        gpus=_gke_gpus(machine.name, gpus),
    )
    allocatable = Resources(
        cpu=cpu - gke_cpu_reserved(cpu, pods),
        memory=capacity.memory - gke_memory_reserved(memory) - GKE_EVICTION_MEMORY,
        ephemeral_storage=ephemeral,
        pods=pods,
        gpus=capacity.gpus,
    )
    options = (
        ("disk_gb", disk_gb),
        ("gpus", gpus),
        ("max_pods", max_pods),
        ("image", image),
        ("local_ssds", local_ssds),
    )
    return NodeShape(machine.name, capacity, allocatable, _GKE_SOURCE, "gke", options)


# ---------------------------------------------------------------------------------------------
# AWS: the rules EKS's AL2023 nodeadm and Karpenter share
# ---------------------------------------------------------------------------------------------

KARPENTER_VM_MEMORY_OVERHEAD_PERCENT = 0.075  # VM_MEMORY_OVERHEAD_PERCENT's default
KARPENTER_DEFAULT_ROOT_VOLUME_GIB = 20  # amifamily.DefaultEBS: 20Gi gp3 when no mapping is set
AWS_EVICTION_MEMORY = 100 * Mi
AWS_KUBE_RESERVED_EPHEMERAL = 1 * Gi


def eni_max_pods(inst: Ec2Instance, reserved_enis: int = 0) -> int:
    """`ENIs x (IPv4 per ENI - 1) + 2`, the VPC CNI's pod limit: awslabs/amazon-eks-ami
    v20260724 `nodeadm/internal/kubelet/eni_max_pods.go` (`calculateStandardMaxPods`) and
    aws/karpenter-provider-aws v1.14.1 `types.go` (`ENILimitedPods`, which gives 0 when no ENI
    is left)."""
    usable = max(inst.enis - reserved_enis, 0)
    return usable * (inst.ipv4_per_eni - 1) + 2 if usable else 0


def _karpenter_memory_capacity(inst: Ec2Instance, overhead_percent: float) -> int:
    """EC2 memory less Karpenter's VM overhead estimate (types.go `memory()`): Graviton loses
    64 MiB of CMA first; the overhead is ceil(bytes * percent / 1024 / 1024) MiB, in float64."""
    size_mib = inst.memory_mib - (64 if inst.arch == "arm64" else 0)
    memory = size_mib * Mi
    return memory - math.ceil(float(memory) * overhead_percent / 1024 / 1024) * Mi


def _karpenter_cpu_reserved(millicores: int) -> int:
    """types.go `kubeReservedResources`: per range `int64(r * percentage)`, in float64."""
    reserved = 0
    for start, end, percentage in (
        (0, 1000, 0.06),
        (1000, 2000, 0.01),
        (2000, 4000, 0.005),
        (4000, 1 << 31, 0.0025),
    ):
        if millicores >= start:
            span = end - start if millicores >= end else millicores - start
            reserved += int(float(span) * percentage)
    return reserved


def _nodeadm_cpu_reserved(millicores: int) -> int:
    """nodeadm `getCPUMillicoresToReserve` (config.go): integer `(reserved - start) * pct /
    10000` per range of 0/1000/2000/4000 millicores with 600/100/50/25."""
    reserved = 0
    bounds = (0, 1000, 2000, 4000, millicores)
    for i, pct in enumerate((600, 100, 50, 25)):
        start, end = bounds[i], bounds[i + 1]
        if millicores > start:
            reserved += (min(millicores, end) - start) * pct // 10000
    return reserved


def _aws_unknown(instance_type: object, what: str) -> InputError:
    name = instance_type if isinstance(instance_type, str) else ""
    family = name.split(".", 1)[0]
    sizes = ec2_family_sizes(family)
    if sizes:
        return InputError(
            f"instance type {show(instance_type)} is not a known {family} size for {what}",
            ", ".join(sizes),
        )
    return InputError(
        f"instance type {show(instance_type)} is not in the node-shape catalog (its vCPUs, "
        "memory and network interfaces are not known, so what its nodes hold cannot be judged)",
        "an instance type of these families: " + ", ".join(f"{f}.*" for f in ec2_families()),
    )


def _ec2_gpus(inst: Ec2Instance, gpus: object) -> int:
    physical = inst.gpus
    if gpus is None:
        return physical
    count = _whole(gpus, "gpus")
    if count and not physical:
        raise InputError(f"{inst.name} has no NVIDIA GPUs", "gpus: 0 on this instance type")
    return count


# ---------------------------------------------------------------------------------------------
# EKS managed node groups on AL2023 (nodeadm)
# ---------------------------------------------------------------------------------------------

# EKS user guide (awsdocs/amazon-eks-user-guide `doc_source/cni-increase-ip-addresses.md`
# @13d120e4): "Managed node groups enforces a maximum number on the value of maxPods. For
# instances with less than 30 vCPUs the maximum number is 110 and for all other instances the
# maximum number is 250." nodeadm itself has no cap, and computes kube-reserved memory from its
# own ENI figure (config.go `withDefaultReservedResources`), not from the capped value.
EKS_MNG_MAX_PODS_SMALL = 110
EKS_MNG_MAX_PODS_LARGE = 250

_EKS_SOURCE = (
    "EKS managed node group, AL2023: "
    + "EC2 instance data (cluster-autoscaler-1.36.1 ec2_instance_types.go, karpenter-provider-aws "
    "v1.14.1 zz_generated.vpclimits.go); kube-reserved 11 x ENI max pods + 255 Mi, CPU table, "
    "1Gi ephemeral-storage, eviction 100Mi / 10% nodefs (amazon-eks-ami v20260724 nodeadm "
    "config.go); max pods capped at 110 / 250 (EKS user guide); memory capacity estimated as "
    "Karpenter's 7.5% VM overhead"
)


def eks_max_pods(inst: Ec2Instance) -> int:
    cap = EKS_MNG_MAX_PODS_SMALL if inst.vcpus < 30 else EKS_MNG_MAX_PODS_LARGE
    return min(eni_max_pods(inst), cap)


def eks_node_shape_or_none(
    instance_type: str, *, disk_gib: int = 100, gpus: int | None = None
) -> NodeShape | None:
    """Like `eks_node_shape`, but None when the instance type is not in the catalog."""
    inst = EC2_INSTANCES.get(instance_type) if isinstance(instance_type, str) else None
    return None if inst is None else _eks_shape(inst, disk_gib, gpus)


def eks_node_shape(
    instance_type: str, *, disk_gib: int = 100, gpus: int | None = None
) -> NodeShape:
    """A node of an EKS managed node group on AL2023 with a `disk_gib` root volume.

    Memory capacity is the EC2 memory less Karpenter's 7.5% VM-overhead estimate: the kubelet
    reports the kernel's MemTotal, which no EKS rule states; on nodes 2i2c measured (r5, m5,
    g4dn) the real overhead was 2.7-6.7%, so this errs low. Ephemeral-storage capacity is taken
    as the whole volume (the XFS filesystem on it is slightly smaller: not verified).
    `gpus` is the `nvidia.com/gpu` the node advertises: None means the instance's GPUs."""
    inst = EC2_INSTANCES.get(instance_type) if isinstance(instance_type, str) else None
    if inst is None:
        raise _aws_unknown(instance_type, "an EKS node group")
    return _eks_shape(inst, disk_gib, gpus)


@_cached
def _eks_shape(inst: Ec2Instance, disk_gib: object, gpus: object) -> NodeShape:
    storage = _whole(disk_gib, "disk_gib", 1) * Gi
    cpu = inst.vcpus * 1000
    capacity = Resources(
        cpu=cpu,
        memory=_karpenter_memory_capacity(inst, KARPENTER_VM_MEMORY_OVERHEAD_PERCENT),
        ephemeral_storage=storage,
        pods=eks_max_pods(inst),
        gpus=_ec2_gpus(inst, gpus),
    )
    kube_reserved_memory = (11 * eni_max_pods(inst) + 255) * Mi
    allocatable = Resources(
        cpu=cpu - _nodeadm_cpu_reserved(cpu),
        memory=capacity.memory - kube_reserved_memory - AWS_EVICTION_MEMORY,
        ephemeral_storage=storage - AWS_KUBE_RESERVED_EPHEMERAL - kubelet_nodefs_eviction(storage),
        pods=capacity.pods,
        gpus=capacity.gpus,
    )
    options = (("disk_gib", disk_gib), ("gpus", gpus))
    return NodeShape(inst.name, capacity, allocatable, _EKS_SOURCE, "eks", options)


# ---------------------------------------------------------------------------------------------
# Karpenter (aws/karpenter-provider-aws v1.14.1, pkg/providers/instancetype/types.go)
# ---------------------------------------------------------------------------------------------

KARPENTER_AMI_FAMILIES = ("AL2023", "Bottlerocket")

_KARPENTER_SOURCE = (
    "Karpenter (aws/karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go): "
    + "EC2 instance data (cluster-autoscaler-1.36.1 ec2_instance_types.go, zz_generated."
    "vpclimits.go); memory less VM_MEMORY_OVERHEAD_PERCENT; kube-reserved 11 x pods + 255 Mi, "
    "CPU table, 1Gi ephemeral-storage; eviction 100Mi / 10% of the root volume; ENI-limited pods"
)


def karpenter_node_shape_or_none(
    instance_type: str,
    *,
    disk_gib: int = 100,
    ami_family: str = "AL2023",
    max_pods: int | None = None,
    vm_memory_overhead_percent: float = KARPENTER_VM_MEMORY_OVERHEAD_PERCENT,
    kubelet: KarpenterKubelet | None = None,
) -> NodeShape | None:
    """Like `karpenter_node_shape`, but None when the instance type is not in the catalog."""
    inst = EC2_INSTANCES.get(instance_type) if isinstance(instance_type, str) else None
    if inst is None:
        return None
    return _karpenter_shape(
        inst, disk_gib, ami_family, max_pods, vm_memory_overhead_percent, kubelet
    )


def karpenter_node_shape(
    instance_type: str,
    *,
    disk_gib: int = 100,
    ami_family: str = "AL2023",
    max_pods: int | None = None,
    vm_memory_overhead_percent: float = KARPENTER_VM_MEMORY_OVERHEAD_PERCENT,
    kubelet: KarpenterKubelet | None = None,
) -> NodeShape:
    """The node Karpenter believes it launches: the same numbers its scheduler uses
    (`NewInstanceType`: capacity, kube-reserved, system-reserved, eviction threshold;
    kubernetes-sigs/karpenter at the commit v1.14.1 pins, `InstanceType.computeAllocatable` =
    capacity - their sum).

    `disk_gib` is the EC2NodeClass root volume (Karpenter's default without block device mappings
    is 20Gi: `KARPENTER_DEFAULT_ROOT_VOLUME_GIB`); `max_pods` the EC2NodeClass `kubelet.maxPods`;
    `kubelet` its kubeReserved, systemReserved, evictionHard, podsPerCore and
    `instanceStorePolicy` (`karpenter_kubelet`). On AL2023 kube-reserved memory follows the ENI
    pod limit even when `max_pods` is set (`UsesENILimitedMemoryOverhead`); on Bottlerocket it
    follows the pod count. Karpenter replaces the memory estimate with the capacity a launched
    node reported once it has seen one (`discoveredCapacityCache`); this is the estimate before
    that. Raises InputError for a setting that is not a quantity."""
    inst = EC2_INSTANCES.get(instance_type) if isinstance(instance_type, str) else None
    if inst is None:
        raise _aws_unknown(instance_type, "Karpenter")
    return _karpenter_shape(
        inst, disk_gib, ami_family, max_pods, vm_memory_overhead_percent, kubelet
    )


@_cached
def _karpenter_shape(
    inst: Ec2Instance,
    disk_gib: object,
    ami_family: object,
    max_pods: object,
    overhead_percent: float,
    kubelet: KarpenterKubelet | None = None,
) -> NodeShape:
    if ami_family not in KARPENTER_AMI_FAMILIES:
        raise InputError(
            f"AMI family {show(ami_family)} is not modelled", ", ".join(KARPENTER_AMI_FAMILIES)
        )
    k = kubelet or KarpenterKubelet()
    storage = _whole(disk_gib, "disk_gib", 1) * Gi
    if k.raid0:  # types.go ephemeralStorage: the instance store, "%dG", when there is one
        store = instance_store_gb(inst.name)
        storage = store * 1_000_000_000 if store else storage
    eni_pods = eni_max_pods(inst)
    pods = eni_pods if max_pods is None else _whole(max_pods, "max_pods", 1)
    if k.pods_per_core and ami_family == "AL2023":  # PodsPerCoreEnabled (not on Bottlerocket)
        pods = min(k.pods_per_core * inst.vcpus, pods)
    overhead_pods = eni_pods if ami_family == "AL2023" else pods
    cpu = inst.vcpus * 1000
    memory = _karpenter_memory_capacity(inst, overhead_percent)
    capacity = Resources(
        cpu=cpu, memory=memory, ephemeral_storage=storage, pods=pods, gpus=_ec2_gpus(inst, None)
    )
    kube = {
        "cpu": _karpenter_cpu_reserved(cpu),
        "memory": (11 * overhead_pods + 255) * Mi,
        "ephemeral-storage": AWS_KUBE_RESERVED_EPHEMERAL,
        **reserved(k.kube_reserved, "kubeReserved"),
    }
    system = reserved(k.system_reserved, "systemReserved")
    evict = eviction(memory, storage, k.eviction_hard, AWS_EVICTION_MEMORY)
    withheld = {
        r: kube.get(r, 0) + system.get(r, 0) + evict.get(r, 0)
        for r in ("cpu", "memory", "ephemeral-storage")
    }
    options = (
        ("disk_gib", disk_gib),
        ("ami_family", ami_family),
        ("max_pods", max_pods),
        ("vm_memory_overhead_percent", overhead_percent),
        ("kubelet", kubelet),
    )
    allocatable = capacity - Resources(
        cpu=withheld["cpu"],
        memory=withheld["memory"],
        ephemeral_storage=withheld["ephemeral-storage"],
    )
    return NodeShape(inst.name, capacity, allocatable, _KARPENTER_SOURCE, "karpenter", options)


# ---------------------------------------------------------------------------------------------
# Existing nodes: the stack says what they hold
# ---------------------------------------------------------------------------------------------

EXISTING_DEFAULT_MAX_PODS = 110  # the kubelet's default maxPods (KubeletConfiguration)
_EXISTING_REQUIRED = ("cpu", "memory", "ephemeral-storage")


def existing_node_shape(
    name: str, allocatable: Mapping[str, object], *, source: str = "declared by the stack"
) -> NodeShape:
    """Existing nodes whose allocatable the stack declares as Kubernetes quantities, e.g.
    `{cpu: "32", memory: "250Gi", ephemeral-storage: "400Gi", pods: 110, nvidia.com/gpu: 4}`.

    cpu, memory and ephemeral-storage are required; pods defaults to 110 and nvidia.com/gpu to 0.
    Fractions of a millicore or a byte are dropped. Capacity is taken equal to allocatable
    (nothing else is known about these nodes). Errors carry the key as their path."""
    if not isinstance(allocatable, Mapping):
        raise InputError(
            f"{show(allocatable)} is not a mapping of resource names to quantities",
            "e.g. {cpu: '32', memory: '250Gi', ephemeral-storage: '400Gi'}",
        )
    known = list(RESOURCE_NAMES.values())
    for key in allocatable:
        if key not in known:
            raise InputError(
                f"{show(key)} is not a resource the fit check knows", ", ".join(known)
            ).at(str(key))
    missing = [k for k in _EXISTING_REQUIRED if k not in allocatable]
    if missing:
        raise InputError(
            "the nodes' allocatable must give " + ", ".join(missing),
            "cpu, memory and ephemeral-storage as Kubernetes quantities",
        )

    def amount(key: str, default: int, scale: int = 1, whole: bool = False) -> int:
        if key not in allocatable:
            return default
        try:
            value = parse_quantity(allocatable[key]) * scale
        except InputError as err:
            raise err.at(key) from None
        if whole and value != int(value):
            raise InputError(f"{show(allocatable[key])} is not a whole number", key).at(key)
        return int(value)

    held = Resources(
        cpu=amount("cpu", 0, scale=1000),
        memory=amount("memory", 0),
        ephemeral_storage=amount("ephemeral-storage", 0),
        pods=amount("pods", EXISTING_DEFAULT_MAX_PODS, whole=True),
        gpus=amount("nvidia.com/gpu", 0, whole=True),
    )
    return NodeShape(name, held, held, source)


# ---------------------------------------------------------------------------------------------
# What would hold a pod (the fix of the fit findings)
# ---------------------------------------------------------------------------------------------

_BUILDERS: dict[str, tuple[Callable[..., NodeShape | None], str]] = {
    "gke": (gke_node_shape_or_none, "disk_gb"),
    "eks": (eks_node_shape_or_none, "disk_gib"),
    "karpenter": (karpenter_node_shape_or_none, "disk_gib"),
}
_SIZES: dict[str, Callable[[NodeShape], list[str]]] = {
    "gke": lambda s: gce_family_sizes(gce_machine_family(s.name)),
    "eks": lambda s: ec2_family_sizes(s.name.split(".", 1)[0]),
    "karpenter": lambda s: ec2_family_sizes(s.name.split(".", 1)[0]),
}
MAX_DISK = 65536  # GB / GiB: the largest Persistent Disk / EBS volume
_MAX_DISKS: dict[str, int] = {}


def register_shape_kind(
    kind: str,
    build: Callable[..., NodeShape | None],
    disk_key: str,
    sizes: Callable[[NodeShape], list[str]],
    max_disk: int = MAX_DISK,
) -> None:
    """Another cloud's node shapes, from the module that builds them (`aks_shapes`): how to build
    one again with other options (`build(name, **options)`, None when unknown), the option that is
    its disk, and the sizes of a shape's family (what `larger_to_hold` tries)."""
    _BUILDERS[kind] = (build, disk_key)
    _SIZES[kind] = sizes
    _MAX_DISKS[kind] = max_disk


def reshaped(
    shape: NodeShape, name: str | None = None, disk: int | None = None
) -> NodeShape | None:
    """The same kind of node as `shape` (its builder and options) with another machine /
    instance type or disk; None for existing nodes, an unknown type or a refused combination."""
    builder = _BUILDERS.get(shape.kind)
    if builder is None:
        return None
    build, disk_key = builder
    options = dict(shape.options)
    if disk is not None:
        options[disk_key] = disk
    if name is not None and name != shape.name:
        options.pop("gpus", None)  # the other type's own GPUs
    try:
        return build(name or shape.name, **options)
    except InputError:
        return None


@functools.lru_cache(maxsize=1024)
def disk_to_hold(shape: NodeShape, request: Resources) -> int | None:
    """The smallest disk (the kind's unit: GB on GKE, GiB on AWS) with which a node like `shape`
    leaves `request`'s ephemeral storage allocatable; None when none up to `MAX_DISK` does."""
    largest = _MAX_DISKS.get(shape.kind, MAX_DISK)
    if reshaped(shape, disk=largest) is None:
        return None
    low, high = 1, largest
    top = reshaped(shape, disk=high)
    if top is None or top.allocatable.ephemeral_storage < request.ephemeral_storage:
        return None
    while low < high:
        mid = (low + high) // 2
        s = reshaped(shape, disk=mid)
        if s is not None and s.allocatable.ephemeral_storage >= request.ephemeral_storage:
            high = mid
        else:
            low = mid + 1
    return low


@functools.lru_cache(maxsize=1024)
def larger_to_hold(shape: NodeShape, request: Resources) -> NodeShape | None:
    """The smallest machine / instance type of `shape`'s family (same GPU model) with at least
    its GPUs whose node, with the same disk, holds `request`; None when none does."""
    family = _SIZES.get(shape.kind)
    if family is None:
        return None
    sizes = family(shape)
    found = []
    for size in sizes:
        other = reshaped(shape, name=size)
        if (
            other is not None
            and other.capacity.gpus >= shape.capacity.gpus
            and request.fits_in(other.allocatable)
        ):
            found.append(other)
    return min(found, key=lambda s: (s.capacity.cpu, s.capacity.memory), default=None)
