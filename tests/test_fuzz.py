"""Fuzzing: the example stacks mutated (a key deleted, renamed, duplicated, its type changed, an
extreme number, unicode, emptied) through `gpu-inference preview`, and the example graphs mutated
through `gpu-inference check`. Whatever the input, the command ends with exit 0, 1 or 2 (never 3,
an internal error), prints no traceback, and stays within 10 s and 1 GB.

Each case runs in this process (a subprocess would spend the budget on imports), under a CPU
timer that stops a case past its time and with the process's peak RSS reset before it (Linux
`clear_refs`). The modules a preview loads are imported before the first timed case (an import
cut short would leave its module half made for the next). The budget is fixed and small (the unit suite stays near a minute), and the
examples are derived (the same each run); a deeper run, with new examples each time:

    GPU_INFERENCE_FUZZ_EXAMPLES=300 python -m pytest -n 0 tests/test_fuzz.py
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import EXAMPLE_STACKS, ROOT

EXAMPLES = int(os.environ.get("GPU_INFERENCE_FUZZ_EXAMPLES", "0"))
DEEP = EXAMPLES > 0
SECONDS = 10.0
RSS_BYTES = 1024**3
EXTREMES = (
    10**12,
    2**31 - 1,
    2**31,
    2**63,
    10**100,
    -1,
    -(2**31) - 1,
    0,
    1e308,
    math.inf,
    -math.inf,
    math.nan,
)
EMPTIES: tuple[Any, ...] = (None, "", [], {})
KINDS = ("delete", "rename", "duplicate", "type", "extreme", "unicode", "empty")
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


class Overrun(BaseException):
    """A case past its time (a BaseException: the CLI's guard catches only Exception)."""


@contextlib.contextmanager
def bounded() -> Iterator[dict[str, float]]:
    """Run the body under a timer of SECONDS of this process's CPU (not wall: on a shared
    machine a case waits for a core); yields a dict given its CPU seconds and peak RSS."""
    got: dict[str, float] = {}

    def stop(*_: Any) -> None:
        raise Overrun(f"past {SECONDS} s of CPU")

    old = signal.signal(signal.SIGPROF, stop)
    start_rss = _reset_peak()
    signal.setitimer(signal.ITIMER_PROF, SECONDS)
    start = time.process_time()
    try:
        yield got
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
        got["seconds"] = time.process_time() - start
        got["rss"] = _peak() - start_rss if start_rss is not None else 0


def _reset_peak() -> int | None:
    """Reset this process's peak RSS (VmHWM) to its current RSS; that RSS, or None where the
    kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return None
    return _status("VmRSS")


def _peak() -> int:
    return _status("VmHWM")


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every key and item inside a YAML value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*path, k)
            yield from nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*path, i)
            yield from nodes(v, (*path, i))


def _retyped(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return {"item": value[0] if value else 1}
    if isinstance(value, dict):
        return list(value)
    return 7


def mutate(doc: Any, path: tuple[Any, ...], kind: str, extra: Any) -> None:
    """Apply one mutation at `path` of `doc` (in place)."""
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    value = parent[last]
    if kind == "delete":
        del parent[last]
    elif kind == "rename":
        if isinstance(parent, dict):
            parent[f"{last}{extra}" if extra else f"{last}X"] = parent.pop(last)
        else:
            parent[last] = {str(extra) or "x": value}
    elif kind == "duplicate":
        if isinstance(parent, list):
            parent.insert(last, copy.deepcopy(value))
        else:
            parent[f"{last}2"] = copy.deepcopy(value)
    elif kind == "type":
        parent[last] = _retyped(value)
    else:  # extreme, unicode, empty: the value drawn
        parent[last] = extra


@st.composite
def mutations(draw: st.DrawFn, docs: dict[str, Any]) -> tuple[str, tuple[Any, ...], str, Any]:
    stack = draw(st.sampled_from(sorted(docs)))
    paths = list(nodes(docs[stack]["config"]))
    path = ("config", *draw(st.sampled_from(paths)))
    kind = draw(st.sampled_from(KINDS))
    extra: Any = None
    if kind == "extreme":
        extra = draw(st.sampled_from(EXTREMES))
    elif kind in ("unicode", "rename"):
        extra = draw(TEXT)
    elif kind == "empty":
        extra = draw(st.sampled_from(EMPTIES))
    return stack, path, kind, extra


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, example_previews: Any) -> Path:
    """A copy of the project; the example previews (made once for the session) have loaded
    every module a preview of them loads."""
    d = tmp_path_factory.mktemp("fuzz")
    shutil.copy(ROOT / "Pulumi.yaml", d)
    shutil.copy(ROOT / "__main__.py", d)
    shutil.copytree(ROOT / "stacks", d / "stacks")
    return d


STACK_DOCS = {
    s: yaml.safe_load((ROOT / "stacks" / f"Pulumi.{s}.yaml").read_text()) for s in EXAMPLE_STACKS
}


def _run(argv: list[str]) -> tuple[int, str, dict[str, float]]:
    from components.preview import cli

    out = io.StringIO()
    with bounded() as got, contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(argv)
    return code, out.getvalue(), got


def _judge(what: str, code: int, text: str, got: dict[str, float]) -> None:
    assert code in (0, 1, 2), f"{what}: exit {code}\n{text[-2000:]}"
    assert "Traceback" not in text and "internal error" not in text, f"{what}:\n{text[-2000:]}"
    assert got["seconds"] <= SECONDS, f"{what}: {got['seconds']:.1f} s"
    assert got["rss"] <= RSS_BYTES, f"{what}: {got['rss'] / 1024**2:.0f} MB more RSS"


@settings(max_examples=EXAMPLES or 6, derandomize=not DEEP, database=None)
@given(case=mutations(STACK_DOCS))
def test_a_mutated_example_stack_previews_within_bounds(project: Path, case: Any) -> None:
    stack, path, kind, extra = case
    doc = copy.deepcopy(STACK_DOCS[stack])
    mutate(doc, path, kind, extra)
    name = f"fuzz-{stack}"
    stack_file = project / "stacks" / f"Pulumi.{name}.yaml"
    stack_file.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    what = f"{stack} {kind} {path} {extra!r}"
    code, text, got = _run(
        ["preview", name, "--project-dir", str(project), "--out", str(project / "out")]
    )
    _judge(what, code, text, got)


GRAPH_STACKS = ("gke-dev", "eks-karpenter", "gke-llm", "aks-dev")


@pytest.fixture(scope="module")
def graphs(example_previews: dict[str, Any]) -> dict[str, Any]:
    """The example previews' graphs (the session previews them once for every module)."""
    return {s: example_previews[s].entries for s in GRAPH_STACKS}


def _inputs_paths(graph: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(i, "inputs", *p) for i, e in enumerate(graph) for p in nodes(e.get("inputs") or {})]


@settings(max_examples=EXAMPLES or 20, derandomize=not DEEP, database=None)
@given(data=st.data())
def test_a_mutated_example_graph_checks_within_bounds(
    graphs: dict[str, Any], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    stack = data.draw(st.sampled_from(GRAPH_STACKS))
    graph = copy.deepcopy(graphs[stack])
    path = data.draw(st.sampled_from(_inputs_paths(graph)))
    kind = data.draw(st.sampled_from(KINDS))
    extra: Any = None
    if kind == "extreme":
        extra = data.draw(st.sampled_from([e for e in EXTREMES if not isinstance(e, float)]))
    elif kind in ("unicode", "rename"):
        extra = data.draw(TEXT)
    elif kind == "empty":
        extra = data.draw(st.sampled_from(EMPTIES))
    mutate(graph, path, kind, extra)
    file = tmp_path_factory.mktemp("graph") / "resources.json"
    file.write_text(json.dumps(graph))
    code, text, got = _run(["check", str(file)])
    _judge(f"{stack} {kind} {path} {extra!r}", code, text, got)
