"""LLMServingInstall: the exact releases and manifests, versions, values and order KServe v0.20.0's
LLMInferenceService needs, each step switchable, with local copies for air-gapped clusters."""

from __future__ import annotations

import pytest

from components.model.errors import InputError
from components.preview.mockrun import FakeCloud, run_program
from components.serving.llm_install import LLMServingInstall, LLMServingInstallArgs
from tests.conftest import values_of

RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
GATEWAY_CLASS = "kubernetes:gateway.networking.k8s.io/v1:GatewayClass"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
CHART = "kubernetes:helm.sh/v4:Chart"


def install(**kw):
    return run_program(lambda: LLMServingInstall("llm", LLMServingInstallArgs(**kw)))


def releases(g):
    return {r.inputs["name"]: r for r in g.of_type(RELEASE)}


def files(g):
    return {r.name: r for r in g.of_type(CONFIG_FILE)}


def test_every_step_at_its_pinned_version():
    g = install()
    rel = releases(g)
    assert {
        n: (r.inputs["chart"], r.inputs["version"], r.inputs["namespace"]) for n, r in rel.items()
    } == {
        # The stack's one cert-manager pin, at the 1.18.0 the LLM guide asks for.
        "cert-manager": ("cert-manager", "v1.18.2", "cert-manager"),
        "eg": ("oci://docker.io/envoyproxy/gateway-helm", "v1.8.1", "envoy-gateway-system"),
        "aieg-crd": (
            "oci://docker.io/envoyproxy/ai-gateway-crds-helm",
            "v1.0.0",
            "envoy-ai-gateway-system",
        ),
        "aieg": ("oci://docker.io/envoyproxy/ai-gateway-helm", "v1.0.0", "envoy-ai-gateway-system"),
        "kserve-llmisvc-crd": (
            "oci://ghcr.io/kserve/charts/kserve-llmisvc-crd",
            "v0.20.0",
            "kserve",
        ),
        "kserve-llmisvc-resources": (
            "oci://ghcr.io/kserve/charts/kserve-llmisvc-resources",
            "v0.20.0",
            "kserve",
        ),
        "kserve-llmisvc-configs": (
            "oci://ghcr.io/kserve/charts/kserve-runtime-configs",
            "v0.20.0",
            "kserve",
        ),
    }
    assert rel["cert-manager"].inputs["repositoryOpts"] == {"repo": "https://charts.jetstack.io"}
    assert {n: r.inputs["file"] for n, r in files(g).items()} == {
        "llm-gateway-api-crds": "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.5.1/standard-install.yaml",
        "llm-inference-extension-crds": "https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/v1.5.0/v1-manifests.yaml",
        "llm-llm-d-crds": "https://github.com/llm-d/llm-d-router/releases/download/v0.9.0/manifests.yaml",
        "llm-lws": "https://github.com/kubernetes-sigs/lws/releases/download/v0.8.0/manifests.yaml",
    }


def test_values():
    rel = releases(install())
    assert values_of(rel["cert-manager"]) == {"crds": {"enabled": True, "keep": True}}
    # The GIE CRDs come from their release; the chart's bundled copy would collide.
    assert values_of(rel["kserve-llmisvc-resources"]) == {
        "kserve": {"llmisvc": {"createGIECRDs": False}}
    }
    assert values_of(rel["kserve-llmisvc-configs"]) == {
        "kserve": {"llmisvcConfigs": {"enabled": True}, "servingruntime": {"enabled": False}}
    }
    eg = rel["eg"].inputs["values"]["config"]["envoyGateway"]
    assert eg["extensionManager"]["backendResources"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "version": "v1"}
    ]
    assert eg["extensionManager"]["service"]["fqdn"] == {
        "hostname": "ai-gateway-controller.envoy-ai-gateway-system.svc.cluster.local",
        "port": 1063,
    }
    assert eg["extensionApis"] == {"enableEnvoyPatchPolicy": True, "enableBackend": True}
    assert values_of(rel["aieg"]) == {}


def test_beside_kserve_the_shared_resources_are_not_made_twice():
    rel = releases(install(kserve_installed=True))
    assert values_of(rel["kserve-llmisvc-resources"]) == {
        "kserve": {"llmisvc": {"createGIECRDs": False}, "createSharedResources": False}
    }


def test_dependency_order():
    g = install()
    rel, cf = releases(g), files(g)
    chain = [
        rel["cert-manager"],
        cf["llm-gateway-api-crds"],
        cf["llm-inference-extension-crds"],
        g.one(CHART),
        rel["eg"],
        rel["aieg-crd"],
        rel["aieg"],
        g.one(GATEWAY_CLASS),
        cf["llm-lws"],
        rel["kserve-llmisvc-crd"],
        rel["kserve-llmisvc-resources"],
        rel["kserve-llmisvc-configs"],
    ]
    for later, earlier in zip(chain[1:], chain, strict=False):
        assert g.depends_on(later, earlier), (later.name, earlier.name)
    # GIE and llm-d CRDs before the gateway provider starts (KServe's dependency guide).
    assert g.depends_on(rel["eg"], cf["llm-llm-d-crds"])
    assert not g.depends_on(rel["cert-manager"], rel["eg"])
    gateway = g.one(GATEWAY)
    assert g.depends_on(gateway, rel["kserve-llmisvc-resources"])
    assert g.depends_on(rel["kserve-llmisvc-crd"], g.one(GATEWAY_CLASS))


def test_gateway_class_and_default_gateway():
    g = install()
    gc = g.one(GATEWAY_CLASS).inputs
    manager = {"pulumi.com/patchFieldManager": "gpu-inference/gpu-inference/test"}
    assert gc["metadata"] == {"name": "envoy", "annotations": manager}
    assert gc["spec"] == {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"}
    gw = g.one(GATEWAY).inputs
    assert gw["metadata"] == {
        "name": "kserve-ingress-gateway",
        "namespace": "kserve",
        "annotations": manager,
    }
    assert gw["spec"] == {
        "gatewayClassName": "envoy",
        "listeners": [
            {
                "name": "http",
                "protocol": "HTTP",
                "port": 80,
                "allowedRoutes": {"namespaces": {"from": "All"}},
            }
        ],
        "infrastructure": {"labels": {"serving.kserve.io/gateway": "kserve-ingress-gateway"}},
    }


NAMESPACE = "kubernetes:core/v1:Namespace"


def namespaces(g):
    return {r.inputs["metadata"]["name"]: r for r in g.of_type(NAMESPACE)}


def test_the_install_makes_its_namespaces_and_helm_makes_none():
    g = install()
    ns = namespaces(g)
    assert sorted(ns) == [
        "cert-manager",
        "envoy-ai-gateway-system",
        "envoy-gateway-system",
        "kserve",
    ]
    rel = releases(g)
    for r in rel.values():
        assert r.inputs.get("createNamespace") in (False, None), r.name
    assert g.depends_on(rel["eg"], ns["envoy-gateway-system"])
    assert g.depends_on(rel["aieg-crd"], ns["envoy-ai-gateway-system"])
    assert g.depends_on(rel["cert-manager"], ns["cert-manager"])
    assert g.depends_on(rel["kserve-llmisvc-crd"], ns["kserve"])


def test_beside_kserve_its_namespace_is_shared_not_made_again():
    assert "kserve" not in namespaces(install(kserve_installed=True, cert_manager=False))
    assert sorted(namespaces(install(kserve_installed=True, cert_manager=False))) == [
        "envoy-ai-gateway-system",
        "envoy-gateway-system",
    ]


def test_steps_switched_off():
    g = install(
        cert_manager=False,
        gateway_api_crds=False,
        envoy_gateway=False,
        leader_worker_set=False,
        gateway=False,
    )
    assert set(releases(g)) == {
        "kserve-llmisvc-crd",
        "kserve-llmisvc-resources",
        "kserve-llmisvc-configs",
    }
    assert set(files(g)) == {"llm-inference-extension-crds", "llm-llm-d-crds"}
    assert g.of_type(GATEWAY_CLASS) == [] and g.of_type(GATEWAY) == []
    assert g.of_type(CHART) == []
    assert g.depends_on(releases(g)["kserve-llmisvc-crd"], files(g)["llm-llm-d-crds"])
    # The cluster's own Inference Extension and llm-d CRDs (KServe's script skips both).
    assert set(files(install(inference_extension_crds=False))) == {
        "llm-gateway-api-crds",
        "llm-lws",
    }


def test_envoy_gateway_installs_only_its_own_crds():
    """As KServe v0.20.0 hack/setup/infra/manage.envoy-gateway-helm.sh: the gateway.envoyproxy.io
    CRDs apart, then gateway-helm with --skip-crds (its crds/ carry Gateway API CRDs too)."""
    g = install()
    (crds,) = g.of_type(CHART)
    assert crds.name == "llm-envoy-gateway-crds"
    assert crds.inputs == {
        "chart": "oci://docker.io/envoyproxy/gateway-crds-helm",
        "version": "v1.8.1",
        "values": {"crds": {"gatewayAPI": {"enabled": False}, "envoyGateway": {"enabled": True}}},
    }
    eg = releases(g)["eg"]
    assert eg.inputs["skipCrds"] is True
    assert values_of(eg)["crds"] == {"gatewayAPI": {"safeUpgradePolicy": {"enabled": False}}}
    assert g.depends_on(eg, crds)
    assert g.depends_on(crds, files(g)["llm-inference-extension-crds"])


def test_every_upstream_object_applied_whole_is_marked_by_a_transform():
    g = install()
    whole = [*g.of_type(CONFIG_FILE), *g.of_type(CHART)]
    assert len(whole) == 5 and all(r.transforms == 1 for r in whole)


def test_air_gapped_copies(tmp_path):
    chart = tmp_path / "kserve-llmisvc-crd"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("name: kserve-llmisvc-crd\nversion: v0.20.0\n")
    lws = tmp_path / "lws.yaml"
    lws.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: lws-system}\n")
    g = install(llmisvc_crd_chart=str(chart), lws_manifest=str(lws))
    crd = releases(g)["kserve-llmisvc-crd"].inputs
    assert crd["chart"] == str(chart)
    assert "version" not in crd and "repositoryOpts" not in crd
    assert files(g)["llm-lws"].inputs["file"] == str(lws)


@pytest.mark.parametrize(
    ("kw", "path", "piece"),
    [
        ({"lws_manifest": "/nowhere/lws.yaml"}, "lws_manifest", "is not a file"),
        ({"envoy_gateway_chart": "/nowhere/eg"}, "envoy_gateway_chart", "does not exist"),
    ],
)
def test_a_bad_local_copy_is_refused_before_anything_is_registered(kw, path, piece):
    seen: list[str] = []

    class Recording(FakeCloud):
        def new_resource(self, args):
            seen.append(args.typ)
            return super().new_resource(args)

    with pytest.raises(InputError) as err:
        run_program(
            lambda: LLMServingInstall("llm", LLMServingInstallArgs(**kw)), mocks=Recording()
        )
    assert err.value.path == f"LLMServingInstall('llm').args.{path}"
    assert piece in str(err.value)
    assert seen == []
