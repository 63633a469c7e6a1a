"""GPUs on a GKE Autopilot cluster: `GkeAutopilotGpuPool` creates no node pool (Autopilot has
none to manage); it hands out the placement Autopilot needs to provision a GPU node for a pod and
registers what that node will be, so the placement check sees the pool.

The accelerator and GPUs per node are refused unless Autopilot offers them
(`components.model.nodes.autopilot`, from GKE's "Deploy GPU workloads in Autopilot"); the stack config
refuses a workload whose GPU count Autopilot would reject on the pool it is wired to (GI029 in the
placement check is the same rule).

Autopilot provisions GPU nodes for pods that select `cloud.google.com/gke-accelerator` (optionally
`cloud.google.com/gke-accelerator-count`) and request `nvidia.com/gpu`; for Spot Pods they also
select `cloud.google.com/gke-spot: "true"`, and "GKE automatically taints nodes that run Spot
Pods to ensure that standard Pods ... aren't scheduled" on them (GKE docs, "Run fault-tolerant
workloads at lower costs in Spot Pods"). GPU nodes carry GKE's `nvidia.com/gpu=present:
NoSchedule` taint. The placement tolerates both explicitly (Autopilot's admission adds them too;
being explicit keeps the pod portable and the check exact). An on-demand pool's placement does
not tolerate the spot taint, so it never lands on the spot pool's nodes.

The registered inputs (`poolName`, `accelerator`, `gpuCount`, `spot`) are what
`components.check` reads for type `gpu-inference:index:GkeAutopilotGpuPool`: an Autopilot pool
has no cloud resource of its own to read.
"""

from dataclasses import dataclass, field
from typing import Optional

import pulumi

from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.autopilot import AUTOPILOT_GPU_QUANTITIES
from ..model.nodes.catalog import gke_accelerator
from ..model.scheduling import Placement, Taint
from .component import PoolComponent
from .gke import GKE_ACCELERATOR_COUNT_LABEL, GKE_ACCELERATOR_LABEL, GKE_SPOT_LABEL
from .pool import GPU_TAINT, PoolFacts, PoolKind, pool_name_of, validate_pool_name

TYPE = "gpu-inference:index:GkeAutopilotGpuPool"
SPOT_TAINT = Taint(GKE_SPOT_LABEL, "true", "NoSchedule")


@dataclass
class GkeAutopilotGpuPoolArgs:
    """Inputs of a `GkeAutopilotGpuPool`; every default is here."""

    accelerator: str = field(metadata=stack(required=True, choices=tuple(AUTOPILOT_GPU_QUANTITIES)))
    """GKE accelerator type, e.g. `nvidia-l4` (checked against the catalog); placements select
    it as `cloud.google.com/gke-accelerator`."""
    gpu_count: Optional[int] = field(
        default=None,
        metadata=stack(
            "gpusPerNode",
            required=True,
            ge=1,
            doc="GPUs per node to select (`cloud.google.com/gke-accelerator-count`), a count GKE "
            "offers for the accelerator.",
        ),
    )
    """GPUs per node to select (`cloud.google.com/gke-accelerator-count`), a count GKE offers for
    the accelerator; None: Autopilot sizes the node to the pod's request."""
    spot: Optional[bool] = False
    """Spot Pods: placements select `cloud.google.com/gke-spot: "true"` and tolerate GKE's Spot
    taint."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    pool_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool` (no node "
            "pool is made; nodes are selected by their GKE labels); a DNS-1123 label of at most "
            "40 characters.",
        ),
    )
    """The pool's name (what workloads are wired to); default: the component's name."""


def plan_autopilot_pool(name: str, args: GkeAutopilotGpuPoolArgs) -> PoolFacts:
    """Check every input (no Pulumi) and return the pool's facts. What each field declares
    (`check_declared`) comes first."""
    check_declared(args)
    pool_name, name_path = pool_name_of(name, args.pool_name)
    validate_pool_name(pool_name, name_path)
    try:
        acc = gke_accelerator(args.accelerator)
    except InputError as e:
        raise e.at("args.accelerator") from None
    offered = list(AUTOPILOT_GPU_QUANTITIES[acc.name])
    count = args.gpu_count
    if count is not None and (isinstance(count, bool) or count not in offered):
        raise InputError(
            f"{show(count)} {acc.name} GPUs per node is not a quantity Autopilot accepts",
            ", ".join(map(str, offered)),
            "args.gpu_count",
        )
    labels = {GKE_ACCELERATOR_LABEL: acc.name}
    if count is not None:
        labels[GKE_ACCELERATOR_COUNT_LABEL] = str(count)
    taints = [GPU_TAINT]
    if args.spot:
        labels[GKE_SPOT_LABEL] = "true"
        taints.append(SPOT_TAINT)
    style = args.scheduling_style or "nodeSelector"
    placement = Placement.for_pool(labels, taints, style)
    return PoolFacts(
        name=pool_name,
        labels=labels,
        taints=tuple(taints),
        gpus_per_node=count if count is not None else max(offered),
        gpu_model=acc.gpu_model,
        min_nodes=0,
        max_nodes=1,  # Autopilot sets no per-pool limit; the cluster's quotas apply
        spot=bool(args.spot),
        custom_gpu_taint=False,
        placement=placement,
        cloud="gke",
        selected=tuple(labels),
    )


def autopilot_inputs(facts: PoolFacts) -> dict[str, object]:
    """What the component registers for the placement check."""
    count = facts.labels.get(GKE_ACCELERATOR_COUNT_LABEL)
    return {
        "poolName": facts.name,
        "accelerator": facts.labels[GKE_ACCELERATOR_LABEL],
        "gpuCount": int(count) if count else None,
        "spot": facts.spot,
    }


class GkeAutopilotGpuPool(PoolComponent):
    """GPU nodes Autopilot provisions on demand, and the placement that asks for them."""

    def __init__(
        self,
        name: str,
        args: GkeAutopilotGpuPoolArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        self._start(TYPE, name, plan_autopilot_pool, args, opts, props=autopilot_inputs)
        self._finish(gpus_per_node=False)


KIND = PoolKind(
    name="autopilot",
    title="GKE Autopilot GPU pool",
    provider="gke",
    args=GkeAutopilotGpuPoolArgs,
    plan=plan_autopilot_pool,
    component=GkeAutopilotGpuPool,
    autopilot=True,
    node_startup=False,
    note="Autopilot has no node pools to shape, label or taint: a pool is the GPU shape its "
    "pods select",
)
