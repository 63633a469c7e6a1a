"""The capacity findings, for each set of pools workloads share (`model.CapacityCase`):

- GI040 (error): the pods that run all the time have no packing on the pools' max nodes (exact,
  `packing.place_all`); it names what cannot run (`packing.fullest`: the most pods that run
  together, LeaderWorkerSet groups whole) and the fewest max nodes that would hold them.
- GI015 (warning): at max scale (every workload at its most replicas) the pods have no packing.
- GI041 (info): headroom per pool: nodes and GPUs the pods that run all the time leave free.
- GI042 (warning): the pods that run all the time do not fit the pools' min nodes: the rest wait
  for a node to start (the pool's start-up time) every time; every scale-up from min is cold.
- GI043 (warning): a packing exists, but kube-scheduler placing the pods one at a time in an
  order their controllers may create them in strands one (`scheduler.find_strand`); the order,
  each pod's node and the pod left Pending are named.
- GI044 (info): not judged: a search went past its bound, or a pool's node shape is not one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...model.nodes.catalog import node_startup_seconds
from ...model.nodes.shapes import RESOURCE_NAMES, format_resource
from ..contract import POOL_STARTUP_ANNOTATION
from ..read import Findings, as_int
from ..results import PoolFacts
from .model import (
    SEARCH_WORK,
    CapacityCase,
    Demand,
    bounded_view,
    build_case,
    counted,
    landing,
    node_copies,
    past_bound,
    pool_sets,
    sums_short,
    vector,
)
from .packing import (
    MAX_PIECES,
    STEPS,
    Bin,
    OutOfBudget,
    Packing,
    Piece,
    fullest,
    no_packing_reason,
    place_all,
)
from .quota import check_quotas
from .scheduler import TooManyStates, find_strand

if TYPE_CHECKING:
    from ..rules import CheckContext

STRAND_STATES = 3000
"""States the search for a stranding order visits before fragmentation is not judged."""
STRAND_WORK = 40_000
"""Pods x nodes above which no stranding order is searched for (GI044)."""
MORE_NODES = 64
"""How far past a pool's max the fewest nodes that hold its pods are looked for."""
_NAMES = tuple(RESOURCE_NAMES.values())


def _names(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


def capacity(ctx: CheckContext) -> None:
    """GI015, GI040-GI046 for the graph; the cases judged go into the report (for the judges)."""
    ctx.capacity = check_capacity(
        ctx.demands, ctx.pools, ctx.out, graph=ctx.entries, quotas=ctx.quotas
    )


def check_capacity(
    demands: Sequence[Demand],
    pools: Sequence[PoolFacts],
    out: Findings,
    graph: Sequence[Mapping[str, Any]] = (),
    quotas: Iterable[Mapping[str, Any]] = (),
) -> list[CapacityCase]:
    """The capacity findings of the graph (see the module docstring) and of its cloud quotas
    (`quota`: the graph's and the `quotas` given); the cases judged."""
    by_name = {p.name: p for p in pools}
    kept = [d for d in demands if counted(d)]
    daemonsets = [d for d in demands if d.template.daemonset and d.facts.requests is not None]
    cases = []
    sets = pool_sets(kept)
    set_of = {n: i for i, names in enumerate(sets) for n in names}
    by_set: dict[int, list[Demand]] = {}
    for d in kept:
        by_set.setdefault(set_of[landing(d.facts)[0]], []).append(d)
    for i, names in enumerate(sets):
        members = [by_name[n] for n in names]
        copies, why = {}, []
        for p in members:
            nodes, reason = node_copies(p)
            if nodes is None:
                why.append((p, reason))
            else:
                copies[p.name] = nodes
        if any(reason == "" for _, reason in why):
            continue  # it can grow without bound, or GI022 says its shape is unknown
        mine = by_set[i]
        if why:
            p, reason = why[0]
            out.add(
                "GI044",
                p.resource,
                f"capacity of pool(s) {_names(list(names))} not judged: pool {p.name}: {reason}",
                "give the pool one node shape, or check by hand that its pods fit",
            )
            continue
        case = bounded_view(build_case(members, copies, mine, daemonsets))
        cases.append(case)
        _judge(case, out)
    check_quotas(graph, pools, cases, out, quotas)
    return cases


# ---------------------------------------------------------------------------------------------
# Describing
# ---------------------------------------------------------------------------------------------


def _real(case: CapacityCase) -> CapacityCase:
    """The case a bounded view stands for (what the findings count and name)."""
    return case.real or case


def _pool_nodes(case: CapacityCase, at: str = "most") -> str:
    """`h100 2 x a3-highgpu-8g (8 GPUs each)`, per pool of the case."""
    case = _real(case)
    parts = []
    for pool in case.pools:
        mine = [c for c in case.classes if c.pool.name == pool.name]
        count = sum(getattr(c, at) for c in mine)
        shapes = sorted({c.node.shape.name for c in mine if c.node.shape is not None})
        gpus = sorted({c.allocatable.gpus for c in mine})
        each = f", {'/'.join(map(str, gpus))} GPU(s) each" if any(gpus) else ""
        parts.append(f"{pool.name}: {count} x {'/'.join(shapes)}{each}")
    return "; ".join(parts)


def _pods(
    case: CapacityCase, kinds: Sequence[int], laid: Sequence[int] = (), real: Sequence[int] = ()
) -> str:
    """`LLMInferenceService/x/decode x1 (4 GPUs)`, per kind, in kind order. `kinds`: a kind per
    pod left out of the pieces laid out (`laid` of each kind, of the `real` counts: the pods of a
    bounded view's kind past what it laid out are left out too)."""
    counts: dict[int, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    for k, (n, m) in enumerate(zip(laid, real, strict=True)):
        if m > n:
            counts[k] = counts.get(k, 0) + m - n
    parts = []
    for k in sorted(counts):
        kind = case.kinds[k]
        gpus = f", {kind.ask.gpus} GPU(s)" if kind.ask.gpus else ""
        parts.append(f"{kind.resource} x{counts[k]}{gpus}")
    return "; ".join(parts)


def _short(case: CapacityCase, counts: Sequence[int], at: str = "most") -> str:
    """What the pods (`counts` of each kind of the real case) ask beyond what the nodes hold, for
    the first resource whose sum says it (from counts: never one pod at a time)."""
    case = _real(case)
    r = sums_short(case, counts, at)
    if r is None:
        return ""
    name = _NAMES[r]
    asked = sum(n * vector(k.ask)[r] for k, n in zip(case.kinds, counts, strict=True))
    held = sum(getattr(c, at) * vector(c.allocatable - c.overhead)[r] for c in case.classes)
    taken = any(vector(c.overhead)[r] for c in case.classes)
    after = " after their DaemonSets" if taken else ""
    return (
        f"they ask {format_resource(name, asked)} {name}, the nodes hold "
        f"{format_resource(name, held)}{after}"
    )


def _real_counts(case: CapacityCase, at: str = "always") -> list[int]:
    real = _real(case)
    if at == "always":
        return [n or 0 for n in real.counts("always")]
    return [k.always if k.most is None else k.most for k in real.kinds]


def _by_sums(case: CapacityCase, out: Findings) -> None:
    """A case past the bound even as counts (both its pods and its nodes many): the resource
    sums say whether the pods that run all the time can fit; which do is not worked out."""
    real = _real(case)
    always = _real_counts(case)
    names = _names([p.name for p in case.pools])
    nodes = sum(c.most for c in real.classes)
    why = _short(case, always)
    if why:
        case.fits = False
        out.add(
            "GI040",
            case.pools[0].resource,
            f"the pods that run all the time cannot run at once on pool(s) {names} at their max "
            f"({_pool_nodes(case)}): {why} ({sum(always)} pods: which of them run together is "
            "not worked out)",
            "lower their replicas, or give them more nodes",
        )
        return
    out.add(
        "GI044",
        case.pools[0].resource,
        f"capacity of pool(s) {names} not judged: {sum(always)} pods on {nodes} nodes are past "
        f"the search's bound ({SEARCH_WORK} pods x nodes), and their resource sums fit",
        "check by hand that the pods that run all the time fit the pools' max nodes",
    )


def _fewest(case: CapacityCase, counts: Sequence[int], start: int, stop: int) -> int | None:
    """For a case of one pool of alike nodes: the fewest nodes in start..stop that hold the
    pods (exact), None when none does or the search ran out."""
    if len(case.classes) != 1:
        return None
    pieces = [p for _, p in case.pieces(counts)]
    room = vector(case.classes[0].allocatable - case.classes[0].overhead)
    lower = max(
        [start]
        + [math.ceil(sum(p.ask[r] for p in pieces) / room[r]) for r in range(5) if room[r] > 0]
    )
    for n in range(lower, stop + 1):
        bins = [Bin(case.groups[0], room)] * n
        try:
            if place_all(bins, pieces) is not None:
                return n
        except OutOfBudget:
            return None
    return None


def _grow(case: CapacityCase, counts: Sequence[int], at: str = "most") -> str | None:
    """`maxNodes of h100 to 3`: the least growth of one pool (of one node shape, not existing
    nodes) that holds the pods (exact), trying each pool up to `MORE_NODES` nodes more."""
    pieces = [p for _, p in case.pieces(counts)]
    bins = case.bins(at)
    best: tuple[int, str] | None = None
    for c, cls in enumerate(case.classes):
        if cls.pool.provider == "existing" or sum(x.pool is cls.pool for x in case.classes) != 1:
            continue
        room = vector(cls.allocatable - cls.overhead)
        # No fewer nodes than the resource sums say: the pods confined to the node groups the
        # pods that may use this pool may use must fit those groups' nodes.
        reach = frozenset().union(*(p.groups for p in pieces if case.groups[c] in p.groups))
        confined = [p.ask for p in pieces if p.groups <= reach]
        held = [b.room for b in bins if b.group in reach]
        first = 1
        for r in range(5):
            short = sum(a[r] for a in confined) - sum(h[r] for h in held)
            if short > 0 and room[r] > 0:
                first = max(first, math.ceil(short / room[r]))
        for extra in range(first, MORE_NODES + 1):
            if best is not None and extra >= best[0]:
                break
            classes = list(case.classes)
            classes[c] = replace(cls, **{at: getattr(cls, at) + extra})
            grown = CapacityCase(case.pools, classes, case.kinds, case.groups)
            try:
                if place_all(grown.bins(at), pieces) is not None:
                    key = "maxNodes" if at == "most" else "minNodes"
                    best = (extra, f"{key} of {cls.pool.name} to {getattr(cls, at) + extra}")
                    break
            except OutOfBudget:
                break
    return None if best is None else best[1]


# ---------------------------------------------------------------------------------------------
# Judging
# ---------------------------------------------------------------------------------------------


def _judge(case: CapacityCase, out: Findings) -> None:
    where = case.pools[0].resource
    names = _names([p.name for p in case.pools])
    always = [n or 0 for n in case.counts("always")]
    if sum(always) == 0:
        case.fits = True
        _max_scale(case, always, out)
        return
    if past_bound(case):
        _by_sums(case, out)
        return
    bins = case.bins("most")
    pairs = case.pieces(always)
    pieces = [p for _, p in pairs]
    try:
        packing = place_all(bins, pieces)
    except OutOfBudget:
        out.add(
            "GI044",
            where,
            f"capacity of pool(s) {names} not judged: {len(pieces)} pods on {len(bins)} nodes "
            f"are past the exact search's bound ({MAX_PIECES} pods, {STEPS} steps)",
            "check by hand that the pods that run all the time fit the pools' max nodes",
        )
        return
    case.fits = packing is not None
    if packing is None:
        _no_packing(case, bins, pairs, always, out)
        return
    case.packing = packing
    _headroom(case, packing, always, out)
    _warm(case, always, out)
    _max_scale(case, always, out)
    _fragmentation(case, always, out)


def _no_packing(
    case: CapacityCase,
    bins: Sequence[Bin],
    pairs: Sequence[tuple[int, Piece]],
    always: Sequence[int],
    out: Findings,
) -> None:
    pieces = [p for _, p in pairs]
    best = fullest(bins, pieces)
    left = [k for (k, _), b in zip(pairs, best.where, strict=True) if b < 0]
    why = _short(case, _real_counts(case)) or (
        "no packing exists (" + (no_packing_reason(bins, pieces) or "exact search") + ")"
    )
    why = why.replace("kind ", "")
    most = "at most" if best.proven else "the fullest packing found runs"
    names = _names([p.name for p in case.pools])
    # Past what the max nodes hold (a bounded view's kind): a few nodes more would not do.
    grow = _grow(case, always) if list(always) == _real_counts(case) else None
    fix = "lower their replicas, or give them more nodes"
    if grow is not None:
        fix = f"raise {grow} (the fewest nodes that hold them), or lower their replicas"
    out.add(
        "GI040",
        case.pools[0].resource,
        f"the pods that run all the time cannot run at once on pool(s) {names} at their max "
        f"({_pool_nodes(case)}): {why}; {most} {best.placed} of {sum(_real_counts(case))} pods "
        f"together (LeaderWorkerSet groups whole), leaving Pending: "
        f"{_pods(case, left, always, _real_counts(case))}",
        fix,
    )


def _headroom(case: CapacityCase, packing: Packing, always: Sequence[int], out: Findings) -> None:
    nodes = case.nodes("most")
    kinds = [k for k, _ in case.pieces(always)]
    fewest = None
    if len(case.pools) == 1:
        fewest = _fewest(case, always, 0, len(nodes))
    for pool in case.pools:
        mine = [i for i, c in enumerate(nodes) if case.classes[c].pool.name == pool.name]
        if not mine:
            continue
        used = {b for b in packing.where if b in mine}
        gpus = sum(case.classes[nodes[i]].allocatable.gpus for i in mine)
        taken = sum(
            case.kinds[k].ask.gpus for k, b in zip(kinds, packing.where, strict=True) if b in mine
        )
        need = len(used) if fewest is None else fewest
        how = "the fewest that hold them" if fewest is not None else "in the packing found"
        # A bounded view lays out only the nodes its pods may use: the rest are headroom too.
        real = [c for c in _real(case).classes if c.pool.name == pool.name]
        count = sum(c.most for c in real)
        gpus += sum(c.most * c.allocatable.gpus for c in real) - gpus_laid(case, pool.name)
        gpu_text = f", {gpus - taken} of {gpus} GPU(s) free" if gpus else ""
        out.add(
            "GI041",
            pool.resource,
            f"pool {pool.name} at its max ({count} node(s)): the pods that run all the time "
            f"take {need} node(s) ({how}): headroom {count - need} node(s){gpu_text}",
            "none needed (for information)",
        )


def gpus_laid(case: CapacityCase, pool: str) -> int:
    """The GPUs of the pool's nodes the case lays out (at their max)."""
    return sum(c.most * c.allocatable.gpus for c in case.classes if c.pool.name == pool)


def _startup(case: CapacityCase) -> int:
    stated = [
        n
        for k in case.kinds
        if (n := as_int(k.demand.template.annotations.get(POOL_STARTUP_ANNOTATION)))
    ]
    if stated:
        return max(stated)
    return max(node_startup_seconds(p.provider, p.accelerator) for p in case.pools)


def _warm(case: CapacityCase, always: Sequence[int], out: Findings) -> None:
    least = case.nodes("least")
    if not least:
        return  # every pool can be at 0 nodes: GI008 says what keeps them up
    pieces = [p for _, p in case.pieces(always)]
    try:
        if place_all(case.bins("least"), pieces) is not None:
            return
    except OutOfBudget:
        return
    names = _names([p.name for p in case.pools])
    n = _fewest(case, always, len(least) + 1, len(case.nodes("most")))
    need = f" need {n} node(s)" if n is not None else " need more nodes"
    grow = _grow(case, always, "least")
    fix = f"raise {grow}" if grow is not None else "raise the pools' minNodes"
    kept = sum(c.least for c in _real(case).classes)
    out.add(
        "GI042",
        case.pools[0].resource,
        f"pool(s) {names} keep {kept} node(s) at their min ({_pool_nodes(case, 'least')}) "
        f"but the pods that run all the time{need}: the rest wait for a node to start (about "
        f"{_startup(case)}s) every time they are created, and every scale-up from min is a cold "
        "start",
        fix,
    )


def _max_scale(case: CapacityCase, always: Sequence[int], out: Findings) -> None:
    most = [always[k] if m is None else m for k, m in enumerate(case.counts("most"))]
    if list(most) == list(always):
        return
    if past_bound(case):
        why = _short(case, _real_counts(case, "most"))
        if why:
            out.add(
                "GI015",
                case.pools[0].resource,
                f"at max scale the workloads on pool(s) {_names([p.name for p in case.pools])} "
                f"do not fit their max ({_pool_nodes(case)}): {why}",
                "lower maxReplicas or raise the pools' maxNodes",
            )
        return  # a warning only: not judged is said by nothing louder
    bins = case.bins("most")
    pairs = case.pieces(most)
    pieces = [p for _, p in pairs]
    try:
        if place_all(bins, pieces) is not None:
            return
    except OutOfBudget:
        return  # a warning only: not judged is said by nothing louder
    best = fullest(bins, pieces)
    left = [k for (k, _), b in zip(pairs, best.where, strict=True) if b < 0]
    names = _names([p.name for p in case.pools])
    real_most, real_always = _real_counts(case, "most"), _real_counts(case)
    where = (_grow(case, most) if most == real_most else None) or f"maxNodes of {names}"
    grown = "; ".join(
        f"{case.kinds[k].resource}: {real_most[k]}"
        for k in range(len(most))
        if real_most[k] != real_always[k]
    )
    out.add(
        "GI015",
        case.pools[0].resource,
        f"at max scale ({grown} pods) the workloads on pool(s) {names} do not fit their max "
        f"({_pool_nodes(case)}): {_short(case, real_most) or 'no packing exists'}; "
        f"{'at most' if best.proven else 'the fullest packing found runs'} {best.placed} of "
        f"{sum(real_most)} pods together, leaving Pending: "
        f"{_pods(case, left, most, real_most)}",
        f"raise {where} or lower maxReplicas",
    )


def _fragmentation(case: CapacityCase, always: Sequence[int], out: Findings) -> None:
    names = _names([p.name for p in case.pools])
    count = sum(c.most for c in _real(case).classes)
    if sum(always) * count > STRAND_WORK:
        out.add(
            "GI044",
            case.pools[0].resource,
            f"fragmentation on pool(s) {names} not judged: {sum(always)} pods on {count} "
            f"nodes are past the search's bound ({STRAND_WORK} pods x nodes)",
            "check by hand that the default scheduler's spreading strands no large pod",
        )
        return
    nodes = case.nodes("most")
    sched = case.scheduler("most")
    try:
        strand = find_strand(sched, always, case.after(), STRAND_STATES)
    except TooManyStates:
        out.add(
            "GI044",
            case.pools[0].resource,
            f"fragmentation on pool(s) {names} not judged: the orders the pods may be created in "
            f"are past the search's bound ({STRAND_STATES} states)",
            "check by hand that the default scheduler's spreading strands no large pod",
        )
        return
    case.strand = strand
    if strand is None:
        return
    steps = []
    for kind, node in zip(strand.run.order, strand.run.nodes, strict=True):
        where = "Pending" if node < 0 else _node_name(case, nodes, node)
        steps.append(f"{case.kinds[kind].resource} -> {where}")
    stranded = case.kinds[strand.run.order[-1]]
    tie = (
        " (when the scheduler breaks a tie between unlike nodes that way)" if strand.run.tie else ""
    )
    single = case.pools[0] if len(case.pools) == 1 else None
    fix = "a node more than the packing needs absorbs the spreading"
    if single is not None and single.provider != "existing":
        n = _spare(case, always)
        if n is not None:
            fix = f"raise maxNodes of {single.name} to {n} (then no order strands a pod)"
    out.add(
        "GI043",
        case.pools[0].resource,
        f"the pods that run all the time fit pool(s) {names} ({_pool_nodes(case)}), but "
        f"kube-scheduler places them one at a time and spreads them (LeastAllocated), so "
        f"{stranded.resource} ({stranded.ask.gpus} GPU(s)) can be left Pending when they are "
        f"created in this order{tie}: {'; '.join(steps)}",
        fix,
    )


def _node_name(case: CapacityCase, nodes: Sequence[int], i: int) -> str:
    """`h100 node 2` (the pool's nodes numbered from 1)."""
    cls = case.classes[nodes[i]]
    same = [j for j, c in enumerate(nodes) if case.classes[c].pool.name == cls.pool.name]
    name = cls.node.name
    return f"{cls.pool.name} node {same.index(i) + 1}" + (f" ({name})" if name else "")


def _spare(case: CapacityCase, always: Sequence[int]) -> int | None:
    """For one pool of alike nodes: the fewest max nodes (up to 3 more) with which no order
    strands a pod."""
    if len(case.classes) != 1:
        return None
    cls = case.classes[0]
    for extra in (1, 2, 3):
        grown = CapacityCase(
            case.pools, [replace(cls, most=cls.most + extra)], case.kinds, case.groups
        )
        try:
            if find_strand(grown.scheduler("most"), always, case.after(), STRAND_STATES) is None:
                return cls.most + extra
        except TooManyStates:
            return None
    return None
