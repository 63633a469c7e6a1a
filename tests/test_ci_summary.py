"""The summary `.ci/run` ends with (.ci/summary.py), from the JUnit reports pytest writes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("ci_summary", ROOT / ".ci" / "summary.py")
assert _spec is not None and _spec.loader is not None
ci_summary = importlib.util.module_from_spec(_spec)
sys.modules["ci_summary"] = ci_summary
_spec.loader.exec_module(ci_summary)

PULUMI = "needs an installed Pulumi: no `pulumi` on PATH or in /h/.pulumi/bin"

UNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_one" />
<testcase classname="tests.test_a" name="test_two" />
<testcase classname="tests.test_b" name="test_crds"><skipped type="pytest.skip" message="no CRDs" /></testcase>
</testsuite></testsuites>"""


def e2e(failing: bool) -> str:
    failure = '<failure message="boom">trace</failure>' if failing else ""
    cases = [
        ("test_rig", "test_ert[on]", "control plane", failure),
        ("test_rig", "test_ert[off]", "control plane", ""),
        ("test_karpenter_differential", "test_generated", "Karpenter judge", ""),
        ("test_helm_judge", "test_keys", "Helm judge", ""),
        ("test_rig", "test_up", "Pulumi half", f'<skipped message="{PULUMI}" />'),
        ("test_onprem", "test_up", "Pulumi half", f'<skipped message="{PULUMI}" />'),
        ("test_other_language", "test_ts", "TypeScript", f'<skipped message="{PULUMI}" />'),
    ]
    body = "".join(
        f'<testcase classname="tests.e2e.{m}" name="{n}"><properties>'
        f'<property name="tier" value="{t}" /></properties>{extra}</testcase>'
        for m, n, t, extra in cases
    )
    props = (
        '<properties><property name="differential_seed" value="42" />'
        '<property name="differential_pairs" value="1857" />'
        '<property name="differential_agree" value="1857" />'
        '<property name="differential_seconds" value="52" />'
        '<property name="differential_by_version" value="1.37.2 930/930, 1.36.3 927/927" />'
        '<property name="dra_differential_seed" value="9" />'
        '<property name="dra_differential_pairs" value="480" />'
        '<property name="dra_differential_agree" value="480" />'
        '<property name="dra_differential_by_version" value="1.37.2 242/242, 1.36.3 238/238" />'
        '<property name="karpenter_seed" value="7" />'
        '<property name="karpenter_pairs" value="1169" />'
        '<property name="karpenter_agree" value="1169" />'
        '<property name="karpenter_choices" value="381" />'
        '<property name="karpenter_choices_agree" value="381" />'
        '<property name="karpenter_seconds" value="60" />'
        '<property name="helm_releases" value="66" />'
        '<property name="helm_keys" value="88" />'
        '<property name="helm_unknown" value="0" />'
        '<property name="helm_renders" value="66" />'
        '<property name="helm_pods" value="69" />'
        '<property name="helm_faults" value="0" />'
        '<property name="capacity_seed" value="31" />'
        '<property name="capacity_runs" value="305" />'
        '<property name="capacity_agree" value="305" />'
        '<property name="capacity_by_version" value="1.37.2 160/160, 1.36.3 145/145" />'
        "</properties>"
    )
    return f'<testsuites><testsuite name="pytest">{props}{body}</testsuite></testsuites>'


def write(d: Path, phases: list[tuple[str, int, str]], unit: bool, e2e_xml: str | None) -> Path:
    d.mkdir()
    (d / "phases.tsv").write_text("".join(f"{n}\t{s}\t{st}\n" for n, s, st in phases))
    if unit:
        (d / "unit.xml").write_text(UNIT)
    if e2e_xml is not None:
        (d / "e2e.xml").write_text(e2e_xml)
    return d


ALL_PHASES = [
    ("install (fresh virtualenv)", 95, "ok"),
    ("lint and types", 61, "ok"),
    ("unit tests", 80, "ok"),
    ("rig build (control plane)", 0, "ok"),
    ("e2e tests", 73, "ok"),
]


RIG_STATUS = {
    "components": {
        "etcd-3.6.16": {"build": {"seconds": 487.2, "go": "go1.26.8", "recorded_at": "T1"}},
        "kubernetes-1.37.2": {"build": {"seconds": 1500.4, "go": "go1.26.8", "recorded_at": "T2"}},
        "kubernetes-1.36.3": {"build": {"adopted_from": "/old"}},
        "kwok-0.8.0": {"build": None, "missing": ["kwok-0.8.0/kwok"]},
    }
}


def test_a_whole_run_reports_phases_counts_tiers_and_the_differential(tmp_path: Path) -> None:
    out = write(tmp_path / "ci", ALL_PHASES, True, e2e(failing=False))
    (out / "rig.json").write_text(json.dumps(RIG_STATUS))
    assert ci_summary.summary(out, 0, 309) == "\n".join(
        [
            "== CI summary: passed in 309 s",
            "phases:",
            "  install (fresh virtualenv)     95 s",
            "  lint and types                 61 s",
            "  unit tests                     80 s",
            "  rig build (control plane)       0 s",
            "  e2e tests                      73 s",
            "unit tests: 2 passed, 1 skipped",
            "rig components (cached builds):",
            "  etcd-3.6.16: built in 487 s (go1.26.8, T1)",
            "  kubernetes-1.37.2: built in 1500 s (go1.26.8, T2)",
            "  kubernetes-1.36.3: cached (no build time recorded)",
            "  kwok-0.8.0: missing kwok-0.8.0/kwok",
            "e2e tests, per tier:",
            "  control plane: run (2 passed)",
            "  Karpenter judge: run (1 passed)",
            "  Helm judge: run (1 passed)",
            "  Pulumi half: skipped (2 skipped)",
            f"    skipped 2: {PULUMI}",
            "  TypeScript: skipped (1 skipped)",
            f"    skipped 1: {PULUMI}",
            "  packaging: no test collected",
            "scheduler differential: 1857 (pod, pool) pairs compared, 1857 agree, seed 42 "
            "(replay: GPU_INFERENCE_DIFF_SEED=42), 52 s; agreeing per Kubernetes release: "
            "1.37.2 930/930, 1.36.3 927/927",
            "DRA differential: 480 (pod, pool) pairs compared, 480 agree, seed 9 "
            "(replay: GPU_INFERENCE_DRA_SEED=9); agreeing per Kubernetes release: "
            "1.37.2 242/242, 1.36.3 238/238",
            "Karpenter differential: 1169 (pod, NodePool) pairs compared, 1169 agree; NodePool "
            "picked among several: 381 of 381 agree; seed 7 "
            "(replay: GPU_INFERENCE_KARPENTER_DIFF_SEED=7), 60 s",
            "Helm judge: 88 value keys of 66 releases checked against their charts, 0 unknown; "
            "69 controller pods of 66 `helm template` renders judged, 0 on a GPU pool or off our "
            "CPU pools",
            "capacity differential: 305 (case, order) runs, 305 agree, seed 31 "
            "(replay: GPU_INFERENCE_CAPACITY_SEED=31); agreeing per Kubernetes release: "
            "1.37.2 160/160, 1.36.3 145/145",
        ]
    )


def test_a_failed_e2e_test_is_named_and_the_verdict_says_failed(tmp_path: Path) -> None:
    phases = [*ALL_PHASES[:-1], ("e2e tests", 73, "failed")]
    out = write(tmp_path / "ci", phases, True, e2e(failing=True))
    text = ci_summary.summary(out, 1, 309)
    assert text.startswith("== CI summary: FAILED (exit 1) in 309 s\n")
    assert "  e2e tests                      73 s  <- failed" in text
    assert "  control plane: run (1 passed, 1 failed)" in text
    assert text.endswith("failed tests (1):\n  tests.e2e.test_rig::test_ert[on]")


def test_a_run_stopped_by_lint_says_what_did_not_run(tmp_path: Path) -> None:
    phases = [("install (fresh virtualenv)", 95, "ok"), ("lint and types", 3, "failed")]
    out = write(tmp_path / "ci", phases, False, None)
    assert ci_summary.summary(out, 1, 98).splitlines()[-2:] == [
        "unit tests: not run (CI stopped in phase `lint and types`)",
        "e2e tests: not run (CI stopped in phase `lint and types`)",
    ]


def test_a_test_is_reported_under_the_tier_its_marker_names_whatever_its_name(tmp_path: Path):
    # The scheduler differential's eks-karpenter case is a control-plane test: its name says
    # karpenter, its tier marker does not.
    case = (
        '<testcase classname="tests.e2e.test_scheduler_differential" '
        'name="test_example_stack_placement_is_what_the_scheduler_does[eks-karpenter]">'
        '<properties><property name="tier" value="control plane" /></properties></testcase>'
    )
    report = ci_summary.ET.fromstring(
        f'<testsuites><testsuite name="pytest">{case}</testsuite></testsuites>'
    )
    assert ci_summary.e2e_lines(report)[1:3] == [
        "  control plane: run (1 passed)",
        "  Karpenter judge: no test collected",
    ]


class _Item:
    def __init__(self, nodeid: str, tier: str | None, fixtures: tuple[str, ...] = ()) -> None:
        self.nodeid, self.fixturenames = nodeid, list(fixtures)
        self._marker = pytest.mark.tier(tier).mark if tier else None

    def get_closest_marker(self, name: str):
        return self._marker if name == "tier" else None


def test_the_tier_comes_from_the_marker_held_to_the_fixtures():
    from tests.e2e.conftest import TIERS, tier

    assert TIERS == ci_summary.TIERS
    differential = "tests/e2e/test_scheduler_differential.py::test_x[eks-karpenter]"
    assert tier(_Item(differential, "control plane", ("control_plane_bins",))) == "control plane"
    assert tier(_Item("t::onprem", "Pulumi half", ("pulumi_install",))) == "Pulumi half"
    with pytest.raises(pytest.UsageError, match=r"t::x: an e2e test names its tier"):
        tier(_Item("t::x", None))
    with pytest.raises(pytest.UsageError, match=r"t::x: an e2e test names its tier.*'karpenter'"):
        tier(_Item("t::x", "karpenter"))
    with pytest.raises(
        pytest.UsageError,
        match=r"marked tier 'control plane' but uses \['pulumi_install'\]",
    ):
        tier(_Item("t::x", "control plane", ("pulumi_install",)))
    with pytest.raises(pytest.UsageError, match=r"marked tier 'TypeScript' but uses no Pulumi"):
        tier(_Item("t::x", "TypeScript"))


def test_a_tier_run_with_a_real_pulumi_names_its_versions():
    props = (
        '<properties><property name="tier" value="Pulumi half" /><property name="pulumi" '
        'value="pulumi v3.274.1, kubernetes plugin v4.34.2" /></properties>'
    )
    cases = "".join(
        f'<testcase classname="tests.e2e.test_recovery" name="t{i}">{props}</testcase>'
        for i in range(2)
    )
    report = ci_summary.ET.fromstring(f"<testsuites><testsuite>{cases}</testsuite></testsuites>")
    assert ci_summary.e2e_lines(report)[4] == (
        "  Pulumi half: run (2 passed) with pulumi v3.274.1, kubernetes plugin v4.34.2"
    )
