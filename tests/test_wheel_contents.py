"""The wheel exposes one import name, `gpu_inference`: the repository's `components/` folder ships
under it (setup.py), and no `components` package, which would collide with any other
distribution's. Built offline from a copy of the sources, as a user's `pip install` builds it;
its code runs under that name alone (a preview of a user's project, `python -m gpu_inference`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

from tests.conftest import ROOT

SETUPTOOLS = Version(__import__("setuptools").__version__)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if Version("77") > SETUPTOOLS:
        pytest.skip(f"setuptools {SETUPTOOLS} cannot build it offline: the test extra has >=77")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for package in ("components", "gpu_inference"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-build-isolation"),
            *("--no-deps", "--no-index", "-w", str(tmp / "dist"), str(src)),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    (built,) = (tmp / "dist").glob("gpu_inference-*.whl")
    return built


def test_the_wheel_has_one_top_level_package_gpu_inference_holding_components(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"gpu_inference"}
    shipped = sorted(
        n.removeprefix("gpu_inference/") for n in names if n.startswith("gpu_inference/")
    )
    folder = sorted(
        str(p.relative_to(ROOT / "components"))
        for p in (ROOT / "components").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    assert shipped == folder  # the folder whole, and nothing of the checkout's shim
    info = {Path(n).name: n for n in names if ".dist-info/" in n}
    with zipfile.ZipFile(wheel) as z:
        assert z.read(info["top_level.txt"]).decode().split() == ["gpu_inference"]
        assert (
            "gpu-inference = gpu_inference.__main__:run"
            in z.read(info["entry_points.txt"]).decode()
        )


def test_the_wheels_code_runs_under_gpu_inference_alone(wheel: Path, tmp_path: Path):
    """A user's project previewed by the wheel's command line, from outside the repository: no
    module of it is imported as `components` (every import inside it is relative)."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    project = tmp_path / "my-project"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", project)
    shutil.copy(ROOT / "__main__.py", project)
    shutil.copy(ROOT / "stacks" / "Pulumi.onprem.yaml", project / "stacks")
    probe = (
        "import sys\n"
        "from gpu_inference.__main__ import run\n"
        "from gpu_inference.preview.cli import main\n"
        "code = main(['preview', 'onprem', '--out', 'out'])\n"
        "import gpu_inference\n"
        "print(code, gpu_inference.__file__)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'components', 'gpu_inference'}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=project, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    first, mods = out.stdout.splitlines()[-2:]
    assert first == f"0 {site / 'gpu_inference' / '__init__.py'}"
    assert mods == "['gpu_inference']"
    usage = subprocess.run(
        [sys.executable, "-m", "gpu_inference", "--help"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert usage.stdout.startswith("usage: gpu-inference [-h] [--debug] COMMAND"), usage.stderr
