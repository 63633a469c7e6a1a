"""Tests of other rules compare findings without the two notes their small graphs draw: the
capacity proof's headroom (GI041, an info finding on every pool whose capacity is judged) and
the isolation warning (GI061, on a pool tainted only `nvidia.com/gpu` beside GPU pods not wired
to it, as these one-pool graphs of plain Deployments are); each has tests of its own."""

from __future__ import annotations

from collections.abc import Iterable

from components.check import Finding

OTHER_RULES_NOTES = frozenset({"GI041", "GI061"})


def without_headroom(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.code not in OTHER_RULES_NOTES]
