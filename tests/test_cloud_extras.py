"""Install what you use: each cloud's SDK comes with its extra (`gpu-inference[gke]`), a stack
needs only its own cloud's, and one whose SDK is missing stops at `cluster.provider` naming the
extra to install (exit 2), as a component or lookup of that cloud does."""

from __future__ import annotations

import sys

import pytest

from components.kube.sdks import CLOUD_SDKS, cloud_sdk
from components.model.errors import InputError
from components.preview.cli import main
from tests.conftest import ROOT

STACKS = {"gke": ("gke-dev", 7), "eks": ("eks-prod", 8), "aks": ("aks-dev", 12)}


def _preview(capsys: pytest.CaptureFixture[str], stack: str, out) -> tuple[int, str]:
    code = main(["preview", stack, "--project-dir", str(ROOT), "--out", str(out)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("extra", sorted(STACKS))
def test_a_stack_whose_cloud_sdk_is_missing_names_the_extra(
    extra: str, tmp_path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    stack, line = STACKS[extra]
    package, dist = CLOUD_SDKS[extra]
    monkeypatch.setitem(sys.modules, package, None)  # as if not installed
    monkeypatch.chdir(ROOT)
    assert _preview(capsys, stack, tmp_path) == (
        2,
        f"error: gpu-inference:cluster.provider: the {extra} components need the Pulumi SDK "
        f"{dist}, which is not installed: pip install 'gpu-inference[{extra}]'\n"
        f"  (stack config: stacks/Pulumi.{stack}.yaml:{line})\n",
    )
    assert (tmp_path / "manifests.yaml").exists() is False


@pytest.mark.parametrize("extra", sorted(STACKS))
def test_a_stack_previews_with_its_own_clouds_sdk_alone(
    extra: str, tmp_path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    for other, (package, _) in CLOUD_SDKS.items():
        if other != extra:
            monkeypatch.setitem(sys.modules, package, None)
    code, err = _preview(capsys, STACKS[extra][0], tmp_path)
    assert code == 0, err


def test_onprem_needs_no_cloud_sdk(tmp_path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    for package, _ in CLOUD_SDKS.values():
        monkeypatch.setitem(sys.modules, package, None)
    code, err = _preview(capsys, "onprem", tmp_path)
    assert code == 0, err


def test_cloud_sdk_imports_the_module_or_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cloud_sdk("pulumi_azure_native.containerservice").__name__ == (
        "pulumi_azure_native.containerservice"
    )
    monkeypatch.setitem(sys.modules, "pulumi_azure_native", None)
    with pytest.raises(InputError) as err:
        cloud_sdk("pulumi_azure_native.containerservice")
    assert str(err.value) == (
        "the aks components need the Pulumi SDK pulumi-azure-native, which is not installed: "
        "pip install 'gpu-inference[aks]'"
    )
