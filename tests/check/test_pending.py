"""Nothing that will stay Pending goes unreported: a pod that selects a pool it
cannot enter is an error whatever it requests and whether it is wired or not. The graphs here are
written by hand with no gpu-inference labels or annotations."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_placement_check import gpu_container, node, only, placement_st, taint_st, workload

from components.check import check
from components.check.results import asks_for
from components.model.scheduling import extended_resource_tolerations
from components.preview.cli import main
from tests.check.headroom import without_headroom

GKE_L4 = {
    "type": "gcp:container/nodePool:NodePool",
    "name": "l4",
    "inputs": {
        "name": "l4",
        "autoscaling": {"minNodeCount": 1, "maxNodeCount": 2},
        "nodeConfig": {
            "machineType": "g2-standard-8",
            "guestAccelerators": [{"type": "nvidia-l4", "count": 1}],
        },
    },
}
GKE_CPU_TAINTED = {
    "type": "gcp:container/nodePool:NodePool",
    "name": "batch",
    "inputs": {
        "name": "batch",
        "autoscaling": {"minNodeCount": 1, "maxNodeCount": 2},
        "nodeConfig": {
            "machineType": "n2-standard-8",
            "taints": [{"key": "team", "value": "batch", "effect": "NO_SCHEDULE"}],
        },
    },
}
ON_L4 = {"cloud.google.com/gke-nodepool": "l4"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def pod(selector: dict, *, gpus: int = 0, tolerations: list | None = None) -> dict:
    spec: dict[str, Any] = {
        "nodeSelector": selector,
        "containers": [{"name": "c", "image": "x"} | (gpu_container(gpus) if gpus else {})],
    }
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return spec


def test_cpu_pod_selecting_a_gpu_pool_by_label_is_an_error_naming_pool_and_taint():
    report = check([GKE_L4, workload("api", pod(ON_L4))])
    assert [f.to_json() for f in without_headroom(report.findings)] == [
        {
            "code": "GI001",
            "severity": "error",
            "resource": "Deployment/api",
            "message": "selects pool(s) l4 by label but none admits it (pool l4: taint "
            "nvidia.com/gpu=present:NoSchedule not tolerated): it stays Pending",
            "fix": "tolerate nvidia.com/gpu=present:NoSchedule and request nvidia.com/gpu (a GPU "
            "pool is for GPU pods) or select the labels of a pool it may run on",
        }
    ]
    assert only(report, "Deployment/api").pools == ()


def test_fixed_twin_requesting_a_gpu_where_extended_resource_toleration_is_on_is_clean():
    report = check([GKE_L4, workload("api", pod(ON_L4, gpus=1))])
    assert report.extended_resource_toleration is True
    assert without_headroom(report.findings) == []
    assert only(report, "Deployment/api").pools == ("l4",)


def test_fixed_twin_tolerating_the_taint_of_a_cpu_pool_is_clean():
    selector = {"cloud.google.com/gke-nodepool": "batch"}
    bad = check([GKE_CPU_TAINTED, workload("etl", pod(selector))])
    assert [(f.code, f.message) for f in bad.findings] == [
        (
            "GI001",
            "selects pool(s) batch by label but none admits it (pool batch: taint "
            "team=batch:NoSchedule not tolerated): it stays Pending",
        )
    ]
    assert bad.findings[0].fix == (
        "tolerate team=batch:NoSchedule or select the labels of a pool it may run on"
    )
    tolerated = [{"key": "team", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]
    good = check([GKE_CPU_TAINTED, workload("etl", pod(selector, tolerations=tolerated))])
    assert without_headroom(good.findings) == []
    assert only(good, "Deployment/etl").pools == ("batch",)


def test_tolerating_a_gpu_pool_without_requesting_a_gpu_moves_the_error_to_gi003():
    """The toleration alone is not a fix on a GPU pool: the pod would then pin a GPU node."""
    report = check([GKE_L4, workload("api", pod(ON_L4, tolerations=[GPU_TOLERATION]))])
    assert [f.code for f in without_headroom(report.findings)] == ["GI003"]


def test_gpu_count_keeps_an_unwired_pod_out_and_is_named():
    report = check([GKE_L4, workload("llm", pod(ON_L4, gpus=2))])
    assert [(f.code, f.message) for f in without_headroom(report.findings)] == [
        (
            "GI004",
            "requests 2 GPU(s) per pod but the nodes it can land on have fewer (l4: 1): "
            "it stays Pending",
        )
    ]
    assert only(report, "Deployment/llm").pools == ()


def test_taint_and_gpu_count_both_named_when_both_keep_it_out():
    rtx = node(
        "rtx-1",
        labels={"gpu": "rtx"},
        taints=[{"key": "gpu", "value": "rtx", "effect": "NoExecute"}],
        annotations={"nvidia.com/gpu.count": "2"},
    )
    report = check([rtx, workload("llm", pod({"gpu": "rtx"}, gpus=4))])
    assert report.extended_resource_toleration is False
    assert [f.code for f in without_headroom(report.findings)] == [
        "GI001",
        "GI012",
    ]  # GI012: no device plugin
    finding = without_headroom(report.findings)[0]
    assert finding.message == (
        "selects pool(s) rtx-1 by label but none admits it (pool rtx-1: taint gpu=rtx:NoExecute "
        "not tolerated; its nodes have 2 GPU(s), the pod requests 4): it stays Pending"
    )
    assert finding.fix == (
        "tolerate gpu=rtx:NoExecute, request at most 2 GPU(s) or select the labels of a pool it "
        "may run on"
    )


def test_required_affinity_selects_as_well_as_a_node_selector():
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "cloud.google.com/gke-accelerator",
                                "operator": "Exists",
                            }
                        ]
                    }
                ]
            }
        }
    }
    spec = {"affinity": affinity, "containers": [{"name": "c"}]}
    report = check([GKE_L4, workload("api", spec)])
    assert [f.code for f in report.errors] == ["GI001"]
    assert "selects pool(s) l4 by label" in report.errors[0].message


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"containers": [{"name": "c"}]}, id="selects-nothing"),
        pytest.param(pod({"disk": "ssd"}), id="selects-a-label-no-pool-has"),
    ],
)
def test_cpu_pod_that_selects_no_pool_of_the_graph_is_left_to_the_cluster(spec):
    """The cluster may have nodes the graph does not declare: not guessed."""
    assert without_headroom(check([GKE_L4, workload("api", spec)]).findings) == []


def test_daemonset_not_admitted_by_labels_or_taints_makes_no_pod():
    """The DaemonSet controller skips nodes whose labels or taints refuse the pod."""
    report = check([GKE_L4, workload("agent", pod(ON_L4), kind="DaemonSet")])
    assert without_headroom(report.findings) == []


def test_daemonset_asking_more_gpus_than_the_node_has_stays_pending():
    """The controller checks labels and taints, not resources: its pod is made and waits."""
    spec = pod(ON_L4, gpus=2, tolerations=[GPU_TOLERATION])
    report = check([GKE_L4, workload("agent", spec, kind="DaemonSet")])
    assert [f.code for f in without_headroom(report.findings)] == ["GI004"]


def test_gpu_count_reason_in_wired_pool_unreachable():
    h100 = json.loads(json.dumps(GKE_L4).replace("l4", "h100"))
    h100["inputs"]["nodeConfig"] = {"machineType": "a3-highgpu-8g"}
    spec = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "cloud.google.com/gke-nodepool",
                                    "operator": "In",
                                    "values": ["l4", "h100"],
                                }
                            ]
                        }
                    ]
                }
            }
        },
        "containers": [{"name": "c"} | gpu_container(2)],
    }
    report = check([GKE_L4, h100, workload("llm", spec, wired="l4,h100")])
    assert only(report, "Deployment/llm").pools == ("h100",)
    assert [(f.code, f.message) for f in report.errors] == [
        (
            "GI011",
            "wired to l4, h100 but cannot land on l4 (pool l4: its nodes have 1 GPU(s), the pod "
            "requests 2)",
        )
    ]


def test_check_cli_flags_the_hand_written_graph_and_passes_its_twin(tmp_path, capsys):
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text(json.dumps([GKE_L4, workload("api", pod(ON_L4))]))
    good.write_text(json.dumps([GKE_L4, workload("api", pod(ON_L4, gpus=1))]))
    assert main(["check", str(bad)]) == 1
    assert "error GI001 Deployment/api: selects pool(s) l4 by label" in capsys.readouterr().out
    assert main(["check", str(good)]) == 0


@settings(max_examples=150, deadline=None)
@given(
    pools=st.lists(
        st.tuples(
            st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["1", "2"]), max_size=2),
            st.lists(taint_st, max_size=2, unique=True),
            st.sampled_from([0, 1, 2, 4]),
        ),
        min_size=1,
        max_size=4,
    ),
    placement=placement_st,
    gpus=st.sampled_from([0, 1, 2, 3]),
    ert=st.booleans(),
)
def test_pools_are_those_labels_taints_and_gpus_admit_and_a_stuck_selector_is_reported(
    pools, placement, gpus, ert
):
    """`WorkloadFacts.pools` = the scheduler's filters (labels, taints, GPUs); a pod that selects
    a pool and lands on none is an error."""
    graph = [
        node(
            f"n{i}",
            labels=labels | {"gpu-inference.dev/pool": f"p{i}"},
            taints=[t.to_dict() for t in taints],
            annotations={"gpu-inference.dev/gpus-per-node": str(count)},
        )
        for i, (labels, taints, count) in enumerate(pools)
    ]
    container = {"name": "c"} | (gpu_container(gpus) if gpus else {})
    graph.append(workload("w", placement.to_pod_spec() | {"containers": [container]}))
    report = check(graph, extended_resource_toleration=ert)
    effective = placement
    if ert and gpus:
        effective = placement.with_tolerations(extended_resource_tolerations(["nvidia.com/gpu"]))
    expected = tuple(
        sorted(
            f"p{i}"
            for i, (labels, taints, count) in enumerate(pools)
            if effective.admits(labels | {"gpu-inference.dev/pool": f"p{i}"}, taints, f"n{i}")
            and count >= gpus
        )
    )
    assert only(report, "Deployment/w").pools == expected
    selects = any(
        asks_for(placement, labels | {"gpu-inference.dev/pool": f"p{i}"}, f"n{i}")
        for i, (labels, _, _) in enumerate(pools)
    )
    stuck = not expected and (selects or gpus > 0)
    assert stuck == bool({"GI001", "GI004"} & {f.code for f in report.errors}), without_headroom(
        report.findings
    )


AVOID_A = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}]
        }
    }
}
PREFER_A = {
    "nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
        ]
    }
}


@pytest.mark.parametrize(
    ("fragment", "asks"),
    [
        pytest.param({}, False, id="nothing"),
        pytest.param({"tolerations": [GPU_TOLERATION]}, False, id="tolerations-only"),
        pytest.param(
            {"nodeSelector": {"cloud.google.com/gke-nodepool": "l4"}}, True, id="selector"
        ),
        pytest.param({"affinity": PREFER_A}, False, id="preferred-only"),
        pytest.param({"affinity": AVOID_A}, False, id="avoids-a-label"),
        pytest.param(
            {"affinity": AVOID_A, "nodeSelector": {"cloud.google.com/gke-nodepool": "l4"}},
            True,
            id="avoids-and-selects",
        ),
    ],
)
def test_what_asks_for_a_pool(fragment, asks):
    """A CPU pod that only avoids labels (NotIn / DoesNotExist) may land on the cluster's other
    nodes: not reported; one that asks for the GPU pool's labels stays Pending: GI001."""
    report = check([GKE_L4, workload("api", fragment | {"containers": [{"name": "c"}]})])
    assert ({f.code for f in report.errors} == {"GI001"}) is asks, without_headroom(report.findings)
