"""The built wheel, as a user installs it: a fresh virtualenv with only the wheel and its `gke`
extra (and their dependencies from the index, through pip's cache), a project of the user's own outside this
repository whose program imports `gpu_inference`, and `python -m gpu_inference preview` on it.
What it writes is byte-identical to the preview of the same stack from this repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from components.preview.preview import OUTPUT_FILES, preview
from tests.conftest import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.tier("packaging")]

PROGRAM = '''"""A user's own stack program, through the public import name."""

from gpu_inference import InferencePlatform, load_stack_spec

InferencePlatform("gpu-inference", load_stack_spec())
'''


def _run(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(args, capture_output=True, text=True, **kw)  # type: ignore[call-overload]
    assert out.returncode == 0, f"{args}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding the wheel built from a copy of the sources (no build/ left in
    the repository); its python."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copy(ROOT / "setup.py", src / "setup.py")
    for package in ("components", "gpu_inference"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(src)])
    (wheel,) = dist.glob("gpu_inference-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--quiet", f"{wheel}[gke]"])  # gke-dev's cloud
    return python


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_the_wheel_ships_one_import_name_and_the_command(installed: Path, tmp_path: Path):
    probe = (
        "import gpu_inference, importlib.util, sys\n"
        "print(gpu_inference.__file__)\n"
        "print(gpu_inference.Placement.__module__, importlib.util.find_spec('components'))\n"
        "print(sorted(m for m in ('pulumi_aws', 'pulumi_gcp') if m in sys.modules))\n"
    )
    out = _run([str(installed), "-c", probe], cwd=tmp_path, env=_clean_env())
    where, placement, sdks = out.stdout.splitlines()
    assert Path(where).is_relative_to(installed.parent.parent), where  # site-packages, not ROOT
    assert (placement, sdks) == ("gpu_inference.model.scheduling.placement None", "[]")
    usage = _run([str(installed.parent / "gpu-inference"), "--help"], env=_clean_env())
    assert usage.stdout.startswith("usage: gpu-inference")


def test_a_users_project_previews_through_the_installed_wheel(installed: Path, tmp_path: Path):
    project = tmp_path / "my-project"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copy(ROOT / "stacks" / "Pulumi.gke-dev.yaml", project / "stacks")
    (project / "__main__.py").write_text(PROGRAM)
    out = _run(
        [
            str(installed),
            "-m",
            "gpu_inference",
            "preview",
            "gke-dev",
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=project,
        env=_clean_env(),
    )
    assert "placement: 0 errors" in out.stdout
    here = preview("gke-dev", out_dir=tmp_path / "here", project_dir=ROOT)
    for name in OUTPUT_FILES:
        assert (tmp_path / "out" / name).read_bytes() == (here.out_dir / name).read_bytes(), name
