"""The scale-up rule against Karpenter itself (issue #23): for every pod template and every
Karpenter NodePool, whether Karpenter's own provisioning scheduler (sigs.k8s.io/karpenter v1.15.0
with aws/karpenter-provider-aws v1.15.0, through `karpenter_judge`) would create a NodeClaim for the pod from that NodePool alone, and with
which instance types and capacity types, must be the check's answer (`karpenter_cases`).

Graphs: the preview of the example stacks with Karpenter pools (eks-karpenter, and a variant of it
whose H100 pool uses a capacity reservation; aks-nap, AKS node auto-provisioning) and generated
cases (Hypothesis: EC2NodeClass graphs, and AKSNodeClass graphs judged by the judge's `azure`
build, which links Karpenter on Azure v1.14.2 on the core it pins, v1.14.0); for generated cases with two NodePools, also the
NodePool Karpenter picks among all of them (weights). EKS Auto Mode is not judged: its provisioner
is not public, so the judge cannot link it. Replay a run with
`GPU_INFERENCE_KARPENTER_DIFF_SEED=<seed>` (printed in the summary);
`GPU_INFERENCE_KARPENTER_DIFF_CASES` sets how many cases are generated (default 400; half as many
AKS ones).
"""

from __future__ import annotations

import os
import random
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import karpenter_cases_azure
import karpenter_judge as kj
import pytest
from differential import TerminalSummary
from karpenter_cases import (
    KarpenterChoice,
    KarpenterPair,
    attach,
    attach_choices,
    choices_from_graph,
    draw_cases,
    pairs_from_graph,
    request_provider,
    summary,
)

from components.preview.preview import preview

pytestmark = [pytest.mark.e2e, pytest.mark.tier("Karpenter judge")]

ROOT = Path(__file__).resolve().parents[2]
STACKS = ("eks-karpenter", "eks-karpenter-reserved", "aks-nap")
VARIANTS = {"eks-karpenter-reserved": ("eks-karpenter", "_reserved")}
CASES = int(os.environ.get("GPU_INFERENCE_KARPENTER_DIFF_CASES", "400"))
AZURE_CASES = max(CASES // 2, 20)
SEED = int(
    os.environ.get("GPU_INFERENCE_KARPENTER_DIFF_SEED") or random.SystemRandom().randrange(2**31)
)


def _reserved(text: str) -> str:
    """The H100 pool takes a capacity reservation first, on-demand when it is used up."""
    text, n = re.subn(
        r"capacityTypes: \[on-demand\]\n",
        "capacityTypes: [reserved, on-demand]\n        capacityReservations: [cr-0123456789abcdef0]\n",
        text,
    )
    assert n == 1, text
    return text


def _project_of(stack: str, tmp: Path) -> Path:
    if stack not in VARIANTS:
        return ROOT
    base, change = VARIANTS[stack]
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp / name)
    (tmp / "stacks").mkdir()
    text = globals()[change]((ROOT / "stacks" / f"Pulumi.{base}.yaml").read_text())
    (tmp / "stacks" / f"Pulumi.{stack}.yaml").write_text(text)
    return tmp


class Run:
    def __init__(self) -> None:
        self.examples: dict[str, list[KarpenterPair]] = {}
        self.generated: list[KarpenterPair] = []
        self.azure: list[KarpenterPair] = []
        self.choices: list[KarpenterChoice] = []
        self.cases = 0
        self.azure_cases = 0


@pytest.fixture(scope="module")
def differential(
    request: pytest.FixtureRequest,
    tmp_path_factory: Any,
    record_testsuite_property: Callable[[str, object], None],
) -> Run:
    reason = kj.unavailable_reason()
    if reason:
        pytest.skip(reason)
    try:
        for provider in kj.PROVIDERS:
            kj.build(provider=provider)
    except kj.SourceUnavailable as e:
        pytest.skip(str(e))
    report = TerminalSummary("karpenter differential")
    request.config.pluginmanager.register(report, "gpu-inference-karpenter-differential")
    t0 = time.monotonic()
    run = Run()
    requests: list[dict[str, Any]] = []
    groups: list[list[KarpenterPair]] = []
    choice_groups: list[list[KarpenterChoice]] = []
    choice_requests: list[dict[str, Any]] = []

    def add(name: str, graph: Any) -> list[KarpenterPair] | None:
        """Ask the judge about `graph`: its pairs, and its every-NodePool choices when it has any."""
        pairs, req = pairs_from_graph(name, graph)
        if req is None:
            return None
        groups.append(pairs)
        requests.append(req)
        choices, every = choices_from_graph(name, graph)
        if every is not None:
            run.choices += choices
            choice_groups.append(choices)
            choice_requests.append(every)
        return pairs

    for stack in STACKS:
        project = _project_of(stack, tmp_path_factory.mktemp(f"{stack}-project"))
        result = preview(stack, out_dir=tmp_path_factory.mktemp(stack), project_dir=project)
        assert not result.placement.errors, (stack, result.placement.findings)
        pairs = add(stack, result.entries)
        assert pairs is not None, stack
        run.examples[stack] = pairs
    cases = draw_cases(CASES, SEED)
    run.cases = len(cases)
    for i, case in enumerate(cases):
        run.generated += add(f"case {i}", case) or []
    azure = karpenter_cases_azure.draw_cases(AZURE_CASES, SEED + 1)
    run.azure_cases = len(azure)
    for i, case in enumerate(azure):
        run.azure += add(f"aks case {i}", case) or []
    # Each request to the build of the judge that links its NodePools' provider.
    answers: dict[int, kj.CaseAnswer] = {}
    linked: dict[str, str] = {}  # per build: the core and the provider module its answer names
    everything_asked = requests + choice_requests
    for provider in kj.PROVIDERS:
        mine = [i for i, r in enumerate(everything_asked) if request_provider(r) == provider]
        if not mine:
            continue
        answer = kj.run({"cases": [everything_asked[i] for i in mine]}, provider=provider)
        answers.update(zip(mine, answer.cases, strict=True))
        module = kj.PROVIDER_MODULES[provider]
        linked[provider] = (
            f"{module.rsplit('/', 1)[-1]} {answer.modules.get(module)} on "
            f"{kj.CORE_MODULE} {answer.modules.get(kj.CORE_MODULE)}"
        )
    for i, pairs in enumerate(groups):
        attach(pairs, answers[i])
    for j, choices in enumerate(choice_groups):
        attach_choices(choices, answers[len(groups) + j])
    seconds = time.monotonic() - t0
    report.lines.append(
        f"seed {SEED} (replay: GPU_INFERENCE_KARPENTER_DIFF_SEED={SEED}), {run.cases} cases "
        f"and {run.azure_cases} AKS cases, judged by " + "; ".join(linked.values())
    )
    for stack, pairs in run.examples.items():
        report.lines.append(summary(stack, pairs))
    report.lines.append(summary(f"{run.cases} generated cases", run.generated))
    report.lines.append(summary(f"{run.azure_cases} generated AKS cases", run.azure))
    everything = [p for pairs in run.examples.values() for p in pairs] + run.generated + run.azure
    report.lines.append(summary("total", everything) + f" in {seconds:.0f}s")
    agreeing = sum(c.agrees for c in run.choices)
    report.lines.append(
        f"every NodePool at once (weights): {len(run.choices)} pods compared, {agreeing} agreeing "
        f"({sum(c.ours is not None for c in run.choices)} launched)"
    )
    for line in report.lines:
        print(line)
    # For the CI summary (.ci/summary.py).
    record_testsuite_property("karpenter_seed", SEED)
    record_testsuite_property("karpenter_pairs", len(everything))
    record_testsuite_property("karpenter_agree", sum(p.agrees for p in everything))
    record_testsuite_property("karpenter_choices", len(run.choices))
    record_testsuite_property("karpenter_choices_agree", agreeing)
    record_testsuite_property("karpenter_seconds", round(seconds))
    return run


def _disagreements(pairs: list[KarpenterPair]) -> str:
    bad = [p for p in pairs if not p.agrees]
    shown = "\n".join(p.describe() for p in bad[:8])
    return f"{len(bad)} of {len(pairs)} pairs disagree; the first:\n{shown}"


@pytest.mark.parametrize("stack", STACKS)
def test_example_stack_scale_up_is_what_karpenter_does(differential: Run, stack: str) -> None:
    pairs = differential.examples[stack]
    assert pairs, f"{stack}: no (pod, NodePool) pair to compare"
    assert all(p.agrees for p in pairs), _disagreements(pairs)
    # Each GPU predictor gets a node from its own pool and none from the other.
    assert any(p.ours.launches for p in pairs) and any(not p.ours.launches for p in pairs)
    if stack == "eks-karpenter-reserved":
        h100 = [p for p in pairs if p.node_pool == "h100" and p.ours.launches]
        assert [p.ours.capacity_types for p in h100] == [("reserved",)]


def test_generated_scale_up_is_what_karpenter_does(differential: Run) -> None:
    pairs = differential.generated
    assert differential.cases >= CASES
    assert all(p.agrees for p in pairs), (
        f"seed {SEED} (replay: GPU_INFERENCE_KARPENTER_DIFF_SEED={SEED}): " + _disagreements(pairs)
    )
    # The cases reach launches and refusals for every reason the rule names.
    causes = {p.ours.cause for p in pairs}
    assert {"", "requirements", "requests", "limits", "taints", "dra"} <= causes, causes
    assert sum(p.ours.launches for p in pairs) > len(pairs) // 10


def test_generated_aks_scale_up_is_what_karpenter_on_azure_does(differential: Run) -> None:
    """AKS node auto-provisioning: Karpenter on Azure's labels (the judge derives the name's from
    skewer and the provider's GPU list), its capacity types and its own overhead."""
    pairs = differential.azure
    assert differential.azure_cases >= AZURE_CASES
    assert all(p.agrees for p in pairs), (
        f"seed {SEED} (replay: GPU_INFERENCE_KARPENTER_DIFF_SEED={SEED}): " + _disagreements(pairs)
    )
    causes = {p.ours.cause for p in pairs}
    assert {"", "requirements", "requests", "limits", "taints", "capacity-type", "nodepool"} <= (
        causes
    ), causes
    assert sum(p.ours.launches for p in pairs) > len(pairs) // 10


def test_the_nodepool_karpenter_picks_among_several_is_the_checks(differential: Run) -> None:
    """Weights, then names, the least relaxed pod first (`karpenter_launch.choose`)."""
    choices = differential.choices
    assert choices
    bad = [c for c in choices if not c.agrees]
    assert not bad, (
        f"seed {SEED} (replay: GPU_INFERENCE_KARPENTER_DIFF_SEED={SEED}): {len(bad)} of "
        f"{len(choices)} disagree; the first:\n" + "\n".join(c.describe() for c in bad[:8])
    )
    assert len({c.ours.node_pool for c in choices if c.ours}) > 1
