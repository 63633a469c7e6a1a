"""Pools whose node shapes differ in GPUs (a Karpenter NodePool's instance types, a ComputeClass's
priorities): a pod lands only where one shape both lets it in and has the GPUs it asks for. Before,
every shape carried the pool's largest count, so a pod pinned to a 1-GPU instance type asking for
4 GPUs was said to land while Karpenter would never launch a node for it."""

from __future__ import annotations

from typing import Any

import pytest

from components.check import check

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def node_pool(*requirements: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "kubernetes:karpenter.sh/v1:NodePool",
        "name": "gpu",
        "inputs": {
            "metadata": {"name": "gpu"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"gpu-inference.dev/pool": "gpu"}},
                    "spec": {
                        "requirements": list(requirements),
                        "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                        "nodeClassRef": {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": "gpu",
                        },
                    },
                }
            },
        },
    }


def compute_class() -> dict[str, Any]:
    return {
        "type": "kubernetes:cloud.google.com/v1:ComputeClass",
        "name": "l4",
        "inputs": {
            "metadata": {"name": "l4"},
            "spec": {
                "priorities": [
                    {"machineType": "g2-standard-8"},
                    {"machineType": "g2-standard-48"},
                ]
            },
        },
    }


def pod(gpus: int, node_selector: dict[str, str]) -> dict[str, Any]:
    container = {"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    spec = {
        "containers": [container],
        "nodeSelector": node_selector,
        "tolerations": [
            GPU_TOLERATION,
            {"key": "cloud.google.com/compute-class", "operator": "Exists", "effect": "NoSchedule"},
        ],
    }
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": "app",
        "inputs": {
            "metadata": {"name": "app", "namespace": "default"},
            "spec": {"replicas": 1, "template": {"spec": spec}},
        },
    }


G6 = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6"]}
TYPE = "node.kubernetes.io/instance-type"
COUNT = "cloud.google.com/gke-accelerator-count"


@pytest.mark.parametrize(
    ("pool", "gpus", "selector", "lands", "stuck"),
    [
        (node_pool(G6), 4, {TYPE: "g6.12xlarge"}, True, None),
        (
            node_pool(G6),
            4,
            {TYPE: "g6.xlarge"},
            False,
            "requests 4 GPU(s) per pod but the nodes it can land on have fewer (gpu: 1): "
            "it stays Pending",
        ),
        (node_pool(G6), 8, {}, True, None),  # g6.48xlarge has 8
        (node_pool(G6), 1, {TYPE: "g6.xlarge"}, True, None),
        (compute_class(), 4, {COUNT: "4"}, True, None),
        (
            compute_class(),
            2,
            {COUNT: "1"},
            False,
            "requests 2 GPU(s) per pod but the nodes it can land on have fewer (l4: 1): "
            "it stays Pending",
        ),
    ],
    ids=[
        "karpenter-big-type",
        "karpenter-small-type",
        "karpenter-any-type",
        "karpenter-small-type-one-gpu",
        "computeclass-big-priority",
        "computeclass-small-priority",
    ],
)
def test_a_pod_lands_only_on_a_shape_with_its_gpus(
    pool: dict[str, Any], gpus: int, selector: dict[str, str], lands: bool, stuck: str | None
) -> None:
    report = check([pool, pod(gpus, selector)])
    (w,) = report.workloads
    assert bool(w.pools) is lands
    messages = [f.message for f in report.findings if f.code == "GI004"]
    assert messages == ([stuck] if stuck else [])


def test_time_slicing_multiplies_every_shape() -> None:
    """The device plugin's time-slicing config (x4) applies to each instance type's own count."""
    plugin = {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "nvidia-device-plugin",
        "inputs": {
            "chart": "nvidia-device-plugin",
            "values": {
                "config": {
                    "map": {
                        "default": "version: v1\n",
                        "time-sliced-4": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                        "    - name: nvidia.com/gpu\n      replicas: 4\n",
                    },
                    "default": "time-sliced-4",
                }
            },
        },
    }
    report = check([node_pool(G6), plugin, pod(4, {TYPE: "g6.xlarge"})])
    (pool,) = report.pools
    assert {n.labels[TYPE]: n.gpus for n in pool.nodes if TYPE in n.labels}["g6.xlarge"] == 4
    assert report.workloads[0].pools == ("gpu",)
    assert [f.code for f in report.findings if f.code in ("GI001", "GI004")] == []
