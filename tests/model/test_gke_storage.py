"""A GKE node's OS and local SSDs (issue #29 items 6 and 13), each row from
kubernetes/autoscaler cluster-autoscaler-1.36.1 cluster-autoscaler/cloudprovider/gce
gce_reserved.go / templates.go, the estimates its node templates are built with."""

from __future__ import annotations

import math

import pytest

from components.model.nodes.gke_storage import (
    gce_kernel_reserved,
    gke_boot_disk_capacity,
    gke_local_ssd_capacity,
    image_of,
)
from components.model.nodes.shapes import Gi, Ki, Mi, gke_node_shape, gke_node_shape_or_none


@pytest.mark.parametrize(
    ("image_type", "image"),
    [
        (None, "cos"),  # GKE's default image, COS_CONTAINERD
        ("COS_CONTAINERD", "cos"),
        ("UBUNTU_CONTAINERD", "ubuntu"),
        ("ubuntu", "ubuntu"),
        ("WINDOWS_LTSC_CONTAINERD", None),  # not modelled
    ],
)
def test_image_types_as_cluster_autoscaler_reads_them(image_type, image):
    """templates.go extractOperatingSystemDistributionFromImageType."""
    assert image_of(image_type) == image


def test_ubuntu_kernel_keeps_4mi_more_than_cos():
    """CalculateKernelReserved: ubuntuSpecificOffset = 4 MiB on top of the same correction."""
    for memory in (4 * Gi, 16 * Gi, 340 * Gi):
        assert gce_kernel_reserved(memory, "ubuntu") == gce_kernel_reserved(memory) + 4 * Mi


@pytest.mark.parametrize("disk", [10 * Gi, 100 * Gi, 2000 * Gi])
def test_ubuntu_boot_disk_partitions(disk):
    """CalculateOSReservedEphemeralStorage, Ubuntu: ceil(0.03083 x disk) + ceil(0.171 GiB) +
    min(100 MiB, ceil(0.001 x disk))."""
    reserved = math.ceil(0.03083 * disk) + math.ceil(0.171 * Gi)
    reserved += min(100 * Mi, math.ceil(0.001 * disk))
    assert gke_boot_disk_capacity(disk, "ubuntu") == disk - reserved


@pytest.mark.parametrize(
    ("count", "image", "overhead_kib"),
    [
        (1, "cos", 7289472),
        (2, "ubuntu", 13651496),
        (8, "cos", 51556096),
        (10, "cos", 52837800),  # above 8: the 16 row
        (16, "ubuntu", 52747688),
        (20, "cos", 78686620),  # above 16: the 24 row
    ],
)
def test_local_ssd_capacity_is_375_gib_each_less_the_measured_overhead(count, image, overhead_kib):
    """BuildCapacity with ephemeral_storage_local_ssd_count: count x 375 GiB
    (SimpleLocalSSDProvider) less EphemeralStorageOnLocalSSDFilesystemOverheadInBytes."""
    assert gke_local_ssd_capacity(count, image) == count * 375 * Gi - overhead_kib * Ki


def test_a_node_on_local_ssds_takes_its_ephemeral_storage_from_them():
    boot = gke_node_shape("g2-standard-8")
    ssd = gke_node_shape("g2-standard-8", local_ssds=2)
    assert ssd.capacity.ephemeral_storage == gke_local_ssd_capacity(2)
    assert ssd.allocatable.ephemeral_storage > 500 * Gi > boot.allocatable.ephemeral_storage
    # Everything else is the node's own.
    assert (ssd.allocatable.cpu, ssd.allocatable.memory) == (
        boot.allocatable.cpu,
        boot.allocatable.memory,
    )


def test_shared_core_e2_is_listed_but_not_modelled():
    """2 guestCpus (cluster-autoscaler machine_types.go parseCustomCpu); GKE's CPU reservation
    for shared-core machines is not known here: no shape, never a guess."""
    assert gke_node_shape_or_none("e2-medium") is None
