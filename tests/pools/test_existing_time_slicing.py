"""ExistingGpuNodes with time-sliced GPUs: the NodePatch adds the NVIDIA device plugin's config
label (the GPU annotation keeps the physical count), the pool counts GPUs x replicas, and the
errors name the argument."""

import pytest

from components.model.errors import InputError
from components.pools.existing import (
    ExistingGpuNodes,
    ExistingGpuNodesArgs,
    validate_existing_nodes_args,
)
from components.pools.pool import POOL_LABEL
from components.preview.mockrun import run_program
from tests.conftest import MANAGER

PATCH = "kubernetes:core/v1:NodePatch"
LABEL = "nvidia.com/device-plugin.config"


def test_node_patch_carries_the_config_label():
    pools: dict[str, ExistingGpuNodes] = {}

    def program():
        pools["a100"] = ExistingGpuNodes(
            "a100",
            ExistingGpuNodesArgs(
                nodes=["gpu-node-1"],
                gpus_per_node=2,
                labels={"pool": "a100"},
                time_slicing_replicas=4,
            ),
        )

    g = run_program(program)
    assert g.one(PATCH, "node-gpu-node-1").inputs == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "gpu-node-1",
            "labels": {POOL_LABEL: "a100", "pool": "a100", LABEL: "time-sliced-4"},
            # The physical count: the check multiplies by the device plugin's config.
            "annotations": {
                "gpu-inference.dev/gpus-per-node": "2",
                "pulumi.com/patchForce": "true",
                "gpu-inference.dev/taints": '[{"effect": "NoSchedule", "key": "nvidia.com/gpu", '
                '"value": "present"}]',
                "pulumi.com/patchFieldManager": MANAGER,
            },
        },
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
    }
    pool = pools["a100"]
    assert pool.gpus_per_node == 8
    assert pool.labels == {POOL_LABEL: "a100", "pool": "a100", LABEL: "time-sliced-4"}
    # The placement selects the pool label only, not the config label.
    assert pool.placement.to_pod_spec()["nodeSelector"] == {POOL_LABEL: "a100"}


def test_without_time_slicing_no_config_label():
    plan = validate_existing_nodes_args("a100", ExistingGpuNodesArgs(["n1"], gpus_per_node=2))
    assert plan.facts.gpus_per_node == 2
    assert LABEL not in plan.patches["n1"]["metadata"]["labels"]


def test_the_same_label_value_is_accepted():
    plan = validate_existing_nodes_args(
        "a100",
        ExistingGpuNodesArgs(
            ["n1"],
            gpus_per_node=1,
            labels={LABEL: "time-sliced-2"},
            present_labels={LABEL: "time-sliced-2"},
            time_slicing_replicas=2,
        ),
    )
    assert plan.patches["n1"]["metadata"]["labels"][LABEL] == "time-sliced-2"
    assert plan.facts.gpus_per_node == 2


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"gpus_per_node": 0},
            "args.time_slicing_replicas: time_slicing_replicas is given for nodes with 0 GPUs "
            "(allowed: gpus_per_node above 0 to time-slice, or leave it out)",
        ),
        (
            {"time_slicing_replicas": 1},
            "args.time_slicing_replicas: 1 is out of range (allowed: a number >= 2)",
        ),
        (
            {"time_slicing_replicas": 49},
            "args.time_slicing_replicas: 49 is out of range (allowed: a number <= 48)",
        ),
        (
            {"labels": {LABEL: "mine"}},
            f"args.labels.{LABEL}: label {LABEL}='mine' contradicts time-slicing, which sets it "
            "to 'time-sliced-4' (allowed: leave the label out (time_slicing_replicas sets it))",
        ),
        (
            {"present_labels": {LABEL: "t4-config"}},
            f"args.present_labels.{LABEL}: label {LABEL}='t4-config' contradicts time-slicing, "
            "which sets it to 'time-sliced-4' (allowed: leave the label out "
            "(time_slicing_replicas sets it))",
        ),
    ],
    ids=["cpu-nodes", "one", "forty-nine", "label", "present-label"],
)
def test_refusals(overrides, message):
    args = dict(nodes=["n1"], gpus_per_node=2, time_slicing_replicas=4)
    with pytest.raises(InputError) as e:
        validate_existing_nodes_args("a100", ExistingGpuNodesArgs(**{**args, **overrides}))
    assert str(e.value) == message
