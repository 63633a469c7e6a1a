"""GI019 on every pool kind, and GI059 where it cannot judge: a Karpenter NodePool on every
instance type Karpenter's launch decision lists for the pod, a ComputeClass on each priority, an
Autopilot cluster on the accelerator the pod selects, AKS agent pools and node
auto-provisioning, EKS Auto Mode; the messages exact."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from llm_graphs import CPU, llmisvc, vllm
from scale_graphs import autopilot_cluster, deployment, nodeclass, nodepool, pod, req
from test_aks_check import agent_pool, aks_node_class, nap_nodepool

from components.check import Finding, check, render_markdown
from components.preview.cli import main

SIZE = "gpu-inference.dev/model-size-gb"
W70 = {"gpu-inference.dev/model-parameters": "70B", "gpu-inference.dev/model-dtype": "bf16"}
W405 = {"gpu-inference.dev/model-parameters": "405B", "gpu-inference.dev/model-dtype": "bf16"}
TOL_SKU = [{"key": "sku", "operator": "Exists"}]
WEIGHTS_FIX = "use a pool with larger GPUs, or a smaller dtype (fp8 / int4)"

G6_ONE_GPU = nodepool(
    "g6",
    [
        req("karpenter.k8s.aws/instance-family", "In", "g6"),
        req("karpenter.k8s.aws/instance-gpu-count", "In", "1"),
    ],
)
H100 = nodepool("h100", [req("karpenter.k8s.aws/instance-gpu-name", "In", "h100")])
G6_OR_G6E = nodepool(
    "mixed",
    [
        req("karpenter.k8s.aws/instance-family", "In", "g6", "g6e"),
        req("karpenter.k8s.aws/instance-gpu-count", "In", "1"),
    ],
)


def sized(entry: dict[str, Any], annotations: dict[str, str]) -> dict[str, Any]:
    entry = copy.deepcopy(entry)
    entry["inputs"]["metadata"]["annotations"] = annotations
    return entry


def compute_class(name: str, *priorities: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "kubernetes:cloud.google.com/v1:ComputeClass",
        "name": name,
        "inputs": {"metadata": {"name": name}, "spec": {"priorities": list(priorities)}},
    }


def on_class(name: str) -> dict[str, Any]:
    return pod(selector={"cloud.google.com/compute-class": name}, tolerations=[])


def found(graph: list[dict[str, Any]], code: str) -> list[Finding]:
    return [f for f in check(graph).findings if f.code == code]


def one(graph: list[dict[str, Any]], code: str) -> tuple[str, str, str, str]:
    hits = found(graph, code)
    assert len(hits) == 1, check(graph).findings
    return hits[0].severity, hits[0].resource, hits[0].message, hits[0].fix


def test_llama_3_3_70b_on_a_karpenter_nodepool_of_one_gpu_g6_is_an_error():
    """The trial's first stack: g6 with one GPU (gpu-inference's `maxGpus: 1`). Karpenter lists
    every g6 size that holds the pod's 4 cpu / 24Gi (g6.xlarge has 16 GiB): each one L4."""
    entry = llmisvc(
        model="llama-3.3-70b",
        parallelism={},
        template=vllm("g6", 1),
        wiring={"decode": "g6", "scheduler": "cpu"},
    )
    assert one([G6_ONE_GPU, nodeclass(), CPU, entry], "GI019") == (
        "error",
        "LLMInferenceService/llama/llama-kserve",
        "its model does not fit its GPUs on pool g6 (instance types g6.2xlarge, g6.4xlarge, "
        "g6.8xlarge, g6.16xlarge): llama-3.3-70b in bfloat16 needs 141.1 GB of weights (141.1 GB "
        "per GPU over tensor 1 x pipeline 1) and 42.9 GB of KV cache per GPU for one "
        "131072-token sequence; 1 x l4 (24 GB) at 0.9 utilization holds 21.6 GB per GPU: the "
        "weights alone do not fit",
        "use tensor parallelism 8 (8 GPUs, on nodes that have them); use a pool with larger "
        "GPUs, or fp8 / int4 weights",
    )


def test_405b_on_8_h100_through_karpenter_is_an_error():
    graph = [H100, nodeclass(), sized(deployment("big", pod("h100", gpus=8)), W405)]
    assert one(graph, "GI019") == (
        "error",
        "Deployment/big",
        "its model needs 972.0 GB of GPU memory (810 GB of weights + 20%) but the GPUs it "
        "requests have less (h100 (instance type p5.48xlarge): 8 x 80 GB): it fails to load",
        f"request 13 GPU(s) on a pool with 13+ GPUs per node, {WEIGHTS_FIX}",
    )


def test_a_karpenter_type_too_small_is_an_error_though_another_type_holds_the_model():
    """Karpenter hands the cloud every type it lists (spot picks by capacity too): a g6 (L4, 24
    GB) may come though a g6e (L40S, 48 GB) would hold 30 GB; the fix keeps the NodePool off the
    types named."""
    graph = [G6_OR_G6E, nodeclass(), sized(deployment("m", pod("mixed")), {SIZE: "30"})]
    assert one(graph, "GI019") == (
        "error",
        "Deployment/m",
        "its model needs 36.0 GB of GPU memory (30 GB of weights + 20%) but the GPUs it requests "
        "have less (mixed (instance types g6.xlarge, g6.2xlarge, g6.4xlarge, g6.8xlarge, "
        "g6.16xlarge): 1 x 24 GB): it fails to load",
        "keep pool mixed's NodePool off g6.xlarge, g6.2xlarge, g6.4xlarge, g6.8xlarge, "
        "g6.16xlarge (a NotIn requirement on node.kubernetes.io/instance-type, in the NodePool or "
        f"the pod's node affinity); or request 2 GPU(s) on a pool with 2+ GPUs per node, "
        f"{WEIGHTS_FIX}",
    )
    only_g6e = [
        nodepool("mixed", [req("karpenter.k8s.aws/instance-family", "In", "g6e")]),
        nodeclass(),
        sized(deployment("m", pod("mixed")), {SIZE: "30"}),
    ]
    assert found(only_g6e, "GI019") == []


def test_60_gb_on_one_l4_through_a_compute_class_is_an_error_naming_the_priorities():
    graph = [
        compute_class(
            "l4-class", {"machineType": "g2-standard-8"}, {"gpu": {"type": "nvidia-l4", "count": 1}}
        ),
        sized(deployment("cc", on_class("l4-class")), {SIZE: "60"}),
    ]
    assert one(graph, "GI019") == (
        "error",
        "Deployment/cc",
        "its model needs 72.0 GB of GPU memory (60 GB of weights + 20%) but the GPUs it requests "
        "have less (l4-class (priorities 1 (g2-standard-8), 2 (nvidia-l4)): 1 x 24 GB): it fails "
        "to load",
        f"request 3 GPU(s) on a pool with 3+ GPUs per node, {WEIGHTS_FIX}",
    )


def test_a_compute_class_fallback_priority_too_small_is_an_error_naming_it():
    """GKE falls back to the next priority when the first has no capacity: an A100 80 GB first
    does not save the L4 after it."""
    graph = [
        compute_class("mix", {"machineType": "a2-ultragpu-1g"}, {"machineType": "g2-standard-8"}),
        sized(deployment("cc", on_class("mix")), {SIZE: "60"}),
    ]
    assert one(graph, "GI019") == (
        "error",
        "Deployment/cc",
        "its model needs 72.0 GB of GPU memory (60 GB of weights + 20%) but the GPUs it requests "
        "have less (mix (priority 2 (g2-standard-8)): 1 x 24 GB): it fails to load",
        "drop priority 2 (g2-standard-8) from pool mix's ComputeClass or give it larger GPUs; or "
        f"request 3 GPU(s) on a pool with 3+ GPUs per node, {WEIGHTS_FIX}",
    )


@pytest.mark.parametrize(
    ("graph", "resource", "have", "more"),
    [
        pytest.param(
            [
                autopilot_cluster(),
                sized(
                    deployment(
                        "w",
                        pod(
                            selector={"cloud.google.com/gke-accelerator": "nvidia-l4"},
                            tolerations=[],
                        ),
                    ),
                    {SIZE: "40"},
                ),
            ],
            "Deployment/w",
            "autopilot-1 (accelerator nvidia-l4): 1 x 24 GB",
            "request 2 GPU(s)",
            id="autopilot",
        ),
        pytest.param(
            [
                agent_pool("a100"),
                sized(deployment("w", pod("a100", tolerations=TOL_SKU)), {SIZE: "100"}),
            ],
            "Deployment/w",
            "a100: 1 x 80 GB",
            "request 2 GPU(s) on a pool with 2+ GPUs per node",
            id="aks-agent-pool",
        ),
        pytest.param(
            [
                nap_nodepool("nap", [req("karpenter.azure.com/sku-gpu-name", "In", "A100")]),
                aks_node_class("nap"),
                sized(deployment("w", pod("nap", tolerations=TOL_SKU)), {SIZE: "100"}),
            ],
            "Deployment/w",
            "nap (VM sizes Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4, "
            "Standard_NC96ads_A100_v4, Standard_ND96amsr_A100_v4): 1 x 80 GB",
            "request 2 GPU(s)",
            id="aks-node-auto-provisioning",
        ),
        pytest.param(
            [
                nodepool(
                    "auto",
                    [
                        req("eks.amazonaws.com/instance-family", "In", "g6"),
                        req("eks.amazonaws.com/instance-gpu-count", "In", "1"),
                    ],
                    auto_mode=True,
                ),
                sized(deployment("w", pod("auto")), W70),
            ],
            "Deployment/w",
            "auto (instance types g6.xlarge, g6.2xlarge, g6.4xlarge, g6.8xlarge, g6.16xlarge): "
            "1 x 24 GB",
            "request 7 GPU(s) on a pool with 7+ GPUs per node",
            id="eks-auto-mode",
        ),
    ],
)
def test_model_too_large_on_every_other_pool_kind(graph, resource, have, more):
    severity, where, message, fix = one(graph, "GI019")
    assert (severity, where) == ("error", resource)
    assert message.endswith(f"but the GPUs it requests have less ({have}): it fails to load")
    assert fix == f"{more}, {WEIGHTS_FIX}"


# -- GI059: not judged, and why -----------------------------------------------------------------


def test_unknown_gpu_memory_is_not_judged_and_says_so():
    """The catalog holds no memory for B200 (not modelled): GI019 cannot decide, GI059 says."""
    spec = pod(selector={"cloud.google.com/gke-accelerator": "nvidia-b200"}, gpus=8, tolerations=[])
    graph = [autopilot_cluster(), sized(deployment("w", spec), {SIZE: "40"})]
    assert found(graph, "GI019") == []
    assert one(graph, "GI059") == (
        "info",
        "Deployment/w",
        "whether its model fits its GPUs (GI019) is not judged on pool autopilot-1: the memory "
        "of nvidia-b200 on autopilot-1 (accelerator nvidia-b200) is unknown",
        "use a GPU the catalog knows (components/model/nodes/gpus.py), or on existing nodes "
        "label them with GPU feature discovery's nvidia.com/gpu.memory (MiB)",
    )


def isvc(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A raw InferenceService whose predictor downloads a model onto one GPU of pool g6."""
    resources = {
        "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
        "limits": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
    }
    return {
        "type": "kubernetes:serving.kserve.io/v1beta1:InferenceService",
        "name": "m",
        "inputs": {
            "metadata": {
                "name": "m",
                "namespace": "s",
                "annotations": {"serving.kserve.io/deploymentMode": "RawDeployment"}
                | (annotations or {}),
            },
            "spec": {
                "predictor": {
                    "nodeSelector": {"gpu-inference.dev/pool": "g6"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "model": {
                        "modelFormat": {"name": "huggingface"},
                        "storageUri": "s3://bucket/model",
                        "resources": resources,
                    },
                }
            },
        },
    }


def test_a_model_size_not_given_is_not_judged_and_says_what_to_state():
    assert one([G6_ONE_GPU, nodeclass(), isvc()], "GI059") == (
        "info",
        "InferenceService/m/predictor",
        "whether its model fits its GPUs (GI019) is not judged: its model's size is not given",
        "state it on the workload: gpu-inference.dev/model-size-gb (GB of weights), or "
        "gpu-inference.dev/model-parameters and gpu-inference.dev/model-dtype",
    )
    entry = llmisvc(
        model=None,
        parallelism={},
        template=vllm("g6", 1),
        wiring={"decode": "g6", "scheduler": "cpu"},
    )
    assert one([G6_ONE_GPU, nodeclass(), CPU, entry], "GI059")[3] == (
        "state it on the workload: gpu-inference.dev/model-size-gb (GB of weights), or "
        "gpu-inference.dev/model-parameters and gpu-inference.dev/model-dtype; or "
        "gpu-inference.dev/model naming a row of the model table"
    )


def test_a_gpu_pod_loading_no_model_is_not_said():
    """A GPU Deployment that states no model and downloads none: nothing to judge, nothing said."""
    assert found([G6_ONE_GPU, nodeclass(), deployment("w", pod("g6"))], "GI059") == []


MODEL_FIT_PAIRS = [
    pytest.param(
        "GI059",
        [G6_ONE_GPU, nodeclass(), isvc()],
        [G6_ONE_GPU, nodeclass(), isvc({SIZE: "8"})],
        id="GI059-model-size-not-given",
    ),
]


# -- Saying it: the three counts, and "not judged" as an error for a CI gate --------------------


def test_the_summary_counts_pods_judged_clean_not_judged_and_errors():
    graph = [G6_ONE_GPU, nodeclass(), isvc(), sized(deployment("w", pod("g6")), {SIZE: "8"})]
    report = check(graph)
    assert [w.resource for w in report.judged_clean] == ["Deployment/w"]
    assert report.not_judged == ("InferenceService/m/predictor",)
    summary = report.to_json()["summary"]
    assert (summary["judgedClean"], summary["notJudged"], summary["errors"]) == (1, 1, 0)
    assert report.to_json()["notJudged"] == ["InferenceService/m/predictor"]
    first = render_markdown(report).splitlines()[2]
    assert first.startswith(
        "0 error(s), 2 warning(s), 1 info. Pod templates: 1 judged clean, 1 not judged by some "
        "rule (GI006, GI022, GI044, GI059 say which and why). "
    )


def test_not_judged_as_an_error_for_a_ci_gate():
    graph = [G6_ONE_GPU, nodeclass(), isvc()]
    assert check(graph).errors == []
    strict = check(graph, not_judged="error")
    assert [(f.code, f.severity, f.resource) for f in strict.errors] == [
        ("GI059", "error", "InferenceService/m/predictor")
    ]
    with pytest.raises(ValueError, match="not_judged 'warn': give one of info, error"):
        check(graph, not_judged="warn")


def test_the_cli_gate_exits_1_on_what_was_not_judged(tmp_path, capsys):
    file = tmp_path / "graph.json"
    file.write_text(json.dumps([G6_ONE_GPU, nodeclass(), isvc()]))
    assert main(["check", str(file)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "3 resources; placement: 0 errors, 2 warnings; pods: 0 judged clean, 1 not judged by "
        "some rule"
    )
    assert main(["check", str(file), "--not-judged", "error"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (
        "3 resources; placement: 1 error, 2 warnings; pods: 0 judged clean, 1 not judged by "
        "some rule"
    )
    assert lines[1].startswith("  error GI059 InferenceService/m/predictor: whether its model")


# -- The example stacks: judged, and an error when the model grows ------------------------------


def _grown(example_previews, stack: str, name: str, size: str) -> list[dict[str, Any]]:
    graph = json.loads((example_previews[stack].out_dir / "resources.json").read_text())
    for e in graph:
        if "serving.kserve.io" in e["type"] and e["name"].endswith(name):
            e["inputs"]["metadata"]["annotations"]["gpu-inference.dev/model-size-gb"] = size
    return graph


@pytest.mark.parametrize(
    ("stack", "name", "size", "have"),
    [
        pytest.param(
            "gke-computeclass",
            "gemma-9b",
            "60",
            "l4 (priorities 1 (g2-standard-12), 2 (g2-standard-12), 3 (g2-standard-12), 4 "
            "(g2-standard-12)): 1 x 24 GB",
            id="computeclass-priorities",
        ),
        pytest.param(
            "eks-karpenter",
            "llama-8b",
            "30",
            "l4-a10g (instance types g5.xlarge, g5.2xlarge, g5.4xlarge, g5.8xlarge, g5.16xlarge, "
            "g6.xlarge, g6.2xlarge, g6.4xlarge, g6.8xlarge, g6.16xlarge): 1 x 24 GB",
            id="karpenter-instance-types",
        ),
    ],
)
def test_an_example_stack_is_judged_and_a_larger_model_is_an_error(
    example_previews, stack, name, size, have
):
    graph = json.loads((example_previews[stack].out_dir / "resources.json").read_text())
    assert [f for f in check(graph).findings if f.code in ("GI019", "GI059")] == []
    (grown,) = found(_grown(example_previews, stack, name, size), "GI019")
    assert grown.message.endswith(f"but the GPUs it requests have less ({have}): it fails to load")
