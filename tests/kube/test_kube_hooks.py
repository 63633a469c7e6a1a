"""The deploy-time hooks on a fake cluster: what they read, what they write, what they refuse."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from components.kube.hooks import (
    RESTORE_MANAGER,
    AdoptionRefused,
    guard_release,
    hand_back_taints,
    recover_release,
    refuse_foreign,
    restore_taints,
)
from components.model.deploy.helm_records import INSTALL_REFUSED, UPGRADE_REFUSED
from components.model.deploy.ownership import (
    FIELD_MANAGER_ANNOTATION,
    Ownership,
    config_section,
    install_ownership,
)
from components.model.scheduling.taints import OWN_TAINTS_ANNOTATION
from tests.conftest import helm_secret

OURS = "gpu-inference/p/s"
SITE = {"key": "site.example/maintenance", "value": "planned", "effect": "PreferNoSchedule"}
GPU = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


class ApiError(Exception):
    def __init__(self, status: int) -> None:
        self.status = status


class FakeCluster:
    def __init__(self, objects: Optional[dict[tuple[str, str, Optional[str]], dict]] = None):
        self.objects = objects or {}
        self.secret_list: list[dict[str, Any]] = []
        self.deleted: list[tuple[str, str]] = []
        self.created: list[tuple[str, dict]] = []
        self.patches: list[tuple[str, list, str]] = []
        self.conflicts = 0

    def get(self, api_version, kind, name, namespace):
        return self.objects.get((kind, name, namespace))

    def secrets(self, namespace, selector):
        self.selector = (namespace, selector)
        return self.secret_list

    def delete_secret(self, namespace, name):
        self.deleted.append((namespace, name))

    def create_secret(self, namespace, body):
        self.created.append((namespace, body))

    def patch_node(self, name, ops, manager):
        if self.conflicts:
            self.conflicts -= 1
            raise ApiError(422)  # the resourceVersion test failed
        self.patches.append((name, list(ops), manager))


def inputs(manager: Optional[str] = OURS) -> dict:
    annotations = {FIELD_MANAGER_ANNOTATION: manager} if manager else {}
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "models", "annotations": annotations},
    }


def test_a_create_proceeds_when_nothing_or_our_own_object_is_there():
    refuse_foreign(FakeCluster(), inputs())
    ours = {"metadata": {"name": "models", "annotations": {FIELD_MANAGER_ANNOTATION: OURS}}}
    refuse_foreign(FakeCluster({("Namespace", "models", None): ours}), inputs())


def test_a_create_refuses_an_object_that_is_not_this_stacks():
    theirs = {"kind": "Namespace", "metadata": {"name": "models"}}
    with pytest.raises(AdoptionRefused, match="Namespace models already exists and was not made"):
        refuse_foreign(FakeCluster({("Namespace", "models", None): theirs}), inputs())
    # An object without our annotation is not one of ours: the hook does not judge it.
    refuse_foreign(FakeCluster({("Namespace", "models", None): theirs}), inputs(None))


KARPENTER_URN = (
    "urn:pulumi:s::p::gpu-inference:index:InferencePlatform$gpu-inference:index:KarpenterInstall$"
    "kubernetes:helm.sh/v3:Release::gi-karpenter-controller"
)
OUR_MARKER = "gpu-inference/p/s/gi-karpenter-controller"


def karpenter() -> dict:
    return {"name": "karpenter", "namespace": "kube-system", "chart": "oci://x/karpenter"}


def karpenter_records(status: str, marker: str | None, revisions: int = 1) -> list[dict]:
    return [
        helm_secret("karpenter", n, status if n == revisions else "superseded", "karpenter",
                    marker, "1.5.0")
        for n in range(1, revisions + 1)
    ]  # fmt: skip


def addon_ownership(adopt: bool = False) -> Ownership:
    with config_section("gpu-inference:addons.karpenter"):
        return install_ownership("KarpenterInstall('gi-karpenter')", adopt)


def test_a_half_made_release_of_this_resource_is_cleared_and_retried():
    cluster = FakeCluster()
    cluster.secret_list = karpenter_records("pending-install", OUR_MARKER)
    # Its own killed create: the guard lets the install run (and fail), the error hook clears.
    assert guard_release(cluster, karpenter(), KARPENTER_URN, addon_ownership()) == []
    cleared = recover_release(
        cluster, "create", [f"Error: {INSTALL_REFUSED}"], karpenter(), KARPENTER_URN
    )
    assert cleared == ["sh.helm.release.v1.karpenter.v1"]
    assert cluster.selector == ("kube-system", "owner=helm,name=karpenter")
    assert cluster.deleted == [("kube-system", "sh.helm.release.v1.karpenter.v1")]


@pytest.mark.parametrize(
    "status, revisions", [("deployed", 1), ("deployed", 3), ("pending-install", 1)]
)
def test_a_plain_helm_karpenter_is_refused_and_never_cleared(status, revisions):
    cluster = FakeCluster()
    cluster.secret_list = karpenter_records(status, None, revisions)
    with pytest.raises(AdoptionRefused) as e:
        guard_release(cluster, karpenter(), KARPENTER_URN, addon_ownership())
    assert str(e.value) == (
        "Helm release kube-system/karpenter already exists and was installed by Helm or another "
        f"tool (chart karpenter 1.5.0, revision {revisions} {status}; no gpu-inference marker): "
        "this stack will not take it over. Use the cluster's own: set "
        "`gpu-inference:addons.karpenter.enabled: false`; or adopt it on purpose: set "
        "`gpu-inference:addons.karpenter.adopt: true` (this stack then keeps it up to date, and "
        "destroy leaves it in place)"
    )
    for operation, error in (("create", INSTALL_REFUSED), ("update", UPGRADE_REFUSED)):
        assert (
            recover_release(cluster, operation, [f"Error: {error}"], karpenter(), KARPENTER_URN)
            == []
        )
    assert cluster.deleted == [] and cluster.created == []


def test_a_release_another_resource_of_this_stack_installed_is_refused():
    cluster = FakeCluster()
    cluster.secret_list = karpenter_records("deployed", "gpu-inference/p/s/old-name")
    with pytest.raises(AdoptionRefused, match="belongs to another resource of this stack"):
        guard_release(cluster, karpenter(), KARPENTER_URN, addon_ownership())
    assert (
        recover_release(
            cluster, "create", [f"Error: {INSTALL_REFUSED}"], karpenter(), KARPENTER_URN
        )
        == []
    )


def test_adopted_on_purpose_the_foreign_records_are_kept_aside():
    cluster = FakeCluster()
    cluster.secret_list = karpenter_records("deployed", None, revisions=2)
    moved = guard_release(cluster, karpenter(), KARPENTER_URN, addon_ownership(adopt=True))
    assert moved == ["sh.helm.release.v1.karpenter.v1", "sh.helm.release.v1.karpenter.v2"]
    assert cluster.deleted == [("kube-system", name) for name in moved]
    for (namespace, body), original in zip(cluster.created, cluster.secret_list, strict=True):
        assert namespace == "kube-system"
        assert body["metadata"]["name"] == "gpu-inference-adopted." + original["metadata"]["name"]
        assert body["metadata"]["labels"] == {
            **original["metadata"]["labels"],
            "owner": "gpu-inference-adopted",
        }
        assert body["metadata"]["annotations"] == {"gpu-inference.dev/adopted-by": KARPENTER_URN}
        assert body["data"] == original["data"]


def test_a_release_is_retried_twice_at_most_and_never_for_other_errors():
    cluster = FakeCluster()
    cluster.secret_list = karpenter_records("pending-install", OUR_MARKER)
    third = [f"Error: {INSTALL_REFUSED}"] * 3
    assert recover_release(cluster, "create", third, karpenter(), KARPENTER_URN) == []
    assert (
        recover_release(cluster, "create", ["Error: timed out"], karpenter(), KARPENTER_URN) == []
    )
    assert cluster.deleted == []


def tainting_patch(ours: list[dict]) -> dict:
    return {
        "metadata": {
            "name": "gpu-node-01",
            "annotations": {OWN_TAINTS_ANNOTATION: json.dumps(ours)},
        }
    }


def node(taints: list[dict], version: str = "7") -> dict:
    return {
        "metadata": {"name": "gpu-node-01", "resourceVersion": version},
        "spec": {"taints": taints},
    }


def test_the_node_keeps_its_own_taints_when_the_pool_goes():
    cluster = FakeCluster({("Node", "gpu-node-01", None): node([SITE, GPU])})
    assert restore_taints(cluster, tainting_patch([GPU])) is True
    ((name, ops, manager),) = cluster.patches
    assert (name, manager) == ("gpu-node-01", RESTORE_MANAGER)
    assert ops == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "7"},
        {"op": "replace", "path": "/spec/taints", "value": [SITE]},
    ]


def test_a_node_with_only_our_taints_loses_the_list_and_a_gone_node_is_left():
    cluster = FakeCluster({("Node", "gpu-node-01", None): node([GPU])})
    restore_taints(cluster, tainting_patch([GPU]))
    assert cluster.patches[0][1][1] == {"op": "remove", "path": "/spec/taints"}
    assert restore_taints(FakeCluster(), tainting_patch([GPU])) is False
    # Our taints already gone (edited by hand): nothing to write.
    untouched = FakeCluster({("Node", "gpu-node-01", None): node([SITE])})
    assert restore_taints(untouched, tainting_patch([GPU])) is False and not untouched.patches


def test_a_concurrent_change_is_read_again_not_overwritten():
    cluster = FakeCluster({("Node", "gpu-node-01", None): node([SITE, GPU])})
    cluster.conflicts = 1
    assert restore_taints(cluster, tainting_patch([GPU])) is True
    assert len(cluster.patches) == 1
    cluster.conflicts = 3
    with pytest.raises(ApiError):
        restore_taints(cluster, tainting_patch([GPU]))


def test_a_pool_that_stops_tainting_hands_the_nodes_own_taints_back_before_its_update():
    cluster = FakeCluster({("Node", "gpu-node-01", None): node([SITE, GPU])})
    untainted = {"metadata": {"name": "gpu-node-01"}}  # the new patch sends no taint list
    assert hand_back_taints(cluster, tainting_patch([GPU]), untainted) is True
    ((_, ops, manager),) = cluster.patches
    assert manager == RESTORE_MANAGER and ops[1] == {
        "op": "replace",
        "path": "/spec/taints",
        "value": [SITE],
    }
    # Still tainting (the new list is the node's own plus ours): the update applies it as is.
    still = {**untainted, "spec": {"taints": [SITE, GPU]}}
    assert hand_back_taints(cluster, tainting_patch([GPU]), still) is False
    # Never tainted: nothing to give back, no call made.
    quiet = FakeCluster()
    assert hand_back_taints(quiet, untainted, untainted) is False and quiet.patches == []
