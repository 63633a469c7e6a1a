"""GKE ComputeClasses as the check sees them: one node template per priority."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.nodes.catalog import gke_gpus_for_machine
from ...model.nodes.gke_machines import gce_arch
from ...model.nodes.labels import kubelet_labels
from ...model.scheduling import (
    Placement,
    Taint,
    Toleration,
)
from ..contract import (
    COMPUTE_CLASS_LABEL,
    GKE_ACCELERATOR_COUNT_LABEL,
    GKE_ACCELERATOR_LABEL,
    GKE_GPU_TAINT,
    GKE_SPOT_LABEL,
    POOL_LABEL,
)
from ..read import (
    Findings,
    PoolDraft,
    as_int,
    as_list,
    as_map,
    least,
    metadata,
    read_taints,
    resource_id,
    str_map,
)
from ..results import (
    NodeTemplate,
)
from .gke import gke_memory, gke_shape

# A priority without `storage.bootDiskSize` gets the disk of a node pool GKE auto-creates: the
# GKE API's AutoprovisioningNodePoolDefaults `diskSizeGb` "If unspecified, the default disk size
# is 100GB" (google.container.v1 reference). That ComputeClass node pool auto-creation applies
# the same default is our reading of it, not a statement of GKE's ComputeClass docs.
COMPUTE_CLASS_DEFAULT_DISK_GB = 100


def compute_class_pool(entry: Mapping[str, Any], out: Findings) -> PoolDraft:
    """A GKE ComputeClass: one node template per priority, labeled and tainted as GKE does for
    the class (`cloud.google.com/compute-class=<name>` label and NoSchedule taint, the GPU labels
    and taint on GPU priorities, `gke-spot=true` on spot ones) plus `nodePoolConfig`'s labels
    and taints. A GPU pool when every priority has GPUs; GPUs per node: the most any has."""
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    rid = resource_id(typ, name)
    spec = as_map(inputs.get("spec"))
    class_name = str(metadata(inputs).get("name") or name)
    config = as_map(spec.get("nodePoolConfig"))
    base = {**str_map(config.get("nodeLabels")), COMPUTE_CLASS_LABEL: class_name}
    taints = read_taints(config.get("taints"), rid, out)
    class_taint = Taint(COMPUTE_CLASS_LABEL, class_name, "NoSchedule")
    nodes, counts, accelerators, spots, notes = [], [], set(), [], []
    for index, rule in enumerate(as_list(spec.get("priorities")) or [{}], 1):
        rule = as_map(rule)
        gpu = as_map(rule.get("gpu"))
        accelerator = str(gpu["type"]) if gpu.get("type") else None
        count = as_int(gpu.get("count")) or 0
        if not count and isinstance(rule.get("machineType"), str):
            attached = gke_gpus_for_machine(str(rule["machineType"]))
            if attached:
                accelerator, count = attached
        machine = rule.get("machineType") or (
            f"{rule['machineFamily']}-" if rule.get("machineFamily") else None
        )
        labels = {**kubelet_labels(gce_arch(str(machine)) if machine else None), **base}
        node_taints = [*taints, class_taint]
        if count:
            labels[GKE_ACCELERATOR_LABEL] = accelerator or ""
            labels[GKE_ACCELERATOR_COUNT_LABEL] = str(count)
            node_taints.append(GKE_GPU_TAINT)
            accelerators.add(accelerator)
        if rule.get("spot") is True:
            labels[GKE_SPOT_LABEL] = "true"
        spots.append(rule.get("spot") is True)
        counts.append(count)
        disk = as_map(rule.get("storage")).get("bootDiskSize")
        shape, note = gke_shape(
            rule.get("machineType"),
            COMPUTE_CLASS_DEFAULT_DISK_GB if disk is None else disk,
            count,
        )
        if note:
            notes.append(note)
        machine = rule.get("machineType")
        what = machine if isinstance(machine, str) else (accelerator or "")
        nodes.append(
            NodeTemplate(
                None,
                labels,
                tuple(dict.fromkeys(node_taints)),
                count,
                shape=shape,
                gpu_memory_gib=(gke_memory(accelerator) or None) if count else None,
                origin=f"priority {index}" + (f" ({what})" if what else ""),
            )
        )
    return PoolDraft(
        name=base.get(POOL_LABEL) or class_name,
        provider="gke",
        resource=rid,
        node=nodes[0],
        more_nodes=tuple(nodes[1:]),
        gpus=max(counts),
        gpu=all(c > 0 for c in counts),
        accelerator=accelerators.pop() if len(accelerators) == 1 else None,
        gpu_memory_gib=least([n.gpu_memory_gib for n in nodes]) if all(counts) else None,
        min_nodes=0,
        max_nodes=None,  # a ComputeClass sets no node limit
        spot=all(spots),
        builtin_device_plugin=True,  # GKE-managed, as for GKE node pools
        shape_note=notes[0] if notes else None,
        daemon_kind="gke-gpu" if any(counts) else "gke",
    )


def compute_class_tolerations(placement: Placement) -> tuple[Toleration, ...]:
    """The toleration GKE's admission gives a pod that selects a ComputeClass by nodeSelector:
    `cloud.google.com/compute-class=<name>:NoSchedule`, the taint of the class's nodes. GKE's
    docs request a class with the nodeSelector alone ("About custom ComputeClasses", "Request a
    ComputeClass in a workload"; "Deploy GPU workloads in Autopilot" shows a GPU pod with only
    `cloud.google.com/compute-class` selected); that admission adds the toleration is reported by
    users who read it back from the pod spec, not stated in the docs (a secondary source)."""
    name = (placement.node_selector or {}).get(COMPUTE_CLASS_LABEL)
    if not name:
        return ()
    return (Toleration(COMPUTE_CLASS_LABEL, "Equal", name, "NoSchedule"),)
