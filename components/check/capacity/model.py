"""What the capacity proof works on, read from what the placement check found: for each set of
pools that workloads share, the pools' nodes (at their max and min counts), what the DaemonSets
take on each node, and the pods that run all the time (and at max scale).

Which pods count: every replica a workload keeps (a Deployment's or StatefulSet's `replicas`, an
InferenceService component's `minReplicas` (at least 1 where it cannot scale to zero), a Seldon
Server's `replicas`, a LeaderWorkerSet's `replicas` groups of `size` pods, an
LLMInferenceService's decode, prefill and scheduler replicas), from templates whose requests are
known, that land on some pool of the graph and only there: they ask for GPUs, are wired to a
pool, or select a pool's labels (a pod that selects nothing may also land on nodes the graph does
not declare). Pods that take devices through DRA claims are left out (their devices are not
counted here). DaemonSet pods are not replicas: each node's (the provider's own and the graph's,
as the check reads them: `NodeTemplate.daemons`, `model.nodes.daemonsets`) take their requests
there before anything else (`overhead`).

A pool is judged when its nodes are known: a cloud pool of one node shape with a max count
(`max_nodes` copies), or existing nodes (each its own). A set of pools with one that has no max
(Karpenter without `limits.nodes`, ComputeClass, Autopilot) can always grow: nothing is short
there. A pool whose shape is unknown is GI022's; one with several shapes and a max (a Karpenter
NodePool with `limits.nodes`) is not judged (GI044).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...model.errors import InputError
from ...model.nodes.daemonsets import DaemonPod
from ...model.nodes.shapes import Resources
from ...model.scheduling import Placement
from ...model.serving.requests import container_requests
from ..fit import pod_containers
from ..read import Gang, Template, as_map
from ..results import NodeTemplate, PoolFacts, WorkloadFacts
from .packing import Bin, Packing, Piece, Vector
from .scheduler import Scheduler, SimKind, SimNode, Strand

DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024
"""What scoring counts for a container without a cpu / memory request (kubernetes v1.36.3
`pkg/scheduler/util/pod_resources.go` DefaultMilliCPURequest, DefaultMemoryRequest)."""


def vector(r: Resources) -> Vector:
    return (r.cpu, r.memory, r.ephemeral_storage, r.pods, r.gpus)


@dataclass(frozen=True)
class Demand:
    """A pod template as the check judged it."""

    template: Template
    facts: WorkloadFacts
    placement: Placement  # with the tolerations admission adds
    confined: bool  # it lands only on the graph's pools
    dra: bool = False  # it takes devices through DRA claims


@dataclass(frozen=True)
class NodeClass:
    """Alike nodes of one pool: `most` of them at the pool's max, `least` at its min."""

    pool: PoolFacts
    node: NodeTemplate
    allocatable: Resources
    overhead: Resources  # the DaemonSets' requests on each node (pods counted)
    overhead_nonzero: tuple[int, int]
    daemonsets: tuple[str, ...]  # who takes the overhead
    most: int
    least: int


@dataclass(frozen=True)
class Kind:
    """The pods of one template."""

    demand: Demand
    ask: Resources
    classes: frozenset[int]  # node classes it may land on (labels, taints, GPUs, fit)
    placed: frozenset[int]  # node classes its labels and taints let it onto
    always: int
    most: int | None  # at max scale; None: unbounded

    @property
    def resource(self) -> str:
        return self.demand.facts.resource

    @functools.cached_property
    def nonzero(self) -> tuple[int, int]:
        """Its cpu and memory as LeastAllocated counts them (read when the scheduler is
        replayed: only for a case with a packing)."""
        try:
            return nonzero_requests(self.demand.template)
        except (InputError, TypeError, ValueError):
            return (self.ask.cpu, self.ask.memory)

    def taints(self, case: CapacityCase) -> dict[int, int]:
        """Node class -> the PreferNoSchedule taints it does not tolerate there."""
        return {
            c: _prefer_no_schedule(self.demand.placement, case.classes[c].node)
            if any(t.effect == "PreferNoSchedule" for t in case.classes[c].node.taints)
            else 0
            for c in self.placed
        }

    def affinity(self, case: CapacityCase) -> dict[int, int] | None:
        """Node class -> the weights of its preferred terms the class matches (None: it has
        none)."""
        aff = self.demand.placement.node_affinity
        if aff is None or not aff.preferred:
            return None
        weights = {
            c: _preferred_weight(self.demand.placement, case.classes[c].node) for c in self.placed
        }
        if all(v is None for v in weights.values()):
            return None
        return {c: v or 0 for c, v in weights.items()}

    @property
    def gang(self) -> Gang | None:
        return self.demand.template.gang


@dataclass
class CapacityCase:
    """One set of pools workloads share, the nodes and the pods."""

    pools: tuple[PoolFacts, ...]
    classes: list[NodeClass]
    kinds: list[Kind]
    groups: list[int] = field(default_factory=list)  # class -> group of alike classes
    # What the proof found (`judge`): whether the pods that run all the time pack onto the max
    # nodes (None: not judged), the packing, and an order that strands a pod (fragmentation).
    fits: bool | None = None
    packing: Packing | None = None
    strand: Strand | None = None
    real: CapacityCase | None = None  # of a `bounded_view`: the case it bounds

    def nodes(self, at: str = "most") -> list[int]:
        """Node classes, one entry per node (`at`: "most" the pools' max, "least" their min)."""
        return [c for c, cls in enumerate(self.classes) for _ in range(getattr(cls, at))]

    def bins(self, at: str = "most") -> list[Bin]:
        return [
            Bin(self.groups[c], vector(self.classes[c].allocatable - self.classes[c].overhead))
            for c in self.nodes(at)
        ]

    def counts(self, at: str = "always") -> list[int | None]:
        return [getattr(k, at) for k in self.kinds]

    def pieces(self, counts: Sequence[int]) -> list[tuple[int, Piece]]:
        """(kind, piece) for `counts[k]` pods of each kind; pods of a LeaderWorkerSet group share
        a unit."""
        out = []
        unit = 0
        gang_units: dict[tuple[str, int], int] = {}
        for k, kind in enumerate(self.kinds):
            groups = frozenset(self.groups[c] for c in kind.classes)
            for j in range(counts[k]):
                gang = kind.gang
                if gang is not None:
                    key = (gang.key, j // max(gang.per_group, 1))
                    if key not in gang_units:
                        gang_units[key] = unit
                        unit += 1
                    u = gang_units[key]
                else:
                    u, unit = unit, unit + 1
                out.append((k, Piece(k, vector(kind.ask), groups, u)))
        return out

    def scheduler(self, at: str = "most") -> Scheduler:
        nodes = [
            SimNode(
                self.groups[c],
                vector(self.classes[c].allocatable),
                vector(self.classes[c].overhead),
                self.classes[c].overhead_nonzero,
            )
            for c in self.nodes(at)
        ]
        kinds = []
        for k in self.kinds:
            affinity = k.affinity(self)
            kinds.append(
                SimKind(
                    vector(k.ask),
                    k.nonzero,
                    frozenset(self.groups[c] for c in k.classes),
                    {self.groups[c]: n for c, n in k.taints(self).items()},
                    None if affinity is None else {self.groups[c]: n for c, n in affinity.items()},
                )
            )
        return Scheduler(nodes, kinds)

    def controller_order(self, counts: Sequence[int | None] | None = None) -> list[int]:
        """The pods in the order the check assumes for a plain run: workloads in graph order,
        each one's pods together (a LeaderWorkerSet's leaders, then its workers)."""
        given = self.counts() if counts is None else counts
        return [k for k, n in enumerate(given) for _ in range(n or 0)]

    def after(self) -> dict[int, tuple[int, int]]:
        """worker kind -> (leader kind, workers per leader): a LeaderWorkerSet's workers are
        made once their group's leader pod exists (kubernetes-sigs/lws v0.8.0
        `pod_controller.go` Reconcile creates the worker StatefulSet for a leader pod)."""
        leaders = {k.gang.key: i for i, k in enumerate(self.kinds) if k.gang and k.gang.leader}
        out = {}
        for i, k in enumerate(self.kinds):
            if k.gang and not k.gang.leader and k.gang.key in leaders:
                out[i] = (leaders[k.gang.key], k.gang.per_group)
        return out


# ---------------------------------------------------------------------------------------------
# Requests as scoring counts them
# ---------------------------------------------------------------------------------------------


def _nonzero(container: Mapping[str, Any]) -> tuple[int, int]:
    asked = container_requests(container)
    res = as_map(container.get("resources"))
    given = {**as_map(res.get("limits")), **as_map(res.get("requests"))}
    cpu = asked.cpu if "cpu" in given else DEFAULT_MILLI_CPU
    memory = asked.memory if "memory" in given else DEFAULT_MEMORY
    return cpu, memory


def nonzero_requests(t: Template) -> tuple[int, int]:
    """The pod's cpu and memory as LeastAllocated counts them: a container (or init container)
    without a request (nor a limit, which the API server copies into it) counts 100m / 200Mi
    (component-helpers v0.36.3 `resource/helpers.go` AggregateContainerRequests with
    NonMissingContainerRequests), summed and maxed as the real requests are."""
    containers, inits, _ = pod_containers(t)
    cpu = memory = 0
    for c in containers:
        a, b = _nonzero(c)
        cpu, memory = cpu + a, memory + b
    init_cpu = init_memory = started_cpu = started_memory = 0
    for c in inits:
        a, b = _nonzero(c)
        if c.get("restartPolicy") == "Always":
            cpu, memory = cpu + a, memory + b
            started_cpu, started_memory = started_cpu + a, started_memory + b
            init_cpu, init_memory = max(init_cpu, started_cpu), max(init_memory, started_memory)
        else:
            init_cpu = max(init_cpu, a + started_cpu)
            init_memory = max(init_memory, b + started_memory)
    cpu, memory = max(cpu, init_cpu), max(memory, init_memory)
    overhead = t.fragment.get("overhead")
    if overhead:
        extra = container_requests({"resources": {"requests": as_map(overhead)}})
        cpu, memory = cpu + extra.cpu, memory + extra.memory
    return cpu, memory


# ---------------------------------------------------------------------------------------------
# Building the cases
# ---------------------------------------------------------------------------------------------


def counted(d: Demand) -> bool:
    """A replica the capacity proof counts (see the module docstring)."""
    w = d.facts
    return (
        not d.template.daemonset
        and not d.dra
        and d.confined
        and w.requests is not None
        and bool(landing(w))
        and d.template.always is not None
    )


def landing(w: WorkloadFacts) -> tuple[str, ...]:
    """The pools the workload's pods can land on and fit."""
    return tuple(p for p in w.pools if p not in w.unfit)


def pool_sets(demands: Iterable[Demand]) -> list[tuple[str, ...]]:
    """The sets of pools the counted workloads share (pools joined by a workload landing on
    both), sorted."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for d in demands:
        names = landing(d.facts)
        for n in names:
            find(n)
        for a, b in itertools.pairwise(names):
            parent[find(a)] = find(b)
    sets: dict[str, list[str]] = {}
    for n in parent:
        sets.setdefault(find(n), []).append(n)
    return sorted(tuple(sorted(s)) for s in sets.values())


def node_copies(pool: PoolFacts) -> tuple[list[tuple[NodeTemplate, int, int]] | None, str | None]:
    """(node, at max, at min) per node template of the pool, or None and why it is not judged
    ("" when silently: no max, or a shape GI022 reports)."""
    if pool.provider == "existing":
        nodes = [(n, 1, 1) for n in pool.nodes]
    elif pool.max_nodes is None:
        return None, ""
    elif len(pool.nodes) != 1:
        shapes = len({n.shape.name if n.shape else None for n in pool.nodes})
        return None, (
            f"its nodes are of {len(pool.nodes)} kinds ({shapes} shape(s), zones or capacity "
            "types: which are made is not known)"
        )
    else:
        nodes = [(pool.nodes[0], pool.max_nodes, min(pool.min_nodes or 0, pool.max_nodes))]
    if any(n.shape is None for n, _, _ in nodes):
        return None, ""
    if pool.gpu and any(n.gpus is None and pool.gpus_per_node is None for n, _, _ in nodes):
        return None, ""
    return nodes, None


def _node_gpus(pool: PoolFacts, node: NodeTemplate) -> int:
    return node.gpus if node.gpus is not None else (pool.gpus_per_node or 0)


def _prefer_no_schedule(placement: Placement, node: NodeTemplate) -> int:
    tols = [t for t in placement.tolerations or () if t.effect in ("", "PreferNoSchedule")]
    return sum(
        1
        for taint in node.taints
        if taint.effect == "PreferNoSchedule" and not any(t.tolerates(taint) for t in tols)
    )


def _preferred_weight(placement: Placement, node: NodeTemplate) -> int | None:
    aff = placement.node_affinity
    terms = [p for p in (aff.preferred if aff else ()) or () if not p.preference.is_empty]
    if not terms:
        return None
    return sum(p.weight for p in terms if p.preference.matches(node.labels, node.name))


def daemon_nonzero(d: DaemonPod, templates: Mapping[str, Template]) -> tuple[int, int]:
    """A DaemonSet pod's cpu and memory as LeastAllocated counts them: the graph's DaemonSet's own
    containers; a provider's or a chart's pod (one container with the requests it has) at 100m /
    200Mi where it asks none."""
    t = templates.get(d.name)
    if t is not None:
        try:
            return nonzero_requests(t)
        except (InputError, TypeError, ValueError):
            pass
    asked = d.requests
    return (asked.cpu or DEFAULT_MILLI_CPU, asked.memory or DEFAULT_MEMORY)


def build_case(
    pools: Sequence[PoolFacts],
    nodes: Mapping[str, list[tuple[NodeTemplate, int, int]]],
    demands: Sequence[Demand],
    daemonsets: Sequence[Demand],
) -> CapacityCase:
    """The case of a set of pools: a class per node template (its DaemonSet pods as the check
    read them, `NodeTemplate.daemons`: the provider's and the graph's), a kind per template of
    the pods that run all the time."""
    templates = {d.facts.resource: d.template for d in daemonsets}
    classes: list[NodeClass] = []
    for pool in pools:
        for node, most, least in nodes[pool.name]:
            assert node.shape is not None
            allocatable = replace(node.shape.allocatable, gpus=_node_gpus(pool, node))
            zero = (0, 0)
            for pod in node.daemons.pods:
                nz = daemon_nonzero(pod, templates)
                zero = (zero[0] + nz[0], zero[1] + nz[1])
            classes.append(
                NodeClass(
                    pool,
                    node,
                    allocatable,
                    replace(node.daemons.total, gpus=0),
                    zero,
                    tuple(pod.name for pod in node.daemons.pods),
                    most,
                    least,
                )
            )
    kinds = []
    rooms = [cls.allocatable - cls.overhead for cls in classes]
    admits: dict[tuple[Placement, int], bool] = {}  # many templates share a placement
    for d in demands:
        w, t = d.facts, d.template
        assert w.requests is not None and t.always is not None
        places = set(landing(w))
        placed_classes = []
        for c, cls in enumerate(classes):
            if cls.pool.name not in places:
                continue
            key = (d.placement, c)
            if key not in admits:
                admits[key] = d.placement.admits(cls.node.labels, cls.node.taints, cls.node.name)
            if admits[key]:
                placed_classes.append(c)
        placed = frozenset(placed_classes)
        fit = frozenset(
            c
            for c in placed
            if w.gpus <= classes[c].allocatable.gpus and w.requests.fits_in(rooms[c])
        )
        top = t.max_replicas
        kinds.append(
            Kind(d, w.requests, fit, placed, t.always, None if top is None else max(top, t.always))
        )
    case = CapacityCase(tuple(pools), classes, kinds)
    case.groups = _alike(case)
    return case


def _alike(case: CapacityCase) -> list[int]:
    """A group per set of classes no pod can tell apart (same room, same taint and affinity
    scores for every kind): nodes of one group are interchangeable."""
    keys: dict[tuple, int] = {}
    out: list[int] = []
    scores = [(k.taints(case), k.affinity(case) or {}) for k in case.kinds]
    for c, cls in enumerate(case.classes):
        key = (
            vector(cls.allocatable),
            vector(cls.overhead),
            cls.overhead_nonzero,
            tuple(
                (c in k.classes, c in k.placed, taints.get(c), affinity.get(c))
                for k, (taints, affinity) in zip(case.kinds, scores, strict=True)
            ),
        )
        out.append(keys.setdefault(key, len(keys)))
    return out


# ---------------------------------------------------------------------------------------------
# Bounded work: identical pods as counts
# ---------------------------------------------------------------------------------------------

VIEW_WORK = 10_000
"""Pods x nodes above which the capacity proof works on the case's `bounded_view`."""
SEARCH_WORK = 200_000
"""Pods x nodes of a bounded view above which the proof lays out no pod one by one: it judges by
the resource sums alone (what counts say without a packing), or not at all (GI044)."""


def per_node(ask: Vector, room: Vector) -> int:
    """How many pods asking `ask` one node with `room` holds at most, resource by resource (a pod
    asks one of the node's pods, so this is finite)."""
    return min((room[r] // a for r, a in enumerate(ask) if a > 0), default=0)


def _whole_groups(kind: Kind, n: int) -> int:
    """`n` rounded up to whole LeaderWorkerSet groups of the kind's template."""
    gang = kind.gang
    if gang is None or gang.per_group <= 1:
        return n
    return -(-n // gang.per_group) * gang.per_group


def bounded_view(case: CapacityCase) -> CapacityCase:
    """The case with no more pods of a kind than the pools' max nodes can hold (plus one, so that
    a kind past it still shows it does not fit) and no more nodes of a class than pods may land
    there. Each answer the proof gives on it is the answer on the case: pods past what all the
    nodes hold never run, and nodes past the pods that may use them stay empty. So its work
    grows with the distinct pods and node classes, not with replicas or max nodes (a Server at
    2147483647 replicas is a few pods here). `CapacityCase.real` is the case itself. A case
    whose pods x nodes are within `VIEW_WORK` is its own view."""
    if _work(case) <= VIEW_WORK:
        return case
    rooms = [vector(c.allocatable - c.overhead) for c in case.classes]
    kinds = []
    for k in case.kinds:
        ask = vector(k.ask)
        hold = sum(case.classes[c].most * per_node(ask, rooms[c]) for c in k.classes)
        cap = _whole_groups(k, hold + 1)
        kinds.append(
            replace(
                k,
                always=min(k.always, cap),
                most=None if k.most is None else min(k.most, cap),
            )
        )
    classes = []
    for c, cls in enumerate(case.classes):
        users = sum(max(k.always, k.most or 0) for k in kinds if c in k.classes or c in k.placed)
        classes.append(replace(cls, most=min(cls.most, users), least=min(cls.least, users)))
    view = CapacityCase(case.pools, classes, kinds, case.groups)
    view.real = case
    return view


def _work(case: CapacityCase) -> int:
    pods = sum(max(k.always, k.most or 0) for k in case.kinds)
    return pods * sum(max(c.most, c.least) for c in case.classes)


def past_bound(case: CapacityCase) -> bool:
    """Whether even the bounded view is too large to lay out pod by pod."""
    return _work(case) > SEARCH_WORK


def sums_short(case: CapacityCase, counts: Sequence[int], at: str = "most") -> int | None:
    """The first resource (index) the pods (`counts` of each kind) ask more of in all than the
    nodes (`at` their max or min) hold, or None: from counts, never one pod at a time."""
    held = [0] * 5
    for cls in case.classes:
        room = vector(cls.allocatable - cls.overhead)
        n = getattr(cls, at)
        for r in range(5):
            held[r] += n * room[r]
    asked = [0] * 5
    for k, n in zip(case.kinds, counts, strict=True):
        ask = vector(k.ask)
        for r in range(5):
            asked[r] += n * ask[r]
    return next((r for r in range(5) if asked[r] > held[r]), None)
