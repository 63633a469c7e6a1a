"""GkeAutopilotGpuPool: no cloud resource, the placement Autopilot needs (accelerator, count, spot
selected; GPU and spot taints tolerated), what it registers for the check, and the check keeping
on-demand and spot Autopilot pools apart."""

import pytest

from components.check import check
from components.model.errors import InputError
from components.pools.autopilot import (
    GkeAutopilotGpuPool,
    GkeAutopilotGpuPoolArgs,
    plan_autopilot_pool,
)
from components.preview.mockrun import run_program

GPU = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
SPOT = {
    "key": "cloud.google.com/gke-spot",
    "operator": "Equal",
    "value": "true",
    "effect": "NoSchedule",
}


@pytest.fixture(scope="module")
def world():
    pools = {}

    def program():
        pools["spot"] = GkeAutopilotGpuPool(
            "l4-spot", GkeAutopilotGpuPoolArgs("nvidia-l4", spot=True)
        )
        pools["od"] = GkeAutopilotGpuPool("l4", GkeAutopilotGpuPoolArgs("nvidia-l4", gpu_count=1))

    return pools, run_program(program)


def test_registers_only_itself_with_what_the_check_reads(world):
    _, g = world
    # Sorted by name: two components of one program register in no fixed order.
    mine = sorted((r for r in g.resources if r.name in ("l4-spot", "l4")), key=lambda r: r.name)
    assert [(r.type, r.name, r.inputs, r.custom) for r in mine] == [
        (
            "gpu-inference:index:GkeAutopilotGpuPool",
            "l4",
            {"poolName": "l4", "accelerator": "nvidia-l4", "gpuCount": 1, "spot": False},
            False,
        ),
        (
            "gpu-inference:index:GkeAutopilotGpuPool",
            "l4-spot",
            {"poolName": "l4-spot", "accelerator": "nvidia-l4", "spot": True},
            False,
        ),
    ]
    assert not [r for r in g.resources if r.parent in {m.urn for m in mine}]  # no children


def test_placements(world):
    pools, _ = world
    assert pools["spot"].placement.to_pod_spec() == {
        "nodeSelector": {
            "cloud.google.com/gke-accelerator": "nvidia-l4",
            "cloud.google.com/gke-spot": "true",
        },
        "tolerations": [GPU, SPOT],
    }
    assert pools["od"].placement.to_pod_spec() == {
        "nodeSelector": {
            "cloud.google.com/gke-accelerator": "nvidia-l4",
            "cloud.google.com/gke-accelerator-count": "1",
        },
        "tolerations": [GPU],
    }
    assert pools["spot"].gpus_per_node == 8  # Autopilot may size an L4 node up to 8 GPUs


def _deployment(name, fragment, gpus, wired):
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "annotations": {"gpu-inference.dev/pool": wired}},
            "spec": {
                "replicas": 0,
                "template": {
                    "spec": {
                        **fragment,
                        "containers": [
                            {"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
                        ],
                    }
                },
            },
        },
    }


def test_each_placement_lands_on_its_own_pool_only(world):
    pools, g = world
    graph = g.as_graph()
    report = check(
        [
            *graph,
            _deployment("a", pools["spot"].placement.to_pod_spec(), 1, "l4-spot"),
            _deployment("b", pools["od"].placement.to_pod_spec(), 1, "l4"),
        ]
    )
    lands = {w.name: w.pools for w in report.workloads}
    assert lands == {"a": ("l4-spot",), "b": ("l4",)}
    assert report.errors == []


def test_two_gpus_on_a_one_gpu_pool_is_a_finding(world):
    """The node has 1 GPU (GI004), and Autopilot rejects a Pod whose gke-accelerator-count is
    below its GPU quantity (GI029)."""
    pools, g = world
    report = check([*g.as_graph(), _deployment("b", pools["od"].placement.to_pod_spec(), 2, "l4")])
    assert [f.code for f in report.errors] == ["GI004", "GI029"]


def test_three_gpus_is_a_quantity_autopilot_rejects(world):
    pools, g = world
    spot = pools["spot"].placement.to_pod_spec()
    report = check([*g.as_graph(), _deployment("a", spot, 3, "l4-spot")])
    assert [(f.code, f.message) for f in report.errors] == [
        (
            "GI029",
            "Autopilot would reject it: it requests 3 nvidia-l4 GPUs, a quantity Autopilot does "
            "not support for that type",
        )
    ]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            dict(accelerator="nvidia-l5"),
            "args.accelerator: 'nvidia-l5' is not a valid value (did you mean 'nvidia-l4'?) "
            "(allowed: nvidia-b200, nvidia-h200-141gb, "
            "nvidia-h100-mega-80gb, nvidia-h100-80gb, nvidia-a100-80gb, nvidia-tesla-a100, "
            "nvidia-rtx-pro-6000, nvidia-l4, nvidia-tesla-t4)",
        ),
        (
            dict(accelerator="nvidia-tesla-v100"),
            "args.accelerator: 'nvidia-tesla-v100' is not a valid value (did you mean "
            "'nvidia-tesla-a100'?) (allowed: nvidia-b200, nvidia-h200-141gb, "
            "nvidia-h100-mega-80gb, nvidia-h100-80gb, nvidia-a100-80gb, nvidia-tesla-a100, "
            "nvidia-rtx-pro-6000, nvidia-l4, nvidia-tesla-t4)",
        ),
        (
            dict(accelerator="nvidia-l4", gpu_count=3),
            "args.gpu_count: 3 nvidia-l4 GPUs per node is not a quantity Autopilot accepts "
            "(allowed: 1, 2, 4, 8)",
        ),
    ],
    ids=["accelerator", "not-on-autopilot", "count"],
)
def test_bad_arguments(kw, message):
    with pytest.raises(InputError) as e:
        plan_autopilot_pool("p", GkeAutopilotGpuPoolArgs(**kw))
    assert str(e.value) == message
