"""Rules for AKS alone: GPU pools AKS installs no NVIDIA driver on (GI062), and pods an agent
pool's node holds only if its memory is at the top of what AKS nodes are measured to report
(GI063)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..model.nodes.aks_shapes import (
    MEMTOTAL_RANGE,
    aks_memory_capacity,
    aks_memory_uncertainty,
)
from ..model.nodes.azure_vms import azure_vm_or_none
from ..model.nodes.shapes import Gi
from .read import as_map, helm_releases, resource_id
from .readers.aks import AGENT_POOL
from .readers.nap import aks_node_classes, is_nap_nodepool
from .results import NodeTemplate, PoolFacts, WorkloadFacts

if TYPE_CHECKING:
    from .rules import CheckContext

GPU_OPERATOR_CHART = "gpu-operator"
"""NVIDIA's GPU Operator chart (`helm.ngc.nvidia.com/nvidia` `gpu-operator`): it installs the
driver, the container toolkit and the device plugin."""


def without_driver(graph: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Resource id -> the setting that leaves its nodes without a driver: agent pools with
    `gpuProfile.driver: None` and NAP NodePools whose AKSNodeClass has `gpu.mode: None`. AKS
    then installs neither the NVIDIA driver nor the device plugin (MicrosoftDocs/azure-aks-docs
    `articles/aks/use-nvidia-gpu.md` @fb060abe "Skip GPU driver installation";
    `aks-managed-gpu-nodes.md`: with `--gpu-driver None` "AKS installs no GPU software
    components: no driver, no device plugin, and no metrics exporter"; Azure/karpenter-provider-
    azure v1.14.2 `pkg/providers/imagefamily/bootstrap/aksbootstrap.go` sets up the driver only
    when GPU driver installation is on, and `staticvalues.go` leaves
    `EnableGPUDevicePluginIfNeeded` false)."""
    found: dict[str, str] = {}
    classes: dict[str, Mapping[str, Any]] | None = None
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        if typ == AGENT_POOL:
            if as_map(inputs.get("gpuProfile")).get("driver") == "None":
                found[resource_id(typ, str(entry["name"]))] = "gpuProfile.driver None"
        elif is_nap_nodepool(entry):
            classes = aks_node_classes(graph) if classes is None else classes
            tspec = as_map(as_map(as_map(inputs.get("spec")).get("template")).get("spec"))
            name = str(as_map(tspec.get("nodeClassRef")).get("name"))
            if as_map(as_map(classes.get(name)).get("gpu")).get("mode") == "None":
                found[resource_id(typ, str(entry["name"]))] = f"AKSNodeClass {name} gpu.mode None"
    return found


def no_gpu_driver(ctx: CheckContext) -> None:
    """GI062: GPU pods land on an AKS pool whose nodes get no NVIDIA driver and no device plugin
    from AKS: an error when the graph installs no GPU Operator (the nodes never advertise
    `nvidia.com/gpu`, the pods stay Pending); a warning when it does, as the Operator's
    DaemonSets' placement is not read (not judged)."""
    bare = without_driver(ctx.entries)
    if not bare:
        return
    operator = [
        resource_id(str(e["type"]), str(e["name"]))
        for e in helm_releases(ctx.entries, GPU_OPERATOR_CHART)
    ]
    for pool in ctx.pools:
        how = next((bare[r] for r in pool.resources if r in bare), None)
        if how is None:
            continue
        pods = sorted(w.resource for w in ctx.lands_on[pool.name] if w.gpus > 0)
        if not pods:
            continue
        if operator:
            ctx.out.add(
                "GI062",
                pool.resource,
                f"GPU pool {pool.name} gets no NVIDIA driver or device plugin from AKS ({how}); "
                f"the graph's GPU Operator ({', '.join(operator)}) must serve it, and whether "
                f"its DaemonSets tolerate the pool's taints is not judged: {', '.join(pods)}",
                "make sure the GPU Operator's daemonsets.tolerations cover "
                + ", ".join(str(t) for t in pool.taints),
                severity="warning",
            )
            continue
        ctx.out.add(
            "GI062",
            pool.resource,
            f"GPU pool {pool.name} gets no NVIDIA driver or device plugin from AKS ({how}) and "
            "the graph installs none: its nodes never advertise nvidia.com/gpu, so "
            f"{', '.join(pods)} stay Pending",
            "gpuDriver: Install (AKS installs the driver, the stack's NVIDIA device plugin "
            "serves the pool), or install the NVIDIA GPU Operator (chart gpu-operator)",
        )


def _low_room(node: NodeTemplate) -> int | None:
    """What the node leaves in memory if its capacity is at the bottom of the measured range
    (None: not an agent pool's node of a catalog size)."""
    shape, room = node.shape, node.room
    vm = azure_vm_or_none(shape.name) if shape is not None and shape.kind == "aks" else None
    if vm is None or room is None:
        return None
    return room.memory - aks_memory_uncertainty(vm)


def _range_text(node: NodeTemplate) -> str:
    vm = azure_vm_or_none(node.shape.name if node.shape is not None else None)
    assert vm is not None and node.room is not None
    low = node.room.memory - aks_memory_uncertainty(vm)
    high, bottom = float(MEMTOTAL_RANGE[1]), float(MEMTOTAL_RANGE[0])
    return (
        f"{vm.name} leaves {low / Gi:.2f}-{node.room.memory / Gi:.2f} GiB of memory (MemTotal "
        f"{(1 - high) * 100:.2f}-{(1 - bottom) * 100:.2f}% below the VM size's "
        f"{vm.memory_gib:g} GiB on measured AKS nodes, {aks_memory_capacity(vm) / Gi:.2f} GiB "
        "at best)"
    )


def _fits_only_the_top(w: WorkloadFacts, pool: PoolFacts) -> NodeTemplate | None:
    """A node of the pool that holds the pod at the top of the range but not at its bottom, when
    no node of the pool holds it at the bottom."""
    if w.requests is None or w.daemonset or pool.name in w.unfit:
        return None
    need = replace(w.requests, gpus=0)
    top = None
    for node in pool.nodes:
        low = _low_room(node)
        if low is None or node.room is None or not need.fits_in(node.room):
            continue
        if need.memory <= low:
            return None
        top = top or node
    return top


def memory_range(ctx: CheckContext) -> None:
    """GI063: a pod that an agent pool's node holds only when the node's memory is at the top of
    the range measured on AKS nodes (`model.nodes.aks_shapes.AKS_MEASURED_MEMTOTAL`; no AKS rule
    states it): not judged, a warning naming the range. The shape (GI021) takes the top, so a
    pod that fits nowhere in the range is GI021's error."""
    for pool in ctx.pools:
        if pool.provider != "aks":
            continue
        for w in ctx.lands_on[pool.name]:
            node = _fits_only_the_top(w, pool)
            if node is None:
                continue
            assert w.requests is not None
            low = _low_room(node)
            assert low is not None
            ctx.out.add(
                "GI063",
                w.resource,
                f"its pods ask {w.requests.memory / Gi:.2f} GiB of memory; a node of pool "
                f"{pool.name} holds them only if its memory is near the top of what AKS nodes "
                f"report: {_range_text(node)}. Not judged",
                f"ask at most {low / Gi:.2f} GiB of memory (the bottom of the range), or use a "
                "larger VM size",
                severity="warning",
            )
