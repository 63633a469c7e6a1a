"""A user's own program that fails is the user's error: exit 2 with their file, line and the
message, not "internal error" (exit 3, kept for bugs of ours) nor the stack file."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from components.kube.objects import plugin_version
from components.preview.cli import main

POOL = """\
from gpu_inference import GkeGpuNodePool, GkeGpuNodePoolArgs

GkeGpuNodePool(
    "l4",
    GkeGpuNodePoolArgs(
        {cluster}="my-cluster",
        location="us-central1",
        machine_type="g2-standard-8",
        accelerator="{accelerator}",
    ),
)
"""


def _project(root: Path, program: str, **modules: str) -> Path:
    """A project of the user's own, as docs/own-project.md lays it out: Pulumi.yaml, the program
    and a stack file beside it (no stackConfigDir)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text("name: my-infra\nruntime: python\n")
    (root / "Pulumi.dev.yaml").write_text("config: {}\n")
    (root / "__main__.py").write_text(program)
    for name, text in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(text))
    return root


def _preview(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[int, str]:
    code = main(["preview", "dev", "--project-dir", str(root), "--out", str(root / "out")])
    return code, capsys.readouterr().err


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # messages show paths relative to the working directory


def test_a_misspelt_keyword_argument_names_the_program_line(tmp_path: Path, capsys) -> None:
    root = _project(tmp_path / "infra", POOL.format(cluster="clustr", accelerator="nvidia-l4"))
    assert _preview(capsys, root) == (
        2,
        "error: TypeError: GkeGpuNodePoolArgs.__init__() got an unexpected keyword argument "
        "'clustr'\n"
        "  (program: infra/__main__.py:5)\n",
    )


def test_a_components_input_error_names_the_program_line_not_the_stack_file(
    tmp_path: Path, capsys
) -> None:
    root = _project(tmp_path / "infra", POOL.format(cluster="cluster", accelerator="nvidia-l5"))
    code, err = _preview(capsys, root)
    assert code == 2
    assert err.startswith(
        "error: GkeGpuNodePool('l4').args.accelerator: accelerator 'nvidia-l5' is not offered "
        "by GKE (allowed: nvidia-a100-80gb, "
    )
    assert err.endswith(")\n  (program: infra/__main__.py:3)\n")
    assert "stack config" not in err


def test_the_innermost_line_of_the_users_code_is_named(tmp_path: Path, capsys) -> None:
    """A program split into modules: the line in the module that called the component."""
    pools = POOL.format(cluster="cluster", accelerator="nvidia-l4").replace(
        "GkeGpuNodePool(\n", "def l4(max_nodes):\n    return GkeGpuNodePool(\n"
    )
    pools = pools.replace(
        '        accelerator="nvidia-l4",\n',
        '        accelerator="nvidia-l4",\n        max_nodes=max_nodes,\n',
    )
    root = _project(tmp_path / "infra", "import pools\n\npools.l4(-1)\n", pools=pools)
    code, err = _preview(capsys, root)
    assert code == 2
    assert err.endswith("  (program: infra/pools.py:4)\n"), err


def test_a_cloud_sdk_missing_under_a_program_names_the_extra_and_the_line(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pulumi_gcp", None)  # as if not installed
    plugin_version.cache_clear()  # the version an earlier test of this process read
    root = _project(tmp_path / "infra", POOL.format(cluster="cluster", accelerator="nvidia-l4"))
    assert _preview(capsys, root) == (
        2,
        "error: the gke components need the Pulumi SDK pulumi-gcp, which is not installed: "
        "pip install 'gpu-inference[gke]'\n"
        "  (program: infra/__main__.py:3)\n",
    )
