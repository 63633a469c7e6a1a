"""Stack config -> the arguments of the newer pool kinds (Karpenter), shared by the config checks
(which resolve a pool's GPUs per node before workloads are checked against it) and the platform
(which builds the component), so both read a pool the same way and errors name config keys."""

from __future__ import annotations

from ..model.errors import InputError
from ..pools.autopilot import GkeAutopilotGpuPoolArgs, plan_autopilot_pool
from ..pools.compute_class import (
    ComputeClassPlan,
    GkeGpuComputeClassArgs,
    validate_compute_class_args,
)
from ..pools.karpenter import (
    KarpenterGpuNodePoolArgs,
    KarpenterPoolPlan,
    validate_karpenter_pool_args,
)
from ..pools.pool import PoolFacts
from .config import Cluster, Pool

# `args.<field>` of KarpenterGpuNodePoolArgs -> the stack config key under `pools[i]`.
KARPENTER_KEYS = {
    "args.gpu_names": "karpenter.gpuNames",
    "args.instance_families": "karpenter.instanceFamilies",
    "args.instance_types": "karpenter.instanceTypes",
    "args.min_gpus": "karpenter.minGpus",
    "args.max_gpus": "karpenter.maxGpus",
    "args.capacity_types": "karpenter.capacityTypes",
    "args.node_role": "karpenter.nodeRole",
    "args.node_class": "karpenter.nodeClass",
    "args.ami_alias": "karpenter.amiAlias",
    "args.consolidate_after": "karpenter.consolidateAfter",
    "args.max_total_gpus": "karpenter.maxTotalGpus",
    "args.weight": "karpenter.weight",
    "args.auto_mode": "karpenter.autoMode",
    "args.labels": "labels",
    "args.taints": "taints",
    "args.select_labels": "selectLabels",
    "args.max_nodes": "maxNodes",
    "args.disk_size_gb": "diskSizeGb",
    "args.scheduling_style": "karpenter",
    "args.pool_name": "name",
    "args": "karpenter",
    "name": "name",
}


def karpenter_args(pool: Pool, cluster: Cluster) -> KarpenterGpuNodePoolArgs:
    """The component arguments a `pools[i]` with a `karpenter` block stands for."""
    k = pool.karpenter
    assert k is not None
    return KarpenterGpuNodePoolArgs(
        cluster_name=cluster.name,
        node_role=k.node_role,
        gpu_names=k.gpu_names,
        instance_families=k.instance_families,
        instance_types=k.instance_types,
        min_gpus=k.min_gpus,
        max_gpus=k.max_gpus,
        capacity_types=list(k.capacity_types) if k.capacity_types else None,
        max_nodes=pool.max_nodes,
        max_total_gpus=k.max_total_gpus,
        labels=pool.labels or None,
        taints=pool.taint_list or None,
        select_labels=pool.select_labels,
        consolidate_after=k.consolidate_after or "5m",
        weight=k.weight,
        ami_alias=k.ami_alias or "al2023@latest",
        disk_size_gb=pool.disk_size_gb or 100,
        node_class=k.node_class,
        auto_mode=bool(k.auto_mode),
        time_slicing_replicas=pool.gpu_sharing.max_clients_per_gpu if pool.gpu_sharing else None,
        pool_name=pool.name,
    )


def plan_karpenter(pool: Pool, cluster: Cluster, path: str) -> KarpenterPoolPlan:
    """Validate a Karpenter pool; an error names the stack config key under `path`
    (`gpu-inference:pools[0]`)."""
    try:
        return validate_karpenter_pool_args(pool.name, karpenter_args(pool, cluster))
    except InputError as e:
        head, _, rest = e.path.partition("[")
        key = KARPENTER_KEYS.get(head, "karpenter")
        suffix = f"[{rest}" if rest else ""
        if head in ("args.labels",) or head.startswith("args.labels."):
            key, suffix = "labels", e.path[len("args.labels") :]
        raise InputError(e.problem, e.allowed, f"{path}.{key}{suffix}") from None


# `args.<field>` of GkeGpuComputeClassArgs -> the stack config key under `pools[i]`.
COMPUTE_CLASS_KEYS = {
    "args.accelerator": "accelerator",
    "args.machine_type": "machineType",
    "args.gpu_count": "gpusPerNode",
    "args.priorities": "computeClass.priorities",
    "args.reservations": "computeClass.reservations",
    "args.driver_version": "computeClass.driverVersion",
    "args.consolidation_delay_minutes": "computeClass.consolidationDelayMinutes",
    "args.taints": "taints",
    "args.select_labels": "selectLabels",
    "args.class_name": "name",
    "name": "name",
}


def compute_class_args(pool: Pool) -> GkeGpuComputeClassArgs:
    """The component arguments a `pools[i]` with a `computeClass` block stands for."""
    cc = pool.compute_class
    assert cc is not None
    return GkeGpuComputeClassArgs(
        accelerator=pool.accelerator or "",
        machine_type=pool.machine_type or "",
        gpu_count=pool.gpus_per_node,
        priorities=list(cc.priorities) if cc.priorities else None,
        reservations=cc.reservations,
        driver_version=cc.driver_version,
        consolidation_delay_minutes=cc.consolidation_delay_minutes,
        active_migration=bool(cc.active_migration),
        labels=pool.labels or None,
        taints=pool.taint_list or None,
        select_labels=pool.select_labels,
        class_name=pool.name,
    )


def plan_compute_class(pool: Pool, path: str) -> ComputeClassPlan:
    """Validate a ComputeClass pool; an error names the stack config key under `path`."""
    try:
        return validate_compute_class_args(pool.name, compute_class_args(pool))
    except InputError as e:
        head, _, rest = e.path.partition("[")
        if head.startswith("args.labels"):
            key, suffix = "labels", e.path[len("args.labels") :]
        else:
            key, suffix = COMPUTE_CLASS_KEYS.get(head, "computeClass"), f"[{rest}" if rest else ""
        raise InputError(e.problem, e.allowed, f"{path}.{key}{suffix}") from None


def autopilot_args(pool: Pool) -> GkeAutopilotGpuPoolArgs:
    """The component arguments a `pools[i]` on an Autopilot cluster stands for."""
    return GkeAutopilotGpuPoolArgs(
        accelerator=pool.accelerator or "",
        gpu_count=pool.gpus_per_node,
        spot=pool.spot,
        pool_name=pool.name,
    )


def plan_autopilot(pool: Pool, path: str) -> PoolFacts:
    """Validate an Autopilot pool; an error names the stack config key under `path`."""
    try:
        return plan_autopilot_pool(pool.name, autopilot_args(pool))
    except InputError as e:
        key = {"args.accelerator": "accelerator", "args.gpu_count": "gpusPerNode"}.get(
            e.path, "name"
        )
        raise InputError(e.problem, e.allowed, f"{path}.{key}") from None
