"""E2e fixtures: the control plane (built from Go modules on first use, then cached) and the
Pulumi installed on this machine.

Tests here are marked ``@pytest.mark.e2e``. The first run on a machine builds the control plane
(tens of minutes; see rig.py); a failed build is a test error, never a skip. The real-engine
tests use the Pulumi CLI a user installs (``rig.find_pulumi``) and skip, naming what is missing
and the command that installs it, where it is not there.

Every e2e test is recorded with its tier (``control plane``, ``Pulumi half``, ``TypeScript``: the
fixtures it needs) as a JUnit property, which `.ci/run`'s summary reports per tier.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import rig


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "e2e: end-to-end tests against the rig (local control plane, installed Pulumi)"
    )


def tier(item: pytest.Item) -> str:
    """The rig tier a test needs, from the fixtures it uses."""
    names = set(getattr(item, "fixturenames", ()))
    if "typescript_pulumi" in names:
        return "TypeScript"
    if "pulumi_install" in names:
        return "Pulumi half"
    if "karpenter" in item.nodeid:
        return "Karpenter judge"
    return "control plane"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """E2e tests run only when selected (`-m e2e`): a plain `pytest` never starts a rig build."""
    selected = "e2e" in (config.getoption("markexpr", "") or "")
    skip = pytest.mark.skip(reason="e2e test: select with `python -m pytest -m e2e`")
    for item in items:
        if item.get_closest_marker("e2e"):
            item.user_properties.append(("tier", tier(item)))
            if not selected:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def control_plane_bins() -> Path:
    """etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok (built if missing)."""
    rig.build(("control-plane",))
    return rig.cache_root()


def _installed(languages: tuple[str, ...]) -> rig.PulumiInstall:
    try:
        return rig.find_pulumi(languages)
    except rig.PulumiMissing as e:
        pytest.skip(f"needs an installed Pulumi: {e}")


@pytest.fixture(scope="session")
def pulumi_install(request: pytest.FixtureRequest) -> rig.PulumiInstall:
    """The Pulumi CLI, its Python language host beside it, and the kubernetes resource plugin
    at the pulumi_kubernetes SDK's version in its plugin cache (skips naming what is missing),
    and the control plane."""
    found = _installed(rig.PULUMI_TIERS["Pulumi half"])
    request.getfixturevalue("control_plane_bins")
    return found


@pytest.fixture(scope="session")
def typescript_pulumi(request: pytest.FixtureRequest) -> rig.PulumiInstall:
    """As ``pulumi_install``, with pulumi-language-nodejs beside the CLI, and node and npm."""
    found = _installed(rig.PULUMI_TIERS["TypeScript"])
    request.getfixturevalue("control_plane_bins")
    return found
