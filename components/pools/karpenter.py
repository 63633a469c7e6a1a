"""A GPU pool that Karpenter provisions on EKS: `KarpenterGpuNodePool` -> a `karpenter.sh/v1`
NodePool and the `karpenter.k8s.aws/v1` EC2NodeClass it launches with, as custom resources.

Karpenter picks an instance type per pending pod from the NodePool's requirements, so a pool is a
*set* of instance types, not one shape. The component turns its arguments into requirements and
checks them against the catalog (`components.model.autoscalers.karpenter.admitted`): a pool whose requirements
admit no catalog GPU instance type is refused; the pool's `gpus_per_node` is the most GPUs any
admitted type has (Karpenter launches the one the pod fits on), `gpu_model` is set when every
admitted type has the same GPU.

What the nodes carry (Karpenter v1.14.1, see `components.model.autoscalers.karpenter` for sources): the
NodePool's `template.metadata.labels` (here the pool label and the caller's labels), the label
`karpenter.sh/nodepool=<NodePool name>`, the instance type's well-known labels, and the
`template.spec.taints` (default `nvidia.com/gpu=present:NoSchedule`: Karpenter adds no GPU taint by
itself). The placement selects the pool label and tolerates the taints, like every other pool.

Choices:
- Requirements: `karpenter.k8s.aws/instance-gpu-manufacturer In [nvidia]` and
  `karpenter.k8s.aws/instance-gpu-count Gt <min_gpus - 1>` always (only NVIDIA GPU instances,
  never a CPU or Neuron type); `instance-gpu-name`, `instance-family`,
  `node.kubernetes.io/instance-type`, `instance-gpu-count Lt <max_gpus + 1>` when given;
  `kubernetes.io/arch` from the admitted types; `karpenter.sh/capacity-type` from
  `capacity_types`. Gt / Lt (not Karpenter's Gte / Lte) so that Kubernetes' own rules read them.
- Capacity types are given in priority order and must follow Karpenter's own: within one NodePool
  it prefers `reserved`, then `spot`, then `on-demand` (nodepools.md, "Capacity Type"), so an order
  it would not follow (on-demand before spot) is refused rather than silently reordered.
- Disruption `WhenEmpty` after `consolidate_after` (default 5m): an idle GPU node is removed, a
  busy one is never consolidated away from under a model server; the pool drains to zero.
- Limits: `nodes` = `max_nodes` and, when given, `nvidia.com/gpu` = `max_total_gpus` (strings:
  the API server coerces quantities to strings, Karpenter's docs advise against integers).
- EC2NodeClass: AMI alias `al2023@latest` (Karpenter resolves the NVIDIA variant of AL2023 for
  instance types with GPUs: `pkg/providers/amifamily/al2023.go`, variant `nvidia` requires
  `instance-gpu-count` Exists; `bottlerocket@...` likewise, and Bottlerocket's NVIDIA variant runs
  the device plugin itself), IMDSv2 with hop limit 1, an encrypted gp3 volume, subnets and security
  groups selected by the tag `karpenter.sh/discovery=<cluster>` (Karpenter's getting-started
  convention) unless given. `node_class` names an existing EC2NodeClass instead (none emitted).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..model.autoscalers.karpenter import (
    ARCH_LABEL,
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPES,
    GPU_COUNT,
    GPU_MANUFACTURER,
    GPU_NAME,
    INSTANCE_FAMILY,
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    admitted,
    auto_mode_key,
    common_labels,
    ec2_gpu_name,
    gpu_names,
)
from ..model.deploy import versions
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import (
    AWS_GPU_INSTANCES,
    AWS_MAX_GPUS,
    EKS_MAX_NODES,
    AwsGpuInstance,
    aws_gpu_families,
    aws_instance,
)
from ..model.nodes.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ..model.nodes.sharing import config_name
from ..model.scheduling import GPU_RESOURCE, Taint
from .component import PoolComponent
from .nodepool import (
    NODEPOOL_API,
    GpuKeys,
    admits_none,
    capacity_order,
    check_duration,
    gpu_range,
    gpu_requirements,
    listed_in,
    looked_up,
    nodepool,
    nodepool_limits,
    offer_summary,
    refuse_restricted_labels,
    requirement,
    selectors,
    str_list,
)
from .pool import (
    GP3_MAX_GIB,
    PoolFacts,
    PoolKind,
    build_facts,
    declared_labels,
    pool_name_of,
)

NODECLASS_API = "karpenter.k8s.aws/v1"
NODEOVERLAY_API = "karpenter.sh/v1alpha1"
NODECLASS_GROUP = "karpenter.k8s.aws"
AUTO_MODE_GROUP = "eks.amazonaws.com"
DISCOVERY_TAG = "karpenter.sh/discovery"
AMI_FAMILIES = ("al2023", "bottlerocket")
RESTRICTED_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
"""Label domains the NodePool CRD refuses in `template.metadata.labels` (CEL rules of
karpenter.sh_nodepools.yaml v1.14.1; a few well-known keys excepted that a pool never sets)."""


@dataclass
class KarpenterGpuNodePoolArgs:
    """Inputs of a `KarpenterGpuNodePool`; every default is here."""

    cluster_name: Optional[str] = field(default=None, metadata=stack(source="cluster.name"))
    """The EKS cluster: subnets and security groups are found by `karpenter.sh/discovery` = this
    (needed unless `node_class` is given, or both selectors are)."""
    node_role: Optional[str] = None
    """IAM role name (not ARN) of the nodes: the EC2NodeClass `role`; needed unless `node_class`
    is given or `auto_mode`."""
    gpu_names: Optional[Sequence[str]] = field(default=None, metadata=stack(min_items=1))
    """EC2 GPU names, each once, as `karpenter.k8s.aws/instance-gpu-name` In: EC2's lower-case
    names that catalog instance types have (`a100`, `a10g`, `h100`, `h200`, `l4`, `l40s`, `t4`,
    `t4g`, `v100`), e.g. `["l4", "a10g"]`."""
    instance_families: Optional[Sequence[str]] = field(default=None, metadata=stack(min_items=1))
    """EC2 GPU families of the catalog, each once, as `karpenter.k8s.aws/instance-family` In,
    e.g. `["g6", "g5"]`."""
    instance_types: Optional[Sequence[str]] = field(default=None, metadata=stack(min_items=1))
    """EC2 GPU instance types of the catalog, each once, as `node.kubernetes.io/instance-type` In,
    e.g. `["g6.xlarge"]`."""
    min_gpus: Optional[int] = field(default=1, metadata=stack(ge=1, le=AWS_MAX_GPUS))
    """Fewest GPUs per node: `karpenter.k8s.aws/instance-gpu-count` Gt `min_gpus - 1`."""
    max_gpus: Optional[int] = field(default=None, metadata=stack(ge=1, le=AWS_MAX_GPUS))
    """Most GPUs per node, at least `min_gpus`: `instance-gpu-count` Lt `max_gpus + 1` (none:
    any)."""
    capacity_types: Optional[Sequence[str]] = field(
        default=None, metadata=stack(choices=CAPACITY_TYPES, min_items=1, default="`[on-demand]`")
    )
    """`reserved` / `spot` / `on-demand` (`karpenter.sh/capacity-type` In), in priority order,
    which must be Karpenter's own within one NodePool (reserved, spot, on-demand): another order
    is refused (use two pools, wired in your order); `reserved` not on `auto_mode`."""
    max_nodes: Optional[int] = field(
        default=1, metadata=stack(root=True, required=True, le=EKS_MAX_NODES)
    )
    """Most nodes, at least 1 (NodePool `limits.nodes`)."""
    max_total_gpus: Optional[int] = field(
        default=None, metadata=stack(ge=1, le=EKS_MAX_NODES * AWS_MAX_GPUS)
    )
    """Most physical GPUs over the whole pool (`limits["nvidia.com/gpu"]`). Karpenter counts the
    `nvidia.com/gpu` its nodes have as it sees them; a time-sliced pool's NodeOverlays make that
    GPUs x `time_slicing_replicas`, so the limit written is this times the replicas."""
    labels: Optional[Mapping[str, str]] = field(
        default=None, metadata=stack(root=True, syntax="labels")
    )
    """Extra node labels (NodePool `template.metadata.labels`; values are strings: quote numbers
    and booleans in YAML). Not under `karpenter.sh` or `karpenter.k8s.aws` (the NodePool CRD
    refuses them), nor `gpu-inference.dev/pool`, nor under `kubernetes.io`, `k8s.io`,
    `cloud.google.com`, `eks.amazonaws.com` or `k8s.amazonaws.com` unless with the value the
    pool sets anyway."""
    taints: Optional[Sequence[Taint]] = field(default=None, metadata=stack(root=True))
    """Node taints `{key, value, effect}` (NodePool `template.spec.taints`): value default `""`,
    effect `NoSchedule` (default), `PreferNoSchedule` or `NoExecute` (Kubernetes' casing), one per
    key and effect, at least one NoSchedule or NoExecute. Unset:
    `nvidia.com/gpu=present:NoSchedule` (Karpenter adds no GPU taint itself)."""
    select_labels: Optional[Sequence[str]] = field(
        default=None, metadata=stack(root=True, syntax="label-keys")
    )
    """Label keys the placement selects; default: the pool label `gpu-inference.dev/pool`."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    consolidate_after: Optional[str] = "5m"
    """How long a node stays empty before Karpenter removes it (`disruption.consolidateAfter`,
    policy `WhenEmpty`: a busy node is never consolidated away): a Karpenter duration such as
    `30s`, `5m`, `1h30m`, or `Never`."""
    expire_after: Optional[str] = "Never"
    """How long a node lives before Karpenter replaces it (`template.spec.expireAfter`: a duration
    such as 720h, or Never). Never by default: Karpenter's own default, 720h, drains a busy GPU
    node and reloads its model on a new one every 30 days, while drift still replaces nodes when
    their AMI or the NodePool changes (aws/karpenter-provider-aws v1.14.1 website
    docs/concepts/disruption.md, "Expiration" and "Drift"). None: the NodePool leaves it out
    (Karpenter's 720h)."""
    weight: Optional[int] = field(default=None, metadata=stack(ge=1, le=100))
    """NodePool weight (higher: preferred over other NodePools a pod fits)."""
    ami_alias: Optional[str] = "al2023@latest"
    """EC2NodeClass AMI alias `family@version`, family `al2023` or `bottlerocket` (e.g.
    `al2023@v20250101`): Karpenter picks the family's NVIDIA variant for GPU instances; pin a
    version in production."""
    disk_size_gb: Optional[int] = field(
        default=100, metadata=stack(root=True, ge=10, le=GP3_MAX_GIB)
    )
    """Node volume size in GiB, 10..16384 (an encrypted gp3 volume)."""
    subnet_selector_tags: Optional[Mapping[str, str]] = None
    """Subnets by tags (non-empty keys and values); default
    `{karpenter.sh/discovery: <cluster name>}`, Karpenter's getting-started convention."""
    security_group_selector_tags: Optional[Mapping[str, str]] = None
    """Security groups by tags (non-empty keys and values); default
    `{karpenter.sh/discovery: <cluster name>}`."""
    node_class: Optional[str] = field(default=None, metadata=stack(syntax="pool-name"))
    """An existing EC2NodeClass (its name, a DNS-1123 label) to launch with: no EC2NodeClass is
    emitted and `node_role` is not needed; on EKS Auto Mode the NodeClass (default `default`, the
    one Auto Mode creates)."""
    time_slicing_replicas: Optional[int] = field(
        default=None, metadata=stack("gpuSharing.maxClientsPerGpu", root=True, ge=2, le=48)
    )
    """Time-sliced GPUs (2..48 pods per GPU): the nodes get the NVIDIA device plugin config label
    `nvidia.com/device-plugin.config=time-sliced-<n>`, and one NodeOverlay per GPU count tells
    Karpenter's scheduling simulation the shared `nvidia.com/gpu` (kubernetes-sigs/karpenter#729).
    An overlay's capacity replaces the instance type's own count of that resource
    (kubernetes-sigs/karpenter@v1.14.1 pkg/cloudprovider/types.go `ApplyCapacityOverlay`:
    `lo.Assign(capacity, overlay)`; the CRD forbids only cpu/memory/ephemeral-storage/pods).
    NodeOverlay is alpha, off unless the controller runs with `settings.featureGates.nodeOverlay:
    true` (karpenter chart v1.15.0 values.yaml)."""
    capacity_reservations: Optional[Sequence[str]] = field(
        default=None, metadata=stack(min_items=1)
    )
    """EC2 capacity reservation ids (`cr-...`) the EC2NodeClass selects
    (`capacityReservationSelectorTerms`); needed for the `reserved` capacity type: without a
    selected reservation Karpenter launches no reserved node (aws/karpenter-provider-aws v1.14.1
    website docs/tasks/odcrs.md)."""
    capacity_reservation_tags: Optional[Mapping[str, str]] = None
    """Or: tags that select the capacity reservations (`'*'` matches any value)."""
    auto_mode: Optional[bool] = False
    """EKS Auto Mode: requirement keys under `eks.amazonaws.com/` (Auto Mode's labels), Auto
    Mode's own NodeClass (`node_class`, default `default`), no EC2NodeClass and no `node_role`;
    capacity type `reserved` and GPU sharing are refused. Auto Mode runs the NVIDIA device plugin
    itself (the device plugin chart skips these pools) and its own Karpenter (not with
    `addons.karpenter`)."""
    dra: Optional[bool] = field(default=False, metadata=stack(root=True))
    """GPUs by claim (DRA): not offered on Karpenter pools. The pinned Karpenter (1.15.0) ignores
    pods with claims when it decides what to launch (`IGNORE_DRA_REQUESTS`, default true:
    kubernetes-sigs/karpenter v1.15.0 pkg/operator/options/options.go); DRA for the nodes it
    launches is alpha and off (`settings.enableDRA: false`, charts/karpenter/values.yaml
    v1.15.0), and EKS Auto Mode has none.
    Use an EKS managed node group with `dra: true`."""
    pool_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            root=True,
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool`, the "
            "nodes' `gpu-inference.dev/pool` label and the name of the NodePool (and of its "
            "EC2NodeClass); a DNS-1123 label of at most 40 characters.",
        ),
    )
    """The pool's name (its `gpu-inference.dev/pool` label and the NodePool's name); default: the
    component's name."""


@dataclass(frozen=True)
class KarpenterPoolPlan:
    """Everything decided before deployment."""

    facts: PoolFacts
    instance_types: tuple[str, ...]
    """The catalog instance types the requirements admit."""
    node_pool: dict[str, Any]
    """NodePool `{metadata, spec}`."""
    node_class: Optional[dict[str, Any]]
    """EC2NodeClass `{metadata, spec}`, None when an existing one is used."""
    node_overlays: tuple[dict[str, Any], ...] = ()
    """NodeOverlay `{metadata, spec}`s for time-sliced GPUs."""


def _tags(value: Optional[Mapping[str, str]], path: str) -> Optional[dict[str, str]]:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not value:
        raise InputError(f"{show(value)} is not a non-empty mapping", "tag key -> value", path)
    for k, v in value.items():
        if not isinstance(k, str) or not k or not isinstance(v, str) or not v:
            raise InputError(
                f"tag {show(k)}={show(v)} has an empty key or value",
                "non-empty tag keys and values (the EC2NodeClass CRD refuses empty ones)",
                f"{path}.{k}",
            )
    return dict(value)


GPU_KEYS = GpuKeys(GPU_MANUFACTURER, GPU_COUNT, GPU_NAME, INSTANCE_FAMILY, INSTANCE_TYPE_LABEL)


def validate_karpenter_pool_args(name: str, args: KarpenterGpuNodePoolArgs) -> KarpenterPoolPlan:
    """Check every input (no Pulumi) and decide the NodePool and EC2NodeClass. What each field
    declares (`check_declared`) comes first; the rest are rules across fields and the catalog's
    facts."""
    check_declared(args)
    pool_name, name_path = pool_name_of(name, args.pool_name)
    capacity = capacity_order(args.capacity_types, CAPACITY_TYPES)
    auto = bool(args.auto_mode)
    _check_dra_and_auto_mode(args, auto, capacity)
    _check_reservations(args, auto, capacity)
    shape, found = _instance_shape(args, auto)
    arches = sorted({common_labels([i], auto)[ARCH_LABEL] for i in found})
    requirements = [
        *shape,
        requirement(ARCH_LABEL, "In", arches),
        requirement(CAPACITY_TYPE_LABEL, "In", capacity),
    ]
    user_labels = dict(args.labels or {})
    replicas = _time_slicing(args, auto, user_labels)
    models = {i.gpu_model for i in found}
    cloud_labels = {NODEPOOL_LABEL: pool_name, **common_labels(found, auto)}
    if len(capacity) == 1:
        cloud_labels[CAPACITY_TYPE_LABEL] = capacity[0]
    refuse_restricted_labels(
        args.labels,
        RESTRICTED_LABEL_DOMAINS,
        (),
        "label {} is under a domain Karpenter reserves (the NodePool CRD refuses it)",
        "labels outside karpenter.sh and karpenter.k8s.aws",
    )
    facts = build_facts(
        pool_name,
        cloud="eks",
        user_labels=user_labels or None,
        cloud_labels=cloud_labels,
        taints=args.taints,
        gpus_per_node=max(i.gpus for i in found) * (replicas or 1),
        gpu_model=models.pop() if len(models) == 1 else None,
        min_nodes=0,
        max_nodes=args.max_nodes if args.max_nodes is not None else 1,
        spot=capacity == ["spot"],
        select_labels=args.select_labels,
        scheduling_style=args.scheduling_style,
        name_path=name_path,
    )
    check_duration(args.consolidate_after, "consolidate_after", "30s, 5m, 1h30m, or Never", True)
    check_duration(args.expire_after, "expire_after", "720h, 2160h, or Never")
    # Karpenter sums its nodes' nvidia.com/gpu as it sees them: with time-slicing, what the
    # NodeOverlays give (GPUs x replicas). max_total_gpus counts physical GPUs.
    limits = nodepool_limits(facts.max_nodes, args.max_total_gpus, replicas or 1)
    node_pool = nodepool(
        pool_name,
        _class_ref(args, pool_name, auto),
        requirements,
        [t.to_dict() for t in facts.taints],
        declared_labels(facts, cloud_labels),
        consolidate_after=args.consolidate_after,
        expire_after=args.expire_after,
        limits=limits,
        weight=args.weight,
    )
    return KarpenterPoolPlan(
        facts=facts,
        instance_types=tuple(i.instance_type for i in found),
        node_pool=node_pool,
        node_class=_node_class(pool_name, args) if args.node_class is None and not auto else None,
        node_overlays=_overlays(pool_name, found, replicas),
    )


def _check_dra_and_auto_mode(
    args: KarpenterGpuNodePoolArgs, auto: bool, capacity: Sequence[str]
) -> None:
    """What neither Karpenter nor EKS Auto Mode launches nodes for."""
    if args.dra:
        raise InputError(
            "dra is set on a Karpenter pool: "
            + (
                "EKS Auto Mode does not support DRA"
                if auto
                else f"Karpenter {versions.KARPENTER_VERSION} (pinned) ignores pods with "
                "resource claims when it decides what to launch (IGNORE_DRA_REQUESTS defaults to "
                "true), so no node is ever launched for them; DRA for launched nodes is alpha "
                "and off (settings.enableDRA)"
            ),
            "an EKS managed node group with dra: true (pools[] without a karpenter block), or "
            "leave dra unset and request gpus",
            "args.dra",
        )
    if auto and "reserved" in capacity:
        raise InputError(
            "capacity type reserved on EKS Auto Mode, whose NodePools take spot and on-demand",
            "spot, on-demand",
            "args.capacity_types",
        )


def _check_reservations(
    args: KarpenterGpuNodePoolArgs, auto: bool, capacity: Sequence[str]
) -> None:
    """Reserved capacity and selected reservations go together."""
    reservations = _reservation_terms(args)
    if "reserved" in capacity and not reservations and args.node_class is None and not auto:
        raise InputError(
            "capacity type reserved, but the EC2NodeClass selects no capacity reservation: "
            "Karpenter finds none and launches no reserved node"
            + (" (it falls back to the next capacity type)" if len(capacity) > 1 else ""),
            "capacity_reservations (ids cr-...) or capacity_reservation_tags, or leave reserved "
            "out",
            "args.capacity_types",
        )
    if reservations and "reserved" not in capacity:
        raise InputError(
            "capacity reservations are selected but no capacity type is reserved: Karpenter "
            "would never use them",
            "add reserved to capacity_types (Karpenter prefers it over spot and on-demand), or "
            "leave the reservations out",
            "args.capacity_reservations"
            if args.capacity_reservations
            else "args.capacity_reservation_tags",
        )


def _instance_shape(
    args: KarpenterGpuNodePoolArgs, auto: bool
) -> tuple[list[dict[str, Any]], list[AwsGpuInstance]]:
    """The GPU requirements the args ask for, and the catalog instance types they admit
    (some)."""
    names = listed_in(
        args.gpu_names,
        "args.gpu_names",
        "EC2 GPU names such as l4",
        gpu_names(),
        "GPU name {} is not one an EC2 instance type in the catalog has",
    )
    families = listed_in(
        args.instance_families,
        "args.instance_families",
        "EC2 GPU families",
        aws_gpu_families(),
        "instance family {} is not a GPU family in the catalog",
    )
    types = looked_up(
        args.instance_types, "args.instance_types", "EC2 GPU instance types", aws_instance
    )
    min_gpus, max_gpus = gpu_range(args.min_gpus, args.max_gpus)
    shape = gpu_requirements(GPU_KEYS, min_gpus, max_gpus, names, families, types)
    if auto:
        shape = [{**r, "key": auto_mode_key(r["key"])} for r in shape]
    found = admitted(selectors(shape), auto).instances
    if not found:
        offers = ((ec2_gpu_name(i), i.gpus, i.family) for i in AWS_GPU_INSTANCES.values())
        raise admits_none(
            shape, "GPU instance type", "catalog instance type", offer_summary(offers, names)
        )
    return shape, list(found)


def _time_slicing(
    args: KarpenterGpuNodePoolArgs, auto: bool, user_labels: dict[str, str]
) -> Optional[int]:
    """Pods per GPU (None without time-slicing), with the device plugin's config label added."""
    replicas = args.time_slicing_replicas
    if replicas is None:
        return None
    if auto:
        raise InputError(
            "time_slicing_replicas on EKS Auto Mode, which runs its own device plugin",
            "leave it out on Auto Mode",
            "args.time_slicing_replicas",
        )
    user_labels[DEVICE_PLUGIN_CONFIG_LABEL] = config_name(replicas)
    return replicas


def _class_ref(args: KarpenterGpuNodePoolArgs, pool_name: str, auto: bool) -> dict[str, str]:
    if auto:
        return {"group": AUTO_MODE_GROUP, "kind": "NodeClass", "name": args.node_class or "default"}
    return {
        "group": NODECLASS_GROUP,
        "kind": "EC2NodeClass",
        "name": args.node_class if args.node_class is not None else pool_name,
    }


def _overlays(
    pool_name: str, found: Sequence[AwsGpuInstance], replicas: Optional[int]
) -> tuple[dict[str, Any], ...]:
    """With time-slicing, a NodeOverlay per GPU count: the `nvidia.com/gpu` the nodes will
    have."""
    if replicas is None:
        return ()
    return tuple(
        {
            "metadata": {"name": f"{pool_name}-gpus-{count}"},
            "spec": {
                "requirements": [
                    requirement(NODEPOOL_LABEL, "In", [pool_name]),
                    requirement(GPU_COUNT, "In", [str(count)]),
                ],
                "capacity": {GPU_RESOURCE: str(count * replicas)},
            },
        }
        for count in sorted({i.gpus for i in found})
    )


_RESERVATION = re.compile(r"^cr-[0-9a-z]+$")


def _reservation_terms(args: KarpenterGpuNodePoolArgs) -> list[dict[str, Any]]:
    """The EC2NodeClass's `capacityReservationSelectorTerms` (the CRD's patterns)."""
    terms: list[dict[str, Any]] = []
    for i, rid in enumerate(
        str_list(
            args.capacity_reservations, "args.capacity_reservations", "capacity reservation ids"
        )
        or ()
    ):
        if not _RESERVATION.match(rid):
            raise InputError(
                f"{show(rid)} is not a capacity reservation id",
                "cr- and lowercase letters or digits, e.g. cr-0123456789abcdef0",
                f"args.capacity_reservations[{i}]",
            )
        terms.append({"id": rid})
    tags = _tags(args.capacity_reservation_tags, "args.capacity_reservation_tags")
    if tags:
        terms.append({"tags": tags})
    return terms


def _node_class(pool_name: str, args: KarpenterGpuNodePoolArgs) -> dict[str, Any]:
    if not isinstance(args.node_role, str) or not args.node_role:
        raise InputError(
            f"node_role {show(args.node_role)} is not an IAM role name",
            "the IAM role name of the nodes (Karpenter's node role), or node_class: an existing "
            "EC2NodeClass",
            "args.node_role",
        )
    alias = args.ami_alias or "al2023@latest"
    family, at, version = alias.partition("@")
    if not at or family not in AMI_FAMILIES or not version:
        raise InputError(
            f"AMI alias {show(alias)} is not family@version with a GPU-capable family",
            "al2023@latest, al2023@v20250101, bottlerocket@latest, ...",
            "args.ami_alias",
        )
    subnets = _tags(args.subnet_selector_tags, "args.subnet_selector_tags")
    groups = _tags(args.security_group_selector_tags, "args.security_group_selector_tags")
    if subnets is None or groups is None:
        if not isinstance(args.cluster_name, str) or not args.cluster_name:
            raise InputError(
                f"cluster_name {show(args.cluster_name)} is not given, and subnets / security "
                "groups are found by the tag karpenter.sh/discovery=<cluster>",
                "the EKS cluster's name, or both subnet_selector_tags and "
                "security_group_selector_tags",
                "args.cluster_name",
            )
        discovery = {DISCOVERY_TAG: args.cluster_name}
        subnets = subnets or discovery
        groups = groups or discovery
    size = args.disk_size_gb if args.disk_size_gb is not None else 100
    return {
        "metadata": {"name": pool_name},
        "spec": {
            "role": args.node_role,
            "amiSelectorTerms": [{"alias": alias}],
            "subnetSelectorTerms": [{"tags": subnets}],
            "securityGroupSelectorTerms": [{"tags": groups}],
            **(
                {"capacityReservationSelectorTerms": _reservation_terms(args)}
                if args.capacity_reservations or args.capacity_reservation_tags
                else {}
            ),
            "metadataOptions": {
                "httpEndpoint": "enabled",
                "httpTokens": "required",
                "httpPutResponseHopLimit": 1,
            },
            "blockDeviceMappings": [
                {
                    # Bottlerocket keeps images on its second volume, AL2023 on the root one.
                    "deviceName": "/dev/xvdb" if family == "bottlerocket" else "/dev/xvda",
                    "ebs": {
                        "volumeSize": f"{size}Gi",
                        "volumeType": "gp3",
                        "encrypted": True,
                        "deleteOnTermination": True,
                    },
                }
            ],
        },
    }


class KarpenterGpuNodePool(PoolComponent):
    """A Karpenter NodePool (with its EC2NodeClass) for GPU nodes, and the placement that lands
    on it."""

    def __init__(
        self,
        name: str,
        args: KarpenterGpuNodePoolArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        plan = self._start(
            "gpu-inference:index:KarpenterGpuNodePool",
            name,
            validate_karpenter_pool_args,
            args,
            opts,
        )
        self.instance_types: list[str] = list(plan.instance_types)
        self.builtin_device_plugin: bool = bool(args.auto_mode)
        depends: list[pulumi.Resource] = []
        if plan.node_class is not None:
            self.node_class = self._custom_resource(
                f"{name}-nodeclass", NODECLASS_API, "EC2NodeClass", plan.node_class
            )
            depends.append(self.node_class)
        self.node_pool = self._custom_resource(
            name, NODEPOOL_API, "NodePool", plan.node_pool, depends
        )
        self.node_overlays = [
            self._custom_resource(
                f"{name}-overlay-{o['metadata']['name']}", NODEOVERLAY_API, "NodeOverlay", o
            )
            for o in plan.node_overlays
        ]
        self.time_slicing_replicas: Optional[int] = args.time_slicing_replicas
        self._finish(instanceTypes=list(plan.instance_types))


KIND = PoolKind(
    name="karpenter",
    title="Karpenter NodePool",
    provider="eks",
    args=KarpenterGpuNodePoolArgs,
    plan=validate_karpenter_pool_args,
    component=KarpenterGpuNodePool,
    block="karpenter",
    kubernetes=True,
    note="Karpenter launches nodes for pending pods and removes empty ones (no minimum); its "
    "instance types, capacity types and AMI are in its karpenter block",
)
