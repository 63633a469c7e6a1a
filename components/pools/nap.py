"""A GPU pool that AKS node auto-provisioning (Karpenter on Azure) provisions:
`AksNapGpuNodePool` -> a `karpenter.sh/v1` NodePool and the `karpenter.azure.com/v1beta1`
AKSNodeClass it launches with, as custom resources.

Node auto-provisioning is AKS's managed Karpenter (the cluster's `nodeProvisioningProfile.mode:
Auto`; "Node auto-provisioning", MicrosoftDocs/azure-aks-docs `articles/aks/
node-auto-provisioning*.md` @fb060abe): no controller is installed here. Like the Karpenter pool
on EKS (`components.pools.karpenter`), a pool is a set of VM sizes: its requirements select them
by Karpenter on Azure's labels (`components.model.autoscalers.karpenter_azure`) and are checked
against the catalog; `gpus_per_node` is the most GPUs an admitted size has.

Choices:
- Requirements: `karpenter.azure.com/sku-gpu-manufacturer In [nvidia]` and `sku-gpu-count Gt
  <min_gpus - 1>` always; `sku-gpu-name`, `sku-series`, `sku-name` and `sku-gpu-count Lt
  <max_gpus + 1>` when given; `kubernetes.io/arch In [amd64]`; `karpenter.sh/capacity-type` from
  `capacity_types`: `spot` and / or `on-demand` (Azure's provider registers no `reserved`:
  Azure/karpenter-provider-azure v1.14.2 `pkg/apis/v1beta1/labels.go`), in Karpenter's order
  (spot before on-demand).
- Taint `sku=gpu:NoSchedule` unless others are given (AKS's GPU convention; Karpenter adds no GPU
  taint). A NAP spot node may carry AKS's spot taint `kubernetes.azure.com/scalesetpriority=
  spot:NoSchedule`: Karpenter on Azure v1.14.2 puts only the NodeClaim's taints on the nodes it
  creates (`pkg/utils/taints.go` `ExtractTaints`, `pkg/providers/instance/
  aksmachineinstancehelpers.go` `configureTaints`), but in AKS machine API mode AKS creates the
  machine with priority Spot itself (`aksmachineinstancehelpers.go`), and the provider's own
  spot e2e pods tolerate that taint (`test/suites/spot/suite_test.go`). So the placement of a
  pool that admits spot tolerates it (harmless where the taint is absent); the nodes are not
  modelled with it.
- Disruption `WhenEmpty` after `consolidate_after` (5m), `expireAfter: Never`, limits `nodes` and
  `nvidia.com/gpu`: as on EKS (see `components.pools.karpenter`).
- AKSNodeClass: `imageFamily` (Ubuntu by the CRD's default), `osDiskSizeGB` (128), `maxPods`
  when given, `gpu.mode` Driver (AKS installs the NVIDIA driver) or None (the GPU Operator or a
  DRA driver does). `node_class` names an existing AKSNodeClass instead (none emitted).
- Template labels: none under `karpenter.sh`, `karpenter.azure.com` or `kubernetes.azure.com`, nor
  `agentpool`, `storageprofile`, `storagetier`, `accelerator` (the NodePool CRD of Karpenter on
  Azure v1.14.2 refuses them: `pkg/apis/crds/karpenter.sh_nodepools.yaml`, `template.metadata.
  labels` CEL rules).
"""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import pulumi

from ..model.autoscalers.karpenter import ARCH_LABEL, CAPACITY_TYPE_LABEL, NODEPOOL_LABEL
from ..model.autoscalers.karpenter_azure import (
    CAPACITY_TYPES,
    IMAGE_FAMILIES,
    NODE_CLASS_GROUP,
    NODE_CLASS_KIND,
    PRIORITY,
    SCALESET_PRIORITY,
    SKU_GPU_COUNT,
    SKU_GPU_MANUFACTURER,
    SKU_GPU_NAME,
    SKU_NAME,
    SKU_SERIES,
    admitted,
    common_labels,
    gpu_names,
    series_names,
    sku_labels,
)
from ..model.inputs import check_declared, stack
from ..model.nodes.aks_shapes import AKS_DEFAULT_OS_DISK_GB, AKS_MAX_PODS_RANGE, AKS_OS_DISK_MAX_GB
from ..model.nodes.azure_vms import AZURE_GPU_VMS, AzureGpuVm, azure_vm
from ..model.nodes.catalog import AKS_MAX_CLUSTER_NODES
from ..model.scheduling import Taint, Toleration
from .aks import AKS_LABEL_DOMAINS, GPU_DRIVERS, GPU_TAINT, SPOT_TAINT
from .component import PoolComponent
from .nodepool import (
    NODEPOOL_API,
    GpuKeys,
    admits_none,
    capacity_order,
    check_duration,
    gpu_range,
    gpu_requirements,
    listed_in,
    looked_up,
    nodepool,
    nodepool_limits,
    offer_summary,
    refuse_restricted_labels,
    requirement,
    selectors,
)
from .pool import (
    PoolFacts,
    PoolKind,
    build_facts,
    declared_labels,
    pool_name_of,
)

NODECLASS_API = "karpenter.azure.com/v1beta1"
# Template label keys the Azure NodePool CRD refuses (v1.14.2 CEL rules), beside the domains.
RESTRICTED_LABELS = ("agentpool", "storageprofile", "storagetier", "accelerator")
RESTRICTED_DOMAINS = ("karpenter.sh", "karpenter.azure.com", "kubernetes.azure.com")
_PRIORITY = {"spot": "spot", "on-demand": "regular"}


AZURE_MAX_GPUS = max(vm.gpus for vm in AZURE_GPU_VMS.values())
"""The most GPUs an Azure VM size of the catalog has (8): a NodePool's GPUs per node are at most
this."""


@dataclass
class AksNapGpuNodePoolArgs:
    """Inputs of an `AksNapGpuNodePool`; every default is here."""

    gpu_names: Optional[Sequence[str]] = field(default=None, metadata=stack(min_items=1))
    """GPU names as Karpenter on Azure labels sizes (`karpenter.azure.com/sku-gpu-name` In): the
    accelerator in the size's name (`A10`, `A100`, `H100`, `H200`, `T4`), each once. A size whose
    name names none (Standard_ND96asr_v4) has no such label and is never selected by it."""
    series: Optional[Sequence[str]] = field(default=None, metadata=stack(min_items=1))
    """VM series as Karpenter on Azure labels them (`karpenter.azure.com/sku-series` In; the size
    name's family, subfamily, features and version: `NCads_v4` holds the NC A10 v4 and NC A100 v4
    sizes, `NCas_v3` the T4 ones), each once."""
    vm_sizes: Optional[Sequence[str]] = field(default=None, metadata=stack(min_items=1))
    """GPU VM sizes of the catalog (`karpenter.azure.com/sku-name` In), each once, e.g.
    `["Standard_NC24ads_A100_v4"]`."""
    min_gpus: Optional[int] = field(default=1, metadata=stack(ge=1, le=AZURE_MAX_GPUS))
    """Fewest GPUs per node: `karpenter.azure.com/sku-gpu-count` Gt `min_gpus - 1`."""
    max_gpus: Optional[int] = field(default=None, metadata=stack(ge=1, le=AZURE_MAX_GPUS))
    """Most GPUs per node, at least `min_gpus`: `sku-gpu-count` Lt `max_gpus + 1` (none: any)."""
    capacity_types: Optional[Sequence[str]] = field(
        default=None, metadata=stack(choices=CAPACITY_TYPES, min_items=1, default="`[on-demand]`")
    )
    """`spot` / `on-demand` (`karpenter.sh/capacity-type` In), in priority order, which must be
    Karpenter's own within one NodePool (spot before on-demand): another order is refused (use two
    pools, wired in your order)."""
    max_nodes: Optional[int] = field(
        default=1, metadata=stack(root=True, required=True, le=AKS_MAX_CLUSTER_NODES)
    )
    """Most nodes, at least 1 (NodePool `limits.nodes`)."""
    max_total_gpus: Optional[int] = field(
        default=None, metadata=stack(ge=1, le=AKS_MAX_CLUSTER_NODES * AZURE_MAX_GPUS)
    )
    """Most GPUs over the whole pool (`limits["nvidia.com/gpu"]`)."""
    labels: Optional[Mapping[str, str]] = field(
        default=None, metadata=stack(root=True, syntax="labels")
    )
    """Extra node labels (NodePool `template.metadata.labels`; values are strings). Not under
    `karpenter.sh`, `karpenter.azure.com` or `kubernetes.azure.com`, nor `agentpool`,
    `storageprofile`, `storagetier` or `accelerator` (the NodePool CRD of Karpenter on Azure
    refuses them), nor `gpu-inference.dev/pool`, nor under `kubernetes.io` or `k8s.io`."""
    taints: Optional[Sequence[Taint]] = field(default=None, metadata=stack(root=True))
    """Node taints `{key, value, effect}` (NodePool `template.spec.taints`), one per key and
    effect, at least one NoSchedule or NoExecute. Unset: `sku=gpu:NoSchedule` (AKS's GPU
    convention; Karpenter adds no GPU taint, nor a spot one)."""
    select_labels: Optional[Sequence[str]] = field(
        default=None, metadata=stack(root=True, syntax="label-keys")
    )
    """Label keys the placement selects; default: the pool label `gpu-inference.dev/pool`."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    consolidate_after: Optional[str] = "5m"
    """How long a node stays empty before Karpenter removes it (`disruption.consolidateAfter`,
    policy `WhenEmpty`): a duration such as `30s`, `5m`, `1h30m`, or `Never`."""
    expire_after: Optional[str] = "Never"
    """How long a node lives before Karpenter replaces it (`template.spec.expireAfter`); Never by
    default, so a busy GPU node is not drained every 30 days. None: Karpenter's 720h."""
    weight: Optional[int] = field(default=None, metadata=stack(ge=1, le=100))
    """NodePool weight (higher: preferred over other NodePools a pod fits)."""
    image_family: Optional[str] = field(default=None, metadata=stack(choices=IMAGE_FAMILIES))
    """AKSNodeClass `imageFamily`: `Ubuntu` (the CRD's default), `Ubuntu2204`, `Ubuntu2404` or
    `AzureLinux` (every GPU size of the catalog runs on both families)."""
    os_disk_size_gb: Optional[int] = field(
        default=AKS_DEFAULT_OS_DISK_GB, metadata=stack(root=True, ge=30, le=AKS_OS_DISK_MAX_GB)
    )
    """AKSNodeClass `osDiskSizeGB` (30..2048): the nodes' ephemeral storage."""
    max_pods: Optional[int] = field(
        default=None, metadata=stack(ge=AKS_MAX_PODS_RANGE[0], le=AKS_MAX_PODS_RANGE[1])
    )
    """AKSNodeClass `maxPods` (10..250); default the network plugin's."""
    gpu_driver: Optional[str] = field(
        default="Install", metadata=stack(root=True, choices=GPU_DRIVERS)
    )
    """`Install` (AKSNodeClass `gpu.mode: Driver`: AKS installs the NVIDIA driver, this stack's
    device plugin serves the nodes) or `None` (`gpu.mode: None`: the GPU Operator or a DRA driver
    does; this stack's plugin leaves the pool alone)."""
    node_class: Optional[str] = field(default=None, metadata=stack(syntax="pool-name"))
    """An existing AKSNodeClass (its name) to launch with: none is emitted."""
    pool_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            root=True,
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool`, the "
            "nodes' `gpu-inference.dev/pool` label and the name of the NodePool (and of its "
            "AKSNodeClass); a DNS-1123 label of at most 40 characters.",
        ),
    )
    """The pool's name (its `gpu-inference.dev/pool` label and the NodePool's name); default: the
    component's name."""


@dataclass(frozen=True)
class NapPoolPlan:
    """Everything decided before deployment."""

    facts: PoolFacts
    vm_sizes: tuple[str, ...]
    node_pool: dict[str, Any]
    node_class: Optional[dict[str, Any]]
    builtin_device_plugin: bool


GPU_KEYS = GpuKeys(SKU_GPU_MANUFACTURER, SKU_GPU_COUNT, SKU_GPU_NAME, SKU_SERIES, SKU_NAME)


def validate_nap_pool_args(name: str, args: AksNapGpuNodePoolArgs) -> NapPoolPlan:
    """Check every input (no Pulumi) and decide the NodePool and AKSNodeClass. What each field
    declares (`check_declared`) comes first; the rest are rules across fields and the catalog's
    facts."""
    check_declared(args)
    pool_name, name_path = pool_name_of(name, args.pool_name)
    capacity = capacity_order(args.capacity_types, CAPACITY_TYPES)
    shape, found = _vm_shape(args)
    requirements = [
        *shape,
        requirement(ARCH_LABEL, "In", ["amd64"]),
        requirement(CAPACITY_TYPE_LABEL, "In", capacity),
    ]
    refuse_restricted_labels(
        args.labels,
        RESTRICTED_DOMAINS,
        RESTRICTED_LABELS,
        "label {} is one the NodePool CRD of Karpenter on Azure refuses",
        "labels outside karpenter.sh, karpenter.azure.com and kubernetes.azure.com, "
        "other than agentpool, storageprofile, storagetier and accelerator",
    )
    cloud_labels = _cloud_labels(pool_name, found, args.image_family, capacity)
    models = {vm.gpu_model for vm in found}
    facts = build_facts(
        pool_name,
        cloud="aks",
        user_labels=args.labels,
        cloud_labels=cloud_labels,
        taints=args.taints if args.taints is not None else [GPU_TAINT],
        gpus_per_node=max(vm.gpus for vm in found),
        gpu_model=models.pop() if len(models) == 1 else None,
        min_nodes=0,
        max_nodes=args.max_nodes if args.max_nodes is not None else 1,
        spot=capacity == ["spot"],
        select_labels=args.select_labels,
        scheduling_style=args.scheduling_style,
        name_path=name_path,
        reserved_domains=AKS_LABEL_DOMAINS,
    )
    if "spot" in capacity:
        facts = replace(
            facts, placement=facts.placement.with_tolerations([Toleration.for_taint(SPOT_TAINT)])
        )
    check_duration(args.consolidate_after, "consolidate_after", "30s, 5m, 720h, or Never", True)
    check_duration(args.expire_after, "expire_after", "30s, 5m, 720h, or Never")
    limits = nodepool_limits(facts.max_nodes, args.max_total_gpus)
    class_ref = {
        "group": NODE_CLASS_GROUP,
        "kind": NODE_CLASS_KIND,
        "name": args.node_class if args.node_class is not None else pool_name,
    }
    return NapPoolPlan(
        facts=facts,
        vm_sizes=tuple(vm.name for vm in found),
        node_pool=nodepool(
            pool_name,
            class_ref,
            requirements,
            [t.to_dict() for t in facts.taints],
            declared_labels(facts, cloud_labels),
            consolidate_after=args.consolidate_after,
            expire_after=args.expire_after,
            limits=limits,
            weight=args.weight,
        ),
        node_class=None if args.node_class is not None else _node_class(pool_name, args),
        builtin_device_plugin=args.gpu_driver == "None",
    )


def _vm_shape(args: AksNapGpuNodePoolArgs) -> tuple[list[dict[str, Any]], list[AzureGpuVm]]:
    """The GPU requirements the args ask for, and the catalog sizes they admit (some)."""
    names = listed_in(
        args.gpu_names,
        "args.gpu_names",
        "GPU names such as A100",
        gpu_names(),
        "GPU name {} is not one a catalog size is labelled with",
    )
    series = listed_in(
        args.series,
        "args.series",
        "VM series such as NCads_v4",
        series_names(),
        "series {} is not one of the catalog's sizes",
    )
    sizes = looked_up(args.vm_sizes, "args.vm_sizes", "Azure GPU VM sizes", azure_vm)
    min_gpus, max_gpus = gpu_range(args.min_gpus, args.max_gpus)
    shape = gpu_requirements(GPU_KEYS, min_gpus, max_gpus, names, series, sizes)
    found = admitted(selectors(shape), args.image_family).vms
    if not found:
        raise admits_none(shape, "GPU VM size", "catalog size", offer_summary(_offers(), names))
    return shape, list(found)


def _cloud_labels(
    pool_name: str, found: Sequence[AzureGpuVm], image_family: Optional[str], capacity: list[str]
) -> dict[str, str]:
    """The labels the provider sets on every node of the pool."""
    labels = {NODEPOOL_LABEL: pool_name, **common_labels(found, image_family)}
    if len(capacity) == 1:
        labels[CAPACITY_TYPE_LABEL] = capacity[0]
        labels[SCALESET_PRIORITY] = _PRIORITY[capacity[0]]
        labels[PRIORITY] = _PRIORITY[capacity[0]]
    return labels


def _node_class(pool_name: str, args: AksNapGpuNodePoolArgs) -> dict[str, Any]:
    disk = args.os_disk_size_gb if args.os_disk_size_gb is not None else AKS_DEFAULT_OS_DISK_GB
    spec: dict[str, Any] = {
        "osDiskSizeGB": disk,
        "gpu": {"mode": "None" if args.gpu_driver == "None" else "Driver"},
    }
    if args.image_family is not None:
        spec["imageFamily"] = args.image_family
    if args.max_pods is not None:
        spec["maxPods"] = args.max_pods
    return {"metadata": {"name": pool_name}, "spec": spec}


def _offers() -> Iterator[tuple[str, int, str]]:
    """`(GPU name, GPUs, series)` of each catalog size Karpenter on Azure labels with a GPU name."""
    for vm in AZURE_GPU_VMS.values():
        labels = sku_labels(vm)
        if SKU_GPU_NAME in labels:
            yield labels[SKU_GPU_NAME], vm.gpus, labels[SKU_SERIES]


class AksNapGpuNodePool(PoolComponent):
    """A node auto-provisioning NodePool (with its AKSNodeClass) for GPU nodes, and the placement
    that lands on it."""

    def __init__(
        self,
        name: str,
        args: AksNapGpuNodePoolArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        plan = self._start(
            "gpu-inference:index:AksNapGpuNodePool", name, validate_nap_pool_args, args, opts
        )
        self.vm_sizes: list[str] = list(plan.vm_sizes)
        self.builtin_device_plugin: bool = plan.builtin_device_plugin
        depends: list[pulumi.Resource] = []
        if plan.node_class is not None:
            self.node_class = self._custom_resource(
                f"{name}-nodeclass", NODECLASS_API, NODE_CLASS_KIND, plan.node_class
            )
            depends.append(self.node_class)
        self.node_pool = self._custom_resource(
            name, NODEPOOL_API, "NodePool", plan.node_pool, depends
        )
        self._finish(vmSizes=list(plan.vm_sizes))


KIND = PoolKind(
    name="nap",
    title="AKS node auto-provisioning NodePool",
    provider="aks",
    args=AksNapGpuNodePoolArgs,
    plan=validate_nap_pool_args,
    component=AksNapGpuNodePool,
    block="nap",
    kubernetes=True,
    note="AKS node auto-provisioning (Karpenter on Azure) launches nodes for pending pods and "
    "removes empty ones (no minimum); its VM sizes, capacity types and node class are in its nap "
    "block",
)
