"""`NvidiaDraDriver`: NVIDIA's DRA driver for GPUs (chart `dra-driver-nvidia-gpu`, pinned in
`model.deploy.versions.NVIDIA_DRA_DRIVER`), its kubelet plugin tolerating every taint of the DRA
pools.

The kubelet plugin publishes each node's GPUs as ResourceSlices. By default it runs where its
affinity finds `nvidia.com/gpu.present=true` or node-feature-discovery's NVIDIA PCI labels, and
tolerates only `nvidia.com/gpu:NoSchedule` (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
deployments/helm/dra-driver-nvidia-gpu/values.yaml `kubeletPlugin`). A plugin that does not
tolerate a pool's taint never runs there, and the pool's GPUs are never published (placement
check GI054), so every pool taint key gets an `Exists` toleration. Given the DRA pools
(`pool_label_values`), its affinity is replaced by their pool label: EKS's nodeadm labels every
NVIDIA node `nvidia.com/gpu.present=true` from Kubernetes 1.35 (awslabs/amazon-eks-ami
nodeadm/internal/kubelet/config.go), and a DRA driver must never publish GPUs a device plugin
also hands out (Karpenter's DRA guide, "Running DRA drivers alongside device plugins").
`gpuResourcesEnabledOverride` turns GPU allocation on (the v0.4.1 release notes' install
command); on GKE the NVIDIA driver sits under `/home/kubernetes/bin/nvidia` (`nvidiaDriverRoot`,
GKE's DRA setup page).

`GkeGpuDriverInstaller`: the NVIDIA GPU driver itself on GKE DRA nodes. A GKE DRA pool has GKE's
driver install off (`gpuDriverVersion: INSTALLATION_DISABLED`, as GKE's "Prepare GKE infrastructure
for DRA workloads" sets it up; GKE API v1 `GPUDriverInstallationConfig`: "Disable GPU driver auto
installation and needs manual installation"), so the driver comes from GKE's driver installer
DaemonSet (GoogleCloudPlatform/container-engine-accelerators
`nvidia-driver-installer/<image>/daemonset-preloaded.yaml`, GKE's "Manually install NVIDIA GPU
drivers"), vendored at its pinned commit (`model.deploy.gke_driver_installer`: the manifest's
object, one node-affinity requirement added so that it runs on the stack's DRA pools only), a
typed `apps/v1` DaemonSet marked as this stack's and refused at `up` when another made
`kube-system/nvidia-driver-installer`. Its pod tolerates every taint (`operator: Exists`), so the
DRA pools' own taints too. It installs into `/home/kubernetes/bin/nvidia`, the `nvidiaDriverRoot`
the DRA driver is given on GKE. The stack's GKE pools run GKE's default node image,
Container-Optimized OS (no `imageType`: COS_CONTAINERD), so the COS manifest is the one: its
installer image is preloaded on COS nodes only (`cos-nvidia-installer:fixed`, `imagePullPolicy:
Never`); Ubuntu nodes take the Ubuntu manifest.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..kube.provider import create_opts, make_namespaces, owned
from ..model.deploy import versions
from ..model.deploy.gke_driver_installer import installer_daemonset
from ..model.deploy.ownership import NamespacePlan, install_ownership, namespace_plans
from ..model.errors import InputError
from ..model.inputs import stack
from ..model.scheduling import WIRED_POOL_ANNOTATION, Taint, tolerating
from .helm import chart_release, check_local_charts

KUBELET_PLUGIN_DEFAULT_TOLERATIONS = (
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia"


@dataclass
class NvidiaDraDriverArgs:
    """Inputs of `NvidiaDraDriver`."""

    version: Optional[str] = field(default=None, metadata=stack(syntax="version"))
    """Chart version; default: the pinned one."""
    pool_taints: Optional[Sequence[Taint]] = field(default=None, metadata=stack(hidden=True))
    """Taints of the DRA pools: each key gets an `Exists` toleration on the kubelet plugin."""
    pool_label: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """A node label key that marks the DRA pools (e.g. `gpu-inference.dev/pool`)."""
    pool_label_values: Optional[Sequence[str]] = field(default=None, metadata=stack(hidden=True))
    """The values of `pool_label` on DRA pools: the kubelet plugin runs only there (its
    `kubeletPlugin.affinity` replaced)."""
    driver_root: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Where the NVIDIA driver is on the host (`nvidiaDriverRoot`); default: the chart's `/`
    (GKE: `/home/kubernetes/bin/nvidia`)."""
    namespace: Optional[str] = field(
        default="dra-driver-nvidia-gpu", metadata=stack(syntax="dns1123")
    )
    """Namespace of the release."""
    chart: Optional[str] = None
    """A local chart directory or `.tgz` installed instead of the registry's (air-gapped)."""
    adopt: Optional[bool] = False
    """Take over what this install makes that already exists and is not this stack's (a Helm
    release of the same name that plain Helm, another tool or stack installed, a namespace, an
    object): this stack then keeps it up to date, and `destroy` leaves it in place. Off (the
    default), such a thing is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespaces `namespaces()` lists (a platform makes each namespace of a
    stack once, so that no config change moves one to another resource)."""


def namespaces(name: str, args: NvidiaDraDriverArgs) -> dict[str, NamespacePlan]:
    """The namespace of the release."""
    return namespace_plans(
        [(args.namespace or "dra-driver-nvidia-gpu", NamespacePlan(f"{name}-namespace"))]
    )


def dra_driver_values(args: NvidiaDraDriverArgs) -> dict[str, Any]:
    values: dict[str, Any] = {
        "gpuResourcesEnabledOverride": True,
        "kubeletPlugin": {
            "tolerations": tolerating(KUBELET_PLUGIN_DEFAULT_TOLERATIONS, args.pool_taints or ())
        },
    }
    if args.pool_label and args.pool_label_values:
        values["kubeletPlugin"]["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": args.pool_label,
                                    "operator": "In",
                                    "values": sorted(args.pool_label_values),
                                }
                            ]
                        }
                    ]
                }
            }
        }
    if args.driver_root:
        values["nvidiaDriverRoot"] = args.driver_root
    return values


class NvidiaDraDriver(pulumi.ComponentResource):
    """NVIDIA's DRA driver for GPUs (Helm); `ready` is the release."""

    def __init__(
        self, name: str, args: NvidiaDraDriverArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        check_local_charts(f"NvidiaDraDriver({name!r})", {"chart": args.chart})
        super().__init__("gpu-inference:index:NvidiaDraDriver", name, None, opts)
        namespace = args.namespace or "dra-driver-nvidia-gpu"
        ownership = install_ownership(f"NvidiaDraDriver({name!r})", args.adopt)
        self.ready = chart_release(
            f"{name}-release",
            versions.NVIDIA_DRA_DRIVER,
            release="dra-driver-nvidia-gpu",
            namespace=namespace,
            values=dra_driver_values(args),
            version=args.version,
            local_chart=args.chart,
            create_namespace=False,
            depends_on=make_namespaces(
                namespaces(name, args), self, args.namespaces_made, ownership
            ).get(namespace, []),
            parent=self,
            ownership=ownership,
        )
        self.register_outputs({})


@dataclass
class GkeGpuDriverInstallerArgs:
    """Inputs of `GkeGpuDriverInstaller`."""

    image: Optional[str] = field(default="cos", metadata=stack(hidden=True))
    """The GKE node image the installer is for: `cos` (GKE's default, the stack's pools) or
    `ubuntu`."""
    pool_label: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """With `pool_label_values`: the installer's pod runs only on nodes whose label `pool_label`
    is one of them (the platform: the stack's DRA pools); else on every GKE GPU node without
    GKE's own driver install, as upstream has it."""
    pool_label_values: Optional[list[str]] = field(default=None, metadata=stack(hidden=True))
    """The values of `pool_label` the installer's pod runs on."""
    adopt: Optional[bool] = False
    """Take over a `kube-system/nvidia-driver-installer` DaemonSet that already exists and is not
    this stack's (the cluster's own installer): this stack then keeps it up to date, as its pinned
    manifest on the DRA pools only (the cluster's other nodes lose it: use the cluster's own,
    `enabled: false`, instead when they need it), and `destroy` leaves it in place. Off (the
    default), it is refused at `up`, naming its owner."""


class GkeGpuDriverInstaller(pulumi.ComponentResource):
    """GKE's NVIDIA GPU driver installer DaemonSet, as its pinned manifest has it
    (`model.deploy.gke_driver_installer`), on the given pools' nodes; `ready` is the DaemonSet.
    A `kube-system/nvidia-driver-installer` another made (the cluster's own installer) is refused
    at `up` unless adopted on purpose: it may serve the cluster's other nodes."""

    def __init__(
        self,
        name: str,
        args: GkeGpuDriverInstallerArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        image = args.image or "cos"
        try:
            versions.gke_driver_installer_manifest(image)
        except InputError as e:
            raise e.at("args.image") from None
        super().__init__("gpu-inference:index:GkeGpuDriverInstaller", name, None, opts)
        body = installer_daemonset(image, args.pool_label, args.pool_label_values or ())
        if args.pool_label_values:
            # Wired to those pools, as the stack's workloads are: the check holds it to them.
            body["metadata"]["annotations"] = {
                WIRED_POOL_ANNOTATION: ",".join(sorted(args.pool_label_values))
            }
        ownership = install_ownership(f"GkeGpuDriverInstaller({name!r})", args.adopt)
        # Called through a plain Callable: mypy 2.4 checking this call against DaemonSet's nested
        # TypedDict overloads grew past 20 GiB cold and was killed (the spec is a vendored dict;
        # tests/serving/test_dra_driver.py holds the inputs the resource gets).
        daemonset: Callable[..., k8s.apps.v1.DaemonSet] = k8s.apps.v1.DaemonSet
        self.ready = daemonset(
            f"{name}-daemonset",
            metadata=owned(body["metadata"]),
            spec=body["spec"],
            opts=create_opts(self, ownership=ownership),
        )
        self.register_outputs({})
