"""The pods the check reads for an InferenceService are the pods KServe v0.20.0 and Knative
v1.23.0 make (`model.serving.isvc`, `model.serving.requests.queue_proxy`): each test is a
disagreement found by reading their source, kept so that it cannot come back."""

from __future__ import annotations

from typing import Any

import pytest

from components.check import check
from components.check.fit import pod_ask, pod_containers
from components.check.graph import read_templates
from components.model.nodes.shapes import Gi, Mi, Resources

ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
GKE_POOL = "gcp:container/nodePool:NodePool"
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
GPU = {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}}


def isvc(spec: dict, mode: str = "Serverless", annotations: dict | None = None) -> dict:
    return {
        "type": ISVC,
        "name": "a",
        "inputs": {
            "metadata": {
                "name": "a",
                "namespace": "models",
                "annotations": {"serving.kserve.io/deploymentMode": mode, **(annotations or {})},
            },
            "spec": spec,
        },
    }


def kserve_release(values: dict) -> dict:
    return {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "kserve",
        "inputs": {"chart": "oci://ghcr.io/kserve/charts/kserve-resources", "values": values},
    }


def knative_serving(config: dict) -> dict:
    return {
        "type": "kubernetes:operator.knative.dev/v1beta1:KnativeServing",
        "name": "knative-serving",
        "inputs": {"metadata": {"name": "knative-serving"}, "spec": {"config": config}},
    }


def gke_pool(name: str, machine: str, accelerator: str) -> dict:
    return {
        "type": GKE_POOL,
        "name": name,
        "inputs": {
            "name": name,
            "nodeConfig": {
                "machineType": machine,
                "guestAccelerators": [{"type": accelerator, "count": 1}],
            },
            "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2},
        },
    }


def templates(graph: list[dict]) -> dict[str, Any]:
    return {t.component: t for t in read_templates(graph, True)}


def containers(t: Any) -> dict[str, dict]:
    return {c["name"]: c for c in pod_containers(t)[0]}


def test_gke_devs_triton_predictor_asks_the_runtimes_cpu_and_memory():
    """A triton predictor giving only a GPU: KServe's kserve-tritonserver runtime gives its
    container 1 CPU / 2Gi (the check read 100m / 100Mi, the storage-initializer's), and Knative
    adds the queue-proxy's 25m."""
    spec = {"predictor": {"triton": {"storageUri": "gs://b/m", "resources": GPU}}}
    t = templates([isvc(spec)])["predictor"]
    assert pod_ask(t) == Resources(cpu=1025, memory=2 * Gi, pods=1, gpus=1)
    assert containers(t)["kserve-container"]["resources"]["limits"] == {
        "nvidia.com/gpu": 1,
        "cpu": "1",
        "memory": "2Gi",
    }


def test_transformer_without_resources_asks_the_charts_defaults():
    spec = {
        "predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "pvc://c/m"}},
        "transformer": {"containers": [{"name": "kfserving-container", "image": "t"}]},
    }
    t = templates([isvc(spec, "RawDeployment")])["transformer"]
    assert list(containers(t)) == ["kserve-container"]
    assert pod_ask(t) == Resources(cpu=1000, memory=2 * Gi, pods=1)


def test_the_charts_values_in_the_graph_change_the_defaults():
    """kserve.inferenceservice.resources as our KServe release would set it (configmap-patch.yaml
    renders it into inferenceservice-config): a custom container asks that; a runtime's container
    keeps the runtime's."""
    values = {
        "kserve": {
            "inferenceservice": {"resources": {"requests": {"cpu": "250m", "memory": "512Mi"}}}
        }
    }
    spec = {
        "predictor": {"sklearn": {"storageUri": "pvc://c/m"}},
        "transformer": {"containers": [{"image": "t"}]},
    }
    found = templates([kserve_release(values), isvc(spec, "RawDeployment")])
    assert pod_ask(found["transformer"]) == Resources(cpu=250, memory=512 * Mi, pods=1)
    assert pod_ask(found["predictor"]) == Resources(cpu=1000, memory=2 * Gi, pods=1)


def test_a_cpu_limit_without_a_request_asks_kserves_default_request():
    """The check read a limit-only container as requesting its limit (the API server's rule);
    KServe's defaulter fills the request first."""
    spec = {"predictor": {"containers": [{"image": "x", "resources": {"limits": {"cpu": "4"}}}]}}
    t = templates([isvc(spec, "RawDeployment")])["predictor"]
    assert pod_ask(t) == Resources(cpu=1000, memory=2 * Gi, pods=1)


@pytest.mark.parametrize(
    ("config", "annotations", "resources"),
    [
        ({}, {}, {"requests": {"cpu": "25m"}}),
        (
            {"features": {"queueproxy.resource-defaults": "Enabled"}},
            {},
            {
                "requests": {"cpu": "25m", "memory": "400Mi"},
                "limits": {"cpu": "1000m", "memory": "800Mi"},
            },
        ),
        (
            {
                "deployment": {
                    "queue-sidecar-cpu-request": "100m",
                    "queueSidecarMemoryRequest": "64Mi",
                }
            },
            {},
            {"requests": {"cpu": "100m", "memory": "64Mi"}},
        ),
        (
            {"deployment": {"queue-sidecar-cpu-request": "100m"}},
            {"queue.sidecar.serving.knative.dev/cpu-resource-request": "300m"},
            {"requests": {"cpu": "300m"}},
        ),
    ],
    ids=["knative-defaults", "resource-defaults-enabled", "config-deployment", "annotation"],
)
def test_queue_proxy_is_sized_by_knatives_config(config: dict, annotations: dict, resources: dict):
    """knative.dev/serving v0.50.0 pkg/reconciler/revision/resources/queue.go
    createQueueResources; the check gave 25m whatever the config said."""
    spec = {"predictor": {"containers": [{"image": "x", "resources": GPU}]}}
    t = templates([knative_serving(config), isvc(spec, annotations=annotations)])["predictor"]
    assert containers(t)["queue-proxy"]["resources"] == resources


def runtime(kind: str, name: str, spec: dict, namespace: str | None = None) -> dict:
    md: dict = {"name": name}
    if namespace:
        md["namespace"] = namespace
    return {
        "type": f"kubernetes:serving.kserve.io/v1alpha1:{kind}",
        "name": name,
        "inputs": {"metadata": md, "spec": spec},
    }


RUNTIME_SPEC = {
    "supportedModelFormats": [{"name": "custom"}],
    "nodeSelector": {"pool": "big", "zone": "a"},
    "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
    "containers": [
        {
            "name": "kserve-container",
            "image": "rt",
            "args": ["--port=8080"],
            "resources": {
                "requests": {"cpu": "4", "memory": "8Gi"},
                "limits": {"cpu": "4", "memory": "8Gi"},
            },
        },
        {"name": "metrics", "image": "m", "resources": {"requests": {"cpu": "50m"}}},
    ],
}


def test_a_named_servingruntime_of_the_graph_gives_its_containers_and_pod_fields():
    """utils.go GetServingRuntime, MergeRuntimeContainers and MergePodSpec: the runtime's
    kserve-container under the predictor's (args concatenated), its other containers after it,
    its nodeSelector merged key by key under the predictor's, its tolerations when the predictor
    gives none. The check used KServe's built-in runtimes' 1 CPU / 2Gi and the predictor's
    placement alone."""
    spec = {
        "predictor": {
            "nodeSelector": {"zone": "b"},
            "model": {
                "modelFormat": {"name": "custom"},
                "runtime": "rt",
                "args": ["--verbose"],
                "resources": GPU,
            },
        }
    }
    graph = [runtime("ServingRuntime", "rt", RUNTIME_SPEC, "models"), isvc(spec, "RawDeployment")]
    t = templates(graph)["predictor"]
    made = containers(t)
    assert list(made) == ["kserve-container", "metrics"]
    assert made["kserve-container"]["args"] == ["--port=8080", "--verbose"]
    assert pod_ask(t) == Resources(cpu=4050, memory=8 * Gi, pods=1, gpus=1)
    assert t.fragment["nodeSelector"] == {"pool": "big", "zone": "b"}
    assert t.fragment["tolerations"] == RUNTIME_SPEC["tolerations"]


def test_the_namespaces_servingruntime_wins_over_the_clusterservingruntime():
    small = {"containers": [{"name": "kserve-container", "resources": {"requests": {"cpu": "2"}}}]}
    spec = {"predictor": {"model": {"modelFormat": {"name": "custom"}, "runtime": "rt"}}}
    cluster = runtime("ClusterServingRuntime", "rt", small)
    assert pod_ask(templates([cluster, isvc(spec, "RawDeployment")])["predictor"]).cpu == 2000
    graph = [cluster, runtime("ServingRuntime", "rt", RUNTIME_SPEC, "models")]
    assert pod_ask(templates([*graph, isvc(spec, "RawDeployment")])["predictor"]).cpu == 4050


def test_kserves_pod_webhook_adds_the_gke_accelerator_selector_to_a_gpu_pod():
    """accelerator_injector.go InjectGKEAcceleratorSelector: with `serving.kserve.io/
    gke-accelerator` and a GPU limit the pod selects that accelerator, so it lands only on such
    a pool (the check read the predictor's own nodeSelector alone); a pod without a GPU limit is
    left as it is."""
    pools = [
        gke_pool("l4", "g2-standard-8", "nvidia-l4"),
        gke_pool("t4", "n1-standard-8", "nvidia-tesla-t4"),
    ]
    note = {"serving.kserve.io/gke-accelerator": "nvidia-l4"}
    gpu = {
        "predictor": {"tolerations": [TOL_GPU], "containers": [{"image": "x", "resources": GPU}]}
    }
    assert check([*pools, isvc(gpu, "RawDeployment", note)]).workloads[0].pools == ("l4",)
    assert check([*pools, isvc(gpu, "RawDeployment")]).workloads[0].pools == ("l4", "t4")
    t = templates([isvc({"predictor": {"containers": [{"image": "x"}]}}, annotations=note)])
    assert t["predictor"].added_node_selector == {}
