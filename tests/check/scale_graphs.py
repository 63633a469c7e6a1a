"""Hand-written graphs for the scale-up rules (GI016, GI026-GI029): NodePools and EC2NodeClasses,
Auto Scaling groups, DRA claims, Autopilot clusters, as a plain Pulumi program registers them."""

from __future__ import annotations

import base64
from typing import Any

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
POOL = "gpu-inference.dev/pool"


def req(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


def nodepool(
    name: str,
    requirements: list[dict[str, Any]],
    *,
    limits: dict[str, str] | None = None,
    node_class: str = "gpu",
    taints: list[dict[str, str]] | None = None,
    weight: int | None = None,
    auto_mode: bool = False,
) -> dict[str, Any]:
    ref = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": node_class}
    if auto_mode:
        ref = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {POOL: name}},
            "spec": {
                "nodeClassRef": ref,
                "requirements": requirements,
                "taints": [GPU_TAINT] if taints is None else taints,
            },
        },
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
    }
    if limits is not None:
        spec["limits"] = limits
    if weight is not None:
        spec["weight"] = weight
    return {"type": NODEPOOL, "name": name, "inputs": {"metadata": {"name": name}, "spec": spec}}


def nodeclass(name: str = "gpu", *, volume: str = "100Gi", reservations: bool = False) -> dict:
    spec: dict[str, Any] = {
        "role": "KarpenterNodeRole",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": volume, "volumeType": "gp3"}}
        ],
    }
    if reservations:
        spec["capacityReservationSelectorTerms"] = [{"id": "cr-0123456789abcdef0"}]
    return {"type": NODECLASS, "name": name, "inputs": {"metadata": {"name": name}, "spec": spec}}


def pod(
    pool: str | None = None,
    *,
    gpus: int = 1,
    cpu: str = "1",
    memory: str = "8Gi",
    claims: list[dict[str, str]] | None = None,
    selector: dict[str, str] | None = None,
    tolerations: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory}
    limits: dict[str, Any] = {}
    if gpus:
        requests["nvidia.com/gpu"] = gpus
        limits["nvidia.com/gpu"] = gpus
    container: dict[str, Any] = {"name": "main", "resources": {"requests": requests}}
    if limits:
        container["resources"]["limits"] = limits
    spec: dict[str, Any] = {"containers": [container]}
    nodes = dict(selector or {})
    if pool:
        nodes[POOL] = pool
    if nodes:
        spec["nodeSelector"] = nodes
    spec["tolerations"] = [TOL_GPU] if tolerations is None else tolerations
    if claims:
        spec["resourceClaims"] = claims
        container["resources"]["claims"] = [{"name": c["name"]} for c in claims]
    return spec


def deployment(name: str, spec: dict[str, Any], replicas: int = 1) -> dict[str, Any]:
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": "apps"},
            "spec": {"replicas": replicas, "template": {"spec": spec}},
        },
    }


def claim_template(name: str = "one-gpu", device_class: str = "gpu.nvidia.com") -> dict:
    return {
        "type": "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": "apps"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": device_class}}]
                    }
                }
            },
        },
    }


DRA_CLAIM = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]


def gke_dra_pool(name: str = "l4-dra", labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A GKE L4 node pool with the GPU driver left to the user (DRA's setup), at zero."""
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {
            "name": name,
            "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2},
            "nodeConfig": {
                "machineType": "g2-standard-8",
                "labels": {POOL: name, **(labels or {})},
                "guestAccelerators": [
                    {
                        "type": "nvidia-l4",
                        "count": 1,
                        "gpuDriverInstallationConfig": {
                            "gpuDriverVersion": "INSTALLATION_DISABLED"
                        },
                    }
                ],
            },
        },
    }


def autopilot_cluster(name: str = "autopilot-1") -> dict[str, Any]:
    return {
        "type": "gcp:container/cluster:Cluster",
        "name": name,
        "inputs": {"name": name, "location": "us-central1", "enableAutopilot": True},
    }


def launch_template(name: str = "gpu-nodes", user_data: str = "", instance_type: str = "g5.xlarge"):
    return {
        "type": "aws:ec2/launchTemplate:LaunchTemplate",
        "name": name,
        "inputs": {
            "name": name,
            "instanceType": instance_type,
            "userData": base64.b64encode(user_data.encode()).decode(),
        },
    }


def asg(name: str = "gpu-asg", *, tags: dict[str, str] | None = None, min_size: int = 0) -> dict:
    return {
        "type": "aws:autoscaling/group:Group",
        "name": name,
        "inputs": {
            "name": name,
            "minSize": min_size,
            "maxSize": 3,
            "launchTemplate": {"name": "gpu-nodes", "version": "$Latest"},
            "tags": [
                {"key": k, "value": v, "propagateAtLaunch": False} for k, v in (tags or {}).items()
            ],
        },
    }


NODEADM_USER_DATA = """MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    name: inference
  kubelet:
    flags:
      - --node-labels=gpu-inference.dev/pool=g5-asg
      - --register-with-taints=nvidia.com/gpu=present:NoSchedule
--BOUNDARY--
"""
ASG_TAGS = {
    "k8s.io/cluster-autoscaler/node-template/label/gpu-inference.dev/pool": "g5-asg",
    "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu": "present:NoSchedule",
}
