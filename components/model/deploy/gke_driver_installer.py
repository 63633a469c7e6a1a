"""GKE's NVIDIA GPU driver installer DaemonSet, vendored from its pinned manifest.

Source: GoogleCloudPlatform/container-engine-accelerators at `versions.GKE_DRIVER_INSTALLER_COMMIT`
(f2cf4197, 2025-07-02), `nvidia-driver-installer/cos/daemonset-preloaded.yaml` and
`nvidia-driver-installer/ubuntu/daemonset-preloaded.yaml` (`versions.gke_driver_installer_manifest`
gives each file's URL), transcribed below without their comments: GKE's "Manually install NVIDIA
GPU drivers" applies them with `kubectl apply -f`, and a GKE DRA pool needs one (GKE's driver install
is off there: `gpuDriverVersion: INSTALLATION_DISABLED`, GKE API v1 `GPUDriverInstallationConfig`:
"Disable GPU driver auto installation and needs manual installation"). They are vendored rather
than applied from the URL (`yaml/v2.ConfigFile`) so that the stack can narrow where the pod runs
(`installer_daemonset`: only the stack's DRA pools) and the preview sees the DaemonSet's exact
inputs. tests/e2e/test_upstream_copies.py holds the COS object to the copy of the same file
Kubernetes' GCE GPU e2e applies (k8s.io/kubernetes, `test/e2e/testing-manifests/gpu/gce/`),
naming each way the two differ.

The only change to the upstream object: one more node-affinity requirement, the stack's pool label
`In` the DRA pools' names. Everything else is the manifest's: the name
`kube-system/nvidia-driver-installer` (so that an installer the cluster already runs is found, and
refused, rather than doubled), every taint tolerated (`operator: Exists`), GKE GPU nodes whose
driver GKE does not install (`cloud.google.com/gke-accelerator` Exists,
`cloud.google.com/gke-gpu-driver-version` DoesNotExist; COS: not Confidential GKE Nodes), and the
installer image GKE preloads on nodes of that image (`cos-nvidia-installer:fixed`,
`gke-nvidia-installer:fixed`), which installs into `/home/kubernetes/bin/nvidia`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

NAME = "nvidia-driver-installer"
NAMESPACE = "kube-system"
APP_LABELS = {"k8s-app": NAME}

_PAUSE = {
    "image": "gke.gcr.io/pause:3.8@sha256:"
    "880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830",
    "name": "pause",
}
_COS_SCRIPT = """\
echo "Checking for existing GPU driver modules"
if lsmod | grep nvidia; then
  echo "GPU driver is already installed, the installed version may or may not be the driver \
version being tried to install, skipping installation"
  exit 0
else
  echo "No GPU driver module detected, installing now"
  /cos-gpu-installer install || exit 1
fi
"""


def _host(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path}}


def _mount(name: str, path: str) -> dict[str, str]:
    return {"name": name, "mountPath": path}


def _affinity(*requirements: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": list(requirements)}]
            }
        }
    }


_ACCELERATOR = {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}
_NOT_GKE_DRIVER = {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"}
_NOT_CONFIDENTIAL = {
    "key": "cloud.google.com/gke-confidential-nodes-instance-type",
    "operator": "DoesNotExist",
}
_REQUESTS = {"requests": {"cpu": "150m"}}
_PRIVILEGED = {"privileged": True}

_COS_INSTALL_DIR = "/home/kubernetes/bin/nvidia"
_COS_POD: dict[str, Any] = {
    "priorityClassName": "system-node-critical",
    "affinity": _affinity(_ACCELERATOR, _NOT_GKE_DRIVER, _NOT_CONFIDENTIAL),
    "tolerations": [{"operator": "Exists"}],
    "hostNetwork": True,
    "hostPID": True,
    "volumes": [
        _host("dev", "/dev"),
        _host("vulkan-icd-mount", f"{_COS_INSTALL_DIR}/vulkan/icd.d"),
        _host("nvidia-install-dir-host", _COS_INSTALL_DIR),
        _host("root-mount", "/"),
        _host("cos-tools", "/var/lib/cos-tools"),
        _host("nvidia-config", "/etc/nvidia"),
    ],
    "initContainers": [
        {
            "image": "cos-nvidia-installer:fixed",
            "imagePullPolicy": "Never",
            "name": NAME,
            "resources": _REQUESTS,
            "securityContext": _PRIVILEGED,
            "env": [
                {"name": "NVIDIA_INSTALL_DIR_HOST", "value": _COS_INSTALL_DIR},
                {"name": "NVIDIA_INSTALL_DIR_CONTAINER", "value": "/usr/local/nvidia"},
                {"name": "VULKAN_ICD_DIR_HOST", "value": f"{_COS_INSTALL_DIR}/vulkan/icd.d"},
                {"name": "VULKAN_ICD_DIR_CONTAINER", "value": "/etc/vulkan/icd.d"},
                {"name": "ROOT_MOUNT_DIR", "value": "/root"},
                {"name": "COS_TOOLS_DIR_HOST", "value": "/var/lib/cos-tools"},
                {"name": "COS_TOOLS_DIR_CONTAINER", "value": "/build/cos-tools"},
            ],
            "volumeMounts": [
                _mount("nvidia-install-dir-host", "/usr/local/nvidia"),
                _mount("vulkan-icd-mount", "/etc/vulkan/icd.d"),
                _mount("dev", "/dev"),
                _mount("root-mount", "/root"),
                _mount("cos-tools", "/build/cos-tools"),
            ],
            "command": ["bash", "-c", _COS_SCRIPT],
        },
        {
            "image": "gcr.io/gke-release/nvidia-partition-gpu@sha256:"
            "de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17",
            "name": "partition-gpus",
            "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
            "resources": _REQUESTS,
            "securityContext": _PRIVILEGED,
            "volumeMounts": [
                _mount("nvidia-install-dir-host", "/usr/local/nvidia"),
                _mount("dev", "/dev"),
                _mount("nvidia-config", "/etc/nvidia"),
            ],
        },
    ],
    "containers": [_PAUSE],
}

_UBUNTU_POD: dict[str, Any] = {
    "priorityClassName": "system-node-critical",
    "affinity": _affinity(_ACCELERATOR, _NOT_GKE_DRIVER),
    "tolerations": [{"operator": "Exists"}],
    "volumes": [_host("dev", "/dev"), _host("boot", "/boot"), _host("root-mount", "/")],
    "initContainers": [
        {
            "image": "gke-nvidia-installer:fixed",
            "name": NAME,
            "resources": _REQUESTS,
            "securityContext": _PRIVILEGED,
            "volumeMounts": [
                _mount("boot", "/boot"),
                _mount("dev", "/dev"),
                _mount("root-mount", "/root"),
            ],
        }
    ],
    "containers": [_PAUSE],
}

PODS = {"cos": _COS_POD, "ubuntu": _UBUNTU_POD}
"""Each manifest's `spec.template.spec`, by node image (`versions.GKE_DRIVER_INSTALLER_PATHS`)."""


def pod_spec(image: str) -> dict[str, Any]:
    """The upstream pod spec for nodes of `image` (cos | ubuntu), a copy."""
    return copy.deepcopy(PODS[image])


def installer_daemonset(
    image: str, pool_label: str | None = None, pools: Sequence[str] = ()
) -> dict[str, Any]:
    """The DaemonSet's `metadata` and `spec` as the pinned manifest has them, its pod on the nodes
    whose `pool_label` is one of `pools` only (when given)."""
    pod = pod_spec(image)
    if pool_label and pools:
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        for term in terms["nodeSelectorTerms"]:
            term["matchExpressions"].append(
                {"key": pool_label, "operator": "In", "values": sorted(pools)}
            )
    return {
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(APP_LABELS)},
        "spec": {
            "selector": {"matchLabels": dict(APP_LABELS)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": {"name": NAME, **APP_LABELS}}, "spec": pod},
        },
    }
