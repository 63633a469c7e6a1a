"""What Karpenter (AWS provider, v1.14.1) knows about an EC2 GPU instance type, as node labels, and
which catalog instance types a NodePool's requirements admit.

Pure Python (imports no Pulumi). Used by `components.pools.karpenter` to validate a pool's
requirements against the catalog, and by the placement check to turn a NodePool found in any graph
into node templates (one per admitted instance type and capacity type).

Sources (aws/karpenter-provider-aws at tag v1.14.1):
- `pkg/providers/instancetype/types.go` `computeRequirements`: every node Karpenter launches
  carries the instance type's well-known labels: `node.kubernetes.io/instance-type`,
  `kubernetes.io/arch`, `kubernetes.io/os`, `karpenter.sh/capacity-type`, and
  `karpenter.k8s.aws/instance-{category,family,generation,size}` (category and generation from the
  regex `(^[a-z]+)(\\-[0-9]+tb)?([0-9]+).*\\.`), and for an instance with one GPU kind
  `karpenter.k8s.aws/instance-gpu-{name,manufacturer,count,memory}` where name and manufacturer
  are EC2's `GpuInfo` strings in lower kebab case (`A10G` -> `a10g`, `NVIDIA` -> `nvidia`) and
  memory is MiB per GPU as EC2 reports it (e.g. 22888 for A10G in the provider's test data, not
  the nominal 24 GiB: we therefore never model or emit a GPU memory requirement).
- `website/content/en/docs/concepts/nodepools.md`: capacity types `spot`, `on-demand`,
  `reserved`; "If a NodePool is compatible with multiple capacity types, Karpenter will prioritize
  `reserved` capacity, followed by `spot`, then finally `on-demand`."; operators In, NotIn,
  Exists, DoesNotExist, Gt, Lt, Gte, Lte; `karpenter.sh/nodepool` is the label naming the
  NodePool a node came from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError, show
from ..nodes.catalog import AWS_GPU_INSTANCES, AwsGpuInstance
from ..nodes.labels import ARCH_LABEL, INSTANCE_TYPE_LABEL, OS_LABEL
from ..scheduling import NodeSelectorRequirement

NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
AWS_PREFIX = "karpenter.k8s.aws/"
GPU_NAME = AWS_PREFIX + "instance-gpu-name"
GPU_MANUFACTURER = AWS_PREFIX + "instance-gpu-manufacturer"
GPU_COUNT = AWS_PREFIX + "instance-gpu-count"
INSTANCE_FAMILY = AWS_PREFIX + "instance-family"
INSTANCE_CATEGORY = AWS_PREFIX + "instance-category"
INSTANCE_GENERATION = AWS_PREFIX + "instance-generation"
INSTANCE_SIZE = AWS_PREFIX + "instance-size"
AUTO_MODE_PREFIX = "eks.amazonaws.com/"
"""EKS Auto Mode labels the same instance facts under its own domain (awsdocs/amazon-eks-user-guide,
`latest/ug/automode/create-node-pool.adoc`, "EKS Auto Mode Supported Labels"), and marks its nodes
`eks.amazonaws.com/compute-type: auto`."""
AUTO_MODE_COMPUTE_TYPE = AUTO_MODE_PREFIX + "compute-type"


def auto_mode_key(key: str) -> str:
    """`karpenter.k8s.aws/instance-gpu-name` -> `eks.amazonaws.com/instance-gpu-name`."""
    return AUTO_MODE_PREFIX + key[len(AWS_PREFIX) :] if key.startswith(AWS_PREFIX) else key


CAPACITY_TYPES = ("reserved", "spot", "on-demand")
"""In the order Karpenter prefers them within one NodePool (nodepools.md, "Capacity Type")."""

ARCHES = {"x86_64": "amd64", "arm64": "arm64"}

_SCHEME = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")


def ec2_gpu_name(instance: AwsGpuInstance) -> str:
    """EC2's `GpuInfo.Name` in lower kebab case, as Karpenter labels it: the catalog's GPU model
    without the memory suffix (`A100 80GB` is EC2's `A100`; `T4G` is EC2's `T4g`)."""
    return instance.gpu_model.split()[0].lower()


def gpu_names() -> list[str]:
    """Every `instance-gpu-name` value the catalog's instance types have, sorted."""
    return sorted({ec2_gpu_name(i) for i in AWS_GPU_INSTANCES.values()})


def instance_labels(instance: AwsGpuInstance, auto_mode: bool = False) -> dict[str, str]:
    """The labels Karpenter (or EKS Auto Mode, under `eks.amazonaws.com/`) puts on a node of this
    instance type (those we model)."""
    family, _, size = instance.instance_type.partition(".")
    labels = {
        INSTANCE_TYPE_LABEL: instance.instance_type,
        ARCH_LABEL: ARCHES[instance.arch],
        OS_LABEL: "linux",
        INSTANCE_FAMILY: family,
        INSTANCE_SIZE: size,
        GPU_NAME: ec2_gpu_name(instance),
        GPU_MANUFACTURER: "nvidia",
        GPU_COUNT: str(instance.gpus),
    }
    m = _SCHEME.match(instance.instance_type)
    if m:
        labels[INSTANCE_CATEGORY] = m.group(1)
        labels[INSTANCE_GENERATION] = m.group(3)
    if auto_mode:
        labels = {auto_mode_key(k): v for k, v in labels.items()}
        labels[AUTO_MODE_COMPUTE_TYPE] = "auto"
    return labels


def requirement_from_karpenter(data: Mapping[str, object]) -> NodeSelectorRequirement:
    """A NodePool requirement as a Kubernetes node selector requirement: Karpenter's `Gte n` is
    `Gt n-1` and `Lte n` is `Lt n+1` on integer labels. Raises InputError when invalid."""
    op = data.get("operator")
    values = [str(v) for v in (data.get("values") or [])]  # type: ignore[attr-defined]
    if op in ("Gte", "Lte"):
        if len(values) != 1 or not values[0].isdigit():
            raise InputError(
                f"operator {op} on {show(data.get('key'))} needs one non-negative integer",
                "one value such as '1'",
            )
        n = int(values[0])
        op, values = ("Gt", [str(n - 1)]) if op == "Gte" else ("Lt", [str(n + 1)])
    return NodeSelectorRequirement(str(data.get("key")), str(op), values)


@dataclass(frozen=True)
class Admitted:
    """What a set of requirements lets Karpenter launch, from the catalog's point of view."""

    instances: tuple[AwsGpuInstance, ...]
    capacity_types: tuple[str, ...]
    """In Karpenter's preference order."""


def capacity_types_of(requirements: Sequence[NodeSelectorRequirement]) -> tuple[str, ...]:
    """The capacity types the requirements allow (Karpenter's order). Without a capacity-type
    requirement any of them may be launched: `getCapacityType` in
    `pkg/providers/instance/instance.go` tries reserved, then spot, whenever the requirements
    `Has` them, and an unconstrained key has every value."""
    allowed = list(CAPACITY_TYPES)
    constrained = False
    for r in requirements:
        if r.key == CAPACITY_TYPE_LABEL:
            constrained = True
            allowed = [c for c in allowed if r.matches({CAPACITY_TYPE_LABEL: c})]
    return tuple(allowed) if constrained else CAPACITY_TYPES


def admitted(requirements: Iterable[NodeSelectorRequirement], auto_mode: bool = False) -> Admitted:
    """Catalog instance types whose labels satisfy every requirement on a key we model (other
    keys, such as zones, narrow where a node starts, not what it is)."""
    reqs = list(requirements)
    modelled = {
        INSTANCE_TYPE_LABEL,
        ARCH_LABEL,
        OS_LABEL,
        INSTANCE_FAMILY,
        INSTANCE_SIZE,
        INSTANCE_CATEGORY,
        INSTANCE_GENERATION,
        GPU_NAME,
        GPU_MANUFACTURER,
        GPU_COUNT,
    }
    if auto_mode:
        modelled = {auto_mode_key(k) for k in modelled} | {AUTO_MODE_COMPUTE_TYPE}
    mine = [r for r in reqs if r.key in modelled]
    found = tuple(
        i
        for i in AWS_GPU_INSTANCES.values()
        if all(r.matches(instance_labels(i, auto_mode)) for r in mine)
    )
    return Admitted(found, capacity_types_of(reqs))


def common_labels(instances: Sequence[AwsGpuInstance], auto_mode: bool = False) -> dict[str, str]:
    """Labels every node of any of these instance types carries with the same value."""
    if not instances:
        return {}
    first, *rest = [instance_labels(i, auto_mode) for i in instances]
    return {k: v for k, v in first.items() if all(o.get(k) == v for o in rest)}
