"""GPUs by claim (DRA, issue #32): the ResourceClaimTemplate each claiming workload part gets, the
pod fields that wire it, and the refusals, for InferenceService components and
LLMInferenceService parts; the templates registered before the CRs that name them."""

from __future__ import annotations

import pytest

from components.model.errors import InputError
from components.serving.claims import (
    GpuClaimArgs,
    claim_template_body,
    template_name,
    validate_claim,
)
from components.serving.inference_service import (
    InferenceService,
    InferenceServiceArgs,
    PredictorArgs,
    TransformerArgs,
    inference_service_body,
    inference_service_claims,
)
from components.serving.llm_inference_service import (
    LLMInferenceService,
    LLMInferenceServiceArgs,
    LLMWorkerArgs,
    LLMWorkloadArgs,
    llm_inference_service_body,
    llm_inference_service_claims,
)
from components.serving.workload import ContainerArgs
from tests.conftest import CRDS, owned

RCT = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
LLMISVC = "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService"
L4 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L4'"


def test_the_template_asks_count_devices_of_the_class_with_every_selector():
    claim = validate_claim(GpuClaimArgs(count=2, selectors=[L4]))
    assert claim_template_body("llm-predictor-gpu", "models", claim) == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "llm-predictor-gpu", "namespace": "models"},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {
                                "deviceClassName": "gpu.nvidia.com",
                                "count": 2,
                                "selectors": [{"cel": {"expression": L4}}],
                            },
                        }
                    ]
                }
            }
        },
    }
    mig = validate_claim(GpuClaimArgs(device_class="mig.nvidia.com"))
    assert claim_template_body("x", "y", mig)["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "mig.nvidia.com", "count": 1}}
    ]
    assert template_name("llama", "decode-worker") == "llama-decode-worker-gpu"


@pytest.mark.parametrize(
    "claim, path, piece",
    [
        (GpuClaimArgs(count=0), "count", "count 0 is not a number of devices"),
        (GpuClaimArgs(count=True), "count", "count True is not a number of devices"),
        (GpuClaimArgs(device_class="gpu.amd.com"), "deviceClass", "not one NVIDIA's DRA driver"),
        (GpuClaimArgs(selectors="device.driver == 'x'"), "selectors", "not a list"),  # type: ignore[arg-type]
        (GpuClaimArgs(selectors=[L4, ""]), "selectors[1]", "is not a CEL expression"),
        (GpuClaimArgs(selectors=["x"] * 33), "selectors", "at most 32 per request"),
        (GpuClaimArgs(selectors=["x" * 10241]), "selectors[0]", "longer than the API server"),
    ],
)
def test_a_bad_claim_is_refused_at_its_key(claim, path, piece):
    with pytest.raises(InputError) as e:
        validate_claim(claim)
    assert e.value.path == path and piece in e.value.problem


def _isvc(**predictor) -> InferenceServiceArgs:
    return InferenceServiceArgs(
        name="llm",
        namespace="models",
        deployment_mode="RawDeployment",
        predictor=PredictorArgs(**predictor),
    )


def test_a_predictor_model_claims_its_gpus_and_gets_its_template():
    args = _isvc(
        model_format="huggingface",
        storage_uri="hf://Qwen/Qwen2.5-7B-Instruct",
        cpu="8",
        gpu_claim=GpuClaimArgs(count=1, selectors=[L4]),
    )
    predictor = inference_service_body("x", args)["spec"]["predictor"]
    assert predictor["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "llm-predictor-gpu"}
    ]
    assert predictor["model"]["resources"] == {
        "requests": {"cpu": "8"},
        "limits": {"cpu": "8"},
        "claims": [{"name": "gpu"}],
    }
    (template,) = inference_service_claims("x", args)
    assert template["metadata"] == {"name": "llm-predictor-gpu", "namespace": "models"}


def test_custom_containers_and_a_transformer_claim_on_their_first_container():
    args = InferenceServiceArgs(
        name="llm",
        namespace="models",
        deployment_mode="Standard",
        predictor=PredictorArgs(
            containers=[
                ContainerArgs(name="vllm", image="vllm/vllm-openai"),
                ContainerArgs(name="sidecar", image="busybox"),
            ],
            gpu_claim=GpuClaimArgs(count=2),
        ),
        transformer=TransformerArgs(
            containers=[ContainerArgs(name="t", image="t:1")],
            gpu_claim=GpuClaimArgs(device_class="mig.nvidia.com"),
        ),
    )
    spec = inference_service_body("x", args)["spec"]
    assert spec["predictor"]["containers"] == [
        {"name": "vllm", "image": "vllm/vllm-openai", "resources": {"claims": [{"name": "gpu"}]}},
        {"name": "sidecar", "image": "busybox"},
    ]
    assert spec["transformer"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "llm-transformer-gpu"}
    ]
    assert [t["metadata"]["name"] for t in inference_service_claims("x", args)] == [
        "llm-predictor-gpu",
        "llm-transformer-gpu",
    ]


@pytest.mark.parametrize(
    "args, path, piece",
    [
        (
            InferenceServiceArgs(
                name="llm",
                deployment_mode="Serverless",
                predictor=PredictorArgs(
                    framework="triton", storage_uri="gs://b/m", gpu_claim=GpuClaimArgs()
                ),
            ),
            "predictor.gpuClaim",
            "runs Serverless: Knative's webhook refuses claims (\"must not set the field(s): "
            'spec.template.spec.containers[0].resources.claims", knative/serving#15332',
        ),
        (
            _isvc(framework="triton", storage_uri="gs://b/m", gpus=1, gpu_claim=GpuClaimArgs()),
            "predictor.gpuClaim",
            "gpuClaim and gpus are both given",
        ),
        (
            InferenceServiceArgs(
                name="llm",
                deployment_mode="Standard",
                predictor=PredictorArgs(
                    containers=[ContainerArgs(name="c", image="i", gpus=1)],
                    gpu_claim=GpuClaimArgs(),
                ),
            ),
            "predictor.gpuClaim",
            "gpuClaim and gpus are both given",
        ),
        (
            _isvc(framework="triton", storage_uri="gs://b/m", gpu_claim=GpuClaimArgs(count=0)),
            "predictor.gpuClaim.count",
            "0 is out of range",
        ),
    ],
)
def test_the_component_refuses_what_no_cluster_would_run(args, path, piece):
    with pytest.raises(InputError) as e:
        inference_service_body("x", args)
    assert e.value.path == path and piece in e.value.problem


def test_the_template_is_registered_before_the_inference_service(run):
    args = _isvc(framework="triton", storage_uri="gs://b/m", gpu_claim=GpuClaimArgs(count=2))
    graph = run(lambda: InferenceService("svc", args))
    template = graph.one(RCT)
    assert template.name == "svc-llm-predictor-gpu"
    assert template.inputs["metadata"] == owned(
        {"name": "llm-predictor-gpu", "namespace": "models"}
    )
    assert template.inputs["spec"] == inference_service_claims("svc", args)[0]["spec"]
    assert graph.depends_on(graph.one(ISVC), template)


def _llm(
    decode: LLMWorkloadArgs, prefill: LLMWorkloadArgs | None = None
) -> LLMInferenceServiceArgs:
    return LLMInferenceServiceArgs(
        model_uri="hf://Qwen/Qwen2.5-72B-Instruct",
        name="qwen",
        namespace="models",
        decode=decode,
        prefill=prefill,
    )


def test_llm_parts_claim_on_main_and_the_worker_takes_the_leaders_claim():
    args = _llm(
        LLMWorkloadArgs(
            gpu_claim=GpuClaimArgs(count=4),
            tensor=2,
            data=4,
            data_local=2,
            worker=LLMWorkerArgs(),
        ),
        prefill=LLMWorkloadArgs(gpu_claim=GpuClaimArgs(count=2, selectors=[L4]), tensor=2),
    )
    spec = llm_inference_service_body(args)["spec"]
    main = {"name": "main", "resources": {"claims": [{"name": "gpu"}]}}
    assert spec["template"]["containers"] == [main]
    assert spec["template"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "qwen-decode-gpu"}
    ]
    assert spec["worker"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "qwen-decode-worker-gpu"}
    ]
    assert spec["prefill"]["template"]["resourceClaims"] == [
        {"name": "gpu", "resourceClaimTemplateName": "qwen-prefill-gpu"}
    ]
    counts = {
        t["metadata"]["name"]: t["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"]
        for t in llm_inference_service_claims(args)
    }
    assert counts == {"qwen-decode-gpu": 4, "qwen-decode-worker-gpu": 4, "qwen-prefill-gpu": 2}


def test_llm_claim_count_is_held_to_the_parallelism_and_never_beside_gpus():
    with pytest.raises(InputError) as e:
        llm_inference_service_body(_llm(LLMWorkloadArgs(gpu_claim=GpuClaimArgs(count=2), tensor=4)))
    assert e.value.path == "decode.gpuClaim.count"
    assert "tensor 4 = 4 GPUs" in e.value.problem
    with pytest.raises(InputError) as e:
        llm_inference_service_body(
            _llm(LLMWorkloadArgs(gpus=2, gpu_claim=GpuClaimArgs(count=2), tensor=2))
        )
    assert e.value.path == "decode.gpuClaim" and "both given" in e.value.problem
    # A worker with GPUs of its own takes them as nvidia.com/gpu, not the leader's claim.
    args = _llm(
        LLMWorkloadArgs(
            gpu_claim=GpuClaimArgs(count=4),
            tensor=2,
            data=4,
            data_local=2,
            worker=LLMWorkerArgs(gpus=4),
        )
    )
    assert "resourceClaims" not in llm_inference_service_body(args)["spec"]["worker"]
    assert [t["metadata"]["name"] for t in llm_inference_service_claims(args)] == [
        "qwen-decode-gpu"
    ]


def test_llm_templates_are_registered_before_the_service(run):
    args = _llm(LLMWorkloadArgs(gpu_claim=GpuClaimArgs(count=2), tensor=2))
    graph = run(lambda: LLMInferenceService("q", args))
    template = graph.one(RCT)
    assert template.name == "q-qwen-decode-gpu"
    assert graph.depends_on(graph.one(LLMISVC), template)


needs_crds = pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")


@needs_crds
def test_claiming_bodies_are_valid_against_kserves_crds():
    """The claim fields (`resourceClaims`, container `resources.claims`) sit where KServe
    v0.20.0's InferenceService and LLMInferenceService CRDs take them."""
    from tests.crdschema import validate_cr

    validate_cr(
        inference_service_body(
            "x",
            InferenceServiceArgs(
                name="llm",
                namespace="models",
                deployment_mode="Standard",
                predictor=PredictorArgs(
                    model_format="huggingface",
                    storage_uri="hf://a/b",
                    gpu_claim=GpuClaimArgs(count=2, selectors=[L4]),
                ),
                transformer=TransformerArgs(
                    containers=[ContainerArgs(name="t", image="t:1")], gpu_claim=GpuClaimArgs()
                ),
            ),
        )
    )
    validate_cr(
        llm_inference_service_body(
            _llm(
                LLMWorkloadArgs(
                    gpu_claim=GpuClaimArgs(count=4),
                    tensor=2,
                    data=4,
                    data_local=2,
                    worker=LLMWorkerArgs(),
                ),
                prefill=LLMWorkloadArgs(gpu_claim=GpuClaimArgs(count=2), tensor=2),
            )
        )
    )
