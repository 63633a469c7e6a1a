"""Azure GPU VM sizes: what an AKS node of each size is (vCPUs, memory, GPUs, temp disk), and the
parts of its name that Karpenter on Azure labels nodes with.

Pure data and lookups (imports `components.model.errors` and `gpus`). `components.model.nodes.
aks_shapes` turns a row into a node shape; `components.model.autoscalers.karpenter_azure` into
the instance types node auto-provisioning offers.

INTERFACE:
- `AzureGpuVm(name, series, vcpus, memory_mib, gpus, gpu_model, gpu_memory_gib, temp_disk_gib,
  gpu_share, ca_accelerator_label)`; `AZURE_GPU_VMS: dict[str, AzureGpuVm]`
- `azure_vm(name) -> AzureGpuVm` (InputError naming the sizes of its series, or the series),
  `azure_vm_or_none(name)`, `azure_series() -> list[str]`, `azure_series_sizes(series)`
- `VmSizeParts` / `parse_vm_size(name)`: Azure/skewer's reading of a size name (family, series,
  version, accelerator), as Karpenter on Azure labels it
- `AZURE_VM_SOURCES: str`

Sources (numbers transcribed, files not copied):
- vCPUs, memory and GPU count: the Azure Resource SKU API (`vCPUs`, `MemoryGB` — GiB despite its
  name —, `GPUs`), as generated into kubernetes/autoscaler cluster-autoscaler-1.36.1
  `cluster-autoscaler/cloudprovider/azure/azure_instance_types.go` (`VCPU`, `MemoryMb` = GiB x
  1024, `GPU`). These are the figures Karpenter on Azure reads from the same API
  (Azure/karpenter-provider-azure v1.14.2 `pkg/providers/instancetype/instancetype.go`:
  `sku.VCPU()`, `sku.Memory()`, `sku.GPU()`); its fake SKU data (`pkg/fake/
  zz_generated.sku.southcentralus.go`) has the same values for NC16as_T4_v3 (16, 110, 1) and
  NC24ads_A100_v4 (24, 220, 1).
- Temp disk (GiB), and the GPU model and its memory (`gpus.GPU_MODELS`): Microsoft's size pages,
  MicrosoftDocs/azure-compute-docs `articles/virtual-machines/sizes/gpu-accelerated/`
  `ncast4v3-series.md`, `nvadsa10v5-series.md`, `nca100v4-series.md`, `ncadsh100v5-series.md`,
  `ndh100v5-series.md`, `nd-h200-v5-series.md`, `ndasra100v4-series.md`, `ndma100v4-series.md`.
  Those pages agree with the SKU API on vCPUs and memory except ND96amsr_A100_v4, which they list
  with 1900 GB where the SKU API (and so every autoscaler) has 1800 GiB: the SKU API is kept.
- NCads_A10_v4 has no size page in that repository: its rows are the SKU API's alone (its GPU's
  memory: NVIDIA's A10 datasheet); its temp disk is not known (None).
- NVadsA10_v5 sizes up to NV18 hold a slice of one A10 (1/6, 1/3, 1/2: `gpu_share`, the size
  page's "Accelerators" column), which the SKU API counts as 1 GPU: one `nvidia.com/gpu` of 4, 8
  or 12 GB.
- `ca_accelerator_label`: the size is in cluster-autoscaler-1.36.1's `NvidiaEnabledSKUs`
  (`azure_instance_gpu_sku.go`), so its node template at zero carries `kubernetes.azure.com/
  accelerator=nvidia` (`azure_template.go` `processVMSSTemplate`, label prediction on by default:
  `azure_config.go`). That list lacks the A10, H100 and H200 sizes.
- Karpenter on Azure v1.14.2 admits these NVIDIA sizes (`pkg/utils/supported-gpus.yaml`, every
  row with `ubuntu` and `azurelinux3`). Retired series (NCv3, retired 2025-09-30 per its size
  page) and preview ones (NC RTX PRO 6000 BSE v6, whose names differ between its size page and
  Karpenter's list) are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..errors import InputError, show
from .gpus import GPU_MODELS

AZURE_VM_SOURCES = (
    "Azure Resource SKU API as listed in kubernetes/autoscaler cluster-autoscaler-1.36.1 "
    "azure_instance_types.go; temp disk and GPU memory from MicrosoftDocs/azure-compute-docs "
    "sizes/gpu-accelerated pages"
)


class AzureGpuVm(NamedTuple):
    """An Azure GPU VM size."""

    name: str
    """As the SKU API spells it: `Standard_NC24ads_A100_v4` (the node's instance-type label)."""
    series: str
    """Microsoft's series name (`NC_A100_v4`), for messages."""
    vcpus: int
    memory_mib: int
    gpus: int
    """`nvidia.com/gpu` a node exposes (the SKU API's `GPUs`)."""
    gpu_model: str
    """`T4`, `A10`, `A100`, `H100`, `H200`."""
    gpu_memory_gib: int
    """Memory of one `nvidia.com/gpu` (GB as the size pages give it)."""
    temp_disk_gib: int | None
    gpu_share: str | None = None
    """A slice of one GPU (`1/6`), when the VM has less than a whole one."""
    ca_accelerator_label: bool = False
    """cluster-autoscaler 1.36.1 labels its node template `kubernetes.azure.com/accelerator`."""

    @property
    def memory_gib(self) -> float:
        return self.memory_mib / 1024


def _series(
    series: str, gpu: str, rows: tuple[tuple[Any, ...], ...], ca_label: bool = False
) -> dict[str, AzureGpuVm]:
    """One series of `gpu` (`gpus.GPU_MODELS`): a row per size, (name, vCPUs, memory GiB, GPUs,
    temp disk GiB), with (share, GPU memory GB) after it for a size holding a slice of a GPU."""
    model = GPU_MODELS[gpu]
    out = {}
    for name, vcpus, gib, gpus, temp, *share in rows:
        part, memory = share if share else (None, model.memory_gib or 0)
        out[name] = AzureGpuVm(
            name, series, vcpus, gib * 1024, gpus, str(model.azure), memory, temp, part, ca_label
        )
    return out


AZURE_GPU_VMS: dict[str, AzureGpuVm] = {
    **_series(
        "NCasT4_v3",
        "T4",
        (
            ("Standard_NC4as_T4_v3", 4, 28, 1, 176),
            ("Standard_NC8as_T4_v3", 8, 56, 1, 352),
            ("Standard_NC16as_T4_v3", 16, 110, 1, 352),
            ("Standard_NC64as_T4_v3", 64, 440, 4, 2816),
        ),
        ca_label=True,
    ),
    **_series(
        "NCads_A10_v4",
        "A10",
        (
            ("Standard_NC8ads_A10_v4", 8, 100, 1, None),
            ("Standard_NC16ads_A10_v4", 16, 200, 1, None),
            ("Standard_NC32ads_A10_v4", 32, 400, 2, None),
        ),
    ),
    **_series(
        "NVadsA10_v5",
        "A10",
        (
            ("Standard_NV6ads_A10_v5", 6, 55, 1, 180, "1/6", 4),
            ("Standard_NV12ads_A10_v5", 12, 110, 1, 360, "1/3", 8),
            ("Standard_NV18ads_A10_v5", 18, 220, 1, 720, "1/2", 12),
            ("Standard_NV36ads_A10_v5", 36, 440, 1, 1440),
            ("Standard_NV36adms_A10_v5", 36, 880, 1, 2880),
            ("Standard_NV72ads_A10_v5", 72, 880, 2, 2880),
        ),
    ),
    **_series(
        "NC_A100_v4",
        "A100 80GB",
        (
            ("Standard_NC24ads_A100_v4", 24, 220, 1, 64),
            ("Standard_NC48ads_A100_v4", 48, 440, 2, 128),
            ("Standard_NC96ads_A100_v4", 96, 880, 4, 256),
        ),
        ca_label=True,
    ),
    **_series(
        "NCads_H100_v5",
        "H100 NVL",
        (
            ("Standard_NC40ads_H100_v5", 40, 320, 1, 3576),
            ("Standard_NC80adis_H100_v5", 80, 640, 2, 7152),
        ),
    ),
    **_series("NDasrA100_v4", "A100 40GB", (("Standard_ND96asr_v4", 96, 900, 8, 6000),), True),
    **_series(
        "NDm_A100_v4", "A100 80GB", (("Standard_ND96amsr_A100_v4", 96, 1800, 8, 6400),), True
    ),
    **_series("ND_H100_v5", "H100 80GB", (("Standard_ND96isr_H100_v5", 96, 1900, 8, 1024),)),
    **_series("ND_H200_v5", "H200", (("Standard_ND96isr_H200_v5", 96, 1850, 8, 1024),)),
}

# Series with NVIDIA GPUs that the table does not model, so errors can say what they are: retired
# (NC, NCv2, NCv3, ND, NDv2, NV, NVv3) or preview (NC RTX PRO 6000 BSE v6, ND GB200/GB300 v6).
_UNMODELLED = re.compile(
    r"^Standard_(N[CDV]\d+r?s?(_v[23])?|ND40rs_v2|ND40s_v3|NV\d+s_v3|NC\d+l?ds_xl_RTXPRO6000BSE_v6"
    r"|ND128isr_(NDR_)?GB[23]00_v6)(_Promo)?$",
    re.I,
)
# AMD GPUs (NVv4, NVads V710 v5, ND MI300X v5): no `nvidia.com/gpu`.
_AMD = re.compile(r"^Standard_(NV\d+as_v4|NV\d+adm?s_V710_v5|ND96isr?_MI300X_v5)$", re.I)
_VM_NAME = re.compile(r"^Standard_[A-Za-z0-9_]+$", re.I)


def azure_series() -> list[str]:
    """The series of the catalog, in table order."""
    return list(dict.fromkeys(vm.series for vm in AZURE_GPU_VMS.values()))


def azure_series_sizes(series: str) -> list[str]:
    return [vm.name for vm in AZURE_GPU_VMS.values() if vm.series == series]


def azure_vm_or_none(name: object) -> AzureGpuVm | None:
    return AZURE_GPU_VMS.get(name) if isinstance(name, str) else None


def azure_vm(name: object) -> AzureGpuVm:
    """The catalog row of a GPU VM size; InputError saying what is allowed."""
    every = ", ".join(f"{s} ({', '.join(azure_series_sizes(s))})" for s in azure_series())
    if not isinstance(name, str) or not _VM_NAME.match(name):
        raise InputError(
            f"VM size {show(name)} is not an Azure VM size name",
            "an Azure GPU VM size such as Standard_NC24ads_A100_v4",
        )
    found = AZURE_GPU_VMS.get(name)
    if found is not None:
        return found
    same = {n.lower(): n for n in AZURE_GPU_VMS}.get(name.lower())
    if same is not None:
        raise InputError(
            f"VM size {name!r} is spelled {same!r} by Azure (the nodes' instance-type label "
            "carries that spelling)",
            same,
        )
    if _AMD.match(name):
        raise InputError(
            f"{name} has AMD GPUs, which expose no nvidia.com/gpu", "an NVIDIA GPU size: " + every
        )
    if _UNMODELLED.match(name):
        raise InputError(
            f"{name} has NVIDIA GPUs, but its series is retired or in preview and not in this "
            "catalog",
            every,
        )
    parts = parse_vm_size(name)
    if parts is not None and parts.accelerator is None and not name.startswith("Standard_N"):
        raise InputError(f"{name} is not a GPU VM size (no GPUs)", every)
    raise InputError(f"VM size {name} is not in the GPU catalog", every)


# ---------------------------------------------------------------------------------------------
# Size names as Azure/skewer v0.0.24 reads them (`vmsize.go` `skuSizeScheme`, `GetVMSize`): the
# parts Karpenter on Azure v1.14.2 labels nodes with (`pkg/providers/instancetype/
# instancetype.go` `computeRequirements`: `sku-family` = Family, `sku-series` = Series,
# `sku-gpu-name` = AcceleratorType, `sku-version` = Version without its `v`, "1" when absent:
# `pkg/utils/utils.go` `ExtractVersionFromVMSize`).
# ---------------------------------------------------------------------------------------------

_SKU_SIZE_SCHEME = re.compile(
    r"^([A-Z])([A-Z]?)([A-Z]?)([0-9]+)-?((?:[0-9]+)?)((?:[abcdeiflmnotspPr]+|C+|NP)?)_?"
    r"(?:(xl_[A-Z]+[0-9]+[A-Z]*|[A-Z]+[0-9]+)_?)?(_cc_)?(_[0-9]+_)?(_MI300X_)?(_H100_)?"
    r"((?:[vV][1-9])?)?(_Promo)?$"
)


@dataclass(frozen=True)
class VmSizeParts:
    """A size name's parts, as skewer names them."""

    family: str
    series: str
    version: str
    """Without its `v` (`4`); `1` when the name has none."""
    accelerator: str | None
    """`A100`, `T4`; None when the name names none (ND96asr_v4 has A100s but does not say it)."""


def parse_vm_size(name: str) -> VmSizeParts | None:
    """Skewer's `GetVMSize` on the size (its `Standard_` prefix dropped, as `SKU.GetSize` gives
    it); None when skewer cannot parse it."""
    size = name.split("_", 1)[1] if name.startswith("Standard_") else name
    m = _SKU_SIZE_SCHEME.match(size)
    if m is None:
        return None
    family, sub1, sub2 = m.group(1), m.group(2), m.group(3)
    subfamily = sub1 + sub2 if sub1 else ""
    features, accelerator, version = m.group(6), m.group(7), m.group(12) or ""
    series = family + subfamily + features + (f"_{version}" if version else "")
    if accelerator is not None:
        accelerator = accelerator.removeprefix("xl_")
    return VmSizeParts(family, series, version[1:] if version else "1", accelerator)
