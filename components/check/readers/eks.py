"""EKS managed node groups (`aws:eks/nodeGroup:NodeGroup`) as the check sees them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.catalog import aws_instance
from ...model.errors import InputError
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
    read_taints,
    resource_id,
    str_map,
)
from ..results import (
    NodeTemplate,
)


def _looks_like_gpu_instance(instance_type: str) -> bool:
    family = instance_type.split(".", 1)[0]
    return family[:1] in ("g", "p") and family[1:2].isdigit()


def eks_pool(entry: Mapping[str, Any], out: Findings) -> PoolDraft:
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
    for it in as_list(inputs.get("instanceTypes")):
        try:
            inst = aws_instance(str(it))
        except InputError:
            gpu_like = gpu_ami or _looks_like_gpu_instance(str(it))
            counts.append(None if gpu_like else 0)
            continue
        counts.append(inst.gpus)
        memories.append(float(inst.gpu_memory_gib))
        accelerator = accelerator or inst.accelerator_label
    if not counts:
        counts = [None if gpu_ami else 0]  # EKS's default instance type (t3.medium) has none
    known = [c for c in counts if c is not None]
    gpus = min(known) if len(known) == len(counts) else None
    gpu = gpus is None or gpus > 0
    effective = dict(labels)
    if isinstance(inputs.get("nodeGroupName"), str) and inputs["nodeGroupName"]:
        effective[EKS_NODEGROUP_LABEL] = str(inputs["nodeGroupName"])
    capacity = str(inputs.get("capacityType") or "ON_DEMAND")
    effective[EKS_CAPACITY_LABEL] = capacity
    scaling = as_map(inputs.get("scalingConfig"))
    return PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="eks",
        resource=rid,
        node=NodeTemplate(None, effective, tuple(taints)),
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        min_nodes=as_int(scaling.get("minSize")),
        max_nodes=as_int(scaling.get("maxSize")),
        spot=capacity == "SPOT",
        builtin_device_plugin=ami.startswith("BOTTLEROCKET") and "NVIDIA" in ami,
        gpu_memory_gib=min(memories) if memories and len(memories) == len(counts) else None,
        node_group=str(inputs["nodeGroupName"]) if inputs.get("nodeGroupName") else None,
    )
