"""Our GKE NodePool, registered without `pulumi_gcp.container`, reaches the engine exactly as
the SDK's `gcp.container.NodePool` sends it: every field of the register request equal, for
pools that take every branch of `gke_node_pool_inputs`.

The SDK class is given the same inputs with snake_case keys (the Python names it translates);
a camelCase key of ours that the SDK does not know would reach it untranslated and differ."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp
import pytest

from components.kube.objects import plugin_version
from components.pools.gke import GkeGpuNodePoolArgs, NodePool, plan_gke_pool
from tests.sdk_requests import sent, snake

USER_MAPS = ("labels", "resourceLabels")
"""Maps whose keys are the user's (label keys), not property names."""


def request(program: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    (one,) = [r for r in sent(program, monkeypatch) if r.get("type") == NODE_POOL]
    return one


NODE_POOL = "gcp:container/nodePool:NodePool"


def args(**kw: Any) -> GkeGpuNodePoolArgs:
    base: dict[str, Any] = dict(
        cluster="c", machine_type="g2-standard-8", accelerator="nvidia-l4", max_nodes=2
    )
    return GkeGpuNodePoolArgs(**{**base, **kw})


POOLS = {
    "gpu": args(),
    "everything": args(
        location="us-central1",
        project="proj-1",
        node_locations=["us-central1-a", "us-central1-b"],
        spot=True,
        min_nodes=1,
        labels={"Team": "ml"},
        disk_size_gb=200,
        disk_type="pd-ssd",
        image_streaming=True,
        service_account="gke-gpu-nodes@proj-1.iam.gserviceaccount.com",
        gpu_driver_version="LATEST",
        secure_boot=True,
        location_policy="BALANCED",
    ),
    "no gke metadata": args(gke_metadata=False),
    "time sharing": args(gpu_sharing_strategy="TIME_SHARING", max_shared_clients_per_gpu=4),
    "mig": args(
        machine_type="a2-highgpu-2g", accelerator="nvidia-tesla-a100", gpu_partition_size="1g.5gb"
    ),
    "dra": args(machine_type="g2-standard-24", gpu_count=2, dra=True),
    "cpu": GkeGpuNodePoolArgs(cluster="c", machine_type="n2-standard-8", max_nodes=3),
}


@pytest.mark.parametrize("pool", sorted(POOLS))
def test_the_request_is_the_sdk_classes(pool: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = plan_gke_pool("p", POOLS[pool]).node_pool

    def sdk() -> None:
        parent = pulumi.ComponentResource("test:index:Pool", "p", None)
        gcp.container.NodePool(
            "p", **snake(inputs, USER_MAPS), opts=pulumi.ResourceOptions(parent=parent)
        )

    def ours() -> None:
        parent = pulumi.ComponentResource("test:index:Pool", "p", None)
        NodePool("p", inputs, opts=pulumi.ResourceOptions(parent=parent))

    theirs = request(sdk, monkeypatch)
    mine = request(ours, monkeypatch)
    assert mine == theirs
    assert mine["version"] == plugin_version("pulumi_gcp")
