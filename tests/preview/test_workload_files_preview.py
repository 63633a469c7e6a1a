"""`gpu-inference:workloadFiles` through the real stack program: a stack whose workloads are in a
file previews exactly what the same stack with them inline does, and `gpu-inference preview`
points a fault in the file at the file's line (and where the stack file names it)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.preview.cli import main
from components.preview.preview import OUTPUT_FILES, preview

ROOT = Path(__file__).resolve().parents[2]
NS = "gpu-inference"
PROJECT_YAML = "name: gpu-inference\nruntime: python\nstackConfigDir: stacks\n"


def _project(root: Path, config: dict[str, Any], files: dict[str, str] | None = None) -> Path:
    """A project running the repository's stack program with `config` as stack `dev`."""
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text(PROJECT_YAML)
    shutil.copyfile(ROOT / "__main__.py", root / "__main__.py")
    (root / "stacks" / "Pulumi.dev.yaml").write_text(
        yaml.safe_dump({"config": config}, sort_keys=False)
    )
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _eks_prod() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.eks-prod.yaml").read_text())
    return doc["config"]


def test_workloads_in_a_file_preview_the_same_as_inline(tmp_path: Path) -> None:
    """The eks-prod example stack, its InferenceServices but the first and its Seldon servers and
    models moved to `stacks/workloads/dev.yaml`: every output file byte for byte the same."""
    inline = _eks_prod()
    split = yaml.safe_load(yaml.safe_dump(inline))
    isvcs = split[f"{NS}:inferenceServices"]
    seldon = split[f"{NS}:seldon"]
    assert len(isvcs) >= 2 and seldon["servers"] and seldon["models"]
    body = {
        "inferenceServices": isvcs[1:],
        "seldon": {"servers": seldon.pop("servers"), "models": seldon.pop("models")},
    }
    split[f"{NS}:inferenceServices"] = isvcs[:1]
    split[f"{NS}:workloadFiles"] = ["stacks/workloads/dev.yaml"]
    a = _project(tmp_path / "inline", inline)
    b = _project(tmp_path / "files", split, {"stacks/workloads/dev.yaml": yaml.safe_dump(body)})
    preview("dev", out_dir=tmp_path / "out-a", project_dir=a)
    rb = preview("dev", out_dir=tmp_path / "out-b", project_dir=b)
    assert any(e["type"].endswith(":InferenceService") for e in rb.entries)
    for name in OUTPUT_FILES:
        assert (tmp_path / "out-b" / name).read_text() == (tmp_path / "out-a" / name).read_text(), (
            name
        )


ON_PREM = {
    f"{NS}:cluster": {"provider": "existing", "name": "lab"},
    f"{NS}:pools": [{"name": "gpu", "nodes": ["n1"], "gpusPerNode": 4}],
    f"{NS}:knative": {"mode": "patch"},
    f"{NS}:workloadFiles": ["stacks/models.yaml"],
}
MODELS = """\
inferenceServices:
  - name: a
    predictor:
      pool: gpu
      gpus: 1
      model: {format: sklearn, storageUri: gs://m/a}
  - name: b
    predictor:
      pool: gpu
      gpus: 9
      model: {format: sklearn, storageUri: gs://m/b}
"""


def _cli(capsys: pytest.CaptureFixture[str], project: Path) -> tuple[int, str]:
    code = main(["preview", "dev", "--project-dir", str(project), "--out", str(project / "out")])
    return code, capsys.readouterr().err


def test_cli_points_a_fault_in_the_file_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, ON_PREM, {"stacks/models.yaml": MODELS})
    monkeypatch.chdir(tmp_path)
    code, err = _cli(capsys, project)
    assert code == 2
    assert err == (
        "error: stacks/models.yaml:10: inferenceServices[1].predictor.gpus: 9 GPU(s) asked for "
        "but a node of pool 'gpu' has 4 (allowed: gpus at most 4)\n"
        "  (workload file: stacks/models.yaml:10, named by gpu-inference:workloadFiles[0] in "
        "stacks/Pulumi.dev.yaml:13)\n"
    )
    assert not (project / "out").exists()


def test_cli_names_the_key_of_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, ON_PREM)
    monkeypatch.chdir(tmp_path)
    code, err = _cli(capsys, project)
    assert code == 2
    assert err == (
        "error: gpu-inference:workloadFiles[0]: file 'stacks/models.yaml' not found (looked for "
        f"{tmp_path.resolve()}/stacks/models.yaml) (allowed: a YAML file path relative to the "
        "project directory (where Pulumi.yaml is))\n"
        "  (stack config: stacks/Pulumi.dev.yaml:13)\n"
    )


def test_cli_previews_a_stack_with_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(
        tmp_path, ON_PREM, {"stacks/models.yaml": MODELS.replace("gpus: 9", "gpus: 2")}
    )
    monkeypatch.chdir(tmp_path)
    code, err = _cli(capsys, project)
    assert code == 0, err
    docs = list(yaml.safe_load_all((project / "out" / "manifests.yaml").read_text()))
    names = [d["metadata"]["name"] for d in docs if d and d["kind"] == "InferenceService"]
    assert names == ["a", "b"]
