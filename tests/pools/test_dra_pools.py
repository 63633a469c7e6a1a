"""DRA pools beyond GKE (issue #32): EKS managed node groups and existing nodes set up for NVIDIA's
DRA driver, the driver pinned to the DRA pools and the device plugin kept off them, and the
whole platform read back by the placement check."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from config_bases import DEL, mutated

from components.check import check
from components.model.errors import InputError
from components.model.nodes.dra_devices import node_devices
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform
from components.pools.eks import EksGpuNodeGroupArgs, validate_eks_pool_args
from components.pools.existing import ExistingGpuNodesArgs, validate_existing_nodes_args
from components.preview.mockrun import run_program
from components.serving.nvidia_device_plugin import NvidiaDevicePluginArgs, device_plugin_values
from components.serving.nvidia_dra_driver import NvidiaDraDriverArgs, dra_driver_values

RELEASE = "kubernetes:helm.sh/v3:Release"
CA = "k8s.io/cluster-autoscaler/node-template/"


def eks(**kw: Any) -> EksGpuNodeGroupArgs:
    return EksGpuNodeGroupArgs(
        cluster_name="prod", subnet_ids=["subnet-a"], instance_types=["g6.12xlarge"], **kw
    )


def test_an_eks_dra_group_is_labelled_for_the_driver_and_tags_no_gpu_resource():
    plan = validate_eks_pool_args("l4", eks(dra=True, max_nodes=2))
    assert plan.facts.labels["nvidia.com/gpu.present"] == "true"
    assert plan.ami_type == "AL2023_x86_64_NVIDIA"
    assert plan.asg_tags[f"{CA}label/nvidia.com/gpu.present"] == "true"
    assert f"{CA}resources/nvidia.com/gpu" not in plan.asg_tags
    plain = validate_eks_pool_args("l4", eks(max_nodes=2))
    assert plain.asg_tags[f"{CA}resources/nvidia.com/gpu"] == "4"
    assert "nvidia.com/gpu.present" not in plain.facts.labels


def test_existing_dra_nodes_carry_the_devices_the_check_reads():
    plan = validate_existing_nodes_args(
        "a100",
        ExistingGpuNodesArgs(
            nodes=["n1"],
            gpus_per_node=2,
            gpu_model="A100 80GB",
            dra=True,
            dra_mig_profile="3g.40gb",
        ),
    )
    metadata = plan.patches["n1"]["metadata"]
    assert metadata["labels"] == {
        "gpu-inference.dev/pool": "a100",
        "nvidia.com/gpu.present": "true",
        "gpu-inference.dev/dra-mig-profile": "3g.40gb",
    }
    devices = json.loads(metadata["annotations"]["gpu-inference.dev/dra-devices"])
    assert devices == json.loads(json.dumps(list(node_devices("A100 80GB", 2, "3g.40gb", 2))))
    assert [d["name"] for d in devices] == [
        "gpu-0-mig-3g40gb-0",
        "gpu-0-mig-3g40gb-1",
        "gpu-1-mig-3g40gb-0",
        "gpu-1-mig-3g40gb-1",
    ]
    whole = validate_existing_nodes_args(
        "h100", ExistingGpuNodesArgs(nodes=["n2"], gpus_per_node=8, gpu_model="H100", dra=True)
    )
    whole_devices = json.loads(
        whole.patches["n2"]["metadata"]["annotations"]["gpu-inference.dev/dra-devices"]
    )
    assert len(whole_devices) == 8
    assert whole_devices[0]["attributes"]["productName"] == {"string": "NVIDIA H100 80GB HBM3"}


def test_existing_dra_refuses_zero_gpus_and_time_slicing():
    with pytest.raises(InputError, match="dra is set on nodes with 0 GPUs"):
        validate_existing_nodes_args("c", ExistingGpuNodesArgs(nodes=["n"], dra=True))
    with pytest.raises(InputError, match="time-slicing is the NVIDIA device plugin's"):
        validate_existing_nodes_args(
            "c",
            ExistingGpuNodesArgs(
                nodes=["n"], gpus_per_node=1, gpu_model="L4", dra=True, time_slicing_replicas=2
            ),
        )


def test_the_driver_is_pinned_to_the_dra_pools_and_the_device_plugin_kept_off_them():
    driver = dra_driver_values(
        NvidiaDraDriverArgs(pool_label="gpu-inference.dev/pool", pool_label_values=["b", "a"])
    )
    assert driver["kubeletPlugin"]["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "gpu-inference.dev/pool",
                                "operator": "In",
                                "values": ["a", "b"],
                            }
                        ]
                    }
                ]
            }
        }
    }
    plugin = device_plugin_values(
        NvidiaDevicePluginArgs(
            pool_label="gpu-inference.dev/pool", dra_pool_label_values=["a"], avoid_auto_mode=True
        )
    )
    assert plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "gpu-inference.dev/pool", "operator": "NotIn", "values": ["a"]},
                    {
                        "key": "eks.amazonaws.com/compute-type",
                        "operator": "NotIn",
                        "values": ["auto"],
                    },
                ]
            }
        ]
    }


def _platform(base: str, changes: dict) -> list[dict[str, Any]]:
    spec = load_spec(mutated(base, changes))
    graph = run_program(lambda: InferencePlatform("gpu-inference", spec))
    return graph.as_graph()


def _release(graph: list[dict[str, Any]], chart: str) -> dict[str, Any]:
    (found,) = [e for e in graph if e["type"] == RELEASE and e["inputs"]["chart"].endswith(chart)]
    return found["inputs"]["values"]


EKS_DRA = {
    "pools[0].dra": True,
    "pools[0].minNodes": 1,  # cluster-autoscaler scales no empty group up for claims (GI057)
    "inferenceServices[0].predictor.gpus": DEL,
    "inferenceServices[0].predictor.gpuClaim": {"count": 1},
    "seldon": DEL,
}


@pytest.fixture(scope="module")
def eks_dra() -> list[dict[str, Any]]:
    return _platform("eks", EKS_DRA)


def test_an_eks_platform_with_a_dra_group_runs_the_driver_there_and_the_plugin_elsewhere(eks_dra):
    graph = eks_dra
    driver = _release(graph, "dra-driver-nvidia-gpu")
    terms = driver["kubeletPlugin"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "gpu-inference.dev/pool", "operator": "In", "values": ["g5"]}
            ]
        }
    ]
    # The pool's own taint (nvidia.com/gpu=true) is tolerated by the chart's default Exists one.
    assert driver["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    plugin = _release(graph, "nvidia-device-plugin")
    expressions = plugin["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"]
    assert {"key": "gpu-inference.dev/pool", "operator": "NotIn", "values": ["g5"]} in expressions
    report = check(graph)
    assert report.errors == []
    (predictor,) = [w for w in report.workloads if w.component == "predictor"]
    assert predictor.pools == ("g5",) and predictor.claimed_gpus == 1


def test_a_driver_whose_affinity_misses_the_pool_is_gi054(eks_dra):
    graph = copy.deepcopy(eks_dra)
    for e in graph:
        if e["type"] == RELEASE and e["inputs"]["chart"].endswith("dra-driver-nvidia-gpu"):
            terms = e["inputs"]["values"]["kubeletPlugin"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            terms[0]["matchExpressions"][0]["values"] = ["other"]
    found = [f for f in check(graph).errors if f.code == "GI054"]
    assert len(found) == 1 and "affinity do not let it in" in found[0].message


def test_a_dra_pool_is_not_asked_for_a_device_plugin():
    """GI012 (no device plugin tolerates the pool's taints) is a device-plugin pool's question:
    a DRA pool's GPUs are the driver's (GI054)."""
    graph = _platform(
        "existing",
        {
            "pools[0].dra": True,
            "pools[0].accelerator": "A100 80GB",
            "inferenceServices[0].deploymentMode": "RawDeployment",
            "inferenceServices[0].predictor.gpus": DEL,
            "inferenceServices[0].predictor.gpuClaim": {"count": 2},
            "addons": {"nvidiaDevicePlugin": {"enabled": False}},
            "knative": {"mode": "none"},
            "inferenceServices[0].transformer": DEL,
        },
    )
    report = check(graph)
    assert [f.code for f in report.findings if f.code in ("GI007", "GI012", "GI054")] == []
    assert report.errors == []
