"""Exact packing: whether pods fit onto nodes all at once, using every resource.

Pure, and independent of Kubernetes types: a node is a `Bin` (a `group` of interchangeable nodes
and the `room` it has: allocatable less what the DaemonSets on it take), a pod a `Piece` (its
`ask`, the bin groups it may land on, the `kind` identical pods share and the `unit` it must be
placed whole with: a LeaderWorkerSet group). Vectors are `(cpu millicores, memory bytes,
ephemeral-storage bytes, pods, GPUs)`, the order of `model.nodes.shapes.Resources`.

Method (`place_all`, `fullest`): cheap proofs first, then an exact search.
1. Proofs that no packing exists: for every set of bin groups a kind of pod may use, the pods
   confined to it ask more of some resource than its bins hold; or more pods each asking over
   half of a resource than there are bins they may use.
2. A packing found by first-fit decreasing (largest GPUs first) proves one exists.
3. Otherwise branch-and-bound over node assignments, pods largest first, with symmetry broken
   twice: of bins with the same group and the same room left only the first is tried, and a pod
   goes to a bin no earlier than the pod of the same kind before it; a branch is cut when what
   the pods left ask exceeds the room of the bins that can still take any of them, and a state
   already shown to fail is not searched again. Each visited search node is a step; past
   `limit` steps (`STEPS`) the answer is unknown (`OutOfBudget`), never a guess; more than
   `MAX_PIECES` pods are not searched at all.

`fullest` finds the most pods that run together with every unit whole (branch-and-bound over
units placed or left out, bounded by how many of the smallest pods left still fit the room left).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Vector = tuple[int, ...]
R = 5  # resources per vector
GPU = 4  # index of the GPUs in a vector
STEPS = 20_000
"""Search nodes visited before the answer is unknown."""
MAX_PIECES = 256
"""Above this many pods no exact search is tried (proofs and first-fit only)."""


class OutOfBudget(Exception):
    """The exact search ran past its bound: no answer."""

    def __init__(self, steps: int) -> None:
        super().__init__(f"the exact search stopped after {steps} steps")
        self.steps = steps


@dataclass(frozen=True)
class Bin:
    """One node: bins of one `group` are alike (same shape, same labels and taints)."""

    group: int
    room: Vector


@dataclass(frozen=True)
class Piece:
    """One pod."""

    kind: int  # pods of one kind are identical (same template)
    ask: Vector
    groups: frozenset[int]  # the bin groups it may land on
    unit: int  # pods of one unit are placed whole or not at all


@dataclass(frozen=True)
class Packing:
    """`where[i]`: the bin of piece i, -1 when it is left out. `proven`: no packing places more
    (for `place_all`, always)."""

    where: tuple[int, ...]
    proven: bool
    steps: int

    @property
    def placed(self) -> int:
        return sum(1 for b in self.where if b >= 0)


def fits(ask: Vector, room: Sequence[int]) -> bool:
    """Every resource of `ask` within `room` (spelled out: the search calls it most)."""
    return (
        ask[0] <= room[0]
        and ask[1] <= room[1]
        and ask[2] <= room[2]
        and ask[3] <= room[3]
        and ask[4] <= room[4]
    )


class _Counter:
    def __init__(self, limit: int) -> None:
        self.limit, self.steps = limit, 0

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.limit:
            raise OutOfBudget(self.limit)


def _difficulty(bins: Sequence[Bin], pieces: Sequence[Piece]) -> Callable[[int], tuple]:
    most = [max((b.room[r] for b in bins), default=0) or 1 for r in range(R)]

    def key(i: int) -> tuple:
        p = pieces[i]
        share = max(p.ask[r] / most[r] for r in range(R))
        return (-p.ask[GPU], -share, p.kind, p.unit, i)

    return key


def no_packing_reason(bins: Sequence[Bin], pieces: Sequence[Piece]) -> str | None:
    """Why no packing of every piece exists (one of the cheap proofs), or None (no proof)."""
    for p in pieces:
        if not any(b.group in p.groups and fits(p.ask, b.room) for b in bins):
            return f"a pod of kind {p.kind} fits no node it may use"
    for groups in sorted({p.groups for p in pieces}, key=sorted):
        confined = [p.ask for p in pieces if p.groups <= groups]
        held = [b.room for b in bins if b.group in groups]
        for r in range(R):
            asked = sum(a[r] for a in confined)
            room = sum(h[r] for h in held)
            if asked > room:
                return f"resource {r}: {asked} asked, {room} held"
            most = max((h[r] for h in held), default=0)
            big = sum(1 for a in confined if 2 * a[r] > most)
            if big > len(held):
                return f"resource {r}: {big} pods over half a node, {len(held)} nodes"
    return None


def _first_fit(bins: Sequence[Bin], pieces: Sequence[Piece], order: Sequence[int]) -> list[int]:
    rooms = [list(b.room) for b in bins]
    where = [-1] * len(pieces)
    for i in order:
        p = pieces[i]
        for b, room in enumerate(rooms):
            if bins[b].group in p.groups and fits(p.ask, room):
                for r in range(R):
                    room[r] -= p.ask[r]
                where[i] = b
                break
    return where


def place_all(bins: Sequence[Bin], pieces: Sequence[Piece], limit: int = STEPS) -> Packing | None:
    """A packing of every piece, or None when none exists. Raises OutOfBudget."""
    if not pieces:
        return Packing((), True, 0)
    if no_packing_reason(bins, pieces) is not None:
        return None
    order = sorted(range(len(pieces)), key=_difficulty(bins, pieces))
    where = _first_fit(bins, pieces, order)
    if -1 not in where:
        return Packing(tuple(where), True, 0)
    if len(pieces) > MAX_PIECES:
        raise OutOfBudget(0)
    return _search_all(bins, pieces, order, _Counter(limit))


def _search_all(
    bins: Sequence[Bin], pieces: Sequence[Piece], order: Sequence[int], counter: _Counter
) -> Packing | None:
    n = len(order)
    rooms = [list(b.room) for b in bins]
    groups = [b.group for b in bins]
    where = [-1] * len(pieces)
    # What the pieces from position k on ask in all, their smallest ask per resource, the bin
    # groups any of them may use.
    need = [[0] * R for _ in range(n + 1)]
    least = [[0] * R for _ in range(n + 1)]
    usable: list[frozenset[int]] = [frozenset()] * (n + 1)
    least[n] = [1 << 62] * R
    for k in range(n - 1, -1, -1):
        ask = pieces[order[k]].ask
        need[k] = [need[k + 1][r] + ask[r] for r in range(R)]
        least[k] = [min(least[k + 1][r], ask[r]) for r in range(R)]
        usable[k] = usable[k + 1] | pieces[order[k]].groups
    failed: set[tuple] = set()

    def state(k: int) -> tuple:
        return (k, tuple(sorted(zip(groups, map(tuple, rooms), strict=True))))

    def hopeless(k: int) -> bool:
        held = [0] * R
        small, groups_left = least[k], usable[k]
        for b, room in enumerate(rooms):
            if groups[b] in groups_left and fits(tuple(small), room):
                for r in range(R):
                    held[r] += room[r]
        return any(need[k][r] > held[r] for r in range(R))

    def search(k: int) -> bool:
        counter.tick()
        if k == n:
            return True
        if hopeless(k):
            return False
        i = order[k]
        p = pieces[i]
        start = 0
        if k > 0 and pieces[order[k - 1]].kind == p.kind:
            start = where[order[k - 1]]
        # A state seen to fail fails again: the same rooms up to the order of alike bins, when
        # no earlier pod of the same kind bounds where this one may go.
        key = state(k) if start == 0 else None
        if key is not None and key in failed:
            return False
        tried: set[tuple] = set()
        for b in range(start, len(rooms)):
            room = rooms[b]
            if groups[b] not in p.groups or not fits(p.ask, room):
                continue
            sig = (groups[b], tuple(room))
            if sig in tried:
                continue
            tried.add(sig)
            for r in range(R):
                room[r] -= p.ask[r]
            where[i] = b
            if search(k + 1):
                return True
            where[i] = -1
            for r in range(R):
                room[r] += p.ask[r]
        if key is not None:
            failed.add(key)
        return False

    if search(0):
        return Packing(tuple(where), True, counter.steps)
    return None


def fullest(bins: Sequence[Bin], pieces: Sequence[Piece], limit: int = STEPS) -> Packing:
    """The packing that places the most pieces with every unit whole (`proven`: none places
    more; else the fullest found within `limit` steps, at least a first-fit's)."""
    if not pieces:
        return Packing((), True, 0)
    key = _difficulty(bins, pieces)
    by_unit: dict[int, list[int]] = {}
    for i in sorted(range(len(pieces)), key=key):
        by_unit.setdefault(pieces[i].unit, []).append(i)
    units = sorted(by_unit.values(), key=lambda u: key(u[0]))
    greedy = _greedy_units(bins, pieces, units)
    if -1 not in greedy:
        return Packing(tuple(greedy), True, 0)
    if len(pieces) > MAX_PIECES:
        return Packing(tuple(greedy), False, 0)
    search = _Fullest(bins, pieces, units, greedy, _Counter(limit))
    try:
        search.unit_search(0, 0)
    except OutOfBudget:
        return Packing(tuple(search.best), False, search.counter.steps)
    return Packing(tuple(search.best), True, search.counter.steps)


def _greedy_units(
    bins: Sequence[Bin], pieces: Sequence[Piece], units: Sequence[Sequence[int]]
) -> list[int]:
    rooms = [list(b.room) for b in bins]
    where = [-1] * len(pieces)
    for unit in units:
        taken: list[tuple[int, int]] = []
        for i in unit:
            p = pieces[i]
            b = next(
                (
                    b
                    for b, room in enumerate(rooms)
                    if bins[b].group in p.groups and fits(p.ask, room)
                ),
                -1,
            )
            if b < 0:
                break
            for r in range(R):
                rooms[b][r] -= p.ask[r]
            taken.append((i, b))
        if len(taken) < len(unit):
            for i, b in taken:
                for r in range(R):
                    rooms[b][r] += pieces[i].ask[r]
            continue
        for i, b in taken:
            where[i] = b
    return where


class _Fullest:
    """Branch-and-bound over units placed whole or left out (see `fullest`)."""

    def __init__(
        self,
        bins: Sequence[Bin],
        pieces: Sequence[Piece],
        units: Sequence[Sequence[int]],
        start: list[int],
        counter: _Counter,
    ) -> None:
        self.pieces, self.units, self.counter = pieces, units, counter
        self.rooms = [list(b.room) for b in bins]
        self.groups = [b.group for b in bins]
        self.room_left = [sum(b.room[r] for b in bins) for r in range(R)]
        self.where = [-1] * len(pieces)
        self.best = list(start)
        self.best_count = sum(1 for b in start if b >= 0)
        # For the pieces of units[u:], each resource's asks sorted, as running sums (made when
        # first asked for): how many of the smallest fit the room left bounds how many more can
        # be placed.
        self.sums: dict[int, list[list[int]]] = {}
        # Units alike (the same kinds of pods) are interchangeable: they are placed as a prefix,
        # each no earlier than the one before.
        self.signature = [tuple(sorted(pieces[i].kind for i in unit)) for unit in units]
        self.skipped = [False] * len(units)

    def bound(self, u: int) -> int:
        sums = self.sums.get(u)
        if sums is None:
            rest = [i for unit in self.units[u:] for i in unit]
            sums = []
            for r in range(R):
                running, acc = [], 0
                for a in sorted(self.pieces[i].ask[r] for i in rest):
                    acc += a
                    running.append(acc)
                sums.append(running)
            self.sums[u] = sums
        return min(bisect.bisect_right(sums[r], self.room_left[r]) for r in range(R))

    def take(self, i: int, b: int, sign: int) -> None:
        ask = self.pieces[i].ask
        for r in range(R):
            self.rooms[b][r] -= sign * ask[r]
            self.room_left[r] -= sign * ask[r]
        self.where[i] = b if sign > 0 else -1

    def unit_search(self, u: int, placed: int) -> None:
        self.counter.tick()
        if placed + self.bound(u) <= self.best_count:
            return
        if u == len(self.units):
            self.best, self.best_count = list(self.where), placed
            return
        alike = u > 0 and self.signature[u - 1] == self.signature[u]
        if not (alike and self.skipped[u - 1]):
            floor = max(self.where[self.units[u - 1][0]], 0) if alike else 0
            self.piece_search(u, 0, placed, floor)
        self.skipped[u] = True
        self.unit_search(u + 1, placed)
        self.skipped[u] = False

    def piece_search(self, u: int, j: int, placed: int, floor: int) -> None:
        unit = self.units[u]
        if j == len(unit):
            self.unit_search(u + 1, placed + len(unit))
            return
        i = unit[j]
        p = self.pieces[i]
        start = floor if j == 0 else 0
        if j > 0 and self.pieces[unit[j - 1]].kind == p.kind:
            start = self.where[unit[j - 1]]
        tried: set[tuple] = set()
        for b in range(start, len(self.rooms)):
            room = self.rooms[b]
            if self.groups[b] not in p.groups or not fits(p.ask, room):
                continue
            sig = (self.groups[b], tuple(room))
            if sig in tried:
                continue
            tried.add(sig)
            self.take(i, b, 1)
            self.piece_search(u, j + 1, placed, floor)
            self.take(i, b, -1)
            if self.best_count == len(self.pieces):
                return
