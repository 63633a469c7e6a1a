"""A GKE node pool that only the intended pods can use: `GkeGpuNodePool` -> `gcp.container.NodePool`.

GPU pools (an `accelerator` is given): the accelerator type and count are checked against the
catalog; GKE installs the driver; GKE taints the nodes `nvidia.com/gpu=present:NoSchedule` and
labels them `cloud.google.com/gke-accelerator` / `cloud.google.com/gke-accelerator-count` by
itself. The pool models all of that in its effective labels and taints, and ALWAYS declares that
taint in `node_config.taints` beside any custom taint: a pool that does not declare it shows a
diff on every later `pulumi up` that recreates the pool (terraform-provider-google #7928).
CPU pools (no accelerator): no GPU taint unless asked, a machine type without GPUs.

Choices:
- Driver: `gpu_driver_version` defaults to `DEFAULT`, the driver GKE qualifies for the node's
  GKE version (upgraded with the node). `LATEST` follows the newest driver GKE offers (for new
  CUDA releases); `INSTALLATION_DISABLED` leaves it to a driver DaemonSet or the GPU operator.
- Autoscaling uses TOTAL limits (`total_min_node_count` / `total_max_node_count`): `max_nodes`
  is the pool's total, as on EKS and as a budget reads it. Per-zone limits would multiply the
  GPU node count by the number of zones of a regional pool. Location policy `ANY` for GPU and
  spot pools (GPUs and spot capacity are scarce: take whichever zone has them), `BALANCED` else.
- Cloud name: Pulumi's auto-name, `<resource name>-<7 hex>`, new on every replacement (no
  `name`, no `name_prefix`: see `components.pools.pool`), so replacement never collides.
- Secure defaults: workload metadata `GKE_METADATA` (pods reach Google APIs only via
  Workload Identity, never the node's credentials), shielded nodes with secure boot and integrity
  monitoring, auto repair and auto upgrade, and the dedicated node service account when given
  (with the `cloud-platform` scope: access is then governed by the account's IAM roles).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.objects import sdk_options
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import (
    GKE_MAX_NODES,
    gke_accelerator,
    gke_gpus_for_machine,
    mig_instances,
    validate_gke_accelerator,
    validate_gke_cpu_machine_type,
    validate_shared_clients,
)
from ..model.nodes.labels import (
    GKE_ACCELERATOR_COUNT_LABEL,
    GKE_ACCELERATOR_LABEL,
    GKE_MAX_CLIENTS_LABEL,
    GKE_PARTITION_LABEL,
    GKE_SHARING_LABEL,
    GKE_SPOT_LABEL,
)
from ..model.nodes.shapes import MAX_DISK
from ..model.nodes.sharing import GKE_SHARING_STRATEGIES, gke_shared_gpus
from ..model.scheduling import Taint, validate_dns1035_label
from .component import PoolComponent
from .pool import (
    GPU_TAINT,
    PoolFacts,
    PoolKind,
    build_facts,
    declared_labels,
    gke_node_pool_resource_name,
    normalize_taints,
    pool_name_of,
)

GPU_DRIVER_VERSIONS = ("DEFAULT", "LATEST", "INSTALLATION_DISABLED")
LOCATION_POLICIES = ("ANY", "BALANCED")
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
GKE_ADDED_LABELS = (
    GKE_ACCELERATOR_LABEL,
    GKE_ACCELERATOR_COUNT_LABEL,
    GKE_SPOT_LABEL,
    GKE_SHARING_LABEL,
    GKE_MAX_CLIENTS_LABEL,
    GKE_PARTITION_LABEL,
)


@dataclass
class GkeGpuNodePoolArgs:
    """Inputs of a `GkeGpuNodePool`; every default is here."""

    cluster: pulumi.Input[str] = field(metadata=stack(source="cluster.name"))
    """The GKE cluster (name, or `projects/P/locations/L/clusters/C`)."""
    machine_type: str = field(metadata=stack(required=True))
    """Compute Engine machine type, e.g. `g2-standard-8`, `a2-ultragpu-2g`, `n1-standard-8`: one
    that takes the accelerator (G2, A2, A3 and G4 come with theirs; N1 takes an attached T4, V100,
    P100 or P4), or for a CPU pool one without GPUs."""
    location: Optional[pulumi.Input[str]] = field(
        default=None, metadata=stack(source="cluster.location")
    )
    """The cluster's location (region or zone); default: the provider's."""
    project: Optional[pulumi.Input[str]] = field(
        default=None, metadata=stack(source="cluster.project")
    )
    """The project; default: the provider's."""
    accelerator: Optional[str] = None
    """GKE accelerator type, e.g. `nvidia-l4` (checked against the catalog); default: the one the
    machine type comes with when `gpu_count` is given, else none (a CPU pool)."""
    gpu_count: Optional[int] = field(default=None, metadata=stack("gpusPerNode", ge=1))
    """GPUs per node, a count the machine type takes; default: the count built into the machine
    type (required on N1)."""
    gpu_driver_version: Optional[str] = field(
        default="DEFAULT", metadata=stack(choices=GPU_DRIVER_VERSIONS)
    )
    """GKE-managed driver installation: `DEFAULT` (the driver GKE qualifies for the node
    version), `LATEST`, or `INSTALLATION_DISABLED` (a driver DaemonSet or the GPU operator
    installs it)."""
    gpu_sharing_strategy: Optional[str] = field(
        default=None, metadata=stack("gpuSharing.strategy", choices=tuple(GKE_SHARING_STRATEGIES))
    )
    """Shared GPUs (the node pool's `guest_accelerator.gpu_sharing_config`): `TIME_SHARING` or
    `MPS`, with `max_shared_clients_per_gpu`; GPU pools only. GKE refuses a container asking more than one shared GPU
    (MPS: on nodes with several GPUs), and MPS pods need `hostIPC: true`, which the stack's
    workloads on the pool get (placement check GI023, GI025)."""
    max_shared_clients_per_gpu: Optional[int] = field(
        default=None, metadata=stack("gpuSharing.maxClientsPerGpu", ge=2, le=48)
    )
    """Containers sharing one GPU (2..48; needs `gpu_sharing_strategy`); the node exposes GPUs x
    this `nvidia.com/gpu`, which is what workloads' GPU requests are checked against."""
    gpu_partition_size: Optional[str] = None
    """MIG profile each GPU is partitioned into (the node pool's
    `guest_accelerator.gpu_partition_size`, e.g. `1g.10gb`): one the accelerator offers (A100
    40GB / 80GB, H100, H200, RTX PRO 6000: the catalog's table, from NVIDIA's default MIG
    layouts); the node exposes GPUs x instances per GPU `nvidia.com/gpu`."""
    dra: Optional[bool] = False
    """GPUs by claim (DRA) instead of `nvidia.com/gpu`: GKE's driver install off
    (`INSTALLATION_DISABLED`), its device plugin off (label
    `gke-no-default-nvidia-gpu-device-plugin=true`) and the label NVIDIA's DRA driver runs its
    kubelet plugin on (`nvidia.com/gpu.present=true`), as GKE's "Prepare GKE infrastructure for
    DRA workloads" asks; no GPU sharing or MIG (GKE supports neither with DRA). Workloads claim
    the GPUs (`gpuClaim`; `gpus` is refused here); `addons.draDriver` installs NVIDIA's DRA
    driver, `addons.gpuDriverInstaller` NVIDIA's GPU driver (GKE's installer DaemonSet)."""
    min_nodes: Optional[int] = field(default=0, metadata=stack(ge=0))
    """Fewest nodes in the whole pool (0: scale to zero); at most `max_nodes`."""
    max_nodes: Optional[int] = field(default=1, metadata=stack(required=True, le=GKE_MAX_NODES))
    """Most nodes in the whole pool (total over its zones), at least 1."""
    spot: Optional[bool] = False
    """Spot VMs (GKE labels them `cloud.google.com/gke-spot=true`)."""
    node_locations: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="gcp-zones")
    )
    """Zones for the nodes (zone names such as `us-central1-a`, each once); default: the
    cluster's."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """Extra node labels (e.g. `{"pool": "infer-srv"}`; values are strings: quote numbers and
    booleans in YAML). Not `gpu-inference.dev/pool`, nor a key under `kubernetes.io`, `k8s.io`,
    `cloud.google.com`, `eks.amazonaws.com` or `k8s.amazonaws.com` unless with the value the pool
    sets anyway."""
    taints: Optional[Sequence[Taint]] = None
    """Node taints `{key, value, effect}`: value default `""`, effect `NoSchedule` (default),
    `PreferNoSchedule` or `NoExecute` (Kubernetes' casing, not the cloud's `NO_SCHEDULE`), one per
    key and effect. Unset: none beyond GKE's own GPU taint `nvidia.com/gpu=present:NoSchedule`,
    which is always declared (another value or effect for its key is refused)."""
    select_labels: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="label-keys")
    )
    """Label keys the placement selects (keys the nodes carry, each once); default: the pool
    label `gpu-inference.dev/pool`, unique to the pool and known before it exists."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    disk_size_gb: Optional[int] = field(default=100, metadata=stack(ge=10, le=MAX_DISK))
    """Boot disk size in GB, at least 10 (model images are large)."""
    disk_type: Optional[str] = None
    """Boot disk type (e.g. `pd-balanced`, `pd-ssd`); default: GKE's."""
    image_streaming: Optional[bool] = False
    """GKE image streaming (needs the Container File System API enabled in the project)."""
    service_account: Optional[pulumi.Input[str]] = field(
        default=None,
        metadata=stack(source="cluster.nodeServiceAccount", syntax="gcp-service-account"),
    )
    """A dedicated node service account email (recommended over the Compute default account)."""
    location_policy: Optional[str] = field(default=None, metadata=stack(choices=LOCATION_POLICIES))
    """Autoscaler location policy `ANY` | `BALANCED`; default `ANY` for GPU and spot pools
    (scarce capacity: take whichever zone has it), `BALANCED` else."""
    gke_metadata: Optional[bool] = field(default=True, metadata=stack(source="cluster.gkeMetadata"))
    """Workload metadata `GKE_METADATA` (pods reach Google APIs only through Workload
    Identity). False only on a cluster without Workload Identity, where such a pool fails to
    create; the nodes then expose the node's own metadata."""
    secure_boot: Optional[bool] = True
    """Shielded nodes with secure boot (turn off only for unsigned kernel modules)."""
    pool_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool`, the "
            "nodes' `gpu-inference.dev/pool` label and the node pool's cloud name prefix; a "
            "DNS-1035 label (starting with a letter) of at most 40 characters.",
        ),
    )
    """The pool's name (its `gpu-inference.dev/pool` label and cloud name prefix); default: the
    component's name."""


@dataclass(frozen=True)
class GkePoolPlan:
    """Everything decided before deployment: the facts and the NodePool's inputs."""

    facts: PoolFacts
    node_pool: dict[str, Any]
    """The NodePool's inputs, camelCase."""


def shared_gpus(
    args: GkeGpuNodePoolArgs, accelerator: str, gpus: int, labels: dict[str, str]
) -> int:
    """The `nvidia.com/gpu` a node exposes when its GPUs are shared (time-sharing / MPS clients)
    or partitioned (MIG instances), adding the labels GKE puts on such nodes; `gpus` otherwise."""
    strategy, clients = args.gpu_sharing_strategy, args.max_shared_clients_per_gpu
    if strategy is None and clients is not None:
        raise InputError(
            "max_shared_clients_per_gpu is given without a gpu_sharing_strategy",
            "gpu_sharing_strategy TIME_SHARING or MPS with it, or neither",
            "args.max_shared_clients_per_gpu",
        )
    if strategy is not None:
        try:
            clients = validate_shared_clients(clients)
        except InputError as e:
            raise e.at("args.max_shared_clients_per_gpu") from None
    mig = 1
    if args.gpu_partition_size is not None:
        try:
            mig = mig_instances(accelerator, args.gpu_partition_size)
        except InputError as e:
            raise e.at("args.gpu_partition_size") from None
    gpus, added = gke_shared_gpus(gpus, strategy, clients, args.gpu_partition_size, mig)
    labels.update(added)
    return gpus


GKE_DRA_NODE_LABELS = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "nvidia.com/gpu.present": "true",
}
"""GKE's "Prepare GKE infrastructure for DRA workloads" (how-to/set-up-dra): GKE's device plugin
off; and the label NVIDIA's DRA driver chart runs its kubelet plugin on (`kubeletPlugin.affinity`,
kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 values.yaml)."""


def gke_dra_labels(args: GkeGpuNodePoolArgs) -> dict[str, str]:
    """The node labels of a DRA pool; InputError for what GKE does not support with DRA."""
    for key in ("gpu_sharing_strategy", "gpu_partition_size"):
        if getattr(args, key) is not None:
            raise InputError(
                f"{key} is given on a DRA pool: GKE supports no GPU sharing or MIG with DRA",
                "leave it unset, or dra unset",
                f"args.{key}",
            )
    if args.gpu_driver_version not in (None, "DEFAULT", "INSTALLATION_DISABLED"):
        raise InputError(
            f"gpu_driver_version {show(args.gpu_driver_version)} is given on a DRA pool: GKE's "
            "automatic driver installation is not supported with DRA",
            "INSTALLATION_DISABLED (what dra sets), or leave it unset",
            "args.gpu_driver_version",
        )
    return dict(GKE_DRA_NODE_LABELS)


def validate_gke_pool_args(name: str, args: GkeGpuNodePoolArgs) -> PoolFacts:
    """Check every input (no Pulumi) and return the pool's facts. What each field declares
    (`check_declared`) comes first; the rest are rules across fields and the catalog's facts."""
    check_declared(args)
    pool_name, name_path = pool_name_of(name, args.pool_name)
    try:
        validate_dns1035_label(pool_name, max_length=40)
    except InputError as e:
        raise e.at(name_path) from None
    accelerator = args.accelerator
    attached = gke_gpus_for_machine(str(args.machine_type))
    if accelerator is None and args.gpu_count is not None and attached:
        accelerator = attached[0]  # the GPUs come with the machine type (G2, A2, A3, G4)
    if accelerator is not None:
        gpus, gpu_model, cloud_labels, forced = _gpu_pool(args, accelerator, attached)
    else:
        _check_cpu_pool(args)
        gpus, gpu_model, cloud_labels, forced = 0, None, {}, []
    spot = bool(args.spot)
    if spot:
        cloud_labels[GKE_SPOT_LABEL] = "true"
    return build_facts(
        pool_name,
        cloud="gke",
        user_labels=args.labels,
        cloud_labels=cloud_labels,
        taints=args.taints if args.taints is not None else [],
        forced_taints=forced,
        gpus_per_node=gpus,
        gpu_model=gpu_model,
        min_nodes=args.min_nodes if args.min_nodes is not None else 0,
        max_nodes=args.max_nodes if args.max_nodes is not None else 1,
        spot=spot,
        select_labels=args.select_labels,
        scheduling_style=args.scheduling_style,
        name_path=name_path,
        forced_by="GKE",
    )


def _gpu_pool(
    args: GkeGpuNodePoolArgs, accelerator: str, attached: Optional[tuple[str, int]]
) -> tuple[int, Optional[str], dict[str, str], list[Taint]]:
    """A GPU pool's (GPUs per node counting sharing, GPU model, GKE's labels, GKE's taints);
    `attached`: the GPUs that come with the machine type, if any."""
    try:
        acc = gke_accelerator(accelerator)
    except InputError as e:
        raise e.at("args.accelerator") from None
    # The key whose values the error lists: the GPU counts this machine type takes, the
    # accelerator a machine type with built-in GPUs has, else the machine types that take it.
    if acc.counts_for(str(args.machine_type)):
        count_path = "args.gpu_count"
    elif attached:
        count_path = "args.accelerator"
    else:
        count_path = "args.machine_type"
    try:
        gpus = validate_gke_accelerator(accelerator, args.machine_type, args.gpu_count)
    except InputError as e:
        raise e.at(count_path) from None
    gpu_model = acc.gpu_model
    cloud_labels = {GKE_ACCELERATOR_LABEL: acc.name, GKE_ACCELERATOR_COUNT_LABEL: str(gpus)}
    forced = [GPU_TAINT]
    for i, taint in enumerate(normalize_taints(args.taints)):
        if taint.key == GPU_TAINT.key and taint != GPU_TAINT:
            what = "value" if taint.value != GPU_TAINT.value else "effect"
            raise InputError(
                f"taint {taint} uses the key GKE taints its GPU nodes with itself "
                f"({GPU_TAINT}); another {what} would contradict it",
                f"{GPU_TAINT} (or leave it out: it is declared for you), or a taint with "
                "another key",
                f"args.taints[{i}].{what}",
            )
    if args.dra:
        cloud_labels.update(gke_dra_labels(args))
    gpus = shared_gpus(args, acc.name, gpus, cloud_labels)
    return gpus, gpu_model, cloud_labels, forced


def _check_cpu_pool(args: GkeGpuNodePoolArgs) -> None:
    """A pool without an accelerator: a CPU machine type, no GPU settings."""
    try:
        validate_gke_cpu_machine_type(args.machine_type)
    except InputError as e:
        raise e.at("args.machine_type") from None
    if args.gpu_count is not None:
        raise InputError(
            f"gpu_count {show(args.gpu_count)} is given without an accelerator",
            "an accelerator with gpu_count, or neither (a CPU pool)",
            "args.gpu_count",
        )
    if args.dra:
        raise InputError(
            "dra is set on a CPU pool (no accelerator)",
            "an accelerator whose GPUs pods claim, or leave dra unset",
            "args.dra",
        )
    for key in ("gpu_sharing_strategy", "max_shared_clients_per_gpu", "gpu_partition_size"):
        if getattr(args, key) is not None:
            raise InputError(
                f"{key} is given on a CPU pool (no accelerator)",
                "an accelerator to share or partition, or leave it out",
                f"args.{key}",
            )


def gke_node_pool_inputs(facts: PoolFacts, args: GkeGpuNodePoolArgs) -> dict[str, Any]:
    """The `gcp.container.NodePool`'s inputs, as the engine gets them (camelCase)."""
    node_config: dict[str, Any] = {
        "machineType": args.machine_type,
        "labels": declared_labels(facts, GKE_ADDED_LABELS),
        "taints": [t.to_cloud() for t in facts.taints],
        "spot": facts.spot,
        "shieldedInstanceConfig": {
            "enableSecureBoot": bool(args.secure_boot),
            "enableIntegrityMonitoring": True,
        },
    }
    if args.gke_metadata is not False:
        node_config["workloadMetadataConfig"] = {"mode": "GKE_METADATA"}
    if facts.is_gpu:
        node_config["guestAccelerators"] = [
            {
                "type": args.accelerator,
                "count": int(facts.labels[GKE_ACCELERATOR_COUNT_LABEL]),
                "gpuDriverInstallationConfig": {
                    "gpuDriverVersion": "INSTALLATION_DISABLED"
                    if args.dra
                    else args.gpu_driver_version
                },
            }
        ]
        if args.gpu_sharing_strategy is not None:
            node_config["guestAccelerators"][0]["gpuSharingConfig"] = {
                "gpuSharingStrategy": args.gpu_sharing_strategy,
                "maxSharedClientsPerGpu": args.max_shared_clients_per_gpu,
            }
        if args.gpu_partition_size is not None:
            node_config["guestAccelerators"][0]["gpuPartitionSize"] = args.gpu_partition_size
    if args.disk_size_gb is not None:
        node_config["diskSizeGb"] = args.disk_size_gb
    if args.disk_type is not None:
        node_config["diskType"] = args.disk_type
    if args.image_streaming:
        node_config["gcfsConfig"] = {"enabled": True}
    if args.service_account is not None:
        node_config["serviceAccount"] = args.service_account
        node_config["oauthScopes"] = [CLOUD_PLATFORM_SCOPE]
    policy = args.location_policy or ("ANY" if facts.is_gpu or facts.spot else "BALANCED")
    inputs: dict[str, Any] = {
        "cluster": args.cluster,
        "autoscaling": {
            "totalMinNodeCount": facts.min_nodes,
            "totalMaxNodeCount": facts.max_nodes,
            "locationPolicy": policy,
        },
        "management": {"autoRepair": True, "autoUpgrade": True},
        "nodeConfig": node_config,
    }
    if args.location is not None:
        inputs["location"] = args.location
    if args.project is not None:
        inputs["project"] = args.project
    if args.node_locations is not None:
        inputs["nodeLocations"] = list(args.node_locations)
    return inputs


def plan_gke_pool(name: str, args: GkeGpuNodePoolArgs) -> GkePoolPlan:
    facts = validate_gke_pool_args(name, args)
    return GkePoolPlan(facts, gke_node_pool_inputs(facts, args))


class NodePool(pulumi.CustomResource):
    """A `gcp.container.NodePool`, registered without importing `pulumi_gcp.container`.

    That module loads the input and output types of every GKE, Attached, AWS and Azure cluster
    resource, 0.2-0.3 s of each preview and `up` of a GKE stack, for one resource type whose
    inputs `gke_node_pool_inputs` writes out. It is registered as the SDK class registers it: the
    same type token and URN, the same camelCase inputs and the gcp plugin's version.
    tests/pools/test_gke_node_pool_sdk.py holds the request equal to the SDK class's."""

    name: pulumi.Output[str]

    def __init__(
        self, resource_name: str, inputs: Mapping[str, Any], opts: pulumi.ResourceOptions
    ) -> None:
        props = {"name": None, **inputs}
        opts = pulumi.ResourceOptions.merge(sdk_options("pulumi_gcp"), opts)
        super().__init__("gcp:container/nodePool:NodePool", resource_name, props, opts)


class GkeGpuNodePool(PoolComponent):
    """A GKE node pool (GPU or CPU) with its labels, taints and the placement that lands on it."""

    # Only Outputs are annotated at class level: Pulumi's component-provider analyzer reads these
    # as the component's schema outputs. The plain ones (facts, placement, labels, taints,
    # gpus_per_node) come from PoolComponent.
    cloud_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: GkeGpuNodePoolArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        plan = self._start("gpu-inference:index:GkeGpuNodePool", name, plan_gke_pool, args, opts)
        self.node_pool = NodePool(
            gke_node_pool_resource_name(name, plan.facts.name),
            plan.node_pool,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.cloud_name = self.node_pool.name
        self._finish(cloudName=self.node_pool.name)


KIND = PoolKind(
    name="gke",
    title="GKE node pool",
    provider="gke",
    args=GkeGpuNodePoolArgs,
    plan=validate_gke_pool_args,
    component=GkeGpuNodePool,
)
