"""Every namespace of a stack is made once, by the platform, under a name of its own: which parts
want it, with which labels, and the aliases that keep a stack deployed before this rule."""

from __future__ import annotations

import pytest

from components.model.deploy.ownership import NamespacePlan
from components.platform.namespaces import NamespaceUse, stack_namespaces
from components.preview import preview as pv
from tests.conftest import ROOT

T = "gpu-inference:index:"
NAMESPACE = "kubernetes:core/v1:Namespace"
PSA = "pod-security.kubernetes.io/enforce"


def test_one_namespace_per_name_installs_labels_over_the_models():
    uses = [
        NamespaceUse(T + "SeldonCoreInstall", "p-seldon", {
            "seldon-mesh": NamespacePlan("p-seldon-runtime-ns", {PSA: "privileged"}),
        }),
        NamespaceUse(T + "ModelNamespace", "p-ns-seldon-mesh", {
            "seldon-mesh": NamespacePlan("p-ns-seldon-mesh-ns", {PSA: "baseline", "x": "1"}),
        }, install=False),
        NamespaceUse(T + "KServeInstall", "p-kserve", {"kserve": NamespacePlan("p-kserve-namespace")}),
        NamespaceUse(T + "LLMServingInstall", "p-kserve-llm", {
            "kserve": NamespacePlan("p-kserve-llm-ns-kserve"),
            "envoy-gateway-system": NamespacePlan("p-kserve-llm-ns-envoy-gateway-system"),
        }, active=False),
    ]  # fmt: skip
    made = stack_namespaces(uses)
    # A part that is off makes nothing, but names what a namespace may have been made as.
    assert list(made) == ["seldon-mesh", "kserve"]
    assert made["seldon-mesh"].labels == {PSA: "privileged", "x": "1"}
    assert made["seldon-mesh"].previous == (
        (T + "ModelNamespace", "p-ns-seldon-mesh", "p-ns-seldon-mesh-ns"),
        (T + "SeldonCoreInstall", "p-seldon", "p-seldon-runtime-ns"),
    )
    assert made["kserve"].labels == {}
    assert [p[0] for p in made["kserve"].previous] == [
        T + "KServeInstall",
        T + "LLMServingInstall",
    ]


def namespaces_of(stack: str, change: dict) -> dict[str, dict]:
    project = pv.load_project(ROOT)
    config = pv.load_stack_config(project, stack)
    values = {**config.values, **change}
    graph = pv.graph_entries(
        pv.run_stack(
            project, pv.StackConfig(config.stack, config.file, values, config.secret_keys)
        ).resources
    )
    return {e["inputs"]["metadata"]["name"]: e for e in graph if e["type"] == NAMESPACE}


@pytest.mark.parametrize("kserve", [True, False])
def test_kserve_is_the_platforms_whether_or_not_kserve_is_installed_beside_the_llm_install(kserve):
    addons = {"kserve": {"enabled": kserve, "defaultDeploymentMode": "Standard"}}
    found = namespaces_of("gke-llm", {"gpu-inference:addons": addons})
    ns = found["kserve"]
    assert (ns["name"], ns["parent"]) == (
        "gpu-inference-namespace-kserve",
        "gpu-inference:index:InferencePlatform::gpu-inference",
    )
    # Stacks deployed before: KServe's namespace resource, or the LLM install's.
    assert ns["options"]["aliases"] == [
        "gpu-inference:index:InferencePlatform$gpu-inference:index:KServeInstall$"
        "kubernetes:core/v1:Namespace::gpu-inference-kserve-namespace",
        "gpu-inference:index:InferencePlatform$gpu-inference:index:LLMServingInstall$"
        "kubernetes:core/v1:Namespace::gpu-inference-kserve-llm-ns-kserve",
    ]
    # Its refusal names the ways out of the part that wants it (KServe's, else the LLM install's).
    scope = "addons-kserve" if kserve else "addons-kserve-llm"
    assert ns["options"]["hooks"] == {
        "before_create": [f"gpu-inference-cluster-k8s-refuse-foreign-{scope}"],
        "after_delete": ["gpu-inference-cluster-k8s-drop-namespace"],
    }
    assert ns["options"]["retainOnDelete"] is True


@pytest.mark.parametrize("seldon", [True, False])
def test_seldon_mesh_keeps_its_resource_and_takes_the_installs_pod_security(seldon):
    addons = {"seldon": {"enabled": seldon, "podSecurity": "privileged"}}
    found = namespaces_of("onprem", {"gpu-inference:addons": addons})
    ns = found["seldon-mesh"]
    assert ns["name"] == "gpu-inference-namespace-seldon-mesh"
    assert ns["inputs"]["metadata"]["labels"][PSA] == ("privileged" if seldon else "baseline")
    # The install's other namespaces stay one resource each, named after themselves.
    assert all(e["name"] == f"gpu-inference-namespace-{n}" for n, e in found.items())


def test_a_model_namespace_that_an_install_uses_too_is_one_resource():
    isvc = {
        "name": "iris",
        "namespace": "kserve",
        "predictor": {"pool": "rtx", "gpus": 1, "model": {"format": "sklearn", "storageUri": "s3://b/m"}},
    }  # fmt: skip
    found = namespaces_of(
        "onprem",
        {
            "gpu-inference:addons": {"kserve": {"enabled": True}, "certManager": {"enabled": True}},
            "gpu-inference:inferenceServices": [isvc],
        },
    )
    ns = found["kserve"]
    assert ns["inputs"]["metadata"]["labels"][PSA] == "baseline"  # the models' level
    # What it was made as before: KServe's, the LLM install's (off here), the models'.
    assert [a.split("::")[-1] for a in ns["options"]["aliases"]] == [
        "gpu-inference-kserve-namespace",
        "gpu-inference-kserve-llm-ns-kserve",
        "gpu-inference-ns-kserve-ns",
    ]
