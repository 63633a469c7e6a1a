"""E2e fixtures: the control plane (built from Go modules on first use, then cached) and the
Pulumi installed on this machine.

Tests here are marked ``@pytest.mark.e2e``. The first run on a machine builds the control plane
(tens of minutes; see rig.py); a failed build is a test error, never a skip. The real-engine
tests use the Pulumi CLI a user installs (``rig.find_pulumi``) and skip, naming what is missing
and the command that installs it, where it is not there.

Every e2e test names its tier with a marker, ``@pytest.mark.tier("control plane" | "Karpenter
judge" | "Helm judge" | "Pulumi half" | "TypeScript" | "packaging")`` (registered in pyproject.toml), held to the fixtures it
uses (a test of the Pulumi half uses ``pulumi_install``, a TypeScript one ``typescript_pulumi``,
the others neither); it is recorded as a JUnit property, which `.ci/run`'s summary reports per
tier.
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


TIERS = (
    "control plane",
    "Karpenter judge",
    "Helm judge",
    "Pulumi half",
    "TypeScript",
    "packaging",
)
"""The e2e tiers, in the order the CI summary reports them (.ci/summary.py keeps the same)."""
TIER_FIXTURE = {"Pulumi half": "pulumi_install", "TypeScript": "typescript_pulumi"}
"""The fixture a tier's tests need (the installed Pulumi); the other tiers use none of them."""


def tier(item: pytest.Item) -> str:
    """The tier an e2e test's `tier` marker names; a test without one, with an unknown one, or
    with fixtures of another tier is a collection error."""
    marker = item.get_closest_marker("tier")
    name = marker.args[0] if marker is not None and marker.args else None
    if name not in TIERS:
        raise pytest.UsageError(
            f"{item.nodeid}: an e2e test names its tier: @pytest.mark.tier(...) with one of "
            f"{', '.join(TIERS)} (found {name!r})"
        )
    fixtures = set(getattr(item, "fixturenames", ()))
    used = sorted(f for f in TIER_FIXTURE.values() if f in fixtures)
    wanted = [TIER_FIXTURE[name]] if name in TIER_FIXTURE else []
    if used != wanted:
        raise pytest.UsageError(
            f"{item.nodeid}: marked tier {name!r} but uses {used or 'no Pulumi fixture'} "
            f"(tier {name!r} uses {wanted or 'no Pulumi fixture'})"
        )
    return str(name)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """E2e tests run only when selected (`-m e2e`): a plain `pytest` never starts a rig build.
    Each records its tier (`tier`)."""
    selected = "e2e" in (config.getoption("markexpr", "") or "")
    skip = pytest.mark.skip(reason="e2e test: select with `python -m pytest -m e2e`")
    for item in items:
        if item.get_closest_marker("e2e"):
            item.user_properties.append(("tier", tier(item)))
            if not selected:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _record_pulumi(request: pytest.FixtureRequest) -> None:
    """A real-engine test records the Pulumi it ran (the summary reports it per tier)."""
    for name in TIER_FIXTURE.values():
        if name in request.fixturenames:
            found: rig.PulumiInstall = request.getfixturevalue(name)
            request.node.user_properties.append(
                ("pulumi", f"pulumi {found.version}, kubernetes plugin v{found.kubernetes}")
            )
            return


@pytest.fixture(scope="session")
def control_plane_bins() -> Path:
    """etcd, kwok, and kube-apiserver, kube-scheduler, kube-controller-manager of each release
    the tier runs on (`rig.run_versions`), built if missing."""
    rig.build(("control-plane",), kubernetes_versions=rig.run_versions())
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
