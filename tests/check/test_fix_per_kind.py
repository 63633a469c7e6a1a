"""Each fix fits the pool kind it is said of: GI008 offers a minimum only where the pool has one
(Karpenter, ComputeClasses and Autopilot have none: gpu-inference refuses `minNodes` there) and
scale to zero only to InferenceServices (an LLMInferenceService needs minReplicas >= 1); GI024
names the pool's own disk key. Exact texts, one row per kind."""

from __future__ import annotations

from typing import Any

import pytest
from llm_graphs import CPU, llmisvc, vllm
from scale_graphs import autopilot_cluster, deployment, nodeclass, nodepool, pod, req
from test_aks_check import agent_pool, aks_node_class, nap_nodepool

from components.check import check

POOL = "gpu-inference.dev/pool"
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists"}
TOL_SKU = {"key": "sku", "operator": "Exists"}
WARM = "to keep nodes warm for them, run them on a node pool or node group with minNodes"
KARPENTER_NO_MIN = (
    "accept that its nodes stay up while they run: Karpenter has no minimum of nodes (minNodes "
    f"is refused on a Karpenter pool); {WARM}"
)


def gke_pool(name: str, machine: str = "g2-standard-8", disk: int = 100) -> dict[str, Any]:
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {
            "name": name,
            "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2},
            "nodeConfig": {"machineType": machine, "diskSizeGb": disk, "labels": {POOL: name}},
        },
    }


def compute_class(name: str = "l4-class", disk: int | None = None) -> dict[str, Any]:
    priority: dict[str, Any] = {"machineType": "g2-standard-8"}
    if disk is not None:
        priority["storage"] = {"bootDiskSize": disk}
    return {
        "type": "kubernetes:cloud.google.com/v1:ComputeClass",
        "name": name,
        "inputs": {"metadata": {"name": name}, "spec": {"priorities": [priority]}},
    }


def isvc(selector: dict[str, str], size_gb: int = 8, tolerations=None) -> dict[str, Any]:
    """A raw InferenceService downloading a `size_gb` model onto one GPU."""
    resources = {
        "requests": {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
        "limits": {"nvidia.com/gpu": "1"},
    }
    annotations = {
        "serving.kserve.io/deploymentMode": "RawDeployment",
        "gpu-inference.dev/model-size-gb": str(size_gb),
    }
    return {
        "type": "kubernetes:serving.kserve.io/v1beta1:InferenceService",
        "name": "m",
        "inputs": {
            "metadata": {"name": "m", "namespace": "s", "annotations": annotations},
            "spec": {
                "predictor": {
                    "nodeSelector": selector,
                    "tolerations": tolerations or [TOL_GPU],
                    "model": {
                        "modelFormat": {"name": "huggingface"},
                        "storageUri": "s3://bucket/model",
                        "resources": resources,
                    },
                }
            },
        },
    }


def fix_of(graph: list[dict[str, Any]], code: str) -> str:
    (found,) = [f for f in check(graph).findings if f.code == code]
    return found.fix


G6 = nodepool("g6", [req("karpenter.k8s.aws/instance-family", "In", "g6")])
ON_CLASS = {"cloud.google.com/compute-class": "l4-class"}
LLM_ON_G6 = llmisvc(
    model="llama-3.1-8b",
    parallelism={},
    template=vllm("g6", 1),
    wiring={"decode": "g6", "scheduler": "cpu"},
)


@pytest.mark.parametrize(
    ("graph", "fix"),
    [
        pytest.param(
            [gke_pool("l4"), isvc({POOL: "l4"})],
            "let the InferenceServices scale to zero (Serverless, with minReplicas 0) or give "
            "the pool the minimum of nodes they keep busy (minNodes)",
            id="gke-node-pool-isvc",
        ),
        pytest.param(
            [gke_pool("l4"), deployment("w", pod("l4", tolerations=[TOL_GPU]))],
            "give the pool the minimum of nodes they keep busy (minNodes)",
            id="gke-node-pool-deployment",
        ),
        pytest.param(
            [G6, nodeclass(), isvc({POOL: "g6"})],
            "let the InferenceServices scale to zero (Serverless, with minReplicas 0); or "
            + KARPENTER_NO_MIN,
            id="karpenter-isvc",
        ),
        pytest.param(
            [G6, nodeclass(), CPU, LLM_ON_G6], KARPENTER_NO_MIN, id="karpenter-llmisvc-no-zero"
        ),
        pytest.param(
            [
                nap_nodepool("nap", [req("karpenter.azure.com/sku-gpu-name", "In", "A100")]),
                aks_node_class("nap"),
                deployment("w", pod("nap", tolerations=[TOL_SKU])),
            ],
            "accept that its nodes stay up while they run: Karpenter has no minimum of nodes "
            f"(minNodes is refused on a node auto-provisioning pool); {WARM}",
            id="nap",
        ),
        pytest.param(
            [compute_class(), deployment("w", pod(selector=ON_CLASS, tolerations=[TOL_GPU]))],
            "accept that its nodes stay up while they run: a ComputeClass has no minimum of "
            f"nodes (GKE creates its node pools; minNodes is refused on it); {WARM}",
            id="compute-class",
        ),
        pytest.param(
            [
                autopilot_cluster(),
                deployment(
                    "w",
                    pod(selector={"cloud.google.com/gke-accelerator": "nvidia-l4"}, tolerations=[]),
                ),
            ],
            "accept that its nodes stay up while they run: Autopilot has no minimum of nodes "
            f"(it makes a node per pod); {WARM}",
            id="autopilot",
        ),
        pytest.param(
            [agent_pool("a100"), deployment("w", pod("a100", tolerations=[TOL_SKU]))],
            "give the pool the minimum of nodes they keep busy (minNodes)",
            id="aks-agent-pool",
        ),
    ],
)
def test_gi008_fix_fits_the_pool_kind_and_the_workloads(graph, fix):
    assert fix_of(graph, "GI008") == fix


@pytest.mark.parametrize(
    ("graph", "fix"),
    [
        pytest.param(
            [gke_pool("l4", disk=50), isvc({POOL: "l4"}, 60)],
            "give pool l4 a boot disk of at least 123 GB (diskSizeGb)",
            id="gke-node-pool",
        ),
        pytest.param(
            [compute_class(disk=50), isvc(ON_CLASS, 60)],
            "give pool l4-class a boot disk of at least 123 GB (computeClass.bootDiskSizeGb)",
            id="compute-class",
        ),
        pytest.param(
            [agent_pool("a100", os_disk=64), isvc({POOL: "a100"}, 100, [TOL_GPU, TOL_SKU])],
            "give pool a100 a boot disk of at least 107 GiB (osDiskSizeGb)",
            id="aks-agent-pool",
        ),
    ],
)
def test_gi024_names_the_disk_key_of_the_pool_kind(graph, fix):
    assert fix_of(graph, "GI024") == fix
