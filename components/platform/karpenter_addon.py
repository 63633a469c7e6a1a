"""`addons.karpenter` in the stack config -> `KarpenterInstallArgs`, and the rules that need the rest
of the stack (provider, pools), shared by the config checks (refusals before anything is
registered) and the platform (which builds the install), so both read the add-on the same way."""

from __future__ import annotations

from ..model.errors import InputError
from ..serving.karpenter_install import KarpenterInstallArgs, validate_karpenter_install_args
from .config import Spec
from .derive import args_from, relocate, value_of
from .pool_kinds import PoolConfig


def node_overlay_needed(spec: Spec) -> bool:
    """A Karpenter pool with time-sliced GPUs emits NodeOverlays, which Karpenter reads only with
    its (alpha) NodeOverlay feature gate on."""
    return any(p.kind.name == "karpenter" and p.sharing_clients for p in spec.pools)


def karpenter_install_args(spec: Spec) -> KarpenterInstallArgs:
    """The component arguments `addons.karpenter` stands for."""
    return args_from(
        spec.addons.karpenter,
        KarpenterInstallArgs,
        sources={"cluster.name": spec.cluster.name},
        node_overlay=node_overlay_needed(spec),
    )


# The chart's only toleration (charts/karpenter/values.yaml v1.14.1: `tolerations:
# [{key: CriticalAddonsOnly, operator: Exists}]`, any value and effect).
CONTROLLER_TOLERATED = "CriticalAddonsOnly"


def _hard_taints(pool: PoolConfig) -> list[str]:
    """The pool's taints that keep the controller off (NoSchedule / NoExecute, not the one key it
    tolerates), as `key:effect`."""
    return [
        f"{t.key}:{t.effect}"
        for t in pool.node_taints
        if t.effect in ("NoSchedule", "NoExecute") and t.key != CONTROLLER_TOLERATED
    ]


def check_karpenter_addon(spec: Spec, base: str) -> None:
    """Refuse an `addons.karpenter` (at `base`, e.g. `gpu-inference:addons.karpenter`) that could not
    work on this stack, naming the key."""
    k = spec.addons.karpenter
    if not k.enabled:
        given = sorted(k.model_fields_set - {"enabled"})
        if given:
            key = type(k).model_fields[given[0]].alias or given[0]
            raise InputError(
                f"{key} is set but the add-on is not enabled",
                "leave it out, or enabled: true",
                f"{base}.{key}",
            )
        return
    if spec.provider != "eks":
        raise InputError(
            f"the Karpenter controller (Karpenter's AWS provider) launches EC2 instances for EKS; "
            f"this cluster's provider is {spec.provider!r}",
            "enabled: true only with cluster.provider eks",
            f"{base}.enabled",
        )
    auto = [i for i, p in enumerate(spec.pools) if value_of(p, "auto_mode")]
    if auto:
        raise InputError(
            f"pools[{auto[0]}].karpenter.autoMode says the cluster runs EKS Auto Mode, whose "
            "managed Karpenter provisions the nodes; this chart would install a second controller "
            "and replace the nodepools / nodeclaims CRDs Auto Mode shares",
            "leave the add-on out on Auto Mode",
            f"{base}.enabled",
        )
    by_name = {p.name: p for p in spec.pools}
    fit = [
        p.name
        for p in spec.pools
        if p.kind.name == "eks" and p.facts.min_nodes and not _hard_taints(p)
    ]
    for i, name in enumerate(k.system_pools or ()):
        path = f"{base}.systemPools[{i}]"
        pool = by_name.get(name)
        allowed = ", ".join(fit) or "none: no untainted node-group pool with minNodes >= 1 here"
        if pool is None:
            raise InputError(f"pool {name!r} does not exist", allowed, path)
        if pool.kind.name == "karpenter":
            raise InputError(
                f"pool {name!r} is a Karpenter pool: the controller must not run on nodes it "
                "manages (it could remove its own node)",
                allowed,
                path,
            )
        if pool.kind.name != "eks":
            raise InputError(
                f"pool {name!r} is existing nodes, not an EKS node group", allowed, path
            )
        hard = _hard_taints(pool)
        if hard:
            raise InputError(
                f"pool {name!r} is tainted {', '.join(hard)}, which the controller does not "
                "tolerate (the chart's tolerations: CriticalAddonsOnly only)",
                allowed,
                path,
            )
        if pool.facts.min_nodes == 0:
            raise InputError(
                f"pool {name!r} can be at 0 nodes (minNodes 0): the controller's pods would wait "
                "for a node, and Karpenter launches none for itself",
                f"a pool with minNodes >= 1 (set pools[{spec.pools.index(pool)}].minNodes), or "
                "leave systemPools out (the chart keeps the controller off Karpenter's nodes)",
                path,
            )
        if name in (k.system_pools or [])[:i]:
            raise InputError(f"pool {name!r} is listed twice", "each pool once", path)
    try:
        validate_karpenter_install_args(karpenter_install_args(spec))
    except InputError as e:
        raise relocate(e, base, KarpenterInstallArgs, namespace=base.split(":", 1)[0]) from None
    if not k.system_pools and not k.node_groups and not fit:
        raise InputError(
            "the Karpenter controller needs a node to run on before Karpenter can launch any, and "
            "none is known: no node-group pool of this stack keeps an untainted node up "
            "(minNodes >= 1) and nodeGroups names none of the cluster's own node groups",
            "nodeGroups: the EKS managed node groups the cluster already runs "
            "(eks.amazonaws.com/nodegroup), or a node-group pool with minNodes >= 1 (systemPools)",
            f"{base}.nodeGroups",
        )
