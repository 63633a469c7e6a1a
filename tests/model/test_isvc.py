"""The containers KServe v0.20.0 makes from an InferenceService component (`model.serving.isvc`):
each case is a disagreement found by reading KServe's source against what the check assumed
before (it gave a container without cpu / memory requests nothing), with the file it rests on."""

from components.model.serving.isvc import (
    chart_resources,
    component_containers,
    with_defaults,
)
from components.model.serving.requests import pod_requests

DEFAULTS = chart_resources({})
ONE_CPU = {"cpu": "1", "memory": "2Gi"}


def test_framework_predictor_takes_the_runtimes_resources_under_its_own():
    """gke-dev's triton predictor gives only GPUs: the ClusterServingRuntime kserve-tritonserver
    (charts/kserve-runtime-configs/files/runtimes/resources.yaml) gives cpu 1 / memory 2Gi, merged
    key by key under it (predictor.go buildPodSpec, container_merge.go MergeContainerWithPatch)."""
    component = {
        "triton": {
            "storageUri": "gs://b/m",
            "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}},
        }
    }
    [c] = component_containers("predictor", component, DEFAULTS)
    assert c["name"] == "kserve-container"
    assert c["storageUri"] == "gs://b/m"
    assert c["resources"] == {
        "requests": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": 1},
        "limits": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": 1},
    }


def test_a_limit_without_a_request_asks_the_default_request_not_the_limit():
    """The API server copies a limit into a missing request, but KServe fills the request first:
    a custom predictor with limits cpu 4 asks 1 CPU (inference_service_defaults.go
    setResourceRequirementDefaults), not 4."""
    component = {"containers": [{"image": "x", "resources": {"limits": {"cpu": "4"}}}]}
    [c] = component_containers("predictor", component, DEFAULTS)
    assert c["resources"] == {
        "requests": {"cpu": "1", "memory": "2Gi"},
        "limits": {"cpu": "4", "memory": "2Gi"},
    }
    assert pod_requests([c]).cpu == 1000


def test_custom_predictor_only_its_first_container_is_defaulted():
    """predictor_custom.go Default: the first container is defaulted and named kserve-container
    only when it is alone or unnamed; the others are kept as they are."""
    component = {
        "containers": [
            {"name": "server", "image": "a"},
            {"name": "sidecar", "image": "b", "resources": {"requests": {"cpu": "50m"}}},
        ]
    }
    first, second = component_containers("predictor", component, DEFAULTS)
    assert first == {
        "name": "server",
        "image": "a",
        "resources": {"requests": ONE_CPU, "limits": ONE_CPU},
    }
    assert second == {"name": "sidecar", "image": "b", "resources": {"requests": {"cpu": "50m"}}}


def test_transformer_first_container_is_renamed_and_defaulted():
    """transformer_custom.go Default: containers[0] becomes kserve-container, whatever its name,
    and gets the defaults (gke-dev's image transformer asks 1 CPU / 2Gi, not nothing)."""
    component = {"containers": [{"name": "kfserving-container", "image": "t"}]}
    [c] = component_containers("transformer", component, DEFAULTS)
    assert c == {
        "name": "kserve-container",
        "image": "t",
        "resources": {"requests": ONE_CPU, "limits": ONE_CPU},
    }


def test_explainers_art_and_custom_are_defaulted():
    """explainer_art.go and explainer_custom.go Default."""
    [art] = component_containers("explainer", {"art": {"type": "AnchorTabular"}}, DEFAULTS)
    assert art["name"] == "kserve-container"
    assert art["resources"] == {"requests": ONE_CPU, "limits": ONE_CPU}
    [custom] = component_containers("explainer", {"containers": [{"image": "e"}]}, DEFAULTS)
    assert custom["resources"] == {"requests": ONE_CPU, "limits": ONE_CPU}


def test_model_predictor_keeps_its_own_values_and_other_containers():
    component = {
        "model": {
            "modelFormat": {"name": "sklearn"},
            "resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2"}},
        },
        "containers": [{"name": "transformer-container", "image": "t"}],
    }
    model, other = component_containers("predictor", component, DEFAULTS)
    assert model["resources"] == {
        "requests": {"cpu": "2", "memory": "4Gi"},
        "limits": {"cpu": "2", "memory": "2Gi"},
    }
    assert other == {"name": "transformer-container", "image": "t"}


def test_chart_values_change_the_defaults_and_an_empty_value_sets_none():
    """configmap-patch.yaml renders `kserve.inferenceservice.resources` into the config; an empty
    value leaves that resource without a default (setResourceRequirementDefaults skips "")."""
    assert chart_resources({}) == {"requests": ONE_CPU, "limits": ONE_CPU}
    values = {
        "kserve": {
            "inferenceservice": {
                "resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": "", "memory": "4Gi"}}
            }
        }
    }
    assert chart_resources(values) == {
        "requests": {"cpu": "250m", "memory": "2Gi"},
        "limits": {"memory": "4Gi"},
    }


def test_with_defaults_keeps_what_the_container_gives():
    c = {"name": "x", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}
    assert with_defaults(c, DEFAULTS)["resources"] == {
        "requests": {"cpu": "3", "memory": "1Gi"},
        "limits": ONE_CPU,
    }
