"""Every pinned upstream version and Helm chart, in one table.

Charts are installed with `helm.v3.Release` (previews without a cluster). Bump a version here and
nowhere else; `gpu-inference preview` shows the chart versions in `manifests.yaml`'s header.
"""

from dataclasses import dataclass
from typing import Optional

from ..errors import InputError, show


@dataclass(frozen=True)
class Chart:
    """A Helm chart: name, repository (https index or an `oci://` registry), pinned version."""

    chart: str
    repo: str
    version: str


# Knative Operator (knative/operator `config/charts/knative-operator`); it installs the Knative
# Serving version matching its own unless `KnativeServing.spec.version` says otherwise.
KNATIVE_OPERATOR = Chart("knative-operator", "https://knative.github.io/operator", "v1.23.0")

# KServe: CRDs first, then the controller (values key `kserve.controller.deploymentMode`, checked in
# kserve/kserve charts/kserve-resources/README.md). From v0.17 on the controller chart is `kserve-resources`
# (`kserve` up to v0.16). v0.20.0 is the release whose CRD is in ../shared/crds.
KSERVE_VERSION = "v0.20.0"
KSERVE_CRD = Chart("kserve-crd", "oci://ghcr.io/kserve/charts", KSERVE_VERSION)
KSERVE_CONTROLLER = Chart("kserve-resources", "oci://ghcr.io/kserve/charts", KSERVE_VERSION)
# From v0.17 the ClusterServingRuntimes are a third chart, off by default even there
# (`kserve.servingruntime.enabled: false` in charts/kserve-runtime-configs/values.yaml, v0.20.0;
# its README installs it with `--set kserve.servingruntime.enabled=true`). Up to v0.16 the
# controller chart `kserve` carried them (templates/clusterservingruntimes.yaml).
KSERVE_RUNTIME_CONFIGS = Chart(
    "kserve-runtime-configs", "oci://ghcr.io/kserve/charts", KSERVE_VERSION
)

# Seldon Core 2: 2.6.0 is the last Apache-2.0 release. From 2.7.0 on Seldon Core 2 is under the
# Business Source License 1.1 (production use needs a licence from Seldon).
SELDON_VERSION = "2.6.0"
SELDON_REPO = "https://seldonio.github.io/helm-charts"
SELDON_CRDS = Chart("seldon-core-v2-crds", SELDON_REPO, SELDON_VERSION)
SELDON_SETUP = Chart("seldon-core-v2-setup", SELDON_REPO, SELDON_VERSION)
SELDON_RUNTIME = Chart("seldon-core-v2-runtime", SELDON_REPO, SELDON_VERSION)
# The agent sidecar of a Seldon server pod (it carries SELDON_SERVER_CAPABILITIES).
SELDON_AGENT_IMAGE = f"docker.io/seldonio/seldon-agent:{SELDON_VERSION}"
# What the servers of the seldon-core-v2-setup chart's ServerConfigs advertise (2.6.0 values.yaml,
# serverConfig.mlserver / .triton serverCapabilities): a ServerConfig's capabilities add to these.
SELDON_BUILTIN_CAPABILITIES: dict[str, tuple[str, ...]] = {
    "mlserver": (
        "mlserver",
        "alibi-detect",
        "alibi-explain",
        "huggingface",
        "lightgbm",
        "mlflow",
        "python",
        "sklearn",
        "spark-mlib",
        "xgboost",
    ),
    "triton": (
        "triton",
        "dali",
        "fil",
        "onnx",
        "openvino",
        "python",
        "pytorch",
        "tensorflow",
        "tensorrt",
    ),
}

# NVIDIA device plugin (needed on EKS and on-prem; GKE installs and manages its own).
NVIDIA_DEVICE_PLUGIN = Chart(
    "nvidia-device-plugin", "https://nvidia.github.io/k8s-device-plugin", "0.17.1"
)

# NVIDIA's DRA driver for GPUs (DRA pools): kubernetes-sigs/dra-driver-nvidia-gpu, its home since
# it moved from NVIDIA's organisation. v0.4.1 is its newest release; its release notes install the
# OCI chart `oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu` with
# `gpuResourcesEnabledOverride=true` (GPU allocation on; ComputeDomains are the chart's other half).
# The chart makes DeviceClasses gpu.nvidia.com and mig.nvidia.com (templates/deviceclass-*.yaml);
# its kubelet plugin tolerates `nvidia.com/gpu:NoSchedule` and runs on nodes labelled
# `nvidia.com/gpu.present=true` (values.yaml `kubeletPlugin`).
NVIDIA_DRA_DRIVER = Chart(
    "dra-driver-nvidia-gpu", "oci://registry.k8s.io/dra-driver-nvidia/charts", "0.4.1"
)

# GKE's NVIDIA GPU driver installer (GKE DRA pools, whose automatic driver install is off):
# GoogleCloudPlatform/container-engine-accelerators has no release since v1.0.20 (2022, before
# these manifests took their current form), so the manifest is pinned at a commit: f2cf4197
# (2025-07-02) is the last change of `nvidia-driver-installer/cos/daemonset-preloaded.yaml` and
# of the Ubuntu one, both unchanged on master at 992db812 (2026-06-09). One DaemonSet
# `kube-system/nvidia-driver-installer` per OS image: the COS one runs `/cos-gpu-installer
# install` (the default driver of the node's COS milestone; `-latest.yaml` passes
# `--version=latest`) from the image GKE preloads on COS nodes (`cos-nvidia-installer:fixed`,
# `imagePullPolicy: Never`) into `/home/kubernetes/bin/nvidia`; Ubuntu nodes take
# `ubuntu/daemonset-preloaded.yaml` (`gke-nvidia-installer:fixed`). Vendored: the objects are
# transcribed in `model.deploy.gke_driver_installer` from the files read at these URLs, which are
# not kept in the repository (a bump changes both). The COS one is held by
# tests/e2e/test_upstream_copies.py to the copy Kubernetes' own GPU e2e ships in k8s.io/kubernetes.
GKE_DRIVER_INSTALLER_REPO = "GoogleCloudPlatform/container-engine-accelerators"
GKE_DRIVER_INSTALLER_COMMIT = "f2cf4197a5c3f0f20133be15d5fad8b7453beed5"
GKE_DRIVER_INSTALLER_PATHS = {
    "cos": "nvidia-driver-installer/cos/daemonset-preloaded.yaml",
    "ubuntu": "nvidia-driver-installer/ubuntu/daemonset-preloaded.yaml",
}
"""The installer manifest for each GKE node image (`model.nodes.gke_storage.image_of`)."""


def gke_driver_installer_manifest(image: str = "cos") -> str:
    """The pinned URL of GKE's driver installer manifest for nodes of `image` (cos | ubuntu): the
    source of the vendored copy, and what a cluster's own install applies."""
    if image not in GKE_DRIVER_INSTALLER_PATHS:
        raise InputError(
            f"GKE has no NVIDIA driver installer manifest for node image {show(image)}",
            " or ".join(GKE_DRIVER_INSTALLER_PATHS),
        )
    return (
        f"https://raw.githubusercontent.com/{GKE_DRIVER_INSTALLER_REPO}/"
        f"{GKE_DRIVER_INSTALLER_COMMIT}/{GKE_DRIVER_INSTALLER_PATHS[image]}"
    )


# cert-manager (KServe's webhooks need certificates). One for the whole stack: KServe v0.20.0's
# LLMInferenceService guide asks for 1.18.0 or later (kserve/website versioned_docs/version-0.20/
# admin-guide/kubernetes-deployment-llmisvc.md), above what its CI pins (kserve-deps.env v1.17.0).
CERT_MANAGER = Chart("cert-manager", "https://charts.jetstack.io", "v1.18.2")
CERT_MANAGER_LLM_MINIMUM = "v1.18.0"

# Karpenter (EKS, optional): its CRDs chart, then the controller chart. 1.15.0 supports Kubernetes
# 1.36 and 1.37 (aws/karpenter-provider-aws v1.15.0 pkg/providers/version/version.go
# `MinK8sVersion = "1.26"`, `MaxK8sVersion = "1.37"`; v1.14.1 says "1.36"; outside the range the
# version controller reports the cluster incompatible: `validateK8sVersion`; docs/versions.md),
# and it is the release the Karpenter judge links (tests/e2e/karpenter_judge/go.mod; a test holds
# the two together). Both are OCI charts in public.ecr.aws/karpenter, versioned as the git tag
# without its `v` (hack/release/release.sh `release ... "${git_tag#v}"`); common.sh stamps
# Chart.yaml's version and the controller image (`controller.image.tag` / `.digest` in
# values.yaml) before it pushes both charts, so the chart version pins the image too (the tagged
# tree's Chart.yaml still says 1.14.1). The unit tests validate the pools' CRs against
# ../shared/crds (v1.14.1's files); tests/e2e/test_karpenter_crds.py against this release's, read
# from its Go module.
KARPENTER_VERSION = "1.15.0"
KARPENTER_REPO = "oci://public.ecr.aws/karpenter"
KARPENTER_CRD = Chart("karpenter-crd", KARPENTER_REPO, KARPENTER_VERSION)
KARPENTER = Chart("karpenter", KARPENTER_REPO, KARPENTER_VERSION)

SERVERLESS_MODES = ("Serverless", "Knative")
RAW_MODES = ("RawDeployment", "Standard")


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = version.lstrip("v").split("-")[0].split(".")
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(
            f"KServe version {show(version)} is not a version", "e.g. v0.15.2 or v0.20.0"
        ) from None


def kserve_controller_chart(version: str = KSERVE_VERSION) -> Chart:
    """The controller chart at `version`: `kserve` up to v0.16, `kserve-resources` from v0.17
    (`name:` in charts/kserve-resources/Chart.yaml at v0.16.0 and v0.17.0)."""
    name = "kserve-resources" if _version_tuple(version) >= (0, 17) else "kserve"
    return Chart(name, KSERVE_CONTROLLER.repo, version)


def kserve_runtime_chart(version: str = KSERVE_VERSION) -> Optional[Chart]:
    """The chart of the ClusterServingRuntimes at `version` (v0.17 on), or None when the
    controller chart carries them."""
    if _version_tuple(version) < (0, 17):
        return None
    return Chart(KSERVE_RUNTIME_CONFIGS.chart, KSERVE_RUNTIME_CONFIGS.repo, version)


def kserve_deployment_mode(mode: str, kserve_version: str = KSERVE_VERSION) -> str:
    """The deployment mode spelled as this KServe version expects it: v0.16 renamed
    `Serverless` -> `Knative` and `RawDeployment` -> `Standard` (old names still accepted)."""
    if mode not in SERVERLESS_MODES + RAW_MODES:
        raise InputError(
            f"deployment mode {show(mode)} is not known", ", ".join(SERVERLESS_MODES + RAW_MODES)
        )
    new = _version_tuple(kserve_version) >= (0, 16)
    if mode in SERVERLESS_MODES:
        return "Knative" if new else "Serverless"
    return "Standard" if new else "RawDeployment"
