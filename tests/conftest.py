"""Shared test helpers: run a program under Pulumi mocks and read what it registered."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from components.model.ownership import field_manager, with_manager

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CRDS = SHARED / "crds"

MANAGER = field_manager("gpu-inference", "test")
"""The field manager of what the tests' programs make (mockrun's project and stack)."""


def owned(metadata: Mapping[str, Any], manager: str = MANAGER) -> dict[str, Any]:
    """`metadata` as our components register it: with the stack's field manager annotation."""
    return with_manager(metadata, manager)


@pytest.fixture
def run():
    """`run(program, config=None)` -> Graph: `program` runs as a stack program under mocks."""
    from components.preview.mockrun import run_program

    return run_program
