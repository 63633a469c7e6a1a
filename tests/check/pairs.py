"""Every pair the check's test modules declare: module-level lists named `*PAIRS` of
`pytest.param(code, graph that triggers it, the graph fixed[, check kwargs])`. A new rule's test
module adds its pair there and the coverage tests (every code has a pair; the policy pack reports
every error and warning code) find it without being told."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_DECLARES = re.compile(r"^[A-Z_]*PAIRS\b[^=\n]*= \[", re.M)


def check_pairs() -> list[tuple[str, list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]]:
    """(code, bad graph, fixed graph, kwargs for `check`) of every pair, module by module."""
    found = []
    for path in sorted(HERE.glob("test_*.py")):
        if not _DECLARES.search(path.read_text()):
            continue
        module = importlib.import_module(path.stem)
        for name, value in vars(module).items():
            if not name.endswith("PAIRS") or not isinstance(value, list):
                continue
            for p in value:
                code, bad, good, *rest = p.values
                if isinstance(code, str) and re.fullmatch(r"GI\d{3}", code):
                    found.append((code, bad, good, rest[0] if rest else {}))
    return found
