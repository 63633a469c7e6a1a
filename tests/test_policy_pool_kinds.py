"""`gpu-pool-untainted` on the newer pool kinds, its `validate` called as the engine calls it
(props in pulumi_policy's unknown-checking proxies): a Karpenter NodePool whose requirements admit
GPU instance types needs a NoSchedule / NoExecute taint in `spec.template.spec.taints`; a GKE
ComputeClass and a GKE Autopilot pool pass (GKE taints their nodes itself; Autopilot has no node
pool resource)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pulumi_policy",
    reason="pulumi-policy is not installed: pip install -r policy/requirements.txt (see README)",
)

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResourceOptions,
    ResourceValidationArgs,
)
from pulumi_policy.proxy import UNKNOWN_ARRAY_VALUE, UnknownValueError, unknown_checking_proxy

from components.pools.autopilot import GkeAutopilotGpuPoolArgs
from components.pools.compute_class import GkeGpuComputeClassArgs, validate_compute_class_args
from components.pools.karpenter import KarpenterGpuNodePoolArgs, validate_karpenter_pool_args

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "policy") not in sys.path:
    sys.path.insert(0, str(ROOT / "policy"))

import gpu_inference_policies as gp  # noqa: E402

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
COMPUTE_CLASS = "kubernetes:cloud.google.com/v1:ComputeClass"
AUTOPILOT = "gpu-inference:index:GkeAutopilotGpuPool"
OPTS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def validate(typ: str, props: dict[str, Any]) -> list[str]:
    args = ResourceValidationArgs(
        typ, unknown_checking_proxy(props), f"urn:pulumi:t::p::{typ}::r", "r", OPTS, None
    )
    seen: list[str] = []
    assert gp.gpu_pool_untainted.validate(args, lambda m, urn=None: seen.append(m)) is None
    return seen


def node_pool(requirements: list[dict], taints: list[dict] | None = None, **spec: Any) -> dict:
    """A `karpenter.sh/v1` NodePool as a program declares it."""
    template: dict[str, Any] = {
        "requirements": requirements,
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
        **spec,
    }
    if taints is not None:
        template["taints"] = taints
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "gpu"},
        "spec": {"template": {"spec": template}},
    }


G6 = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6"]}]
A10G_L4 = [
    {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a10g", "l4"]}
]
G5_M6I = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5", "m6i"]}]
ANY_AMD64 = [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]
CPU_ONLY = [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]}]


def _message(what: str) -> str:
    return (
        f"GPU node pool gpu ({what}) has no NoSchedule or NoExecute taint (Karpenter puts "
        "spec.template.spec.taints on its nodes and adds no GPU taint): pods that need no GPU can "
        "land on its nodes and keep them up. Fix: taint it, e.g. spec.template.spec.taints: "
        "[{key: nvidia.com/gpu, value: present, effect: NoSchedule}] (a NodePool of its own for "
        "the GPU instance types, when it admits others too), and give the inference pods the "
        "matching toleration."
    )


@pytest.mark.parametrize(
    ("requirements", "what"),
    [
        (G6, "l4, up to 8 GPUs per node"),
        (A10G_L4, "a10g, l4, up to 8 GPUs per node"),
        # The catalog knows GPU instance types only: m6i is not seen, the pool reads as g5's.
        (G5_M6I, "a10g, up to 8 GPUs per node"),
        (
            ANY_AMD64,
            "a100, a10g, h100 and 5 more, up to 8 GPUs per node, beside instance types without "
            "GPUs",
        ),
    ],
    ids=["family", "gpu-names", "listed-families", "any-instance-type"],
)
def test_untainted_karpenter_gpu_node_pool(requirements, what):
    assert validate(NODE_POOL, node_pool(requirements)) == [_message(what)]
    assert validate(NODE_POOL, node_pool(requirements, taints=[])) == [_message(what)]
    # Twin: a NoSchedule (or NoExecute) taint on the template.
    assert validate(NODE_POOL, node_pool(requirements, taints=[GPU_TAINT])) == []
    noexecute = {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}
    assert validate(NODE_POOL, node_pool(requirements, taints=[noexecute])) == []


def test_startup_taints_and_prefer_no_schedule_do_not_count():
    prefer = {**GPU_TAINT, "effect": "PreferNoSchedule"}
    bad = node_pool(G6, taints=[prefer], startupTaints=[GPU_TAINT])
    assert validate(NODE_POOL, bad) == [_message("l4, up to 8 GPUs per node")]


def test_karpenter_cpu_node_pool_passes():
    assert validate(NODE_POOL, node_pool(CPU_ONLY)) == []


def test_auto_mode_node_pool():
    auto = [{"key": "eks.amazonaws.com/instance-gpu-name", "operator": "In", "values": ["l4"]}]
    bad = node_pool(auto, nodeClassRef={"group": "eks.amazonaws.com", "kind": "NodeClass"})
    assert validate(NODE_POOL, bad) == [_message("l4, up to 8 GPUs per node")]
    good = copy.deepcopy(bad)
    good["spec"]["template"]["spec"]["taints"] = [GPU_TAINT]
    assert validate(NODE_POOL, good) == []


def test_our_karpenter_pool_passes_and_untainted_copy_is_reported():
    plan = validate_karpenter_pool_args(
        "a10g", KarpenterGpuNodePoolArgs(cluster_name="c", node_role="r", gpu_names=["a10g"])
    )
    props = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", **plan.node_pool}
    assert validate(NODE_POOL, props) == []
    bare = copy.deepcopy(props)
    del bare["spec"]["template"]["spec"]["taints"]
    (message,) = validate(NODE_POOL, bare)
    assert message.startswith("GPU node pool a10g (a10g, up to 8 GPUs per node) has no ")


def test_unknown_karpenter_props_are_no_verdict():
    unknown_taints = node_pool(G6)
    unknown_taints["spec"]["template"]["spec"]["taints"] = UNKNOWN_ARRAY_VALUE
    with pytest.raises(UnknownValueError):
        validate(NODE_POOL, unknown_taints)
    unknown_reqs = node_pool(G6)
    unknown_reqs["spec"]["template"]["spec"]["requirements"] = UNKNOWN_ARRAY_VALUE
    with pytest.raises(UnknownValueError):
        validate(NODE_POOL, unknown_reqs)


def test_compute_class_passes_even_without_taints_of_its_own():
    """GKE taints every node it creates for a class (`cloud.google.com/compute-class=<class>:
    NoSchedule`) and GPU nodes `nvidia.com/gpu=present:NoSchedule`: nothing to report."""
    plan = validate_compute_class_args(
        "l4",
        GkeGpuComputeClassArgs(accelerator="nvidia-l4", machine_type="g2-standard-8"),
    )
    props = {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", **plan.compute_class}
    assert validate(COMPUTE_CLASS, props) == []
    bare = copy.deepcopy(props)
    bare["spec"].get("nodePoolConfig", {}).pop("taints", None)
    assert validate(COMPUTE_CLASS, bare) == []


def test_autopilot_pool_has_nothing_to_check():
    args = GkeAutopilotGpuPoolArgs(accelerator="nvidia-l4")
    assert validate(AUTOPILOT, {"poolName": "l4", "accelerator": args.accelerator}) == []
