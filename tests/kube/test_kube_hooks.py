"""The deploy-time hooks on a fake cluster: what they read, what they write, what they refuse."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest

from components.kube.hooks import (
    RESTORE_MANAGER,
    AdoptionRefused,
    recover_release,
    refuse_foreign,
    restore_taints,
)
from components.model.deploy.helm_records import INSTALL_REFUSED
from components.model.deploy.ownership import FIELD_MANAGER_ANNOTATION
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
        self.patches: list[tuple[str, list, str]] = []
        self.conflicts = 0

    def get(self, api_version, kind, name, namespace):
        return self.objects.get((kind, name, namespace))

    def secrets(self, namespace, selector):
        self.selector = (namespace, selector)
        return self.secret_list

    def delete_secret(self, namespace, name):
        self.deleted.append((namespace, name))

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


def release(name: str = "nvidia-device-plugin") -> dict:
    return {
        "name": name,
        "namespace": "nvidia-device-plugin",
        "chart": "/charts/nvidia-device-plugin",
    }


def test_a_half_made_release_is_cleared_and_retried():
    cluster = FakeCluster()
    cluster.secret_list = [helm_secret("nvidia-device-plugin", 1, "pending-install")]
    cleared = recover_release(cluster, "create", [f"Error: {INSTALL_REFUSED}"], release())
    assert cleared == ["sh.helm.release.v1.nvidia-device-plugin.v1"]
    assert cluster.selector == ("nvidia-device-plugin", "owner=helm,name=nvidia-device-plugin")
    assert cluster.deleted == [
        ("nvidia-device-plugin", "sh.helm.release.v1.nvidia-device-plugin.v1")
    ]


def test_a_release_is_retried_twice_at_most_and_never_for_other_errors():
    cluster = FakeCluster()
    cluster.secret_list = [helm_secret("nvidia-device-plugin", 1, "pending-install")]
    third = [f"Error: {INSTALL_REFUSED}"] * 3
    assert recover_release(cluster, "create", third, release()) == []
    assert recover_release(cluster, "create", ["Error: timed out"], release()) == []
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
