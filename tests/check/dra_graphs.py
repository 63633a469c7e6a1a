"""Hand-written DRA graphs for the check's tests: existing nodes publishing NVIDIA DRA devices,
ResourceClaimTemplates, DeviceClasses, the driver's Helm release, pods that claim devices."""

from __future__ import annotations

import json
from typing import Any

from components.check.readers.dra import DRA_DEVICES_ANNOTATION
from components.model.nodes.dra_devices import node_devices

POOL = "gpu-inference.dev/pool"
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def dra_node(
    name: str,
    pool: str,
    gpu: str = "L4",
    count: int = 1,
    *,
    mig: str | None = None,
    mig_instances: int = 0,
    taints: list[dict[str, str]] | None = None,
    dra: bool = True,
) -> dict[str, Any]:
    """An existing node of `pool` publishing `count` GPUs of `gpu` through the DRA driver."""
    annotations = {"gpu-inference.dev/gpus-per-node": "0"}
    labels = {POOL: pool}
    if dra:
        labels["nvidia.com/gpu.present"] = "true"
        devices = node_devices(gpu, count, mig, mig_instances)
        annotations[DRA_DEVICES_ANNOTATION] = json.dumps(list(devices), sort_keys=True)
    return {
        "type": "kubernetes:core/v1:NodePatch",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
            "spec": {"taints": [GPU_TAINT] if taints is None else taints},
        },
    }


def template(
    name: str = "gpus",
    count: int = 1,
    selectors: tuple[str, ...] = (),
    device_class: str = "gpu.nvidia.com",
    namespace: str = "apps",
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class}
    if count != 1:
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {
        "type": "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
        },
    }


def device_class(name: str, *expressions: str) -> dict[str, Any]:
    return {
        "type": "kubernetes:resource.k8s.io/v1:DeviceClass",
        "name": name,
        "inputs": {
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
        },
    }


def driver(tolerations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if tolerations is not None:
        values["kubeletPlugin"] = {"tolerations": tolerations}
    return {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "dra-driver",
        "inputs": {
            "chart": "dra-driver-nvidia-gpu",
            "namespace": "dra-driver-nvidia-gpu",
            "values": values,
        },
    }


def claimed_pod(pool: str | None, *templates: str, claim: str | None = None) -> dict[str, Any]:
    """A pod taking devices only through claims from `templates` (and a shared `claim`)."""
    entries = [{"name": f"c{i}", "resourceClaimTemplateName": t} for i, t in enumerate(templates)]
    if claim:
        entries.append({"name": "shared", "resourceClaimName": claim})
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "main",
                "resources": {
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "claims": [{"name": e["name"]} for e in entries],
                },
            }
        ],
        "tolerations": [TOL_GPU],
        "resourceClaims": entries,
    }
    if pool:
        spec["nodeSelector"] = {POOL: pool}
    return spec


def deployment(name: str, spec: dict[str, Any], pool: str | None = None) -> dict[str, Any]:
    annotations = {POOL: pool} if pool else {}
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": "apps", "annotations": annotations},
            "spec": {"replicas": 1, "template": {"spec": spec}},
        },
    }


def eks_dra_group(name: str = "g6", min_nodes: int = 0, instance: str = "g6.xlarge") -> dict:
    """An EKS managed node group set up for DRA (as `EksGpuNodeGroupArgs(dra=True)` makes it)."""
    return {
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": name,
        "inputs": {
            "nodeGroupName": name,
            "instanceTypes": [instance],
            "amiType": "AL2023_x86_64_NVIDIA",
            "labels": {POOL: name, "nvidia.com/gpu.present": "true"},
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}],
            "scalingConfig": {"minSize": min_nodes, "maxSize": 2, "desiredSize": min_nodes},
        },
    }


def gke_dra_pool(
    name: str = "l4",
    *,
    taints: list[dict[str, str]] | None = None,
    driver_version: str | None = "INSTALLATION_DISABLED",
    image: str | None = None,
) -> dict[str, Any]:
    """A GKE L4 node pool set up for DRA (as `GkeGpuNodePoolArgs(dra=True)` makes it): GKE's
    driver install and device plugin off, `nvidia.com/gpu.present=true`."""
    accelerator: dict[str, Any] = {"type": "nvidia-l4", "count": 1}
    if driver_version is not None:
        accelerator["gpuDriverInstallationConfig"] = {"gpuDriverVersion": driver_version}
    nc: dict[str, Any] = {
        "machineType": "g2-standard-8",
        "labels": {
            POOL: name,
            "gke-no-default-nvidia-gpu-device-plugin": "true",
            "nvidia.com/gpu.present": "true",
        },
        "taints": [GPU_TAINT, *(taints or [])],
        "guestAccelerators": [accelerator],
    }
    if image is not None:
        nc["imageType"] = image
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {
            "autoscaling": {"totalMinNodeCount": 1, "totalMaxNodeCount": 2},
            "nodeConfig": nc,
        },
    }


INSTALLER_URL = (
    "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
    "f2cf4197a5c3f0f20133be15d5fad8b7453beed5/nvidia-driver-installer/{}/daemonset-preloaded.yaml"
)


def installer(image: str = "cos") -> dict[str, Any]:
    """GKE's GPU driver installer manifest for `image` nodes, applied whole."""
    return {
        "type": "kubernetes:yaml/v2:ConfigFile",
        "name": "gpu-driver",
        "inputs": {"file": INSTALLER_URL.format(image)},
    }


def installer_daemonset(
    tolerations: list[dict[str, str]] | None = None, pools: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The stack's DaemonSet of GKE's COS installer (`installer_daemonset`: upstream's, on
    `pools` only when given), with these tolerations instead of upstream's when given."""
    from components.model.deploy.gke_driver_installer import installer_daemonset as body

    inputs = body("cos", POOL, pools)
    if tolerations is not None:
        inputs["spec"]["template"]["spec"]["tolerations"] = tolerations
    return {
        "type": "kubernetes:apps/v1:DaemonSet",
        "name": "nvidia-driver-installer",
        "inputs": inputs,
    }
