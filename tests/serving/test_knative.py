"""Knative Serving with the podspec flags: operator mode (Helm + KnativeServing CR) and patch mode
(config-features ConfigMapPatch), and the refusals that keep a cluster safe."""

import pytest

from components.model.deploy.versions import KNATIVE_OPERATOR
from components.model.errors import InputError
from components.model.serving.knative_features import required_features
from components.serving.knative import KnativeServing, KnativeServingArgs, knative_features
from tests.conftest import owned

CR = "kubernetes:operator.knative.dev/v1beta1:KnativeServing"
RELEASE = "kubernetes:helm.sh/v3:Release"
PATCH = "kubernetes:core/v1:ConfigMapPatch"
FLAGS = {
    "kubernetes.podspec-affinity": "enabled",
    "kubernetes.podspec-nodeselector": "enabled",
    "kubernetes.podspec-tolerations": "enabled",
}


@pytest.fixture(scope="module")
def operator():
    from components.preview.mockrun import run_program

    holder = {}

    def program():
        holder["k"] = KnativeServing("knative", KnativeServingArgs())

    return run_program(program), holder["k"]


def test_operator_mode_installs_the_operator_chart_then_the_cr(operator):
    g, _ = operator
    release = g.one(RELEASE)
    assert release.inputs["chart"] == "knative-operator"
    assert release.inputs["version"] == KNATIVE_OPERATOR.version
    assert release.inputs["repositoryOpts"] == {"repo": "https://knative.github.io/operator"}
    assert release.inputs["namespace"] == "knative-operator"
    namespaces = {r.inputs["metadata"]["name"] for r in g.of_type("kubernetes:core/v1:Namespace")}
    assert namespaces == {"knative-operator", "knative-serving"}
    cr = g.one(CR)
    # Awaited: pulumi-kubernetes counts a custom resource as ready once created otherwise.
    assert cr.inputs["metadata"] == owned(
        {
            "name": "knative-serving",
            "namespace": "knative-serving",
            "annotations": {"pulumi.com/waitFor": "condition=Ready"},
        }
    )
    assert g.depends_on(cr, release)
    assert not g.of_type(PATCH)


def test_operator_cr_enables_the_three_flags_and_kourier(operator):
    g, k = operator
    assert g.one(CR).inputs["spec"] == {
        "config": {
            "features": FLAGS,
            "network": {"ingress-class": "kourier.ingress.networking.knative.dev"},
        },
        "ingress": {"kourier": {"enabled": True}},
    }
    assert k.features == FLAGS
    assert k.enabled_pod_fields == frozenset({"nodeSelector", "affinity", "tolerations"})


def test_istio_ingress_version_and_extra_features(run):
    args = KnativeServingArgs(
        ingress="istio", version="v1.16.0", features={"multi-container": "enabled"}
    )
    spec = run(lambda: KnativeServing("k", args)).one(CR).inputs["spec"]
    assert spec["ingress"] == {"istio": {"enabled": True}}
    assert spec["config"]["network"] == {"ingress-class": "istio.ingress.networking.knative.dev"}
    assert spec["config"]["features"] == {**FLAGS, "multi-container": "enabled"}
    assert spec["version"] == "1.16.0"


def test_patch_mode_patches_config_features_only(run):
    g = run(lambda: KnativeServing("k", KnativeServingArgs(mode="patch")))
    assert [r.type for r in g.resources if r.custom] == [PATCH]
    patch = g.one(PATCH)
    assert patch.inputs["metadata"] == owned(
        {
            "name": "config-features",
            "namespace": "knative-serving",
            "annotations": {"pulumi.com/patchForce": "true"},
        }
    )
    assert patch.inputs["data"] == FLAGS


@pytest.mark.parametrize(
    ("args", "path", "piece"),
    [
        (KnativeServingArgs(mode="auto"), "mode", "operator, patch"),
        (KnativeServingArgs(ingress="nginx"), "ingress", "kourier, istio"),
        (
            KnativeServingArgs(features={"kubernetes.podspec-toleration": "enabled"}),
            "features.kubernetes.podspec-toleration",
            "did you mean 'kubernetes.podspec-tolerations'",
        ),
        (
            KnativeServingArgs(features={"multi-container": "on"}),
            "features.multi-container",
            "enabled, disabled, allowed",
        ),
        (
            KnativeServingArgs(features={"kubernetes.podspec-tolerations": "disabled"}),
            "features.kubernetes.podspec-tolerations",
            "cannot safely be disabled",
        ),
        (
            KnativeServingArgs(podspec_flags={"multi-container": "enabled"}),
            "podspecFlags.multi-container",
            "not a podspec flag",
        ),
    ],
)
def test_bad_args(args, path, piece):
    with pytest.raises(InputError) as e:
        knative_features(args)
    assert e.value.path == path
    assert piece in str(e.value)


def test_disabling_a_podspec_flag_needs_the_explicit_arg(run):
    args = KnativeServingArgs(
        mode="patch",
        features={"kubernetes.podspec-tolerations": "disabled"},
        allow_disabling_podspec_flags=True,
    )
    holder = {}

    def program():
        holder["k"] = KnativeServing("k", args)

    g = run(program)
    assert g.one(PATCH).inputs["data"]["kubernetes.podspec-tolerations"] == "disabled"
    assert holder["k"].enabled_pod_fields == frozenset({"nodeSelector", "affinity"})


def test_bad_args_register_nothing(run):
    with pytest.raises(InputError, match=r"KnativeServing\('k'\)\.mode"):
        run(lambda: KnativeServing("k", KnativeServingArgs(mode="both")))


def test_required_features_map_pod_fields_to_flags():
    assert required_features({"tolerations", "nodeSelector"}) == [
        "kubernetes.podspec-nodeselector",
        "kubernetes.podspec-tolerations",
    ]
    assert required_features(set()) == []


@pytest.mark.parametrize(
    ("features", "ok"),
    [
        # Knative Serving knative-v1.23.0 (what knative-operator v1.23.0 installs) reads these
        # keys in pkg/apis/config/features.go; podspec-dryrun is gone.
        ({"kubernetes.podspec-dryrun": "enabled"}, False),
        ({"kubernetes.podspec-volumes-csi": "enabled"}, True),
        ({"kubernetes.podspec-volumes-ephemeral": "enabled"}, True),
        ({"kubernetes.podspec-volumes-image": "allowed"}, True),
        # secure-pod-defaults: Disabled, AllowRootBounded, Enabled (asSecurePodDefaultsFlag).
        ({"secure-pod-defaults": "AllowRootBounded"}, True),
        ({"secure-pod-defaults": "root-allowed"}, False),
        ({"secure-pod-defaults": "allowed"}, False),
    ],
)
def test_feature_table_is_knative_1_23s(features, ok):
    args = KnativeServingArgs(features=features)
    if ok:
        assert knative_features(args).items() >= features.items()
    else:
        with pytest.raises(InputError):
            knative_features(args)
