"""What of a Helm release's history is cleared so that a half-made release installs again."""

from __future__ import annotations

import pytest

from components.model.deploy.helm_records import (
    INSTALL_REFUSED,
    UPGRADE_REFUSED,
    Record,
    chart_name,
    decode_release,
    record_of,
    records_to_clear,
)
from tests.conftest import helm_secret


def test_a_secret_reads_as_its_revision_status_and_chart():
    s = helm_secret("dp", 3, "pending-upgrade")
    assert decode_release(s["data"]["release"])["version"] == 3
    assert record_of(s) == Record(
        "sh.helm.release.v1.dp.v3", 3, "pending-upgrade", "nvidia-device-plugin"
    )
    # An unreadable body still gives the labels (the chart is then not compared).
    s["data"]["release"] = "not base64!"
    assert record_of(s).chart is None


@pytest.mark.parametrize(
    "chart, name",
    [
        ("nvidia-device-plugin", "nvidia-device-plugin"),
        ("oci://ghcr.io/kserve/charts/kserve-crd", "kserve-crd"),
        ("/charts/seldon-core-v2-setup-2.6.0.tgz", "seldon-core-v2-setup"),
        ("/charts/marker/", "marker"),
    ],
)
def test_the_chart_name_of_a_release_input(chart, name):
    assert chart_name(chart) == name


def R(rev: int, status: str, chart: str | None = "c") -> Record:
    return Record(f"sh.helm.release.v1.r.v{rev}", rev, status, chart)


@pytest.mark.parametrize(
    "records, operation, error, cleared",
    [
        # A killed install: its only record is pending.
        ([R(1, "pending-install")], "create", INSTALL_REFUSED, [1]),
        # The provider outlived the CLI and finished: deployed, never recorded by Pulumi.
        ([R(1, "deployed")], "create", INSTALL_REFUSED, [1]),
        ([R(1, "failed")], "create", INSTALL_REFUSED, [1]),
        # A release with a history is somebody's: not cleared.
        ([R(1, "superseded"), R(2, "deployed")], "create", INSTALL_REFUSED, []),
        # Another chart under the release name: not ours.
        ([R(1, "pending-install", "other")], "create", INSTALL_REFUSED, []),
        # A killed upgrade: the pending revision goes, the deployed one stays.
        ([R(1, "deployed"), R(2, "pending-upgrade")], "update", UPGRADE_REFUSED, [2]),
        ([R(1, "deployed"), R(2, "deployed")], "update", UPGRADE_REFUSED, []),
        # Errors a killed run does not cause: nothing.
        ([R(1, "pending-install")], "create", "timed out waiting for the condition", []),
        ([R(1, "pending-install")], "delete", INSTALL_REFUSED, []),
        ([], "create", INSTALL_REFUSED, []),
    ],
)
def test_records_to_clear(records, operation, error, cleared):
    got = records_to_clear(records, operation, f"Error: {error}", "c")
    assert got == [f"sh.helm.release.v1.r.v{n}" for n in cleared]
