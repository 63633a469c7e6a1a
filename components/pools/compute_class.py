"""A GPU pool that GKE provisions through a custom ComputeClass: `GkeGpuComputeClass` -> a
`cloud.google.com/v1` ComputeClass custom resource (GKE installs its CRD; no node pool is created
here, GKE auto-creates node pools for it).

The class lists *priorities* in order: GKE tries the first and falls back to the next when it
cannot get that capacity (GKE docs, "About custom ComputeClasses"). Each priority here is the same
GPU shape (accelerator, count, machine type, checked against the catalog) obtained a different way:

- `reservation`: `reservations: {affinity: AnyBestEffort}` (any matching reservation), or
  `{affinity: Specific, specific: [{name}]}` when `reservations` are named;
- `on-demand`: `spot: false`;
- `flex-start`: `flexStart: {enabled: true}` (Dynamic Workload Scheduler flex-start);
- `spot`: `spot: true`.

Default order: on-demand, then spot. Reservation, on-demand, flex-start, spot is the order Google's
inference blueprint uses for GPUs (GoogleCloudPlatform/accelerated-platforms,
`platforms/gke/base/core/custom_compute_class/templates/manifests/gpu/*`).

What the nodes carry: the ComputeClass's `nodePoolConfig.nodeLabels` (the pool label and the
caller's labels) and `taints`; GKE's `cloud.google.com/compute-class=<class>` label and
`cloud.google.com/compute-class=<class>:NoSchedule` taint (Datadog's GKE Autopilot docs: the
taint "GKE Autopilot applies to these specific nodes"; Google's blueprint pods select the class
with no toleration of their own, GKE adds it); GKE's GPU labels and `nvidia.com/gpu=present:
NoSchedule` taint; `cloud.google.com/gke-spot=true` on spot nodes. The placement selects
`cloud.google.com/compute-class` (how GKE documents requesting a class) and tolerates every
taint explicitly, so it lands the same with or without GKE's injected toleration.

Fields emitted, and where each was checked (the CRD is not published; see
`tests/computeclass_schema.py`): `priorities[].{gpu.{type,count,driverVersion}, machineType,
spot, reservations, flexStart}`, `nodePoolAutoCreation.enabled`, `whenUnsatisfiable`,
`activeMigration.optimizeRulePriority`, `autoscalingPolicy.consolidationDelayMinutes`,
`nodePoolConfig.{nodeLabels,taints}`.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import gke_accelerator, validate_gke_accelerator
from ..model.nodes.labels import COMPUTE_CLASS_LABEL
from ..model.nodes.shapes import MAX_DISK
from ..model.scheduling import Taint
from .component import PoolComponent
from .gke import GKE_ACCELERATOR_COUNT_LABEL, GKE_ACCELERATOR_LABEL, GKE_SPOT_LABEL
from .pool import (
    GPU_TAINT,
    POOL_LABEL,
    PoolFacts,
    PoolKind,
    build_facts,
    declared_labels,
    normalize_taints,
    pool_name_of,
    validate_pool_name,
)

API_VERSION = "cloud.google.com/v1"
PRIORITY_KINDS = ("reservation", "on-demand", "flex-start", "spot")
DRIVER_VERSIONS = ("default", "latest")
RESERVED_PREFIXES = ("gke", "autopilot")
"""ComputeClass names may not start with these (GKE docs, "Control autoscaled node attributes
with custom ComputeClasses", Limitations)."""


@dataclass
class GkeGpuComputeClassArgs:
    """Inputs of a `GkeGpuComputeClass`; every default is here."""

    accelerator: str = field(metadata=stack(root=True))
    """GKE accelerator type, e.g. `nvidia-l4` (checked against the catalog)."""
    machine_type: str = field(metadata=stack(root=True))
    """Compute Engine machine type that takes it, e.g. `g2-standard-12` (checked against the
    catalog)."""
    gpu_count: Optional[int] = field(default=None, metadata=stack("gpusPerNode", root=True, ge=1))
    """GPUs per node; default: the count built into the machine type (required on N1)."""
    priorities: Optional[Sequence[str]] = field(
        default=None,
        metadata=stack(choices=PRIORITY_KINDS, min_items=1, default="`[on-demand, spot]`"),
    )
    """How to obtain the nodes, most preferred first, each once (the order GKE tries them in):
    `reservation` (a reservation), `on-demand` (`spot: false`), `flex-start` (Dynamic Workload
    Scheduler flex-start), `spot` (`spot: true`); default `["on-demand", "spot"]`."""
    reservations: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="gce-reservations")
    )
    """Names of specific reservations for the `reservation` priority, which must be listed
    (`affinity: Specific`); default: any matching reservation (`affinity: AnyBestEffort`)."""
    driver_version: Optional[str] = field(default=None, metadata=stack(choices=DRIVER_VERSIONS))
    """`gpu.driverVersion`: `default` or `latest`; unset leaves GKE's default."""
    consolidation_delay_minutes: Optional[int] = field(default=None, metadata=stack(ge=1, le=1440))
    """How long a node is unneeded before GKE removes it, 1..1440 minutes
    (`autoscalingPolicy.consolidationDelayMinutes`); default: GKE's."""
    active_migration: Optional[bool] = False
    """Move workloads to higher priorities when they become available
    (`activeMigration.optimizeRulePriority`; restarts pods)."""
    boot_disk_size_gb: Optional[int] = field(default=None, metadata=stack(ge=10, le=MAX_DISK))
    """Boot disk of every node, in GB (`priorities[].storage.bootDiskSize`): the model weights a
    pod downloads land on it (the kubelet's ephemeral storage); None leaves GKE's default."""
    labels: Optional[Mapping[str, str]] = field(
        default=None, metadata=stack(root=True, syntax="labels")
    )
    """Extra node labels (`nodePoolConfig.nodeLabels`; values are strings: quote numbers and
    booleans in YAML). Not `gpu-inference.dev/pool`, nor a key under `kubernetes.io`, `k8s.io`,
    `cloud.google.com`, `eks.amazonaws.com` or `k8s.amazonaws.com` unless with the value the pool
    sets anyway."""
    taints: Optional[Sequence[Taint]] = field(default=None, metadata=stack(root=True))
    """Extra node taints `{key, value, effect}` (`nodePoolConfig.taints`; Kubernetes' effect
    casing, one per key and effect); GKE's GPU taint `nvidia.com/gpu=present:NoSchedule` and class
    taint `cloud.google.com/compute-class=<name>:NoSchedule` come anyway."""
    select_labels: Optional[Sequence[str]] = field(
        default=None, metadata=stack(root=True, syntax="label-keys")
    )
    """Label keys the placement selects (keys the nodes carry, each once); default
    `cloud.google.com/compute-class`, how GKE documents requesting a class."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    class_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            root=True,
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool`, the "
            "nodes' `gpu-inference.dev/pool` label and the ComputeClass's name; a DNS-1123 label "
            "of at most 40 characters, not starting with `gke` or `autopilot` (GKE reserves "
            "them).",
        ),
    )
    """The ComputeClass's name (and the pool's); default: the component's name."""


@dataclass(frozen=True)
class ComputeClassPlan:
    facts: PoolFacts
    compute_class: dict[str, Any]
    """`{metadata, spec}` of the ComputeClass."""


def _priority_list(value: Optional[Sequence[str]]) -> list[str]:
    """The priorities (each of them declared one of `PRIORITY_KINDS`), each once."""
    if value is None:
        return ["on-demand", "spot"]
    out: list[str] = []
    for i, p in enumerate(value):
        if p in out:
            raise InputError(
                f"priority {show(p)} is listed twice",
                ", ".join(PRIORITY_KINDS) + ", each once",
                f"args.priorities[{i}]",
            )
        out.append(str(p))
    return out


def validate_compute_class_args(name: str, args: GkeGpuComputeClassArgs) -> ComputeClassPlan:
    """Check every input (no Pulumi) and decide the ComputeClass. What each field declares
    (`check_declared`) comes first; the rest are rules across fields and the catalog's facts."""
    check_declared(args)
    class_name, name_path = pool_name_of(name, args.class_name, "class_name")
    validate_pool_name(class_name, name_path)
    if class_name.startswith(RESERVED_PREFIXES):
        raise InputError(
            f"ComputeClass name {class_name!r} starts with gke or autopilot, which GKE reserves",
            "a name that does not start with gke or autopilot",
            name_path,
        )
    try:
        acc = gke_accelerator(args.accelerator)
    except InputError as e:
        raise e.at("args.accelerator") from None
    try:
        gpus = validate_gke_accelerator(args.accelerator, args.machine_type, args.gpu_count)
    except InputError as e:
        path = "args.gpu_count" if acc.counts_for(str(args.machine_type)) else "args.machine_type"
        raise e.at(path) from None
    priorities = _priority_list(args.priorities)
    reservations = args.reservations
    if reservations is not None and "reservation" not in priorities:
        raise InputError(
            "reservations are named but no priority is `reservation`",
            "add reservation to priorities, or leave reservations out",
            "args.reservations",
        )
    delay = args.consolidation_delay_minutes
    disk = args.boot_disk_size_gb
    class_taint = Taint(COMPUTE_CLASS_LABEL, class_name, "NoSchedule")
    user_taints = normalize_taints(args.taints)
    cloud_labels = {
        COMPUTE_CLASS_LABEL: class_name,
        GKE_ACCELERATOR_LABEL: acc.name,
        GKE_ACCELERATOR_COUNT_LABEL: str(gpus),
    }
    if priorities == ["spot"]:
        cloud_labels[GKE_SPOT_LABEL] = "true"
    facts = build_facts(
        class_name,
        cloud="gke",
        user_labels=args.labels,
        cloud_labels=cloud_labels,
        taints=user_taints,
        forced_taints=[GPU_TAINT, class_taint],
        gpus_per_node=gpus,
        gpu_model=acc.gpu_model,
        min_nodes=0,
        max_nodes=1,  # a ComputeClass sets no node limit; GKE's autoscaling limits apply
        spot=priorities == ["spot"],
        select_labels=args.select_labels
        if args.select_labels is not None
        else [COMPUTE_CLASS_LABEL],
        scheduling_style=args.scheduling_style,
        name_path=name_path,
        forced_by="GKE",
    )
    gpu: dict[str, Any] = {"type": acc.name, "count": gpus}
    if args.driver_version is not None:
        gpu["driverVersion"] = args.driver_version
    rules = _rules(priorities, gpu, str(args.machine_type), reservations, disk)
    node_labels = declared_labels(facts, cloud_labels)
    spec: dict[str, Any] = {
        "priorities": rules,
        "nodePoolAutoCreation": {"enabled": True},
        "whenUnsatisfiable": "DoNotScaleUp",
        "activeMigration": {"optimizeRulePriority": bool(args.active_migration)},
        "nodePoolConfig": {"nodeLabels": node_labels},
    }
    if user_taints:
        spec["nodePoolConfig"]["taints"] = [t.to_dict() for t in user_taints]
    if delay is not None:
        spec["autoscalingPolicy"] = {"consolidationDelayMinutes": delay}
    assert node_labels.get(POOL_LABEL) == class_name
    return ComputeClassPlan(facts, {"metadata": {"name": class_name}, "spec": spec})


def _rules(
    priorities: Sequence[str],
    gpu: Mapping[str, Any],
    machine_type: str,
    reservations: Optional[Sequence[str]],
    disk: Optional[int],
) -> list[dict[str, Any]]:
    """The ComputeClass's priority rules, one per priority, in order."""
    rules: list[dict[str, Any]] = []
    for p in priorities:
        rule: dict[str, Any] = {"gpu": dict(gpu), "machineType": machine_type}
        if p == "reservation":
            rule["reservations"] = (
                {"affinity": "Specific", "specific": [{"name": r} for r in reservations]}
                if reservations
                else {"affinity": "AnyBestEffort"}
            )
            rule["spot"] = False
        elif p == "on-demand":
            rule["spot"] = False
        elif p == "flex-start":
            rule["flexStart"] = {"enabled": True}
        else:
            rule["spot"] = True
        if disk is not None:
            rule["storage"] = {"bootDiskSize": disk}
        rules.append(rule)
    return rules


class GkeGpuComputeClass(PoolComponent):
    """A GKE custom ComputeClass for one GPU shape with ordered ways to get it, and the placement
    that lands on its nodes."""

    def __init__(
        self,
        name: str,
        args: GkeGpuComputeClassArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        plan = self._start(
            "gpu-inference:index:GkeGpuComputeClass", name, validate_compute_class_args, args, opts
        )
        self.compute_class = self._custom_resource(
            name, API_VERSION, "ComputeClass", plan.compute_class
        )
        self._finish()


KIND = PoolKind(
    name="compute_class",
    title="GKE ComputeClass",
    provider="gke",
    args=GkeGpuComputeClassArgs,
    plan=validate_compute_class_args,
    component=GkeGpuComputeClass,
    block="computeClass",
    kubernetes=True,
    note="GKE creates its node pools itself (no node limits; spot and reservations are "
    "priorities in its computeClass block)",
)
