"""Tests of other rules compare findings without the capacity proof's headroom notes (GI041, an
info finding on every pool whose capacity is judged)."""

from __future__ import annotations

from collections.abc import Iterable

from components.check import Finding


def without_headroom(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.code != "GI041"]
