"""GKE node pools (`gcp:container/nodePool:NodePool`) as the check sees them: the labels and taints
GKE adds, GPUs per node (shared and partitioned GPUs counted)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.catalog import MIG_PROFILES, gke_accelerator, gke_gpus_for_machine
from ...model.errors import InputError
from ..contract import (
    GKE_ACCELERATOR_COUNT_LABEL,
    GKE_ACCELERATOR_LABEL,
    GKE_GPU_TAINT,
    GKE_MAX_CLIENTS_LABEL,
    GKE_NO_DEFAULT_PLUGIN_LABEL,
    GKE_NODEPOOL_LABEL,
    GKE_PARTITION_LABEL,
    GKE_PREEMPTIBLE_LABEL,
    GKE_SHARING_LABEL,
    GKE_SPOT_LABEL,
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


def gke_memory(accelerator: str | None) -> float | None:
    try:
        return float(gke_accelerator(accelerator).memory_gib) if accelerator else None
    except InputError:
        return None


def _gke_shared(nc: Mapping[str, Any], accelerator: str | None, labels: dict[str, str]) -> int:
    """How many `nvidia.com/gpu` one GPU of a GKE node exposes: time-sharing / MPS clients
    (`gpuSharingConfig.maxSharedClientsPerGpu`) times MIG instances (`gpuPartitionSize`, from
    the catalog's MIG profiles); adds the labels GKE puts on such nodes."""
    factor = 1
    for acc in as_list(nc.get("guestAccelerators")):
        acc = as_map(acc)
        sharing = as_map(acc.get("gpuSharingConfig"))
        clients = as_int(sharing.get("maxSharedClientsPerGpu"))
        if clients:
            strategy = str(sharing.get("gpuSharingStrategy") or "")
            labels[GKE_SHARING_LABEL] = {"MPS": "mps"}.get(strategy, "time-sharing")
            labels[GKE_MAX_CLIENTS_LABEL] = str(clients)
            factor *= clients
        partition = acc.get("gpuPartitionSize")
        if isinstance(partition, str) and partition:
            labels[GKE_PARTITION_LABEL] = partition
            factor *= MIG_PROFILES.get(accelerator or "", {}).get(partition, 1)
    return factor


def gke_pool(entry: Mapping[str, Any], out: Findings) -> PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    rid = resource_id(typ, name)
    nc = as_map(inputs.get("nodeConfig"))
    labels = str_map(nc.get("labels"))
    taints = read_taints(nc.get("taints"), rid, out)
    accelerator: str | None = None
    gpus = 0
    for acc in as_list(nc.get("guestAccelerators")):
        acc = as_map(acc)
        if acc.get("type"):
            accelerator = str(acc["type"])
        gpus += as_int(acc.get("count")) or 0
    if gpus == 0 and isinstance(nc.get("machineType"), str):
        attached = gke_gpus_for_machine(str(nc["machineType"]))
        if attached:
            accelerator, gpus = attached
    gpu = gpus > 0
    effective = dict(labels)
    if gpu:
        if accelerator:
            effective[GKE_ACCELERATOR_LABEL] = accelerator
        effective[GKE_ACCELERATOR_COUNT_LABEL] = str(gpus)
        if GKE_GPU_TAINT not in taints:
            taints.append(GKE_GPU_TAINT)
        gpus *= _gke_shared(nc, accelerator, effective)
    if isinstance(inputs.get("name"), str) and inputs["name"]:
        effective[GKE_NODEPOOL_LABEL] = str(inputs["name"])
    spot = nc.get("spot") is True
    if spot:
        effective[GKE_SPOT_LABEL] = "true"
    if nc.get("preemptible") is True:
        effective[GKE_PREEMPTIBLE_LABEL] = "true"
    auto = as_map(inputs.get("autoscaling"))
    if auto:
        lo = as_int(auto.get("minNodeCount"))
        hi = as_int(auto.get("maxNodeCount"))
        if lo is None and hi is None:
            lo, hi = as_int(auto.get("totalMinNodeCount")), as_int(auto.get("totalMaxNodeCount"))
        lo = 0 if lo is None and hi is not None else lo
    else:
        lo = as_int(inputs.get("nodeCount"))
        if lo is None:
            lo = as_int(inputs.get("initialNodeCount"))
        hi = lo
    return PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="gke",
        resource=rid,
        node=NodeTemplate(None, effective, tuple(taints)),
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        min_nodes=lo,
        max_nodes=hi,
        spot=spot,
        builtin_device_plugin=effective.get(GKE_NO_DEFAULT_PLUGIN_LABEL) != "true",
        gpu_memory_gib=gke_memory(accelerator) if gpu else None,
    )
