"""Karpenter NodePools (with their EC2NodeClass) as the check sees them: one node template per
catalog instance type and capacity type the requirements admit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR
from typing import Any

from ...model.autoscalers.karpenter import AWS_PREFIX as KARPENTER_AWS_PREFIX
from ...model.autoscalers.karpenter import (
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    OS_LABEL,
    instance_labels,
    requirement_from_karpenter,
)
from ...model.autoscalers.karpenter import admitted as admitted_by_karpenter
from ...model.autoscalers.karpenter_launch import NodeClassInfo, NodePoolSpec
from ...model.autoscalers.karpenter_requirements import (
    AWS,
    KarpenterProvider,
    Requirements,
    nodepool_problem,
    requirements_of,
)
from ...model.errors import InputError
from ...model.nodes.karpenter_kubelet import KarpenterKubelet
from ...model.nodes.shapes import NodeShape
from ...model.scheduling import NodeSelectorRequirement, Taint
from ...model.scheduling.quantities import parse_quantity
from ..contract import (
    POOL_LABEL,
)
from ..read import (
    Findings,
    PoolDraft,
    as_int,
    as_list,
    as_map,
    helm_releases,
    is_type,
    metadata,
    read_taints,
    resource_id,
    str_map,
)
from ..results import (
    NodeTemplate,
)


def node_class_specs(
    graph: Sequence[Mapping[str, Any]], group: str, kind: str
) -> dict[str, Mapping[str, Any]]:
    """Node class name -> its spec, of the node classes of one kind (`group`, `kind`)."""
    found = {}
    for entry in graph:
        if is_type(str(entry.get("type", "")), group, kind):
            inputs = as_map(entry.get("inputs"))
            found[str(metadata(inputs).get("name") or entry.get("name"))] = as_map(
                inputs.get("spec")
            )
    return found


def node_classes(graph: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """EC2NodeClass name -> its spec."""
    return node_class_specs(graph, "karpenter.k8s.aws", "EC2NodeClass")


@dataclass(frozen=True)
class NodePoolHead:
    """What every reading of a NodePool starts from."""

    rid: str
    spec: Mapping[str, Any]
    tspec: Mapping[str, Any]
    name: str
    labels: dict[str, str]
    """The template's labels, as written."""


def nodepool_head(entry: Mapping[str, Any]) -> NodePoolHead:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    spec = as_map(inputs.get("spec"))
    template = as_map(spec.get("template"))
    return NodePoolHead(
        resource_id(typ, name),
        spec,
        as_map(template.get("spec")),
        str(metadata(inputs).get("name") or name),
        str_map(as_map(template.get("metadata")).get("labels")),
    )


@dataclass(frozen=True)
class NodePoolRead:
    """A NodePool's template as every provider's reader starts from it."""

    head: NodePoolHead
    labels: dict[str, str]
    """The template's labels, `karpenter.sh/nodepool`, and one per single-valued In requirement
    (Karpenter puts those on the node)."""
    taints: list[Taint]
    requirements: list[NodeSelectorRequirement]
    """The readable ones (GI013 for the others)."""


def read_nodepool(entry: Mapping[str, Any], out: Findings) -> NodePoolRead:
    head = nodepool_head(entry)
    labels = {**head.labels, NODEPOOL_LABEL: head.name}
    taints = read_taints(head.tspec.get("taints"), head.rid, out)
    reqs = []
    for r in as_list(head.tspec.get("requirements")):
        try:
            reqs.append(requirement_from_karpenter(as_map(r)))
        except (InputError, TypeError, ValueError) as e:
            out.add("GI013", head.rid, f"invalid requirement {dict(as_map(r))!r}: {e}", "fix it")
    for r in reqs:  # a single-valued In requirement becomes a node label
        if r.operator == "In" and len(r.values or ()) == 1:
            labels.setdefault(r.key, str((r.values or ())[0]))
    return NodePoolRead(head, labels, taints, reqs)


def with_cpu_template(
    pool: NodePoolRead, nodes: list[NodeTemplate], prefix: str
) -> tuple[list[NodeTemplate], bool]:
    """The templates, led by a node without GPUs when the requirements on the provider's
    instance keys (`prefix`) also admit sizes without GPUs (or when none is admitted), and
    whether they do. Its labels: the pool's but those a single-valued requirement on an
    instance key gave (`instance-family In [g6]` describes the GPU types, not a CPU one);
    template labels under that prefix are refused by the NodePool CRD."""
    cpu_shape = {
        OS_LABEL: "linux",
        **{k: v for k, v in pool.labels.items() if not k.startswith(prefix)},
    }
    admits_cpu = all(r.matches(cpu_shape) for r in pool.requirements if r.key.startswith(prefix))
    if admits_cpu or not nodes:
        return [NodeTemplate(None, cpu_shape, tuple(pool.taints), 0), *nodes], admits_cpu
    return nodes, admits_cpu


def node_counts(head: NodePoolHead) -> tuple[int, int | None]:
    """Fewest and most nodes: `replicas` for a static NodePool, else 0 and `limits.nodes`."""
    replicas = as_int(head.spec.get("replicas"))
    if replicas is not None:
        return replicas, replicas
    return 0, as_int(as_map(head.spec.get("limits")).get("nodes"))


def karpenter_pool(
    entry: Mapping[str, Any], node_classes: Mapping[str, Mapping[str, Any]], out: Findings
) -> PoolDraft:
    """A Karpenter NodePool: one node template per catalog instance type and capacity type its
    requirements admit (labels as Karpenter sets them: `components.model.autoscalers.karpenter`), plus a
    shape without GPUs when the requirements also admit instance types without GPUs. GPUs per
    node: the most any admitted type has (Karpenter launches the type the pod fits)."""
    pool = read_nodepool(entry, out)
    rid, tspec, nodepool = pool.head.rid, pool.head.tspec, pool.head.name
    labels, taints, reqs = pool.labels, pool.taints, pool.requirements
    auto = as_map(tspec.get("nodeClassRef")).get("group") == "eks.amazonaws.com"  # EKS Auto Mode
    prefix = "eks.amazonaws.com/" if auto else KARPENTER_AWS_PREFIX
    found = admitted_by_karpenter(reqs, auto)
    class_name = str(as_map(tspec.get("nodeClassRef")).get("name"))
    info = node_class_info(class_name, node_classes.get(class_name), auto)
    bottlerocket = info.ami_family == "Bottlerocket"
    shapes = {i.instance_type: info.shape(i.instance_type) for i in found.instances}
    # Each shape has its instance type's GPUs: a pod that selects g6.xlarge cannot ask for 4.
    nodes = [
        NodeTemplate(
            None,
            {**instance_labels(i, auto), **labels, CAPACITY_TYPE_LABEL: c},
            tuple(taints),
            i.gpus,
            shape=shapes[i.instance_type][0],
            gpu_memory_gib=float(i.gpu_memory_gib) or None,
            origin=f"instance type {i.instance_type}",
        )
        for i in found.instances
        for c in found.capacity_types
    ]
    nodes, admits_cpu = with_cpu_template(pool, nodes, prefix)
    gpu_keyed = any(r.key.startswith(prefix + "instance-gpu") for r in reqs)
    gpus: int | None = max((i.gpus for i in found.instances), default=0)
    if not found.instances and gpu_keyed and not admits_cpu:
        gpus = None  # GPU instance types the catalog does not know
    min_nodes, max_nodes = node_counts(pool.head)
    return PoolDraft(
        name=labels.get(POOL_LABEL) or nodepool,
        provider="eks",
        resource=rid,
        node=nodes[0],
        more_nodes=tuple(nodes[1:]),
        gpus=gpus,
        gpu=not admits_cpu and (gpus is None or gpus > 0),
        accelerator=next(iter({i.accelerator_label for i in found.instances}), None)
        if len({i.accelerator_label for i in found.instances}) == 1
        else None,
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        spot=found.capacity_types == ("spot",),
        builtin_device_plugin=bottlerocket or auto,  # Auto Mode runs the NVIDIA plugin itself
        shape_note=_shape_note(auto, admits_cpu, shapes),
        daemon_kind="none" if auto else "eks",  # Auto Mode runs them on the host
    )


def _shape_note(
    auto: bool, admits_cpu: bool, shapes: Mapping[str, tuple[NodeShape | None, str | None]]
) -> str | None:
    if auto:
        return "EKS Auto Mode's node reservations are not modelled"
    notes = [why for shape, why in shapes.values() if shape is None and why]
    if notes:
        return notes[0]
    return "instance types without GPUs are admitted (not in the catalog)" if admits_cpu else None


# ---------------------------------------------------------------------------------------------
# What Karpenter's provisioner reads of a NodePool (the scale-up rule, GI026)
# ---------------------------------------------------------------------------------------------

_AMI_ALIASES = {"al2023": "AL2023", "bottlerocket": "Bottlerocket"}
# The volume an AMI family takes ephemeral storage from (aws/karpenter-provider-aws v1.14.1
# pkg/providers/amifamily al2023.go / bottlerocket.go `EphemeralBlockDevice`), and Karpenter's
# default size when no mapping names it (`DefaultEBS`, 20Gi).
_EPHEMERAL_DEVICE = {"AL2023": "/dev/xvda", "Bottlerocket": "/dev/xvdb"}
_DEFAULT_VOLUME_GIB = 20


def node_class_info(name: str, spec: Mapping[str, Any] | None, auto_mode: bool) -> NodeClassInfo:
    """What of an EC2NodeClass changes the instance types Karpenter offers (aws/karpenter-provider-
    aws v1.14.1 `pkg/providers/instancetype/types.go` `ephemeralStorage`, the kubelet settings
    and instanceStorePolicy (`model.nodes.karpenter_kubelet`), `capacityReservationSelectorTerms`).
    Not in the graph: reservations are assumed selected and the nodes' shape unknown (its volume
    and kubelet settings are not known: GI022, nothing refused on their account)."""
    if auto_mode:
        return NodeClassInfo(name=name, auto_mode=True, shape_known=False)
    if spec is None:
        return NodeClassInfo(
            name=name,
            disk_gib=None,
            reservations=True,
            shape_known=False,
            unknown=f"its EC2NodeClass {name} is not in the graph (its volume and kubelet "
            "settings are not known)",
        )
    aliases = [str(as_map(t).get("alias") or "") for t in as_list(spec.get("amiSelectorTerms"))]
    family = str(spec.get("amiFamily") or "")
    if not family and aliases:
        family = _AMI_ALIASES.get(aliases[0].partition("@")[0], aliases[0])
    family = {"al2023": "AL2023", "bottlerocket": "Bottlerocket"}.get(family.lower(), family)
    modelled = family in _EPHEMERAL_DEVICE
    disk: int | None = _DEFAULT_VOLUME_GIB
    mappings = [as_map(m) for m in as_list(spec.get("blockDeviceMappings"))]
    chosen = next((m for m in mappings if m.get("rootVolume") is True), None)
    if chosen is None and modelled:
        chosen = next(
            (m for m in mappings if m.get("deviceName") == _EPHEMERAL_DEVICE[family]), None
        )
    if chosen is not None:
        disk = _whole_gib(as_map(chosen.get("ebs")).get("volumeSize"))
    kubelet = as_map(spec.get("kubelet"))
    unknown = None
    if not modelled:
        unknown = f"AMI family {family or 'unknown'}: only AL2023 and Bottlerocket are modelled"
    elif disk is None:
        unknown = f"its EC2NodeClass {name}'s volume size is not readable"
    return NodeClassInfo(
        name=name,
        disk_gib=disk,
        ami_family=family if modelled else None,
        max_pods=as_int(kubelet.get("maxPods")),
        reservations=bool(as_list(spec.get("capacityReservationSelectorTerms"))),
        shape_known=unknown is None,
        kubelet=KarpenterKubelet.of(
            as_map(kubelet.get("kubeReserved")),
            as_map(kubelet.get("systemReserved")),
            as_map(kubelet.get("evictionHard")),
            as_int(kubelet.get("podsPerCore")),
            str(spec.get("instanceStorePolicy") or "") == "RAID0",
        ),
        unknown=unknown,
    )


def _whole_gib(value: Any) -> int | None:
    try:
        size = parse_quantity(str(value))
    except (InputError, TypeError, ValueError):
        return None
    gib = size / 2**30
    return int(gib) if gib == int(gib) and gib >= 1 else None


def _limits(value: Any, where: str, out: Findings) -> dict[str, int]:
    """`spec.limits` in `Resources` units (cpu millicores, bytes), `nodes` a count; rounded down,
    which keeps `capacity <= limit` exact for whole capacities."""
    limits: dict[str, int] = {}
    for k, q in as_map(value).items():
        try:
            amount = parse_quantity(q if isinstance(q, str) else str(q))
        except (InputError, TypeError, ValueError) as e:
            out.add("GI013", where, f"invalid limit {k}: {q!r}: {e}", "fix the quantity")
            continue
        limits[str(k)] = int(
            (amount * 1000 if k == "cpu" else amount).to_integral_value(ROUND_FLOOR)
        )
    return limits


def nodepool_spec(
    entry: Mapping[str, Any], out: Findings, provider: KarpenterProvider = AWS
) -> NodePoolSpec:
    """A NodePool as Karpenter's scheduler reads it, whatever the cloud provider (`provider`:
    its well-known labels and restricted domains decide whether the NodePool is ever Ready)."""
    head = nodepool_head(entry)
    rid, spec, tspec, nodepool, labels = head.rid, head.spec, head.tspec, head.name, head.labels
    requirements = tuple(
        (
            str(as_map(r).get("key")),
            str(as_map(r).get("operator")),
            tuple(str(v) for v in as_list(as_map(r).get("values"))),
        )
        for r in as_list(tspec.get("requirements"))
    )
    ref = as_map(tspec.get("nodeClassRef"))
    group = str(ref.get("group") or provider.node_class_group)
    kind = str(ref.get("kind") or provider.node_class_kind).lower()
    return NodePoolSpec(
        name=nodepool,
        requirements=requirements,
        labels=labels,
        taints=tuple(read_taints(tspec.get("taints"), rid, Findings())),
        limits=_limits(spec.get("limits"), rid, out),
        weight=as_int(spec.get("weight")) or 0,
        node_class=(f"{group}/{kind}", str(ref.get("name") or "")),
        static=spec.get("replicas") is not None,
        problem=_validate(requirements, labels, provider),
        provider=provider,
    )


def karpenter_launch_spec(
    entry: Mapping[str, Any], node_classes: Mapping[str, Mapping[str, Any]], out: Findings
) -> tuple[NodePoolSpec, NodeClassInfo]:
    """A NodePool on AWS as Karpenter's scheduler reads it, and what of its node class matters."""
    pool = nodepool_spec(entry, out)
    ref = as_map(as_map(nodepool_head(entry).tspec).get("nodeClassRef"))
    auto = ref.get("group") == "eks.amazonaws.com"
    class_name = pool.node_class[1]
    return pool, node_class_info(class_name, node_classes.get(class_name), auto)


def _validate(
    requirements: Any, labels: Mapping[str, str], provider: KarpenterProvider = AWS
) -> str | None:
    try:
        return nodepool_problem(requirements, labels, provider)
    except ValueError as e:
        return str(e)


KARPENTER_CHART = "karpenter"


def node_overlay_gate(graph: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the graph's Karpenter runs with the NodeOverlay feature gate: a release of the
    `karpenter` chart with `settings.featureGates.nodeOverlay: true`. The gate is alpha and off by
    default (aws/karpenter-provider-aws v1.14.1 charts/karpenter/values.yaml; the chart passes it
    as FEATURE_GATES NodeOverlay=..., templates/deployment.yaml); with no release in the graph it
    is taken as the default, off."""
    for entry in helm_releases(graph, KARPENTER_CHART):
        values = as_map(as_map(entry.get("inputs")).get("values"))
        gates = as_map(as_map(values.get("settings")).get("featureGates"))
        if gates.get("nodeOverlay") is True:
            return True
    return False


def node_overlays(graph: Sequence[Mapping[str, Any]]) -> list[tuple[Requirements, dict[str, int]]]:
    """NodeOverlays (karpenter.sh/v1alpha1): requirements and the capacity they set; none while
    Karpenter's NodeOverlay feature gate is off (`node_overlay_gate`): it ignores them then."""
    if not node_overlay_gate(graph):
        return []
    found = []
    for entry in graph:
        if not is_type(str(entry.get("type", "")), "karpenter.sh", "NodeOverlay"):
            continue
        spec = as_map(as_map(entry.get("inputs")).get("spec"))
        try:
            reqs = requirements_of(
                (
                    str(r.get("key")),
                    str(r.get("operator")),
                    [str(v) for v in as_list(r.get("values"))],
                )
                for r in map(as_map, as_list(spec.get("requirements")))
            )
            capacity = {
                str(k): int(parse_quantity(str(v))) for k, v in as_map(spec.get("capacity")).items()
            }
        except (InputError, TypeError, ValueError):
            continue
        found.append((reqs, capacity))
    return found
