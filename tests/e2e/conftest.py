"""E2e fixtures: the rig (real Pulumi CLI, real control plane) built on first use and cached.

Tests here are marked ``@pytest.mark.e2e``. The first run on a machine builds the rig from Go
modules (tens of minutes; see rig.py); a failed build is a test error, never a skip. The one
exception: the Python language host and the pulumi-kubernetes provider, whose modules the Go
module proxy here does not serve, are skipped (saying why) when no source for them is configured.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rig


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: end-to-end tests against the rig (real Pulumi CLI, local control plane)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """E2e tests run only when selected (`-m e2e`): a plain `pytest` never starts a rig build."""
    if "e2e" in (config.getoption("markexpr", "") or ""):
        return
    skip = pytest.mark.skip(reason="e2e test: select with `python -m pytest -m e2e`")
    for item in items:
        if item.get_closest_marker("e2e"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def control_plane_bins() -> Path:
    """etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok (built if missing)."""
    rig.build(("control-plane",))
    return rig.bin_dir()


@pytest.fixture(scope="session")
def pulumi_bins(control_plane_bins: Path) -> Path:
    """The Pulumi CLI, the Python language host and the kubernetes provider (built if missing)."""
    report = rig.build(("pulumi",), strict=False)
    if report.unavailable:
        pytest.skip(
            "rig: cannot build "
            + ", ".join(report.unavailable)
            + " on this machine: "
            + " | ".join(report.unavailable.values())
        )
    sdk = version("pulumi_kubernetes")
    ambient = os.environ.get("GPU_INFERENCE_RIG_AMBIENT_PROVIDER") == "1"
    if sdk != rig.PULUMI_KUBERNETES_VERSION and not ambient:
        pytest.fail(
            f"the installed pulumi_kubernetes SDK is {sdk} and asks for that exact provider; the "
            f"rig's provider is {rig.PULUMI_KUBERNETES_VERSION}. Install "
            f"pulumi-kubernetes=={rig.PULUMI_KUBERNETES_VERSION} (e.g. through a constraints "
            "file), or set GPU_INFERENCE_RIG_AMBIENT_PROVIDER=1 to hand the rig's provider to "
            "any SDK version.",
            pytrace=False,
        )
    return rig.bin_dir()


@pytest.fixture
def rig_module():
    return rig
