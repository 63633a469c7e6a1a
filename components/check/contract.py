"""The placement check's contract with the graphs it reads: the resource types, annotations and
labels it knows, and the upstream defaults its rules share, each spelled once. What they mean for
a user, and how each pool and workload kind is read, is in docs/findings.md ("What the check
reads"); the finding codes are the rules' registry's (`registry.RULES`)."""

from __future__ import annotations

from ..model.deploy.versions import SELDON_BUILTIN_CAPABILITIES
from ..model.nodes import labels
from ..model.scheduling import (
    GPU_RESOURCE,
    Taint,
    Toleration,
)
from ..model.scheduling import POOL_LABEL as POOL_LABEL  # one spelling: the model's
from ..model.scheduling import WIRED_POOL_ANNOTATION as WIRED_POOL_ANNOTATION
from ..model.serving import annotations as notes
from .registry import CODES as CODES  # derived from the rules' registry
from .registry.rule import SEVERITIES as SEVERITIES

# The labels and annotations the check reads: one spelling each, the model's.
GKE_ACCELERATOR_LABEL = labels.GKE_ACCELERATOR_LABEL
GKE_ACCELERATOR_COUNT_LABEL = labels.GKE_ACCELERATOR_COUNT_LABEL
GKE_SPOT_LABEL = labels.GKE_SPOT_LABEL
COMPUTE_CLASS_LABEL = labels.COMPUTE_CLASS_LABEL
GKE_SHARING_LABEL = labels.GKE_SHARING_LABEL
GKE_MAX_CLIENTS_LABEL = labels.GKE_MAX_CLIENTS_LABEL
GKE_PARTITION_LABEL = labels.GKE_PARTITION_LABEL
EKS_NODEGROUP_LABEL = labels.EKS_NODEGROUP_LABEL
EKS_CAPACITY_LABEL = labels.EKS_CAPACITY_LABEL
PRESENT_LABELS_ANNOTATION = labels.PRESENT_LABELS_ANNOTATION
ERT_ANNOTATION = labels.ERT_ANNOTATION
ALLOCATABLE_ANNOTATION = labels.ALLOCATABLE_ANNOTATION
WIRED_COMPONENT_POOL_ANNOTATION = notes.WIRED_COMPONENT_POOL_ANNOTATION
MODEL_SIZE_ANNOTATION = notes.MODEL_SIZE_ANNOTATION
MODEL_PARAMETERS_ANNOTATION = notes.MODEL_PARAMETERS_ANNOTATION
MODEL_DTYPE_ANNOTATION = notes.MODEL_DTYPE_ANNOTATION
DEPLOYMENT_MODE_ANNOTATION = notes.DEPLOYMENT_MODE_ANNOTATION
PROGRESS_DEADLINE_ANNOTATION = notes.PROGRESS_DEADLINE_ANNOTATION
SELDON_CAPABILITIES_ENV = notes.SELDON_CAPABILITIES_ENV
MODEL_ANNOTATION = notes.MODEL_ANNOTATION
MAX_MODEL_LEN_ANNOTATION = notes.MAX_MODEL_LEN_ANNOTATION
GPU_MEMORY_UTILIZATION_ANNOTATION = notes.GPU_MEMORY_UTILIZATION_ANNOTATION
POOL_STARTUP_ANNOTATION = notes.NODE_STARTUP_ANNOTATION

GPU_COUNT_KEYS = (
    "gpu-inference.dev/gpus-per-node",
    "nvidia.com/gpu.count",
    "cloud.google.com/gke-accelerator-count",
)
"""Annotation or label keys a NodePatch may carry to say how many GPUs the node has."""

GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_PATCH = "kubernetes:core/v1:NodePatch"
AUTOPILOT_POOL = "gpu-inference:index:GkeAutopilotGpuPool"
"""GPUs on GKE Autopilot have no cloud resource; the component registers what they will be."""
AUTOPILOT_CLUSTER = "gcp:container/cluster:Cluster"
"""A GKE cluster; with `enableAutopilot: true` its GPU nodes are Autopilot's (read when the graph
has no GkeAutopilotGpuPool)."""
ASG_GROUP = "aws:autoscaling/group:Group"
"""A self-managed Auto Scaling group of nodes (gpu-inference makes none)."""
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INFERENCE_SERVICE = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
SELDON_SERVER = "kubernetes:mlops.seldon.io/v1alpha1:Server"
SELDON_SERVER_CONFIG = "kubernetes:mlops.seldon.io/v1alpha1:ServerConfig"
SELDON_MODEL = "kubernetes:mlops.seldon.io/v1alpha1:Model"
KNATIVE_SERVING = "kubernetes:operator.knative.dev/v1beta1:KnativeServing"
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
APPS_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
ISVC_COMPONENTS = ("predictor", "transformer", "explainer")

SERVERLESS_MODES = ("Serverless", "Knative")
RAW_MODES = ("RawDeployment", "Standard")

GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_PREEMPTIBLE_LABEL = "cloud.google.com/gke-preemptible"
GKE_NO_DEFAULT_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
GKE_GPU_TAINT = Taint(GPU_RESOURCE, "present", "NoSchedule")

DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_DEFAULT_TOLERATIONS = (
    Toleration("CriticalAddonsOnly", "Exists"),
    Toleration(GPU_RESOURCE, "Exists", "", "NoSchedule"),
)
NFD_WORKER_DEFAULT_TOLERATIONS = (
    Toleration("node-role.kubernetes.io/master", "Equal", "", "NoSchedule"),
    Toleration(GPU_RESOURCE, "Equal", "present", "NoSchedule"),
)
DEVICE_PLUGIN_MARKERS = ("nvidia-device-plugin", "k8s-device-plugin", "nvidia-gpu-device-plugin")
# The chart's default affinity (NVIDIA/k8s-device-plugin v0.17.1 deployments/helm/
# nvidia-device-plugin/values.yaml): labels node / GPU feature discovery puts on GPU nodes.
DEVICE_PLUGIN_DEFAULT_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": key, "operator": "In", "values": [value]},
                    ]
                }
                for key, value in (
                    ("feature.node.kubernetes.io/pci-10de.present", "true"),
                    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
                    ("nvidia.com/gpu.present", "true"),
                )
            ]
        }
    }
}
# NVIDIA's DCGM exporter chart and its defaults (NVIDIA/dcgm-exporter 4.5.3-4.8.2
# deployment/values.yaml: requests 100m / 128Mi, tolerates only the control-plane taint).
DCGM_EXPORTER_CHART = "dcgm-exporter"
DCGM_EXPORTER_DEFAULTS = {
    "resources": {
        "requests": {"cpu": "100m", "memory": "128Mi"},
        "limits": {"cpu": "200m", "memory": "512Mi"},
    },
    "tolerations": [
        {
            "key": "node-role.kubernetes.io/control-plane",
            "operator": "Exists",
            "effect": "NoSchedule",
        }
    ],
}

SELDON_DEFAULT_CAPABILITIES: dict[str, frozenset[str]] = {
    name: frozenset(caps) for name, caps in SELDON_BUILTIN_CAPABILITIES.items()
}
SELDON_SERVER_CHARTS = ("seldon-core-v2-runtime", "seldon-core-v2-servers")
KSERVE_CHARTS = ("kserve", "kserve-resources")

# Keys of a KServe component that are pod-spec fields or component settings, never a container.
COMPONENT_NON_CONTAINER_KEYS = frozenset(
    {
        "affinity",
        "nodeSelector",
        "tolerations",
        "securityContext",
        "dnsConfig",
        "logger",
        "batcher",
        "workerSpec",
        "readinessGates",
        "overhead",
        "annotations",
        "labels",
        "topologySpreadConstraints",
    }
)
CONTAINER_MARKERS = ("resources", "storageUri", "image", "modelFormat", "runtime", "args")


# Labels a node gets only after it boots, from daemons running on it: GPU feature discovery
# (`nvidia.com/gpu.product`, `.memory`, `.count`, `nvidia.com/cuda.*`, `nvidia.com/mig.*`, ...:
# NVIDIA/k8s-device-plugin tests/e2e expectedLabelPatterns) and node-feature-discovery
# (`feature.node.kubernetes.io/*`). A cloud pool's node template (what the autoscaler simulates
# when the pool is at zero) has only the labels the pool is created with.
BOOT_LABEL_PREFIXES = ("nvidia.com/", "feature.node.kubernetes.io/")
# Labels a cloud pool's nodes carry from creation that say which GPU it has (fix text of GI014).
CREATION_GPU_LABELS = (
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    POOL_LABEL,
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
)

ASG_TAG = "aws:autoscaling/tag:Tag"
NODE_TEMPLATE_TAG = "k8s.io/cluster-autoscaler/node-template/"
MAX_REPLICAS_ANNOTATION = "gpu-inference.dev/max-replicas"

# Model size (GI019): a workload states it with these annotations (on the InferenceService, the
# Seldon Server / Model, or the Deployment): the weights in GB, or parameters and dtype.
DTYPE_BYTES = {
    "fp32": 4.0,
    "float32": 4.0,
    "fp16": 2.0,
    "float16": 2.0,
    "bf16": 2.0,
    "bfloat16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}
# GPU memory a model needs beyond its weights, as a fraction of them: the CUDA context, activations
# and a minimal KV cache. Stated, not measured: vLLM itself takes only 90% of a GPU by default
# (`gpu_memory_utilization` 0.9), so weights + 20% is the least that has a chance to start.
MODEL_MEMORY_OVERHEAD = 0.2

# Knative revision annotation: how long a new revision may take to become ready (GI020).

# Seldon Core 2 agent: a server replica may register models up to its server container's memory
# request x (1 + SELDON_OVERCOMMIT_PERCENTAGE / 100), 10 by default (Seldon docs, models/mms.md).
SELDON_OVERCOMMIT_ENV = "SELDON_OVERCOMMIT_PERCENTAGE"
SELDON_DEFAULT_OVERCOMMIT = 10
SELDON_SERVER_CONTAINERS = ("mlserver", "triton")


def wired_annotation(component: str) -> str:
    """The per-component wiring annotation of an InferenceService component."""
    return WIRED_COMPONENT_POOL_ANNOTATION.format(component=component)
