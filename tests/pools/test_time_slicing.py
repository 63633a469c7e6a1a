"""Time-sliced GPUs through the NVIDIA device plugin: EKS node groups and Karpenter pools carry the
config label and count GPUs x replicas (autoscaler tag, NodeOverlays), and the placement check
reads the replicas from the device plugin release of any graph."""

import pytest

from components.check import check
from components.model.errors import InputError
from components.model.nodes.sharing import config_file, plugin_config, replicas_by_config
from components.pools.eks import EksGpuNodeGroupArgs, validate_eks_pool_args
from components.pools.karpenter import KarpenterGpuNodePoolArgs, validate_karpenter_pool_args

LABEL = "nvidia.com/device-plugin.config"


def test_plugin_config_round_trips():
    config = plugin_config([4, 2, 4])
    assert list(config["map"]) == ["default", "time-sliced-2", "time-sliced-4"]
    assert config["map"]["time-sliced-4"] == (
        "version: v1\nsharing:\n  timeSlicing:\n    failRequestsGreaterThanOne: true\n"
        "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
    )
    assert replicas_by_config(config) == {"time-sliced-2": 2, "time-sliced-4": 4}


def test_eks_node_group():
    plan = validate_eks_pool_args(
        "t4",
        EksGpuNodeGroupArgs(
            cluster_name="c",
            subnet_ids=["s"],
            instance_types=["g4dn.12xlarge"],
            time_slicing_replicas=3,
        ),
    )
    assert plan.facts.gpus_per_node == 12  # 4 T4 x 3
    assert plan.facts.labels[LABEL] == "time-sliced-3"
    assert plan.asg_tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"] == "12"
    assert (
        plan.asg_tags[f"k8s.io/cluster-autoscaler/node-template/label/{LABEL}"] == "time-sliced-3"
    )


def test_karpenter_overlays_per_gpu_count():
    plan = validate_karpenter_pool_args(
        "a10g",
        KarpenterGpuNodePoolArgs(
            cluster_name="c", node_role="r", gpu_names=["a10g"], time_slicing_replicas=2
        ),
    )
    assert plan.facts.gpus_per_node == 16
    assert [(o["metadata"]["name"], o["spec"]["capacity"]) for o in plan.node_overlays] == [
        ("a10g-gpus-1", {"nvidia.com/gpu": "2"}),
        ("a10g-gpus-4", {"nvidia.com/gpu": "8"}),
        ("a10g-gpus-8", {"nvidia.com/gpu": "16"}),
    ]
    assert plan.node_overlays[1]["spec"]["requirements"] == [
        {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["a10g"]},
        {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "In", "values": ["4"]},
    ]


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: validate_eks_pool_args(
                "cpu",
                EksGpuNodeGroupArgs(
                    cluster_name="c",
                    subnet_ids=["s"],
                    instance_types=["m6i.xlarge"],
                    time_slicing_replicas=2,
                ),
            ),
            "args.time_slicing_replicas: time_slicing_replicas is given on a CPU node group (allowed: "
            "GPU instance types to time-slice, or leave it out)",
        ),
        (
            lambda: validate_eks_pool_args(
                "t4",
                EksGpuNodeGroupArgs(
                    cluster_name="c",
                    subnet_ids=["s"],
                    instance_types=["g4dn.xlarge"],
                    time_slicing_replicas=1,
                ),
            ),
            "args.time_slicing_replicas: 1 is out of range (allowed: a number >= 2)",
        ),
        (
            lambda: validate_karpenter_pool_args(
                "p", KarpenterGpuNodePoolArgs(auto_mode=True, time_slicing_replicas=2)
            ),
            "args.time_slicing_replicas: time_slicing_replicas on EKS Auto Mode, which runs its own "
            "device plugin (allowed: leave it out on Auto Mode)",
        ),
    ],
    ids=["cpu", "one", "auto-mode"],
)
def test_refusals(build, message):
    with pytest.raises(InputError) as e:
        build()
    assert str(e.value) == message


def _node_group(name, labels):
    return {
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": name,
        "inputs": {
            "instanceTypes": ["g5.12xlarge"],
            "amiType": "AL2023_x86_64_NVIDIA",
            "labels": {"gpu-inference.dev/pool": name, **labels},
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            "scalingConfig": {"minSize": 0, "maxSize": 2},
        },
    }


def test_check_reads_replicas_from_the_device_plugin_release():
    plugin = {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "nvdp",
        "inputs": {
            "chart": "nvidia-device-plugin",
            "values": {
                "config": {"map": {"plain": "version: v1\n", "x5": config_file(5)}, "default": "x5"}
            },
        },
    }
    graph = [_node_group("picked", {LABEL: "plain"}), _node_group("by-default", {}), plugin]
    pools = {p.name: p.gpus_per_node for p in check(graph).pools}
    assert pools == {"picked": 4, "by-default": 20}  # g5.12xlarge: 4 A10G; the default config x5
    assert {p.name: p.gpus_per_node for p in check(graph[:2]).pools} == {
        "picked": 4,
        "by-default": 4,
    }
