"""Vendored manifests held to a copy served here. GKE's COS NVIDIA driver installer
(`model.deploy.gke_driver_installer`, transcribed from container-engine-accelerators' pinned
`daemonset-preloaded.yaml`) against the copy of that file Kubernetes' own GCE GPU e2e reads
(`test/e2e/testing-manifests/gpu/gce/nvidia-driver-installer.yaml`, k8s.io/kubernetes at the
rig's version, from the Go module proxy): every field the two share is equal, and each way they
differ is named below."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import rig
import yaml

from components.model.deploy import gke_driver_installer

pytestmark = pytest.mark.e2e

KUBERNETES_COPY = "test/e2e/testing-manifests/gpu/gce/nvidia-driver-installer.yaml"


def kubernetes_module() -> Path:
    """k8s.io/kubernetes at the rig's version, as the Go module cache holds it (the rig's build of
    the control plane downloaded it)."""
    found = subprocess.run(
        ["go", "mod", "download", "-json", f"k8s.io/kubernetes@v{rig.KUBERNETES_VERSION}"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    info = json.loads(found.stdout or "{}")
    if found.returncode != 0 or not info.get("Dir"):
        raise AssertionError(f"k8s.io/kubernetes not in the module cache: {found.stderr}")
    return Path(info["Dir"])


def _containers(pod: dict[str, Any], key: str) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in pod[key]}


@pytest.mark.tier("control plane")
def test_the_cos_driver_installer_is_the_one_kubernetes_own_gpu_e2e_applies(
    control_plane_bins: Path,
) -> None:
    theirs = yaml.safe_load((kubernetes_module() / KUBERNETES_COPY).read_text())
    ours = gke_driver_installer.installer_daemonset("cos")
    assert (theirs["apiVersion"], theirs["kind"]) == ("apps/v1", "DaemonSet")
    assert ours["metadata"] == theirs["metadata"]
    theirs_pod = copy.deepcopy(theirs["spec"]["template"]["spec"])
    ours_pod = copy.deepcopy(ours["spec"]["template"]["spec"])
    assert {k: v for k, v in ours["spec"].items() if k != "template"} == {
        k: v for k, v in theirs["spec"].items() if k != "template"
    }
    assert ours["spec"]["template"]["metadata"] == theirs["spec"]["template"]["metadata"]

    # 1. Ours runs at system-node-critical, as GKE's current manifest does.
    assert ours_pod.pop("priorityClassName") == "system-node-critical"
    # 2. Ours keeps off nodes whose driver GKE installs and off Confidential GKE Nodes (GKE's
    #    manifest); Kubernetes' copy asks only for a GKE accelerator.
    ours_terms = ours_pod.pop("affinity")["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    theirs_terms = theirs_pod.pop("affinity")["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert ours_terms["nodeSelectorTerms"][0]["matchExpressions"][1:] == [
        {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
        {
            "key": "cloud.google.com/gke-confidential-nodes-instance-type",
            "operator": "DoesNotExist",
        },
    ]
    del ours_terms["nodeSelectorTerms"][0]["matchExpressions"][1:]
    assert ours_terms == theirs_terms
    # 3. Images: ours the installer GKE preloads on COS nodes (never pulled), GKE's partition-gpus
    #    and pause by digest; Kubernetes' copy pulls cos-gpu-installer at a tag for one COS milestone.
    ours_init, theirs_init = (_containers(p, "initContainers") for p in (ours_pod, theirs_pod))
    installer = ours_init["nvidia-driver-installer"]
    assert (installer.pop("image"), installer.pop("imagePullPolicy")) == (
        "cos-nvidia-installer:fixed",
        "Never",
    )
    assert (
        theirs_init["nvidia-driver-installer"]
        .pop("image")
        .startswith("gcr.io/cos-cloud/cos-gpu-installer:")
    )
    assert (
        ours_init["partition-gpus"]
        .pop("image")
        .startswith("gcr.io/gke-release/nvidia-partition-gpu@sha256:")
    )
    assert (
        theirs_init["partition-gpus"]
        .pop("image")
        .startswith("gcr.io/gke-release/nvidia-partition-gpu:")
    )
    assert [c.pop("image") for c in ours_pod["containers"]] == [
        "gke.gcr.io/pause:3.8@sha256:"
        "880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"
    ]
    assert [c.pop("image") for c in theirs_pod["containers"]] == ["registry.k8s.io/pause:3.10.1"]
    # 4. Ours fails the pod when the install fails (GKE's script); Kubernetes' copy does not.
    ours_script = installer.pop("command")
    theirs_script = theirs_init["nvidia-driver-installer"].pop("command")
    assert ours_script[:2] == theirs_script[:2] == ["bash", "-c"]
    assert ours_script[2].replace(" || exit 1\n", "\n") == theirs_script[2]
    # 5. Kubernetes' copy bind-mounts /var/lib/nvidia first (for its own e2e nodes); ours does not.
    assert theirs_init.pop("bind-mount-install-dir")["command"][:4] == ["nsenter", "-at", "1", "--"]
    # Everything else is the same: volumes, mounts, env, requests, privilege, tolerations, hosts.
    assert ours_init == theirs_init
    ours_pod.pop("initContainers")
    theirs_pod.pop("initContainers")
    assert ours_pod == theirs_pod
