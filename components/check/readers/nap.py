"""AKS node auto-provisioning (Karpenter on Azure) as the check sees it: NodePools whose
`nodeClassRef` is an AKSNodeClass (`karpenter.azure.com`), one node template per catalog VM size
and capacity type the requirements admit (labels as Karpenter on Azure sets them:
`components.model.autoscalers.karpenter_azure`), and the AKSNodeClass's settings that change
what it offers (`imageFamily`, `osDiskSizeGB`, `maxPods`, `gpu.mode`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...model.autoscalers.karpenter import (
    CAPACITY_TYPE_LABEL,
)
from ...model.autoscalers.karpenter_azure import (
    AZURE,
    AZURE_PREFIX,
    NODE_CLASS_GROUP,
    PRIORITY,
    SCALESET_PRIORITY,
    AksNodeClassInfo,
    admitted,
    sku_labels,
)
from ...model.autoscalers.karpenter_launch import NodePoolSpec
from ...model.nodes.aks_shapes import AKS_DEFAULT_OS_DISK_GB, nap_node_shape_or_none
from ..contract import POOL_LABEL
from ..read import Findings, PoolDraft, as_int, as_map, is_type
from ..results import NodeTemplate
from .karpenter import (
    node_class_specs,
    node_counts,
    nodepool_head,
    nodepool_spec,
    read_nodepool,
    with_cpu_template,
)

_PRIORITY = {"spot": "spot", "on-demand": "regular"}


def is_nap_nodepool(entry: Mapping[str, Any]) -> bool:
    """A `karpenter.sh` NodePool whose node class is an AKSNodeClass."""
    if not is_type(str(entry.get("type", "")), "karpenter.sh", "NodePool"):
        return False
    ref = as_map(as_map(nodepool_head(entry).tspec).get("nodeClassRef"))
    return ref.get("group") == NODE_CLASS_GROUP


def aks_node_classes(graph: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """AKSNodeClass name -> its spec."""
    return node_class_specs(graph, NODE_CLASS_GROUP, "AKSNodeClass")


def aks_node_class_info(name: str, spec: Mapping[str, Any] | None) -> AksNodeClassInfo:
    """What of an AKSNodeClass changes the sizes Karpenter on Azure offers (its CRD's defaults
    when a field is absent: `imageFamily` Ubuntu, `osDiskSizeGB` 128, `gpu.mode` Driver). Not in
    the graph: the defaults."""
    spec = spec or {}
    disk = as_int(spec.get("osDiskSizeGB"))
    family = spec.get("imageFamily")
    return AksNodeClassInfo(
        name=name,
        image_family=str(family) if isinstance(family, str) else "Ubuntu",
        os_disk_gb=disk if disk is not None and disk > 0 else AKS_DEFAULT_OS_DISK_GB,
        max_pods=as_int(spec.get("maxPods")),
        gpu_mode=str(as_map(spec.get("gpu")).get("mode") or "Driver"),
    )


def nap_launch_spec(
    entry: Mapping[str, Any], node_classes: Mapping[str, Mapping[str, Any]], out: Findings
) -> tuple[NodePoolSpec, AksNodeClassInfo]:
    """The NodePool as Karpenter's scheduler on Azure reads it, and its AKSNodeClass."""
    pool = nodepool_spec(entry, out, AZURE)
    name = pool.node_class[1]
    return pool, aks_node_class_info(name, node_classes.get(name))


def nap_pool(
    entry: Mapping[str, Any], node_classes: Mapping[str, Mapping[str, Any]], out: Findings
) -> PoolDraft:
    """A node auto-provisioning NodePool: one node template per catalog size and capacity type
    its requirements admit, plus a template without GPUs when they also admit sizes without
    GPUs (not in the catalog). GPUs per node: the most any admitted size has."""
    pool = read_nodepool(entry, out)
    head, tspec, labels, reqs = pool.head, pool.head.tspec, pool.labels, pool.requirements
    nc = aks_node_class_info(
        str(as_map(tspec.get("nodeClassRef")).get("name")),
        node_classes.get(str(as_map(tspec.get("nodeClassRef")).get("name"))),
    )
    found = admitted(reqs, nc.image_family)
    # Capacity types Azure does not offer (`reserved`) leave the NodePool never Ready: its nodes
    # are still read as asked, so that the scale-up rule (GI026) says why none comes.
    capacities = found.capacity_types or tuple(
        v
        for r in reqs
        if r.key == CAPACITY_TYPE_LABEL and r.operator == "In"
        for v in r.values or ()
    )
    nodes = []
    for vm in found.vms:
        shape = nap_node_shape_or_none(vm.name, os_disk_gb=nc.os_disk_gb, max_pods=nc.max_pods)
        for c in capacities:
            node_labels = {**sku_labels(vm, nc.image_family), **labels, CAPACITY_TYPE_LABEL: c}
            if c in _PRIORITY:
                node_labels[SCALESET_PRIORITY] = node_labels[PRIORITY] = _PRIORITY[c]
            nodes.append(
                NodeTemplate(
                    None,
                    node_labels,
                    tuple(pool.taints),
                    vm.gpus,
                    shape=shape,
                    gpu_memory_gib=float(vm.gpu_memory_gib) or None,
                    origin=f"VM size {vm.name}",
                )
            )
    nodes, admits_cpu = with_cpu_template(pool, nodes, AZURE_PREFIX)
    gpus: int | None = max((vm.gpus for vm in found.vms), default=0)
    if not found.vms and any(r.key.startswith(AZURE_PREFIX + "sku-gpu") for r in reqs):
        gpus = None  # GPU sizes the catalog does not know
    models = {vm.gpu_model for vm in found.vms}
    min_nodes, max_nodes = node_counts(head)
    return PoolDraft(
        name=labels.get(POOL_LABEL) or head.name,
        provider="aks",
        resource=head.rid,
        node=nodes[0],
        more_nodes=tuple(nodes[1:]),
        gpus=gpus,
        gpu=not admits_cpu and (gpus is None or gpus > 0),
        accelerator=models.pop() if len(models) == 1 else None,
        min_nodes=min_nodes,
        max_nodes=max_nodes,
        spot=found.capacity_types == ("spot",),
        gpu_memory_gib=min((float(vm.gpu_memory_gib) for vm in found.vms), default=None),
        shape_note="VM sizes without GPUs are admitted (not in the catalog)"
        if admits_cpu
        else None,
    )
