"""kube-scheduler's default profile placing pods one at a time: which node each pod gets, and
whether an order the controllers may create the pods in leaves one without a node although a
packing of them all exists (fragmentation).

What it models (kubernetes v1.36.3, the rig's scheduler):
- Filters: the pod's node groups (labels, taints, as the placement check decides them) and
  NodeResourcesFit on every resource (`pkg/scheduler/framework/plugins/noderesources/fit.go`).
- Scores, with the default weights of `pkg/scheduler/apis/config/v1/default_plugins.go`
  `getDefaultPlugins` (TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1,
  NodeResourcesBalancedAllocation 1):
  - NodeResourcesFit, strategy LeastAllocated over cpu and memory with weight 1 each
    (`apis/config/v1/defaults.go` `SetDefaults_NodeResourcesFitArgs`, `defaultResourceSpec`;
    `noderesources/least_allocated.go`): per resource `(allocatable - requested) * 100 /
    allocatable` (0 past it), averaged; "requested" counts a container without a cpu / memory
    request as 100m / 200Mi (`resource_allocation.go` `calculatePodResourceRequest`,
    `scheduler/util/pod_resources.go` `DefaultMilliCPURequest`, `DefaultMemoryRequest`).
  - NodeResourcesBalancedAllocation over cpu and memory (`balanced_allocation.go`): with the
    real requests, `(1 - |f_cpu - f_mem| / 2) * 100` with the pod and without it, scored
    `50 + (50 + with - without) / 2`; skipped for a pod that asks no cpu and no memory.
  - TaintToleration: PreferNoSchedule taints the pod does not tolerate, reversed over the
    feasible nodes (`tainttoleration/taint_toleration.go`, `helper.DefaultNormalizeScore`).
  - NodeAffinity: the summed weights of the preferred terms a node matches, normalised over the
    feasible nodes (`nodeaffinity/node_affinity.go`; skipped without preferred terms).
  - PodTopologySpread and InterPodAffinity score nothing for the pods it is given (no inter-pod
    affinity; no Service or ReplicaSet selects them: the judge's bare pods), ImageLocality
    nothing (no node has the image yet when the pods are first created).
- The highest total wins. Equal totals are broken by node order and a parallel filter
  (`schedule_one.go` `findNodesThatPassFilters`, `nodeScoreHeap`), so between nodes that are not
  alike (same group, same requests on them) either may be chosen: every such choice is followed.
  OpportunisticBatching (beta, on) reuses the previous pod's sorted nodes only when the node
  just chosen can no longer take the next pod (`framework/runtime/batch.go`): the next best node,
  as scoring again would pick (a node's score depends on that node alone).
- A pod no node takes stays Pending and takes nothing (no preemption: equal priorities).

Vectors are `(cpu millicores, memory bytes, ephemeral-storage bytes, pods, GPUs)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .packing import R, Vector, fits

MAX_SCORE = 100
WEIGHT_TAINT, WEIGHT_AFFINITY, WEIGHT_FIT, WEIGHT_BALANCED = 3, 2, 1, 1
CPU, MEMORY = 0, 1


class TooManyStates(Exception):
    """The search over orders and ties ran past its bound: no answer."""


@dataclass(frozen=True)
class SimNode:
    """One node: its group (nodes of a group are alike), what it has, what its DaemonSets take
    (real requests, and cpu / memory as scoring counts them)."""

    group: int
    allocatable: Vector
    used: Vector
    used_nonzero: tuple[int, int]


@dataclass(frozen=True)
class SimKind:
    """The pods of one template."""

    ask: Vector  # real requests
    nonzero: tuple[int, int]  # cpu, memory as LeastAllocated counts them
    groups: frozenset[int]  # node groups its labels and taints let it onto
    taints: Mapping[int, int] = field(default_factory=dict)  # group -> untolerated PreferNoSchedule
    affinity: Mapping[int, int] | None = None  # group -> preferred weights matched; None: none


@dataclass
class _State:
    used: list[list[int]]
    nonzero: list[list[int]]

    def copy(self) -> _State:
        return _State([list(u) for u in self.used], [list(z) for z in self.nonzero])


def _least_allocated(alloc: Vector, requested: Sequence[int]) -> int:
    total = weights = 0
    for r in (CPU, MEMORY):
        cap = alloc[r]
        if cap == 0:
            continue
        total += 0 if requested[r] > cap else (cap - requested[r]) * MAX_SCORE // cap
        weights += 1
    return total // weights if weights else 0


def _balance(requested: Sequence[int], alloc: Vector) -> int:
    fractions = [min(requested[r] / alloc[r], 1.0) for r in (CPU, MEMORY) if alloc[r] != 0]
    std = abs((fractions[0] - fractions[1]) / 2) if len(fractions) == 2 else 0.0
    return int((1 - std) * MAX_SCORE)


def _balanced_allocation(alloc: Vector, used: Sequence[int], ask: Vector) -> int:
    with_pod = _balance([used[r] + ask[r] for r in (CPU, MEMORY)], alloc)
    without = _balance([used[r] for r in (CPU, MEMORY)], alloc)
    return MAX_SCORE // 2 + (MAX_SCORE // 2 + with_pod - without) // 2


class Scheduler:
    """The default scheduler over `nodes`, for pods of `kinds`."""

    def __init__(self, nodes: Sequence[SimNode], kinds: Sequence[SimKind]) -> None:
        self.nodes, self.kinds = list(nodes), list(kinds)

    def start(self) -> _State:
        return _State(
            [list(n.used) for n in self.nodes], [list(n.used_nonzero) for n in self.nodes]
        )

    def feasible(self, state: _State, kind: int) -> list[int]:
        k = self.kinds[kind]
        out = []
        for i, n in enumerate(self.nodes):
            if n.group not in k.groups:
                continue
            room = [n.allocatable[r] - state.used[i][r] for r in range(R)]
            if fits(k.ask, room):
                out.append(i)
        return out

    def scores(self, state: _State, kind: int, feasible: Sequence[int]) -> dict[int, int]:
        k = self.kinds[kind]
        taints = {i: k.taints.get(self.nodes[i].group, 0) for i in feasible}
        most_taints = max(taints.values(), default=0)
        prefer = None
        if k.affinity is not None:
            prefer = {i: k.affinity.get(self.nodes[i].group, 0) for i in feasible}
        most_prefer = max(prefer.values(), default=0) if prefer else 0
        best_effort = k.ask[CPU] == 0 and k.ask[MEMORY] == 0
        out = {}
        for i in feasible:
            n = self.nodes[i]
            requested = [state.nonzero[i][r] + k.nonzero[r] for r in (CPU, MEMORY)]
            total = WEIGHT_FIT * _least_allocated(n.allocatable, requested)
            if not best_effort:
                total += WEIGHT_BALANCED * _balanced_allocation(n.allocatable, state.used[i], k.ask)
            t = MAX_SCORE if most_taints == 0 else MAX_SCORE - MAX_SCORE * taints[i] // most_taints
            total += WEIGHT_TAINT * t
            if prefer is not None and most_prefer > 0:
                total += WEIGHT_AFFINITY * (MAX_SCORE * prefer[i] // most_prefer)
            out[i] = total
        return out

    def choices(self, state: _State, kind: int) -> list[list[int]]:
        """The nodes the scheduler may bind the next pod of `kind` to, as classes of alike nodes
        (any node of a class gives the same future); [] when none takes it."""
        feasible = self.feasible(state, kind)
        if len(feasible) <= 1:
            return [feasible] if feasible else []
        scores = self.scores(state, kind, feasible)
        top = max(scores.values())
        classes: dict[tuple, list[int]] = {}
        for i in feasible:
            if scores[i] == top:
                key = (self.nodes[i].group, tuple(state.used[i]), tuple(state.nonzero[i]))
                classes.setdefault(key, []).append(i)
        return list(classes.values())

    def bind(self, state: _State, kind: int, node: int) -> _State:
        k = self.kinds[kind]
        out = state.copy()
        for r in range(R):
            out.used[node][r] += k.ask[r]
        for r in (CPU, MEMORY):
            out.nonzero[node][r] += k.nonzero[r]
        return out

    def canonical(self, state: _State) -> tuple:
        return tuple(
            sorted(
                (n.group, tuple(state.used[i]), tuple(state.nonzero[i]))
                for i, n in enumerate(self.nodes)
            )
        )


@dataclass(frozen=True)
class Run:
    """One way the scheduler can place pods created in `order`: the node of each (-1: Pending),
    and whether it took a tie between nodes that are not alike."""

    order: tuple[int, ...]
    nodes: tuple[int, ...]
    tie: bool

    def bound(self, kinds: int) -> tuple[int, ...]:
        counts = [0] * kinds
        for kind, node in zip(self.order, self.nodes, strict=True):
            if node >= 0:
                counts[kind] += 1
        return tuple(counts)

    @property
    def stranded(self) -> bool:
        return -1 in self.nodes


def outcomes(sched: Scheduler, order: Sequence[int], limit: int = 4096) -> list[Run]:
    """Every way (up to ties between alike nodes) the scheduler places pods created in `order`,
    one at a time. Raises TooManyStates past `limit` runs."""
    runs: list[Run] = []

    def walk(state: _State, k: int, nodes: list[int], tie: bool) -> None:
        if len(runs) > limit:
            raise TooManyStates
        if k == len(order):
            runs.append(Run(tuple(order), tuple(nodes), tie))
            return
        classes = sched.choices(state, order[k])
        if not classes:
            walk(state, k + 1, [*nodes, -1], tie)
            return
        for members in classes:
            node = members[0]
            walk(sched.bind(state, order[k], node), k + 1, [*nodes, node], tie or len(classes) > 1)

    walk(sched.start(), 0, [], False)
    return runs


@dataclass(frozen=True)
class Strand:
    """An order the controllers may create the pods in and the scheduler's choices that leave
    the last pod of `order` without a node."""

    run: Run

    @property
    def order(self) -> tuple[int, ...]:
        return self.run.order


def find_strand(
    sched: Scheduler,
    counts: Sequence[int],
    after: Mapping[int, tuple[int, int]],
    limit: int = 5000,
) -> Strand | None:
    """An order of creation that strands a pod, or None when no order does: `counts[k]` pods of
    each kind, a kind `w` in `after` created only while `created[w] <= created[leader] x n`
    (`after[w] = (leader, n)`: a LeaderWorkerSet's workers after their leader). Orders that need
    no tie between unlike nodes are tried first. Raises TooManyStates past `limit` states."""
    for allow_ties in (False, True):
        found = _search(sched, counts, after, limit, allow_ties)
        if found is not None:
            return found
    return None


def _search(
    sched: Scheduler,
    counts: Sequence[int],
    after: Mapping[int, tuple[int, int]],
    limit: int,
    allow_ties: bool,
) -> Strand | None:
    # Kinds tried smallest first: small pods spread before large ones arrive.
    kinds = sorted(
        range(len(counts)),
        key=lambda k: (sched.kinds[k].ask[4], sched.kinds[k].ask[CPU], sched.kinds[k].ask[MEMORY]),
    )
    seen: set[tuple] = set()
    expanded = [0]

    def walk(
        state: _State,
        left: list[int],
        made: list[int],
        order: list[int],
        nodes: list[int],
        tie: bool,
    ) -> Strand | None:
        key = (tuple(left), sched.canonical(state))
        if key in seen:
            return None
        seen.add(key)
        expanded[0] += 1
        if expanded[0] > limit:
            raise TooManyStates
        for kind in kinds:
            if left[kind] == 0:
                continue
            if kind in after:
                leader, per = after[kind]
                if made[kind] + 1 > made[leader] * per:
                    continue
            classes = sched.choices(state, kind)
            if not classes:
                return Strand(Run((*order, kind), (*nodes, -1), tie))
            if len(classes) > 1 and not allow_ties:
                continue
            left[kind] -= 1
            made[kind] += 1
            for members in classes:
                found = walk(
                    sched.bind(state, kind, members[0]),
                    left,
                    made,
                    [*order, kind],
                    [*nodes, members[0]],
                    tie or len(classes) > 1,
                )
                if found is not None:
                    return found
            left[kind] += 1
            made[kind] -= 1
        return None

    return walk(sched.start(), list(counts), [0] * len(counts), [], [], False)
