"""What the fit findings propose: the same kind of node with another disk or a larger type of the
same family (`reshaped`, `disk_to_hold`, `larger_to_hold`)."""

from __future__ import annotations

import pytest

from components.model.nodes.shapes import (
    Gi,
    Resources,
    disk_to_hold,
    eks_node_shape,
    existing_node_shape,
    gke_node_shape,
    karpenter_node_shape,
    larger_to_hold,
    reshaped,
)

SHAPES = [
    (gke_node_shape("a2-ultragpu-2g"), gke_node_shape, "disk_gb"),
    (eks_node_shape("g5.2xlarge"), eks_node_shape, "disk_gib"),
    (karpenter_node_shape("p5.48xlarge"), karpenter_node_shape, "disk_gib"),
]


@pytest.mark.parametrize(("shape", "build", "key"), SHAPES, ids=lambda v: getattr(v, "name", None))
def test_reshaped_is_the_builder_with_the_other_disk(shape, build, key):
    assert reshaped(shape, disk=300) == build(shape.name, **{key: 300})


@pytest.mark.parametrize("want_gib", [50, 100, 130, 500])
@pytest.mark.parametrize(("shape", "build", "key"), SHAPES, ids=lambda v: getattr(v, "name", None))
def test_disk_to_hold_is_the_smallest_that_holds(shape, build, key, want_gib):
    need = Resources(ephemeral_storage=want_gib * Gi)
    size = disk_to_hold(shape, need)
    assert size is not None
    assert build(shape.name, **{key: size}).allocatable.ephemeral_storage >= need.ephemeral_storage
    assert build(shape.name, **{key: size - 1}).allocatable.ephemeral_storage < (
        need.ephemeral_storage
    )


def test_larger_to_hold_is_the_smallest_of_the_family_that_holds():
    # 40 CPUs: a2-ultragpu-4g (48 vCPUs) is the first A100 80GB size that holds them.
    found = larger_to_hold(gke_node_shape("a2-ultragpu-2g"), Resources(cpu=40_000))
    assert found is not None and found.name == "a2-ultragpu-4g"
    found = larger_to_hold(eks_node_shape("g5.xlarge"), Resources(cpu=12_000, memory=100 * Gi))
    assert found is not None and found.name == "g5.8xlarge"
    assert larger_to_hold(gke_node_shape("g2-standard-8"), Resources(cpu=500_000)) is None


def test_existing_nodes_are_not_reshaped():
    shape = existing_node_shape("n", {"cpu": "8", "memory": "8Gi", "ephemeral-storage": "8Gi"})
    assert reshaped(shape, disk=100) is None
    assert disk_to_hold(shape, Resources(ephemeral_storage=9 * Gi)) is None
    assert larger_to_hold(shape, Resources(cpu=9000)) is None
