"""EKS managed node groups (`aws:eks/nodeGroup:NodeGroup`) as the check sees them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...model.autoscalers.karpenter import ARCHES as KARPENTER_ARCHES
from ...model.errors import InputError
from ...model.nodes.catalog import aws_instance
from ...model.nodes.labels import kubelet_labels
from ...model.nodes.shapes import NodeShape, eks_node_shape_or_none
from ..contract import (
    EKS_CAPACITY_LABEL,
    EKS_NODEGROUP_LABEL,
    POOL_LABEL,
)
from ..read import (
    Findings,
    PoolDraft,
    as_int,
    as_list,
    as_map,
    dependency_key,
    read_taints,
    resource_id,
    str_map,
)
from ..results import (
    NodeTemplate,
)
from .dra import eks_dra_devices

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
# EKS API CreateNodegroup `diskSize`: "The default disk size is 20 GiB for Linux and Bottlerocket"
# (AWS SDK reference, CreateNodegroupRequest.diskSize); it is refused beside a launch template.
EKS_DEFAULT_DISK_GIB = 20
ROOT_DEVICES = ("/dev/xvda",)  # AL2023's root volume (the kubelet's filesystem)


def launch_templates(graph: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """The graph's EC2 launch templates' inputs by `type::name` and by their `name` input."""
    found: dict[str, Mapping[str, Any]] = {}
    for entry in graph:
        if entry.get("type") == LAUNCH_TEMPLATE:
            inputs = as_map(entry.get("inputs"))
            found[f"{LAUNCH_TEMPLATE}::{entry.get('name')}"] = inputs
            if isinstance(inputs.get("name"), str):
                found[str(inputs["name"])] = inputs
    return found


def _disk_gib(
    entry: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]]
) -> tuple[int | None, str | None]:
    """The node group's root volume in GiB: its launch template's `/dev/xvda` mapping (tied by
    dependsOn or by the template's name), else `diskSize`, else EKS's 20 GiB default."""
    inputs = as_map(entry.get("inputs"))
    ref = as_map(inputs.get("launchTemplate"))
    keys = [dependency_key(str(d)) for d in as_list(entry.get("dependsOn"))]
    keys += [str(ref.get("name"))] if ref.get("name") else []
    template = next((templates[k] for k in keys if k in templates), None)
    if template is None:
        if ref:
            return None, "its launch template is not in the graph (the disk size is unknown)"
        size = as_int(inputs.get("diskSize"))
        return (EKS_DEFAULT_DISK_GIB if size is None else size), None
    for mapping in as_list(template.get("blockDeviceMappings")):
        mapping = as_map(mapping)
        if mapping.get("deviceName") in ROOT_DEVICES:
            size = as_int(as_map(mapping.get("ebs")).get("volumeSize"))
            if size is not None:
                return size, None
    return None, "its launch template sets no root volume size (the AMI's is not assumed)"


def eks_shape(
    entry: Mapping[str, Any], templates: Mapping[str, Mapping[str, Any]]
) -> tuple[NodeShape | None, str | None]:
    """The node cluster-autoscaler simulates for the group: its first instance type (the
    autoscaler builds a mixed-instances group's template from the first; cluster-autoscaler
    AWS docs [secondary]), on AL2023 (nodeadm's reservations; Bottlerocket's are not modelled)."""
    inputs = as_map(entry.get("inputs"))
    types = [str(t) for t in as_list(inputs.get("instanceTypes"))]
    ami = str(inputs.get("amiType") or "AL2023")
    if not types:
        return None, "its instance type is not given (EKS's default is not assumed)"
    if not ami.startswith("AL2023"):
        return None, f"AMI type {ami}: only AL2023 node reservations are modelled"
    disk, why = _disk_gib(entry, templates)
    if disk is None:
        return None, why
    try:
        shape = eks_node_shape_or_none(types[0], disk_gib=disk)
    except InputError as e:
        return None, f"{types[0]}: {e.problem}"
    if shape is None:
        return None, f"instance type {types[0]} is not in the node-shape catalog"
    return shape, None


def _looks_like_gpu_instance(instance_type: str) -> bool:
    family = instance_type.split(".", 1)[0]
    return family[:1] in ("g", "p") and family[1:2].isdigit()


def eks_pool(
    entry: Mapping[str, Any],
    out: Findings,
    templates: Mapping[str, Mapping[str, Any]] | None = None,
) -> PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    rid = resource_id(typ, name)
    labels = str_map(inputs.get("labels"))
    taints = read_taints(inputs.get("taints"), rid, out)
    ami = str(inputs.get("amiType") or "")
    gpu_ami = "NVIDIA" in ami or "GPU" in ami
    counts: list[int | None] = []
    memories: list[float] = []
    accelerator = None
    arches: set[str] = set()
    for it in as_list(inputs.get("instanceTypes")):
        try:
            inst = aws_instance(str(it))
        except InputError:
            gpu_like = gpu_ami or _looks_like_gpu_instance(str(it))
            counts.append(None if gpu_like else 0)
            continue
        counts.append(inst.gpus)
        arches.add(inst.arch)
        memories.append(float(inst.gpu_memory_gib))
        accelerator = accelerator or inst.accelerator_label
    if not counts:
        counts = [None if gpu_ami else 0]  # EKS's default instance type (t3.medium) has none
    known = [c for c in counts if c is not None]
    gpus = min(known) if len(known) == len(counts) else None
    gpu = gpus is None or gpus > 0
    # One architecture per group (its AMI's): the instance types', else the AMI type's.
    arch = next(iter(arches)) if len(arches) == 1 else ("arm64" if "ARM" in ami else "x86_64")
    effective = {**kubelet_labels(KARPENTER_ARCHES[arch]), **labels}
    if isinstance(inputs.get("nodeGroupName"), str) and inputs["nodeGroupName"]:
        effective[EKS_NODEGROUP_LABEL] = str(inputs["nodeGroupName"])
    capacity = str(inputs.get("capacityType") or "ON_DEMAND")
    effective[EKS_CAPACITY_LABEL] = capacity
    scaling = as_map(inputs.get("scalingConfig"))
    shape, note = eks_shape(entry, templates or {})
    return PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="eks",
        resource=rid,
        node=NodeTemplate(
            None,
            effective,
            tuple(taints),
            shape=shape,
            dra_devices=eks_dra_devices(inputs, effective) if gpu else None,
        ),
        shape_note=note,
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        min_nodes=as_int(scaling.get("minSize")),
        max_nodes=as_int(scaling.get("maxSize")),
        spot=capacity == "SPOT",
        builtin_device_plugin=ami.startswith("BOTTLEROCKET") and "NVIDIA" in ami,
        gpu_memory_gib=min(memories) if memories and len(memories) == len(counts) else None,
        node_group=str(inputs["nodeGroupName"]) if inputs.get("nodeGroupName") else None,
        daemon_kind="eks",
    )
