"""GI067: what needs a feature gate the cluster's release leaves off is warned of, naming the gate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from components.check import check
from components.check.dra.gates import GATE_DEFAULTS, RELEASES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "dra.md"


def deployment(pod_extra: dict) -> dict:
    spec = {"containers": [{"name": "c", "image": "x"}], **pod_extra}
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": "train",
        "inputs": {"spec": {"replicas": 2, "template": {"spec": spec}}},
    }


def obj(group_version: str, kind: str, name: str) -> dict:
    return {"type": f"kubernetes:{group_version}:{kind}", "name": name, "inputs": {}}


# fmt: off
CASES = [
    (obj("scheduling.k8s.io/v1beta1", "Workload", "w"), "Workload/w", "a Workload needs the GenericWorkload feature gate, off by default on Kubernetes 1.36 and 1.37"),
    (obj("scheduling.k8s.io/v1alpha2", "PodGroup", "g"), "PodGroup/g", "a PodGroup needs the GenericWorkload feature gate, off by default on Kubernetes 1.36 and 1.37"),
    (obj("resource.k8s.io/v1", "DeviceTaintRule", "t"), "DeviceTaintRule/t", "a DeviceTaintRule needs the DRADeviceTaintRules feature gate, off by default on Kubernetes 1.36 (on from 1.37)"),
    (deployment({"schedulingGroup": {"podGroupName": "g"}}), "Deployment/train", "its pods' `schedulingGroup` needs the GenericWorkload feature gate, off by default on Kubernetes 1.36 and 1.37"),
]
# fmt: on


GATE_PAIRS = [
    pytest.param(
        "GI067",
        [deployment({"schedulingGroup": {"podGroupName": "g"}})],
        [deployment({})],
        {},
        id="GI067-scheduling-group",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good", "kwargs"), GATE_PAIRS)
def test_the_finding_and_its_fix(code, bad, good, kwargs):
    assert code in {f.code for f in check(bad, **kwargs).findings}
    assert code not in {f.code for f in check(good, **kwargs).findings}


@pytest.mark.parametrize(("entry", "resource", "says"), CASES)
def test_what_needs_a_gate_left_off_is_a_warning_naming_it(entry, resource, says):
    (found,) = [f for f in check([entry]).findings if f.code == "GI067"]
    assert (found.severity, found.resource) == ("warning", resource)
    assert found.message.startswith(says + ": on a cluster without it ")


def test_what_needs_no_gate_is_not_warned_of():
    graph = [deployment({}), obj("resource.k8s.io/v1", "DeviceClass", "gpu.nvidia.com")]
    assert "GI067" not in {f.code for f in check(graph).findings}


def test_the_gate_defaults_are_docs_dra_gate_table():
    """docs/dra.md's table is held to kube_features.go of both releases (test_upstream_copies);
    the rule's defaults are held to that table."""
    doc = DOCS.read_text()
    table = doc[doc.index("<!-- gates:start -->") : doc.index("<!-- gates:end -->")]
    for gate, defaults in GATE_DEFAULTS.items():
        row = re.search(rf"^\| `{gate}` \| ([^|]+) \| ([^|]+) \|", table, re.M)
        assert row is not None, gate
        on = tuple(cell.strip().startswith("on") for cell in row.groups())
        assert on == defaults, (gate, row.groups())
    assert RELEASES == ("1.36", "1.37")
