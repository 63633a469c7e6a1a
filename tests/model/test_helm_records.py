"""What of a Helm release's history is ours, by proof: the marker `global.gpuInferenceResource`
every release we install carries in its values (kept by Helm in every record, pending ones too);
only what this resource's own interrupted operation left is ever cleared."""

from __future__ import annotations

import pytest

from components.model.deploy.helm_records import (
    INSTALL_REFUSED,
    UPGRADE_REFUSED,
    Record,
    decode_release,
    marker_of_urn,
    owner_values,
    record_of,
    records_to_clear,
    release_owner,
    resource_marker,
)
from tests.conftest import helm_secret

URN = "urn:pulumi:prod::gpu-inference::gpu-inference:index:InferencePlatform$gpu-inference:index:KarpenterInstall$kubernetes:helm.sh/v3:Release::gpu-inference-karpenter-controller"
OURS = "gpu-inference/gpu-inference/prod/gpu-inference-karpenter-controller"


def test_the_marker_names_the_stack_and_the_resource():
    assert (
        marker_of_urn(URN) == OURS == resource_marker("gpu-inference", "prod", URN.split("::")[-1])
    )
    assert owner_values(OURS) == {"global": {"gpuInferenceResource": OURS}}


def test_a_secret_reads_as_its_revision_status_chart_and_marker():
    s = helm_secret("dp", 3, "pending-upgrade", marker=OURS)
    assert decode_release(s["data"]["release"])["version"] == 3
    assert record_of(s) == Record(
        "sh.helm.release.v1.dp.v3", 3, "pending-upgrade", "nvidia-device-plugin", OURS, "0.17.1"
    )
    # Plain Helm: no marker.
    assert record_of(helm_secret("dp", 1, "deployed")).owner is None
    # An unreadable body still gives the labels (and no proof of ownership).
    s["data"]["release"] = "not base64!"
    assert (record_of(s).chart, record_of(s).owner) == (None, None)


def R(rev: int, status: str, owner: str | None = OURS) -> Record:
    return Record(f"sh.helm.release.v1.r.v{rev}", rev, status, "karpenter", owner, "1.14.1")


@pytest.mark.parametrize(
    "records, operation, error, cleared",
    [
        # This resource's killed install: its only record is pending.
        ([R(1, "pending-install")], "create", INSTALL_REFUSED, [1]),
        # The provider outlived the CLI and finished: deployed, never recorded by Pulumi.
        ([R(1, "deployed")], "create", INSTALL_REFUSED, [1]),
        ([R(1, "failed")], "create", INSTALL_REFUSED, [1]),
        # A release with a history is somebody's: not cleared.
        ([R(1, "superseded"), R(2, "deployed")], "create", INSTALL_REFUSED, []),
        # A user's plain-Helm karpenter (no marker), in any state: never.
        ([R(1, "deployed", None)], "create", INSTALL_REFUSED, []),
        ([R(1, "pending-install", None)], "create", INSTALL_REFUSED, []),
        ([R(1, "deployed", None), R(2, "pending-upgrade", None)], "update", UPGRADE_REFUSED, []),
        # Another stack's, or another resource's of this stack (a rename without an alias).
        ([R(1, "deployed", "gpu-inference/gpu-inference/dev/x")], "create", INSTALL_REFUSED, []),
        ([R(1, "pending-install", OURS + "-old")], "create", INSTALL_REFUSED, []),
        # This resource's killed upgrade: the pending revision goes, the deployed one stays.
        ([R(1, "deployed"), R(2, "pending-upgrade")], "update", UPGRADE_REFUSED, [2]),
        ([R(1, "deployed"), R(2, "deployed")], "update", UPGRADE_REFUSED, []),
        # Errors a killed run does not cause: nothing.
        ([R(1, "pending-install")], "create", "timed out waiting for the condition", []),
        ([R(1, "pending-install")], "delete", INSTALL_REFUSED, []),
        ([], "create", INSTALL_REFUSED, []),
    ],
)
def test_records_to_clear(records, operation, error, cleared):
    got = records_to_clear(records, operation, f"Error: {error}", URN)
    assert got == [f"sh.helm.release.v1.r.v{n}" for n in cleared]


@pytest.mark.parametrize(
    "records, owner",
    [
        ([], None),
        ([R(1, "pending-install")], None),  # this resource's own killed create
        (
            [R(1, "superseded", None), R(2, "deployed", None)],
            "was installed by Helm or another tool (chart karpenter 1.14.1, revision 2 "
            "deployed; no gpu-inference marker)",
        ),
        (
            [
                R(
                    1,
                    "deployed",
                    "gpu-inference/gpu-inference/dev/gpu-inference-karpenter-controller",
                )
            ],
            "belongs to another stack (gpu-inference/dev; chart karpenter 1.14.1, revision 1 "
            "deployed)",
        ),
        (
            [R(1, "deployed", "gpu-inference/gpu-inference/prod/old-karpenter")],
            "belongs to another resource of this stack (old-karpenter; chart karpenter 1.14.1, "
            "revision 1 deployed): a change moved the release to another resource without an "
            "alias",
        ),
    ],
)
def test_whose_release_it_is(records, owner):
    assert release_owner(records, URN) == owner
