"""The package's public names, as the issues and the README promise them."""

import pytest

import components


def test_every_exported_name_imports():
    for name in components.__all__:
        assert getattr(components, name) is not None, name


def test_the_promised_imports():
    from components import (  # noqa: F401
        EksGpuNodeGroup,
        ExistingGpuNodes,
        GkeGpuNodePool,
        InferenceService,
        KnativeServing,
        LLMInferenceService,
        LLMServingInstall,
        Placement,
        SeldonModel,
        SeldonServer,
        SeldonServerConfig,
        Taint,
        Toleration,
    )


def _type_checking_names(path):
    """The names a package's `if TYPE_CHECKING:` block imports (what type checkers see)."""
    import ast

    tree = ast.parse(path.read_text())
    block = next(
        n
        for n in tree.body
        if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
    )
    return sorted(
        a.asname or a.name
        for n in ast.walk(block)
        if isinstance(n, ast.ImportFrom)
        for a in n.names
    )


def test_gpu_inference_is_the_public_api_under_our_own_name():
    import gpu_inference

    assert gpu_inference.__all__ == components.__all__
    for name in components.__all__:
        assert getattr(gpu_inference, name) is getattr(components, name), name
    assert dir(gpu_inference) == components.__all__


def test_type_checkers_see_every_public_name():
    from tests.conftest import ROOT

    for package in ("components", "gpu_inference"):
        assert _type_checking_names(ROOT / package / "__init__.py") == components.__all__, package


def test_an_unknown_name_is_an_attribute_error():
    import gpu_inference

    with pytest.raises(AttributeError, match="module 'gpu_inference' has no attribute 'Nope'"):
        gpu_inference.Nope  # noqa: B018


def test_python_m_gpu_inference_is_the_command_line():
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "gpu_inference", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: gpu-inference [-h] [--debug] COMMAND")
