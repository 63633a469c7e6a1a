"""EksGpuNodeGroup under Pulumi mocks: exact NodeGroup / LaunchTemplate / IAM / ASG Tag inputs, the
placement it hands out (seed 001), replacement-safe naming, and the errors for bad arguments."""

import itertools
import json
from typing import Any

import pytest

from components.model.errors import InputError
from components.model.scheduling import Taint
from components.pools.eks import (
    EksGpuNodeGroup,
    EksGpuNodeGroupArgs,
    validate_eks_pool_args,
)
from components.pools.pool import POOL_LABEL, replacement_collides
from components.preview import mockrun
from components.preview.mockrun import run_program

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LT = "aws:ec2/launchTemplate:LaunchTemplate"
ROLE = "aws:iam/role:Role"
ATTACH = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
TAG = "aws:autoscaling/tag:Tag"
CA = "k8s.io/cluster-autoscaler/"
GPU_TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}


def args(**kw) -> EksGpuNodeGroupArgs:
    base = dict(
        cluster_name="inference",
        subnet_ids=["subnet-a", "subnet-b"],
        instance_types=["g4dn.xlarge"],
    )
    base.update(kw)
    return EksGpuNodeGroupArgs(**base)


@pytest.fixture(scope="module")
def world():
    groups: dict[str, EksGpuNodeGroup] = {}
    ignore: dict[str, list[str]] = {}
    original = mockrun.Recorder.RegisterResource

    def spy(self, request):
        ignore[request.name] = list(request.ignoreChanges)
        return original(self, request)

    def program():
        groups["t4"] = EksGpuNodeGroup(
            "t4", args(select_labels=["k8s.amazonaws.com/accelerator"], max_nodes=3)
        )
        groups["a10"] = EksGpuNodeGroup(
            "a10-spot",
            args(
                instance_types=["g5.2xlarge", "g5.4xlarge"],
                spot=True,
                min_nodes=1,
                max_nodes=5,
                desired_nodes=2,
                labels={"team": "ml"},
                taints=[Taint("dedicated", "inference", "NoSchedule")],
                node_role_arn="arn:aws:iam::123456789012:role/existing-nodes",
                disk_size_gb=200,
                ami_type="BOTTLEROCKET_x86_64_NVIDIA",
            ),
        )
        groups["cpu"] = EksGpuNodeGroup(
            "pre",
            args(
                instance_types=["m6i.xlarge"],
                max_nodes=2,
                node_role_arn="arn:aws:iam::123456789012:role/x",
            ),
        )

    mockrun.Recorder.RegisterResource = spy  # type: ignore[method-assign]
    try:
        g = run_program(program)
    finally:
        mockrun.Recorder.RegisterResource = original  # type: ignore[method-assign]
    return g, groups, ignore


def tags_of(g, prefix: str) -> dict[str, str]:
    out = {}
    for r in g.of_type(TAG):
        if r.name.startswith(prefix + "-asg-"):
            assert r.inputs["autoscalingGroupName"] == "eks-fake-asg"
            assert r.inputs["tag"]["propagateAtLaunch"] is False
            out[r.inputs["tag"]["key"]] = r.inputs["tag"]["value"]
    return out


def test_seed001_node_group_inputs(world):
    g, _, _ = world
    ng = g.one(NODE_GROUP, "t4")
    assert ng.inputs["clusterName"] == "inference"
    assert ng.inputs["subnetIds"] == ["subnet-a", "subnet-b"]
    assert ng.inputs["nodeGroupNamePrefix"] == "t4-"
    assert "nodeGroupName" not in ng.inputs  # never a fixed cloud name (issue 6.3)
    assert ng.inputs["instanceTypes"] == ["g4dn.xlarge"]
    assert ng.inputs["amiType"] == "AL2023_x86_64_NVIDIA"
    assert ng.inputs["capacityType"] == "ON_DEMAND"
    assert ng.inputs["scalingConfig"] == {"minSize": 0, "maxSize": 3, "desiredSize": 0}
    assert ng.inputs["labels"] == {
        POOL_LABEL: "t4",
        "k8s.amazonaws.com/accelerator": "nvidia-tesla-t4",
    }
    # EKS does not taint GPU nodes itself: the default GPU taint is declared, cloud casing
    assert ng.inputs["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
    ]
    assert ng.inputs["nodeRoleArn"] == "arn:aws:iam::000000000000:role/fake-node-role"
    assert ng.inputs["launchTemplate"] == {
        "id": mockrun._fake_id(LT, "t4-lt"),
        "version": "1",
    }
    assert "diskSize" not in ng.inputs  # the disk is in the launch template


def test_seed001_placement(world):
    _, groups, _ = world
    t4 = groups["t4"]
    # KServe seed 001's GPU node selector example, plus the GPU taint's toleration (a pod that
    # requests GPUs gets it from ExtendedResourceToleration anyway; emitting it keeps the
    # placement exact on clusters without that plugin).
    assert t4.placement.to_pod_spec() == {
        "nodeSelector": {"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"},
        "tolerations": [GPU_TOLERATION],
    }
    assert t4.placement.without_tolerations(["nvidia.com/gpu"]).to_pod_spec() == {
        "nodeSelector": {"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"}
    }
    assert t4.gpus_per_node == 1 and t4.facts.gpu_model == "T4"
    assert t4.labels == {
        POOL_LABEL: "t4",
        "k8s.amazonaws.com/accelerator": "nvidia-tesla-t4",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
    }
    assert t4.facts.min_nodes == 0 and t4.facts.max_nodes == 3


def test_launch_template_imdsv2_and_disk(world):
    g, _, _ = world
    lt = g.one(LT, "t4-lt")
    assert lt.inputs["namePrefix"] == "t4-"
    assert lt.inputs["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1,
    }
    assert lt.inputs["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "ebs": {
                "volumeSize": 100,
                "volumeType": "gp3",
                "encrypted": "true",
                "deleteOnTermination": "true",
            },
        }
    ]
    # Bottlerocket keeps containers on its data volume
    br = g.one(LT, "a10-spot-lt").inputs["blockDeviceMappings"][0]
    assert br["deviceName"] == "/dev/xvdb" and br["ebs"]["volumeSize"] == 200


def test_node_role_created_with_only_worker_policies(world):
    g, _, _ = world
    roles = g.of_type(ROLE)
    assert [r.name for r in roles] == ["t4-node-role"]
    policy = json.loads(roles[0].inputs["assumeRolePolicy"])
    assert policy["Statement"] == [
        {
            "Effect": "Allow",
            "Principal": {"Service": "ec2.amazonaws.com"},
            "Action": "sts:AssumeRole",
        }
    ]
    attachments = g.of_type(ATTACH)
    assert sorted(a.inputs["policyArn"] for a in attachments) == [
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    ]
    ng = g.one(NODE_GROUP, "t4")
    for a in attachments:
        assert g.depends_on(ng, a)  # the group waits for its role's policies
        assert g.depends_on(a, roles[0])
        assert a.inputs["role"] == mockrun._fake_id(ROLE, "t4-node-role")
    comp = g.one("gpu-inference:index:EksGpuNodeGroup", "t4")
    assert all(r.parent == comp.urn for r in (*roles, *attachments, ng, g.one(LT, "t4-lt")))


def test_given_role_creates_no_iam(world):
    g, _, _ = world
    assert g.one(NODE_GROUP, "a10-spot").inputs["nodeRoleArn"] == (
        "arn:aws:iam::123456789012:role/existing-nodes"
    )
    assert not [r for r in g.of_type(ROLE) + g.of_type(ATTACH) if r.name.startswith("a10-spot")]


def test_autoscaler_tags_on_the_asg(world):
    g, _, _ = world
    assert tags_of(g, "t4") == {
        CA + "enabled": "true",
        CA + "inference": "owned",
        CA + "node-template/label/" + POOL_LABEL: "t4",
        CA + "node-template/label/k8s.amazonaws.com/accelerator": "nvidia-tesla-t4",
        CA + "node-template/label/eks.amazonaws.com/capacityType": "ON_DEMAND",
        CA + "node-template/taint/nvidia.com/gpu": "present:NoSchedule",
        CA + "node-template/resources/nvidia.com/gpu": "1",
        # What an AL2023 node leaves allocatable on its 100 GiB volume: without the tag
        # cluster-autoscaler's template node has no ephemeral storage (aws_manager.go).
        CA + "node-template/resources/ephemeral-storage": "91135Mi",
    }
    assert tags_of(g, "a10-spot") == {
        CA + "enabled": "true",
        CA + "inference": "owned",
        CA + "node-template/label/" + POOL_LABEL: "a10-spot",
        CA + "node-template/label/team": "ml",
        CA + "node-template/label/k8s.amazonaws.com/accelerator": "nvidia-a10g",
        CA + "node-template/label/eks.amazonaws.com/capacityType": "SPOT",
        CA + "node-template/taint/dedicated": "inference:NoSchedule",
        CA + "node-template/resources/nvidia.com/gpu": "1",
    }
    assert tags_of(g, "pre") == {
        CA + "enabled": "true",
        CA + "inference": "owned",
        CA + "node-template/label/" + POOL_LABEL: "pre",
        CA + "node-template/label/eks.amazonaws.com/capacityType": "ON_DEMAND",
        CA + "node-template/resources/ephemeral-storage": "91135Mi",
    }


@pytest.mark.parametrize(
    ("ami", "disk", "tag"),
    [
        ("AL2023_x86_64_NVIDIA", 100, "91135Mi"),
        ("AL2023_x86_64_NVIDIA", 500, None),  # computed below from the node shape
        ("BOTTLEROCKET_x86_64_NVIDIA", 100, None),  # its reservations are not modelled
        ("AL2023_x86_64_NVIDIA", None, None),  # the AMI's own volume: not known
    ],
)
def test_the_ephemeral_storage_tag_is_the_nodes_allocatable(ami: str, disk: Any, tag: Any):
    from components.model.nodes.shapes import Mi, eks_node_shape
    from components.pools.eks import template_ephemeral_storage

    got = template_ephemeral_storage(["g5.xlarge", "g5.2xlarge"], ami, disk)
    if ami.startswith("AL2023") and disk:
        expected = eks_node_shape("g5.xlarge", disk_gib=disk).allocatable.ephemeral_storage
        assert got == f"{expected // Mi}Mi"
    if tag is not None or not (ami.startswith("AL2023") and disk):
        assert got == tag


def test_spot_group_with_custom_taint(world):
    g, groups, _ = world
    ng = g.one(NODE_GROUP, "a10-spot")
    assert ng.inputs["capacityType"] == "SPOT"
    assert ng.inputs["amiType"] == "BOTTLEROCKET_x86_64_NVIDIA"
    assert ng.inputs["instanceTypes"] == ["g5.2xlarge", "g5.4xlarge"]
    assert ng.inputs["scalingConfig"] == {"minSize": 1, "maxSize": 5, "desiredSize": 2}
    assert ng.inputs["taints"] == [
        {"key": "dedicated", "value": "inference", "effect": "NO_SCHEDULE"}
    ]
    a10 = groups["a10"]
    assert a10.facts.custom_gpu_taint is True and a10.facts.spot is True
    assert a10.placement.to_pod_spec() == {
        "nodeSelector": {POOL_LABEL: "a10-spot"},
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}
        ],
    }


def test_cpu_group(world):
    g, groups, _ = world
    ng = g.one(NODE_GROUP, "pre")
    assert ng.inputs["amiType"] == "AL2023_x86_64_STANDARD"
    assert ng.inputs["taints"] == []
    assert ng.inputs["labels"] == {POOL_LABEL: "pre"}
    assert groups["cpu"].gpus_per_node == 0
    assert groups["cpu"].placement.to_pod_spec() == {"nodeSelector": {POOL_LABEL: "pre"}}


def test_desired_size_is_left_to_the_autoscaler(world):
    _, _, ignore = world
    assert ignore["t4"] == ["scalingConfig.desiredSize"]
    assert ignore["a10-spot"] == ["scalingConfig.desiredSize"]


@pytest.mark.parametrize(
    "instance_types, ami",
    [
        (["g5g.xlarge"], "AL2023_ARM_64_NVIDIA"),
        (["m7g.large"], "AL2023_ARM_64_STANDARD"),
        (["c5.2xlarge", "m5.2xlarge"], "AL2023_x86_64_STANDARD"),
    ],
)
def test_default_ami_follows_architecture(instance_types, ami):
    assert validate_eks_pool_args("p", args(instance_types=instance_types)).ami_type == ami


def test_replacement_forcing_changes_never_collide():
    """Issue 6.3: instance types, AMI, capacity type and taints force a new node group; it is
    created before the old one is deleted, so it must not ask for the old name."""
    variants = {
        "base": dict(),
        "instance": dict(instance_types=["g4dn.2xlarge"]),
        "spot": dict(spot=True),
        "taints": dict(taints=[Taint("dedicated", "t4", "NoSchedule")]),
        "ami": dict(ami_type="BOTTLEROCKET_x86_64_NVIDIA"),
    }

    def program():
        for key, kw in variants.items():
            EksGpuNodeGroup(key, args(pool_name="t4", node_role_arn="arn:aws:iam::1:role/r", **kw))

    g = run_program(program)
    for typ in (NODE_GROUP, LT):
        inputs = {r.name: r.inputs for r in g.of_type(typ)}
        assert len(inputs) == len(variants)
        for old, new in itertools.permutations(inputs, 2):
            assert not replacement_collides(typ, inputs[old], inputs[new]), (typ, old, new)
    assert {r.inputs["nodeGroupNamePrefix"] for r in g.of_type(NODE_GROUP)} == {"t4-"}


BAD = [
    (
        {"instance_types": ["g4dn.xlarge", "g5.xlarge"]},
        "args.instance_types[1]",
        ["GPU model A10G", "same GPU model"],
    ),
    (
        {"instance_types": ["t4.xlarge"], "gpu": True},
        "args.instance_types[0]",
        ["not a GPU instance type"],
    ),
    (
        {"instance_types": ["g4dn.xlarge"], "gpu": False},
        "args.instance_types[0]",
        ["a CPU node group must not use it"],
    ),
    ({"instance_types": []}, "args.instance_types", ["the list is empty"]),
    (
        {"instance_types": ["m5.large", "m7g.large"]},
        "args.instance_types",
        ["mix x86_64 and arm64"],
    ),
    (
        {"ami_type": "AL2023_x86_64_STANDARD"},
        "args.ami_type",
        ["has no NVIDIA driver", "AL2023_x86_64_NVIDIA"],
    ),
    ({"ami_type": "AL2023_ARM_64_NVIDIA"}, "args.ami_type", ["does not fit x86_64 GPU nodes"]),
    ({"ami_type": "AL2_x86_64_GPU"}, "args.ami_type", ["'AL2_x86_64_GPU' is not a valid value"]),
    (
        {"instance_types": ["m5.large"], "ami_type": "AL2023_x86_64_NVIDIA"},
        "args.ami_type",
        ["for GPU instance types only"],
    ),
    (
        {"capacity_type": "RESERVED"},
        "args.capacity_type",
        ["'RESERVED' is not a valid value", "ON_DEMAND, SPOT"],
    ),
    (
        {"capacity_type": "ON_DEMAND", "spot": True},
        "args.capacity_type",
        ["spot True conflicts with capacity_type ON_DEMAND"],
    ),
    (
        {"desired_nodes": 5, "max_nodes": 2},
        "args.desired_nodes",
        ["outside min_nodes 0 .. max_nodes 2"],
    ),
    ({"min_nodes": 2, "max_nodes": 1}, "args.min_nodes", ["above max_nodes 1"]),
    ({"max_nodes": 0}, "args.max_nodes", ["1 or more"]),
    ({"taints": []}, "args.taints", ["GPU pool without a NoSchedule or NoExecute taint"]),
    (
        {"taints": [Taint("d", "a", "NoSchedule"), Taint("d", "a", "NoExecute")]},
        "args.taints[1]",
        ["one taint per key"],
    ),
    (
        {"labels": {"k8s.amazonaws.com/accelerator": "nvidia-a10g"}},
        "args.labels.k8s.amazonaws.com/accelerator",
        ["sets it to 'nvidia-tesla-t4' itself"],
    ),
    (
        {"labels": {"eks.amazonaws.com/nodegroup": "x"}},
        "args.labels.eks.amazonaws.com/nodegroup",
        ["'eks.amazonaws.com'"],
    ),
    ({"cluster_name": "my cluster"}, "args.cluster_name", ["not an EKS cluster name"]),
    ({"subnet_ids": []}, "args.subnet_ids", ["no subnets given"]),
    ({"disk_size_gb": 0}, "args.disk_size_gb", ["0 is out of range", "a number >= 10"]),
    ({"aws_partition": "azure"}, "args.aws_partition", ["'azure' is not a valid value"]),
    ({"pool_name": "T4"}, "args.pool_name", ["'T4'", "DNS-1123"]),
    ({"select_labels": ["pool"]}, "args.select_labels[0]", ["do not carry"]),
]


@pytest.mark.parametrize("overrides, path, pieces", BAD, ids=[b[1] + ":" + b[2][0] for b in BAD])
def test_bad_eks_args(overrides, path, pieces):
    with pytest.raises(InputError) as info:
        validate_eks_pool_args("t4", args(**overrides))
    assert info.value.path == path
    for piece in pieces:
        assert piece in str(info.value), str(info.value)


def test_reserved_label_with_the_value_the_group_sets_is_accepted():
    plan = validate_eks_pool_args(
        "t4",
        args(
            labels={"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"},
            select_labels=["k8s.amazonaws.com/accelerator"],
        ),
    )
    assert plan.facts.placement.selector == {"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"}


def test_error_names_the_component():
    with pytest.raises(InputError) as info:
        EksGpuNodeGroup("t4", args(capacity_type="RESERVED"))
    assert str(info.value).startswith("EksGpuNodeGroup('t4').args.capacity_type: ")
