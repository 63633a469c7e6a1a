"""NodeOverlays count only when Karpenter's NodeOverlay feature gate is on: it
is alpha and off by default in the Karpenter 1.14.1 chart (aws/karpenter-provider-aws v1.14.1
charts/karpenter/values.yaml `settings.featureGates.nodeOverlay: false`)."""

from __future__ import annotations

from typing import Any

import pytest
from scale_graphs import deployment, nodeclass, nodepool, pod, req

from components.check import check
from components.check.graph import read_templates
from components.check.read import Findings
from components.check.readers.karpenter import node_overlay_gate, node_overlays
from components.check.scaleup import ScaleUp
from components.model.scheduling import Placement

OVERLAY = {
    "type": "kubernetes:karpenter.sh/v1alpha1:NodeOverlay",
    "name": "g6-sliced",
    "inputs": {
        "metadata": {"name": "g6-sliced"},
        "spec": {
            "requirements": [
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": ["g6.xlarge"],
                }
            ],
            "capacity": {"nvidia.com/gpu": "4"},
        },
    },
}


def karpenter_release(values: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "karpenter",
        "inputs": {"chart": "karpenter", "namespace": "kube-system", "values": values or {}},
    }


@pytest.mark.parametrize(
    ("release", "on"),
    [
        (None, False),  # no Karpenter in the graph: the chart's default
        (karpenter_release(None), False),
        (karpenter_release({"settings": {"featureGates": {"nodeOverlay": False}}}), False),
        (karpenter_release({"settings": {"featureGates": {"nodeOverlay": True}}}), True),
    ],
)
def test_overlays_apply_only_with_the_gate_on(release: dict | None, on: bool):
    graph = [OVERLAY, *([release] if release else [])]
    assert node_overlay_gate(graph) is on
    assert len(node_overlays(graph)) == (1 if on else 0)


@pytest.mark.parametrize("on", [False, True])
def test_karpenter_launches_for_four_sliced_gpus_only_with_the_gate(on: bool):
    values = {"settings": {"featureGates": {"nodeOverlay": on}}}
    graph = [
        nodeclass(),
        nodepool("g6", [req("node.kubernetes.io/instance-type", "In", "g6.xlarge")]),
        OVERLAY,
        karpenter_release(values),
        deployment("w", pod("g6", gpus=4)),
    ]
    scale = ScaleUp(graph, Findings())
    (t,) = read_templates(graph, True)
    (kp,) = scale.karpenter.values()
    (it,) = [i for i in kp.instance_types if i.name == "g6.xlarge"]
    assert it.capacity.gpus == (4 if on else 1)
    placement = Placement.from_pod_spec(t.fragment)
    (pool,) = check(graph).pools
    (result,) = scale.launches(t, placement, pool)
    assert result.launches is on
