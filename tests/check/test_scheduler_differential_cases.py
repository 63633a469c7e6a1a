"""Cases where the scheduler differential (tests/e2e/test_scheduler_differential.py) found the check
wrong, kept here as plain unit tests (no rig) so they stay fixed. The scheduler is right."""

from __future__ import annotations

from typing import Any

import pytest

from components.check import check

GPU_TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}


def node(name: str, gpus: int, taints: list[dict] | None = None, **labels: str) -> dict:
    """An existing node of pool `rtx` with its own GPU count."""
    return {
        "type": "kubernetes:core/v1:NodePatch",
        "name": name,
        "inputs": {
            "metadata": {
                "name": name,
                "labels": {"gpu-inference.dev/pool": "rtx", **labels},
                "annotations": {"gpu-inference.dev/gpus-per-node": str(gpus)},
            },
            "spec": {"taints": taints or []},
        },
    }


def pod(gpus: int, **spec: Any) -> dict:
    container = {"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": "app",
        "inputs": {
            "metadata": {"name": "app", "namespace": "default"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [container], **spec}}},
        },
    }


# Seed 77, case 60: a pool of an untainted 3-GPU node and a 1-GPU node; a pod asking for 2 GPUs
# was said to stay out (the check compared with the pool's smallest node) but the scheduler bound
# it to the 3-GPU node. Case 252 (ExtendedResourceToleration on): a tainted 1-GPU node and an
# untainted 0-GPU node; the 1-GPU pod tolerates the taint through the plugin and lands on the
# first. The check now asks, node by node, for both the labels and taints and the GPUs.
@pytest.mark.parametrize(
    ("nodes", "ert", "gpus", "spec", "lands"),
    [
        ([node("big", 3), node("small", 1)], False, 2, {}, True),
        ([node("big", 3), node("small", 1)], False, 4, {}, False),
        ([node("gpu", 1, [GPU_TAINT]), node("cpu", 0)], True, 1, {}, True),
        ([node("gpu", 1, [GPU_TAINT]), node("cpu", 0)], False, 1, {}, False),
        # Labels and GPUs must hold on the same node: selecting the small node keeps it out.
        (
            [node("big", 3), node("small", 1, size="s")],
            False,
            2,
            {"nodeSelector": {"size": "s"}},
            False,
        ),
    ],
    ids=["bigger-node", "no-node-big-enough", "ert-on", "ert-off", "selected-node-too-small"],
)
def test_a_pool_of_unequal_nodes_takes_a_pod_one_of_its_nodes_can_hold(
    nodes: list[dict], ert: bool, gpus: int, spec: dict, lands: bool
) -> None:
    report = check([*nodes, pod(gpus, **spec)], extended_resource_toleration=ert)
    (w,) = report.workloads
    assert w.pools == (("rtx",) if lands else ())
    stuck = [f for f in report.findings if f.code in ("GI001", "GI004")]
    assert bool(stuck) is not lands, [f.message for f in report.findings]


# Seed 575937295, cases 180-181: containers asking 1000m and 1 GPU and a native sidecar init
# container (restartPolicy Always) asking 1 more, on a 2-GPU node. The check counted the sidecar
# like an init container (the larger of the containers' 2 and its 1) and said it lands; the
# scheduler adds a sidecar to the containers (3 GPUs): Insufficient nvidia.com/gpu.
@pytest.mark.parametrize(
    ("init", "lands"),
    [
        ({"restartPolicy": "Always"}, False),  # a sidecar: 1000m + 1 + 1 = 3 GPUs
        ({}, True),  # a plain init container runs before: max(2, 1) = 2 GPUs
    ],
    ids=["sidecar-adds", "init-runs-before"],
)
def test_a_sidecar_init_containers_gpus_add_to_the_containers(init: dict, lands: bool) -> None:
    d = pod(1)
    spec = d["inputs"]["spec"]["template"]["spec"]
    spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1000m"
    spec["containers"].append(
        {"name": "c1", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    )
    spec["initContainers"] = [
        {"name": "i0", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}, **init}
    ]
    report = check([node("two", 2), d], extended_resource_toleration=False)
    (w,) = report.workloads
    assert w.gpus == (2 if lands else 3)
    assert w.pools == (("rtx",) if lands else ())
    assert [f.code for f in report.findings if f.severity == "error"] == (
        [] if lands else ["GI004"]
    )
