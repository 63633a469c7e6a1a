"""The progress line of `gpu-inference preview`: on a terminal, past a few dozen workloads, one
line on stderr overwritten in place with the phase and its counts; nothing otherwise; the files
written and what stdout says are the same either way."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from components.check.graph import is_workload
from components.preview import cli, progress
from tests.conftest import ROOT

ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
NS = "kubernetes:core/v1:Namespace"


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def shown(text: str) -> list[str]:
    """What a terminal shows in turn: each redraw of the line."""
    return [part.removeprefix("\x1b[K") for part in text.split("\r") if part.removeprefix("\x1b[K")]


@pytest.mark.parametrize(
    ("typ", "workload"),
    [
        (ISVC, True),
        ("kubernetes:serving.kserve.io/v1alpha1:LLMInferenceService", True),
        ("kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService", True),
        ("kubernetes:mlops.seldon.io/v1alpha1:Server", True),
        ("kubernetes:mlops.seldon.io/v1alpha1:Model", True),
        ("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet", True),
        ("kubernetes:apps/v1:Deployment", True),
        ("kubernetes:apps/v1:StatefulSet", True),
        ("kubernetes:apps/v1:DaemonSet", True),
        ("kubernetes:apps/v1:ReplicaSet", False),
        ("kubernetes:serving.kserve.io/v1alpha1:ServingRuntime", False),
        ("kubernetes:inference.networking.k8s.io/v1:InferencePool", False),
        ("kubernetes:helm.sh/v3:Release", False),
        ("gpu-inference:index:InferenceService", False),  # the component, not its custom resource
        (NS, False),
    ],
)
def test_what_counts_as_a_workload(typ, workload):
    assert is_workload(typ) is workload


def test_nothing_until_more_than_a_few_dozen_workloads():
    out, clock = Terminal(), Clock()
    p = progress.Progress(out, enabled=True, clock=clock)
    for _ in range(progress.THRESHOLD):
        p.registered(ISVC)
        p.registered(NS)
        clock.now += 1
    p.phase("checking placement")
    assert out.getvalue() == ""
    p.registered(ISVC)  # the 37th workload
    assert shown(out.getvalue()) == [
        "gpu-inference preview: running the stack program: 73 resources, 37 workloads"
    ]


def test_a_small_stack_leaves_the_terminal_untouched():
    out = Terminal()
    p = progress.Progress(out, enabled=True)
    for _ in range(progress.THRESHOLD):
        p.registered(ISVC)
    p.phase("checking placement")
    p.phase("writing files")
    p.done()
    assert out.getvalue() == ""


def test_redrawn_at_most_every_interval_then_phases_then_cleared():
    out, clock = Terminal(), Clock()
    p = progress.Progress(out, enabled=True, threshold=0, interval=0.1, clock=clock)
    for _ in range(10):
        p.registered(ISVC)
        clock.now += 0.04  # a registration every 0.04 s: a redraw every third
    p.phase("checking placement")
    p.phase("writing files")
    p.done()
    assert shown(out.getvalue()) == [
        "gpu-inference preview: running the stack program: 1 resources, 1 workloads",
        "gpu-inference preview: running the stack program: 4 resources, 4 workloads",
        "gpu-inference preview: running the stack program: 7 resources, 7 workloads",
        "gpu-inference preview: running the stack program: 10 resources, 10 workloads",
        "gpu-inference preview: checking placement (10 resources, 10 workloads)",
        "gpu-inference preview: writing files (10 resources, 10 workloads)",
    ]
    assert out.getvalue().endswith(progress.CLEAR)


def test_a_thousand_models_redraw_a_few_times_not_per_resource():
    out, clock = Terminal(), Clock()
    p = progress.Progress(out, enabled=True, interval=0.125, clock=clock)
    for _ in range(1000):  # a component and its custom resource a model; 2000 in 7.8 s
        for typ in ("gpu-inference:index:InferenceService", ISVC):
            p.registered(typ)
            clock.now += 1 / 256  # exact in binary: 32 registrations an interval
    redraws = shown(out.getvalue())
    # From the 37th model (registration 74) every 32nd registration: 61 redraws, not 1927.
    assert len(redraws) == 61
    assert (
        redraws[0] == "gpu-inference preview: running the stack program: 74 resources, 37 workloads"
    )
    assert redraws[-1] == (
        "gpu-inference preview: running the stack program: 1994 resources, 997 workloads"
    )


@pytest.mark.parametrize(
    ("stream", "term", "enabled"),
    [
        (Terminal(), "xterm-256color", True),
        (Terminal(), None, True),
        (Terminal(), "dumb", False),  # cannot erase a line (Emacs shell mode)
        (io.StringIO(), "xterm-256color", False),  # a pipe or a file
    ],
)
def test_only_on_a_terminal_that_can_redraw(stream, term, enabled):
    environ = {} if term is None else {"TERM": term}
    assert progress.on_terminal(stream, environ) is enabled


def test_nothing_when_not_a_terminal():
    out = io.StringIO()
    p = progress.Progress(out, threshold=0)
    assert not p.enabled
    p.registered(ISVC)
    p.phase("checking placement")
    p.done()
    assert out.getvalue() == ""


MODELS = 40


@pytest.fixture(scope="module")
def big_project(tmp_path_factory) -> Path:
    """The onprem stack with its one InferenceService repeated 40 times: 42 workloads (with the
    Seldon Server and Model), past the threshold."""
    work = tmp_path_factory.mktemp("big")
    shutil.copy(ROOT / "Pulumi.yaml", work)
    shutil.copy(ROOT / "__main__.py", work)
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.onprem.yaml").read_text())
    first = doc["config"]["gpu-inference:inferenceServices"][0]
    doc["config"]["gpu-inference:inferenceServices"] = [
        {**first, "name": f"model-{i:02d}"} for i in range(MODELS)
    ]
    (work / "stacks").mkdir()
    (work / "stacks" / "Pulumi.big.yaml").write_text(yaml.safe_dump(doc))
    return work


def files(root: Path) -> dict[str, bytes]:
    return {
        str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*")) if f.is_file()
    }


def test_a_large_stack_on_a_terminal_shows_its_phases_and_writes_the_same_files(
    big_project, tmp_path, monkeypatch, capsys
):
    runs = {}
    for name, stderr in (("plain", io.StringIO()), ("terminal", Terminal())):
        monkeypatch.setenv("TERM", "xterm-256color")
        monkeypatch.setattr(sys, "stderr", stderr)
        out_dir = tmp_path / name
        code = cli.main(
            ["preview", "big", "--project-dir", str(big_project), "--out", str(out_dir)]
        )
        monkeypatch.undo()
        stdout = capsys.readouterr().out.replace(str(out_dir), "OUT")
        runs[name] = (code, stdout, stderr.getvalue(), files(out_dir))
    (code, stdout, stderr, written), terminal = runs["plain"], runs["terminal"]
    assert code == terminal[0] == 0
    assert stderr == ""
    assert terminal[1] == stdout  # nothing extra on stdout
    assert sorted(written) == ["manifests.yaml", "placement.json", "placement.md", "resources.json"]
    assert terminal[3] == written  # every file written, byte for byte
    resources = len(json.loads(written["resources.json"]))
    assert f"\n{resources} resources; placement: 0 errors" in stdout
    lines = shown(terminal[2])
    assert lines[0].startswith("gpu-inference preview: running the stack program: ")
    assert lines[0].endswith(" resources, 37 workloads")  # drawn once past the threshold
    assert lines[-2:] == [
        f"gpu-inference preview: checking placement ({resources} resources, {MODELS + 2} workloads)",
        f"gpu-inference preview: writing files ({resources} resources, {MODELS + 2} workloads)",
    ]
    assert terminal[2].endswith(progress.CLEAR)  # erased before the report on stdout
