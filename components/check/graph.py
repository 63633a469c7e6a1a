"""Reading a resource graph: the pools (effective labels, taints, GPUs) and the pod templates
(placement fragment, GPUs, replicas, wiring) that the check judges. See `contract` for the rules."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_CEILING
from typing import Any

from ..model.catalog import MIG_PROFILES, aws_instance, gke_accelerator, gke_gpus_for_machine
from ..model.errors import InputError
from ..model.karpenter import AWS_PREFIX as KARPENTER_AWS_PREFIX
from ..model.karpenter import (
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    OS_LABEL,
    instance_labels,
    requirement_from_karpenter,
)
from ..model.karpenter import admitted as admitted_by_karpenter
from ..model.scheduling import (
    GPU_RESOURCE,
    Taint,
    Toleration,
    parse_quantity,
)
from ..model.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ..model.sharing import replicas_by_config
from .contract import (
    _COMPONENT_NON_CONTAINER_KEYS,
    _CONTAINER_MARKERS,
    _DEVICE_PLUGIN_MARKERS,
    APPS_KINDS,
    AUTOPILOT_POOL,
    CODES,
    COMPUTE_CLASS_LABEL,
    DEPLOYMENT_MODE_ANNOTATION,
    DEVICE_PLUGIN_CHART,
    DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
    DTYPE_BYTES,
    EKS_CAPACITY_LABEL,
    EKS_NODE_GROUP,
    EKS_NODEGROUP_LABEL,
    GKE_ACCELERATOR_COUNT_LABEL,
    GKE_ACCELERATOR_LABEL,
    GKE_GPU_TAINT,
    GKE_MAX_CLIENTS_LABEL,
    GKE_NO_DEFAULT_PLUGIN_LABEL,
    GKE_NODE_POOL,
    GKE_NODEPOOL_LABEL,
    GKE_PARTITION_LABEL,
    GKE_PREEMPTIBLE_LABEL,
    GKE_SHARING_LABEL,
    GKE_SPOT_LABEL,
    GPU_COUNT_KEYS,
    HELM_TYPES,
    ISVC_COMPONENTS,
    KSERVE_CHARTS,
    MODEL_DTYPE_ANNOTATION,
    MODEL_PARAMETERS_ANNOTATION,
    MODEL_SIZE_ANNOTATION,
    NFD_WORKER_DEFAULT_TOLERATIONS,
    NODE_PATCH,
    POOL_LABEL,
    PRESENT_LABELS_ANNOTATION,
    SERVERLESS_MODES,
    WIRED_POOL_ANNOTATION,
    wired_annotation,
)
from .results import (
    Finding,
    NodeTemplate,
    PoolFacts,
)

# ---------------------------------------------------------------------------------------------
# Reading the graph
# ---------------------------------------------------------------------------------------------


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): _label_text(v) for k, v in _map(value).items()}


def _label_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value.strip())
    return None


def _kind(typ: str) -> str:
    return typ.rsplit(":", 1)[-1]


def _group(typ: str) -> str:
    """`kubernetes:serving.kserve.io/v1beta1:InferenceService` -> `serving.kserve.io`."""
    parts = typ.split(":")
    return parts[1].split("/", 1)[0] if len(parts) == 3 else ""


def _is(typ: str, group: str, kind: str) -> bool:
    return typ.startswith("kubernetes:") and _group(typ) == group and _kind(typ) == kind


def _rid(typ: str, name: str, component: str | None = None) -> str:
    rid = f"{_kind(typ)}/{name}"
    return f"{rid}/{component}" if component else rid


def _metadata(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(inputs.get("metadata"))


def _namespace(inputs: Mapping[str, Any]) -> str:
    return str(_metadata(inputs).get("namespace") or "default")


def _split_pools(value: Any) -> tuple[str, ...]:
    if not isinstance(value, str):
        return ()
    return tuple(dict.fromkeys(p.strip() for p in value.split(",") if p.strip()))


class _Findings:
    def __init__(self) -> None:
        self.items: set[Finding] = set()

    def add(self, code: str, resource: str, message: str, fix: str) -> None:
        self.items.add(Finding(code, CODES[code][0], resource, message, fix))

    def sorted(self) -> list[Finding]:
        return sorted(self.items, key=Finding.sort_key)


def _taint(data: Any, where: str, out: _Findings) -> Taint | None:
    try:
        return Taint.from_dict(_map(data))
    except (InputError, KeyError, TypeError, ValueError) as e:
        out.add("GI013", where, f"invalid taint {dict(_map(data))!r}: {e}", "fix the taint")
        return None


def _taints(items: Any, where: str, out: _Findings) -> list[Taint]:
    taints = [_taint(t, where, out) for t in _list(items)]
    return [t for t in taints if t is not None]


# -- pools --------------------------------------------------------------------------------------


@dataclass
class _PoolDraft:
    name: str
    provider: str
    resource: str
    node: NodeTemplate
    gpus: int | None
    gpu: bool
    accelerator: str | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    spot: bool = False
    builtin_device_plugin: bool = False
    more_nodes: tuple[NodeTemplate, ...] = ()  # further node shapes (a Karpenter NodePool's)
    gpu_memory_gib: float | None = None
    node_group: str | None = None  # EKS managed node group: nodeGroupName
    key: str = ""  # `type::name`, as dependsOn names it


def _gke_memory(accelerator: str | None) -> float | None:
    try:
        return float(gke_accelerator(accelerator).memory_gib) if accelerator else None
    except InputError:
        return None


def _gke_shared(nc: Mapping[str, Any], accelerator: str | None, labels: dict[str, str]) -> int:
    """How many `nvidia.com/gpu` one GPU of a GKE node exposes: time-sharing / MPS clients
    (`gpuSharingConfig.maxSharedClientsPerGpu`) times MIG instances (`gpuPartitionSize`, from
    the catalog's MIG profiles); adds the labels GKE puts on such nodes."""
    factor = 1
    for acc in _list(nc.get("guestAccelerators")):
        acc = _map(acc)
        sharing = _map(acc.get("gpuSharingConfig"))
        clients = _int(sharing.get("maxSharedClientsPerGpu"))
        if clients:
            strategy = str(sharing.get("gpuSharingStrategy") or "")
            labels[GKE_SHARING_LABEL] = {"MPS": "mps"}.get(strategy, "time-sharing")
            labels[GKE_MAX_CLIENTS_LABEL] = str(clients)
            factor *= clients
        partition = acc.get("gpuPartitionSize")
        if isinstance(partition, str) and partition:
            labels[GKE_PARTITION_LABEL] = partition
            factor *= MIG_PROFILES.get(accelerator or "", {}).get(partition, 1)
    return factor


def _gke_pool(entry: Mapping[str, Any], out: _Findings) -> _PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    nc = _map(inputs.get("nodeConfig"))
    labels = _str_map(nc.get("labels"))
    taints = _taints(nc.get("taints"), rid, out)
    accelerator: str | None = None
    gpus = 0
    for acc in _list(nc.get("guestAccelerators")):
        acc = _map(acc)
        if acc.get("type"):
            accelerator = str(acc["type"])
        gpus += _int(acc.get("count")) or 0
    if gpus == 0 and isinstance(nc.get("machineType"), str):
        attached = gke_gpus_for_machine(str(nc["machineType"]))
        if attached:
            accelerator, gpus = attached
    gpu = gpus > 0
    effective = dict(labels)
    if gpu:
        if accelerator:
            effective[GKE_ACCELERATOR_LABEL] = accelerator
        effective[GKE_ACCELERATOR_COUNT_LABEL] = str(gpus)
        if GKE_GPU_TAINT not in taints:
            taints.append(GKE_GPU_TAINT)
        gpus *= _gke_shared(nc, accelerator, effective)
    if isinstance(inputs.get("name"), str) and inputs["name"]:
        effective[GKE_NODEPOOL_LABEL] = str(inputs["name"])
    spot = nc.get("spot") is True
    if spot:
        effective[GKE_SPOT_LABEL] = "true"
    if nc.get("preemptible") is True:
        effective[GKE_PREEMPTIBLE_LABEL] = "true"
    auto = _map(inputs.get("autoscaling"))
    if auto:
        lo = _int(auto.get("minNodeCount"))
        hi = _int(auto.get("maxNodeCount"))
        if lo is None and hi is None:
            lo, hi = _int(auto.get("totalMinNodeCount")), _int(auto.get("totalMaxNodeCount"))
        lo = 0 if lo is None and hi is not None else lo
    else:
        lo = _int(inputs.get("nodeCount"))
        if lo is None:
            lo = _int(inputs.get("initialNodeCount"))
        hi = lo
    return _PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="gke",
        resource=rid,
        node=NodeTemplate(None, effective, tuple(taints)),
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        min_nodes=lo,
        max_nodes=hi,
        spot=spot,
        builtin_device_plugin=effective.get(GKE_NO_DEFAULT_PLUGIN_LABEL) != "true",
        gpu_memory_gib=_gke_memory(accelerator) if gpu else None,
    )


def _looks_like_gpu_instance(instance_type: str) -> bool:
    family = instance_type.split(".", 1)[0]
    return family[:1] in ("g", "p") and family[1:2].isdigit()


def _eks_pool(entry: Mapping[str, Any], out: _Findings) -> _PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    labels = _str_map(inputs.get("labels"))
    taints = _taints(inputs.get("taints"), rid, out)
    ami = str(inputs.get("amiType") or "")
    gpu_ami = "NVIDIA" in ami or "GPU" in ami
    counts: list[int | None] = []
    memories: list[float] = []
    accelerator = None
    for it in _list(inputs.get("instanceTypes")):
        try:
            inst = aws_instance(str(it))
        except InputError:
            gpu_like = gpu_ami or _looks_like_gpu_instance(str(it))
            counts.append(None if gpu_like else 0)
            continue
        counts.append(inst.gpus)
        memories.append(float(inst.gpu_memory_gib))
        accelerator = accelerator or inst.accelerator_label
    if not counts:
        counts = [None if gpu_ami else 0]  # EKS's default instance type (t3.medium) has none
    known = [c for c in counts if c is not None]
    gpus = min(known) if len(known) == len(counts) else None
    gpu = gpus is None or gpus > 0
    effective = dict(labels)
    if isinstance(inputs.get("nodeGroupName"), str) and inputs["nodeGroupName"]:
        effective[EKS_NODEGROUP_LABEL] = str(inputs["nodeGroupName"])
    capacity = str(inputs.get("capacityType") or "ON_DEMAND")
    effective[EKS_CAPACITY_LABEL] = capacity
    scaling = _map(inputs.get("scalingConfig"))
    return _PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="eks",
        resource=rid,
        node=NodeTemplate(None, effective, tuple(taints)),
        gpus=gpus,
        gpu=gpu,
        accelerator=accelerator,
        min_nodes=_int(scaling.get("minSize")),
        max_nodes=_int(scaling.get("maxSize")),
        spot=capacity == "SPOT",
        builtin_device_plugin=ami.startswith("BOTTLEROCKET") and "NVIDIA" in ami,
        gpu_memory_gib=min(memories) if memories and len(memories) == len(counts) else None,
        node_group=str(inputs["nodeGroupName"]) if inputs.get("nodeGroupName") else None,
    )


def _present_labels(annotations: Mapping[str, str]) -> dict[str, str]:
    """Labels a NodePatch records as already on the node (NFD / GFD labels it does not patch)."""
    try:
        found = json.loads(annotations.get(PRESENT_LABELS_ANNOTATION, "{}"))
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _node_pool(entry: Mapping[str, Any], out: _Findings) -> _PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    md = _metadata(inputs)
    annotations = _str_map(md.get("annotations"))
    labels = {**_present_labels(annotations), **_str_map(md.get("labels"))}
    taints = _taints(_map(inputs.get("spec")).get("taints"), rid, out)
    gpus: int | None = None
    for key in GPU_COUNT_KEYS:
        found = _int(annotations.get(key, labels.get(key)))
        if found is not None:
            gpus = found
            break
    evidence = (
        any(k.startswith("nvidia.com/gpu") for k in labels)
        or GKE_ACCELERATOR_LABEL in labels
        or "k8s.amazonaws.com/accelerator" in labels
        or any(t.key == GPU_RESOURCE for t in taints)
    )
    node_name = str(md["name"]) if md.get("name") else None
    return _PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="existing",
        resource=rid,
        node=NodeTemplate(node_name, labels, tuple(taints), gpus),
        gpus=gpus,
        gpu=(gpus or 0) > 0 or (gpus is None and evidence),
        accelerator=labels.get("nvidia.com/gpu.product") or labels.get(GKE_ACCELERATOR_LABEL),
        gpu_memory_gib=_node_gpu_memory(annotations, labels),
    )


def _node_gpu_memory(annotations: Mapping[str, str], labels: Mapping[str, str]) -> float | None:
    """GPU memory of an existing node: GFD's `nvidia.com/gpu.memory` (MiB), else the catalog's for
    a GKE accelerator label."""
    mib = _int(annotations.get("nvidia.com/gpu.memory", labels.get("nvidia.com/gpu.memory")))
    return mib / 1024 if mib else _gke_memory(labels.get(GKE_ACCELERATOR_LABEL))


def _node_classes(graph: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """EC2NodeClass name -> its spec."""
    found = {}
    for entry in graph:
        if _is(str(entry.get("type", "")), "karpenter.k8s.aws", "EC2NodeClass"):
            inputs = _map(entry.get("inputs"))
            found[str(_metadata(inputs).get("name") or entry.get("name"))] = _map(
                inputs.get("spec")
            )
    return found


def _karpenter_pool(
    entry: Mapping[str, Any], node_classes: Mapping[str, Mapping[str, Any]], out: _Findings
) -> _PoolDraft:
    """A Karpenter NodePool: one node template per catalog instance type and capacity type its
    requirements admit (labels as Karpenter sets them: `components.model.karpenter`), plus a
    shape without GPUs when the requirements also admit instance types without GPUs. GPUs per
    node: the most any admitted type has (Karpenter launches the type the pod fits)."""
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    spec = _map(inputs.get("spec"))
    template = _map(spec.get("template"))
    tspec = _map(template.get("spec"))
    nodepool = str(_metadata(inputs).get("name") or name)
    labels = {**_str_map(_map(template.get("metadata")).get("labels")), NODEPOOL_LABEL: nodepool}
    taints = _taints(tspec.get("taints"), rid, out)
    reqs = []
    for r in _list(tspec.get("requirements")):
        try:
            reqs.append(requirement_from_karpenter(_map(r)))
        except (InputError, TypeError, ValueError) as e:
            out.add("GI013", rid, f"invalid requirement {dict(_map(r))!r}: {e}", "fix it")
    for r in reqs:  # a single-valued In requirement becomes a node label
        if r.operator == "In" and len(r.values or ()) == 1:
            labels.setdefault(r.key, str((r.values or ())[0]))
    auto = _map(tspec.get("nodeClassRef")).get("group") == "eks.amazonaws.com"  # EKS Auto Mode
    prefix = "eks.amazonaws.com/" if auto else KARPENTER_AWS_PREFIX
    found = admitted_by_karpenter(reqs, auto)
    # Each shape has its instance type's GPUs: a pod that selects g6.xlarge cannot ask for 4.
    nodes = [
        NodeTemplate(
            None,
            {**instance_labels(i, auto), **labels, CAPACITY_TYPE_LABEL: c},
            tuple(taints),
            i.gpus,
        )
        for i in found.instances
        for c in found.capacity_types
    ]
    # A node without GPUs: the labels above but those a single-valued requirement on an instance
    # key gave (`instance-family In [g6]` describes the GPU types, not a CPU one); template labels
    # under that prefix are refused by the NodePool CRD.
    cpu_shape = {OS_LABEL: "linux", **{k: v for k, v in labels.items() if not k.startswith(prefix)}}
    admits_cpu = all(r.matches(cpu_shape) for r in reqs if r.key.startswith(prefix))
    if admits_cpu or not nodes:
        nodes.insert(0, NodeTemplate(None, cpu_shape, tuple(taints), 0))
    gpu_keyed = any(r.key.startswith(prefix + "instance-gpu") for r in reqs)
    gpus: int | None = max((i.gpus for i in found.instances), default=0)
    if not found.instances and gpu_keyed and not admits_cpu:
        gpus = None  # GPU instance types the catalog does not know
    node_class = node_classes.get(str(_map(tspec.get("nodeClassRef")).get("name")), {})
    aliases = [str(_map(t).get("alias") or "") for t in _list(node_class.get("amiSelectorTerms"))]
    bottlerocket = node_class.get("amiFamily") == "Bottlerocket" or any(
        a.startswith("bottlerocket@") for a in aliases
    )
    limits = _map(spec.get("limits"))
    replicas = _int(spec.get("replicas"))
    return _PoolDraft(
        name=labels.get(POOL_LABEL) or nodepool,
        provider="eks",
        resource=rid,
        node=nodes[0],
        more_nodes=tuple(nodes[1:]),
        gpus=gpus,
        gpu=not admits_cpu and (gpus is None or gpus > 0),
        accelerator=next(iter({i.accelerator_label for i in found.instances}), None)
        if len({i.accelerator_label for i in found.instances}) == 1
        else None,
        min_nodes=replicas if replicas is not None else 0,
        max_nodes=replicas if replicas is not None else _int(limits.get("nodes")),
        spot=found.capacity_types == ("spot",),
        builtin_device_plugin=bottlerocket or auto,  # Auto Mode runs the NVIDIA plugin itself
    )


def _compute_class_pool(entry: Mapping[str, Any], out: _Findings) -> _PoolDraft:
    """A GKE ComputeClass: one node template per priority, labeled and tainted as GKE does for
    the class (`cloud.google.com/compute-class=<name>` label and NoSchedule taint, the GPU labels
    and taint on GPU priorities, `gke-spot=true` on spot ones) plus `nodePoolConfig`'s labels
    and taints. A GPU pool when every priority has GPUs; GPUs per node: the most any has."""
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = _map(entry.get("inputs"))
    rid = _rid(typ, name)
    spec = _map(inputs.get("spec"))
    class_name = str(_metadata(inputs).get("name") or name)
    config = _map(spec.get("nodePoolConfig"))
    base = {**_str_map(config.get("nodeLabels")), COMPUTE_CLASS_LABEL: class_name}
    taints = _taints(config.get("taints"), rid, out)
    class_taint = Taint(COMPUTE_CLASS_LABEL, class_name, "NoSchedule")
    nodes, counts, accelerators, spots = [], [], set(), []
    for rule in _list(spec.get("priorities")) or [{}]:
        rule = _map(rule)
        gpu = _map(rule.get("gpu"))
        accelerator = str(gpu["type"]) if gpu.get("type") else None
        count = _int(gpu.get("count")) or 0
        if not count and isinstance(rule.get("machineType"), str):
            attached = gke_gpus_for_machine(str(rule["machineType"]))
            if attached:
                accelerator, count = attached
        labels = dict(base)
        node_taints = [*taints, class_taint]
        if count:
            labels[GKE_ACCELERATOR_LABEL] = accelerator or ""
            labels[GKE_ACCELERATOR_COUNT_LABEL] = str(count)
            node_taints.append(GKE_GPU_TAINT)
            accelerators.add(accelerator)
        if rule.get("spot") is True:
            labels[GKE_SPOT_LABEL] = "true"
        spots.append(rule.get("spot") is True)
        counts.append(count)
        nodes.append(NodeTemplate(None, labels, tuple(dict.fromkeys(node_taints)), count))
    return _PoolDraft(
        name=base.get(POOL_LABEL) or class_name,
        provider="gke",
        resource=rid,
        node=nodes[0],
        more_nodes=tuple(nodes[1:]),
        gpus=max(counts),
        gpu=all(c > 0 for c in counts),
        accelerator=accelerators.pop() if len(accelerators) == 1 else None,
        min_nodes=0,
        max_nodes=None,  # a ComputeClass sets no node limit
        spot=all(spots),
        builtin_device_plugin=True,  # GKE-managed, as for GKE node pools
    )


def _autopilot_pool(entry: Mapping[str, Any]) -> _PoolDraft:
    """GPU nodes GKE Autopilot provisions for a `GkeAutopilotGpuPool` (it has no cloud resource
    of its own): GKE's accelerator labels and GPU taint, and on spot the `gke-spot=true` label
    and NoSchedule taint Autopilot puts on Spot Pod nodes."""
    inputs = _map(entry.get("inputs"))
    name = str(inputs.get("poolName") or entry["name"])
    accelerator = str(inputs.get("accelerator") or "")
    count = _int(inputs.get("gpuCount"))
    labels = {GKE_ACCELERATOR_LABEL: accelerator}
    taints = [GKE_GPU_TAINT]
    if count is not None:
        labels[GKE_ACCELERATOR_COUNT_LABEL] = str(count)
    if count is None:
        try:
            machines = gke_accelerator(accelerator).machines.values()
            count = max(c for counts in machines for c in counts)
        except InputError:
            count = None
    spot = inputs.get("spot") is True
    if spot:
        labels[GKE_SPOT_LABEL] = "true"
        taints.append(Taint(GKE_SPOT_LABEL, "true", "NoSchedule"))
    return _PoolDraft(
        name=name,
        provider="gke",
        resource=_rid(str(entry["type"]), str(entry["name"])),
        node=NodeTemplate(None, labels, tuple(taints)),
        gpus=count,
        gpu=True,
        accelerator=accelerator or None,
        min_nodes=0,
        max_nodes=None,
        spot=spot,
        builtin_device_plugin=True,
    )


def _apply_time_slicing(
    graph: Sequence[Mapping[str, Any]], drafts: Mapping[str, list[_PoolDraft]]
) -> None:
    """GPUs of nodes the NVIDIA device plugin time-slices: its chart's `config.map` names configs
    with `nvidia.com/gpu` replicas; a node picks one with the label
    `nvidia.com/device-plugin.config` (else `config.default`) and advertises GPUs x replicas.
    Existing nodes carry their own count (`NodeTemplate.gpus`): it is multiplied too."""
    for entry in _helm_releases(graph, DEVICE_PLUGIN_CHART):
        config = _map(_map(_map(entry.get("inputs")).get("values")).get("config"))
        replicas = replicas_by_config(config)
        if not replicas:
            continue
        default = str(config.get("default") or "")
        for group in drafts.values():
            for d in group:
                picked = d.node.labels.get(DEVICE_PLUGIN_CONFIG_LABEL, default)
                if d.gpus and picked in replicas and d.provider != "gke":
                    n = replicas[picked]
                    d.gpus *= n
                    d.node = replace(d.node, gpus=d.node.gpus * n) if d.node.gpus else d.node
                    d.more_nodes = tuple(
                        replace(m, gpus=m.gpus * n) if m.gpus else m for m in d.more_nodes
                    )
        return  # one device plugin serves a cluster


def _pools(graph: Sequence[Mapping[str, Any]], out: _Findings) -> list[PoolFacts]:
    drafts: dict[str, list[_PoolDraft]] = {}
    for entry in graph:
        typ = str(entry.get("type", ""))
        if typ == GKE_NODE_POOL:
            draft = _gke_pool(entry, out)
        elif typ == EKS_NODE_GROUP:
            draft = _eks_pool(entry, out)
        elif typ == NODE_PATCH:
            draft = _node_pool(entry, out)
        elif _is(typ, "karpenter.sh", "NodePool"):
            draft = _karpenter_pool(entry, _node_classes(graph), out)
        elif _is(typ, "cloud.google.com", "ComputeClass"):
            draft = _compute_class_pool(entry, out)
        elif typ == AUTOPILOT_POOL:
            draft = _autopilot_pool(entry)
        else:
            continue
        draft.key = f"{typ}::{entry.get('name')}"
        drafts.setdefault(draft.name, []).append(draft)
    _apply_time_slicing(graph, drafts)
    pools = []
    for name in sorted(drafts):
        group = drafts[name]
        known = [d.gpus for d in group if d.gpus is not None]
        gpus = min(known) if known and len(known) == len(group) else None
        mins = [d.min_nodes for d in group]
        maxs = [d.max_nodes for d in group]
        pools.append(
            PoolFacts(
                name=name,
                provider=group[0].provider,
                resources=tuple(sorted(d.resource for d in group)),
                nodes=tuple(n for d in group for n in (d.node, *d.more_nodes)),
                gpus_per_node=gpus,
                gpu=any(d.gpu for d in group),
                accelerator=next((d.accelerator for d in group if d.accelerator), None),
                min_nodes=None if None in mins else sum(m for m in mins if m is not None),
                max_nodes=None if None in maxs else sum(m for m in maxs if m is not None),
                spot=all(d.spot for d in group),
                builtin_device_plugin=all(d.builtin_device_plugin for d in group),
                gpu_memory_gib=_least([d.gpu_memory_gib for d in group]),
                node_group=group[0].node_group if len(group) == 1 else None,
                keys=tuple(sorted(d.key for d in group)),
            )
        )
    return pools


def _least(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known and len(known) == len(values) else None


# -- pod templates ------------------------------------------------------------------------------


@dataclass
class _Template:
    type: str
    name: str
    component: str | None
    namespace: str
    fragment: Mapping[str, Any]  # nodeSelector / affinity / tolerations
    containers: list[Mapping[str, Any]]
    init_containers: list[Mapping[str, Any]]
    wired: tuple[str, ...]
    scales_to_zero: bool
    daemonset: bool = False
    serverless: bool = False
    deployment_mode: str | None = None
    max_replicas: int | None = None  # None: unbounded (Knative without maxReplicas) or unknown
    model_annotations: Mapping[str, Any] = field(default_factory=dict)  # where its size is stated
    annotations: Mapping[str, Any] = field(default_factory=dict)  # of the CR / Deployment

    @property
    def resource(self) -> str:
        return _rid(self.type, self.name, self.component)


def _mergo(dst: Any, src: Any) -> Any:
    """Go's `mergo.Merge(dst, src, WithOverride, WithAppendSlice)` on plain data: maps merge key by
    key, lists append, a non-empty scalar of `src` replaces `dst`'s."""
    if isinstance(dst, Mapping) and isinstance(src, Mapping):
        out = dict(dst)
        for k, v in src.items():
            out[k] = _mergo(dst[k], v) if k in dst else v
        return out
    if isinstance(dst, list | tuple) and isinstance(src, list | tuple):
        return [*dst, *src]
    if src is None or src == "" or src == 0 or src is False:
        return dst
    return src


def merge_seldon_pod_specs(server_config: Mapping[str, Any], server: Mapping[str, Any]) -> dict:
    """A Server's effective podSpec: its ServerConfig's podSpec with the Server's merged in, as
    Seldon Core 2's operator does (`mergePodSpecs`): containers merged by name, everything else
    mergo with override and append-slice (nodeSelector keys merge, tolerations append)."""
    merged = dict(
        _mergo(dict(server_config), {k: v for k, v in server.items() if k != "containers"})
    )
    existing = [_map(c) for c in _list(server_config.get("containers"))]
    overrides = [_map(c) for c in _list(server.get("containers"))]
    containers: list[Any] = []
    for o in overrides:
        same = [e for e in existing if e.get("name") == o.get("name")]
        containers += [_mergo(e, o) for e in same] or [o]
    containers += [
        e for e in existing if not any(o.get("name") == e.get("name") for o in overrides)
    ]
    if containers:
        merged["containers"] = containers
    return merged


def _isvc_containers(component: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    containers = [_map(c) for c in _list(component.get("containers"))]
    for key in sorted(component):
        value = component[key]
        if key in _COMPONENT_NON_CONTAINER_KEYS or key == "containers":
            continue
        if isinstance(value, Mapping) and any(m in value for m in _CONTAINER_MARKERS):
            containers.append(value)
    return containers


def _knative_settings(
    graph: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, str] | None, str, bool]:
    """(features or None when the graph has no Knative config, where they are set, scale-to-zero
    allowed). The KnativeServing CR wins over a ConfigMap: the operator reverts ConfigMap edits."""
    operator: tuple[dict[str, str], str] | None = None
    configmap: tuple[dict[str, str], str] | None = None
    scale_to_zero = True
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = _map(entry.get("inputs"))
        if _is(typ, "operator.knative.dev", "KnativeServing"):
            config = _map(_map(inputs.get("spec")).get("config"))
            features = _str_map(config.get("features"))
            operator = (
                {**(operator[0] if operator else {}), **features},
                f"spec.config.features of KnativeServing {entry.get('name')}",
            )
            autoscaler = _str_map(config.get("autoscaler"))
            if autoscaler.get("enable-scale-to-zero", "").lower() == "false":
                scale_to_zero = False
        elif typ in ("kubernetes:core/v1:ConfigMapPatch", "kubernetes:core/v1:ConfigMap"):
            md = _metadata(inputs)
            if md.get("namespace") not in (None, "knative-serving"):
                continue
            data = _str_map(inputs.get("data"))
            if md.get("name") == "config-features":
                configmap = (
                    {**(configmap[0] if configmap else {}), **data},
                    f"data of {_kind(typ)} knative-serving/config-features",
                )
            elif (
                md.get("name") == "config-autoscaler"
                and data.get("enable-scale-to-zero", "").lower() == "false"
            ):
                scale_to_zero = False
    chosen = operator or configmap
    if chosen is None:
        return None, "", scale_to_zero
    return chosen[0], chosen[1], scale_to_zero


def _helm_releases(graph: Sequence[Mapping[str, Any]], chart: str) -> list[Mapping[str, Any]]:
    found = []
    for entry in graph:
        if entry.get("type") not in HELM_TYPES:
            continue
        inputs = _map(entry.get("inputs"))
        name = str(inputs.get("chart") or "").rstrip("/").rsplit("/", 1)[-1]
        if name == chart:
            found.append(entry)
    return found


def _kserve_default_mode(graph: Sequence[Mapping[str, Any]]) -> str:
    for chart in KSERVE_CHARTS:
        for entry in _helm_releases(graph, chart):
            values = _map(_map(entry.get("inputs")).get("values"))
            mode = _map(_map(values.get("kserve")).get("controller")).get("deploymentMode")
            if isinstance(mode, str) and mode:
                return mode
    return "Serverless"


def _templates(graph: Sequence[Mapping[str, Any]], scale_to_zero_allowed: bool) -> list[_Template]:
    templates: list[_Template] = []
    default_mode = _kserve_default_mode(graph)
    server_configs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in graph:
        typ = str(entry.get("type", ""))
        if _is(typ, "mlops.seldon.io", "ServerConfig"):
            inputs = _map(entry.get("inputs"))
            sc_name = str(_metadata(inputs).get("name") or entry.get("name"))
            server_configs[(_namespace(inputs), sc_name)] = inputs
    for entry in graph:
        typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
        inputs = _map(entry.get("inputs"))
        md = _metadata(inputs)
        annotations = _map(md.get("annotations"))
        ns = _namespace(inputs)
        spec = _map(inputs.get("spec"))
        if _is(typ, "serving.kserve.io", "InferenceService"):
            mode = str(annotations.get(DEPLOYMENT_MODE_ANNOTATION) or default_mode)
            serverless = mode in SERVERLESS_MODES
            cr_wired = _split_pools(annotations.get(WIRED_POOL_ANNOTATION))
            for comp in ISVC_COMPONENTS:
                component = spec.get(comp)
                if not isinstance(component, Mapping):
                    continue
                own_key = wired_annotation(comp)
                wired = _split_pools(annotations[own_key]) if own_key in annotations else cr_wired
                min_replicas = _int(component.get("minReplicas"))
                min_replicas = 1 if min_replicas is None else min_replicas
                templates.append(
                    _Template(
                        type=typ,
                        name=name,
                        component=comp,
                        namespace=ns,
                        fragment=component,
                        containers=_isvc_containers(component),
                        init_containers=[_map(c) for c in _list(component.get("initContainers"))],
                        wired=wired,
                        scales_to_zero=serverless and min_replicas == 0 and scale_to_zero_allowed,
                        max_replicas=_int(component.get("maxReplicas"))
                        or (None if serverless else max(min_replicas, 1)),
                        model_annotations=annotations if comp == "predictor" else {},
                        annotations=annotations,
                        serverless=serverless,
                        deployment_mode=mode,
                    )
                )
        elif _is(typ, "mlops.seldon.io", "Server"):
            sc_name = str(spec.get("serverConfig") or "")
            sc = server_configs.get((ns, sc_name))
            if sc is None:
                same = [v for (n, s), v in server_configs.items() if s == sc_name]
                sc = same[0] if len(same) == 1 else None
            sc_spec = _map(_map(sc.get("spec")).get("podSpec")) if sc else {}
            pod = merge_seldon_pod_specs(sc_spec, _map(spec.get("podSpec")))
            wired = _split_pools(annotations.get(WIRED_POOL_ANNOTATION))
            if not wired and sc:
                sc_annotations = _map(_metadata(sc).get("annotations"))
                wired = _split_pools(sc_annotations.get(WIRED_POOL_ANNOTATION))
            replicas = _int(spec.get("replicas"))
            templates.append(
                _Template(
                    type=typ,
                    name=name,
                    component=None,
                    namespace=ns,
                    fragment=pod,
                    containers=[_map(c) for c in _list(pod.get("containers"))],
                    init_containers=[_map(c) for c in _list(pod.get("initContainers"))],
                    wired=wired,
                    scales_to_zero=replicas == 0,
                    max_replicas=max(
                        1 if replicas is None else replicas, _int(spec.get("maxReplicas")) or 0
                    ),
                    model_annotations=annotations,
                    annotations=annotations,
                )
            )
        elif typ.startswith("kubernetes:apps/") and _kind(typ) in APPS_KINDS:
            template = _map(spec.get("template"))
            pod_spec = _map(template.get("spec"))
            wired = _split_pools(annotations.get(WIRED_POOL_ANNOTATION)) or _split_pools(
                _map(_metadata(template).get("annotations")).get(WIRED_POOL_ANNOTATION)
            )
            daemonset = _kind(typ) == "DaemonSet"
            replicas = _int(spec.get("replicas"))
            templates.append(
                _Template(
                    type=typ,
                    name=name,
                    component=None,
                    namespace=ns,
                    fragment=pod_spec,
                    containers=[_map(c) for c in _list(pod_spec.get("containers"))],
                    init_containers=[_map(c) for c in _list(pod_spec.get("initContainers"))],
                    wired=wired,
                    scales_to_zero=not daemonset and replicas == 0,
                    max_replicas=None if daemonset else (1 if replicas is None else replicas),
                    model_annotations={
                        **_map(_metadata(template).get("annotations")),
                        **annotations,
                    },
                    annotations=annotations,
                    daemonset=daemonset,
                )
            )
    return templates


_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def _model_size(annotations: Mapping[str, Any]) -> float | None:
    """Weights in GB a workload states: `MODEL_SIZE_ANNOTATION`, or `MODEL_PARAMETERS_ANNOTATION`
    (`8e9`, `8B`, `70B`, `1.5B`) x the bytes of `MODEL_DTYPE_ANNOTATION` (fp16 when absent).
    Raises ValueError for text that is neither (reported as GI013)."""
    size = annotations.get(MODEL_SIZE_ANNOTATION)
    if size is not None:
        value = float(str(size))
        if value <= 0:
            raise ValueError(f"{MODEL_SIZE_ANNOTATION} must be above 0, got {size!r}")
        return value
    params = annotations.get(MODEL_PARAMETERS_ANNOTATION)
    if params is None:
        return None
    text = str(params).strip().upper()
    unit = text[-1] if text[-1:] in _SCALE and not text[-1:].isdigit() else ""
    count = float(text[: len(text) - len(unit)]) * _SCALE[unit]
    dtype = str(annotations.get(MODEL_DTYPE_ANNOTATION, "fp16")).strip().lower()
    if dtype not in DTYPE_BYTES:
        raise ValueError(
            f"{MODEL_DTYPE_ANNOTATION} {dtype!r} is not known (allowed: {', '.join(DTYPE_BYTES)})"
        )
    return round(count * DTYPE_BYTES[dtype] / 1e9, 3)


def _resource_quantity(container: Mapping[str, Any], resource: str) -> Any:
    res = _map(container.get("resources"))
    requests, limits = _map(res.get("requests")), _map(res.get("limits"))
    return requests.get(resource, limits.get(resource))


def _gpus(template: _Template) -> int:
    """GPUs the pod needs: containers summed, or the largest init container, whichever is more.
    Raises InputError for a quantity Kubernetes would refuse."""

    def count(c: Mapping[str, Any]) -> int:
        q = _resource_quantity(c, GPU_RESOURCE)
        if q is None:
            return 0
        return int(parse_quantity(q).to_integral_value(rounding=ROUND_CEILING))

    main = sum(count(c) for c in template.containers)
    init = max((count(c) for c in template.init_containers), default=0)
    return max(main, init)


def _extended_resources(template: _Template) -> list[str]:
    names: set[str] = set()
    for c in [*template.containers, *template.init_containers]:
        res = _map(c.get("resources"))
        for part in ("requests", "limits"):
            names.update(str(k) for k in _map(res.get(part)))
    return sorted(names)


# -- device plugins -----------------------------------------------------------------------------


def _tolerations(items: Any) -> tuple[Toleration, ...]:
    return tuple(Toleration.from_dict(_map(t)) for t in _list(items))


def _device_plugins(
    graph: Sequence[Mapping[str, Any]], out: _Findings
) -> list[tuple[str, list[tuple[str, tuple[Toleration, ...]]]]]:
    """Each device plugin in the graph: (resource, [(part, tolerations)]) where the parts are the
    DaemonSets that must all run on a GPU node (the plugin, and NFD's worker when deployed)."""
    plugins = []
    for entry in _helm_releases(graph, DEVICE_PLUGIN_CHART):
        rid = _rid(str(entry["type"]), str(entry["name"]))
        values = _map(_map(entry.get("inputs")).get("values"))
        try:
            parts = [
                (
                    "device plugin",
                    _tolerations(values["tolerations"])
                    if "tolerations" in values
                    else DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
                )
            ]
            nfd = _map(values.get("nfd"))
            nfd_on = nfd.get("enabled")
            if nfd_on is None:
                nfd_on = _map(values.get("gfd")).get("enabled")
            if nfd_on is True:
                worker = _map(nfd.get("worker"))
                parts.append(
                    (
                        "NFD worker",
                        _tolerations(worker["tolerations"])
                        if "tolerations" in worker
                        else NFD_WORKER_DEFAULT_TOLERATIONS,
                    )
                )
        except (InputError, TypeError, ValueError) as e:
            out.add("GI013", rid, f"invalid toleration in the chart values: {e}", "fix it")
            continue
        plugins.append((rid, parts))
    for entry in graph:
        typ = str(entry.get("type", ""))
        if not (typ.startswith("kubernetes:apps/") and _kind(typ) == "DaemonSet"):
            continue
        inputs = _map(entry.get("inputs"))
        pod = _map(_map(_map(inputs.get("spec")).get("template")).get("spec"))
        names = [str(entry.get("name", "")), str(_metadata(inputs).get("name") or "")]
        names += [str(_map(c).get("image") or "") for c in _list(pod.get("containers"))]
        if not any(m in n for n in names for m in _DEVICE_PLUGIN_MARKERS):
            continue
        rid = _rid(typ, str(entry["name"]))
        try:
            plugins.append((rid, [("device plugin", _tolerations(pod.get("tolerations")))]))
        except (InputError, TypeError, ValueError):
            continue  # reported with the DaemonSet's own workload finding (GI013)
    return sorted(plugins, key=lambda p: p[0])
