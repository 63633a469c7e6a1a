"""How the check reads a NodePool, whatever its provider (`components.check.readers.karpenter`,
used by the EKS `karpenter` and AKS `nap` readers): the labels Karpenter puts on its nodes, the
template without GPUs, the node counts and the node classes by kind."""

from __future__ import annotations

from typing import Any

import pytest

from components.check.read import Findings
from components.check.readers.karpenter import (
    node_class_specs,
    node_counts,
    nodepool_head,
    read_nodepool,
    with_cpu_template,
)
from components.check.results import NodeTemplate
from components.model.autoscalers.karpenter import AWS_PREFIX
from components.model.autoscalers.karpenter_azure import AZURE_PREFIX

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


def entry(reqs: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "type": NODEPOOL,
        "name": "gpu",
        "inputs": {
            "metadata": {"name": "gpu"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"gpu-inference.dev/pool": "gpu"}},
                    "spec": {
                        "requirements": reqs,
                        "taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
                    },
                },
                **spec,
            },
        },
    }


def test_read_nodepool_labels_and_unreadable_requirements():
    out = Findings()
    pool = read_nodepool(
        entry(
            [
                {"key": AZURE_PREFIX + "sku-series", "operator": "In", "values": ["NCads_v4"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "x"]},
                {"key": "bad", "operator": "Sometimes"},
            ]
        ),
        out,
    )
    assert pool.labels == {
        "gpu-inference.dev/pool": "gpu",
        "karpenter.sh/nodepool": "gpu",
        AZURE_PREFIX + "sku-series": "NCads_v4",
    }
    assert [t.key for t in pool.taints] == ["sku"]
    assert len(pool.requirements) == 2
    assert [f.code for f in out.sorted()] == ["GI013"]


GPU = NodeTemplate(None, {"gpu": "yes"}, (), 1)


@pytest.mark.parametrize(
    "prefix, reqs, nodes, admits_cpu, first_labels",
    [
        # Only GPU keys on the provider's prefix: a node without GPUs is not admitted.
        (
            AZURE_PREFIX,
            [{"key": AZURE_PREFIX + "sku-gpu-count", "operator": "Gt", "values": ["0"]}],
            [GPU],
            False,
            {"gpu": "yes"},
        ),
        # Nothing on the provider's instance keys: a CPU node is admitted too, and leads.
        (
            AWS_PREFIX,
            [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            [GPU],
            True,
            {
                "kubernetes.io/os": "linux",
                "gpu-inference.dev/pool": "gpu",
                "kubernetes.io/arch": "amd64",
            },
        ),
        # Nothing admitted from the catalog: the template without GPUs stands alone.
        (
            AWS_PREFIX,
            [{"key": AWS_PREFIX + "instance-family", "operator": "In", "values": ["g6"]}],
            [],
            False,
            {"kubernetes.io/os": "linux", "gpu-inference.dev/pool": "gpu"},
        ),
    ],
)
def test_with_cpu_template(prefix, reqs, nodes, admits_cpu, first_labels):
    pool = read_nodepool(entry(reqs), Findings())
    found, admits = with_cpu_template(pool, list(nodes), prefix)
    assert admits is admits_cpu
    assert {k: v for k, v in found[0].labels.items() if k != "karpenter.sh/nodepool"} == (
        first_labels
    )
    assert len(found) == len(nodes) + (found[0] is not GPU)


@pytest.mark.parametrize(
    "spec, counts",
    [
        ({"limits": {"nodes": "4"}}, (0, 4)),
        ({"replicas": 2, "limits": {"nodes": 4}}, (2, 2)),
        ({}, (0, None)),
    ],
)
def test_node_counts(spec, counts):
    assert node_counts(nodepool_head(entry([], **spec))) == counts


def test_node_class_specs_by_kind():
    graph = [
        {
            "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
            "name": "a",
            "inputs": {"spec": {"x": 1}},
        },
        {
            "type": "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass",
            "name": "b",
            "inputs": {"metadata": {"name": "gpu"}, "spec": {"y": 2}},
        },
    ]
    assert node_class_specs(graph, "karpenter.azure.com", "AKSNodeClass") == {"gpu": {"y": 2}}
    assert node_class_specs(graph, "karpenter.k8s.aws", "EC2NodeClass") == {"a": {"x": 1}}
