"""Fit: whether a pod's requests fit a node of the pools it can land on (GI021, GI022, GI024), and
the device rules of shared GPUs (GI023, GI025).

The pod's requests are what kube-scheduler sums (`model.serving.requests.pod_requests`) over the
containers it will really have: the template's, and what the controllers add (Knative's
queue-proxy in Serverless InferenceService pods; KServe's storage-initializer init container for
a `storageUri` it downloads, its modelcar sidecar and init container for an `oci://` one, its
agent sidecar for a component with a logger or a batcher; for a Seldon Server on Seldon's own
ServerConfig, its rclone and agent containers, merged by the Seldon reader). Each pool's nodes are judged one by one: a pod
lands on a node that lets it in (labels, taints), has its GPUs and holds the rest of its
requests. GPUs stay with GI004 (placement); a node whose shape is unknown is given the benefit
(GI022 says fit was not judged there).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from decimal import ROUND_CEILING
from typing import TYPE_CHECKING, Any

from ..model.errors import InputError
from ..model.nodes.shapes import (
    RESOURCE_NAMES,
    NodeShape,
    Resources,
    disk_to_hold,
    format_apart,
    format_resource,
    larger_to_hold,
)
from ..model.scheduling import GPU_RESOURCE, Placement, parse_quantity
from ..model.serving.requests import (
    container_requests,
)
from .pod import resource_quantity
from .read import Findings, Template, as_map, is_type
from .results import NodeTemplate, PoolFacts, WorkloadFacts
from .shapes import fit_key

if TYPE_CHECKING:
    from .rules import CheckContext, PodContext

GB = 1_000_000_000


def storage_uri(t: Template) -> str | None:
    """The `storageUri` KServe's storage-initializer downloads for this component, if any."""
    return t.storage_uri


def pod_containers(
    t: Template,
) -> tuple[tuple[Mapping[str, Any], ...], tuple[Mapping[str, Any], ...], tuple[str, ...]]:
    """(containers, init containers, names of those a controller adds) of the template's pods."""
    return t.pod_containers


def pod_ask(t: Template) -> Resources:
    """What the template's pods ask a node for. Raises InputError for a bad quantity."""
    return t.ask


def admitting_nodes(pool: PoolFacts, placement: Placement, gpus: int) -> list[NodeTemplate]:
    """The pool's nodes that let the pod in and have its GPUs."""
    return [
        n
        for n in pool.nodes
        if placement.admits(n.labels, n.taints, n.name) and pool.node_fits(n, gpus)
    ]


def _without_gpus(ask: Resources) -> Resources:
    return replace(ask, gpus=0)


# ---------------------------------------------------------------------------------------------
# The judgement
# ---------------------------------------------------------------------------------------------


def fits(ctx: PodContext) -> None:
    """GI021, GI023, GI024, GI025 for the pod, decided once per shape (`shapes.Shapes.fit`);
    its requests and the pools it cannot fit go into `ctx.facts` for the rules after it."""
    t, check = ctx.template, ctx.check
    ctx.facts = check.shapes.fit(
        functools.partial(
            fit_key, t, ctx.placement, ctx.gpus, ctx.facts.model_size_gb, ctx.use.any
        ),
        ctx.facts,
        ctx.out,
        check.unknown_fit,
        functools.partial(
            judge_fit,
            t,
            ctx.facts,
            ctx.placement,
            ctx.admitted,
            ctx.pools,
            launched=functools.partial(check.scale.launches_for, t, ctx.placement),
        ),
    )


def node_holds(t: Template, need: Resources, node: NodeTemplate) -> bool:
    """The node (of known shape) holds the pod beside its DaemonSets. A DaemonSet's own pod
    holds room on the node when it fits what the DaemonSets before it left
    (`model.nodes.daemonsets.daemon_overhead`)."""
    room = node.room
    assert room is not None
    if t.daemonset:
        if any(d.name == t.resource for d in node.daemons.pending):
            return False
        if node.daemons.holds(t.resource):
            return True
    return need.fits_in(room)


def judge_fit(
    t: Template,
    w: WorkloadFacts,
    placement: Placement,
    admitted: Sequence[PoolFacts],
    pools: Sequence[PoolFacts],
    out: Findings,
    unknown: dict[str, list[str]],
    launched: Callable[[PoolFacts], bool] | None = None,
) -> WorkloadFacts:
    """The workload with its requests and the pools it cannot fit; the findings GI021 / GI023 /
    GI024 / GI025 for it; `unknown` collects pool -> workloads judged without a shape (GI022).
    A node holds the pod when what its allocatable leaves beside the node's DaemonSet pods
    (`NodeTemplate.room`) holds it. `launched(pool)`: Karpenter launches a node for the pod from
    the pool (`scaleup.ScaleUp.launches_for`): it picks an instance type that holds the pod and
    its DaemonSets, with the labels the pod selects, which the pool's node templates may lack
    (found by the Karpenter differential: a required term that only the launched node meets)."""
    try:
        ask = pod_ask(t)
    except (InputError, TypeError, ValueError) as e:
        out.add(
            "GI013",
            w.resource,
            f"its pod spec is not valid Kubernetes: {e}",
            "fix the cpu / memory / ephemeral-storage quantity named",
        )
        return w
    check_shared_gpus(t, w, admitted, out)
    check_mps_host_ipc(t, w, admitted, out)
    need = _without_gpus(ask)
    nodes_of: list[tuple[PoolFacts, NodeTemplate]] = []
    unfit = []
    judged = True  # every node it can land on has a known shape
    for pool in admitted:
        nodes = admitting_nodes(pool, placement, w.gpus)
        if not nodes:
            # Admitted by what Karpenter would launch for it (a zone, one value of a NodePool
            # key): its requests are judged there (GI026).
            continue
        known = [n for n in nodes if n.shape is not None]
        if len(known) < len(nodes):
            unknown.setdefault(pool.name, []).append(w.resource)
            judged = False
            continue
        nodes_of += [(pool, n) for n in known]
        if not any(node_holds(t, need, n) for n in known) and not (
            launched is not None and launched(pool)
        ):
            unfit.append(pool.name)
    w = replace(w, requests=ask, unfit=tuple(unfit))
    disk_full = judged and check_model_disk(t, w, nodes_of, out)
    # A DaemonSet's controller makes its pod for every node it tolerates, whatever the pod asks
    # (pkg/controller/daemon checks labels and taints): on a pool it does not fit, it is Pending.
    if t.daemonset and unfit:
        nodes_of = [(p, n) for p, n in nodes_of if p.name in unfit]
    elif not admitted or len(unfit) < len(admitted):
        return w
    if disk_full:
        need = replace(need, ephemeral_storage=0)  # said by GI024
        if any(need.fits_in(_room(n)) for _, n in nodes_of):
            return w
    _report_misfit(t, w, need, nodes_of, pools, out)
    return w


def _room(node: NodeTemplate) -> Resources:
    room = node.room
    assert room is not None
    return room


def _shape(node: NodeTemplate) -> NodeShape:
    assert node.shape is not None
    return node.shape


def _report_misfit(
    t: Template,
    w: WorkloadFacts,
    need: Resources,
    nodes: Sequence[tuple[PoolFacts, NodeTemplate]],
    pools: Sequence[PoolFacts],
    out: Findings,
) -> None:
    """GI021: name the resource, what it asks, the largest allocatable and its shape, and what
    the node's DaemonSets hold of it."""
    most = {r: max(_room(n).get(r) for _, n in nodes) for r in RESOURCE_NAMES.values()}
    resource = next((r for r in RESOURCE_NAMES.values() if need.get(r) > most[r]), None)
    added = pod_containers(t)[2]
    extra = f" (with {', '.join(added)})" if added else ""
    if resource is not None:
        pool, best = max(nodes, key=lambda pn: _room(pn[1]).get(resource))
        asked, held = format_apart(resource, need.get(resource), _room(best).get(resource))
        largest = (
            "the most a node leaves it beside its DaemonSets is"
            if best.daemons.total.get(resource)
            else "the largest allocatable is"
        )
        detail = (
            f"asks {asked} {resource} in all ({_breakdown(t, resource)}) but {largest} {held} "
            f"({_shape(best).name}, pool {pool.name}{_daemons_note(best, resource)})"
        )
    else:
        parts = []
        for pool, n in nodes:
            r = need.first_misfit(_room(n)) or "cpu"
            parts.append(
                f"{_shape(n).name} (pool {pool.name}) has {format_resource(r, _room(n).get(r))} "
                f"{r}{_daemons_note(n, r)}"
            )
        detail = f"asks {_describe(need)}{extra} and no node holds all of it: " + "; ".join(
            dict.fromkeys(parts)
        )
    out.add(
        "GI021",
        w.resource,
        f"fits no node of the pool(s) it can land on: it {detail}; it stays Pending",
        _fit_fix(need, nodes, pools, resource),
    )


def _daemons_note(node: NodeTemplate, resource: str) -> str:
    """`: 4 allocatable less 125m for its DaemonSets kube-proxy 100m, aws-node 25m` (empty when
    they hold none of `resource`)."""
    held = node.daemons.total.get(resource)
    if not held:
        return ""
    return (
        f": {format_resource(resource, _shape(node).allocatable.get(resource))} allocatable less "
        f"{format_resource(resource, held)} for its DaemonSets {node.daemons.describe(resource)}"
    )


def _breakdown(t: Template, resource: str) -> str:
    """Who asks for `resource`: `mlserver 40, agent 200m, rclone 50m`."""
    containers, inits, _ = pod_containers(t)
    parts = []
    for c in [*containers, *inits]:
        try:
            amount = container_requests(c).get(resource)
        except (InputError, TypeError, ValueError):
            continue
        if amount:
            parts.append((amount, f"{c.get('name') or '?'} {format_resource(resource, amount)}"))
    return ", ".join(text for _, text in sorted(parts, key=lambda p: -p[0]))


def _describe(need: Resources) -> str:
    return ", ".join(
        f"{format_resource(k, v)} {k}" for k, v in need.items() if v and k not in ("pods",)
    )


def _fit_fix(
    need: Resources,
    nodes: Sequence[tuple[PoolFacts, NodeTemplate]],
    pools: Sequence[PoolFacts],
    resource: str | None,
) -> str:
    """One line: a disk, a machine / instance type, or a pool of the graph that would hold it
    (beside the same DaemonSets)."""
    fixes = []
    disk_only = all(replace(need, ephemeral_storage=0).fits_in(_room(n)) for _, n in nodes)
    seen: set[str] = set()
    for pool, n in nodes:
        if pool.name in seen:
            continue
        seen.add(pool.name)
        s = _shape(n)
        with_daemons = need + n.daemons.total
        if disk_only:
            size = disk_to_hold(s, with_daemons)
            if size is not None:
                unit = "GB" if s.kind == "gke" else "GiB"
                fixes.append(f"give pool {pool.name} a boot disk of {size} {unit}")
                continue
        bigger = larger_to_hold(s, replace(with_daemons, ephemeral_storage=0))
        if bigger is not None:
            unit = "GB" if s.kind == "gke" else "GiB"
            disk = (
                None
                if with_daemons.fits_in(bigger.allocatable)
                else disk_to_hold(bigger, with_daemons)
            )
            with_disk = f" with a boot disk of {disk} {unit}" if disk else ""
            fixes.append(f"use {bigger.name}{with_disk} for pool {pool.name}")
    landing = {p.name for p, _ in nodes}
    others = [
        p.name
        for p in pools
        if p.name not in landing
        and any(n.room is not None and need.fits_in(n.room) for n in p.nodes)
    ]
    if others:
        fixes.append(f"wire it to pool {others[0]}")
    if resource is not None:
        most = max(_room(n).get(resource) for _, n in nodes)
        fixes.append(f"ask at most {format_resource(resource, most)} {resource} in all")
    return ", or ".join(fixes) if fixes else "lower its requests"


# -- GI024: the model does not fit on the node's disk -------------------------------------------


def check_model_disk(
    t: Template,
    w: WorkloadFacts,
    nodes: Sequence[tuple[PoolFacts, NodeTemplate]],
    out: Findings,
) -> bool:
    """A predictor (or an LLMInferenceService vLLM pod with an hf:// / s3:// model: KServe's
    storage-initializer downloads it into an emptyDir too) whose model size is above the
    ephemeral storage every node it can land on leaves allocatable (beside its DaemonSets): the
    storage-initializer's download fills the disk (the kubelet evicts the pod, or the scheduler
    never places its ephemeral-storage request). True when reported."""
    downloads = storage_uri(t) is not None or (t.llm is not None and t.llm.downloads)
    if w.model_size_gb is None or not nodes or not downloads:
        return False
    size = int(w.model_size_gb * GB)
    most = max(_room(n).ephemeral_storage for _, n in nodes)
    if size <= most:
        return False
    pool, node = max(nodes, key=lambda pn: _room(pn[1]).ephemeral_storage)
    best = _shape(node)
    disk = disk_to_hold(best, Resources(ephemeral_storage=size) + node.daemons.total)
    unit = "GB" if best.kind == "gke" else "GiB"
    fix = (
        f"give pool {pool.name} a boot disk of at least {disk} {unit} ({disk_key(pool)})"
        if disk is not None
        else "serve the weights from a PVC (pvc://) or a modelcar (oci://) instead"
    )
    out.add(
        "GI024",
        w.resource,
        f"its model ({w.model_size_gb:g} GB) is downloaded to the node's ephemeral storage, but "
        f"the most any node it can land on leaves allocatable is "
        f"{format_resource('ephemeral-storage', most)} ({best.name}, pool {pool.name})",
        fix,
    )
    return True


def disk_key(pool: PoolFacts) -> str:
    """The stack config key of the pool's boot disk: a ComputeClass's is under `computeClass:`
    (its node pool keys, `diskSizeGb` among them, are refused), an AKS pool's (agent pool or node
    auto-provisioning) is its OS disk."""
    if any(
        is_type(key.rsplit("::", 1)[0], "cloud.google.com", "ComputeClass") for key in pool.keys
    ):
        return "computeClass.bootDiskSizeGb"
    return "osDiskSizeGb" if pool.provider == "aks" else "diskSizeGb"


# -- GI023: more than one shared GPU in a container ---------------------------------------------


def _container_gpus(c: Mapping[str, Any]) -> int:
    q = resource_quantity(c, GPU_RESOURCE)
    if q is None:
        return 0
    return int(parse_quantity(q).to_integral_value(rounding=ROUND_CEILING))


def check_shared_gpus(
    t: Template, w: WorkloadFacts, admitted: Sequence[PoolFacts], out: Findings
) -> None:
    """A container asking more than one `nvidia.com/gpu` on a pool whose GPUs are shares: GKE's
    device plugin fails it at admission (UnexpectedAdmissionError "at most 1 nvidia.com/gpu can
    be requested on GPU nodes"; MPS only on nodes with several physical GPUs), the NVIDIA device
    plugin fails it with MPS or `failRequestsGreaterThanOne`, and otherwise hands out replicas
    that may all be the same GPU."""
    shared = [
        p
        for p in admitted
        if p.shared_gpus is not None
        and not (p.shared_gpus.by == "GKE" and not p.shared_gpus.refuses_more_than_one)
    ]
    if not shared:
        return
    containers, inits, _ = pod_containers(t)
    asking = [
        (str(c.get("name") or "?"), n)
        for c in [*containers, *inits]
        if (n := _container_gpus(c)) > 1
    ]
    if not asking:
        return
    name, n = asking[0]
    pool = shared[0]
    how = pool.shared_gpus
    assert how is not None
    outcome = (
        "it fails at admission (UnexpectedAdmissionError)"
        if how.refuses_more_than_one
        else "the plugin hands out replicas that may all be one physical GPU"
    )
    out.add(
        "GI023",
        w.resource,
        f"container {name} asks {n} nvidia.com/gpu on pool {pool.name}, whose GPUs are shared "
        f"({how.describe()}): at most 1 per container, else {outcome}",
        "ask 1 nvidia.com/gpu per container (run more replicas), or use a pool without GPU sharing",
    )


# -- GI025: MPS without hostIPC -----------------------------------------------------------------


def check_mps_host_ipc(
    t: Template, w: WorkloadFacts, admitted: Sequence[PoolFacts], out: Findings
) -> None:
    """A GPU pod on a GKE MPS pool without `hostIPC: true`. GKE's device plugin mounts only the
    MPS pipe directory (/tmp/nvidia-mps) into the container, not the control daemon's shared
    memory, so the CUDA client reaches the daemon only through the host's IPC namespace
    (GoogleCloudPlatform/container-engine-accelerators @992db81 `pkg/gpu/nvidia/manager.go`;
    NVIDIA's own plugin mounts the daemon's shm instead, k8s-device-plugin v0.17.1
    `internal/plugin/mps.go`). GKE's "Share GPUs with NVIDIA MPS" page sets `hostIPC: true` in
    its workload; we could read it only in a secondary copy."""
    if w.gpus == 0 or t.fragment.get("hostIPC") is True:
        return
    mps = [
        p.name
        for p in admitted
        if p.shared_gpus is not None
        and p.shared_gpus.by == "GKE"
        and p.shared_gpus.strategy == "mps"
    ]
    if mps:
        out.add(
            "GI025",
            w.resource,
            f"can land on GKE MPS pool(s) {', '.join(mps)} without hostIPC: true: its CUDA "
            "client cannot reach the node's MPS control daemon",
            "set hostIPC: true in its pod spec (a Serverless InferenceService also needs the "
            "Knative feature kubernetes.podspec-hostipc enabled)",
        )


# -- GI022: fit not judged ----------------------------------------------------------------------


def fit_unknown(ctx: CheckContext) -> None:
    """GI022: pools with a node of unknown shape that pods land on: fit is not judged there."""
    for pool in ctx.pools:
        workloads = ctx.unknown_fit.get(pool.name)
        if not workloads:
            continue
        why = pool.shape_note or "its nodes' shape is unknown"
        fix = (
            "declare what the nodes hold (pools[].nodeAllocatable, the NodePatch annotation "
            "gpu-inference.dev/allocatable)"
            if pool.provider == "existing"
            else "use a machine / instance type the catalog knows, or check the fit by hand"
        )
        ctx.out.add(
            "GI022",
            pool.resource,
            f"fit of {', '.join(sorted(set(workloads)))} on pool {pool.name} is not judged: {why}",
            fix,
        )


# -- GI066: a request above its limit -----------------------------------------------------------


def requests_above_limits(ctx: PodContext) -> None:
    """A container whose request for a resource is above its limit: the API server refuses the
    pod (kubernetes pkg/apis/core/validation/validation.go ValidateResourceRequirements: "must be
    less than or equal to ... limit"), so its controller never makes one. KServe gives a model's,
    custom, transformer or explainer container without a limit its defaults' (cpu 1, memory 2Gi),
    which a request above them contradicts (kserve v0.20.0 inference_service_defaults.go
    setResourceRequirementDefaults)."""
    containers, inits, _ = pod_containers(ctx.template)
    for c in [*containers, *inits]:
        res = as_map(as_map(c).get("resources"))
        requests, limits = as_map(res.get("requests")), as_map(res.get("limits"))
        for name in sorted(set(requests) & set(limits)):
            try:
                asked, limit = parse_quantity(requests[name]), parse_quantity(limits[name])
            except InputError:
                continue  # an unreadable quantity is GI013's
            if asked > limit:
                ctx.check.out.add(
                    "GI066",
                    ctx.facts.resource,
                    f"container {c.get('name') or '?'} requests {requests[name]} {name} above its "
                    f"limit {limits[name]} (a limit KServe gives a container that sets none is "
                    "its defaults', cpu 1 / memory 2Gi): the API server refuses the pod, so none "
                    "ever runs",
                    f"give the container a {name} limit at or above its request",
                )
                return
