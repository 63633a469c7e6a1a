"""The Pulumi Kubernetes Operator sample deploys a stack of this repository as it is: the stack
it names exists, the ServiceAccount it runs as is the one it binds, and it never destroys on
deletion. (Its schema: tests/e2e/test_operator_sample.py, against the operator's CRDs.)"""

from __future__ import annotations

import yaml

from tests.conftest import EXAMPLE_STACKS, ROOT
from tests.e2e.test_operator_sample import SAMPLE, VERSION


def test_the_sample_deploys_an_example_stack_of_this_repository():
    docs = {d["kind"]: d for d in yaml.safe_load_all(SAMPLE.read_text()) if d}
    assert sorted(docs) == ["ClusterRoleBinding", "ServiceAccount", "Stack"]
    spec = docs["Stack"]["spec"]
    _org, stack = spec["stack"].split("/")
    assert stack in EXAMPLE_STACKS
    assert "environment" in yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    assert spec["repoDir"] == "."  # Pulumi.yaml is at the repository's root
    assert spec["serviceAccountName"] == docs["ServiceAccount"]["metadata"]["name"]
    assert docs["ClusterRoleBinding"]["subjects"] == [
        {"kind": "ServiceAccount", "name": spec["serviceAccountName"], "namespace": "pulumi-stacks"}
    ]
    assert spec["destroyOnFinalize"] is False


def test_the_docs_name_the_version_the_sample_is_validated_against():
    assert f"operator {VERSION}" in SAMPLE.read_text()
    assert VERSION in (ROOT / "docs" / "operator.md").read_text()
