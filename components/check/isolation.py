"""Whether a pool keeps to itself: a taint only the pods wired to it tolerate.

Kubernetes' ExtendedResourceToleration admission plugin (kubernetes v1.34.0
`plugin/pkg/admission/extendedresourcetoleration/admission.go`) gives every pod requesting an
extended resource `{key: <resource>, operator: Exists, effect: NoSchedule}`: a GPU pool whose only
taint is `nvidia.com/gpu:NoSchedule` (GKE's own, or EKS's usual one) is then tolerated by every
GPU pod of the cluster, and only labels keep the others off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.scheduling import FILTERING_EFFECTS, GPU_RESOURCE, extended_resource_tolerations
from .registry.kinds import pool_kinds

if TYPE_CHECKING:
    from .rules import CheckContext

ERT_TOLERATIONS = extended_resource_tolerations([GPU_RESOURCE])
"""What the plugin adds to a pod asking `nvidia.com/gpu`."""


def ert_only_taint(ctx: CheckContext) -> None:
    """GI061: a GPU pool whose every filtering taint the plugin makes a GPU pod tolerate, while
    GPU workloads of the graph not wired to it exist (they, and any GPU pod, pass its taints).
    An Autopilot pool takes no taint of its own (Autopilot's nodes carry GKE's alone)."""
    if not ctx.extended_resource_toleration:
        return
    gpu_workloads = [w for w in ctx.workloads if w.gpus > 0 and not w.daemonset]
    for pool in ctx.pools:
        taints = [t for t in pool.taints if t.effect in FILTERING_EFFECTS]
        if not pool.gpu or not taints or "autopilot" in pool_kinds(pool, ctx.entry_by_key):
            continue
        if not all(any(tol.tolerates(t) for tol in ERT_TOLERATIONS) for t in taints):
            continue
        others = sorted({w.resource for w in gpu_workloads if pool.name not in w.wired})
        if not others:
            continue
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        ctx.out.add(
            "GI061",
            pool.resource,
            f"GPU pool {pool.name}'s only taint {', '.join(map(str, taints))} is tolerated by "
            f"every pod asking {GPU_RESOURCE} (ExtendedResourceToleration is on): only labels "
            f"keep the graph's other GPU workloads ({shown}) and any GPU pod of the cluster off it",
            f"give the pool a taint of its own that only the pods wired to it tolerate, e.g. "
            f"dedicated={pool.name}:NoSchedule",
        )
