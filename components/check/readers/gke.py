"""GKE node pools (`gcp:container/nodePool:NodePool`) as the check sees them: the labels and taints
GKE adds, GPUs per node (shared and partitioned GPUs counted)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.errors import InputError
from ...model.nodes.catalog import MIG_PROFILES, gke_accelerator, gke_gpus_for_machine
from ...model.nodes.gke_machines import gce_arch, gce_machine_or_none
from ...model.nodes.gke_storage import image_of
from ...model.nodes.labels import kubelet_labels
from ...model.nodes.quotas import gce_region
from ...model.nodes.shapes import GKE_DEFAULT_MAX_PODS, NodeShape, gke_node_shape_or_none
from ...model.nodes.sharing import GKE_SHARING_STRATEGIES, gke_shared_gpus
from ..contract import (
    GKE_ACCELERATOR_COUNT_LABEL,
    GKE_ACCELERATOR_LABEL,
    GKE_GPU_TAINT,
    GKE_NO_DEFAULT_PLUGIN_LABEL,
    GKE_NODEPOOL_LABEL,
    GKE_PREEMPTIBLE_LABEL,
    GKE_SPOT_LABEL,
    POOL_LABEL,
)
from ..read import (
    Findings,
    PoolDraft,
    as_int,
    as_list,
    as_map,
    read_taints,
    resource_id,
    str_map,
)
from ..results import (
    NodeTemplate,
    SharedGpus,
)
from .dra import gke_dra_devices

# GKE API `NodeConfig.diskSizeGb`: "If unspecified, the default disk size is 100GB" (the
# google.container.v1 reference, e.g. googleapis `container_v1/NodeConfig/diskSizeGb`).
GKE_DEFAULT_DISK_GB = 100


def gke_memory(accelerator: str | None) -> float | None:
    try:
        return float(gke_accelerator(accelerator).memory_gib) if accelerator else None
    except InputError:
        return None


def gke_shape(
    machine_type: Any,
    disk_gb: Any,
    physical_gpus: int,
    max_pods: Any = None,
    node_config: Mapping[str, Any] | None = None,
) -> tuple[NodeShape | None, str | None]:
    """A GKE node's shape, or None and why (a machine type the catalog lacks, a bad size). From
    `node_config`: the OS image (`imageType`: COS or Ubuntu, `gke_storage.image_of`) and
    ephemeral storage on local SSDs (`ephemeralStorageLocalSsdConfig.localSsdCount`, or the beta
    `ephemeralStorageConfig.localSsdCount`): cluster-autoscaler-1.36.1 `cloudprovider/gce/
    templates.go` BuildNodeFromTemplate puts ephemeral storage there instead of the boot disk."""
    if not isinstance(machine_type, str) or not machine_type:
        return None, "its machine type is not given (GKE's default is not assumed)"
    nc = as_map(node_config)
    image = image_of(nc.get("imageType"))
    if image is None:
        return None, f"image type {nc.get('imageType')}: only COS and Ubuntu are modelled"
    key = next(
        (
            k
            for k in ("ephemeralStorageLocalSsdConfig", "ephemeralStorageConfig")
            if nc.get(k) is not None
        ),
        None,
    )
    ssds = as_int(as_map(nc.get(key)).get("localSsdCount")) if key else 0
    if key and not ssds:
        # 0 means "the machine type's own count" on machine types that come with local SSDs
        # (the GKE API's EphemeralStorageLocalSsdConfig): that count is not in the catalog.
        return None, "its local SSD count is the machine type's own (not in the catalog)"
    disk = as_int(disk_gb)
    pods = as_int(max_pods) or GKE_DEFAULT_MAX_PODS
    machine = gce_machine_or_none(machine_type)
    if machine is not None and machine.shared_core:
        return None, (
            f"{machine_type} is a shared-core machine type (GKE's CPU reservation for it is not "
            "known here)"
        )
    try:
        shape = gke_node_shape_or_none(
            machine_type,
            disk_gb=GKE_DEFAULT_DISK_GB if disk is None else disk,
            gpus=physical_gpus,
            max_pods=pods,
            image=image,
            local_ssds=ssds or 0,
        )
    except InputError as e:
        return None, f"{machine_type}: {e.problem}"
    if shape is None:
        return None, f"machine type {machine_type} is not in the node-shape catalog"
    return shape, None


def gke_sharing(nc: Mapping[str, Any], physical_gpus: int) -> SharedGpus | None:
    """GKE time-sharing or MPS on the node pool's GPUs. GKE's device plugin refuses a container
    asking more than one shared GPU, except MPS on a node with one physical GPU
    (GoogleCloudPlatform/container-engine-accelerators `pkg/gpu/nvidia/gpusharing/
    gpusharing.go` `ValidateRequest`; GKE docs "About GPU sharing strategies in GKE")."""
    for acc in as_list(nc.get("guestAccelerators")):
        sharing = as_map(as_map(acc).get("gpuSharingConfig"))
        if as_int(sharing.get("maxSharedClientsPerGpu")):
            strategy = GKE_SHARING_STRATEGIES.get(
                str(sharing.get("gpuSharingStrategy") or ""), "time-sharing"
            )
            return SharedGpus(
                strategy, "GKE", strategy != "mps" or physical_gpus > 1, physical_gpus
            )
    return None


def _mig_instances(nc: Mapping[str, Any], accelerator: str | None) -> int:
    """GPU instances per GPU (MIG); GKE's device plugin counts each as a physical device."""
    for acc in as_list(nc.get("guestAccelerators")):
        partition = as_map(acc).get("gpuPartitionSize")
        if isinstance(partition, str) and partition:
            return MIG_PROFILES.get(accelerator or "", {}).get(partition, 1)
    return 1


def _gke_shared(
    nc: Mapping[str, Any], accelerator: str | None, gpus: int, labels: dict[str, str]
) -> int:
    """How many `nvidia.com/gpu` a GKE node with `gpus` GPUs exposes, its time-sharing / MPS
    clients (`gpuSharingConfig.maxSharedClientsPerGpu`) and MIG instances (`gpuPartitionSize`, from
    the catalog's MIG profiles) counted as the component counts them; adds the labels GKE puts on
    such nodes."""
    for acc in as_list(nc.get("guestAccelerators")):
        acc = as_map(acc)
        sharing = as_map(acc.get("gpuSharingConfig"))
        partition = acc.get("gpuPartitionSize")
        partition = partition if isinstance(partition, str) and partition else None
        gpus, added = gke_shared_gpus(
            gpus,
            str(sharing.get("gpuSharingStrategy") or ""),
            as_int(sharing.get("maxSharedClientsPerGpu")),
            partition,
            MIG_PROFILES.get(accelerator or "", {}).get(partition or "", 1),
        )
        labels.update(added)
    return gpus


def zones(inputs: Mapping[str, Any]) -> int | None:
    """How many zones a node pool's per-zone counts are for: its `nodeLocations`, else one for a
    zonal `location` (or none given: the provider's default, taken as one zone); None for a
    regional one, whose zones are the cluster's (not in the pool)."""
    listed = as_list(inputs.get("nodeLocations"))
    if listed:
        return len(listed)
    location = str(inputs.get("location") or "")
    return None if location and gce_region(location) == location else 1


def node_counts(inputs: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """(min, max) nodes of a node pool. `totalMinNodeCount` / `totalMaxNodeCount` are the pool's;
    `minNodeCount` / `maxNodeCount`, `nodeCount` and `initialNodeCount` are per zone
    (terraform-provider-google / pulumi-gcp `container.NodePool`: "per zone", "per instance
    group"), so they count once per zone (None where the zones are not known, unless 0)."""
    auto = as_map(inputs.get("autoscaling"))
    total_lo, total_hi = (
        as_int(auto.get("totalMinNodeCount")),
        as_int(auto.get("totalMaxNodeCount")),
    )
    if auto and (total_lo is not None or total_hi is not None):
        return (0 if total_lo is None else total_lo), total_hi
    if auto:
        lo, hi = as_int(auto.get("minNodeCount")), as_int(auto.get("maxNodeCount"))
        lo = 0 if lo is None and hi is not None else lo
    else:
        lo = as_int(inputs.get("nodeCount"))
        if lo is None:
            lo = as_int(inputs.get("initialNodeCount"))
        hi = lo
    n = zones(inputs)

    def each(count: int | None) -> int | None:
        if count is None or count == 0:
            return count
        return None if n is None else count * n

    return each(lo), each(hi)


GKE_INSTALLS_DRIVER = ("DEFAULT", "LATEST")
"""`gpuDriverInstallationConfig.gpuDriverVersion` values with which GKE installs the driver; with
`INSTALLATION_DISABLED` ("needs manual installation") or none (`GPU_DRIVER_VERSION_UNSPECIFIED`:
"not to install any GPU driver") a DaemonSet must (GKE API v1 `GPUDriverInstallationConfig`)."""


def gpu_driver(nc: Mapping[str, Any]) -> str:
    """Who installs a GKE GPU node's NVIDIA driver (`NodeTemplate.gpu_driver`)."""
    for acc in as_list(nc.get("guestAccelerators")):
        config = as_map(as_map(acc).get("gpuDriverInstallationConfig"))
        if str(config.get("gpuDriverVersion") or "") in GKE_INSTALLS_DRIVER:
            return "gke"
    return image_of(nc.get("imageType")) or "other"


def gke_pool(entry: Mapping[str, Any], out: Findings) -> PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    rid = resource_id(typ, name)
    nc = as_map(inputs.get("nodeConfig"))
    labels = str_map(nc.get("labels"))
    taints = read_taints(nc.get("taints"), rid, out)
    accelerator: str | None = None
    gpus = 0
    for acc in as_list(nc.get("guestAccelerators")):
        acc = as_map(acc)
        if acc.get("type"):
            accelerator = str(acc["type"])
        gpus += as_int(acc.get("count")) or 0
    if gpus == 0 and isinstance(nc.get("machineType"), str):
        attached = gke_gpus_for_machine(str(nc["machineType"]))
        if attached:
            accelerator, gpus = attached
    gpu = gpus > 0
    physical = gpus
    shape, note = gke_shape(
        nc.get("machineType"),
        nc.get("diskSizeGb"),
        physical,
        as_map(inputs.get("maxPodsConstraint")).get("maxPodsPerNode"),
        nc,
    )
    effective = {**kubelet_labels(gce_arch(str(nc.get("machineType") or "e2-medium"))), **labels}
    if gpu:
        if accelerator:
            effective[GKE_ACCELERATOR_LABEL] = accelerator
        effective[GKE_ACCELERATOR_COUNT_LABEL] = str(gpus)
        if GKE_GPU_TAINT not in taints:
            taints.append(GKE_GPU_TAINT)
        gpus = _gke_shared(nc, accelerator, gpus, effective)
    if isinstance(inputs.get("name"), str) and inputs["name"]:
        effective[GKE_NODEPOOL_LABEL] = str(inputs["name"])
    spot = nc.get("spot") is True
    if spot:
        effective[GKE_SPOT_LABEL] = "true"
    if nc.get("preemptible") is True:
        effective[GKE_PREEMPTIBLE_LABEL] = "true"
    lo, hi = node_counts(inputs)
    return PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="gke",
        resource=rid,
        node=NodeTemplate(
            None,
            effective,
            tuple(taints),
            shape=shape,
            dra_devices=gke_dra_devices(accelerator, physical, effective) if gpu else None,
            gpu_driver=gpu_driver(nc) if gpu else None,
        ),
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        shared=gke_sharing(nc, physical * _mig_instances(nc, accelerator)) if gpu else None,
        shape_note=note,
        min_nodes=lo,
        max_nodes=hi,
        spot=spot,
        builtin_device_plugin=effective.get(GKE_NO_DEFAULT_PLUGIN_LABEL) != "true",
        gpu_memory_gib=gke_memory(accelerator) if gpu else None,
        daemon_kind="gke-gpu"
        if gpu and effective.get(GKE_NO_DEFAULT_PLUGIN_LABEL) != "true"
        else "gke",
    )
