"""The Pulumi Kubernetes Operator sample (stacks/operator/) against the operator's own CRDs at the
pinned version, read from its Go module (`go mod download`, the module cache; never copied into
this repository). Where the Go module proxy does not serve the module, the test skips saying so;
GPU_INFERENCE_OPERATOR_CRDS may name a directory holding the same CRD files instead (e.g.
`deploy/crds` of a checkout of the operator at the pinned tag)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.crdschema import validate_cr

pytestmark = [pytest.mark.e2e, pytest.mark.tier("packaging")]

MODULE = "github.com/pulumi/pulumi-kubernetes-operator/v2"
VERSION = "v2.9.0"
SAMPLE = ROOT / "stacks" / "operator" / "eks-esc.yaml"


@pytest.fixture(scope="module")
def crds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("GPU_INFERENCE_OPERATOR_CRDS")
    if given:
        return Path(given)
    work = tmp_path_factory.mktemp("operator-module")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOWORK": "off"}
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"{MODULE}@{VERSION}"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = json.loads(out.stdout or "{}")
    if found.get("Error") or not found.get("Dir"):
        pytest.skip(
            f"the operator's Go module {MODULE}@{VERSION} is not available here "
            f"({found.get('Error') or out.stderr.strip()}); set GPU_INFERENCE_OPERATOR_CRDS to "
            "its deploy/crds directory to validate the sample"
        )
    return Path(found["Dir"]) / "deploy" / "crds"


def documents() -> list[dict]:
    return [d for d in yaml.safe_load_all(SAMPLE.read_text()) if d]


def workspace_of(stack: dict) -> dict:
    """The Workspace the operator makes from the Stack's workspaceTemplate, as validated."""
    return {
        "apiVersion": "auto.pulumi.com/v1alpha1",
        "kind": "Workspace",
        "metadata": {
            "name": stack["metadata"]["name"],
            "namespace": stack["metadata"]["namespace"],
        },
        "spec": stack["spec"]["workspaceTemplate"]["spec"],
    }


def test_the_sample_validates_against_the_operators_crds(crds: Path):
    (stack,) = [d for d in documents() if d["kind"] == "Stack"]
    validate_cr(stack, crds)
    validate_cr(workspace_of(stack), crds)


def test_a_misspelled_field_is_caught(crds: Path):
    (stack,) = [d for d in documents() if d["kind"] == "Stack"]
    bad = copy.deepcopy(stack)
    bad["spec"]["destroyOnFinalise"] = bad["spec"].pop("destroyOnFinalize")
    with pytest.raises(AssertionError, match="destroyOnFinalise"):
        validate_cr(bad, crds)
    bad = workspace_of(stack)
    bad["spec"]["resources"]["request"] = bad["spec"]["resources"].pop("requests")
    with pytest.raises(AssertionError, match="request"):
        validate_cr(bad, crds)
