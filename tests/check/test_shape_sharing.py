"""Pods of one shape are decided once (`components.check.shapes`): the report is the one the check
gives deciding every template alone, and a twin's findings name the twin."""

from __future__ import annotations

import copy
import gc
import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fit import gke
from test_placement_check import isvc, knative, node
from test_placement_check import workload as apps_workload

from components.check import check, rules
from components.check.graph import read_templates
from components.check.read import storage_reading
from components.check.shapes import shape_key
from tests.check.scale_graphs import (
    DRA_CLAIM,
    claim_template,
    deployment,
    nodeclass,
    nodepool,
    pod,
    req,
)

TOL = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
HELD = json.dumps({"cpu": "16", "memory": "64Gi", "ephemeral-storage": "100Gi"})

POOLS: list[dict[str, Any]] = [
    gke("a2", "a2-ultragpu-2g", disk=100),
    gke("g2", "g2-standard-8"),
    nodeclass(),
    nodepool("kp", [req("node.kubernetes.io/instance-type", "In", "g6.xlarge", "g5.2xlarge")]),
    node("n1", labels={"pool": "metal"}, annotations={"gpu-inference.dev/allocatable": HELD}),
    node("n2", labels={"pool": "bare"}),  # no allocatable declared: fit not judged (GI022)
    claim_template(),
    knative(),
]
KINDS = ["deployment", "isvc", "daemonset", "claims"]
ON = ["a2", "g2", "kp", "metal", "bare"]
CPUS = ["1", "7", "30", "2x"]  # 2x: a quantity Kubernetes refuses (GI013)
GPUS = [0, 1, 2]
SIZES = [None, "20", "90", "big"]  # GB of the model an InferenceService downloads


def template(
    kind: str, pool: str, cpu: str, gpus: int, size: str | None, i: int, uri: str = "gs://b/m"
) -> dict:
    """Workload `w<i>`: a Deployment (with a DRA claim: `claims`), a Serverless InferenceService
    downloading its model from `uri` (`size` GB stated) or a DaemonSet, on `pool`."""
    if kind == "isvc":
        resources = {"requests": {"cpu": cpu, "nvidia.com/gpu": gpus}}
        predictor = {
            "nodeSelector": {"pool": pool},
            "tolerations": [TOL],
            "model": {"modelFormat": {"name": "sklearn"}, "storageUri": uri}
            | {"resources": resources},
        }
        ann = {"gpu-inference.dev/model-size-gb": size} if size else {}
        return isvc(f"w{i}", predictor=predictor, wired=None, annotations=ann)
    claims = DRA_CLAIM if kind == "claims" else None
    spec = pod(pool if pool == "kp" else None, gpus=gpus, cpu=cpu, claims=claims)
    if pool != "kp":
        spec["nodeSelector"] = {"pool": pool}
    if kind == "daemonset":
        return apps_workload(f"w{i}", spec, kind="DaemonSet")
    made = deployment(f"w{i}", spec)
    if i % 2:  # the claim template is in namespace apps: elsewhere its claim is missing
        made["inputs"]["metadata"]["namespace"] = "other"
    return made


def graph(picks: list[tuple[str, str, str, int, str | None]]) -> list[dict]:
    return copy.deepcopy(POOLS) + [template(*p, i) for i, p in enumerate(picks)]


def test_every_shape_twice_gives_the_report_of_each_alone() -> None:
    """Every shape of the table, each twice with every model size, interleaved."""
    shapes = list(itertools.product(KINDS, ON, CPUS, GPUS))
    g = graph([(*s, size) for _ in range(2) for size in SIZES for s in shapes])
    shared = check(g)
    assert shared == check(g, share_shapes=False)
    assert {"GI013", "GI021", "GI022", "GI024"} <= {f.code for f in shared.findings}


@settings(max_examples=10, deadline=None)
@given(
    st.lists(
        st.tuples(*(st.sampled_from(x) for x in (KINDS, ON, CPUS, GPUS))), min_size=3, max_size=3
    ),
    st.lists(st.tuples(st.sampled_from([0, 1, 2]), st.sampled_from(SIZES)), max_size=12),
)
def test_sharing_shapes_changes_no_report(
    shapes: list[tuple[str, str, str, int]], order: list[tuple[int, str | None]]
) -> None:
    """A few shapes, repeated in any order under other names with their own model sizes."""
    g = graph([(*shapes[k], size) for k, size in order])
    assert check(g) == check(g, share_shapes=False)


def test_a_twin_is_reported_under_its_own_name() -> None:
    """Two Deployments of one shape that fits no node: each has its GI021, in the same words."""
    g = graph([("deployment", "g2", "30", 1, None)] * 2)
    shared = check(g)
    assert shared == check(g, share_shapes=False)
    misfits = [f for f in shared.findings if f.code == "GI021"]
    assert [f.resource for f in misfits] == ["Deployment/w0", "Deployment/w1"]
    assert misfits[0].message == misfits[1].message
    assert "asks 30 cpu" in misfits[0].message
    assert [w.unfit for w in shared.workloads] == [("g2",), ("g2",)]


# Storage URIs of each reading (`read.storage_reading`): downloaded, mounted, served by modelcar,
# none; each reading twice under other texts.
URIS = [
    "gs://b/m1",
    "s3://other/m2",
    "oci+native://reg/m:1",
    "pvc://claim/m",
    "pvc://other/x",
    "oci://reg/m:1",
    "oci://reg/n:2",
    "",
]


def test_models_from_other_uris_of_one_reading_share_a_shape_and_the_report_is_unchanged() -> None:
    """InferenceServices of one shape but for their storage URIs: those of one reading are one
    shape (the 1000-model preview's case), and the report is each decided alone."""
    picks = [
        ("isvc", pool, cpu, 1, size, i, uri)
        for i, (pool, cpu, size, uri) in enumerate(
            itertools.product(["a2", "g2", "metal", "bare"], ["1", "30"], [None, "90"], URIS)
        )
    ]
    g = copy.deepcopy(POOLS) + [template(*p) for p in picks]
    shared = check(g)
    assert shared == check(g, share_shapes=False)
    # pvc:// is not downloaded: no disk for the model (GI024 only where the others have it)
    assert {"GI021", "GI022", "GI024"} <= {f.code for f in shared.findings}

    templates = [t for e in g for t in read_templates([e], True) if t.name.startswith("w")]
    keys = [shape_key(t) for t in templates[: len(URIS)]]
    readings = [storage_reading(u) for u in URIS]
    for (k1, r1), (k2, r2) in itertools.combinations(zip(keys, readings, strict=True), 2):
        assert (k1 == k2) == (r1 == r2), (r1, r2)


def test_the_check_leaves_the_collector_as_it_found_it(monkeypatch):
    """The check runs with the cyclic collector off (`rules.check`): on again after it, also when
    it fails, and still off for a caller that had turned it off."""
    g = [*POOLS, deployment("w", pod(cpu="1"))]
    assert gc.isenabled()
    check(g)
    assert gc.isenabled()
    monkeypatch.setattr(rules.CheckContext, "of", classmethod(lambda *a: 1 / 0))
    with pytest.raises(ZeroDivisionError):
        check(g)
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(ZeroDivisionError):
            check(g)
        assert not gc.isenabled()
    finally:
        gc.enable()
