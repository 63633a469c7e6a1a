"""The rules' registry: every code the check reports is registered once, with what it judges,
and the check runs exactly the registry's functions; the pool kinds are told apart as the
readers read them."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pairs import check_pairs
from scale_graphs import asg, autopilot_cluster, launch_template, nodeclass, nodepool, req

from components.check import CODES, check
from components.check.registry import BY_CODE, QUOTA_POLICY, RULES, codes, docs
from components.check.registry.kinds import pool_kinds, resource_kind
from components.check.registry.rule import POOL_KIND_NAMES, Rule, checked
from components.check.rules import resolve, runs

CHECK = Path(__file__).resolve().parents[2] / "components" / "check"


def test_every_code_the_check_writes_is_registered_and_every_registered_one_written():
    written = set()
    for path in CHECK.rglob("*.py"):
        if "registry" not in path.parts:
            written |= set(re.findall(r'"(GI\d{3})"', path.read_text()))
    assert written == set(BY_CODE)


def test_every_code_has_a_pair_that_triggers_it_and_a_fix_that_silences_it():
    """The pairs live beside each rule's tests (`pairs.check_pairs` finds them)."""
    assert {code for code, *_ in check_pairs()} == set(BY_CODE)


def test_codes_is_each_rules_own_severity_and_slug():
    assert list(CODES) == [r.code for r in RULES]
    assert CODES["GI016"] == ("error", "asg-node-template-tags")
    assert BY_CODE["GI016"].severities == ("error", "warning")
    assert CODES["GI022"] == ("info", "fit-unknown")


def test_the_policy_code_sets():
    assert codes("error", QUOTA_POLICY) == ("GI045", "GI046")
    assert "GI045" not in codes("error")
    assert {"GI016", "GI031", "GI032", "GI054", "GI056", "GI058"} <= set(codes("warning"))
    assert set(codes("error")) | set(codes("warning")) | set(codes("info")) | {
        "GI045",
        "GI046",
    } == set(CODES)


@pytest.mark.parametrize("rule", [r for r in RULES if r.run], ids=lambda r: r.code)
def test_each_rules_function_takes_the_context_of_its_scope(rule):
    function = resolve(rule.run)
    (param,) = inspect.signature(function).parameters.values()
    wanted = "PodContext" if rule.scope == "pod" else "CheckContext"
    assert param.annotation == wanted, f"{rule.run}({param.annotation})"
    assert function in runs((rule.scope,))


def test_the_check_runs_each_function_once_in_the_registrys_order():
    pod = runs(("pod",))
    assert len(pod) == len(set(pod))
    assert pod[0] is resolve("placement:no_pool")
    fits = pod.index(resolve("fit:fits"))
    # The fit records the requests and unfit pools GI026 reads.
    assert fits < pod.index(resolve("scaleup:karpenter_will_not_launch"))
    assert resolve("capacity.judge:capacity") in runs(("pool", "graph"))


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"code": "G1"}, "code is not GI"),
        ({"severities": ("fatal",)}, "severities"),
        ({"scope": "node"}, "scope 'node'"),
        ({"pools": {"gcp": ""}}, "pool kinds ['gcp'] unknown"),
        ({"not_judged": {"gke": "x"}}, "both judged and not judged"),
        ({"workloads": ("Job",)}, "workload kinds"),
        ({"judge": "kubelet"}, "judge 'kubelet'"),
        ({"judge": checked("")}, "judge"),
        ({"run": "placement.no_pool"}, "module:function"),
        ({"not_applicable": {"gke": "x"}}, "both n/a and judged or not judged"),
        ({"not_applicable": {"gcp": "x"}}, "pool kinds ['gcp'] unknown"),
        (
            {"severities": ("info",), "says_not_judged": True},
            "a not-judged finding is info, or an error under --not-judged error",
        ),
    ],
)
def test_a_bad_declaration_is_refused(change, problem):
    good = {
        "code": "GI099",
        "slug": "x",
        "severities": ("error",),
        "scope": "pod",
        "doc": "x",
        "pools": {"gke": ""},
        "workloads": ("Deployment",),
        "judge": None,
        "run": "placement:no_pool",
    }
    Rule(**good)
    with pytest.raises(ValueError, match=re.escape(problem)):
        Rule(**{**good, **change})


# ---------------------------------------------------------------------------------------------
# Coverage: every rule says what it does on every pool kind
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_no_rule_leaves_a_pool_kind_unsaid(rule):
    """Each cell of the coverage table is judged, not judged (why), n/a (why) or any."""
    for kind in POOL_KIND_NAMES:
        found = rule.cell(kind)
        assert found is not None, f"{rule.code} says nothing of {kind}"
        state, why = found
        assert state in ("judged", "not judged", "n/a", "any")
        if state in ("not judged", "n/a"):
            assert why, f"{rule.code} on {kind}: {state} without a reason"


def test_the_coverage_table_has_a_row_per_rule_and_a_column_per_kind():
    table = docs.coverage_table().splitlines()
    assert table[0].split(" | ")[1 : 1 + len(POOL_KIND_NAMES)] == [
        f"`{k}`" for k in POOL_KIND_NAMES
    ]
    rows = {line.split(" | ")[0].removeprefix("| ").split()[0]: line for line in table[2:]}
    assert list(rows) == sorted(BY_CODE)
    assert all(line.count(" | ") == len(POOL_KIND_NAMES) + 2 for line in rows.values())
    assert (
        "| judged: every instance type Karpenter's launch decision lists for the pod |"
        in (rows["GI019"])
    )


def test_a_silent_cell_fails_the_table(monkeypatch):
    silent = Rule(
        code="GI099",
        slug="x",
        severities=("error",),
        scope="pod",
        doc="x",
        pools={"gke": ""},
        workloads=("Deployment",),
        judge=None,
        run="placement:no_pool",
    )
    assert silent.cell("gke") == ("judged", "")
    assert silent.cell("compute_class") is None
    monkeypatch.setattr(docs, "RULES", (*RULES, silent))
    with pytest.raises(ValueError, match="rule GI099 says nothing of pool kind compute_class"):
        docs.coverage_table()


# ---------------------------------------------------------------------------------------------
# Pool kinds
# ---------------------------------------------------------------------------------------------

EXPECTED_KINDS = {
    "aks-dev": {"a100": "aks", "t4-spot": "aks"},
    "aks-esc": {"a100": "aks"},
    "aks-nap": {"a100-h100": "nap", "t4": "nap"},
    "eks-esc": {"t4": "eks"},
    "eks-karpenter": {"cpu": "eks", "h100": "karpenter", "l4-a10g": "karpenter"},
    "eks-prod": {"a10g": "eks", "l4": "eks", "t4": "eks"},
    "gke-autopilot": {"l4": "autopilot", "l4-spot": "autopilot", "l4x4": "autopilot"},
    "gke-computeclass": {"cpu": "gke", "h100": "compute_class", "l4": "compute_class"},
    "gke-dev": dict.fromkeys(
        ("cpu-transform", "gpu-inference-cluster-system", "infer-srv", "l4-ondemand", "l4-spot"),
        "gke",
    ),
    "gke-dra": {"gpu-inference-cluster-system": "gke", "l4-dra": "gke"},
    "gke-esc": {"l4-spot": "gke"},
    "gke-llm": {"gpu-inference-cluster-system": "gke", "h100": "gke", "router": "gke"},
    "onprem": {"cpu-edge": "existing", "rtx": "existing"},
}


def _kinds(graph: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    entries = {f"{e['type']}::{e['name']}": e for e in graph}
    return {p.name: pool_kinds(p, entries) for p in check(graph).pools}


def test_each_example_stacks_pools_have_their_kind(example_previews):
    found = {
        stack: _kinds(json.loads((result.out_dir / "resources.json").read_text()))
        for stack, result in example_previews.items()
    }
    assert found == {s: {p: (k,) for p, k in pools.items()} for s, pools in EXPECTED_KINDS.items()}


def test_the_kinds_no_example_stack_has():
    graph = [
        launch_template(),
        asg(),
        nodeclass(),
        nodepool("auto", [req("eks.amazonaws.com/instance-gpu-count", "Gt", "0")], auto_mode=True),
        nodepool("ec2", [req("karpenter.k8s.aws/instance-gpu-count", "Gt", "0")]),
        autopilot_cluster(),
    ]
    assert _kinds(graph) == {
        "auto": ("auto_mode",),
        "autopilot-1": ("autopilot",),
        "ec2": ("karpenter",),
        "gpu-asg": ("asg",),
    }


def test_every_kind_is_told_and_other_resources_are_none():
    told = {k for stack in EXPECTED_KINDS.values() for k in stack.values()}
    assert told | {"asg", "auto_mode"} == set(POOL_KIND_NAMES)
    assert resource_kind({"type": "kubernetes:apps/v1:Deployment"}) is None
