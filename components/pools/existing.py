"""GPU (or CPU) nodes that already exist (on-prem, bare metal): `ExistingGpuNodes` labels and taints
them with one `kubernetes.core.v1.NodePatch` per node (server-side apply), and hands out the
placement that lands on them.

- Every node gets the pool label `gpu-inference.dev/pool=<pool>` and the caller's labels; GPU
  nodes get `nvidia.com/gpu=present:NoSchedule` unless taints are given. The annotation
  `gpu-inference.dev/gpus-per-node` records the GPU count for the placement check.
- No autoscaling: the pool has exactly the named nodes (`min_nodes = max_nodes = len(nodes)`).
- Server-side apply: label keys another manager owns make the patch fail with a conflict;
  `patch_force` adds `pulumi.com/patchForce: "true"` to take them over.
- Taints: `spec.taints` is ONE atomic list under server-side apply (whoever applies it owns all of
  it; the kubelet owns it from node registration). So: a pool that adds no taint sends no
  `spec` at all (never `taints: []`, which would wipe or conflict); a pool that adds taints
  reads each node at deploy time (`Node.get`) and applies the node's current taints plus the
  pool's (`merged_taints`), forced (the list always has another owner), less those the pool set
  before and no longer has (the live node's `gpu-inference.dev/taints` annotation, which our
  last patch applied): a taint taken out of the config leaves the node on the next `up`, others'
  taints stay. A pool that stops tainting altogether first hands the node's own taints back
  (`hand_back_taints`, before the update), so the apply that drops the list keeps them. On
  `pulumi destroy`
  pulumi-kubernetes relinquishes the patch's fields (v4.32.0 `ssa.Relinquish`: fields left
  without a manager are removed): the labels and annotations we added go. Releasing the taint
  list would take the node's own taints too, so under a `KubeProvider` a hook first sets the
  node's taints to what it has less ours (named in the patch's `gpu-inference.dev/taints`
  annotation; `components.kube.hooks.restore_taints`), which moves the list to another field
  manager: the node is left as found. That hook runs where the program runs: `pulumi up` that
  drops the pool, `pulumi destroy --run-program` (plain `destroy` refuses to run without it).
  Under another provider there is no hook: a tainting patch is then kept on destroy
  (`retain_on_delete`) and the README says how to remove ours.
- `extended_resource_toleration`: whether the cluster runs the ExtendedResourceToleration
  admission plugin. Self-managed and on-prem clusters often do not (it is off upstream), so the
  default is False and workloads must carry the GPU toleration explicitly (they always do here).
- `present_labels`: labels the nodes already carry and keep (e.g. from node-feature-discovery,
  `nvidia.com/gpu.product`); they are not patched but count as the pool's labels, so the placement
  may select them.
- `time_slicing_replicas`: the NVIDIA device plugin time-slices each GPU into this many
  `nvidia.com/gpu` (`components.model.nodes.sharing`): the patch adds the node label
  `nvidia.com/device-plugin.config=time-sliced-<n>`, which picks that config from the plugin's
  chart `config.map` (the platform puts it there; the plugin skips a label naming a config it
  lacks, so the label alone does nothing). The pool's GPUs per node become GPUs x replicas; the
  GPU annotation keeps the physical count (the check multiplies by what the device plugin release
  in the graph says).
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Optional

import pulumi

from ..kube.objects import NODE_PATCH, CoreObject, read_node
from ..kube.provider import hooks_of, owned
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import mig_instances
from ..model.nodes.dra_devices import (
    DRA_DEVICES_ANNOTATION,
    DRA_MIG_LABEL,
    DRA_NODE_LABEL,
    GPUS,
    node_devices,
)
from ..model.nodes.labels import ALLOCATABLE_ANNOTATION, ERT_ANNOTATION, PRESENT_LABELS_ANNOTATION
from ..model.nodes.shapes import existing_node_shape
from ..model.nodes.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ..model.nodes.sharing import config_name
from ..model.scheduling import Taint
from ..model.scheduling.taints import OWN_TAINTS_ANNOTATION
from .component import PoolComponent
from .pool import POOL_LABEL, PoolFacts, PoolKind, build_facts, pool_name_of

PATCH_FORCE = "pulumi.com/patchForce"
GPUS_ANNOTATION = "gpu-inference.dev/gpus-per-node"
"""Annotation telling the placement check how many GPUs each node has (it cannot ask the node)."""
MAX_NODE_GPUS = 64
"""The most GPUs a node may declare: four times the largest GPU servers (16: NVIDIA's DGX-2 and HGX-2,
GCP's a2-megagpu-16g), so a typo is refused rather than a 2**31-GPU node judged."""


@dataclass
class ExistingGpuNodesArgs:
    """Inputs of `ExistingGpuNodes`; every default is here."""

    nodes: Sequence[str] = field(metadata=stack(syntax="node-names"))
    """Names of the Kubernetes nodes that make up the pool, each once: the pool is exactly these
    nodes (no autoscaling)."""
    gpus_per_node: Optional[int] = field(
        default=0, metadata=stack("gpusPerNode", ge=0, le=MAX_NODE_GPUS)
    )
    """GPUs each node has (0 for CPU nodes; 1 or more when `gpu_model` is given: it is not read
    from the nodes); with time-slicing each exposes this many times `time_slicing_replicas`
    `nvidia.com/gpu`."""
    gpu_model: Optional[str] = field(default=None, metadata=stack("accelerator"))
    """GPU model, e.g. `A100` (any string), for reports and checks; it makes a GPU pool."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """Labels to set on the nodes (beside the pool label; values are strings: quote numbers and
    booleans in YAML), by server-side apply (a key another manager owns needs `patch_force`).
    Not `gpu-inference.dev/pool`, nor a key under `kubernetes.io`, `k8s.io`, `cloud.google.com`,
    `eks.amazonaws.com` or `k8s.amazonaws.com` unless `present_labels` has it with that value."""
    taints: Optional[Sequence[Taint]] = None
    """Taints to add, `{key, value, effect}`: value default `""`, effect `NoSchedule` (default),
    `PreferNoSchedule` or `NoExecute` (Kubernetes' casing), one per key and effect; a GPU pool
    needs a NoSchedule or NoExecute one. The node's own taints are kept (the taint list is one
    atomic field under server-side apply). Unset: `nvidia.com/gpu=present:NoSchedule` for GPU
    nodes, none for CPU."""
    present_labels: Optional[Mapping[str, str]] = field(
        default=None, metadata=stack(syntax="labels")
    )
    """Labels the nodes already carry (node-feature-discovery, GPU feature discovery, ...): never
    patched, but known to the placement check and selectable by `select_labels`."""
    select_labels: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="label-keys")
    )
    """Label keys the placement selects; default: the pool label `gpu-inference.dev/pool`."""
    scheduling_style: Optional[str] = field(default="nodeSelector", metadata=stack(hidden=True))
    """How the placement selects: `nodeSelector` or `nodeAffinity` (required, In)."""
    patch_force: Optional[bool] = False
    """Take over labels / taints another field manager owns (`pulumi.com/patchForce`)."""
    extended_resource_toleration: Optional[bool] = field(
        default=False, metadata=stack(source="cluster.extendedResourceToleration")
    )
    """Whether the cluster runs the ExtendedResourceToleration admission plugin."""
    pool_name: Optional[str] = field(
        default=None,
        metadata=stack(
            "name",
            required=True,
            syntax="pool-name",
            doc="The pool's name, unique among the pools: what workloads name in `pool` and the "
            "nodes' `gpu-inference.dev/pool` label; a DNS-1123 label of at most 40 characters.",
        ),
    )
    """The pool's name (its `gpu-inference.dev/pool` label); default: the component's name."""
    time_slicing_replicas: Optional[int] = field(
        default=None, metadata=stack("gpuSharing.maxClientsPerGpu", ge=2, le=48)
    )
    """Time-slice each GPU into this many `nvidia.com/gpu` (2..48, GPU nodes only): the patch adds
    the node label `nvidia.com/device-plugin.config=time-sliced-<n>`, which picks that config of
    the NVIDIA device plugin (the platform puts it in the plugin's config map); another value of
    that label in `labels` or `present_labels` is refused."""
    dra: Optional[bool] = False
    """GPUs by claim (DRA) instead of `nvidia.com/gpu`: the patch labels the nodes
    `nvidia.com/gpu.present=true` (the label NVIDIA's DRA driver's kubelet plugin runs on) and
    records the devices each node publishes in the annotation `gpu-inference.dev/dra-devices` for
    the placement check (`gpus_per_node` GPUs of `gpu_model`, whole or in `dra_mig_profile`); the
    stack's NVIDIA device plugin stays off these nodes, and workloads claim the GPUs
    (`gpuClaim`). Needs Kubernetes 1.34 or later, the NVIDIA driver on the nodes, and
    `gpu_model` one the check knows (A100, A100 80GB, H100, H200, L4, L40S, A10G, T4, ...)."""
    dra_mig_profile: Optional[str] = None
    """With `dra`: the MIG profile the nodes' GPUs are already split into (static MIG, e.g.
    `1g.10gb`, one profile on every GPU): the driver then publishes the MIG instances
    (`mig.nvidia.com`), not whole GPUs. The nodes get the label
    `gpu-inference.dev/dra-mig-profile`; partitioning them is up to you (nvidia-smi, the GPU
    operator's MIG manager)."""
    node_allocatable: Optional[Mapping[str, str]] = field(
        default=None, metadata=stack(syntax="resources")
    )
    """What each node has allocatable, as `kubectl get node NAME -o jsonpath='{.status.allocatable}'`
    shows it: `cpu`, `memory`, `ephemeral-storage` (required), `pods` (default 110),
    `nvidia.com/gpu`. The placement check judges a pod's fit on these nodes against it (the node
    patch carries it as the annotation `gpu-inference.dev/allocatable`); without it fit is not
    judged on them."""


@dataclass(frozen=True)
class ExistingNodesPlan:
    facts: PoolFacts
    patches: dict[str, dict[str, Any]]
    """Node name -> the NodePatch keyword arguments (metadata; spec only in `taint_patch`)."""
    taints: list[dict[str, str]]
    """The taints the pool adds to every node (merged with each node's own at deploy time)."""


# Taints the node controller sets and clears with the node's conditions: never re-applied.
CONDITION_TAINT_PREFIX = "node.kubernetes.io/"


def merged_taints(
    current: Any,
    ours: Sequence[Mapping[str, str]],
    previous: Sequence[Mapping[str, str]] = (),
) -> list[dict[str, str]]:
    """The taint list to apply: the node's current taints (but its condition taints, those with
    one of our key+effect pairs, and those this pool set before, `previous`: a taint taken out of
    the pool's config leaves the node) in their order, then ours."""
    mine = {(t["key"], t["effect"]) for t in ours}
    mine |= {(t["key"], t.get("effect", "NoSchedule")) for t in previous}
    kept: list[dict[str, str]] = []
    for t in current or ():
        entry = {
            k: v
            for k in ("key", "value", "effect")
            if (v := (t.get(k) if isinstance(t, Mapping) else getattr(t, k, None)))
        }
        key, effect = entry.get("key", ""), entry.get("effect", "")
        if key.startswith(CONDITION_TAINT_PREFIX) or (key, effect) in mine:
            continue
        kept.append(entry)
    return kept + [dict(t) for t in ours]


def taint_patch(
    current_spec: Any,
    ours: Sequence[Mapping[str, str]],
    previous: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """The NodePatch `spec` from the node's live spec (a dict, or the SDK's NodeSpec)."""
    if isinstance(current_spec, Mapping):
        current = current_spec.get("taints")
    else:
        current = getattr(current_spec, "taints", None)
    return {"taints": merged_taints(current, ours, previous)}


def recorded_taints(metadata: Any) -> list[dict[str, str]]:
    """The taints this stack set on a node, from the live node's `gpu-inference.dev/taints`
    annotation (which our last patch applied); [] without one."""
    if isinstance(metadata, Mapping):
        annotations = metadata.get("annotations")
    else:
        annotations = getattr(metadata, "annotations", None)
    text = (annotations or {}).get(OWN_TAINTS_ANNOTATION) if annotations else None
    try:
        found = json.loads(text) if isinstance(text, str) else []
    except json.JSONDecodeError:
        return []
    return (
        [t for t in found if isinstance(t, dict) and "key" in t] if isinstance(found, list) else []
    )


def existing_dra(args: ExistingGpuNodesArgs, gpus: int) -> tuple[dict[str, str], Optional[str]]:
    """A DRA pool's node labels and the devices annotation (JSON) each node gets; ({}, None)
    without `dra`. InputError for what the check cannot describe or a DRA pool cannot have."""
    if not args.dra:
        if args.dra_mig_profile is not None:
            raise InputError(
                "dra_mig_profile is given without dra",
                "dra: true with it, or leave it out",
                "args.dra_mig_profile",
            )
        return {}, None
    if gpus == 0:
        raise InputError(
            "dra is set on nodes with 0 GPUs", "gpus_per_node above 0, or dra unset", "args.dra"
        )
    if args.time_slicing_replicas is not None:
        raise InputError(
            "time_slicing_replicas is given on a DRA pool: time-slicing is the NVIDIA device "
            "plugin's, which a DRA pool does not run",
            "leave it unset, or dra unset",
            "args.time_slicing_replicas",
        )
    model = args.gpu_model
    if model not in GPUS:
        raise InputError(
            f"gpu_model {show(model)} on a DRA pool is not a GPU whose DRA devices the check "
            "knows (what NVIDIA's DRA driver publishes for it: product name, architecture, "
            "memory)",
            ", ".join(GPUS),
            "args.gpu_model",
        )
    labels = {DRA_NODE_LABEL[0]: DRA_NODE_LABEL[1]}
    per_gpu = 0
    if args.dra_mig_profile is not None:
        try:
            per_gpu = mig_instances(str(model), args.dra_mig_profile)
        except InputError as e:
            raise e.at("args.dra_mig_profile") from None
        labels[DRA_MIG_LABEL] = str(args.dra_mig_profile)
    devices = node_devices(str(model), gpus, args.dra_mig_profile, per_gpu)
    return labels, json.dumps(list(devices), sort_keys=True)


def validate_existing_nodes_args(name: str, args: ExistingGpuNodesArgs) -> ExistingNodesPlan:
    """Check every input (no Pulumi) and decide the patches. What each field declares
    (`check_declared`) comes first; the rest are rules across fields."""
    check_declared(args)
    pool_name, name_path = pool_name_of(name, args.pool_name)
    nodes = args.nodes
    gpus = args.gpus_per_node if args.gpus_per_node is not None else 0
    if args.gpu_model is not None and gpus == 0:
        raise InputError(
            f"gpu_model {show(args.gpu_model)} is given but gpus_per_node is 0: a GPU pool of "
            "existing nodes must say how many GPUs each node has",
            "gpus_per_node 1 or more (or no gpu_model: CPU nodes)",
            "args.gpus_per_node",
        )
    present = _present_labels(args)
    # Not a mapping: build_facts refuses it below.
    user_labels: Any = dict(args.labels) if isinstance(args.labels, Mapping) else args.labels
    shared = 1
    if args.time_slicing_replicas is not None:
        if gpus == 0:
            raise InputError(
                "time_slicing_replicas is given for nodes with 0 GPUs",
                "gpus_per_node above 0 to time-slice, or leave it out",
                "args.time_slicing_replicas",
            )
        shared = args.time_slicing_replicas
        picked = config_name(shared)
        for key, given in (("args.labels", user_labels), ("args.present_labels", present)):
            if isinstance(given, dict) and given.get(DEVICE_PLUGIN_CONFIG_LABEL, picked) != picked:
                raise InputError(
                    f"label {DEVICE_PLUGIN_CONFIG_LABEL}="
                    f"{given[DEVICE_PLUGIN_CONFIG_LABEL]!r} contradicts time-slicing, which sets "
                    f"it to {picked!r}",
                    "leave the label out (time_slicing_replicas sets it)",
                    f"{key}.{DEVICE_PLUGIN_CONFIG_LABEL}",
                )
        if user_labels is None or isinstance(user_labels, dict):
            user_labels = {**(user_labels or {}), DEVICE_PLUGIN_CONFIG_LABEL: picked}
    dra_labels, dra_devices = existing_dra(args, gpus)
    if dra_labels and (user_labels is None or isinstance(user_labels, dict)):
        user_labels = {**(user_labels or {}), **dra_labels}
    facts = build_facts(
        pool_name,
        cloud="existing",
        user_labels=user_labels,
        cloud_labels=present,
        taints=args.taints,
        gpus_per_node=gpus * shared,
        gpu_model=args.gpu_model,
        min_nodes=len(nodes),
        max_nodes=len(nodes),
        spot=False,
        select_labels=args.select_labels,
        scheduling_style=args.scheduling_style,
        extended_resource_toleration=bool(args.extended_resource_toleration),
        name_path=name_path,
    )
    allocatable = None
    if args.node_allocatable is not None:
        try:
            existing_node_shape(pool_name, args.node_allocatable)
        except InputError as e:
            raise e.at("args.node_allocatable") from None
        allocatable = {k: str(v) for k, v in args.node_allocatable.items()}
    own_labels = {POOL_LABEL: facts.name, **(user_labels or {})}
    patches = {
        node: _patch(node, args, facts, own_labels, gpus, present, allocatable, dra_devices)
        for node in nodes
    }
    return ExistingNodesPlan(facts, patches, [t.to_dict() for t in facts.taints])


def _present_labels(args: ExistingGpuNodesArgs) -> dict[str, str]:
    """The labels the nodes already carry: not the pool label, and as `labels` says them."""
    present = dict(args.present_labels or {})
    if POOL_LABEL in present:
        raise InputError(
            f"present label {POOL_LABEL!r} is the pool label, which this component sets",
            "labels the nodes carry besides the pool label",
            f"args.present_labels.{POOL_LABEL}",
        )
    for k, v in (args.labels or {}).items() if present else ():
        if k in present and present[k] != v:
            raise InputError(
                f"label {k}={v!r} contradicts the present label {k}={present[k]!r}",
                "the same value, or only one of labels / present_labels",
                f"args.labels.{k}",
            )
    return present


def _patch(
    node: str,
    args: ExistingGpuNodesArgs,
    facts: PoolFacts,
    own_labels: Mapping[str, str],
    gpus: int,
    present: Mapping[str, str],
    allocatable: Optional[Mapping[str, str]],
    dra_devices: Optional[str],
) -> dict[str, Any]:
    """One node's patch: its labels and the annotations the check reads back."""
    annotations = {GPUS_ANNOTATION: str(gpus)}
    if present:
        annotations[PRESENT_LABELS_ANNOTATION] = json.dumps(present, sort_keys=True)
    if args.extended_resource_toleration:
        annotations[ERT_ANNOTATION] = "true"
    if allocatable is not None:
        annotations[ALLOCATABLE_ANNOTATION] = json.dumps(allocatable, sort_keys=True)
    if dra_devices is not None:
        annotations[DRA_DEVICES_ANNOTATION] = dra_devices
    if args.patch_force or facts.taints:
        # Adding taints always takes the atomic list over from its owner (the kubelet).
        annotations[PATCH_FORCE] = "true"
    if facts.taints:
        annotations[OWN_TAINTS_ANNOTATION] = json.dumps(
            [t.to_dict() for t in facts.taints], sort_keys=True
        )
    metadata: dict[str, Any] = {
        "name": node,
        "labels": dict(own_labels),
        "annotations": annotations,
    }
    return {"metadata": metadata}


def node_resource(node: str) -> str:
    """The resource name of a node's patch: the node's alone, so that renaming the pool (or moving
    a node to another pool) keeps the patch, where a new patch made before the old one is deleted
    would have the delete take back the labels and taints the new one just set (both apply as the
    stack's one field manager)."""
    return f"node-{node}"


def _spec_with(live: Sequence[Any], ours: Sequence[Mapping[str, str]]) -> dict[str, Any]:
    metadata, spec = live
    return taint_patch(spec, ours, recorded_taints(metadata))


class ExistingGpuNodes(PoolComponent):
    """Existing nodes labeled and tainted as one pool, with the placement that lands on them."""

    def __init__(
        self,
        name: str,
        args: ExistingGpuNodesArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        plan = self._start(
            "gpu-inference:index:ExistingGpuNodes", name, validate_existing_nodes_args, args, opts
        )
        hooks = hooks_of(self)
        self.patches = []
        for node, body in plan.patches.items():
            spec: Any = None
            if plan.taints:
                live = read_node(
                    f"{node_resource(node)}-live", node, opts=pulumi.ResourceOptions(parent=self)
                )
                spec = pulumi.Output.all(live.metadata, live.spec).apply(
                    partial(_spec_with, ours=plan.taints)
                )
            self.patches.append(
                CoreObject(
                    NODE_PATCH,
                    node_resource(node),
                    metadata=owned(body["metadata"]),
                    spec=spec,
                    opts=pulumi.ResourceOptions(
                        parent=self,
                        retain_on_delete=bool(plan.taints) and hooks is None,
                        # Even untainted: a pool whose taints were taken out of the config
                        # hands the node's own taints back before its patch drops the list.
                        hooks=hooks.node_taints() if hooks else None,
                        # Its name before it was the node's alone (`{pool}-{node}`).
                        aliases=[pulumi.Alias(name=f"{name}-{node}")],
                    ),
                )
            )
        self._finish(nodes=list(plan.patches))


KIND = PoolKind(
    name="existing",
    title="pool of existing nodes",
    provider="existing",
    args=ExistingGpuNodesArgs,
    plan=validate_existing_nodes_args,
    component=ExistingGpuNodes,
    kubernetes=True,
    node_startup=False,
    note="the pool is the listed nodes, labeled and tainted in place",
)
