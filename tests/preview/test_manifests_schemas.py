"""Every example stack's manifests.yaml is one the API server would take: each object strictly
valid against its schema, core kinds against Kubernetes' own (as kubernetes-validate ships it),
custom resources against their upstream CRDs in ../shared/crds (skipped when absent), GKE's
ComputeClass against tests/computeclass_schema.py; Secrets included, with their values redacted."""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

import pytest
import yaml

from components.preview.manifests import REDACTED_BASE64, render_manifests
from tests.conftest import CRDS, EXAMPLE_STACKS, owned

kubernetes_validate = pytest.importorskip("kubernetes_validate")

K8S_VERSION = "1.34.0"
"""The oldest Kubernetes the example stacks run on (gke-dra's resource.k8s.io/v1 is GA in 1.34)."""


def problems(obj: dict[str, Any]) -> list[str]:
    """What the API server would refuse in `obj` (empty when it takes it); a CR whose CRD is not
    in ../shared/crds is skipped when that directory is absent."""
    from tests.computeclass_schema import validate_compute_class
    from tests.crdschema import validate_cr

    name = f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')!r}"
    try:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    except kubernetes_validate.SchemaNotFoundError:
        try:
            if obj["apiVersion"] == "cloud.google.com/v1" and obj["kind"] == "ComputeClass":
                validate_compute_class(obj)
            elif CRDS.exists():
                validate_cr(obj)
        except AssertionError as e:
            return [f"{name}: {e}"]
    except kubernetes_validate.ValidationError as e:
        path = ".".join(str(p) for p in e.absolute_path) or "<root>"
        return [f"{name}: {path}: {e.message}"]
    if obj["apiVersion"] == "v1" and obj["kind"] == "Secret":
        for key, value in (obj.get("data") or {}).items():
            try:  # the API server decodes `data` as base64 and refuses what is not
                base64.b64decode(value, validate=True)
            except (binascii.Error, TypeError):
                return [f"{name}: data.{key}: {value!r} is not base64"]
    return []


def docs_of(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_object_of_every_example_stack_validates(example_previews, stack):
    docs = docs_of((example_previews[stack].out_dir / "manifests.yaml").read_text())
    assert docs
    assert [p for d in docs for p in problems(d)] == []


def test_the_checks_refuse_what_the_api_server_refuses():
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "models"},
        "stringData": {"HF_TOKEN": "[secret]"},
    }
    assert problems(secret) == []
    whole = dict(secret, stringData="[secret]")  # what the preview wrote before
    assert problems(whole) == [
        "Secret 's': stringData: '[secret]' is not of type 'object', 'null'",
    ]
    assert problems(dict(secret, data={"HF_TOKEN": "[secret]"})) == [
        "Secret 's': data.HF_TOKEN: '[secret]' is not base64"
    ]
    typo = copy.deepcopy(secret)
    typo["strinData"] = typo.pop("stringData")
    assert len(problems(typo)) == 1 and "strinData" in problems(typo)[0]


def test_a_secret_keeps_its_keys_with_its_values_redacted(run):
    """The preview writes a Secret the stack makes (static storage credentials) with each key it
    holds and `[secret]` for each value, and the manifest is valid."""
    from components.serving.model_namespace import ModelNamespace, ModelNamespaceArgs

    canary = "CANARY-5ecret-value"
    args = ModelNamespaceArgs(
        "models",
        static_credentials={"HF_TOKEN": canary, "OTHER": canary},
        static_credentials_secret=True,
    )
    g = run(lambda: ModelNamespace("models", args))
    text = render_manifests(g.as_graph())
    assert canary not in text
    (secret,) = [d for d in docs_of(text) if d["kind"] == "Secret"]
    assert secret == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": owned(
            {"name": "model-reader-storage", "namespace": "models", "annotations": {}}
        ),
        "stringData": {"HF_TOKEN": "[secret]", "OTHER": "[secret]"},
        "type": "Opaque",
    }
    assert "# values redacted: each '[secret]' (W3NlY3JldF0= in data, its base64)" in text
    assert [p for d in docs_of(text) for p in problems(d)] == []


def test_a_secrets_data_is_written_as_base64_of_the_redaction(run):
    import pulumi

    from components.kube.objects import SECRET, CoreObject

    g = run(
        lambda: CoreObject(
            SECRET,
            "s",
            metadata={"name": "s", "namespace": "models"},
            data=pulumi.Output.secret({"token": "c2VjcmV0"}),
        )
    )
    assert g.one("kubernetes:core/v1:Secret").inputs["data"] == {"token": "[secret]"}
    (secret,) = docs_of(render_manifests(g.as_graph()))
    assert secret["data"] == {"token": REDACTED_BASE64}
    assert base64.b64decode(REDACTED_BASE64) == b"[secret]"
    assert problems(secret) == []
