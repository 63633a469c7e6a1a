"""What a GKE node's OS keeps of its memory and disk, by image (COS or Ubuntu), and ephemeral
storage on local SSDs: cluster-autoscaler's estimates, transcribed from kubernetes/autoscaler
cluster-autoscaler-1.36.1 `cluster-autoscaler/cloudprovider/gce/gce_reserved.go` and
`templates.go` (its GCE node templates are built with them).

Pure (imports nothing of ours but units). `shapes.gke_node_shape` uses them.

- `gce_kernel_reserved(memory, image)`: `CalculateKernelReserved`: memory/64 + 16 MiB, + 64 MiB
  (swiotlb) above 3 GiB, + 8 MiB at or below 8 GiB, + min(0.175% of memory, 248 MiB); Ubuntu
  4 MiB more (`ubuntuSpecificOffset`).
- `gke_boot_disk_capacity(disk, image)`: `CalculateOSReservedEphemeralStorage`: COS ceil(1.5635%
  of disk) + ceil(4.148 GiB), Ubuntu ceil(3.083% of disk) + ceil(0.171 GiB), each + min(100 MiB,
  ceil(0.1% of disk)).
- `gke_local_ssd_capacity(count, image)`: with ephemeral storage on local SSDs
  (`ephemeral_storage_local_ssd_count`), `BuildNodeFromTemplate` takes count x 375 GiB
  (`localssdsize.SimpleLocalSSDProvider`) and `BuildCapacity` subtracts the filesystem overhead
  measured per OS and SSD count (`EphemeralStorageOnLocalSSDFilesystemOverheadInBytes`: counts
  above 8 use the 16 row, above 16 the 24 row).
"""

from __future__ import annotations

import math

Ki = 1024
Mi = 1024 * Ki
Gi = 1024 * Mi

IMAGES = ("cos", "ubuntu")
LOCAL_SSD_GIB = 375  # localssdsize.localSSDDiskSizeInGiB

# EphemeralStorageOnLocalSSDFilesystemOverheadInKiBByOSAndDiskCount
_SSD_OVERHEAD_KIB: dict[str, dict[int, int]] = {
    "cos": {
        1: 7289472,
        2: 13725224,
        3: 20031312,
        4: 26332924,
        5: 32634536,
        6: 38946604,
        7: 45254008,
        8: 51556096,
        16: 52837800,
        24: 78686620,
    },
    "ubuntu": {
        1: 7219840,
        2: 13651496,
        3: 19953488,
        4: 26255100,
        5: 32556712,
        6: 38860588,
        7: 45163896,
        8: 51465984,
        16: 52747688,
        24: 78601704,
    },
}


def image_of(image_type: object) -> str | None:
    """A GKE `imageType` as the OS distribution cluster-autoscaler reads
    (`extractOperatingSystemDistributionFromImageType`): `COS_CONTAINERD` / `COS` -> cos,
    `UBUNTU_CONTAINERD` / `UBUNTU` -> ubuntu; absent: GKE's default, COS_CONTAINERD; anything
    else (Windows): None, not modelled."""
    if image_type is None or image_type == "":
        return "cos"
    text = str(image_type).lower()
    if text in ("cos_containerd", "cos"):
        return "cos"
    if text in ("ubuntu_containerd", "ubuntu"):
        return "ubuntu"
    return None


def gce_kernel_reserved(machine_memory: int, image: str = "cos") -> int:
    """Memory the Linux kernel of a GKE node (x86) keeps: the kubelet's memory capacity is the
    machine's memory less this (`CalculateKernelReserved`)."""
    reserved = machine_memory // 64 + 16 * Mi
    if machine_memory > 3 * Gi:
        reserved += 64 * Mi
    if machine_memory <= 8 * Gi:
        reserved += 8 * Mi
    reserved += int(min(0.00175 * float(machine_memory), 248 * Mi))
    return reserved + (4 * Mi if image == "ubuntu" else 0)


def gke_boot_disk_capacity(disk_bytes: int, image: str = "cos") -> int:
    """The ephemeral-storage capacity the kubelet reports on a boot disk: the disk less the OS
    partitions (`CalculateOSReservedEphemeralStorage`). For a 100 GB COS disk it is 64 MiB below
    the 98831908Ki GKE reports."""
    if image == "ubuntu":
        os_reserved = math.ceil(0.03083 * float(disk_bytes)) + math.ceil(0.171 * Gi)
    else:
        os_reserved = math.ceil(0.015635 * float(disk_bytes)) + math.ceil(4.148 * Gi)
    os_reserved += int(min(100 * Mi, math.ceil(0.001 * float(disk_bytes))))
    return max(disk_bytes - os_reserved, 0)


def gke_local_ssd_capacity(count: int, image: str = "cos") -> int:
    """The ephemeral-storage capacity on `count` local SSDs (`BuildCapacity` with
    `ephemeralStorageLocalSSDCount`): count x 375 GiB less the measured filesystem overhead."""
    measured = count if count <= 8 else (16 if count <= 16 else 24)
    return count * LOCAL_SSD_GIB * Gi - _SSD_OVERHEAD_KIB[image][measured] * Ki
