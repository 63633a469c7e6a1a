"""The node labels the clouds put on GPU nodes, and the annotations our pools write for the check:
one spelling each, read by the pools that emit them and the check that reads them back."""

from __future__ import annotations

# The kubelet's own, on every node (k8s.io/kubernetes v1.37.2 and v1.36.3
# pkg/kubelet/kubelet_node_status.go initialNode: hostname, and os / arch from the kubelet binary's
# GOOS / GOARCH, stable and beta keys).
HOSTNAME_LABEL = "kubernetes.io/hostname"
OS_LABEL = "kubernetes.io/os"
ARCH_LABEL = "kubernetes.io/arch"
BETA_OS_LABEL = "beta.kubernetes.io/os"
BETA_ARCH_LABEL = "beta.kubernetes.io/arch"


def kubelet_labels(arch: str | None, hostname: str | None = None) -> dict[str, str]:
    """The labels a Linux node's kubelet puts on it: every pool here runs Linux (the GPU images
    and the NVIDIA device plugin are Linux-only); `arch` (`amd64`, `arm64`) and `hostname` where
    the node's machine and name are known."""
    found = {OS_LABEL: "linux", BETA_OS_LABEL: "linux"}
    if arch:
        found.update({ARCH_LABEL: arch, BETA_ARCH_LABEL: arch})
    if hostname:
        found[HOSTNAME_LABEL] = hostname
    return found


# GKE (cloud.google.com/kubernetes-engine/docs/how-to/gpus, .../gpus-multi, .../timesharing-gpus,
# .../compute-classes, .../spot-vms): set by GKE on the nodes of a pool, never by us.
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
GKE_ACCELERATOR_COUNT_LABEL = "cloud.google.com/gke-accelerator-count"
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
GKE_SHARING_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_MAX_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
GKE_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"

# EKS managed node groups (docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html).
EKS_NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_LABEL = "eks.amazonaws.com/capacityType"

# Kubernetes' well-known labels (kubernetes.io/docs/reference/labels-annotations-taints).
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

# Written by `ExistingGpuNodes` on the NodePatch of each node, read by the check.
PRESENT_LABELS_ANNOTATION = "gpu-inference.dev/present-labels"
"""Labels the nodes already carry (NFD, GFD), recorded so the placement check knows them."""
ERT_ANNOTATION = "gpu-inference.dev/extended-resource-toleration"
"""`"true"`: the cluster of these existing nodes runs the ExtendedResourceToleration admission
plugin (what `ExistingGpuNodes` writes when told so)."""
ALLOCATABLE_ANNOTATION = "gpu-inference.dev/allocatable"
"""What each node has allocatable, JSON quantities by resource name (`{"cpu": "32", "memory":
"250Gi", "ephemeral-storage": "400Gi"}`), declared by the stack: its node shape (fit)."""
