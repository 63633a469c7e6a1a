"""An AKS agent pool that only the intended pods can use: `AksGpuAgentPool` ->
`azure-native:containerservice:AgentPool` (mode `User`), scaled by AKS's cluster autoscaler from
zero.

- GPU sizes from the catalog (`components.model.nodes.azure_vms`). GPU pools are tainted, unless
  told otherwise, with `sku=gpu:NoSchedule`, AKS's own convention ("Use GPUs on AKS",
  MicrosoftDocs/azure-aks-docs `articles/aks/use-nvidia-gpu.md` @fb060abe; AKS taints nothing
  itself). The key is not `nvidia.com/gpu`, so the ExtendedResourceToleration plugin would not
  add its toleration: workloads get an explicit one (their placement), and the NVIDIA device
  plugin this stack installs gets an `Exists` toleration for it (a custom GPU taint).
- `gpuProfile.driver`: `Install` (AKS installs the NVIDIA driver; the device plugin is ours) or
  `None` (the GPU Operator, or a DRA driver, brings driver and plugin: this stack's plugin stays
  off the pool). AKS's "fully managed" GPU stack (`gpuProfile.nvidia.managementMode`) is a
  preview without autoscaling ("Create an AKS-managed GPU node pool", `aks-managed-gpu-nodes.md`)
  and not in pulumi-azure-native 3.x's stable API: not used.
- What AKS puts on the nodes (AKS "Use labels", `use-labels.md`, reserved system labels):
  `kubernetes.azure.com/agentpool` and the older `agentpool` = the agent pool's name,
  `kubernetes.azure.com/mode: user`, `kubernetes.azure.com/role: agent`,
  `kubernetes.azure.com/os-sku` = the OS SKU (`Ubuntu` by default), `kubernetes.io/os: linux`,
  `kubernetes.io/arch: amd64` (every catalog size is x86-64; cluster-autoscaler-1.36.1
  `azure_template.go` `buildGenericLabels` gives its template node the same arch and os),
  `node.kubernetes.io/instance-type` = the VM size,
  `kubernetes.azure.com/accelerator: nvidia` (and the older `accelerator`) on NVIDIA sizes; a spot
  pool gets the label `kubernetes.azure.com/scalesetpriority: spot` and the taint
  `kubernetes.azure.com/scalesetpriority=spot:NoSchedule` (`spot-node-pool.md`), which pods must
  tolerate. The spot label and taint are declared too: AKS reports them in the pool's own
  `nodeLabels` / `nodeTaints`, so leaving them out shows a permanent diff
  (kubernetes-sigs/cluster-api-provider-azure#3976, XenitAB/terraform-modules#488), and a label
  update without the label drops it from the nodes (Azure/AKS#3152).
- Scale from zero: cluster-autoscaler (kubernetes/autoscaler cluster-autoscaler-1.36.1
  `cloudprovider/azure/azure_scale_set.go` `TemplateNodeInfo`, `azure_template.go`
  `buildNodeFromTemplate`) builds the node of a scale set at zero from the VM size (CPU, memory,
  `nvidia.com/gpu` from the SKU API, 110 pods, allocatable = capacity), generic labels (arch, os,
  instance type, region, zone), the predicted `agentpool` labels from the scale set's
  `aks-managed-poolName` tag, and the scale set's tags: every tag as a label, and
  `k8s.io_cluster-autoscaler_node-template_label_<key>` / `..._taint_<key>` (`<value>:<Effect>`)
  / `..._resources_<name>` tags as labels, taints and resources (`_` in a key stands for `/`,
  `~2` for `_`). The pool's own labels and taints reach that template only through such tags
  (upstream passes no agent pool spec for scale sets), and AKS puts a node pool's `tags` on its
  scale set (`use-tags.md`): every label and taint of the pool is tagged so. At most 50 tags
  (Azure's limit per resource).
- Ephemeral OS disk: AKS refuses one larger than the VM size's cache or temp storage
  (`concepts-storage.md` @074b3dae, "Ephemeral OS disk": a validation error; the API's
  `VMCacheSizeTooSmall`, XenitAB/terraform-modules#543). The catalog's GPU size pages list temp
  storage and no cache (e.g. MicrosoftDocs/azure-compute-docs `nca100v4-series.md` @1827cf35:
  64 GiB on Standard_NC24ads_A100_v4), so `os_disk_size_gb` above the temp disk is refused with
  `os_disk_type: Ephemeral` (not judged for a size whose temp disk the catalog lacks).
- `count` starts at `min_nodes` and is then ignored (`ignore_changes`): the autoscaler owns it.
- Fields AKS cannot change on an existing pool replace it (`replace_on_changes`, paths in
  pulumi-azure-native 3.29.0 `AgentPool`'s property names): `scaleSetPriority`, `spotMaxPrice`
  and `scaleSetEvictionPolicy` ("You can't change `ScaleSetPriority` or `SpotMaxPrice` after
  creation", "The `priority` and `eviction-policy` values can only be set during node pool
  creation": `spot-node-pool.md` @31e1f80a), `osDiskType` and `osDiskSizeGB` ("You can't change
  the OS disk size after cluster or node pool creation": `concepts-storage.md` @074b3dae; the
  disk type "May not be changed for this pool after creation": Azure CLI's `--node-osdisk-type`
  help, Azure/azure-cli#16775, and Azure/AKS#1370), and
  `gpuProfile.driver` (set at create: `use-nvidia-gpu.md` "Skip GPU driver installation" makes
  a new pool). Otherwise a config change is an in-place update that AKS refuses.
- Cloud name: AKS names agent pools 1-12 lowercase letters and digits, starting with a letter
  (`create-node-pools.md`), fixed (no prefix, no suffix): `agent_pool_name`, by default the pool
  name's letters and digits cut to 12. A replacement therefore deletes the old pool first
  (`delete_before_replace`); pulumi-azure-native checks that a resource does not exist before it
  creates one ("cannot create already existing resource", pulumi/pulumi-azure-native#303), so a
  name already taken in the cluster is refused, never taken over.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.sdks import cloud_sdk
from ..model.autoscalers.karpenter import ARCH_LABEL, OS_LABEL
from ..model.autoscalers.karpenter_azure import OS_SKU as OS_SKU_LABEL
from ..model.autoscalers.karpenter_azure import ROLE as ROLE_LABEL
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.aks_shapes import (
    AKS_DEFAULT_OS_DISK_GB,
    AKS_MAX_PODS_RANGE,
    AKS_OS_DISK_MAX_GB,
)
from ..model.nodes.azure_vms import AzureGpuVm, azure_vm
from ..model.nodes.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ..model.nodes.sharing import config_name
from ..model.scheduling import GPU_RESOURCE, Taint
from .component import PoolComponent
from .pool import (
    RESERVED_LABEL_DOMAINS,
    PoolFacts,
    PoolKind,
    build_facts,
    check_one_taint_per_key,
    pool_name_of,
)

AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
LEGACY_AGENTPOOL_LABEL = "agentpool"
MODE_LABEL = "kubernetes.azure.com/mode"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ACCELERATOR_LABEL = "kubernetes.azure.com/accelerator"
LEGACY_ACCELERATOR_LABEL = "accelerator"
SCALESET_PRIORITY_LABEL = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = Taint(SCALESET_PRIORITY_LABEL, "spot", "NoSchedule")
GPU_TAINT = Taint("sku", "gpu", "NoSchedule")
AKS_LABEL_DOMAINS = (*RESERVED_LABEL_DOMAINS, "kubernetes.azure.com")
"""AKS reserves the prefixes `kubernetes.azure.com/` and `kubernetes.io/` ("Use labels",
reserved prefixes)."""
GPU_DRIVERS = ("Install", "None")
EVICTION_POLICIES = ("Delete", "Deallocate")
OS_DISK_TYPES = ("Managed", "Ephemeral")
OS_SKUS = ("Ubuntu", "AzureLinux")
IGNORE_CHANGES = ["count"]
REPLACE_ON_CHANGES = [
    "scaleSetPriority",
    "scaleSetEvictionPolicy",
    "spotMaxPrice",
    "osDiskType",
    "osDiskSizeGB",
    "gpuProfile.driver",
]
"""The AgentPool properties AKS takes at create only (the module docstring names the sources)."""
CA_TAG = "k8s.io_cluster-autoscaler_node-template_"
MAX_TAGS = 50
TAG_KEY_MAX, TAG_VALUE_MAX = 512, 256
AGENT_POOL_NAME_MAX = 12


@dataclass
class AksGpuAgentPoolArgs:
    """Inputs of an `AksGpuAgentPool`; every default is here."""

    resource_group_name: str = field(metadata=stack(source="cluster.resourceGroup"))
    """The AKS cluster's resource group."""
    cluster_name: pulumi.Input[str] = field(metadata=stack(source="cluster.name"))
    """The AKS cluster (its resource name)."""
    vm_size: str = field(metadata=stack(required=True))
    """The nodes' Azure GPU VM size, from the catalog (e.g. `Standard_NC24ads_A100_v4`,
    `Standard_NC4as_T4_v3`, `Standard_NC40ads_H100_v5`): the pool's GPU model and GPUs per node
    come from it."""
    gpus_per_node: Optional[int] = field(default=None, metadata=stack("gpusPerNode", ge=1))
    """The GPUs each node must have: a check; default: the VM size's."""
    min_nodes: Optional[int] = field(default=0, metadata=stack(ge=0))
    """Fewest nodes (0: scale to zero, the cluster autoscaler's `minCount`); at most
    `max_nodes`."""
    max_nodes: Optional[int] = field(default=1, metadata=stack(required=True, le=1000))
    """Most nodes, at least 1 (`maxCount`)."""
    spot: Optional[bool] = False
    """Spot VMs (`scaleSetPriority: Spot`): AKS taints the nodes
    `kubernetes.azure.com/scalesetpriority=spot:NoSchedule` (workloads wired to the pool tolerate
    it). For spot with an on-demand fallback, declare two pools and wire workloads to both, spot
    first."""
    spot_eviction_policy: Optional[str] = field(
        default=None, metadata=stack(choices=EVICTION_POLICIES, default="`Delete` with `spot`")
    )
    """Spot only: `Delete` (evicted nodes are deleted) or `Deallocate` (stopped, still counting
    against quota)."""
    spot_max_price: Optional[float] = field(default=None, metadata=stack(syntax="aks-spot-price"))
    """Spot only: the most to pay per hour in US dollars with at most five decimals (AKS's
    limit), or -1 (default): up to the on-demand price, never evicted for price."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """Extra node labels (values are strings: quote numbers and booleans in YAML), also tagged on
    the scale set for scale-from-zero. Not `gpu-inference.dev/pool`, nor a key under
    `kubernetes.io`, `k8s.io`, `kubernetes.azure.com` (AKS reserves them), `cloud.google.com`,
    `eks.amazonaws.com` or `k8s.amazonaws.com` unless with the value the pool sets anyway."""
    taints: Optional[Sequence[Taint]] = None
    """Node taints `{key, value, effect}`: value default `""`, effect `NoSchedule` (default),
    `PreferNoSchedule` or `NoExecute`, one per key; a GPU pool needs a NoSchedule or NoExecute
    one. Unset: `sku=gpu:NoSchedule` (AKS's GPU convention). A spot pool also gets AKS's
    `kubernetes.azure.com/scalesetpriority=spot:NoSchedule`."""
    select_labels: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="label-keys")
    )
    """Label keys the placement selects; default: the pool label `gpu-inference.dev/pool`."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    gpu_driver: Optional[str] = field(default="Install", metadata=stack(choices=GPU_DRIVERS))
    """`gpuProfile.driver`: `Install` (AKS installs the NVIDIA driver; this stack's NVIDIA device
    plugin serves the pool) or `None` (the NVIDIA GPU Operator or a DRA driver installs driver
    and plugin: this stack's plugin leaves the pool alone)."""
    os_disk_size_gb: Optional[int] = field(
        default=AKS_DEFAULT_OS_DISK_GB, metadata=stack(ge=30, le=AKS_OS_DISK_MAX_GB)
    )
    """OS disk in GiB (30..2048): the nodes' ephemeral storage (model downloads land there)."""
    os_disk_type: Optional[str] = field(default=None, metadata=stack(choices=OS_DISK_TYPES))
    """`Managed` or `Ephemeral`; default AKS's (Ephemeral when the VM's cache or temp disk holds
    the OS disk, else Managed). `Ephemeral` needs `os_disk_size_gb` at most the VM size's temp
    disk (AKS refuses a larger one at create)."""
    os_sku: Optional[str] = field(default=None, metadata=stack(choices=OS_SKUS))
    """`Ubuntu` or `AzureLinux`; default AKS's (Ubuntu)."""
    max_pods: Optional[int] = field(
        default=None, metadata=stack(ge=AKS_MAX_PODS_RANGE[0], le=AKS_MAX_PODS_RANGE[1])
    )
    """Pods per node (10..250); default the cluster network plugin's (30 Azure CNI, 110 kubenet,
    250 Azure CNI Overlay), which the fit check does not know and so takes least favourably."""
    kubernetes_version: Optional[str] = field(
        default=None, metadata=stack(syntax="kubernetes-version")
    )
    """The pool's Kubernetes version (`orchestratorVersion`, `1.33` or `1.33.2`); default the
    control plane's. AKS reserves node memory by another rule before 1.29."""
    availability_zones: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="azure-zones")
    )
    """Zones of the region (`["1", "2"]`); default: none (regional)."""
    vnet_subnet_id: Optional[str] = None
    """The subnet of the nodes (an Azure resource ID); default the cluster's."""
    agent_pool_name: Optional[str] = field(
        default=None, metadata=stack(syntax="aks-agent-pool-name")
    )
    """The agent pool's name in AKS: 1-12 lowercase letters and digits, starting with a letter;
    default the pool name's letters and digits, cut to 12."""
    extended_resource_toleration: Optional[bool] = field(
        default=True, metadata=stack(source="cluster.extendedResourceToleration")
    )
    """Whether the cluster runs the ExtendedResourceToleration admission plugin: AKS always does
    (AKS FAQ, MicrosoftDocs/azure-aks-docs `articles/aks/faq.yml` @61a5e579, "What Kubernetes
    admission controllers does AKS support?": the list has it and cannot be modified), so false
    is refused."""
    time_slicing_replicas: Optional[int] = field(
        default=None, metadata=stack("gpuSharing.maxClientsPerGpu", ge=2, le=48)
    )
    """Time-sliced GPUs: each GPU is shared by this many pods (2..48) through the NVIDIA device
    plugin's config `time-sliced-<n>`, picked by the node label `nvidia.com/device-plugin.config`;
    the node (and the autoscaler's node template, by tag) then has GPUs x n `nvidia.com/gpu`.
    Not with `gpu_driver: None`."""
    pool_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool`, the "
            "nodes' `gpu-inference.dev/pool` label and (its letters and digits, cut to 12) the "
            "AKS agent pool's name; a DNS-1123 label of at most 40 characters.",
        ),
    )
    """The pool's name (its `gpu-inference.dev/pool` label); default: the component's name."""


@dataclass(frozen=True)
class AksPoolPlan:
    """Everything decided before deployment."""

    facts: PoolFacts
    agent_pool_name: str
    node_labels: dict[str, str]
    node_taints: tuple[str, ...]
    tags: dict[str, str]
    builtin_device_plugin: bool


def default_agent_pool_name(pool_name: str) -> str:
    """The pool name's letters and digits, cut to 12 (a leading digit gets a `p`)."""
    name = re.sub(r"[^a-z0-9]", "", pool_name.lower())
    if not name or not name[0].isalpha():
        name = "p" + name
    return name[:AGENT_POOL_NAME_MAX]


def tag_key(key: str) -> str:
    """A label or taint key as cluster-autoscaler's Azure tags spell it (`_` for `/`, `~2` for
    `_`: the inverse of `extractLabelsFromTags`)."""
    return key.replace("_", "~2").replace("/", "_")


def autoscaler_tags(facts: PoolFacts) -> dict[str, str]:
    """The cluster-autoscaler node-template tags for the pool's scale set."""
    tags = {f"{CA_TAG}label_{tag_key(k)}": v for k, v in facts.labels.items()}
    for t in facts.taints:
        tags[f"{CA_TAG}taint_{tag_key(t.key)}"] = f"{t.value}:{t.effect}"
    return tags


def taint_text(t: Taint) -> str:
    """`key=value:Effect`, AKS's `nodeTaints` spelling."""
    return f"{t.key}={t.value}:{t.effect}"


AKS_ADDS = (
    AGENTPOOL_LABEL,
    LEGACY_AGENTPOOL_LABEL,
    MODE_LABEL,
    ROLE_LABEL,
    OS_SKU_LABEL,
    OS_LABEL,
    ARCH_LABEL,
    INSTANCE_TYPE_LABEL,
    ACCELERATOR_LABEL,
    LEGACY_ACCELERATOR_LABEL,
)
"""The labels AKS puts on every node itself (left out of `nodeLabels`)."""


def validate_aks_pool_args(name: str, args: AksGpuAgentPoolArgs) -> AksPoolPlan:
    """Check every input (no Pulumi) and decide everything. What each field declares
    (`check_declared`) comes first; the rest are rules across fields and the cloud's facts."""
    check_declared(args)
    pool_name, name_path = pool_name_of(name, args.pool_name)
    if not args.resource_group_name:
        raise InputError(
            f"resource group {show(args.resource_group_name)} is not given",
            "the AKS cluster's resource group",
            "args.resource_group_name",
        )
    vm = _vm_of(args)
    agent_pool = args.agent_pool_name or default_agent_pool_name(pool_name)
    spot = bool(args.spot)
    _check_spot_only(args, spot)
    if args.extended_resource_toleration is False:
        raise InputError(
            "extended_resource_toleration is false, but AKS runs the ExtendedResourceToleration "
            "admission plugin and its list of admission plugins cannot be changed",
            "true, or leave it out",
            "args.extended_resource_toleration",
        )
    cloud_labels = _cloud_labels(args, vm, agent_pool, spot)
    gpus = vm.gpus * _time_slicing(args, cloud_labels)
    facts = build_facts(
        pool_name,
        cloud="aks",
        user_labels=dict(args.labels or {}) or None,
        cloud_labels=cloud_labels,
        taints=args.taints if args.taints is not None else [GPU_TAINT],
        forced_taints=[SPOT_TAINT] if spot else [],
        gpus_per_node=gpus,
        gpu_model=vm.gpu_model,
        min_nodes=args.min_nodes if args.min_nodes is not None else 0,
        max_nodes=args.max_nodes if args.max_nodes is not None else 1,
        spot=spot,
        select_labels=args.select_labels,
        scheduling_style=args.scheduling_style,
        extended_resource_toleration=bool(args.extended_resource_toleration),
        name_path=name_path,
        forced_by="AKS (spot pools)",
        reserved_domains=AKS_LABEL_DOMAINS,
    )
    check_one_taint_per_key(facts, "an AKS agent pool")
    tags = autoscaler_tags(facts)
    if args.time_slicing_replicas is not None:
        tags[f"{CA_TAG}resources_{tag_key(GPU_RESOURCE)}"] = str(gpus)
    _check_tags(tags)
    return AksPoolPlan(
        facts=facts,
        agent_pool_name=agent_pool,
        node_labels={k: v for k, v in facts.labels.items() if k not in AKS_ADDS},
        node_taints=tuple(taint_text(t) for t in facts.taints),
        tags=tags,
        builtin_device_plugin=args.gpu_driver == "None",
    )


def _vm_of(args: AksGpuAgentPoolArgs) -> AzureGpuVm:
    """The VM size from the catalog, with the GPUs and the ephemeral OS disk it allows."""
    try:
        vm = azure_vm(args.vm_size)
    except InputError as e:
        raise e.at("args.vm_size") from None
    if args.gpus_per_node is not None and args.gpus_per_node != vm.gpus:
        raise InputError(
            f"{vm.name} has {vm.gpus} GPU(s), not {show(args.gpus_per_node)}",
            f"{vm.gpus}, or leave it out (it comes from the VM size)",
            "args.gpus_per_node",
        )
    disk = args.os_disk_size_gb if args.os_disk_size_gb is not None else AKS_DEFAULT_OS_DISK_GB
    if (
        args.os_disk_type == "Ephemeral"
        and vm.temp_disk_gib is not None
        and disk > vm.temp_disk_gib
    ):
        raise InputError(
            f"an ephemeral OS disk of {disk} GiB does not fit {vm.name}'s {vm.temp_disk_gib} GiB "
            "temp disk; AKS refuses it at create",
            f"os_disk_size_gb at most {vm.temp_disk_gib}, or os_disk_type Managed",
            "args.os_disk_size_gb",
        )
    return vm


def _check_spot_only(args: AksGpuAgentPoolArgs, spot: bool) -> None:
    """The spot settings only with `spot`."""
    for key in ("spot_eviction_policy", "spot_max_price"):
        if not spot and getattr(args, key) is not None:
            raise InputError(
                f"{key} is given but the pool is not spot",
                "spot: true, or leave it out",
                f"args.{key}",
            )


def _cloud_labels(
    args: AksGpuAgentPoolArgs, vm: AzureGpuVm, agent_pool: str, spot: bool
) -> dict[str, str]:
    """The labels AKS sets on the nodes (`AKS_ADDS`, and the spot one)."""
    labels = {
        AGENTPOOL_LABEL: agent_pool,
        LEGACY_AGENTPOOL_LABEL: agent_pool,
        MODE_LABEL: "user",
        ROLE_LABEL: "agent",
        OS_SKU_LABEL: args.os_sku or "Ubuntu",
        OS_LABEL: "linux",
        ARCH_LABEL: "amd64",
        INSTANCE_TYPE_LABEL: vm.name,
        ACCELERATOR_LABEL: "nvidia",
        LEGACY_ACCELERATOR_LABEL: "nvidia",
    }
    if spot:
        labels[SCALESET_PRIORITY_LABEL] = "spot"
    return labels


def _time_slicing(args: AksGpuAgentPoolArgs, cloud_labels: dict[str, str]) -> int:
    """How many pods share each GPU (1 without time-slicing), with the device plugin's config
    label added."""
    replicas = args.time_slicing_replicas
    if replicas is None:
        return 1
    if args.gpu_driver == "None":
        raise InputError(
            "time_slicing_replicas with gpu_driver None: the device plugin that would share "
            "the GPUs is not this stack's",
            "gpu_driver Install, or configure sharing in the GPU Operator",
            "args.time_slicing_replicas",
        )
    cloud_labels[DEVICE_PLUGIN_CONFIG_LABEL] = config_name(replicas)
    return replicas


def _check_tags(tags: Mapping[str, str]) -> None:
    """Azure's limits on a resource's tags."""
    if len(tags) > MAX_TAGS:
        raise InputError(
            f"the pool needs {len(tags)} cluster-autoscaler tags, above Azure's {MAX_TAGS} per "
            "resource",
            "fewer labels and taints",
            "args.labels",
        )
    for k, v in tags.items():
        if len(k) > TAG_KEY_MAX or len(v) > TAG_VALUE_MAX:
            raise InputError(
                f"the autoscaler tag {k!r} is longer than an Azure tag may be",
                f"tag names of at most {TAG_KEY_MAX} characters (shorter label or taint keys), "
                f"values of at most {TAG_VALUE_MAX}",
                "args.labels",
            )


def agent_pool_inputs(plan: AksPoolPlan, args: AksGpuAgentPoolArgs) -> dict[str, Any]:
    """`containerservice.AgentPool` keyword arguments."""
    facts = plan.facts
    inputs: dict[str, Any] = {
        "resource_group_name": args.resource_group_name,
        "resource_name_": args.cluster_name,
        "agent_pool_name": plan.agent_pool_name,
        "mode": "User",
        "os_type": "Linux",
        "type": "VirtualMachineScaleSets",
        "vm_size": azure_vm(args.vm_size).name,
        "enable_auto_scaling": True,
        "min_count": facts.min_nodes,
        "max_count": facts.max_nodes,
        "count": facts.min_nodes,
        "node_labels": plan.node_labels,
        "node_taints": list(plan.node_taints),
        "gpu_profile": {"driver": args.gpu_driver or "Install"},
        "os_disk_size_gb": args.os_disk_size_gb
        if args.os_disk_size_gb is not None
        else AKS_DEFAULT_OS_DISK_GB,
        "tags": plan.tags,
    }
    if facts.spot:
        inputs["scale_set_priority"] = "Spot"
        inputs["scale_set_eviction_policy"] = args.spot_eviction_policy or "Delete"
        inputs["spot_max_price"] = args.spot_max_price if args.spot_max_price is not None else -1
    for key in ("os_disk_type", "os_sku", "max_pods", "vnet_subnet_id"):
        value = getattr(args, key)
        if value is not None:
            inputs[key] = value
    if args.kubernetes_version is not None:
        inputs["orchestrator_version"] = args.kubernetes_version
    if args.availability_zones is not None:
        inputs["availability_zones"] = list(args.availability_zones)
    return inputs


class AksGpuAgentPool(PoolComponent):
    """An AKS agent pool of GPU VMs with its labels, taints, autoscaler tags and the placement
    that lands on it."""

    cloud_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: AksGpuAgentPoolArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        plan = self._start(
            "gpu-inference:index:AksGpuAgentPool", name, validate_aks_pool_args, args, opts
        )
        containerservice = cloud_sdk("pulumi_azure_native.containerservice")  # AKS stacks only

        self.builtin_device_plugin: bool = plan.builtin_device_plugin
        # The SDK's keyword is `resource_name_` (its `resource_name` is the Pulumi name).
        self.agent_pool = containerservice.AgentPool(
            name,
            **agent_pool_inputs(plan, args),
            opts=pulumi.ResourceOptions(
                parent=self,
                ignore_changes=list(IGNORE_CHANGES),
                replace_on_changes=list(REPLACE_ON_CHANGES),
                delete_before_replace=True,
            ),
        )
        self.cloud_name = self.agent_pool.name
        self._finish(agentPoolName=plan.agent_pool_name)


KIND = PoolKind(
    name="aks",
    title="AKS agent pool",
    provider="aks",
    args=AksGpuAgentPoolArgs,
    plan=validate_aks_pool_args,
    component=AksGpuAgentPool,
)
