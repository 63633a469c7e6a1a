"""The CRD validator itself: it must catch what the API server would prune or refuse."""

import copy

import pytest

from tests.conftest import CRDS

pytestmark = pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")

GOOD = {
    "apiVersion": "serving.kserve.io/v1beta1",
    "kind": "InferenceService",
    "metadata": {"name": "torchscript-cifar", "namespace": "models"},
    "spec": {
        "predictor": {
            "nodeSelector": {"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"},
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ],
            "triton": {
                "storageUri": "gs://kfserving-examples/models/torchscript",
                "runtimeVersion": "21.08-py3",
                "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "500m"}},
            },
        }
    },
}


def test_a_good_inference_service_passes():
    from tests.crdschema import validate_cr

    validate_cr(GOOD)


@pytest.mark.parametrize(
    ("mutate", "piece"),
    [
        (lambda o: o["spec"]["predictor"].update(toleration=[]), "toleration"),
        (lambda o: o["spec"]["predictor"]["triton"]["resources"]["limits"].update(cpu=0.5), "0.5"),
        (lambda o: o["spec"]["predictor"].update(minReplicas="zero"), "minReplicas"),
        (lambda o: o["metadata"].update(name="Torch_Cifar"), "metadata.name"),
    ],
    ids=["misspelled-field", "float-quantity", "wrong-type", "bad-name"],
)
def test_violations_are_caught(mutate, piece):
    from tests.crdschema import validate_cr

    obj = copy.deepcopy(GOOD)
    mutate(obj)
    with pytest.raises(AssertionError, match=piece):
        validate_cr(obj)


def test_our_knative_serving_validates(run):
    from components.serving.knative import KnativeServing, KnativeServingArgs
    from tests.crdschema import validate_cr

    g = run(
        lambda: KnativeServing(
            "k", KnativeServingArgs(ingress="istio", features={"multi-container": "enabled"})
        )
    )
    cr = g.one("kubernetes:operator.knative.dev/v1beta1:KnativeServing")
    validate_cr(cr.inputs)
    assert cr.inputs["spec"]["config"]["features"]["kubernetes.podspec-tolerations"] == "enabled"


# The kinds the example stacks emit that have an upstream CRD here, and the groups of those that
# have none (Gateway API: the manifests are applied from its release, their CRDs not kept here).
NO_CRD_HERE = ("gateway.networking.k8s.io",)


@pytest.fixture(scope="module")
def gke_llm_docs(tmp_path_factory):
    import yaml

    from components.preview.preview import preview
    from tests.conftest import ROOT

    result = preview("gke-llm", out_dir=tmp_path_factory.mktemp("gke-llm"), project_dir=ROOT)
    return [d for d in yaml.safe_load_all((result.out_dir / "manifests.yaml").read_text()) if d]


def test_every_custom_resource_of_the_llm_stack_validates(gke_llm_docs):
    """gke-llm emits LLMInferenceServices (strictly valid against serving.kserve.io v1alpha2 at
    v0.20.0) and no LeaderWorkerSet or InferencePool: KServe's controller makes those from the
    service (their CRDs are here for the check's reader)."""
    from tests.crdschema import validate_cr

    builtin = ("v1", "apps/v1", "rbac.authorization.k8s.io/v1")
    custom = [d for d in gke_llm_docs if d["apiVersion"] not in builtin]
    kinds = sorted({(d["apiVersion"], d["kind"]) for d in custom})
    assert kinds == [
        ("gateway.networking.k8s.io/v1", "Gateway"),
        ("gateway.networking.k8s.io/v1", "GatewayClass"),
        ("serving.kserve.io/v1alpha2", "LLMInferenceService"),
    ]
    checked = 0
    for d in custom:
        if d["apiVersion"].split("/")[0] in NO_CRD_HERE:
            continue
        validate_cr(d)
        checked += 1
    assert checked == 2


def test_a_misspelled_field_of_an_llm_service_is_caught(gke_llm_docs):
    from tests.crdschema import validate_cr

    (qwen,) = [d for d in gke_llm_docs if d["metadata"]["name"] == "qwen-72b"]
    wrong = copy.deepcopy(qwen)
    wrong["spec"]["worker"]["toleration"] = wrong["spec"]["worker"].pop("tolerations")
    with pytest.raises(AssertionError, match="toleration"):
        validate_cr(wrong)
    wrong = copy.deepcopy(qwen)
    wrong["spec"]["parallelism"]["dataLocal"] = "2"
    with pytest.raises(AssertionError, match="dataLocal"):
        validate_cr(wrong)
