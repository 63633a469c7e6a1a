"""Bounded work on any graph: the capacity proof's cost grows with the distinct pods and node
classes, not with replicas or max nodes (`capacity.model.bounded_view`), and a count outside
what its API takes is GI065."""

from __future__ import annotations

import time

import pytest
import yaml

from components.check import check
from components.check.capacity.api_ranges import COUNTS, INT32_MIN
from components.check.capacity.model import per_node
from components.model.inputs import INT32_MAX
from components.model.serving.llm import model_shape, tensor_sizes
from tests.check.test_capacity import deployment, leader_worker_set, nodepool
from tests.conftest import CRDS

INT32 = 2**31 - 1


def _codes(report) -> list[str]:
    return sorted(f.code for f in report.findings)


def _found(report, code: str) -> list[str]:
    return [f"{f.resource}: {f.message}" for f in report.findings if f.code == code]


PAIRS = [
    pytest.param(
        "GI065",
        [nodepool("h100", 1, 2), deployment("llm", "h100", 8, replicas=2**31)],
        [nodepool("h100", 1, 2), deployment("llm", "h100", 8, replicas=1)],
        id="GI065-deployment-replicas-past-int32",
    ),
    pytest.param(
        "GI065",
        [nodepool("h100", 1, 2), deployment("llm", "h100", 8, replicas=-1)],
        [nodepool("h100", 1, 2), deployment("llm", "h100", 8, replicas=1)],
        id="GI065-deployment-replicas-negative",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good"), PAIRS)
def test_gi065_triggered_and_silenced(code, bad, good):
    assert _found(check(bad), code)
    assert code not in _codes(check(good))


def test_gi065_names_the_resource_the_field_and_the_range():
    report = check([nodepool("h100", 1, 2), deployment("llm", "h100", 8, replicas=2**31)])
    (finding,) = [f for f in report.findings if f.code == "GI065"]
    assert finding.resource == "Deployment/llm"
    assert finding.message == (
        "spec.replicas is 2147483648, outside what its API takes (0..2147483647): the API "
        "server refuses the object, or its controller cannot read it, so none of its pods run"
    )
    assert finding.fix == "set spec.replicas to at most 2147483647"


def test_a_leaderworkerset_past_its_crds_maximum():
    report = check([nodepool("h100", 1, 2), leader_worker_set("lws", "h100", 8, 2, 1_000_001)])
    assert _found(report, "GI065") == [
        "LeaderWorkerSet/lws: spec.replicas is 1000001, outside what its API takes "
        "(0..1000000): the API server refuses the object, or its controller cannot read it, so "
        "none of its pods run"
    ]


@pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds absent")
def test_the_counts_are_the_crds_int32_fields_and_bounds():
    files = {
        "InferenceService": "serving.kserve.io_inferenceservices.yaml",
        "LLMInferenceService": "serving.kserve.io_llminferenceservices.yaml",
        "Server": "mlops.seldon.io_servers.yaml",
        "Model": "mlops.seldon.io_models.yaml",
        "LeaderWorkerSet": "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    }
    for (_, kind), counts in COUNTS.items():
        if kind not in files:
            continue  # apps/v1: Go types, not a CRD
        text = (CRDS / files[kind]).read_text()
        crd = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        for version in crd["spec"]["versions"]:
            schema = version["schema"]["openAPIV3Schema"]
            for c in counts:
                node = schema
                for step in c.path.split("."):
                    node = node["properties"][step]
                assert (node["type"], node["format"]) == ("integer", "int32"), (kind, c.path)
                assert node.get("minimum", INT32_MIN) == c.least, (kind, version["name"], c.path)
                assert node.get("maximum", INT32_MAX) == c.most, (kind, version["name"], c.path)


def test_int32_max_replicas_are_judged_as_counts():
    """2147483647 pods of one template on two nodes: the proof lays out a few, says how many
    run, and names all that do not, in well under a second (it took 38 s and 5.9 GB before)."""
    graph = [nodepool("h100", 1, 2), deployment("llm", "h100", 8, replicas=INT32)]
    start = time.process_time()
    report = check(graph)
    assert time.process_time() - start < 2
    assert _found(report, "GI040") == [
        "NodePool/h100: the pods that run all the time cannot run at once on pool(s) h100 at "
        "their max (h100: 2 x a3-highgpu-8g, 8 GPU(s) each): they ask 8589934588 cpu, the nodes "
        "hold 414520m after their DaemonSets; at most 2 of 2147483647 pods together (LeaderWorkerSet groups "
        "whole), leaving Pending: Deployment/llm x2147483645, 8 GPU(s)"
    ]
    assert "GI065" not in _codes(report)


def test_the_bounded_view_gives_the_answer_of_the_whole_case():
    """900 replicas of a 1-GPU pod on 100 nodes of 8 GPUs: past the view's threshold, so laid out
    as a view of 801 pods (one past what the nodes hold); the finding counts all 900."""
    report = check([nodepool("h100", 100, 100), deployment("d", "h100", 1, replicas=900)])
    assert _found(report, "GI040") == [
        "NodePool/h100: the pods that run all the time cannot run at once on pool(s) h100 at "
        "their max (h100: 100 x a3-highgpu-8g, 8 GPU(s) each): they ask 900 nvidia.com/gpu, the "
        "nodes hold 800; the fullest packing found runs 800 of 900 pods together (LeaderWorkerSet groups whole), "
        "leaving Pending: Deployment/d x100, 1 GPU(s)"
    ]


def test_many_max_nodes_and_few_pods_cost_the_pods():
    """A pool that may grow to 2147483647 nodes and one pod: headroom counts every node."""
    start = time.process_time()
    report = check([nodepool("h100", 0, INT32), deployment("d", "h100", 8, replicas=1)])
    assert time.process_time() - start < 2
    assert _found(report, "GI041") == [
        "NodePool/h100: pool h100 at its max (2147483647 node(s)): the pods that run all the time "
        "take 1 node(s) (the fewest that hold them): headroom 2147483646 node(s), "
        "17179869168 of 17179869176 GPU(s) free"
    ]


def test_both_many_is_judged_by_the_sums():
    """2147483647 max nodes and as many pods that fit them: past any layout, the sums fit, so
    capacity is not judged (GI044), and it says so at once."""
    start = time.process_time()
    report = check([nodepool("h100", 0, INT32), deployment("d", "h100", 1, replicas=INT32)])
    assert time.process_time() - start < 2
    assert _found(report, "GI044") == [
        "NodePool/h100: capacity of pool(s) h100 not judged: 2147483647 pods on 2147483647 nodes "
        "are past the search's bound (200000 pods x nodes), and their resource sums fit"
    ]


def test_per_node_counts_every_resource():
    assert per_node((1000, 0, 0, 1, 1), (8000, 10, 10, 110, 8)) == 8
    assert per_node((1000, 0, 0, 1, 0), (8000, 10, 10, 110, 8)) == 8
    assert per_node((0, 0, 0, 1, 0), (8000, 10, 10, 110, 8)) == 110


def test_the_tensor_sizes_stop_at_the_models_heads():
    """A `tensor: 2147483647` asks for the sizes up to it: the search stops at the heads (it
    counted to 2147483647 before)."""
    shape = model_shape("llama-3.1-8b")
    start = time.process_time()
    assert (
        tensor_sizes(shape, INT32)
        == tensor_sizes(shape, shape.attention_heads)
        == [1, 2, 4, 8, 16, 32]
    )
    assert time.process_time() - start < 1
