"""The README's library example is a complete program: previewed exactly as written, as the
`__main__.py` of a project of one's own (docs/own-project.md), it is clean (its namespace, KServe
and cert-manager installed, a progress deadline for a pool at zero), and it places the predictor
on the pool."""

import re
from pathlib import Path

import pytest

from components.preview.cli import main
from tests.conftest import ROOT


def _example() -> str:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Use the components.*?```python\n(.*?)```", text, re.S)
    assert block, "the README lost its Python example"
    return block.group(1)


def test_readme_python_example_runs(run):
    g = run(lambda: exec(_example(), {}))
    isvc = g.one("kubernetes:serving.kserve.io/v1beta1:InferenceService")
    predictor = isvc.inputs["spec"]["predictor"]
    assert predictor["nodeSelector"] == {"gpu-inference.dev/pool": "l4"}
    assert {
        "key": "nvidia.com/gpu",
        "operator": "Equal",
        "value": "present",
        "effect": "NoSchedule",
    } in predictor["tolerations"]
    assert g.depends_on(isvc, g.one("kubernetes:core/v1:ServiceAccount", "models-sa"))
    assert g.depends_on(isvc, g.one("kubernetes:helm.sh/v3:Release", "kserve-runtimes"))


def test_the_readme_example_previews_clean_as_a_users_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "my-infra"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: my-infra\nruntime: python\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    (project / "__main__.py").write_text(_example())
    monkeypatch.chdir(project)
    code = main(["preview", "dev"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert (
        "\n20 resources; placement: 0 errors, 0 warnings; pods: 1 judged clean, 0 not judged by "
        "some rule\n"
    ) in out
    manifests = (project / "build" / "dev" / "manifests.yaml").read_text()
    header = manifests.split("\n---\n", 1)[0]
    for release in ("cert-manager", "kserve", "kserve-crd", "knative-operator"):
        assert f"\n#   {release}: chart " in header, release
    assert (
        "# kubernetes:core/v1:Namespace::models-ns\napiVersion: v1\nkind: Namespace\n" in manifests
    )
    assert "    serving.knative.dev/progress-deadline: 900s\n" in manifests
