"""The one summary `.ci/run` ends with: the time of each phase, the unit tests' counts, the e2e
tests run or skipped per tier (with the reasons), and the differentials' figures.

    python3 .ci/summary.py OUT_DIR EXIT_STATUS TOTAL_SECONDS

OUT_DIR holds `phases.tsv` (name, seconds, ok|failed per line, in order), the JUnit reports
`unit.xml` and `e2e.xml` of the phases that ran, and `rig.json` (the rig's status after its build:
each component at its version, Kubernetes once per release, with its build time). Standard library only: it also runs when the
install phase failed.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path

TIERS = (
    "control plane",
    "Karpenter judge",
    "Helm judge",
    "Pulumi half",
    "TypeScript",
    "packaging",
)


def outcome(case: ET.Element) -> tuple[str, str]:
    """passed | skipped | failed | error, and the skip reason."""
    for tag, name in (("failure", "failed"), ("error", "error")):
        if case.find(tag) is not None:
            return name, ""
    skipped = case.find("skipped")
    if skipped is not None:
        return "skipped", skipped.get("message", "")
    return "passed", ""


def cases(report: ET.Element) -> list[ET.Element]:
    return list(report.iter("testcase"))


def suite_properties(report: ET.Element) -> dict[str, str]:
    props: dict[str, str] = {}
    for suite in report.iter("testsuite"):
        for p in suite.findall("properties/property"):
            props[p.get("name", "")] = p.get("value", "")
    return props


def case_property(case: ET.Element, name: str) -> str:
    for p in case.findall("properties/property"):
        if p.get("name") == name:
            return p.get("value", "")
    return ""


def counts(found: Counter[str]) -> str:
    order = ("passed", "skipped", "failed", "error")
    return ", ".join(f"{found[k]} {k}" for k in order if found[k]) or "no test"


def failed_names(report: ET.Element) -> list[str]:
    return [
        f"{c.get('classname', '')}::{c.get('name', '')}"
        for c in cases(report)
        if outcome(c)[0] in ("failed", "error")
    ]


def unit_line(report: ET.Element) -> str:
    found = Counter(outcome(c)[0] for c in cases(report))
    return f"unit tests: {counts(found)}"


def e2e_lines(report: ET.Element) -> list[str]:
    """Each tier's counts (tests are sorted by their `tier` property, which tests/e2e/conftest.py
    takes from the test's `tier` marker), the Pulumi it ran, and why tests were skipped."""
    by_tier: dict[str, list[ET.Element]] = defaultdict(list)
    for c in cases(report):
        by_tier[case_property(c, "tier") or "control plane"].append(c)
    lines = ["e2e tests, per tier:"]
    for tier in [*TIERS, *sorted(set(by_tier) - set(TIERS))]:
        tests = by_tier.get(tier, [])
        if not tests:
            lines.append(f"  {tier}: no test collected")
            continue
        found = Counter(outcome(c)[0] for c in tests)
        state = "skipped" if found["skipped"] == len(tests) else "run"
        ran = sorted({case_property(c, "pulumi") for c in tests} - {""})
        with_ = f" with {'; '.join(ran)}" if ran else ""
        lines.append(f"  {tier}: {state} ({counts(found)}){with_}")
        reasons = Counter(outcome(c)[1] for c in tests if outcome(c)[0] == "skipped")
        for reason, n in reasons.most_common():
            lines.append(f"    skipped {n}: {reason}")
    return lines


def per_release(props: dict[str, str], key: str) -> str:
    """`; agreeing per Kubernetes release: 1.37.2 412/412, 1.36.3 398/398` when recorded."""
    found = props.get(key)
    return f"; agreeing per Kubernetes release: {found}" if found else ""


def differential_line(props: dict[str, str]) -> str | None:
    if "differential_pairs" not in props:
        return None
    seed = props.get("differential_seed", "?")
    return (
        f"scheduler differential: {props['differential_pairs']} (pod, pool) pairs compared, "
        f"{props.get('differential_agree', '?')} agree, seed {seed} "
        f"(replay: GPU_INFERENCE_DIFF_SEED={seed}), {props.get('differential_seconds', '?')} s"
        + per_release(props, "differential_by_version")
    )


def dra_line(props: dict[str, str]) -> str | None:
    if "dra_differential_pairs" not in props:
        return None
    seed = props.get("dra_differential_seed", "?")
    return (
        f"DRA differential: {props['dra_differential_pairs']} (pod, pool) pairs compared, "
        f"{props.get('dra_differential_agree', '?')} agree, seed {seed} "
        f"(replay: GPU_INFERENCE_DRA_SEED={seed})"
        + per_release(props, "dra_differential_by_version")
    )


def control_plane_lines(out: Path) -> list[str]:
    """The rig's components and the build each cache entry came from (`rig.json`: what
    `python tests/e2e/rig.py status` printed after the build phase)."""
    try:
        status = json.loads((out / "rig.json").read_text())
    except (OSError, ValueError):
        return []
    lines = ["rig components (cached builds):"]
    for label, entry in (status.get("components") or {}).items():
        record = entry.get("build") or {}
        if entry.get("missing"):
            lines.append(f"  {label}: missing {', '.join(entry['missing'])}")
        elif record.get("seconds") is not None:
            lines.append(
                f"  {label}: built in {round(record['seconds'])} s "
                f"({record.get('go') or 'go ?'}, {record.get('recorded_at', '?')})"
            )
        else:
            lines.append(f"  {label}: cached (no build time recorded)")
    return lines


def karpenter_line(props: dict[str, str]) -> str | None:
    if "karpenter_pairs" not in props:
        return None
    seed = props.get("karpenter_seed", "?")
    return (
        f"Karpenter differential: {props['karpenter_pairs']} (pod, NodePool) pairs compared, "
        f"{props.get('karpenter_agree', '?')} agree; NodePool picked among several: "
        f"{props.get('karpenter_choices_agree', '?')} of {props.get('karpenter_choices', '?')} "
        f"agree; seed {seed} (replay: GPU_INFERENCE_KARPENTER_DIFF_SEED={seed}), "
        f"{props.get('karpenter_seconds', '?')} s"
    )


def helm_line(props: dict[str, str]) -> str | None:
    if "helm_keys" not in props and "helm_pods" not in props:
        return None
    return (
        f"Helm judge: {props.get('helm_keys', '?')} value keys of "
        f"{props.get('helm_releases', '?')} releases checked against their charts, "
        f"{props.get('helm_unknown', '?')} unknown; {props.get('helm_pods', '?')} controller pods "
        f"of {props.get('helm_renders', '?')} `helm template` renders judged, "
        f"{props.get('helm_faults', '?')} on a GPU pool or off our CPU pools"
    )


def capacity_line(props: dict[str, str]) -> str | None:
    if "capacity_runs" not in props:
        return None
    seed = props.get("capacity_seed", "?")
    return (
        f"capacity differential: {props['capacity_runs']} (case, order) runs, "
        f"{props.get('capacity_agree', '?')} agree, seed {seed} "
        f"(replay: GPU_INFERENCE_CAPACITY_SEED={seed})" + per_release(props, "capacity_by_version")
    )


def load(path: Path) -> ET.Element | None:
    try:
        return ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None


def summary(out: Path, status: int, total: int) -> str:
    phases = []
    tsv = out / "phases.tsv"
    if tsv.exists():
        phases = [line.split("\t") for line in tsv.read_text().splitlines() if line.strip()]
    verdict = "passed" if status == 0 else f"FAILED (exit {status})"
    lines = [f"== CI summary: {verdict} in {total} s", "phases:"]
    width = max((len(p[0]) for p in phases), default=0)
    for name, seconds, state in phases:
        mark = "" if state == "ok" else f"  <- {state}"
        lines.append(f"  {name:<{width}}  {int(seconds):>5} s{mark}")
    stopped = next((p[0] for p in phases if p[2] != "ok"), None)

    unit = load(out / "unit.xml")
    lines.append(unit_line(unit) if unit is not None else f"unit tests: not run ({why(stopped)})")
    lines += control_plane_lines(out)
    e2e = load(out / "e2e.xml")
    if e2e is None:
        lines.append(f"e2e tests: not run ({why(stopped)})")
    else:
        lines += e2e_lines(e2e)
        props = suite_properties(e2e)
        lines += [
            x
            for x in (
                differential_line(props),
                dra_line(props),
                karpenter_line(props),
                helm_line(props),
                capacity_line(props),
            )
            if x
        ]
    failed = [
        *(failed_names(unit) if unit is not None else []),
        *(failed_names(e2e) if e2e is not None else []),
    ]
    if failed:
        lines.append(f"failed tests ({len(failed)}):")
        lines += [f"  {n}" for n in failed[:20]]
    return "\n".join(lines)


def why(stopped: str | None) -> str:
    return f"CI stopped in phase `{stopped}`" if stopped else "its phase did not start"


def main(argv: list[str]) -> int:
    out, status, total = Path(argv[1]), int(argv[2]), int(argv[3])
    print(summary(out, status, total))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
