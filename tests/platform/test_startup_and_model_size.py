"""`pools[].nodeStartupSeconds` and `predictor.modelSizeGb`: what the InferenceService gets from them
(the Knative progress deadline, the annotations the placement check reads), and their errors."""

import pytest
from config_bases import NS, mutated

from components.check import check
from components.model.errors import InputError
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform

ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"


def annotations(run, config) -> dict[str, dict[str, str]]:
    g = run(lambda: InferencePlatform("gi", load_spec(config)))
    return {
        r.inputs["metadata"]["name"]: r.inputs["metadata"].get("annotations", {})
        for r in g.of_type(ISVC)
    }


def test_serverless_gpu_service_on_a_pool_at_zero_gets_the_pool_start_up(run):
    got = annotations(run, mutated("gke", {}))
    assert got["llm"]["serving.knative.dev/progress-deadline"] == "900s"
    assert got["llm"]["gpu-inference.dev/node-startup-seconds"] == "900"
    # a CPU-only service waits for no GPU node
    assert "serving.knative.dev/progress-deadline" not in got["sklearn-iris"]


def test_the_longest_start_up_of_the_pools_it_may_land_on(run):
    got = annotations(run, mutated("gke", {"pools[1].nodeStartupSeconds": 1500}))
    assert got["llm"]["serving.knative.dev/progress-deadline"] == "1500s"


def test_no_progress_deadline_when_the_pools_keep_a_node(run):
    config = mutated("gke", {"pools[0].minNodes": 1, "pools[1].minNodes": 1})
    got = annotations(run, config)
    assert "serving.knative.dev/progress-deadline" not in got["llm"]


def test_model_size_reaches_the_check(run):
    config = mutated("gke", {"inferenceServices[0].predictor.modelSizeGb": 40})
    got = annotations(run, config)
    assert got["llm"]["gpu-inference.dev/model-size-gb"] == "40"
    g = run(lambda: InferencePlatform("gi", load_spec(config)))
    report = check(g.as_graph())
    assert [f.code for f in report.errors] == ["GI019"]
    fits = mutated("gke", {"inferenceServices[0].predictor.modelSizeGb": 16})
    g = run(lambda: InferencePlatform("gi", load_spec(fits)))
    assert "GI019" not in {f.code for f in check(g.as_graph()).findings}


def test_model_size_on_a_transformer_is_refused():
    with pytest.raises(InputError) as e:
        load_spec(mutated("gke", {"inferenceServices[0].transformer.modelSizeGb": 4}))
    assert str(e.value).startswith(
        f"{NS}:inferenceServices[0].transformer.modelSizeGb: a transformer loads no model: "
        "modelSizeGb is the predictor's (allowed: predictor.modelSizeGb)"
    )


def test_node_start_up_on_existing_nodes_is_refused():
    with pytest.raises(InputError) as e:
        load_spec(mutated("existing", {"pools[0].nodeStartupSeconds": 600}))
    assert str(e.value).startswith(
        f"{NS}:pools[0].nodeStartupSeconds: key 'nodeStartupSeconds' is for aks, eks and gke pools"
    )


def test_serving_component_writes_the_annotation_for_serverless_only():
    from components.serving.inference_service import (
        InferenceServiceArgs,
        PredictorArgs,
        inference_service_body,
    )

    predictor = PredictorArgs(model_format="sklearn", storage_uri="gs://m/iris")
    body = inference_service_body(
        "x", InferenceServiceArgs(predictor, progress_deadline_seconds=900)
    )
    assert body["metadata"]["annotations"] == {
        "serving.kserve.io/deploymentMode": "Knative",
        "serving.knative.dev/progress-deadline": "900s",
    }
    raw = InferenceServiceArgs(
        predictor, deployment_mode="RawDeployment", progress_deadline_seconds=900
    )
    with pytest.raises(InputError, match="progress_deadline_seconds is a Knative setting"):
        inference_service_body("x", raw)
    with pytest.raises(InputError, match="not a whole number of seconds"):
        inference_service_body("x", InferenceServiceArgs(predictor, progress_deadline_seconds=0))


def predictor(run, config) -> dict:
    g = run(lambda: InferencePlatform("gi", load_spec(config)))
    (llm,) = [r for r in g.of_type(ISVC) if r.inputs["metadata"]["name"] == "llm"]
    return llm.inputs["spec"]["predictor"]


@pytest.mark.parametrize(
    ("size", "asked"),
    [(16, "17Gi"), (140, "144Gi"), (0.5, "1Gi"), (8.03, "9Gi")],
)
def test_model_size_asks_the_download_as_ephemeral_storage(run, size, asked):
    """The storage-initializer writes the weights to the node's disk: the model container asks
    for them (GB -> GiB, + 10%, rounded up), so the scheduler places the pod where they fit."""
    config = mutated("gke", {"inferenceServices[0].predictor.modelSizeGb": size})
    resources = predictor(run, config)["model"]["resources"]
    assert resources["requests"]["ephemeral-storage"] == asked
    assert "ephemeral-storage" not in resources.get("limits", {})


@pytest.mark.parametrize("uri", ["pvc://weights/llama", "oci://registry/llama:1"])
def test_no_ephemeral_request_for_a_model_kserve_does_not_download(run, uri):
    config = mutated(
        "gke",
        {
            "inferenceServices[0].predictor.modelSizeGb": 16,
            "inferenceServices[0].predictor.model.storageUri": uri,
        },
    )
    got = predictor(run, config)["model"]
    assert "ephemeral-storage" not in got.get("resources", {}).get("requests", {})
