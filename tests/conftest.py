"""Shared test helpers: run a program under Pulumi mocks and read what it registered."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CRDS = SHARED / "crds"


@pytest.fixture
def run():
    """`run(program, config=None)` -> Graph: `program` runs as a stack program under mocks."""
    from components.preview.mockrun import run_program

    return run_program
