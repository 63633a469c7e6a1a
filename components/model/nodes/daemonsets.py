"""DaemonSet overhead: the DaemonSet pods a node runs beside its workloads, and what they take.

Pure (imports nothing but `components.model`). Every node runs the DaemonSets whose pods it lets
in; each such pod holds its requests and one of the node's `pods` before any workload lands
there. The placement check subtracts that from a node's allocatable (fit, GI021 / GI024), the
Karpenter model adds it to each instance type's requests (scale-up, GI026), and the capacity
check packs it onto every node.

INTERFACE:
- `DaemonPod(name, requests, placement, source)`: one DaemonSet's pod on a node (`requests`
  already summed as kube-scheduler sums a pod, `pods: 1` included); `.runs_on(labels, taints,
  node_name)` is the DaemonSet controller's decision (`nodeShouldRunDaemonPod`).
- `daemon_overhead(daemons, labels, taints, allocatable=None, node_name=None) -> DaemonOverhead`:
  the pods a node of these labels and taints runs, in order, each taking room while it fits
  (`.pods`, `.pending`, `.total`, `.describe()`).
- `system_daemons(kind) -> tuple[DaemonPod, ...]`: the DaemonSets a provider runs on every node of
  its own (`SYSTEM_DAEMON_KINDS`), each from a cited source.

What a node runs is decided on the labels and taints the check knows (a pool's node template):
a DaemonSet that selects a label nodes get only once they boot (GPU / node feature discovery)
is not counted there, as Karpenter does not count it either. The order is the order given:
providers' DaemonSets first, then the graph's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..deploy import gke_driver_installer
from ..deploy.versions import GKE_DRIVER_INSTALLER_COMMIT, GKE_DRIVER_INSTALLER_PATHS
from ..scheduling import (
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Placement,
    Taint,
    Toleration,
)
from .shapes import Mi, Resources, format_resource

# The tolerations the DaemonSet controller adds to every pod it makes (kubernetes/kubernetes
# v1.36.3 `pkg/controller/daemon/util/daemonset_util.go` `AddOrUpdateDaemonPodTolerations`):
# a node's condition taints never keep a DaemonSet off it.
DAEMON_TOLERATIONS = (
    Toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute"),
    Toleration("node.kubernetes.io/unreachable", "Exists", "", "NoExecute"),
    Toleration("node.kubernetes.io/disk-pressure", "Exists", "", "NoSchedule"),
    Toleration("node.kubernetes.io/memory-pressure", "Exists", "", "NoSchedule"),
    Toleration("node.kubernetes.io/pid-pressure", "Exists", "", "NoSchedule"),
    Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),
)


@dataclass(frozen=True)
class DaemonPod:
    """The pod one DaemonSet runs on each node that lets it in."""

    name: str  # `kube-proxy`, or the graph's `DaemonSet/<name>`, `Release/<name>/<part>`
    requests: Resources  # as kube-scheduler sums the pod (pods: 1)
    placement: Placement  # nodeSelector, required node affinity, tolerations
    source: str  # where its numbers come from (an upstream file, or the graph)

    def runs_on(
        self, labels: Mapping[str, str], taints: Iterable[Taint], node_name: str | None = None
    ) -> bool:
        """The DaemonSet controller makes its pod for this node: nodeSelector and required node
        affinity match, every NoSchedule / NoExecute taint tolerated (with the controller's own
        tolerations). Resources are not checked: a pod that does not fit stays Pending."""
        return self.placement.with_tolerations(DAEMON_TOLERATIONS).admits(labels, taints, node_name)


@dataclass(frozen=True)
class DaemonOverhead:
    """The DaemonSet pods of one node: those that hold room there, in order, and those the
    controller makes but that do not fit what the ones before them left (they stay Pending)."""

    pods: tuple[DaemonPod, ...] = ()
    pending: tuple[DaemonPod, ...] = ()
    total: Resources = field(default_factory=Resources)  # the requests of `pods`, summed

    def holds(self, name: str) -> bool:
        """The DaemonSet `name` runs on the node and fits."""
        return any(d.name == name for d in self.pods)

    def describe(self, resource: str | None = None) -> str:
        """`kube-proxy 100m, aws-node 25m` (`resource` only; else every resource asked)."""
        parts = []
        for d in self.pods:
            amounts = [
                format_resource(k, v) + ("" if resource else f" {k}")
                for k, v in d.requests.items()
                if v and k != "pods" and (resource is None or k == resource)
            ]
            if amounts or resource is None:
                parts.append(f"{d.name} {', '.join(amounts)}".rstrip())
        return ", ".join(parts)


def daemon_overhead(
    daemons: Sequence[DaemonPod],
    labels: Mapping[str, str],
    taints: Iterable[Taint],
    allocatable: Resources | None = None,
    node_name: str | None = None,
) -> DaemonOverhead:
    """The DaemonSet pods a node with these labels and taints runs. Each holds room while it fits
    in what the ones before it left of `allocatable` (kube-scheduler places them one at a time);
    `allocatable` None (an unknown node): every one that runs there counts."""
    taints = tuple(taints)
    held: list[DaemonPod] = []
    pending: list[DaemonPod] = []
    total = Resources()
    for d in daemons:
        if not d.runs_on(labels, taints, node_name):
            continue
        after = total + d.requests
        if allocatable is not None and not after.fits_in(allocatable):
            pending.append(d)
            continue
        held.append(d)
        total = after
    return DaemonOverhead(tuple(held), tuple(pending), total)


# ---------------------------------------------------------------------------------------------
# The providers' own DaemonSets
# ---------------------------------------------------------------------------------------------

_EVERY_TAINT = (Toleration("", "Exists"),)

KUBE_PROXY = DaemonPod(
    "kube-proxy",
    Resources(cpu=100, pods=1),
    Placement(tolerations=_EVERY_TAINT),
    "kubernetes/autoscaler cluster-autoscaler-1.36.1 cloudprovider/utils.go BuildKubeProxy "
    "(KubeProxyCpuRequestMillis 100; the AWS and GCE TemplateNodeInfo put it on every node)",
)
"""kube-proxy on every node: an EKS add-on DaemonSet, a static pod on GKE (its mirror pod counts
the same). The request is the one cluster-autoscaler's node templates give it."""

AWS_NODE = DaemonPod(
    "aws-node",
    Resources(cpu=25, pods=1),
    Placement(
        tolerations=_EVERY_TAINT,
        node_affinity=NodeAffinity(
            required=(
                NodeSelectorTerm(
                    match_expressions=(
                        NodeSelectorRequirement(
                            "eks.amazonaws.com/compute-type", "NotIn", ("fargate", "hybrid", "auto")
                        ),
                    )
                ),
            )
        ),
    ),
    "aws/amazon-vpc-cni-k8s v1.23.0 charts/aws-vpc-cni/values.yaml (resources.requests.cpu "
    "25m, tolerations Exists, affinity compute-type NotIn fargate/hybrid/auto; its os / arch "
    "terms hold on every EKS Linux node)",
)
"""The VPC CNI's pod on every EKS node (not on Fargate, hybrid or Auto Mode nodes)."""

GKE_GPU_DEVICE_PLUGIN = DaemonPod(
    "nvidia-gpu-device-plugin",
    Resources(cpu=50, memory=10 * Mi, pods=1),
    Placement(
        tolerations=(
            Toleration("", "Exists", "", "NoExecute"),
            Toleration("", "Exists", "", "NoSchedule"),
        ),
        node_affinity=NodeAffinity(
            required=(
                NodeSelectorTerm(
                    match_expressions=(
                        NodeSelectorRequirement("cloud.google.com/gke-accelerator", "Exists"),
                    )
                ),
            )
        ),
    ),
    "kubernetes/kubernetes cluster/addons/device-plugins/nvidia-gpu/daemonset.yaml @1b8c7585 "
    "(requests 50m / 10Mi, affinity cloud.google.com/gke-accelerator Exists)",
)
"""GKE's managed NVIDIA device plugin on GPU nodes (not where the node carries
`gke-no-default-nvidia-gpu-device-plugin=true`: the pool readers leave it out there)."""


def _driver_installer(image: str) -> DaemonPod:
    """The pinned manifest's pod: its placement read from the vendored pod spec; its requests
    the larger of its init containers' (150m each; the pause container asks nothing)."""
    return DaemonPod(
        f"nvidia-driver-installer ({image})",
        Resources(cpu=150, pods=1),
        Placement.from_pod_spec(gke_driver_installer.PODS[image]),  # read, not copied
        f"GoogleCloudPlatform/container-engine-accelerators @{GKE_DRIVER_INSTALLER_COMMIT[:8]} "
        f"{GKE_DRIVER_INSTALLER_PATHS[image]} (init containers 150m each, the pause container "
        "none; tolerations Exists; affinity gke-accelerator Exists, gke-gpu-driver-version "
        "DoesNotExist)",
    )


GKE_DRIVER_INSTALLERS = {image: _driver_installer(image) for image in GKE_DRIVER_INSTALLER_PATHS}
"""The pod of GKE's NVIDIA GPU driver installer DaemonSet per node image, as the pinned manifest
has it (`model.deploy.gke_driver_installer`), when a graph applies that manifest whole: every
taint tolerated, on GKE GPU nodes whose driver GKE does not install (GKE labels those it installs
`cloud.google.com/gke-gpu-driver-version`; COS: not on Confidential GKE Nodes)."""

SYSTEM_DAEMON_KINDS: dict[str, tuple[DaemonPod, ...]] = {
    "gke": (KUBE_PROXY,),
    "gke-gpu": (KUBE_PROXY, GKE_GPU_DEVICE_PLUGIN),
    "eks": (KUBE_PROXY, AWS_NODE),
    "none": (),
}
"""What each kind of node runs of its own: GKE Standard / ComputeClass nodes (`gke`; with GKE's
device plugin: `gke-gpu`), EKS nodes of managed node groups, self-managed groups and Karpenter
(`eks`), and nodes whose system DaemonSets are not known (`none`: existing nodes, whose declared
allocatable is theirs to keep; EKS Auto Mode, which runs them on the host; Autopilot). GKE's other
per-node agents (logging, metrics, CSI) have no public manifest at a version: not counted."""


def system_daemons(kind: str) -> tuple[DaemonPod, ...]:
    """The provider's own DaemonSets on a node of `kind` (a key of `SYSTEM_DAEMON_KINDS`)."""
    return SYSTEM_DAEMON_KINDS[kind]
