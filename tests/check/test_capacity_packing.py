"""The exact packing (`components.check.capacity.packing`) against brute force: every assignment
of every pod to every node (or to none) tried, on instances small enough to try them all."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.check.capacity.packing import (
    Bin,
    OutOfBudget,
    Piece,
    fits,
    fullest,
    no_packing_reason,
    place_all,
)


def _valid(bins: list[Bin], pieces: list[Piece], where: tuple[int, ...]) -> bool:
    rooms = [list(b.room) for b in bins]
    for p, b in zip(pieces, where, strict=True):
        if b < 0:
            continue
        if bins[b].group not in p.groups:
            return False
        for r in range(5):
            rooms[b][r] -= p.ask[r]
    if any(x < 0 for room in rooms for x in room):
        return False
    units: dict[int, set[bool]] = {}
    for p, b in zip(pieces, where, strict=True):
        units.setdefault(p.unit, set()).add(b >= 0)
    return all(len(v) == 1 for v in units.values())


def _brute(bins: list[Bin], pieces: list[Piece]) -> int:
    """The most pieces placed with units whole, by trying every assignment."""
    best = 0
    for where in itertools.product(range(-1, len(bins)), repeat=len(pieces)):
        if _valid(bins, pieces, where):
            best = max(best, sum(1 for b in where if b >= 0))
    return best


def _vector(cpu: int, mem: int, gpus: int, pods: int = 1) -> tuple[int, ...]:
    return (cpu, mem, 0, pods, gpus)


_BINS = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.integers(2, 6),
        st.integers(2, 6),
        st.sampled_from((0, 2, 4)),
        st.integers(1, 3),  # pods the node holds
    ),
    min_size=1,
    max_size=3,
)
_KINDS = st.lists(
    st.tuples(
        st.integers(0, 4),
        st.integers(0, 4),
        st.sampled_from((0, 0, 1, 2, 3)),
        st.sampled_from((frozenset({0}), frozenset({1}), frozenset({0, 1}))),
        st.integers(1, 3),  # pods of this kind
        st.booleans(),  # one unit (a gang) rather than a unit per pod
    ),
    min_size=1,
    max_size=3,
)


def _instance(bins_in: list, kinds_in: list) -> tuple[list[Bin], list[Piece]]:
    bins = [Bin(g, _vector(c, m, gp, n)) for g, c, m, gp, n in bins_in]
    pieces: list[Piece] = []
    unit = 0
    for kind, (c, m, gp, groups, count, gang) in enumerate(kinds_in):
        for _ in range(count):
            pieces.append(Piece(kind, _vector(c, m, gp), groups, unit))
            if not gang:
                unit += 1
        unit += 1
    return bins, pieces[:6]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BINS, _KINDS)
def test_place_all_and_fullest_agree_with_brute_force(bins_in: list, kinds_in: list) -> None:
    bins, pieces = _instance(bins_in, kinds_in)
    most = _brute(bins, pieces)
    found = place_all(bins, pieces)
    if most == len(pieces):
        assert found is not None and _valid(bins, pieces, found.where)
        assert -1 not in found.where
    else:
        assert found is None
    best = fullest(bins, pieces)
    assert best.proven
    assert _valid(bins, pieces, best.where)
    assert best.placed == most


def test_a_proof_needs_no_search() -> None:
    # 3 pods of 8 GPUs, 2 nodes of 8: the GPU sum says no.
    bins = [Bin(0, _vector(100, 100, 8, 110)) for _ in range(2)]
    pieces = [Piece(0, _vector(1, 1, 8), frozenset({0}), i) for i in range(3)]
    assert no_packing_reason(bins, pieces) is not None
    assert place_all(bins, pieces, limit=0) is None


def test_pods_over_half_a_node_need_a_node_each() -> None:
    # Three pods of 5 CPUs on two nodes of 8: the sums fit (15 <= 16), the pods do not.
    bins = [Bin(0, _vector(8, 100, 0, 110)) for _ in range(2)]
    pieces = [Piece(0, _vector(5, 1, 0), frozenset({0}), i) for i in range(3)]
    assert "over half" in (no_packing_reason(bins, pieces) or "")
    assert place_all(bins, pieces) is None
    assert fullest(bins, pieces).placed == 2


def test_first_fit_fails_where_the_search_finds_a_packing() -> None:
    # cpu/memory vectors first-fit decreasing packs badly: 2 nodes of (10, 10); pods (6, 2),
    # (4, 8), (4, 2), (6, 8): the only packing pairs (6,2)+(4,8) and (4,2)+(6,8).
    bins = [Bin(0, _vector(10, 10, 0, 110)) for _ in range(2)]
    asks = [(6, 2), (4, 8), (4, 2), (6, 8)]
    pieces = [Piece(k, _vector(c, m, 0), frozenset({0}), k) for k, (c, m) in enumerate(asks)]
    found = place_all(bins, pieces)
    assert found is not None and _valid(bins, pieces, found.where)


def test_past_its_bound_the_search_says_it_does_not_know() -> None:
    # GPUs 5, 4, 3, 3, 3, 2 on two nodes of 10: first-fit decreasing strands a 3 (5+4, then
    # 3+3+3), the packing 5+3+2 / 4+3+3 takes a search of several steps.
    bins = [Bin(0, _vector(100, 100, 10, 110)) for _ in range(2)]
    asks = (5, 4, 3, 3, 3, 2)
    pieces = [Piece(a, _vector(1, 1, a), frozenset({0}), i) for i, a in enumerate(asks)]
    with pytest.raises(OutOfBudget):
        place_all(bins, pieces, limit=2)
    found = place_all(bins, pieces)
    assert found is not None and found.steps > 2 and _valid(bins, pieces, found.where)


def test_fits_compares_every_resource() -> None:
    assert fits((1, 2, 3, 1, 0), (1, 2, 3, 1, 0))
    assert not fits((1, 2, 3, 2, 0), (1, 2, 3, 1, 0))
