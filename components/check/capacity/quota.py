"""Cloud quotas against the pools (GI045, GI046): the quotas a graph declares (the
`gpu-inference:index:CloudQuota` components our platform registers from the `quotas` stack
section), or that the caller gives (the policy pack's config), per provider and region.

Which quota a pool's nodes count against, and how much one node takes
(`model.nodes.quotas`):
- a GKE node pool: the GPU family metric of its accelerator (`PREEMPTIBLE_` when its nodes are
  Spot or preemptible), each node its physical GPUs, in the region of the pool's `location` (a
  zone's region), else of the quota declared for gke;
- an EKS managed node group: the vCPU quota of its instance type's family (Spot apart), each node
  the type's vCPUs, in the region declared for eks (a node group names none).
Other pools (Karpenter, ComputeClass, Autopilot, existing nodes, self-managed groups) are not
judged against a quota.

- GI045 (error): the pools counting against one quota can grow (their max nodes) past its limit:
  the autoscaler's scale-up past it fails (GCE QUOTA_EXCEEDED, EC2 VcpuLimitExceeded).
- GI046 (error): with the nodes the quota allows (for a set of pools of one pool), the pods that
  run all the time have no packing (exact, as GI040): they stay Pending though the pool's max
  would hold them. It takes the place of GI045 for that quota.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...model.nodes.aws_instances import ec2_instance_or_none
from ...model.nodes.catalog import gke_gpus_for_machine
from ...model.nodes.quotas import ec2_quotas, gce_quota, gce_region
from ..contract import EKS_NODE_GROUP, GKE_NODE_POOL
from ..read import Findings, as_int, as_list, as_map
from ..results import PoolFacts
from .model import CapacityCase
from .packing import OutOfBudget, fullest, place_all

CLOUD_QUOTA = "gpu-inference:index:CloudQuota"
FAILURE = {"gke": "GCE QUOTA_EXCEEDED", "eks": "EC2 VcpuLimitExceeded"}
UNIT = {"gke": "GPU(s)", "eks": "vCPU(s)"}
HOW = {
    "gke": "gcloud compute regions describe {region} shows it; ask for more on the Quotas page",
    "eks": "aws service-quotas get-service-quota --service-code ec2 --quota-code <code> shows "
    "it; request-service-quota-increase asks for more",
}


@dataclass(frozen=True)
class Quota:
    provider: str
    region: str
    limits: Mapping[str, int]


@dataclass(frozen=True)
class PoolQuota:
    """What one node of a pool takes of which quota."""

    pool: PoolFacts
    provider: str
    region: str
    name: str
    per_node: int


def read_quotas(
    graph: Iterable[Mapping[str, Any]], given: Iterable[Mapping[str, Any]] = ()
) -> list[Quota]:
    """The graph's CloudQuota entries and the `given` ones ({provider, region, limits}); a given
    one replaces the graph's for its provider and region."""
    found: dict[tuple[str, str], Quota] = {}
    sources = [as_map(e.get("inputs")) for e in graph if e.get("type") == CLOUD_QUOTA]
    for inputs in [*sources, *given]:
        provider, region = str(inputs.get("provider") or ""), str(inputs.get("region") or "")
        limits = {}
        for k, v in as_map(inputs.get("limits")).items():
            amount = as_int(v)
            if amount is not None:
                limits[str(k)] = amount
        if provider and region:
            found[(provider, region)] = Quota(provider, region, limits)
    return list(found.values())


def _sole_region(quotas: Sequence[Quota], provider: str) -> str | None:
    regions = {q.region for q in quotas if q.provider == provider}
    return next(iter(regions)) if len(regions) == 1 else None


def pool_quota(
    pool: PoolFacts, entries: Mapping[str, Mapping[str, Any]], quotas: Sequence[Quota]
) -> PoolQuota | None:
    """The quota one node of `pool` counts against, when the pool is one GKE node pool or EKS
    node group and a quota for it is declared."""
    if len(pool.keys) != 1 or pool.keys[0] not in entries:
        return None
    entry = entries[pool.keys[0]]
    inputs = as_map(entry.get("inputs"))
    if entry.get("type") == GKE_NODE_POOL:
        nc = as_map(inputs.get("nodeConfig"))
        location = str(inputs.get("location") or "")
        region = gce_region(location) if location else _sole_region(quotas, "gke")
        preemptible = nc.get("spot") is True or nc.get("preemptible") is True
        metric = gce_quota(pool.accelerator, preemptible)
        attached = [as_int(as_map(a).get("count")) for a in as_list(nc.get("guestAccelerators"))]
        gpus = next((n for n in attached if n), None)
        if gpus is None:
            built_in = gke_gpus_for_machine(str(nc.get("machineType") or ""))
            gpus = built_in[1] if built_in else None
        candidates, provider, per_node = [metric] if metric else [], "gke", gpus
    elif entry.get("type") == EKS_NODE_GROUP:
        types = [str(t) for t in as_list(inputs.get("instanceTypes"))]
        instance = ec2_instance_or_none(types[0]) if types else None
        spot = str(inputs.get("capacityType") or "") == "SPOT"
        candidates = ec2_quotas(types[0], spot) if types else []
        provider, region = "eks", _sole_region(quotas, "eks")
        per_node = instance.vcpus if instance else None
    else:
        return None
    if region is None or not per_node:
        return None
    for q in quotas:
        if q.provider == provider and q.region == region:
            for name in candidates:
                if name in q.limits:
                    return PoolQuota(pool, provider, region, name, per_node)
    return None


def check_quotas(
    graph: Sequence[Mapping[str, Any]],
    pools: Sequence[PoolFacts],
    cases: Sequence[CapacityCase],
    out: Findings,
    given: Iterable[Mapping[str, Any]] = (),
) -> None:
    quotas = read_quotas(graph, given)
    if not quotas:
        return
    entries = {f"{e.get('type')}::{e.get('name')}": e for e in graph}
    counted: dict[tuple[str, str, str], list[PoolQuota]] = {}
    for pool in pools:
        found = pool_quota(pool, entries, quotas)
        if found is not None and pool.max_nodes is not None:
            counted.setdefault((found.provider, found.region, found.name), []).append(found)
    limits = {(q.provider, q.region, name): v for q in quotas for name, v in q.limits.items()}
    short = _too_few_for_always(counted, limits, cases, out)
    for key, members in sorted(counted.items()):
        if key in short:
            continue
        provider, region, name = key
        limit = limits[key]
        usage = sum((m.pool.max_nodes or 0) * m.per_node for m in members)
        if usage <= limit:
            continue
        detail = " + ".join(
            f"{m.pool.name} {m.pool.max_nodes} node(s) x {m.per_node}" for m in members
        )
        first = members[0]
        fits = limit // first.per_node
        fix = f"raise the quota to {usage} ({HOW[provider].format(region=region)})"
        if len(members) == 1:
            fix += f", or lower maxNodes of {first.pool.name} to {fits}"
        out.add(
            "GI045",
            first.pool.resource,
            f"pool(s) {', '.join(m.pool.name for m in members)} can grow to {usage} "
            f"{UNIT[provider]} of quota {name} in {region} ({detail}), but it allows {limit}: "
            f"scale-up past it fails ({FAILURE[provider]}) and the pods that wait for those nodes "
            "stay Pending",
            fix,
        )


def _too_few_for_always(
    counted: Mapping[tuple[str, str, str], list[PoolQuota]],
    limits: Mapping[tuple[str, str, str], int],
    cases: Sequence[CapacityCase],
    out: Findings,
) -> set[tuple[str, str, str]]:
    """GI046 for each case of one pool of alike nodes whose quota allows fewer nodes than its max
    and too few for the pods that run all the time; the quotas so reported."""
    reported: set[tuple[str, str, str]] = set()
    for key, members in counted.items():
        if len(members) != 1:
            continue  # several pools share the quota: which gets how many is not known
        m = members[0]
        allowed = limits[key] // m.per_node
        case = next((c for c in cases if [p.name for p in c.pools] == [m.pool.name]), None)
        if case is None or len(case.classes) != 1 or not case.fits:
            continue
        cls = case.classes[0]
        if allowed >= cls.most:
            continue
        always = [n or 0 for n in case.counts("always")]
        capped = CapacityCase(case.pools, [replace(cls, most=allowed)], case.kinds, case.groups)
        pairs = capped.pieces(always)
        pieces = [p for _, p in pairs]
        bins = capped.bins("most")
        try:
            if place_all(bins, pieces) is not None:
                continue
        except OutOfBudget:
            continue
        best = fullest(bins, pieces)
        left: dict[str, int] = {}
        for (k, _), b in zip(pairs, best.where, strict=True):
            if b < 0:
                left[case.kinds[k].resource] = left.get(case.kinds[k].resource, 0) + 1
        provider, region, name = key
        needed = next(
            (
                n
                for n in range(allowed + 1, cls.most + 1)
                if _fits(replace(cls, most=n), case, pieces)
            ),
            cls.most,
        )
        out.add(
            "GI046",
            m.pool.resource,
            f"quota {name} in {region} allows {limits[key]} {UNIT[provider]}: {allowed} node(s) "
            f"of pool {m.pool.name} ({m.per_node} each), too few for the pods that run all the "
            f"time (they need {needed}): {best.placed} of {len(pieces)} pods run, leaving "
            "Pending: " + "; ".join(f"{r} x{n}" for r, n in left.items()),
            f"raise the quota to {needed * m.per_node} ({HOW[provider].format(region=region)})",
        )
        reported.add(key)
    return reported


def _fits(cls: Any, case: CapacityCase, pieces: Sequence[Any]) -> bool:
    grown = CapacityCase(case.pools, [cls], case.kinds, case.groups)
    try:
        return place_all(grown.bins("most"), pieces) is not None
    except OutOfBudget:
        return False
