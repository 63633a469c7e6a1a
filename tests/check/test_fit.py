"""The pod fits the node (GI021-GI025), on graphs written by hand as a plain Pulumi program would
register them: each rule triggered and silenced by its fix, with the numbers in its message, and
the requests as kube-scheduler sums them with what Knative, KServe and Seldon add."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_placement_check import node, seldon, workload

from components.check import check
from components.check.fit import pod_ask, pod_containers
from components.check.graph import read_templates
from components.model.nodes.daemonsets import system_daemons
from components.model.nodes.shapes import (
    Gi,
    Mi,
    Resources,
    eks_node_shape,
    gke_node_shape,
    karpenter_node_shape,
)
from tests.check.headroom import without_headroom

GKE_POOL = "gcp:container/nodePool:NodePool"
ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
TOL_SRV = {"key": "seldon-gpu-srv", "operator": "Exists", "effect": "NoSchedule"}
# What a GKE GPU node's own DaemonSets hold (kube-proxy 100m, GKE's device plugin 50m / 10Mi).
GKE_GPU_DAEMONS = sum((d.requests for d in system_daemons("gke-gpu")), Resources())
A2_2G_ALLOCATABLE = gke_node_shape("a2-ultragpu-2g").allocatable  # 23870m CPU, 43.77Gi disk
A2_2G = A2_2G_ALLOCATABLE - GKE_GPU_DAEMONS  # what it leaves the workloads: 23720m
G2_8 = gke_node_shape("g2-standard-8").allocatable - GKE_GPU_DAEMONS  # 7760m CPU


def gke(
    name: str,
    machine: str,
    *,
    disk: int | None = None,
    sharing: dict | None = None,
    accelerators: list[dict] | None = None,
    labels: dict | None = None,
) -> dict:
    nc: dict[str, Any] = {"machineType": machine, "labels": {"pool": name, **(labels or {})}}
    if disk is not None:
        nc["diskSizeGb"] = disk
    if accelerators is not None:
        nc["guestAccelerators"] = accelerators
    if sharing is not None:
        nc["guestAccelerators"] = [{"type": "nvidia-l4", "count": 1, "gpuSharingConfig": sharing}]
    return {
        "type": GKE_POOL,
        "name": name,
        "inputs": {
            "name": name,
            "nodeConfig": nc,
            "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2},
        },
    }


def res(gpus: int = 0, **requests: Any) -> dict:
    reqs = {k.replace("_", "-"): v for k, v in requests.items()}
    limits = {}
    if gpus:
        reqs["nvidia.com/gpu"] = gpus
        limits["nvidia.com/gpu"] = gpus
    return {"requests": reqs, "limits": limits} if limits else {"requests": reqs}


def pod(pool: str, *containers: dict, **extra: Any) -> dict:
    return {
        "nodeSelector": {"pool": pool},
        "tolerations": [TOL_GPU, TOL_SRV],
        "containers": list(containers),
        **extra,
    }


def c(name: str = "main", gpus: int = 1, **requests: Any) -> dict:
    return {"name": name, "image": "x", "resources": res(gpus, **requests)}


def isvc(name: str, pool: str, model: dict, *, mode: str, annotations: dict | None = None) -> dict:
    return {
        "type": ISVC,
        "name": name,
        "inputs": {
            "metadata": {
                "name": name,
                "namespace": "models",
                "annotations": {"serving.kserve.io/deploymentMode": mode, **(annotations or {})},
            },
            "spec": {
                "predictor": {
                    "nodeSelector": {"pool": pool},
                    "tolerations": [TOL_GPU],
                    "model": model,
                }
            },
        },
    }


def hf_model(uri: str = "hf://meta-llama/x", gpus: int = 1, **requests: Any) -> dict:
    """A model container; its cpu and memory limited to what it asks (else KServe's defaults,
    cpu 1 / memory 2Gi, are its limits, and a larger ask is a pod the API refuses: GI066)."""
    resources = res(gpus, **requests)
    limits = {k: v for k, v in resources["requests"].items() if k in ("cpu", "memory")}
    if limits:
        resources["limits"] = {**resources.get("limits", {}), **limits}
    return {"modelFormat": {"name": "huggingface"}, "storageUri": uri, "resources": resources}


def codes(graph: list[dict]) -> list[tuple[str, str]]:
    return [
        (f.code, f.resource) for f in without_headroom(check(graph).findings) if f.code >= "GI021"
    ]


def only(graph: list[dict], code: str) -> Any:
    (found,) = [f for f in without_headroom(check(graph).findings) if f.code == code]
    return found


def millis(value: int) -> str:
    return f"{value}m"


# ---------------------------------------------------------------------------------------------
# Each rule triggered, and silenced by its fix (used by test_field_failures' code coverage)
# ---------------------------------------------------------------------------------------------

A2 = gke("infer-srv", "a2-ultragpu-2g")
SERVER_40 = workload("srv", pod("infer-srv", c(cpu="40", memory="300Gi")))
SERVER_20 = workload("srv", pod("infer-srv", c(cpu="20", memory="300Gi")))
TIME_SHARED = gke(
    "shared",
    "g2-standard-8",
    sharing={"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
)
MPS_2_GPUS = gke(
    "mps",
    "g2-standard-24",
    accelerators=[
        {
            "type": "nvidia-l4",
            "count": 2,
            "gpuSharingConfig": {"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 2},
        }
    ],
)
H100 = {
    "type": "kubernetes:karpenter.sh/v1:NodePool",
    "name": "h100",
    "inputs": {
        "metadata": {"name": "h100"},
        "spec": {
            "template": {
                "metadata": {"labels": {"pool": "h100"}},
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.k8s.aws",
                        "kind": "EC2NodeClass",
                        "name": "h100",
                    },
                    "requirements": [
                        {
                            "key": "node.kubernetes.io/instance-type",
                            "operator": "In",
                            "values": ["p5.48xlarge"],
                        }
                    ],
                    "taints": [
                        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
                    ],
                },
            }
        },
    },
}


def node_class(volume: str) -> dict:
    return {
        "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
        "name": "h100-class",
        "inputs": {
            "metadata": {"name": "h100"},
            "spec": {
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": volume}}],
            },
        },
    }


LLAMA_70B = isvc(
    "llama-70b",
    "h100",
    hf_model(gpus=8),
    mode="RawDeployment",
    annotations={"gpu-inference.dev/model-size-gb": "140"},
)
ALLOCATABLE = json.dumps({"cpu": "32", "memory": "250Gi", "ephemeral-storage": "400Gi"})


def lab_node(annotations: dict | None = None) -> dict:
    return node(
        "gpu-node-01",
        labels={"pool": "rtx", "gpu-inference.dev/pool": "rtx"},
        annotations={"gpu-inference.dev/gpus-per-node": "4", **(annotations or {})},
    )


PAIRS = [
    pytest.param("GI021", [A2, SERVER_40], [A2, SERVER_20], id="GI021-cpu-above-the-node"),
    pytest.param(
        "GI022",
        [lab_node(), workload("w", pod("rtx", c(cpu="8")))],
        [
            lab_node({"gpu-inference.dev/allocatable": ALLOCATABLE}),
            workload("w", pod("rtx", c(cpu="8"))),
        ],
        id="GI022-existing-nodes-without-allocatable",
    ),
    pytest.param(
        "GI023",
        [TIME_SHARED, workload("w", pod("shared", c(gpus=2, cpu="1")))],
        [TIME_SHARED, workload("w", pod("shared", c(gpus=1, cpu="1")))],
        id="GI023-two-gpus-on-gke-time-sharing",
    ),
    pytest.param(
        "GI024",
        [H100, node_class("100Gi"), LLAMA_70B],
        [H100, node_class("300Gi"), LLAMA_70B],
        id="GI024-70b-weights-on-a-100gi-volume",
    ),
    pytest.param(
        "GI025",
        [MPS_2_GPUS, workload("w", pod("mps", c(cpu="1")))],
        [MPS_2_GPUS, workload("w", pod("mps", c(cpu="1"), hostIPC=True))],
        id="GI025-mps-without-host-ipc",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good"), PAIRS)
def test_fit_finding_triggered_and_silenced_by_its_fix(code: str, bad: list, good: list):
    bad_codes = [f.code for f in without_headroom(check(bad).findings)]
    good_report = check(good)
    assert code in bad_codes, without_headroom(check(bad).findings)
    assert code not in {f.code for f in without_headroom(good_report.findings)}, without_headroom(
        good_report.findings
    )
    assert good_report.errors == [], good_report.errors


# ---------------------------------------------------------------------------------------------
# GI021: the message names the resource, the ask, the largest allocatable and the shape
# ---------------------------------------------------------------------------------------------


def test_gi021_names_the_resource_the_ask_and_the_largest_allocatable():
    found = only([A2, SERVER_40], "GI021")
    assert found.resource == "Deployment/srv"
    assert found.message == (
        "fits no node of the pool(s) it can land on: it asks 40 cpu in all (main 40) but the "
        "most a node leaves it beside its DaemonSets is 23720m (a2-ultragpu-2g, pool infer-srv: "
        "23870m allocatable less 150m for its DaemonSets kube-proxy 100m, "
        "nvidia-gpu-device-plugin 50m); it stays Pending"
    )
    assert found.fix == "use a2-ultragpu-4g for pool infer-srv, or ask at most 23720m cpu in all"


def test_gi021_proposes_another_pool_of_the_graph_that_holds_it():
    big = gke("big", "a2-ultragpu-4g")
    found = only([A2, big, SERVER_40], "GI021")
    assert "wire it to pool big" in found.fix


def test_gi021_when_the_only_misfit_is_the_disk_proposes_a_boot_disk():
    found = only(
        [A2, workload("srv", pod("infer-srv", c(cpu="4", ephemeral_storage="100Gi")))], "GI021"
    )
    assert found.message.endswith(
        "asks 100Gi ephemeral-storage in all (main 100Gi) but the largest allocatable is 43.77Gi "
        "(a2-ultragpu-2g, pool infer-srv); it stays Pending"
    )
    assert found.fix.startswith("give pool infer-srv a boot disk of 205 GB")
    fixed = gke("infer-srv", "a2-ultragpu-2g", disk=205)
    assert "GI021" not in {
        f.code
        for f in check(
            [fixed, workload("srv", pod("infer-srv", c(cpu="4", ephemeral_storage="100Gi")))]
        ).findings
    }


@pytest.mark.parametrize("over", [0, 1], ids=["at-the-room-left", "one-millicore-over"])
def test_gi021_boundary_is_what_the_node_leaves_beside_its_daemonsets(over: int):
    cpu = millis(G2_8.cpu + over)
    graph = [gke("l4", "g2-standard-8"), workload("w", pod("l4", c(cpu=cpu)))]
    assert ("GI021", "Deployment/w") in codes(graph) if over else codes(graph) == []


def test_gi021_counts_knative_queue_proxy():
    """A Serverless predictor asking the node's whole CPU: Knative's queue-proxy (25m) tips it."""
    cpu = millis(G2_8.cpu - 25)
    fits = isvc("a", "l4", hf_model("pvc://models/a", cpu=cpu), mode="Serverless")
    over = isvc("a", "l4", hf_model("pvc://models/a", cpu=millis(G2_8.cpu - 24)), mode="Serverless")
    raw = isvc("a", "l4", hf_model("pvc://models/a", cpu=millis(G2_8.cpu)), mode="RawDeployment")
    pool = gke("l4", "g2-standard-8")
    assert codes([pool, fits]) == []
    assert codes([pool, over]) == [("GI021", "InferenceService/a/predictor")]
    assert codes([pool, raw]) == []
    assert "queue-proxy 25m" in only([pool, over], "GI021").message


def test_gi021_counts_the_storage_initializer_init_container():
    """KServe's storage-initializer (100m / 100Mi) runs alone before the model: the pod needs
    the larger of it and the containers; pvc:// and oci:// are not downloaded."""
    pool = gke("l4", "g2-standard-8")
    small = {"cpu": "50m", "memory": "10Mi"}  # below the init container's requests
    graph = [pool, isvc("a", "l4", hf_model("gs://b/m", **small), mode="RawDeployment")]
    (t,) = read_templates(graph[1:], True)
    assert pod_ask(t) == Resources(cpu=100, memory=100 * Mi, pods=1, gpus=1)
    (t,) = read_templates(
        [isvc("a", "l4", hf_model("pvc://c/m", **small), mode="RawDeployment")], True
    )
    assert pod_ask(t).cpu == 50
    (t,) = read_templates(
        [isvc("a", "l4", hf_model("oci://r/m", **small), mode="RawDeployment")], True
    )
    # The modelcar (10m / 15Mi) beside the model, its init container (the same) before it.
    assert pod_ask(t) == Resources(cpu=60, memory=25 * Mi, pods=1, gpus=1)


@pytest.mark.parametrize(
    ("extra", "added", "ask"),
    [
        # kserve v0.20.0 agent_injector.go: the agent config's 100m / 100Mi (configmap-patch.yaml)
        ({"logger": {"mode": "all"}}, ("agent",), Resources(cpu=150, memory=110 * Mi)),
        ({"batcher": {"maxBatchSize": 32}}, ("agent",), Resources(cpu=150, memory=110 * Mi)),
        ({}, (), Resources(cpu=50, memory=10 * Mi)),
    ],
)
def test_kserve_adds_its_agent_sidecar_for_a_logger_or_a_batcher(
    extra: dict, added: tuple, ask: Resources
):
    model = hf_model("pvc://c/m", cpu="50m", memory="10Mi")
    entry = isvc("a", "l4", model, mode="RawDeployment")
    entry["inputs"]["spec"]["predictor"].update(extra)
    (t,) = read_templates([entry], True)
    assert pod_containers(t)[2] == added
    assert pod_ask(t) == ask + Resources(pods=1, gpus=1)


def test_kserve_modelcar_for_an_oci_model():
    """kserve v0.20.0 pkg/utils/storage.go: the modelcar container and its init container."""
    (t,) = read_templates(
        [isvc("a", "l4", hf_model("oci://r/m", cpu="1"), mode="RawDeployment")], True
    )
    containers, inits, added = pod_containers(t)
    assert added == ("modelcar", "modelcar-init")
    assert [c["name"] for c in containers][-1] == "modelcar"
    assert [c["name"] for c in inits] == ["modelcar-init"]


def test_gi021_a_server_on_seldons_builtin_mlserver_gets_its_agent_and_rclone():
    """Seldon's built-in mlserver ServerConfig (not in the graph) adds agent 200m / 1Gi and rclone
    50m / 128Mi to the Server's mlserver container."""
    server = seldon(
        "Server",
        "srv",
        {
            "serverConfig": "mlserver",
            "podSpec": {
                "nodeSelector": {"pool": "l4"},
                "tolerations": [TOL_GPU],
                "containers": [
                    {"name": "mlserver", "resources": res(1, cpu=millis(G2_8.cpu - 250))}
                ],
            },
        },
    )
    pool = gke("l4", "g2-standard-8")
    (t,) = read_templates([server], True)
    assert pod_ask(t) == Resources(cpu=G2_8.cpu, memory=2 * Gi + 128 * Mi, pods=1, gpus=1)
    assert codes([pool, server]) == []
    server["inputs"]["spec"]["podSpec"]["containers"][0]["resources"] = res(
        1, cpu=millis(G2_8.cpu - 249)
    )
    found = only([pool, server], "GI021")
    assert "(mlserver 7511m, agent 200m, rclone 50m)" in found.message


def test_gi021_judges_each_node_not_the_largest_of_each_resource():
    """Two existing nodes of one pool, one with more CPU, one with more memory: a pod asking for
    both fits neither, though each resource is below some node's."""

    def lab(name: str, cpu: str, memory: str) -> dict:
        held = json.dumps({"cpu": cpu, "memory": memory, "ephemeral-storage": "100Gi"})
        return node(
            name,
            labels={"pool": "lab", "gpu-inference.dev/pool": "lab"},
            annotations={"gpu-inference.dev/allocatable": held},
        )

    graph = [
        lab("cpu-box", "32", "64Gi"),
        lab("mem-box", "8", "256Gi"),
        workload("w", pod("lab", c(gpus=0, cpu="16", memory="128Gi"))),
    ]
    found = only(graph, "GI021")
    assert found.message == (
        "fits no node of the pool(s) it can land on: it asks 16 cpu, 128Gi memory and no node "
        "holds all of it: cpu-box (pool lab) has 64Gi memory; mem-box (pool lab) has 8 cpu; it "
        "stays Pending"
    )


def test_gi021_not_reported_when_one_pool_holds_it():
    graph = [A2, gke("big", "a2-ultragpu-4g", labels={"pool": "infer-srv"}), SERVER_40]
    report = check(graph)
    assert "GI021" not in {f.code for f in without_headroom(report.findings)}
    (w,) = report.workloads
    assert w.unfit == ("infer-srv",)


# ---------------------------------------------------------------------------------------------
# GI022: fit not judged
# ---------------------------------------------------------------------------------------------


def test_gi022_existing_nodes_without_allocatable_say_how_to_declare_it():
    found = only([lab_node(), workload("w", pod("rtx", c(cpu="8")))], "GI022")
    assert found.severity == "info"
    assert found.message == (
        "fit of Deployment/w on pool rtx is not judged: the nodes do not declare what they hold "
        "(gpu-inference.dev/allocatable)"
    )


def test_gi022_a_machine_type_the_catalog_lacks():
    found = only([gke("x", "z9-mega-8g"), workload("w", pod("x", c(gpus=0, cpu="1")))], "GI022")
    assert "machine type z9-mega-8g is not in the node-shape catalog" in found.message


def test_declared_allocatable_is_judged():
    declared = lab_node({"gpu-inference.dev/allocatable": ALLOCATABLE})
    found = only([declared, workload("w", pod("rtx", c(cpu="33")))], "GI021")
    assert "asks 33 cpu in all (main 33) but the largest allocatable is 32 (gpu-node-01" in (
        found.message
    )


# ---------------------------------------------------------------------------------------------
# GI023: shared GPUs, one per container
# ---------------------------------------------------------------------------------------------


def test_gi023_gke_time_sharing_refuses_two_gpus_at_admission():
    found = only([TIME_SHARED, workload("w", pod("shared", c(gpus=2, cpu="1")))], "GI023")
    assert found.message == (
        "container main asks 2 nvidia.com/gpu on pool shared, whose GPUs are shared (GKE "
        "time-sharing): at most 1 per container, else it fails at admission "
        "(UnexpectedAdmissionError)"
    )


def test_gi023_gke_mps_allows_more_than_one_on_a_single_gpu_node():
    """GKE's device plugin: MPS may hand several shares of the one physical GPU to a container."""
    one_gpu = gke(
        "mps1",
        "g2-standard-8",
        sharing={"gpuSharingStrategy": "MPS", "maxSharedClientsPerGpu": 4},
    )
    graph = [one_gpu, workload("w", pod("mps1", c(gpus=2, cpu="1"), hostIPC=True))]
    assert codes(graph) == []
    two = [MPS_2_GPUS, workload("w", pod("mps", c(gpus=2, cpu="1"), hostIPC=True))]
    assert codes(two) == [("GI023", "Deployment/w")]


def _plugin(fail: bool | None) -> dict:
    slicing: dict[str, Any] = {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}
    if fail is not None:
        slicing["failRequestsGreaterThanOne"] = fail
    text = json.dumps({"version": "v1", "sharing": {"timeSlicing": slicing}})
    return {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "nvidia-device-plugin",
        "inputs": {
            "chart": "nvidia-device-plugin",
            "values": {"config": {"map": {"ts": text}, "default": "ts"}},
        },
    }


@pytest.mark.parametrize(
    ("fail", "outcome"),
    [
        (None, "the plugin hands out replicas that may all be one physical GPU"),
        (False, "the plugin hands out replicas that may all be one physical GPU"),
        (True, "it fails at admission (UnexpectedAdmissionError)"),
    ],
)
def test_gi023_device_plugin_time_slicing(fail: bool | None, outcome: str):
    group = {
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": "g5",
        "inputs": {
            "instanceTypes": ["g5.xlarge"],
            "amiType": "AL2023_x86_64_NVIDIA",
            "labels": {"pool": "g5"},
            "scalingConfig": {"minSize": 0, "maxSize": 2},
        },
    }
    graph = [group, _plugin(fail), workload("w", pod("g5", c(gpus=2, cpu="1")))]
    found = only(graph, "GI023")
    assert found.message.endswith(
        f"(the NVIDIA device plugin time-slicing): at most 1 per container, else {outcome}"
    )


# ---------------------------------------------------------------------------------------------
# GI024: the model on the node's disk
# ---------------------------------------------------------------------------------------------


def test_gi024_names_the_size_and_the_disk_and_proposes_one():
    found = only([H100, node_class("100Gi"), LLAMA_70B], "GI024")
    assert found.resource == "InferenceService/llama-70b/predictor"
    assert found.message == (
        "its model (140 GB) is downloaded to the node's ephemeral storage, but the most any node "
        "it can land on leaves allocatable is 89Gi (p5.48xlarge, pool h100)"
    )
    assert found.fix == "give pool h100 a boot disk of at least 146 GiB (diskSizeGb)"
    shape = karpenter_node_shape("p5.48xlarge", disk_gib=146)
    assert shape.allocatable.ephemeral_storage >= 140 * 10**9
    assert karpenter_node_shape("p5.48xlarge", disk_gib=145).allocatable.ephemeral_storage < (
        140 * 10**9
    )


def test_gi024_not_for_a_pvc_model():
    pvc = isvc(
        "llama-70b",
        "h100",
        hf_model("pvc://weights/llama", gpus=8),
        mode="RawDeployment",
        annotations={"gpu-inference.dev/model-size-gb": "140"},
    )
    assert codes([H100, node_class("100Gi"), pvc]) == []


def test_gi024_replaces_gi021_for_the_same_disk():
    """Our components request the download as ephemeral storage: one finding, the model's."""
    asking = isvc(
        "llama-70b",
        "h100",
        hf_model(gpus=8, ephemeral_storage="144Gi"),
        mode="RawDeployment",
        annotations={"gpu-inference.dev/model-size-gb": "140"},
    )
    assert codes([H100, node_class("100Gi"), asking]) == [
        ("GI024", "InferenceService/llama-70b/predictor")
    ]


# ---------------------------------------------------------------------------------------------
# Node shapes read from the graph
# ---------------------------------------------------------------------------------------------


def allocatable(pool: Any) -> Resources:
    shape = pool.nodes[0].shape
    assert shape is not None
    return shape.allocatable


def test_eks_node_group_disk_from_its_launch_template():
    template = {
        "type": "aws:ec2/launchTemplate:LaunchTemplate",
        "name": "g5-lt",
        "inputs": {
            "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": 300}}]
        },
    }
    group = {
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": "g5",
        "dependsOn": ["aws:ec2/launchTemplate:LaunchTemplate::g5-lt"],
        "inputs": {
            "instanceTypes": ["g5.2xlarge"],
            "amiType": "AL2023_x86_64_NVIDIA",
            "labels": {"pool": "g5"},
            "launchTemplate": {"id": "lt-123", "version": "1"},
            "scalingConfig": {"minSize": 0, "maxSize": 2},
        },
    }
    (pool,) = check([template, group]).pools
    assert allocatable(pool) == eks_node_shape("g5.2xlarge", disk_gib=300).allocatable
    group.pop("dependsOn")
    (pool,) = check([group]).pools
    assert pool.nodes[0].shape is None
    assert pool.shape_note == "its launch template is not in the graph (the disk size is unknown)"
    del group["inputs"]["launchTemplate"]
    (pool,) = check([group]).pools
    assert allocatable(pool) == eks_node_shape("g5.2xlarge", disk_gib=20).allocatable  # default


def test_gke_pool_disk_and_max_pods():
    pool_entry = gke("l4", "g2-standard-8", disk=200)
    pool_entry["inputs"]["maxPodsConstraint"] = {"maxPodsPerNode": 64}
    (pool,) = check([pool_entry]).pools
    shape = pool.nodes[0].shape
    assert shape is not None
    want = gke_node_shape("g2-standard-8", disk_gb=200, max_pods=64)
    assert (shape.capacity, shape.allocatable) == (want.capacity, want.allocatable)


def test_report_json_carries_requests_and_unfit_pools():
    report = check([A2, SERVER_40]).to_json()
    (w,) = report["workloads"]
    assert w["requests"] == {
        "cpu": "40",
        "ephemeral-storage": "0",
        "memory": "300Gi",
        "nvidia.com/gpu": "1",
        "pods": "1",
    }
    assert w["unfitPools"] == ["infer-srv"]


def test_a_daemonset_too_big_for_a_pool_is_pending_there():
    """The DaemonSet controller makes a pod for every node it tolerates, whatever it asks: on the
    pool it does not fit, the pod stays Pending (on the other it runs)."""
    small, big = gke("small", "g2-standard-8"), gke("big", "g2-standard-24", labels={})
    big["inputs"]["nodeConfig"]["labels"] = {"tier": "gpu"}
    small["inputs"]["nodeConfig"]["labels"] = {"tier": "gpu"}
    agent = workload(
        "agent",
        {"tolerations": [TOL_GPU], "containers": [c("agent", gpus=0, cpu="10")]},
        kind="DaemonSet",
    )
    report = check([small, big, agent])
    (w,) = report.workloads
    assert w.pools == ("big", "small") and w.unfit == ("small",)
    found = [f for f in without_headroom(report.findings) if f.code == "GI021"]
    assert [f.resource for f in found] == ["DaemonSet/agent"]
    assert "7760m (g2-standard-8, pool small: 7910m allocatable less 150m" in found[0].message
