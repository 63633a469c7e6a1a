"""The placement check on the broken copies of gke-llm: each exits 1 with the
finding that names what the controller will create.

Expected:
- worker without the pool toleration -> GI001 on the LeaderWorkerSet workers `qwen-72b-kserve-mn`
  (the resource names `<name>-kserve-mn`);
- tensor parallelism 3 on llama-3.1-8b's 32 attention heads, the model known only by its URI or
  by its annotation on a hand-edited graph -> the check's tensor-parallelism code (TP_CODE below,
  GI030); with `model:` named in the stack the config refuses it
  already (tests/platform/test_llm_config.py, exit 2);
- llama-3.1-70b on one L4 (24 GB) -> GI019 on `llama-70b-l4`;
- gke-llm as shipped: none of these.
The resource strings below name the pods as the controller does.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from llm_broken_stacks import (
    llama_70b_on_one_l4,
    project,
    tensor_3_on_32_heads_unnamed,
    worker_without_toleration,
)

from components.check import check
from components.preview import cli
from components.preview.preview import preview
from tests.check.headroom import without_headroom

ROOT = Path(__file__).resolve().parents[2]
TP_CODE = "GI030"  # tensor-parallel-heads
LLMISVC = "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService"


def preview_copy(tmp_path: Path, edit, capsys) -> tuple[int, str]:
    d = project(tmp_path, edit)
    code = cli.main(["preview", "gke-llm", "--project-dir", str(d), "--out", str(tmp_path / "o")])
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def graph(tmp_path_factory) -> list[dict[str, Any]]:
    result = preview("gke-llm", out_dir=tmp_path_factory.mktemp("gke-llm"), project_dir=ROOT)
    return json.loads((result.out_dir / "resources.json").read_text())


def test_gke_llm_as_shipped_has_no_findings_and_every_pod_is_judged(graph):
    report = check(graph)
    assert without_headroom(report.findings) == []
    # decode + prefill + scheduler of llama-70b; leader + workers + scheduler of qwen-72b.
    assert len(report.workloads) == 6


def test_a_worker_without_the_pool_toleration_is_gi001_on_the_multi_node_workers(tmp_path, capsys):
    code, out = preview_copy(tmp_path, worker_without_toleration, capsys)
    assert code == 1
    assert (
        "  error GI001 LLMInferenceService/gpu-inference-llmisvc-models-qwen-72b/"
        "qwen-72b-kserve-mn/worker: wired to h100 but can land on no pool (pool h100: taint "
        "dedicated=llm:NoSchedule not tolerated)"
    ) in out


def test_tensor_3_on_32_heads_is_refused_by_the_check(tmp_path, capsys):
    code, out = preview_copy(tmp_path, tensor_3_on_32_heads_unnamed, capsys)
    assert code == 1
    assert (
        f"  error {TP_CODE} LLMInferenceService/gpu-inference-llmisvc-models-llama-70b/"
        "llama-70b-kserve: tensor parallelism 3 does not divide llama-3.1-8b's 32 attention heads"
    ) in out


def test_a_70b_model_on_one_l4_is_gi019(tmp_path, capsys):
    code, out = preview_copy(tmp_path, llama_70b_on_one_l4, capsys)
    assert code == 1
    assert (
        "  error GI019 LLMInferenceService/gpu-inference-llmisvc-models-llama-70b-l4/"
        "llama-70b-l4-kserve: its model does not fit its GPUs on pool l4: llama-3.1-70b in "
        "bfloat16 needs 141.1 GB of weights (141.1 GB per GPU over tensor 1 x pipeline 1)"
    ) in out


def test_a_hand_edited_graph_whose_workers_lack_the_toleration_is_refused(graph, tmp_path, capsys):
    """`gpu-inference check` on a graph written by anyone: the LLMInferenceService's worker
    template loses its tolerations; exit 1 naming `qwen-72b-kserve-mn`."""
    edited = copy.deepcopy(graph)
    for e in edited:
        if e["type"] == LLMISVC and e["inputs"]["metadata"]["name"] == "qwen-72b":
            e["inputs"]["spec"]["worker"].pop("tolerations")
    path = tmp_path / "resources.json"
    path.write_text(json.dumps(edited))
    assert cli.main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "GI001" in out and "qwen-72b-kserve-mn" in out


def test_a_hand_edited_graph_with_tensor_3_on_32_heads(graph):
    edited = copy.deepcopy(graph)
    for e in edited:
        if e["type"] == LLMISVC and e["inputs"]["metadata"]["name"] == "llama-70b":
            e["inputs"]["metadata"]["annotations"]["gpu-inference.dev/model"] = "llama-3.1-8b"
            spec = e["inputs"]["spec"]
            spec["parallelism"]["tensor"] = 3
            main = spec["template"]["containers"][0]["resources"]
            main["requests"]["nvidia.com/gpu"] = main["limits"]["nvidia.com/gpu"] = 3
    assert TP_CODE in {f.code for f in without_headroom(check(edited).findings)}


# ---------------------------------------------------------------------------------------------
# Capacity: the H100 pool at 2..2 and 3..3 nodes
# ---------------------------------------------------------------------------------------------

SHIPPED_H100 = "      minNodes: 3\n      maxNodes: 4\n"


def _h100_nodes(low: int, high: int):
    def edit(text: str) -> str:
        assert SHIPPED_H100 in text
        return text.replace(SHIPPED_H100, f"      minNodes: {low}\n      maxNodes: {high}\n")

    return edit


def test_gke_llm_with_two_h100_nodes_is_refused_naming_the_pods_that_cannot_run(tmp_path, capsys):
    """decode and prefill (4 GPUs each) take one a3-highgpu-8g, qwen-72b's LeaderWorkerSet group
    (two pods of 8) two more: on two nodes two of the four pods stay Pending for good."""
    code, out = preview_copy(tmp_path, _h100_nodes(2, 2), capsys)
    assert code == 1
    assert "GI040" in out and "they ask 24 nvidia.com/gpu, the nodes hold 16" in out
    assert "at most 2 of 4 pods together" in out
    assert "raise maxNodes of h100 to 3 (the fewest nodes that hold them)" in out


def _with_h100_at(graph: list[dict[str, Any]], nodes: int) -> list[dict[str, Any]]:
    edited = copy.deepcopy(graph)
    (pool,) = [e for e in edited if e["type"].endswith(":NodePool") and e["name"] == "h100"]
    pool["inputs"]["autoscaling"].update(totalMinNodeCount=nodes, totalMaxNodeCount=nodes)
    return edited


def test_gke_llm_with_three_h100_nodes_has_no_error_and_names_the_spreading_order(graph):
    """Three nodes hold the four pods, so the check finds no error; kube-scheduler's spreading can
    still strand the group's worker (decode and prefill on two nodes, the leader on the third):
    a warning with that order, and four nodes stop it (the stack ships 3..4)."""
    report = check(_with_h100_at(graph, 3))
    assert report.errors == []
    (warning,) = report.warnings
    assert warning.code == "GI043" and warning.resource == "NodePool/h100"
    assert warning.message.endswith(
        "llama-70b-kserve -> h100 node 1; LLMInferenceService/gpu-inference-llmisvc-models-llama-70b"
        "/llama-70b-kserve-prefill -> h100 node 2; LLMInferenceService/gpu-inference-llmisvc-models"
        "-qwen-72b/qwen-72b-kserve-mn/leader -> h100 node 3; LLMInferenceService/gpu-inference-"
        "llmisvc-models-qwen-72b/qwen-72b-kserve-mn/worker -> Pending"
    )
    assert warning.fix == "raise maxNodes of h100 to 4 (then no order strands a pod)"
    assert check(_with_h100_at(graph, 4)).warnings == []


def _with_quota(h100_gpus: int):
    def edit(text: str) -> str:
        return text + (
            "\n  gpu-inference:quotas:\n"
            "    - provider: gke\n"
            "      region: us-central1\n"
            f"      limits: {{NVIDIA_H100_GPUS: {h100_gpus}}}\n"
        )

    return edit


def test_gke_llm_within_an_h100_quota_of_16_is_refused_naming_what_stays_pending(tmp_path, capsys):
    """The stack's `quotas` reach the check as a CloudQuota in the graph: 16 H100s allow two
    a3-highgpu-8g nodes, the four pods that always run need three."""
    code, out = preview_copy(tmp_path, _with_quota(16), capsys)
    assert code == 1
    assert "GI046" in out and "quota NVIDIA_H100_GPUS in us-central1 allows 16 GPU(s)" in out
    assert "raise the quota to 24" in out
