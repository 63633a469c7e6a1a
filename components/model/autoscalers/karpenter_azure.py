"""What Karpenter on Azure (AKS node auto-provisioning) knows of an Azure GPU VM size: the labels
it gives a node of it, and the instance types it hands its provisioning scheduler for an
AKSNodeClass. With them, the same Karpenter model (`karpenter_launch`, `karpenter_requirements`)
judges NodePools on Azure as on AWS.

Pure (imports nothing but `components.model`). Sources: Azure/karpenter-provider-azure v1.14.2
(which builds on kubernetes-sigs/karpenter v1.14.0):
- `pkg/apis/v1beta1/labels.go` `init`: the provider's well-known labels (`AzureWellKnownLabels`),
  its restricted domain `karpenter.azure.com`, and the values it accepts
  (`WellKnownValuesForRequirements`: capacity types `on-demand` and `spot` only, no `reserved`;
  `sku-gpu-manufacturer` nvidia | amd; `kubernetes.azure.com/mode` system | user; ...).
- `pkg/providers/instancetype/instancetype.go` `computeRequirements`: the labels of a size:
  `node.kubernetes.io/instance-type`, `kubernetes.io/arch`, `kubernetes.io/os` linux,
  `karpenter.azure.com/sku-{name,family,series,version}` (skewer's parse of the name:
  `components.model.nodes.azure_vms.parse_vm_size`), `sku-cpu`, `sku-memory` (MiB) and the same
  two under `kubernetes.azure.com/`, `sku-gpu-count`, `sku-gpu-manufacturer` (from
  `supported-gpus.yaml`) and `sku-gpu-name` (the size name's accelerator; DoesNotExist when the
  name names none, as for Standard_ND96asr_v4), `kubernetes.azure.com/mode` In [system, user],
  `kubernetes.azure.com/os-sku` from the AKSNodeClass image family (`GetOSSKUFromImageFamily`:
  Ubuntu* -> Ubuntu, AzureLinux), `kubernetes.azure.com/fips_enabled` DoesNotExist unless FIPS.
  `computeCapacity`, `KubeReservedResources`, `EvictionThreshold`: `components.model.nodes.
  aks_shapes.karpenter_azure_overhead`.
- `pkg/providers/instancetype/instancetypes.go` `createOfferings`: an on-demand offering
  (`kubernetes.azure.com/scalesetpriority` and `priority` regular) and a spot one (both spot);
  `List`: `osDiskSizeGB`, `maxPods` (the network plugin's default when unset), the image family
  and the GPU mode of the AKSNodeClass (`gpu.mode` Driver keeps only GPU sizes AKS installs a
  driver for: every NVIDIA size of the catalog).

Not modelled (lenient: they never make this module refuse what Karpenter would launch): zones,
placement scope, region, ultra SSD, accelerated networking, premium storage, ephemeral OS disk
sizes, spot capacity a size may not have (`LowPriorityCapable`, not in our catalog: spot is taken
as offered), quota, prices, sizes outside the GPU catalog.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..nodes.aks_shapes import (
    AKS_DEFAULT_MAX_PODS,
    AKS_DEFAULT_OS_DISK_GB,
    karpenter_azure_overhead,
)
from ..nodes.azure_vms import AZURE_GPU_VMS, AzureGpuVm, parse_vm_size
from ..scheduling import NodeSelectorRequirement
from .karpenter import ARCH_LABEL, CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, OS_LABEL
from .karpenter_launch import InstanceType, NodePoolSpec, Offering
from .karpenter_requirements import CORE_WELL_KNOWN_LABELS, KarpenterProvider, Req

AZURE_PREFIX = "karpenter.azure.com/"
AKS_PREFIX = "kubernetes.azure.com/"
SKU_NAME = AZURE_PREFIX + "sku-name"
SKU_FAMILY = AZURE_PREFIX + "sku-family"
SKU_SERIES = AZURE_PREFIX + "sku-series"
SKU_VERSION = AZURE_PREFIX + "sku-version"
SKU_CPU = AZURE_PREFIX + "sku-cpu"
SKU_MEMORY = AZURE_PREFIX + "sku-memory"
SKU_NETWORKING = AZURE_PREFIX + "sku-networking-accelerated"
SKU_PREMIUM = AZURE_PREFIX + "sku-storage-premium-capable"
SKU_EPHEMERAL_OS = AZURE_PREFIX + "sku-storage-ephemeralos-maxsize"
SKU_ULTRA_SSD = AZURE_PREFIX + "sku-storage-ultra-ssd"
SKU_GPU_NAME = AZURE_PREFIX + "sku-gpu-name"
SKU_GPU_MANUFACTURER = AZURE_PREFIX + "sku-gpu-manufacturer"
SKU_GPU_COUNT = AZURE_PREFIX + "sku-gpu-count"
PLACEMENT_SCOPE = AZURE_PREFIX + "placement-scope"
AKS_CPU = AKS_PREFIX + "sku-cpu"
AKS_MEMORY = AKS_PREFIX + "sku-memory"
AKS_CLUSTER = AKS_PREFIX + "cluster"
AKS_MODE = AKS_PREFIX + "mode"
SCALESET_PRIORITY = AKS_PREFIX + "scalesetpriority"
PRIORITY = AKS_PREFIX + "priority"
OS_SKU = AKS_PREFIX + "os-sku"
ROLE = AKS_PREFIX + "role"  # `agent` on every AKS node (`use-labels.md`, reserved labels)
FIPS = AKS_PREFIX + "fips_enabled"

NODE_CLASS_GROUP = "karpenter.azure.com"
NODE_CLASS_KIND = "AKSNodeClass"
CAPACITY_TYPES = ("spot", "on-demand")
"""In Karpenter's order of preference within one NodePool (core: spot before on-demand)."""
IMAGE_FAMILIES = ("Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux")
GPU_MODES = ("Driver", "None")
_OS_SKUS = {"Ubuntu": "Ubuntu", "Ubuntu2204": "Ubuntu", "Ubuntu2404": "Ubuntu"}

AZURE = KarpenterProvider(
    name="azure",
    well_known=CORE_WELL_KNOWN_LABELS
    | frozenset(
        {
            SKU_NAME,
            SKU_FAMILY,
            SKU_SERIES,
            SKU_VERSION,
            SKU_CPU,
            SKU_MEMORY,
            AKS_CPU,
            AKS_MEMORY,
            SKU_NETWORKING,
            SKU_PREMIUM,
            SKU_EPHEMERAL_OS,
            SKU_ULTRA_SSD,
            SKU_GPU_NAME,
            SKU_GPU_MANUFACTURER,
            SKU_GPU_COUNT,
            PLACEMENT_SCOPE,
            AKS_CLUSTER,
            AKS_MODE,
            SCALESET_PRIORITY,
            PRIORITY,
            OS_SKU,
            FIPS,
        }
    ),
    restricted_domains=("karpenter.sh", "karpenter.azure.com"),
    well_known_values={
        CAPACITY_TYPE_LABEL: frozenset(CAPACITY_TYPES),
        SKU_NETWORKING: frozenset({"true", "false"}),
        SKU_PREMIUM: frozenset({"true", "false"}),
        SKU_ULTRA_SSD: frozenset({"true", "false"}),
        SKU_GPU_MANUFACTURER: frozenset({"nvidia", "amd"}),
        PLACEMENT_SCOPE: frozenset({"zonal", "regional"}),
        AKS_MODE: frozenset({"system", "user"}),
        SCALESET_PRIORITY: frozenset({"regular", "spot"}),
        PRIORITY: frozenset({"regular", "spot"}),
        OS_SKU: frozenset({"Ubuntu", "AzureLinux"}),
        FIPS: frozenset({"true"}),
    },
    node_class_group=NODE_CLASS_GROUP,
    node_class_kind=NODE_CLASS_KIND,
)
"""Azure/karpenter-provider-azure v1.14.2 `pkg/apis/v1beta1/labels.go` `init`."""

MODELLED_KEYS = frozenset(
    {
        INSTANCE_TYPE_LABEL,
        ARCH_LABEL,
        OS_LABEL,
        SKU_NAME,
        SKU_FAMILY,
        SKU_SERIES,
        SKU_VERSION,
        SKU_CPU,
        SKU_MEMORY,
        AKS_CPU,
        AKS_MEMORY,
        SKU_GPU_NAME,
        SKU_GPU_MANUFACTURER,
        SKU_GPU_COUNT,
        AKS_MODE,
        OS_SKU,
        FIPS,
    }
)
"""The label keys this module gives sizes; a requirement on another key narrows nothing here."""


def os_sku(image_family: str | None) -> str:
    """`GetOSSKUFromImageFamily`: the `kubernetes.azure.com/os-sku` of an image family."""
    family = image_family or "Ubuntu"
    return _OS_SKUS.get(family, family)


def sku_labels(vm: AzureGpuVm, image_family: str | None = "Ubuntu") -> dict[str, str]:
    """The single-valued labels Karpenter on Azure gives a node of this size."""
    parts = parse_vm_size(vm.name)
    memory = str(int(vm.memory_gib * 1024))
    labels = {
        INSTANCE_TYPE_LABEL: vm.name,
        ARCH_LABEL: "amd64",
        OS_LABEL: "linux",
        SKU_NAME: vm.name,
        SKU_CPU: str(vm.vcpus),
        SKU_MEMORY: memory,
        AKS_CPU: str(vm.vcpus),
        AKS_MEMORY: memory,
        SKU_GPU_COUNT: str(vm.gpus),
        SKU_GPU_MANUFACTURER: "nvidia",
        OS_SKU: os_sku(image_family),
    }
    if parts is not None:
        labels[SKU_FAMILY] = parts.family
        labels[SKU_SERIES] = parts.series
        labels[SKU_VERSION] = parts.version
        if parts.accelerator is not None:
            labels[SKU_GPU_NAME] = parts.accelerator
    return labels


def _absent(labels: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(k for k in (SKU_GPU_NAME, FIPS) if k not in labels)


def offerings() -> tuple[Offering, ...]:
    """`createOfferings` (zones aside): on-demand on regular VMs, spot on spot VMs."""
    return (
        Offering(
            "on-demand", labels={SCALESET_PRIORITY: "regular", PRIORITY: "regular"}, absent=()
        ),
        Offering("spot", labels={SCALESET_PRIORITY: "spot", PRIORITY: "spot"}, absent=()),
    )


@dataclass(frozen=True)
class AksNodeClassInfo:
    """What of an AKSNodeClass changes the instance types Karpenter on Azure offers."""

    name: str = "default"
    image_family: str | None = "Ubuntu"
    os_disk_gb: int = AKS_DEFAULT_OS_DISK_GB
    max_pods: int | None = None
    gpu_mode: str = "Driver"
    shape_known: bool = True  # False: kubelet settings or an image family we do not model
    provider: KarpenterProvider = AZURE
    auto_mode: bool = False  # (an AWS notion; always False here)
    # AKS's own DaemonSets (CNI, CSI, cloud-node-manager, kube-proxy unless Cilium) are made by
    # AKS with requests no public manifest pins at a version: not counted (`system_daemons`).
    daemon_kind: str = "none"

    def instance_types(
        self, overlays: Sequence[object] = (), pool: str | None = None
    ) -> list[InstanceType]:
        """Every GPU size of the catalog as the provider's `List` hands it over for this node
        class (NodeOverlays are not modelled on Azure)."""
        del overlays, pool
        return [self._instance_type(vm) for vm in AZURE_GPU_VMS.values()]

    def _instance_type(self, vm: AzureGpuVm) -> InstanceType:
        labels = sku_labels(vm, self.image_family)
        pods = self.max_pods if self.max_pods is not None else AKS_DEFAULT_MAX_PODS[0]
        capacity, kube_reserved, eviction = karpenter_azure_overhead(vm, self.os_disk_gb, pods)
        allocatable = capacity - kube_reserved - eviction if self.shape_known else None
        return InstanceType(
            vm.name,
            labels,
            capacity,
            allocatable,
            offerings(),
            absent=_absent(labels),
            values={AKS_MODE: ("system", "user")},
        )

    def admits_cpu(self, pool: NodePoolSpec) -> bool:
        """Whether the NodePool also admits sizes without GPUs (not in the catalog)."""
        return azure_admits_cpu_sizes(pool, self.image_family)


# Sizes without GPUs, as Karpenter on Azure labels them: enough to tell whether a NodePool's
# requirements admit such sizes (D, E, F families; sku-gpu-count "0", no GPU name/manufacturer).
_CPU_SIZES = (
    ("Standard_D4s_v5", "D", "Ds_v5", "5", 4, 16),
    ("Standard_E8s_v5", "E", "Es_v5", "5", 8, 64),
    ("Standard_F16s_v2", "F", "Fs_v2", "2", 16, 32),
)


def azure_admits_cpu_sizes(pool: NodePoolSpec, image_family: str | None = "Ubuntu") -> bool:
    reqs = pool.template_requirements()
    for name, family, series, version, cpus, gib in _CPU_SIZES:
        labels = {
            INSTANCE_TYPE_LABEL: name,
            ARCH_LABEL: "amd64",
            OS_LABEL: "linux",
            SKU_NAME: name,
            SKU_FAMILY: family,
            SKU_SERIES: series,
            SKU_VERSION: version,
            SKU_CPU: str(cpus),
            SKU_MEMORY: str(gib * 1024),
            AKS_CPU: str(cpus),
            AKS_MEMORY: str(gib * 1024),
            SKU_GPU_COUNT: "0",
            OS_SKU: os_sku(image_family),
        }
        it = InstanceType(
            name,
            labels,
            capacity=karpenter_azure_overhead(next(iter(AZURE_GPU_VMS.values())))[0],
            allocatable=None,
            offerings=offerings(),
            absent=(SKU_GPU_NAME, SKU_GPU_MANUFACTURER, FIPS),
            values={AKS_MODE: ("system", "user")},
        )
        if it.requirements.intersects(reqs) is None:
            return True
    return False


@dataclass(frozen=True)
class Admitted:
    """The catalog sizes a set of requirements lets Karpenter on Azure launch."""

    vms: tuple[AzureGpuVm, ...]
    capacity_types: tuple[str, ...]


def admitted(
    requirements: Iterable[NodeSelectorRequirement], image_family: str | None = "Ubuntu"
) -> Admitted:
    """Catalog sizes whose labels satisfy every requirement on a key modelled here, and the
    capacity types allowed (Karpenter's order)."""
    reqs = list(requirements)
    mine = [r for r in reqs if r.key in MODELLED_KEYS]
    found = tuple(
        vm
        for vm in AZURE_GPU_VMS.values()
        if all(_matches(r, sku_labels(vm, image_family)) for r in mine)
    )
    capacity = list(CAPACITY_TYPES)
    for r in reqs:
        if r.key == CAPACITY_TYPE_LABEL:
            capacity = [c for c in capacity if r.matches({CAPACITY_TYPE_LABEL: c})]
    return Admitted(found, tuple(capacity))


def _matches(r: NodeSelectorRequirement, labels: Mapping[str, str]) -> bool:
    if r.key == AKS_MODE:  # the one multi-valued key: system or user
        try:
            wanted = Req.of(r.key, r.operator, list(r.values or ()))
        except ValueError:
            return True
        return wanted.has_intersection(Req.of(AKS_MODE, "In", ["system", "user"]))
    return r.matches(labels)


def gpu_names() -> list[str]:
    """Every `sku-gpu-name` value the catalog's sizes have, sorted."""
    names = {sku_labels(vm).get(SKU_GPU_NAME) for vm in AZURE_GPU_VMS.values()}
    return sorted(n for n in names if n)


def series_names() -> list[str]:
    """Every `sku-series` value of the catalog, sorted."""
    return sorted({sku_labels(vm)[SKU_SERIES] for vm in AZURE_GPU_VMS.values()})


def common_labels(vms: Sequence[AzureGpuVm], image_family: str | None = "Ubuntu") -> dict[str, str]:
    """Labels every node of any of these sizes carries with the same value."""
    if not vms:
        return {}
    first, *rest = [sku_labels(vm, image_family) for vm in vms]
    return {k: v for k, v in first.items() if all(o.get(k) == v for o in rest)}
