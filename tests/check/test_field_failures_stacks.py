"""GI014-GI020 on our own stacks: each example stack's preview graph has none of them, and a
one-line break of it (the mistake users make) triggers the finding."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from components.check import check
from tests.conftest import EXAMPLE_STACKS

ROOT = Path(__file__).resolve().parents[2]
NEW = {"GI014", "GI015", "GI016", "GI017", "GI018", "GI019", "GI020"}
STACKS = EXAMPLE_STACKS


@pytest.fixture(scope="module")
def graphs(example_previews) -> dict[str, list[dict[str, Any]]]:
    """Each example stack's graph, this module's own copy (its `resources.json` parsed)."""
    return {
        stack: json.loads((result.out_dir / "resources.json").read_text())
        for stack, result in example_previews.items()
    }


def one(graph: list[dict], typ: str, name_part: str = "") -> dict:
    (found,) = [e for e in graph if e["type"].endswith(typ) and name_part in e["name"]]
    return found


def codes(graph: list[dict]) -> set[str]:
    return {f.code for f in check(graph).findings}


def test_example_stacks_have_none_of_the_new_findings(graphs):
    assert graphs
    for stack, graph in graphs.items():
        assert not codes(graph) & NEW, (stack, check(graph).findings)


def _gke_server(g: list[dict]) -> dict:
    return one(g, ":Server")


def _gke_predictor(g: list[dict]) -> dict:
    return one(g, "v1beta1:InferenceService")


def _gfd_selector(g: list[dict]) -> None:
    selector = _gke_server(g)["inputs"]["spec"]["podSpec"]["nodeSelector"]
    del selector["cloud.google.com/gke-accelerator"]
    selector["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"


def _many_replicas(g: list[dict]) -> None:
    _gke_predictor(g)["inputs"]["spec"]["predictor"]["maxReplicas"] = 7  # pools hold 4 + 2


def _config_features_patch(g: list[dict]) -> None:
    g.append(
        {
            "type": "kubernetes:core/v1:ConfigMapPatch",
            "name": "config-features",
            "inputs": {
                "metadata": {"name": "config-features", "namespace": "knative-serving"},
                "data": {"kubernetes.podspec-affinity": "enabled"},
            },
        }
    )


def _big_model(g: list[dict]) -> None:
    one(g, ":Model")["inputs"]["spec"]["memory"] = "400Gi"  # server: 360Gi + 10% overcommit


def _model_size(g: list[dict]) -> None:
    _gke_predictor(g)["inputs"]["metadata"]["annotations"]["gpu-inference.dev/model-size-gb"] = "30"


def _short_deadline(g: list[dict]) -> None:
    annotations = _gke_predictor(g)["inputs"]["metadata"]["annotations"]
    annotations["serving.knative.dev/progress-deadline"] = "5m"


def _drop_taint_tag(g: list[dict]) -> None:
    g[:] = [
        e
        for e in g
        if not (
            e["type"] == "aws:autoscaling/tag:Tag"
            and e["name"].startswith("t4-")
            and "/taint/" in e["inputs"]["tag"]["key"]
        )
    ]


@pytest.mark.parametrize(
    ("stack", "code", "resource", "breaks"),
    [
        ("gke-dev", "GI014", "Server/gpu-inference-server-mlserver-llm-local-gpu", _gfd_selector),
        ("gke-dev", "GI015", "NodePool/l4-ondemand", _many_replicas),
        ("gke-dev", "GI017", "ConfigMapPatch/config-features", _config_features_patch),
        ("gke-dev", "GI018", "Model/gpu-inference-model-llama3", _big_model),
        (
            "gke-dev",
            "GI019",
            "InferenceService/gpu-inference-isvc-models-torch-transformer/predictor",
            _model_size,
        ),
        (
            "gke-dev",
            "GI020",
            "InferenceService/gpu-inference-isvc-models-torch-transformer/predictor",
            _short_deadline,
        ),
        ("eks-prod", "GI016", "NodeGroup/t4", _drop_taint_tag),
    ],
    ids=lambda v: v if isinstance(v, str) and v.startswith("GI") else None,
)
def test_breaking_a_stack_triggers_the_finding(graphs, stack, code, resource, breaks):
    graph = copy.deepcopy(graphs[stack])
    breaks(graph)
    found = [(f.code, f.resource) for f in check(graph).findings if f.code in NEW]
    assert found == [(code, resource)], check(graph).findings
