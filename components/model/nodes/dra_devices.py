"""The devices NVIDIA's DRA driver publishes for a node, as `resource.k8s.io/v1` ResourceSlice
devices, and the DeviceClasses its chart makes. Pure data (imports only `gpus`).

Source: kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 (chart `dra-driver-nvidia-gpu` 0.4.1, pinned
in `model.deploy.versions.NVIDIA_DRA_DRIVER`):
- driver name `gpu.nvidia.com`; a full GPU is device `gpu-<minor>` (`GpuInfo.CanonicalName`,
  cmd/gpu-kubelet-plugin/deviceinfo.go) with attributes `type` ("gpu"), `uuid`, `productName`,
  `brand`, `architecture` (strings), `cudaComputeCapability`, `driverVersion`,
  `cudaDriverVersion` (versions) (`GpuInfo.Attributes`), and capacity `memory` in bytes
  (`fullGpuCapacity`, cmd/gpu-kubelet-plugin/partitions.go);
- a MIG device is `gpu-<minor>-mig-<profile>-<profileID>-<placement>` (`ToCanonicalName`,
  mig.go) with attributes `type` ("mig"), `parentUUID`, `profile` and the parent's `productName`,
  `brand`, `architecture` and versions (`CommonAttributesMig`), capacity `multiprocessors`,
  `copyEngines`, `decoders`, `encoders`, `jpegEngines`, `ofaEngines`, `memory` (bytes)
  (`CommonCapacitiesMig`) and one `memorySlice<i>` per memory slice it covers;
- `architecture` is go-nvlib's `GetArchitectureAsString` (vendor/github.com/NVIDIA/go-nvlib/pkg/
  nvlib/device/device.go: "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper",
  "Blackwell");
- DeviceClasses `gpu.nvidia.com` and `mig.nvidia.com` (templates/deviceclass-{gpu,mig}.yaml).

The GPU models' facts (`productName`, `architecture`, compute capability, memory) are in
`gpus.GPU_MODELS`, with their source. `brand`, `driverVersion`, `cudaDriverVersion`, `uuid` and the
PCI attributes depend on the machine or were not verified: they are not modelled
(`UNMODELLED_ATTRIBUTES`), and a selector that reads them is not judged. MIG memory is the
profile's nominal size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .gpus import GPU_MODELS, NvidiaGpu

DRA_DRIVER = "gpu.nvidia.com"
GPU_DEVICE_CLASS = "gpu.nvidia.com"
MIG_DEVICE_CLASS = "mig.nvidia.com"
BUILTIN_DEVICE_CLASSES: dict[str, tuple[str, ...]] = {
    GPU_DEVICE_CLASS: (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    ),
    MIG_DEVICE_CLASS: (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    ),
}
"""DeviceClass name -> its CEL selectors, as the driver's chart makes them."""
UNMODELLED_ATTRIBUTES = frozenset(
    {
        "driverVersion",
        "cudaDriverVersion",
        "uuid",
        "brand",
        "parentUUID",
        "addressingMode",
        "resource.kubernetes.io/pciBusID",
        "resource.kubernetes.io/pcieRoot",
    }
)
"""Attributes the driver publishes whose values depend on the machine (not known offline)."""

DRA_NODE_LABEL = ("nvidia.com/gpu.present", "true")
"""The label a DRA pool's nodes are created with: the default node affinity of the kubelet plugin
of NVIDIA's DRA driver (chart `dra-driver-nvidia-gpu` 0.4.1 values.yaml `kubeletPlugin.affinity`,
one of its terms). A GPU pool whose nodes the stack creates with it is a DRA pool. (EKS's
nodeadm sets it on every NVIDIA node from Kubernetes 1.35, awslabs/amazon-eks-ami
nodeadm/internal/kubelet/config.go: so the platform pins the driver to its DRA pools by their
pool label, not by this one.)"""
DRA_MIG_LABEL = "gpu-inference.dev/dra-mig-profile"
"""Label on the nodes of a DRA pool whose GPUs are split into static MIG instances of one profile
(the driver then publishes the MIG devices, `node_devices`)."""
DRA_DEVICES_ANNOTATION = "gpu-inference.dev/dra-devices"
"""Annotation on an existing node's NodePatch: the devices the node publishes through NVIDIA's
DRA driver, a JSON list of `resource.k8s.io/v1` ResourceSlice devices (`node_devices`)."""

_MIB = 2**20


def _gpus() -> dict[str, NvidiaGpu]:
    out: dict[str, NvidiaGpu] = {}
    for gpu in GPU_MODELS.values():
        if gpu.dra is not None:
            for name in (gpu.aws, *(offer.model for offer in gpu.gke)):
                if name:
                    out.setdefault(name, gpu.dra)
    return out


GPUS: dict[str, NvidiaGpu] = _gpus()
"""GPU model, as the GKE and AWS tables name it (`GkeAccelerator.gpu_model`,
`AwsGpuInstance.gpu_model`) -> what the driver publishes for it."""

# Streaming multiprocessors of a MIG profile's compute slices (`<n>g`): NVIDIA's MIG user guide
# profile tables (A100: 14 SMs per slice; H100 / H200: 16 per slice; RTX PRO 6000: 47).
_SMS_PER_SLICE = {"Ampere": 14, "Hopper": 16, "Blackwell": 47}


def _attr(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


def gpu_device(gpu: NvidiaGpu, minor: int) -> dict[str, Any]:
    """A full GPU, as the driver publishes it (`GpuInfo.GetDevice`)."""
    return {
        "name": f"gpu-{minor}",
        "attributes": {
            "type": _attr("gpu"),
            "productName": _attr(gpu.product_name),
            "architecture": _attr(gpu.architecture),
            "cudaComputeCapability": {"version": gpu.compute_capability},
        },
        "capacity": {"memory": {"value": f"{gpu.memory_mib}Mi"}},
    }


def mig_device(gpu: NvidiaGpu, minor: int, profile: str, index: int) -> dict[str, Any]:
    """One MIG instance of `profile` (`MigDeviceInfo.GetDevice`); `index`: its placement."""
    slices = int(profile.split("g.", 1)[0])
    memory_gb = int(profile.split(".", 1)[1].rstrip("gb"))
    sms = slices * _SMS_PER_SLICE.get(gpu.architecture, 14)
    capacity: dict[str, Any] = {
        "multiprocessors": {"value": str(sms)},
        "memory": {"value": f"{memory_gb}Gi"},
    }
    for i in range(index * slices, index * slices + slices):
        capacity[f"memorySlice{i}"] = {"value": "1"}
    safe = profile.replace(".", "")
    return {
        "name": f"gpu-{minor}-mig-{safe}-{index}",
        "attributes": {
            "type": _attr("mig"),
            "profile": _attr(profile),
            "productName": _attr(gpu.product_name),
            "architecture": _attr(gpu.architecture),
            "cudaComputeCapability": {"version": gpu.compute_capability},
        },
        "capacity": capacity,
    }


def node_devices(
    gpu_model: str, count: int, mig_profile: str | None = None, mig_instances: int = 0
) -> tuple[dict[str, Any], ...]:
    """The devices one node publishes: `count` GPUs of `gpu_model`, each whole or (with
    `mig_profile`) split into `mig_instances` MIG devices of that profile (static MIG: the
    driver then publishes the MIG devices, not the parent GPU). Empty for a model the table
    lacks."""
    gpu = GPUS.get(gpu_model)
    if gpu is None or count <= 0:
        return ()
    if mig_profile:
        return tuple(
            mig_device(gpu, minor, mig_profile, i)
            for minor in range(count)
            for i in range(max(mig_instances, 1))
        )
    return tuple(gpu_device(gpu, minor) for minor in range(count))


def attribute_value(attribute: Mapping[str, Any]) -> tuple[str, Any] | None:
    """A ResourceSlice attribute `{string|int|bool|version: value}` as (kind, value)."""
    for kind in ("string", "int", "bool", "version"):
        if kind in attribute:
            return kind, attribute[kind]
    return None
