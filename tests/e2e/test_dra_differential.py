"""DRA claims against kube-scheduler's own allocator (issue #32): for generated graphs of DRA pools
and pods claiming devices (counts, CEL selectors, MIG, DeviceClasses of the graph), the check's
"can land" must be what kube-scheduler's DynamicResources plugin does (on each release of
`rig.KUBERNETES_VERSIONS`: the cases alternate between them, the example stacks run on both) with the same devices
published as ResourceSlices; and the example stacks' pods that claim devices (gke-dra's), with the
templates the stacks emit, on their pools' nodes (labels, taints, allocatable). Replay with `GPU_INFERENCE_DRA_SEED=<seed>`; `GPU_INFERENCE_DRA_CASES`
sets how many cases are generated (default 150, some 450 pairs)."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from differential import VERSIONS, TerminalSummary, by_version, case_version, versions_line
from dra_cases import (
    DraControlPlane,
    DraPair,
    draw_cases,
    pairs_of,
    run_dra_pairs,
    stack_pairs,
    summary,
)

from components.preview.preview import preview
from tests.conftest import EXAMPLE_STACKS, ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.tier("control plane")]

CASES = int(os.environ.get("GPU_INFERENCE_DRA_CASES", "150"))
SEED = int(os.environ.get("GPU_INFERENCE_DRA_SEED") or random.SystemRandom().randrange(2**31))


class DraRun:
    def __init__(self) -> None:
        self.generated: list[DraPair] = []
        self.examples: dict[str, list[DraPair]] = {}


@pytest.fixture(scope="module")
def dra_run(
    control_plane_bins: Path,
    request: pytest.FixtureRequest,
    tmp_path_factory: Any,
    record_testsuite_property: Callable[[str, object], None],
) -> DraRun:
    report = TerminalSummary("DRA differential")
    request.config.pluginmanager.register(report, "gpu-inference-dra-differential")
    t0 = time.monotonic()
    run = DraRun()
    # The example stacks' pods that claim devices (gke-dra's), on their pools' own nodes.
    for stack in EXAMPLE_STACKS:
        result = preview(stack, out_dir=tmp_path_factory.mktemp(stack), project_dir=ROOT)
        found = stack_pairs(stack, result.entries)
        if found:
            # On every release: a copy of the stack's pairs per version.
            run.examples[stack] = [replace(p, version=v) for v in VERSIONS for p in found]
    for i, graph in enumerate(draw_cases(CASES, SEED)):
        version = case_version(i)
        run.generated += [replace(p, version=version) for p in pairs_of(f"case {i}", graph)]
    everything = [p for ps in run.examples.values() for p in ps] + run.generated
    seconds: dict[str, dict[str, float]] = {}
    for version, mine in by_version(everything).items():
        with DraControlPlane(kubernetes_version=version) as cp:
            seconds[version] = run_dra_pairs(cp, mine)
    took = time.monotonic() - t0
    pairs = run.generated
    report.lines.append(f"seed {SEED} (replay: GPU_INFERENCE_DRA_SEED={SEED}), {CASES} cases")
    for stack, found in run.examples.items():
        for version, mine in by_version(found).items():
            report.lines.append(summary(f"DRA pods of {stack} on {version}", mine))
    for version, mine in by_version(pairs).items():
        report.lines.append(summary(f"DRA generated cases on {version}", mine))
    report.lines.append(
        f"agreeing per Kubernetes release: {versions_line(everything)}, {took:.0f}s"
    )
    for version, times in seconds.items():
        report.lines.append(f"  {version}: " + ", ".join(f"{k} {v:.1f}s" for k, v in times.items()))
    record_testsuite_property("dra_differential_seed", SEED)
    record_testsuite_property("dra_differential_pairs", len(everything))
    record_testsuite_property("dra_differential_agree", sum(p.agrees for p in everything))
    record_testsuite_property("dra_differential_by_version", versions_line(everything))
    for line in report.lines:
        print(line)
    return run


@pytest.fixture(scope="module")
def dra_pairs(dra_run: DraRun) -> list[DraPair]:
    return dra_run.generated


def _disagreements(pairs: list[DraPair]) -> str:
    bad = [p for p in pairs if p.outcome in ("bound", "unschedulable") and not p.agrees]
    other = [p for p in pairs if p.outcome not in ("bound", "unschedulable")]
    shown = "\n".join(p.describe() for p in [*bad, *other][:6])
    return (
        f"seed {SEED}: {len(bad)} of {len(pairs)} pairs disagree, {len(other)} not decided; "
        f"the first:\n{shown}"
    )


def test_dra_claims_land_where_kube_scheduler_allocates_them(dra_pairs: list[DraPair]) -> None:
    assert len(dra_pairs) >= 300
    assert all(len(mine) > len(dra_pairs) // 3 for mine in by_version(dra_pairs).values())
    assert all(p.agrees for p in dra_pairs), _disagreements(dra_pairs)
    # Both verdicts, on MIG pools and whole GPUs, with selectors and counts above one.
    for subset in (
        [p for p in dra_pairs if p.mig],
        [p for p in dra_pairs if not p.mig],
        [p for p in dra_pairs if p.selectors],
        [p for p in dra_pairs if p.count > 1],
    ):
        assert any(p.bound for p in subset) and any(not p.bound for p in subset)
    # The scheduler's reasons the check's findings name: too few devices, none matching, and a
    # CEL error that aborts scheduling.
    details = " ".join(p.detail for p in dra_pairs)
    assert "SchedulerError" in details and "cannot allocate all claims" in details, details[:2000]


def test_example_stack_dra_pods_land_where_kube_scheduler_allocates_them(dra_run: DraRun) -> None:
    """gke-dra's two InferenceServices, their claims from the templates the stack emits, on the
    nodes of each pool (labels, taints, allocatable, the L4s published as ResourceSlices): each
    lands on l4-dra and stays out of the system pool, as the check says."""
    assert set(dra_run.examples) == {"gke-dra"}
    for pairs in by_version(dra_run.examples["gke-dra"]).values():
        assert all(p.agrees for p in pairs), _disagreements(pairs)
        landed = sorted((p.workload.split("/")[1], p.pool) for p in pairs if p.bound)
        assert landed == [
            ("gpu-inference-isvc-models-llama-8b", "l4-dra"),
            ("gpu-inference-isvc-models-qwen-7b", "l4-dra"),
        ]
        assert any(p.count == 2 and p.selectors for p in pairs)
