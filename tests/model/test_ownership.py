"""Which stack an object belongs to: the field manager annotation and what a create may adopt."""

from __future__ import annotations

import pytest

from components.model.deploy.ownership import (
    FIELD_MANAGER_ANNOTATION,
    MAX_MANAGER,
    adoption_problem,
    field_manager,
    manager_of,
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
