"""An EKS managed node group that only the intended pods can use: `EksGpuNodeGroup` ->
`aws.eks.NodeGroup`, with its launch template, its node role when none is given, and the
cluster-autoscaler tags on its Auto Scaling group.

- GPU groups: instance types from the catalog (same GPU model, count and architecture), an NVIDIA
  AMI type (default `AL2023_x86_64_NVIDIA`, or `AL2023_ARM_64_NVIDIA` for arm64; Bottlerocket's
  NVIDIA variants allowed), the label `k8s.amazonaws.com/accelerator` (the autoscaler's GPU label
  on AWS) and, unless taints are given, the taint `nvidia.com/gpu=present:NoSchedule`: EKS does
  not taint GPU nodes by itself.
- CPU groups (no GPU instance types, or `gpu=False`): `AL2023_x86_64_STANDARD` (or ARM), no taint
  unless asked.
- Scale from zero: cluster-autoscaler must know the labels, taints and GPUs of a node it has not
  seen. It reads them from tags on the Auto Scaling group:
  `k8s.io/cluster-autoscaler/node-template/label/<key>` = value,
  `k8s.io/cluster-autoscaler/node-template/taint/<key>` = `<value>:<Effect>` (Kubernetes' effect
  spelling, e.g. `true:NoSchedule`: kubernetes/autoscaler cloudprovider/aws README and its
  `TestExtractTaintsFromAsg`), `k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu`
  = count, `.../resources/ephemeral-storage` = what the nodes leave allocatable on their volume
  (`template_ephemeral_storage`: the template node has no ephemeral storage without it, so a pod
  asking any would never scale the group up from zero), plus the auto-discovery tags
  `k8s.io/cluster-autoscaler/enabled` and
  `k8s.io/cluster-autoscaler/<cluster>` = `owned`. Managed node group tags do not reach the ASG
  (terraform-aws-modules/terraform-aws-eks #2597), so each is an `aws.autoscaling.Tag` on the
  group's ASG (`propagate_at_launch` False: they describe the group, not the instances).
- `desired_size` starts at `min_nodes` and is then ignored (`ignore_changes`): the autoscaler
  owns it, and `pulumi up` must not scale a busy group back.
- Secure defaults: a launch template requiring IMDSv2 with hop limit 1 (pods cannot
  borrow the node role through the metadata service; they use IRSA), an encrypted gp3 root/data
  volume (the disk size lives in the template: EKS refuses `disk_size` beside a launch template),
  and, when no `node_role_arn` is given, a role with only AmazonEKSWorkerNodePolicy,
  AmazonEKS_CNI_Policy and AmazonEC2ContainerRegistryReadOnly.
- Cloud names: `node_group_name_prefix` and a launch template `name_prefix` (see
  `components.pools.pool`), so replacement never collides; the role is auto-named by Pulumi.
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.sdks import cloud_sdk
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import (
    EKS_MAX_NODES,
    is_gpu_instance,
    validate_aws_cpu_instance_types,
    validate_aws_gpu_instance_types,
)
from ..model.nodes.dra_devices import DRA_NODE_LABEL
from ..model.nodes.labels import EKS_CAPACITY_LABEL
from ..model.nodes.shapes import Mi, eks_node_shape_or_none
from ..model.nodes.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ..model.nodes.sharing import config_name
from ..model.scheduling import CLOUD_EFFECTS, GPU_RESOURCE, Taint
from ..model.syntax import EKS_CLUSTER_NAME_RULE
from .component import PoolComponent
from .pool import (
    GP3_MAX_GIB,
    PoolFacts,
    PoolKind,
    build_facts,
    check_one_taint_per_key,
    declared_labels,
    eks_name_prefix,
    pool_name_of,
)

ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"
CAPACITY_TYPES = ("ON_DEMAND", "SPOT")
GPU_AMI_TYPES = {
    "x86_64": ("AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA"),
    "arm64": ("AL2023_ARM_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA"),
}
CPU_AMI_TYPES = {
    "x86_64": ("AL2023_x86_64_STANDARD", "BOTTLEROCKET_x86_64"),
    "arm64": ("AL2023_ARM_64_STANDARD", "BOTTLEROCKET_ARM_64"),
}
AMI_TYPES = tuple(a for types in (*GPU_AMI_TYPES.values(), *CPU_AMI_TYPES.values()) for a in types)
WORKER_POLICIES = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryReadOnly",
)
CA_PREFIX = "k8s.io/cluster-autoscaler/"
CA_TEMPLATE = CA_PREFIX + "node-template/"
IGNORE_CHANGES = ["scalingConfig.desiredSize"]
ASG_TAG_KEY_MAX = 128
ASG_TAG_VALUE_MAX = 256
EC2_ASSUME_ROLE_POLICY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "ec2.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    },
    sort_keys=True,
)

# Graviton families carry a `g` right after the generation digit (m7g, c6gn, r8gd, t4g, g5g).
_GRAVITON = re.compile(r"^[a-z]+[0-9]+g[a-z0-9]*$")
AWS_PARTITIONS = ("aws", "aws-cn", "aws-us-gov")


@dataclass
class EksGpuNodeGroupArgs:
    """Inputs of an `EksGpuNodeGroup`; every default is here."""

    cluster_name: str = field(metadata=stack(source="cluster.name", syntax="eks-cluster-name"))
    """The EKS cluster's name (also part of the autoscaler's discovery tag)."""
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]] = field(
        metadata=stack(source="cluster.subnetIds")
    )
    """Subnets for the nodes."""
    instance_types: Sequence[str] = field(metadata=stack(min_items=1))
    """EC2 instance types, e.g. `["g5.xlarge"]`: all with the same GPU model, count and
    architecture (GPU types from the catalog's families: `g4dn`, `g5`, `g6`, `p4d`, `p5`, ...), or
    all without GPUs and of one architecture. GPU types make a GPU pool by themselves: a
    `g4dn.xlarge` pool gets `accelerator` `nvidia-tesla-t4` and `gpus_per_node` 1 from the
    catalog."""
    gpu: Optional[bool] = field(default=None, metadata=stack(hidden=True))
    """GPU group or CPU group; default: GPU when the instance types have GPUs (or `accelerator` or
    `gpus_per_node` is given)."""
    accelerator: Optional[str] = None
    """The GPU the instance types must have, as their `k8s.amazonaws.com/accelerator` label names it
    (`nvidia-a10g`): a check (given, it makes a GPU pool); default: theirs (from the catalog)."""
    gpus_per_node: Optional[int] = field(default=None, metadata=stack("gpusPerNode", ge=1))
    """The GPUs each instance type must have: a check; default: theirs (from the catalog)."""
    ami_type: Optional[str] = field(default=None, metadata=stack(choices=AMI_TYPES))
    """EKS AMI type, of the instances' architecture: an NVIDIA one for GPU groups (a standard AMI
    has no NVIDIA driver), a standard one for CPU groups; default `AL2023_x86_64_NVIDIA` /
    `AL2023_ARM_64_NVIDIA` for GPU groups, `AL2023_x86_64_STANDARD` / `AL2023_ARM_64_STANDARD` for
    CPU groups. Bottlerocket's NVIDIA AMIs run their own device plugin (no GPU sharing)."""
    capacity_type: Optional[str] = field(default=None, metadata=stack(choices=CAPACITY_TYPES))
    """`ON_DEMAND` | `SPOT` (the nodes' `eks.amazonaws.com/capacityType` label); default from
    `spot`."""
    spot: Optional[bool] = None
    """Spot capacity (same as capacity_type SPOT; both given must agree). For spot with an
    on-demand fallback, declare two pools and wire workloads to both, spot first."""
    min_nodes: Optional[int] = field(default=0, metadata=stack(ge=0))
    """Fewest nodes (0: scale to zero); at most `max_nodes`."""
    max_nodes: Optional[int] = field(default=1, metadata=stack(required=True, le=EKS_MAX_NODES))
    """Most nodes, at least 1."""
    desired_nodes: Optional[int] = field(default=None, metadata=stack(ge=0))
    """Nodes at creation; default `min_nodes`. Later owned by the autoscaler (ignored)."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """Extra node labels (values are strings: quote numbers and booleans in YAML), also tagged on
    the Auto Scaling group for scale-from-zero. Not `gpu-inference.dev/pool`, nor a key under
    `kubernetes.io`, `k8s.io`, `cloud.google.com`, `eks.amazonaws.com` or `k8s.amazonaws.com`
    unless with the value the pool sets anyway (`k8s.amazonaws.com/accelerator: nvidia-a10g` on
    an A10G pool)."""
    taints: Optional[Sequence[Taint]] = None
    """Node taints `{key, value, effect}`: value default `""`, effect `NoSchedule` (default),
    `PreferNoSchedule` or `NoExecute` (Kubernetes' casing), one per key and effect; a GPU group
    needs a NoSchedule or NoExecute one. Unset: `nvidia.com/gpu=present:NoSchedule` for GPU groups
    (EKS sets no taint itself), none for CPU."""
    select_labels: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="label-keys")
    )
    """Label keys the placement selects; default: the pool label `gpu-inference.dev/pool`."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    node_role_arn: Optional[pulumi.Input[str]] = None
    """An existing node IAM role (its ARN); default: a new role with only AmazonEKSWorkerNodePolicy,
    AmazonEKS_CNI_Policy and AmazonEC2ContainerRegistryReadOnly."""
    disk_size_gb: Optional[int] = field(default=100, metadata=stack(ge=10, le=GP3_MAX_GIB))
    """Node volume size in GiB, 10..16384 (an encrypted gp3 volume in the launch template)."""
    aws_partition: Optional[str] = field(default="aws", metadata=stack(choices=AWS_PARTITIONS))
    """ARN partition of the managed policies (`aws`, `aws-cn`, `aws-us-gov`)."""
    time_slicing_replicas: Optional[int] = field(
        default=None, metadata=stack("gpuSharing.maxClientsPerGpu", ge=2, le=48)
    )
    """Time-sliced GPUs: each GPU is shared by this many pods (2..48) through the NVIDIA device
    plugin's config `time-sliced-<n>`, picked by the node label `nvidia.com/device-plugin.config`;
    the node (and the autoscaler's node template) then has GPUs x n `nvidia.com/gpu`."""
    dra: Optional[bool] = False
    """GPUs by claim (DRA) instead of `nvidia.com/gpu`: the nodes get the label
    `nvidia.com/gpu.present=true` (the one NVIDIA's DRA driver's kubelet plugin runs on), the
    stack's NVIDIA device plugin stays off them (a DRA driver and a device plugin must never manage
    the same GPUs), no `nvidia.com/gpu` autoscaler tag, and workloads claim the GPUs (`gpuClaim`).
    Whole GPUs on the AL2023 NVIDIA AMI (Bottlerocket's NVIDIA AMIs run a device plugin of their
    own); no time-slicing; Kubernetes 1.34 or later (EKS: "Use the NVIDIA DRA driver or device
    plugin on Amazon EKS"). cluster-autoscaler does not scale a DRA group up from zero nodes (see
    docs/dra.md)."""
    pool_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool`, the "
            "nodes' `gpu-inference.dev/pool` label and the node group's cloud name prefix; a "
            "DNS-1123 label of at most 40 characters.",
        ),
    )
    """The pool's name (its `gpu-inference.dev/pool` label and cloud name prefix); default: the
    component's name."""


@dataclass(frozen=True)
class EksPoolPlan:
    """Everything decided before deployment."""

    facts: PoolFacts
    ami_type: str
    capacity_type: str
    instance_types: tuple[str, ...]
    desired_nodes: int
    asg_tags: dict[str, str]
    root_device: str


def _arch_of_cpu_type(instance_type: str) -> str:
    return "arm64" if _GRAVITON.match(instance_type.split(".", 1)[0]) else "x86_64"


def template_ephemeral_storage(
    instance_types: Sequence[str], ami_type: str, disk_gib: Optional[int]
) -> Optional[str]:
    """The `node-template/resources/ephemeral-storage` tag value: what the nodes' kubelet leaves
    allocatable on their volume (`shapes.eks_node_shape`: the disk less nodeadm's 1Gi kube-reserved
    and the 10% nodefs eviction threshold), rounded down to MiB, the least of the instance types.
    cluster-autoscaler's template node has no ephemeral storage but what this tag gives it
    (cluster-autoscaler-1.36.1 `cloudprovider/aws/aws_manager.go` `buildNodeFromTemplate`:
    Allocatable = Capacity), so without it a pod asking any never scales the group up from zero
    (kubernetes/autoscaler#1869). None where the reservations are not modelled (Bottlerocket) or
    the volume is the AMI's own."""
    if disk_gib is None or not ami_type.startswith("AL2023"):
        return None
    shapes = [eks_node_shape_or_none(t, disk_gib=disk_gib) for t in instance_types]
    if not shapes or any(shape is None for shape in shapes):
        return None
    least = min(shape.allocatable.ephemeral_storage for shape in shapes if shape is not None)
    return f"{least // Mi}Mi"


def autoscaler_tags(
    cluster_name: str,
    facts: PoolFacts,
    ephemeral_storage: Optional[str] = None,
    gpu_resource: bool = True,
) -> dict[str, str]:
    """The cluster-autoscaler discovery and node-template tags for the group's ASG
    (`gpu_resource`: the `nvidia.com/gpu` resource tag; a DRA group advertises none)."""
    tags = {CA_PREFIX + "enabled": "true", CA_PREFIX + cluster_name: "owned"}
    for k, v in facts.labels.items():
        tags[f"{CA_TEMPLATE}label/{k}"] = v
    for t in facts.taints:
        tags[f"{CA_TEMPLATE}taint/{t.key}"] = f"{t.value}:{t.effect}"
    if facts.gpus_per_node and gpu_resource:
        tags[f"{CA_TEMPLATE}resources/{GPU_RESOURCE}"] = str(facts.gpus_per_node)
    if ephemeral_storage is not None:
        tags[f"{CA_TEMPLATE}resources/ephemeral-storage"] = ephemeral_storage
    return tags


def eks_dra_labels(args: EksGpuNodeGroupArgs) -> dict[str, str]:
    """The node labels of a DRA group; InputError for what a DRA group cannot have: the NVIDIA
    device plugin's time-slicing, and Bottlerocket's NVIDIA AMIs, which run NVIDIA's device plugin
    themselves (its settings reference, bottlerocket.dev 1.54.x `settings.kubelet-device-plugins`,
    has no switch to turn it off), while a DRA driver and a device plugin must never manage the
    same GPUs: each hands out the same device (Karpenter's DRA guide, "Running DRA drivers
    alongside device plugins")."""
    if args.time_slicing_replicas is not None:
        raise InputError(
            "time_slicing_replicas is given on a DRA pool: time-slicing is the NVIDIA device "
            "plugin's, which a DRA pool does not run",
            "leave it unset, or dra unset",
            "args.time_slicing_replicas",
        )
    if (args.ami_type or "").startswith("BOTTLEROCKET"):
        raise InputError(
            f"AMI type {args.ami_type} on a DRA pool: Bottlerocket's NVIDIA AMIs run NVIDIA's "
            "device plugin themselves, which would hand out the GPUs the DRA driver publishes",
            "an AL2023 NVIDIA AMI (the default), or dra unset",
            "args.ami_type",
        )
    return {DRA_NODE_LABEL[0]: DRA_NODE_LABEL[1]}


def validate_eks_pool_args(name: str, args: EksGpuNodeGroupArgs) -> EksPoolPlan:
    """Check every input (no Pulumi) and decide everything. What each field declares
    (`check_declared`) comes first; the rest are rules across fields and the catalog's facts."""
    check_declared(args)
    pool_name, name_path = pool_name_of(name, args.pool_name)
    if not isinstance(args.cluster_name, str):  # an Output: its syntax is not known yet
        raise InputError(
            f"cluster name {show(args.cluster_name)} is not a plain string (it is part of the "
            "autoscaler's tag key)",
            EKS_CLUSTER_NAME_RULE,
            "args.cluster_name",
        )
    if isinstance(args.subnet_ids, pulumi.Output):
        pass  # known at deploy time (e.g. the cluster's own subnets)
    elif isinstance(args.subnet_ids, (str, Mapping)) or not isinstance(args.subnet_ids, Sequence):
        raise InputError(
            f"subnet_ids {show(args.subnet_ids)} is not a list",
            "a list of subnet ids",
            "args.subnet_ids",
        )
    elif not args.subnet_ids:
        raise InputError("no subnets given", "one or more subnet ids", "args.subnet_ids")
    types = args.instance_types
    gpu = args.gpu
    if gpu is None:
        gpu = (
            args.accelerator is not None
            or args.gpus_per_node is not None
            or (
                not isinstance(types, str)
                and isinstance(types, Sequence)
                and any(isinstance(t, str) and is_gpu_instance(t) for t in types)
            )
        )
    cloud_labels: dict[str, str] = {}
    if gpu:
        instance_types, arch, gpus, gpu_model = _gpu_types(args, cloud_labels)
        allowed_amis = GPU_AMI_TYPES[arch]
    else:
        instance_types, arch = _cpu_types(args)
        gpus, gpu_model, allowed_amis = 0, None, CPU_AMI_TYPES[arch]
    ami = _ami(args.ami_type or allowed_amis[0], allowed_amis, gpu, arch, instance_types)
    capacity = _capacity(args)
    cloud_labels[EKS_CAPACITY_LABEL] = capacity
    facts = build_facts(
        pool_name,
        cloud="eks",
        user_labels=args.labels,
        cloud_labels=cloud_labels,
        taints=args.taints,
        gpus_per_node=gpus,
        gpu_model=gpu_model,
        min_nodes=args.min_nodes if args.min_nodes is not None else 0,
        max_nodes=args.max_nodes if args.max_nodes is not None else 1,
        spot=capacity == "SPOT",
        select_labels=args.select_labels,
        scheduling_style=args.scheduling_style,
        name_path=name_path,
    )
    check_one_taint_per_key(facts, "an EKS node group")
    desired = _desired(args, facts)
    tags = autoscaler_tags(
        args.cluster_name,
        facts,
        template_ephemeral_storage(instance_types, ami, args.disk_size_gb),
        gpu_resource=not args.dra,
    )
    _check_asg_tags(tags)
    return EksPoolPlan(
        facts=facts,
        ami_type=ami,
        capacity_type=capacity,
        instance_types=tuple(instance_types),
        desired_nodes=desired,
        asg_tags=tags,
        root_device="/dev/xvdb" if ami.startswith("BOTTLEROCKET") else "/dev/xvda",
    )


def _gpu_types(
    args: EksGpuNodeGroupArgs, cloud_labels: dict[str, str]
) -> tuple[Sequence[str], str, int, Optional[str]]:
    """GPU instance types of one shape: (the types, arch, GPUs per node counting time-slicing,
    GPU model), with the accelerator, DRA and device-plugin labels added."""
    try:
        shape = validate_aws_gpu_instance_types(args.instance_types)
    except InputError as e:
        raise e.at("args.instance_types") from None
    gpus, gpu_model = shape.gpus, shape.gpu_model
    first = shape.instance_types[0]
    if args.accelerator is not None and args.accelerator != shape.accelerator_label:
        raise InputError(
            f"accelerator {show(args.accelerator)} is not the GPU of {first!r} "
            f"({gpu_model}, label {shape.accelerator_label!r})",
            f"{shape.accelerator_label!r}, or leave it out (it comes from the instance types)",
            "args.accelerator",
        )
    if args.gpus_per_node is not None and args.gpus_per_node != gpus:
        raise InputError(
            f"{first!r} has {gpus} GPU(s), not {show(args.gpus_per_node)}",
            f"{gpus}, or leave it out (it comes from the instance types)",
            "args.gpus_per_node",
        )
    cloud_labels[ACCELERATOR_LABEL] = shape.accelerator_label
    if args.dra:
        cloud_labels.update(eks_dra_labels(args))
    if args.time_slicing_replicas is not None:
        replicas = args.time_slicing_replicas
        gpus *= replicas
        cloud_labels[DEVICE_PLUGIN_CONFIG_LABEL] = config_name(replicas)
    return shape.instance_types, shape.arch, gpus, gpu_model


def _cpu_types(args: EksGpuNodeGroupArgs) -> tuple[Sequence[str], str]:
    """CPU instance types of one architecture: (the types, arch); no GPU settings."""
    if args.dra:
        raise InputError(
            "dra is set on a CPU node group (no GPU instance types)",
            "GPU instance types whose GPUs pods claim, or leave dra unset",
            "args.dra",
        )
    if args.time_slicing_replicas is not None:
        raise InputError(
            "time_slicing_replicas is given on a CPU node group",
            "GPU instance types to time-slice, or leave it out",
            "args.time_slicing_replicas",
        )
    try:
        instance_types = validate_aws_cpu_instance_types(args.instance_types)
    except InputError as e:
        raise e.at("args.instance_types") from None
    arches = {_arch_of_cpu_type(t) for t in instance_types}
    if len(arches) > 1:
        raise InputError(
            f"instance types {', '.join(instance_types)} mix x86_64 and arm64 (Graviton); "
            "one AMI type serves the group",
            "instance types of one architecture",
            "args.instance_types",
        )
    return instance_types, arches.pop()


def _ami(
    ami: str, allowed_amis: Sequence[str], gpu: bool, arch: str, instance_types: Sequence[str]
) -> str:
    """The AMI type, one that fits the nodes' architecture and GPUs."""
    if ami in allowed_amis:
        return ami
    if gpu and ami in CPU_AMI_TYPES[arch]:
        problem = (
            f"AMI type {ami} has no NVIDIA driver; {instance_types[0]} nodes would expose no GPUs"
        )
    elif not gpu and ami in GPU_AMI_TYPES[arch]:
        problem = f"AMI type {ami} is an NVIDIA AMI, for GPU instance types only"
    else:
        problem = f"AMI type {show(ami)} does not fit {arch} {'GPU' if gpu else 'CPU'} nodes"
    raise InputError(problem, ", ".join(allowed_amis), "args.ami_type")


def _capacity(args: EksGpuNodeGroupArgs) -> str:
    """`ON_DEMAND` or `SPOT`, from `capacity_type` or `spot` (which must agree)."""
    if (
        args.spot is not None
        and args.capacity_type is not None
        and (args.capacity_type == "SPOT") != bool(args.spot)
    ):
        raise InputError(
            f"spot {args.spot} conflicts with capacity_type {args.capacity_type}",
            "spot True with SPOT (or no capacity_type), spot False with ON_DEMAND",
            "args.capacity_type",
        )
    return args.capacity_type or ("SPOT" if args.spot else "ON_DEMAND")


def _desired(args: EksGpuNodeGroupArgs, facts: PoolFacts) -> int:
    desired = args.desired_nodes if args.desired_nodes is not None else facts.min_nodes
    if not facts.min_nodes <= desired <= facts.max_nodes:
        raise InputError(
            f"desired_nodes {show(desired)} is outside min_nodes {facts.min_nodes} .. max_nodes "
            f"{facts.max_nodes}",
            "a whole number from min_nodes to max_nodes (or unset: min_nodes)",
            "args.desired_nodes",
        )
    return desired


def _check_asg_tags(tags: Mapping[str, str]) -> None:
    for k, v in tags.items():
        if len(k) > ASG_TAG_KEY_MAX or len(v) > ASG_TAG_VALUE_MAX:
            raise InputError(
                f"the autoscaler tag {k!r} is longer than an Auto Scaling group tag may be",
                f"tag keys of at most {ASG_TAG_KEY_MAX} characters (shorter label or taint "
                f"keys), values of at most {ASG_TAG_VALUE_MAX}",
                "args.labels",
            )


def launch_template_inputs(plan: EksPoolPlan, args: EksGpuNodeGroupArgs) -> dict[str, Any]:
    """`aws.ec2.LaunchTemplate` keyword arguments: IMDSv2 only, hop limit 1, the disk.

    Bottlerocket keeps images and containers on its second volume (`/dev/xvdb`), so the size goes
    there; AL2023 uses the root volume (`/dev/xvda`)."""
    inputs: dict[str, Any] = {
        "name_prefix": eks_name_prefix(plan.facts.name),
        "metadata_options": {
            "http_endpoint": "enabled",
            "http_tokens": "required",
            "http_put_response_hop_limit": 1,
        },
        "update_default_version": True,
    }
    if args.disk_size_gb is not None:
        inputs["block_device_mappings"] = [
            {
                "device_name": plan.root_device,
                "ebs": {
                    "volume_size": args.disk_size_gb,
                    "volume_type": "gp3",
                    "encrypted": "true",
                    "delete_on_termination": "true",
                },
            }
        ]
    return inputs


def node_group_inputs(plan: EksPoolPlan, args: EksGpuNodeGroupArgs) -> dict[str, Any]:
    """`aws.eks.NodeGroup` keyword arguments, without the role and launch template (outputs)."""
    facts = plan.facts
    taints = []
    for t in facts.taints:
        taint: dict[str, str] = {"key": t.key, "effect": CLOUD_EFFECTS[str(t.effect)]}
        if t.value:
            taint["value"] = str(t.value)
        taints.append(taint)
    return {
        "cluster_name": args.cluster_name,
        "subnet_ids": args.subnet_ids
        if isinstance(args.subnet_ids, pulumi.Output)
        else list(args.subnet_ids),  # type: ignore[arg-type]
        "node_group_name_prefix": eks_name_prefix(facts.name),
        "instance_types": list(plan.instance_types),
        "ami_type": plan.ami_type,
        "capacity_type": plan.capacity_type,
        "scaling_config": {
            "min_size": facts.min_nodes,
            "max_size": facts.max_nodes,
            "desired_size": plan.desired_nodes,
        },
        "labels": declared_labels(facts, [EKS_CAPACITY_LABEL]),
        "taints": taints,
    }


def worker_policy_arns(partition: str) -> list[str]:
    return [f"arn:{partition}:iam::aws:policy/{p}" for p in WORKER_POLICIES]


class EksGpuNodeGroup(PoolComponent):
    """An EKS managed node group (GPU or CPU) with its labels, taints, autoscaler tags and the
    placement that lands on it."""

    # Only Outputs are annotated at class level: Pulumi's component-provider analyzer reads these
    # as the component's schema outputs. The plain ones (facts, placement, labels, taints,
    # gpus_per_node) come from PoolComponent.
    cloud_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: EksGpuNodeGroupArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        plan = self._start(
            "gpu-inference:index:EksGpuNodeGroup", name, validate_eks_pool_args, args, opts
        )
        aws = cloud_sdk("pulumi_aws")

        child = pulumi.ResourceOptions(parent=self)

        depends: list[pulumi.Resource] = []
        role_arn: pulumi.Input[str]
        if args.node_role_arn is not None:
            role_arn = args.node_role_arn
        else:
            role = aws.iam.Role(
                f"{name}-node-role",
                assume_role_policy=EC2_ASSUME_ROLE_POLICY,
                description=f"EKS worker nodes of pool {plan.facts.name}",
                opts=child,
            )
            for arn in worker_policy_arns(args.aws_partition or "aws"):
                depends.append(
                    aws.iam.RolePolicyAttachment(
                        f"{name}-{arn.rsplit('/', 1)[1]}",
                        role=role.id,  # an IAM role's id is its name
                        policy_arn=arn,
                        opts=child,
                    )
                )
            role_arn = role.arn
        self.node_role_arn = role_arn

        self.launch_template = aws.ec2.LaunchTemplate(
            f"{name}-lt", **launch_template_inputs(plan, args), opts=child
        )
        self.node_group = aws.eks.NodeGroup(
            name,
            node_role_arn=role_arn,
            launch_template={
                "id": self.launch_template.id,
                "version": self.launch_template.latest_version.apply(str),
            },
            **node_group_inputs(plan, args),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=depends, ignore_changes=list(IGNORE_CHANGES)
            ),
        )
        self.cloud_name = self.node_group.node_group_name
        asg_name = self.node_group.resources.apply(lambda rs: rs[0].autoscaling_groups[0].name)
        self.asg_name = asg_name
        self.asg_tags = [
            aws.autoscaling.Tag(
                f"{name}-asg-{key}",
                autoscaling_group_name=asg_name,
                tag={"key": key, "value": value, "propagate_at_launch": False},
                opts=child,
            )
            for key, value in plan.asg_tags.items()
        ]
        self._finish(cloudName=self.node_group.node_group_name)


KIND = PoolKind(
    name="eks",
    title="EKS managed node group",
    provider="eks",
    args=EksGpuNodeGroupArgs,
    plan=validate_eks_pool_args,
    component=EksGpuNodeGroup,
)
