"""GKE's NVIDIA driver installer, vendored (`model.deploy.gke_driver_installer`), held against the
pinned manifests themselves: tests/model/upstream/ holds container-engine-accelerators @f2cf4197
`nvidia-driver-installer/{cos,ubuntu}/daemonset-preloaded.yaml` as fetched."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.model.deploy import gke_driver_installer, versions
from components.model.errors import InputError
from components.model.nodes.daemonsets import GKE_DRIVER_INSTALLERS
from components.model.scheduling import Placement
from components.model.serving.requests import pod_requests

UPSTREAM = Path(__file__).parent / "upstream"


def upstream(image: str) -> dict:
    return yaml.safe_load(
        (UPSTREAM / f"nvidia-driver-installer-{image}-daemonset-preloaded.yaml").read_text()
    )


@pytest.mark.parametrize("image", ["cos", "ubuntu"])
def test_the_vendored_daemonset_is_the_pinned_manifests_object(image: str) -> None:
    manifest = upstream(image)
    body = gke_driver_installer.installer_daemonset(image)
    assert (manifest["apiVersion"], manifest["kind"]) == ("apps/v1", "DaemonSet")
    assert body == {"metadata": manifest["metadata"], "spec": manifest["spec"]}


@pytest.mark.parametrize("image", ["cos", "ubuntu"])
def test_narrowed_to_pools_it_adds_one_requirement_and_changes_nothing_else(image: str) -> None:
    body = gke_driver_installer.installer_daemonset(image, "gpu-inference.dev/pool", ["b", "a"])
    pod = body["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = terms["nodeSelectorTerms"]
    assert term["matchExpressions"].pop() == {
        "key": "gpu-inference.dev/pool",
        "operator": "In",
        "values": ["a", "b"],
    }
    assert body["spec"] == upstream(image)["spec"]
    # The vendored copy itself is not changed by narrowing.
    assert gke_driver_installer.installer_daemonset(image)["spec"] == upstream(image)["spec"]


@pytest.mark.parametrize("image", ["cos", "ubuntu"])
def test_the_installer_pod_the_check_counts_is_the_manifests(image: str) -> None:
    """The DaemonPod of a manifest applied whole: the manifest's placement, and the requests
    kube-scheduler computes for its pod (the largest init container, 150m; pause asks none)."""
    pod = upstream(image)["spec"]["template"]["spec"]
    daemon = GKE_DRIVER_INSTALLERS[image]
    assert daemon.placement == Placement.from_pod_spec(pod)
    assert daemon.requests == pod_requests(pod["containers"], pod["initContainers"])


def test_the_manifest_urls_are_pinned_at_the_commit() -> None:
    assert versions.gke_driver_installer_manifest("ubuntu") == (
        "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
        "f2cf4197a5c3f0f20133be15d5fad8b7453beed5/nvidia-driver-installer/ubuntu/"
        "daemonset-preloaded.yaml"
    )
    with pytest.raises(InputError) as e:
        versions.gke_driver_installer_manifest("windows")
    assert str(e.value) == (
        "GKE has no NVIDIA driver installer manifest for node image 'windows' "
        "(allowed: cos or ubuntu)"
    )
