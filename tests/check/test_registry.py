"""The rules' registry: every code the check reports is registered once, with what it judges."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from components.check import CODES
from components.check.registry import BY_CODE, QUOTA_POLICY, RULES, codes
from components.check.registry.rule import Rule, checked

CHECK = Path(__file__).resolve().parents[2] / "components" / "check"


def test_every_code_the_check_writes_is_registered_and_every_registered_one_written():
    written = set()
    for path in CHECK.rglob("*.py"):
        if "registry" not in path.parts:
            written |= set(re.findall(r'"(GI\d{3})"', path.read_text()))
    assert written == set(BY_CODE)


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
