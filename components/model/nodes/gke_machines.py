"""Compute Engine machine types: vCPUs, memory and the GPUs built in, the inputs of a GKE node.

Pure data (imports nothing of ours). `components.model.nodes.shapes` turns a row into a node shape;
`components.model.nodes.catalog` reads the GPU rows as the machines each accelerator comes with.

INTERFACE:
- `GceMachine(name, vcpus, memory_mib, shared_core, accelerator, gpus)`;
  `GCE_MACHINES: dict[str, GceMachine]`, `GCE_UNMODELLED_GPU_PREFIXES`
- `gce_machine_or_none(name) -> GceMachine | None` (custom machine types are parsed from the name)
- `gce_machine_family(name) -> str` (`n2-standard-8` -> `n2-standard`)
- `gce_family_sizes(family) -> list[str]`, `GCE_MACHINE_SOURCES: str`

Memory is in MiB, as the Compute Engine API's `memoryMb` gives it (the machine pages say "GB" for
GiB): cluster-autoscaler builds a GCE machine's memory as `MemoryMb * MiB`
(kubernetes/autoscaler cluster-autoscaler-1.36.1, `cluster-autoscaler/cloudprovider/gce/
machine_types.go`, `NewMachineTypeFromAPI`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

GCE_MACHINE_SOURCES = (
    "Compute Engine machine types as the Compute Engine API lists them, read in SkyPilot's catalog "
    "generated from that API (skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv @006059e0); "
    "G4 from dstack's GCP offer listing (dstackai/dstack#3213)"
)


ARM_FAMILIES = ("t2a-", "c4a-", "n4a-", "a4x-")
"""The Compute Engine series on Arm CPUs (Compute Engine docs "Arm VMs on Compute": T2A on Ampere
Altra, C4A and N4A on Google Axion, A4X on NVIDIA Grace); every other series is x86-64."""


def gce_arch(machine_type: str) -> str:
    """`arm64` or `amd64`: the node's `kubernetes.io/arch`."""
    return "arm64" if machine_type.startswith(ARM_FAMILIES) else "amd64"


class GceMachine(NamedTuple):
    """A Compute Engine machine type: vCPUs, memory (MiB) and the GPUs it comes with."""

    name: str
    vcpus: int
    memory_mib: int
    shared_core: bool = False  # e2-micro / -small / -medium: a fraction of 2 vCPUs
    accelerator: str | None = None  # the GKE accelerator type built in (G2, A2, A3, G4)
    gpus: int = 0  # how many of them


# ---------------------------------------------------------------------------------------------
# Predefined series: memory per vCPU (MiB) and the sizes (vCPUs) each offers.
#
# Checked rows in the SkyPilot catalog above (GiB): e2-highmem-2/4/8 = 16/32/64; n1-standard-1 =
# 3.75; n1-highmem-8/96 = 52/624; n1-highcpu-4/32/64 = 3.599609375/28.7998046875/57.599609375
# (memoryMb 3686/29491/58982: 0.9 GiB per vCPU rounded down to whole MiB); n2-highmem-80/96 =
# 640/768; n2-standard-128 = 512; c3-standard-8/44/88 = 32/176/352.
# The other sizes follow the same per-vCPU ratio of their series (Compute Engine's general-purpose
# machine pages state the ratio per series); the size lists are the predefined shapes of each
# series. Not listed (not checked): n2-highmem-128 (its memory is not 8 GiB per vCPU), c3 -lssd
# and metal shapes. Shared-core E2: `_SHARED_CORE` below. GPU machine types: `_GPU_MACHINES`.
# ---------------------------------------------------------------------------------------------

_SERIES: dict[str, tuple[float, tuple[int, ...]]] = {
    "e2-standard": (4096, (2, 4, 8, 16, 32)),
    "e2-highmem": (8192, (2, 4, 8, 16)),
    "e2-highcpu": (1024, (2, 4, 8, 16, 32)),
    "n1-standard": (3840, (1, 2, 4, 8, 16, 32, 64, 96)),
    "n1-highmem": (6656, (2, 4, 8, 16, 32, 64, 96)),
    "n1-highcpu": (921.6, (2, 4, 8, 16, 32, 64, 96)),
    "n2-standard": (4096, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highmem": (8192, (2, 4, 8, 16, 32, 48, 64, 80, 96)),
    "n2-highcpu": (1024, (2, 4, 8, 16, 32, 48, 64, 80, 96)),
    "n2d-standard": (4096, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224)),
    "c3-standard": (4096, (4, 8, 22, 44, 88, 176)),
}

# ---------------------------------------------------------------------------------------------
# Machine types with GPUs built in: one row each, (name, vCPUs, memory GiB, accelerator, GPUs).
#
# - vCPUs and memory: A2/A3 rows read in the SkyPilot catalog above; G2 at G2's 4 GiB per vCPU
#   (g2-standard-96 = 384 read there); G4 from dstack#3213 (48/180, 96/360, 192/720, 384/1440 GB,
#   listed from the GCP API by dstack's gpuhunt): a secondary source.
# - Accelerator and count: Google's own machine->accelerator table in GoogleCloudPlatform/
#   cluster-toolkit, modules/internal/gpu-definition/main.tf (`accelerator_machines`), and the
#   Compute Engine "GPU machine types" page: "each G2 / A2 / A3 machine type has a fixed GPU
#   count".
# a3-highgpu-1g/2g/4g: these smaller A3 High shapes are reportedly limited to Spot / flex-start
# provisioning; we could not verify that from a source, so it is not checked here.
# Rows of one accelerator by GPU count, then vCPUs: the order errors list them in.
# ---------------------------------------------------------------------------------------------

_GPU_MACHINES: tuple[tuple[str, int, int, str, int], ...] = (
    ("g2-standard-4", 4, 16, "nvidia-l4", 1),
    ("g2-standard-8", 8, 32, "nvidia-l4", 1),
    ("g2-standard-12", 12, 48, "nvidia-l4", 1),
    ("g2-standard-16", 16, 64, "nvidia-l4", 1),
    ("g2-standard-32", 32, 128, "nvidia-l4", 1),
    ("g2-standard-24", 24, 96, "nvidia-l4", 2),
    ("g2-standard-48", 48, 192, "nvidia-l4", 4),
    ("g2-standard-96", 96, 384, "nvidia-l4", 8),
    ("a2-highgpu-1g", 12, 85, "nvidia-tesla-a100", 1),
    ("a2-highgpu-2g", 24, 170, "nvidia-tesla-a100", 2),
    ("a2-highgpu-4g", 48, 340, "nvidia-tesla-a100", 4),
    ("a2-highgpu-8g", 96, 680, "nvidia-tesla-a100", 8),
    ("a2-megagpu-16g", 96, 1360, "nvidia-tesla-a100", 16),
    ("a2-ultragpu-1g", 12, 170, "nvidia-a100-80gb", 1),
    ("a2-ultragpu-2g", 24, 340, "nvidia-a100-80gb", 2),
    ("a2-ultragpu-4g", 48, 680, "nvidia-a100-80gb", 4),
    ("a2-ultragpu-8g", 96, 1360, "nvidia-a100-80gb", 8),
    ("a3-highgpu-1g", 26, 234, "nvidia-h100-80gb", 1),
    ("a3-highgpu-2g", 52, 468, "nvidia-h100-80gb", 2),
    ("a3-highgpu-4g", 104, 936, "nvidia-h100-80gb", 4),
    ("a3-highgpu-8g", 208, 1872, "nvidia-h100-80gb", 8),
    ("a3-megagpu-8g", 208, 1872, "nvidia-h100-mega-80gb", 8),
    ("a3-ultragpu-8g", 224, 2952, "nvidia-h200-141gb", 8),
    ("g4-standard-48", 48, 180, "nvidia-rtx-pro-6000", 1),
    ("g4-standard-96", 96, 360, "nvidia-rtx-pro-6000", 2),
    ("g4-standard-192", 192, 720, "nvidia-rtx-pro-6000", 4),
    ("g4-standard-384", 384, 1440, "nvidia-rtx-pro-6000", 8),
)

GCE_UNMODELLED_GPU_PREFIXES = ("a3-edgegpu-", "a4-highgpu-", "a4x-highgpu-", "a4x-maxgpu-")
"""Machine families that come with GPUs but have no rows (their counts and memory could not be
verified from a source: a3-edgegpu-8g, A4 with nvidia-b200, A4X with nvidia-gb200): still GPU
machines to the catalog."""


# Shared-core E2 machine types: 2 guestCpus in the Compute Engine API (cluster-autoscaler-1.36.1
# cloudprovider/gce/machine_types.go parseCustomCpu: "e2-custom-micro-*, e2-custom-small-*,
# e2-custom-medium-* ... all have 2 guestCpus in the API"), of which the VM is entitled to 0.25 /
# 0.5 / 1; memory 1 / 2 / 4 GB (Compute Engine's E2 shared-core table, a secondary copy). GKE's
# CPU reservation for them is not known here: their nodes' shape is not modelled (fit: GI022).
_SHARED_CORE: dict[str, int] = {"e2-micro": 1024, "e2-small": 2048, "e2-medium": 4096}


def _build() -> dict[str, GceMachine]:
    out: dict[str, GceMachine] = {}
    for family, (mib_per_vcpu, sizes) in _SERIES.items():
        for vcpus in sizes:
            name = f"{family}-{vcpus}"
            # int() rounds down: n1-highcpu's 0.9 GiB per vCPU is whole MiB only that way.
            out[name] = GceMachine(name, vcpus, int(mib_per_vcpu * vcpus))
    for name, vcpus, gib, accelerator, gpus in _GPU_MACHINES:
        out[name] = GceMachine(name, vcpus, gib * 1024, accelerator=accelerator, gpus=gpus)
    for name, mib in _SHARED_CORE.items():
        out[name] = GceMachine(name, 2, mib, shared_core=True)
    return out


GCE_MACHINES: dict[str, GceMachine] = _build()

# Custom machine types: `custom-<vCPUs>-<MiB>` (N1) or `<series>-custom-<vCPUs>-<MiB>`, with an
# optional `-ext` (extended memory). cluster-autoscaler reads vCPUs and memory from the name the
# same way (`NewCustomMachineType`, machine_types.go above).
_CUSTOM = re.compile(r"(?:(?:n1|n2|n2d|n4|e2|c3)-)?custom-(\d+)-(\d+)(?:-ext)?")


def gce_machine_or_none(name: object) -> GceMachine | None:
    """The machine type's row, or None when this catalog does not know it."""
    if not isinstance(name, str):
        return None
    found = GCE_MACHINES.get(name)
    if found is not None:
        return found
    m = _CUSTOM.fullmatch(name)
    if m and int(m.group(1)) > 0 and int(m.group(2)) > 0:
        return GceMachine(name, int(m.group(1)), int(m.group(2)))
    return None


def gce_machine_family(name: str) -> str:
    """`n2-standard-8` -> `n2-standard`; `a2-ultragpu-2g` -> `a2-ultragpu`."""
    return name.rsplit("-", 1)[0] if "-" in name else name


def gce_family_sizes(family: str) -> list[str]:
    """The machine types of a family this catalog knows, smallest first."""
    rows = [m for m in GCE_MACHINES.values() if gce_machine_family(m.name) == family]
    return [m.name for m in sorted(rows, key=lambda m: (m.vcpus, m.memory_mib))]


def gce_families() -> list[str]:
    return sorted({gce_machine_family(n) for n in GCE_MACHINES})
