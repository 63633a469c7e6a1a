"""GKE's NVIDIA driver installer, vendored (`model.deploy.gke_driver_installer`): what the stack
changes in it and what the check counts of it. The pinned manifests were read at their URLs and
are not kept here; tests/e2e/test_upstream_copies.py holds the COS object to the copy Kubernetes'
own GPU e2e ships in its Go module."""

from __future__ import annotations

import pytest

from components.model.deploy import gke_driver_installer, versions
from components.model.errors import InputError
from components.model.nodes.daemonsets import GKE_DRIVER_INSTALLERS
from components.model.scheduling import Placement
from components.model.serving.requests import pod_requests


@pytest.mark.parametrize("image", ["cos", "ubuntu"])
def test_narrowed_to_pools_it_adds_one_requirement_and_changes_nothing_else(image: str) -> None:
    whole = gke_driver_installer.installer_daemonset(image)
    body = gke_driver_installer.installer_daemonset(image, "gpu-inference.dev/pool", ["b", "a"])
    pod = body["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = terms["nodeSelectorTerms"]
    assert term["matchExpressions"].pop() == {
        "key": "gpu-inference.dev/pool",
        "operator": "In",
        "values": ["a", "b"],
    }
    assert body == whole
    # The vendored object itself is not changed by narrowing.
    assert gke_driver_installer.installer_daemonset(image) == whole
    assert body["metadata"] == {
        "name": "nvidia-driver-installer",
        "namespace": "kube-system",
        "labels": {"k8s-app": "nvidia-driver-installer"},
    }
    assert pod["tolerations"] == [{"operator": "Exists"}]


@pytest.mark.parametrize("image", ["cos", "ubuntu"])
def test_the_installer_pod_the_check_counts_is_the_vendored_one(image: str) -> None:
    """The DaemonPod of the manifest applied whole: its placement, and the requests kube-scheduler
    computes for its pod (the largest init container, 150m; pause asks none)."""
    pod = gke_driver_installer.pod_spec(image)
    daemon = GKE_DRIVER_INSTALLERS[image]
    assert daemon.placement == Placement.from_pod_spec(pod)
    assert daemon.requests == pod_requests(pod["containers"], pod["initContainers"])
    assert (daemon.requests.cpu, daemon.requests.memory) == (150, 0)  # millicores, bytes


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
