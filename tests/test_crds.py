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
