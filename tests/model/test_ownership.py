"""Which stack an object belongs to: the field manager annotation and what a create may adopt."""

from __future__ import annotations

import pytest

from components.model.deploy.ownership import (
    FIELD_MANAGER_ANNOTATION,
    MAX_MANAGER,
    Ownership,
    adoption_problem,
    config_section,
    field_manager,
    install_ownership,
    manager_of,
    owner_found,
    with_manager,
)

OURS = field_manager("gpu-inference", "prod")


def live(manager: str | None, kind: str = "Namespace", namespace: str | None = None) -> dict:
    meta: dict = {"name": "models"}
    if namespace:
        meta["namespace"] = namespace
    if manager is not None:
        meta["annotations"] = {FIELD_MANAGER_ANNOTATION: manager, "other": "x"}
    return {"kind": kind, "metadata": meta}


def test_one_manager_per_stack_and_it_stays_short():
    assert OURS == "gpu-inference/gpu-inference/prod"
    assert field_manager("a", "dev") != field_manager("b", "dev")
    long = field_manager("p" * 100, "s" * 100)
    assert len(long) == MAX_MANAGER and long != field_manager("p" * 100, "s" * 99)


def test_the_annotation_is_added_beside_the_others():
    meta = {"name": "x", "annotations": {"a": "1"}}
    assert with_manager(meta, OURS) == {
        "name": "x",
        "annotations": {"a": "1", FIELD_MANAGER_ANNOTATION: OURS},
    }
    assert meta == {"name": "x", "annotations": {"a": "1"}}  # not modified
    assert manager_of(live(OURS)) == OURS and manager_of(live(None)) is None


@pytest.mark.parametrize(
    "found, problem",
    [
        (OURS, None),  # made by this stack's killed run: adopted
        (
            None,
            "Namespace models already exists and was not made by gpu-inference: this stack will "
            "not take it over. Delete it, rename ours, or adopt it on purpose with `pulumi import`",
        ),
        (
            "gpu-inference/gpu-inference/dev",
            "Namespace models already exists and belongs to another stack "
            "(gpu-inference/dev): this stack will not take it over. Delete it, rename ours, or "
            "adopt it on purpose with `pulumi import`",
        ),
        (
            "helm",
            "Namespace models already exists and belongs to the field manager 'helm': this "
            "stack will not take it over. Delete it, rename ours, or adopt it on purpose with "
            "`pulumi import`",
        ),
    ],
)
def test_what_a_create_may_adopt(found, problem):
    assert adoption_problem(live(found), OURS) == problem


def test_a_namespaced_object_is_named_with_its_namespace():
    problem = adoption_problem(live(None, "InferenceService", "ml"), OURS)
    assert problem is not None and problem.startswith("InferenceService ml/models already exists")


@pytest.mark.parametrize(
    "meta, owner",
    [
        (
            {"annotations": {"meta.helm.sh/release-name": "eg", "meta.helm.sh/release-namespace": "envoy-gateway-system"}},
            "belongs to Helm release envoy-gateway-system/eg",
        ),
        (
            {"managedFields": [{"manager": "kubectl-client-side-apply"}, {"manager": "kube-apiserver"}]},
            "was made by 'kube-apiserver', 'kubectl-client-side-apply' (not gpu-inference)",
        ),
        ({"annotations": {FIELD_MANAGER_ANNOTATION: "gpu-inference/p/dev"}}, "belongs to another stack (p/dev)"),
        ({}, "was not made by gpu-inference"),
    ],
)  # fmt: skip
def test_the_owner_found_is_named(meta, owner):
    assert owner_found({"metadata": {"name": "x", **meta}}) == owner


def test_an_installs_ways_out_in_stack_keys_or_in_its_arguments():
    with config_section("gpu-inference:addons.kserve.llm"):
        step = install_ownership(
            "LLMServingInstall('x')", False, "gatewayApiCrds", "gateway_api_crds"
        )
    assert step == Ownership(
        "Use the cluster's own: set `gpu-inference:addons.kserve.llm.gatewayApiCrds: false`; or "
        "adopt it on purpose: set `gpu-inference:addons.kserve.llm.adopt: true` (this stack then "
        "keeps it up to date, and destroy leaves it in place)",
        False,
        "addons.kserve.llm.gatewayApiCrds",
    )
    alone = install_ownership("LLMServingInstall('x')", True, "gatewayApiCrds", "gateway_api_crds")
    assert alone.ways_out.startswith(
        "Use the cluster's own: LLMServingInstall('x') with `gateway_api_crds=False`; or adopt "
        "it on purpose: LLMServingInstall('x') with `adopt=True`"
    )
    assert alone.adopt and alone.scope == "LLMServingInstall('x').gatewayApiCrds"
    with config_section("gpu-inference:knative"):
        knative = install_ownership("KnativeServing('k')", None, "mode", "mode", "patch")
    assert "set `gpu-inference:knative.mode: patch`" in knative.ways_out
    with config_section("gpu-inference:namespaces"):
        models = install_ownership("ModelNamespace('m')", None, use_own=None)
    assert models.ways_out.startswith(
        "Use another name; or adopt it on purpose: set `gpu-inference:namespaces.adopt: true`"
    )
