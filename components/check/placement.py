"""The placement rules: where a pod can land by labels, taints and GPU counts (kube-scheduler's
filters) against where it is wired and what it asks (GI001-GI004, GI009, GI011), the Knative
flags a Serverless pod's scheduling fields need (GI005, GI006), the pools' own (a pool at 0 nodes
pinned up: GI008; a GPU pool's device plugin: GI007, GI012), and where Seldon Core 2's scheduler
places a Model (GI010, GI018: docs-gb/models/scheduling.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..model.errors import InputError
from ..model.scheduling import (
    FILTERING_EFFECTS,
    GPU_RESOURCE,
    Placement,
    Taint,
    extended_resource_tolerations,
    parse_quantity,
    untolerated,
)
from ..model.serving.knative_features import POD_FIELD_FLAGS
from .aks import without_driver
from .contract import (
    DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
    GKE_GPU_TAINT,
    POOL_LABEL,
    SELDON_CAPABILITIES_ENV,
    SELDON_DEFAULT_CAPABILITIES,
    SELDON_DEFAULT_OVERCOMMIT,
    SELDON_OVERCOMMIT_ENV,
    SELDON_SERVER_CHARTS,
    SELDON_SERVER_CONTAINERS,
)
from .dra import is_dra_pool
from .failures import never_has_nodes
from .read import (
    Findings,
    as_int,
    as_list,
    as_map,
    helm_releases,
    is_type,
    metadata,
    namespace_of,
    resource_id,
)
from .readers.daemonsets import device_plugins
from .readers.seldon import merge_seldon_pod_specs
from .registry.kinds import pool_kinds
from .results import PoolFacts

if TYPE_CHECKING:
    from .rules import CheckContext, PodContext


def _names(items: Iterable[str]) -> str:
    items = list(items)
    return ", ".join(items) if items else "none"


def _reasons(ctx: PodContext, pool: PoolFacts) -> str:
    return "; ".join(pool.why_not(ctx.placement, ctx.facts.gpus)) or "refused"


def _wired_detail(ctx: PodContext, names: Iterable[str]) -> str:
    by_name = ctx.check.pool_by_name
    return "; ".join(
        f"pool {n}: {_reasons(ctx, by_name[n]) if n in by_name else 'not in the graph'}"
        for n in names
    )


def no_pool(ctx: PodContext) -> None:
    """GI001. Pools its nodeSelector / required affinity picks by label: when none of them admits
    it, the pod stays Pending whatever it requests and whether or not it is wired (a cluster node
    outside the graph cannot help: it would need the labels of a pool in the graph). The
    DaemonSet controller makes no pod for a node the pod does not fit: nothing Pending. A pod
    that lands once GPU / node feature discovery has labelled a node is GI014's."""
    w, selected = ctx.facts, ctx.selected
    stuck = not ctx.admitted and not ctx.placed and not ctx.template.daemonset and not ctx.booting
    if not stuck or not (w.gpus > 0 or w.wired or selected):
        return
    if w.wired:
        detail = _wired_detail(ctx, w.wired)
        message = f"wired to {_names(w.wired)} but can land on no pool ({detail})"
        missing = [n for n in w.wired if n not in ctx.check.pool_by_name]
        fix = (
            f"give it the placement of pool {w.wired[0]} (select its labels, tolerate its taints)"
            if not missing
            else f"wire it to a pool the graph has ({_names(p.name for p in ctx.pools)})"
        )
    elif selected:
        detail = "; ".join(f"pool {p.name}: {_reasons(ctx, p)}" for p in selected)
        message = (
            f"selects pool(s) {_names(p.name for p in selected)} by label but none admits "
            f"it ({detail}): it stays Pending"
        )
        fix = _admit_fix(selected, ctx.placement, w.gpus)
    else:
        detail = "; ".join(f"pool {p.name}: {_reasons(ctx, p)}" for p in ctx.pools if p.gpu)
        message = f"requests {w.gpus} GPU(s) but can land on no pool" + (
            f" ({detail})" if detail else ": the graph has no GPU pool"
        )
        fix = "select a GPU pool's labels and tolerate its taints (or add a GPU pool)"
    ctx.out.add("GI001", w.resource, message, fix)


def _admit_fix(selected: list[PoolFacts], placement: Placement, gpus: int) -> str:
    """One line: what would let the pod onto the pools it selects."""
    taints = sorted(
        {str(t) for p in selected for t in untolerated(p.taints, placement.tolerations or ())}
    )
    fixes = []
    if taints:
        fix = f"tolerate {_names(taints)}"
        if gpus == 0 and any(p.gpu for p in selected):
            fix += " and request nvidia.com/gpu (a GPU pool is for GPU pods)"
        fixes.append(fix)
    if any(not p.fits(gpus) for p in selected):
        most = max(p.gpus_per_node or 0 for p in selected)
        fixes.append(f"request at most {most} GPU(s)")
    fixes.append("or select the labels of a pool it may run on")
    return ", ".join(fixes[:-1]) + (" " if len(fixes) > 1 else "") + fixes[-1]


def wrong_pool(ctx: PodContext) -> None:
    """GI002: a wired pod that can also land on a pool it is not wired to."""
    w = ctx.facts
    extra = [p.name for p in ctx.admitted if p.name not in w.wired]
    if w.wired and extra:
        ctx.out.add(
            "GI002",
            w.resource,
            f"wired to {_names(w.wired)} but can also land on {_names(extra)}",
            f"select a label only {_names(w.wired)} has (e.g. {POOL_LABEL}) and drop "
            f"tolerations that let it onto {_names(extra)}",
        )


def wired_pool_unreachable(ctx: PodContext) -> None:
    """GI011: a pod that lands somewhere but not on every pool it is wired to."""
    w = ctx.facts
    names = [p.name for p in ctx.admitted]
    unreachable = [n for n in w.wired if n not in names]
    if ctx.admitted and unreachable:
        ctx.out.add(
            "GI011",
            w.resource,
            f"wired to {_names(w.wired)} but cannot land on {_names(unreachable)} "
            f"({_wired_detail(ctx, unreachable)})",
            "add the selector term and tolerations of every pool it is wired to",
        )


def too_many_gpus(ctx: PodContext) -> None:
    """GI004. A DaemonSet too: its controller checks labels and taints, not resources
    (pkg/controller/daemon `predicates`), so the pod is made and stays Pending. Judged on the
    nodes that let it in, not the pool's headline count: in a pool of existing nodes with
    unequal GPUs, the pod may get only onto the small ones."""
    w, placed = ctx.facts, ctx.placed
    if not placed or ctx.admitted:
        return
    counts = {p.name: p.most_gpus_admitting(ctx.placement) or 0 for p in placed}
    most = max(counts.values())
    if w.gpus <= most:
        return
    sizes = ", ".join(f"{name}: {n}" for name, n in counts.items())
    dra_pools = sorted(p.name for p in placed if is_dra_pool(p))
    why = (
        f"; {_names(dra_pools)}: DRA, whose GPUs are taken by claim (no nvidia.com/gpu)"
        if dra_pools
        else ""
    )
    ctx.out.add(
        "GI004",
        w.resource,
        f"requests {w.gpus} GPU(s) per pod but the nodes it can land on have fewer "
        f"({sizes}{why}): it stays Pending",
        f"request at most {most} GPU(s) or wire it to a pool with {w.gpus}+ GPUs per node"
        + (" (on a DRA pool: claim them, resourceClaims)" if dra_pools else ""),
    )


def _filtering(taints: Iterable[Taint]) -> list[Taint]:
    return [t for t in taints if t.effect in FILTERING_EFFECTS]


def cpu_on_gpu_pool(ctx: PodContext) -> None:
    """GI003: a pod asking no GPU (nor devices by claim) that can land on a GPU pool."""
    w = ctx.facts
    gpu_pools = [p for p in ctx.admitted if p.gpu]
    if ctx.template.daemonset or w.gpus != 0 or not gpu_pools or ctx.use.any:
        return
    untainted = [p.name for p in gpu_pools if not _filtering(p.taints)]
    tolerated = [p for p in gpu_pools if _filtering(p.taints)]
    fixes = []
    if tolerated and any(x.is_wildcard for x in ctx.placement.tolerations or ()):
        fixes.append("drop its wildcard toleration (operator Exists, no key)")
    elif tolerated:
        taints = sorted({str(x) for p in tolerated for x in _filtering(p.taints)})
        fixes.append(f"drop its toleration for {_names(taints)} or select a CPU pool")
    if untainted:
        fixes.append(
            f"taint {_names(untainted)} (e.g. {GKE_GPU_TAINT}) so only GPU pods land there"
        )
    ctx.out.add(
        "GI003",
        w.resource,
        f"requests no GPU but can land on GPU pool(s) {_names(p.name for p in gpu_pools)}, "
        "keeping a GPU node up",
        "; ".join(fixes),
    )


def wildcard_toleration(ctx: PodContext) -> None:
    """GI009: GPU pools it lands on only thanks to a toleration with no key."""
    placement = ctx.placement
    wild = [x for x in placement.tolerations or () if x.is_wildcard]
    gpu_pools = [p for p in ctx.admitted if p.gpu]
    if ctx.template.daemonset or not wild or not gpu_pools:
        return
    tame = Placement(
        placement.node_selector,
        [x for x in placement.tolerations or () if not x.is_wildcard],
        placement.node_affinity,
    )
    only_wild = [p.name for p in gpu_pools if not p.admits(tame)]
    if only_wild:
        ctx.out.add(
            "GI009",
            ctx.facts.resource,
            f"a toleration with operator Exists and no key lets it onto GPU pool(s) "
            f"{_names(only_wild)}",
            "replace the wildcard toleration with tolerations for the taints it needs",
        )


def knative_flags(ctx: PodContext) -> None:
    """GI005 / GI006: a Serverless InferenceService's scheduling fields against the Knative flags
    that let its webhook take them."""
    t, base = ctx.template, ctx.base
    needed = [POD_FIELD_FLAGS[f] for f in sorted(base.uses)]
    if not t.serverless or not needed:
        return
    features, where = ctx.check.knative_features, ctx.check.knative_where
    if features is None:
        ctx.out.add(
            "GI006",
            t.resource,
            f"Serverless InferenceService uses {_names(sorted(base.uses))}, which need the Knative "
            f"features {_names(needed)}; the graph has no Knative config (KnativeServing or "
            "config-features), so the cluster's Knative must enable them",
            "enable them in the cluster's Knative (kubectl edit configmap config-features -n "
            "knative-serving) or install Knative from this program",
        )
        return
    off = [f for f in needed if features.get(f, "disabled").strip().lower() != "enabled"]
    if off:
        given = ", ".join(f"{f}={features.get(f, 'disabled (default)')}" for f in off)
        ctx.out.add(
            "GI005",
            t.resource,
            f"Serverless InferenceService sets {_names(sorted(base.uses))} but {given} in "
            f"{where}: Knative's webhook rejects it",
            f'set {_names(off)} to "enabled" in {where}, or use deploymentMode RawDeployment',
        )


def never_scales_to_zero(ctx: CheckContext) -> None:
    """GI008: a pool that can be at 0 nodes, pinned up by workloads that never scale to zero (a
    pool that never has a node is GI034's)."""
    for pool in ctx.pools:
        if pool.min_nodes != 0 or never_has_nodes(pool):
            continue
        staying = [w for w in ctx.lands_on[pool.name] if not w.scales_to_zero and not w.daemonset]
        if staying:
            ctx.out.add(
                "GI008",
                pool.resource,
                f"pool {pool.name} has min 0 nodes but hosts workloads that never scale to "
                f"zero: {_names(sorted(w.resource for w in staying))}",
                never_scales_fix(pool_kinds(pool, ctx.entry_by_key), {w.kind for w in staying}),
            )


# Pools whose autoscaler has no minimum of nodes: gpu-inference refuses `minNodes` on them.
_NO_MINIMUM = {
    "karpenter": "Karpenter has no minimum of nodes (minNodes is refused on a Karpenter pool)",
    "auto_mode": "Karpenter has no minimum of nodes (minNodes is refused on a Karpenter pool)",
    "nap": "Karpenter has no minimum of nodes (minNodes is refused on a node auto-provisioning "
    "pool)",
    "compute_class": "a ComputeClass has no minimum of nodes (GKE creates its node pools; "
    "minNodes is refused on it)",
    "autopilot": "Autopilot has no minimum of nodes (it makes a node per pod)",
}


def never_scales_fix(pool_kind: Sequence[str], kinds: set[str]) -> str:
    """GI008's fix for the pool's kind and the workloads that keep it up: scale to zero only for
    InferenceServices (Serverless, minReplicas 0; an LLMInferenceService needs minReplicas >= 1,
    RawDeployment and the other kinds never scale to zero); a minimum only where the pool has
    one."""
    fixes = []
    if "InferenceService" in kinds:
        fixes.append("let the InferenceServices scale to zero (Serverless, with minReplicas 0)")
    no_minimum = next((_NO_MINIMUM[k] for k in pool_kind if k in _NO_MINIMUM), None)
    if no_minimum is None:
        fixes.append("give the pool the minimum of nodes they keep busy (minNodes)")
        return " or ".join(fixes)
    fixes.append(
        f"accept that its nodes stay up while they run: {no_minimum}; to keep nodes warm for "
        "them, run them on a node pool or node group with minNodes"
    )
    return "; or ".join(fixes)


def device_plugin_taints(ctx: CheckContext) -> None:
    """GI007 / GI012: a GPU pool whose nodes need a device plugin DaemonSet, against the
    tolerations of the graph's plugins (or the chart's defaults when it has none). A DRA pool's
    GPUs are the DRA driver's (GI054), not a device plugin's; an AKS pool without driver is
    GI062's (a tolerating plugin would still find no GPU)."""
    plugins = device_plugins(ctx.entries, ctx.out)
    bare = without_driver(ctx.entries)  # no driver either: GI062's, not a toleration's
    for pool in ctx.pools:
        if not pool.gpu or pool.builtin_device_plugin or is_dra_pool(pool):
            continue
        if any(r in bare for r in pool.resources):
            continue
        taints = _filtering(pool.taints)
        if not taints:
            continue
        if not plugins:
            missing_default = untolerated(taints, DEVICE_PLUGIN_DEFAULT_TOLERATIONS)
            if missing_default:
                ctx.out.add(
                    "GI012",
                    pool.resource,
                    f"GPU pool {pool.name} ({pool.provider}) needs an NVIDIA device plugin "
                    "DaemonSet, the graph installs none, and the upstream chart's default "
                    f"tolerations do not cover {_names(map(str, missing_default))}",
                    "install the nvidia-device-plugin chart with tolerations for these taints "
                    "(or make sure the cluster's plugin has them)",
                )
            continue
        failures = []
        for rid, parts in plugins:
            missing = [(part, m) for part, tols in parts if (m := untolerated(taints, tols))]
            if not missing:
                break
            failures.append((rid, missing))
        else:
            rid, missing = failures[0]
            detail = "; ".join(f"{part}: {_names(map(str, ts))}" for part, ts in missing)
            needed = sorted({str(t) for _, ts in missing for t in ts})
            ctx.out.add(
                "GI007",
                pool.resource,
                f"GPU pool {pool.name} has taints the device plugin {rid} does not tolerate "
                f"({detail}): its nodes would expose no GPUs",
                f"add tolerations {{key, operator: Exists}} for {_names(needed)} to "
                f"{rid} (values.tolerations and values.nfd.worker.tolerations for the chart)",
            )


# -- Seldon Models on Servers ---------------------------------------------------------------

Capabilities = dict[str, dict[str, frozenset[str] | None]]
"""Namespace -> Server -> what it advertises (None: unknown)."""
Room = dict[str, dict[str, tuple[int, int | None]]]
"""Namespace -> Server -> (replicas, bytes per replica)."""


def seldon_models(ctx: CheckContext) -> None:
    """GI010 / GI018 (and GI013 for a memory Kubernetes would refuse) for each Model."""
    servers, room = _servers(ctx.entries)
    for entry in ctx.entries:
        typ = str(entry.get("type", ""))
        if is_type(typ, "mlops.seldon.io", "Model"):
            _judge_model(entry, servers, room, ctx.out)


def _servers(graph: Sequence[Mapping[str, Any]]) -> tuple[Capabilities, Room]:
    """The graph's Servers (and those the Seldon runtime charts install) by namespace."""
    server_configs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in graph:
        if is_type(str(entry.get("type", "")), "mlops.seldon.io", "ServerConfig"):
            inputs = as_map(entry.get("inputs"))
            name = str(metadata(inputs).get("name") or entry.get("name"))
            server_configs[(namespace_of(inputs), name)] = inputs
    servers: Capabilities = {}
    room: Room = {}
    for entry in graph:
        if not is_type(str(entry.get("type", "")), "mlops.seldon.io", "Server"):
            continue
        inputs = as_map(entry.get("inputs"))
        ns = namespace_of(inputs)
        name = str(metadata(inputs).get("name") or entry.get("name"))
        servers.setdefault(ns, {})[name] = _server_capabilities(inputs, ns, server_configs)
        spec = as_map(inputs.get("spec"))
        sc = server_configs.get((ns, str(spec.get("serverConfig") or "")))
        pod = merge_seldon_pod_specs(
            as_map(as_map(as_map(sc).get("spec")).get("podSpec")) if sc else {},
            as_map(spec.get("podSpec")),
        )
        try:
            room.setdefault(ns, {})[name] = server_capacity(pod, spec)
        except (InputError, TypeError, ValueError):
            room.setdefault(ns, {})[name] = (1, None)
    for chart in SELDON_SERVER_CHARTS:
        for release in helm_releases(graph, chart):
            ns = str(as_map(release.get("inputs")).get("namespace") or "default")
            for name, defaults in SELDON_DEFAULT_CAPABILITIES.items():
                servers.setdefault(ns, {}).setdefault(name, defaults)
                room.setdefault(ns, {}).setdefault(name, (1, None))
    return servers, room


def _judge_model(
    entry: Mapping[str, Any], servers: Capabilities, room: Room, out: Findings
) -> None:
    typ = str(entry.get("type", ""))
    inputs = as_map(entry.get("inputs"))
    spec = as_map(inputs.get("spec"))
    ns = namespace_of(inputs)
    rid = resource_id(typ, str(entry.get("name")))
    reqs = frozenset(str(r).strip() for r in as_list(spec.get("requirements")) if str(r).strip())
    in_ns = servers.get(ns, {})
    capable = {
        n: room.get(ns, {}).get(n, (1, None))
        for n, caps in in_ns.items()
        if caps is None or reqs <= caps
    }
    pinned = spec.get("server")
    if isinstance(pinned, str) and pinned:
        capable = {n: c for n, c in capable.items() if n == pinned}
    try:
        check_seldon_capacity(rid, spec, capable, out)
    except (InputError, TypeError, ValueError) as e:
        out.add("GI013", rid, f"invalid memory quantity: {e}", "fix spec.memory")
    if isinstance(pinned, str) and pinned:
        _check_pinned(rid, ns, pinned, reqs, in_ns, out)
        return
    if not reqs or any(c is None or reqs <= c for c in in_ns.values()):
        return
    have = "; ".join(f"{n}: {_names(sorted(c or ()))}" for n, c in sorted(in_ns.items()))
    out.add(
        "GI010",
        rid,
        f"requirements {_names(sorted(reqs))} match no Server's capabilities in {ns} "
        f"({have or 'no Servers'})",
        "add the requirement to a Server's extraCapabilities (or its ServerConfig's "
        f"{SELDON_CAPABILITIES_ENV})",
    )


def _check_pinned(
    rid: str,
    ns: str,
    pinned: str,
    reqs: frozenset[str],
    in_ns: Mapping[str, frozenset[str] | None],
    out: Findings,
) -> None:
    """GI010 for a Model pinned to a Server (`spec.server`)."""
    if pinned not in in_ns:
        out.add(
            "GI010",
            rid,
            f"pinned to Server {pinned}, which is not in namespace {ns} "
            f"(Servers there: {_names(sorted(in_ns))})",
            f"create Server {pinned} in {ns} or pin the Model to an existing one",
        )
        return
    caps = in_ns[pinned]
    if caps is not None and not reqs <= caps:
        out.add(
            "GI010",
            rid,
            f"pinned to Server {pinned}, which lacks the capabilities "
            f"{_names(sorted(reqs - caps))}",
            f"add {_names(sorted(reqs - caps))} to Server {pinned}'s extraCapabilities",
        )


def _server_capabilities(
    inputs: Mapping[str, Any],
    ns: str,
    server_configs: Mapping[tuple[str, str], Mapping[str, Any]],
) -> frozenset[str] | None:
    """What a Server advertises: `spec.capabilities` if set, else its ServerConfig's agent
    `SELDON_SERVER_CAPABILITIES`; plus `extraCapabilities`. None: unknown (ServerConfig elsewhere)."""
    spec = as_map(inputs.get("spec"))
    extra = {str(c).strip() for c in as_list(spec.get("extraCapabilities"))}
    own = as_list(spec.get("capabilities"))
    if own:
        return frozenset({str(c).strip() for c in own} | extra)
    sc_name = str(spec.get("serverConfig") or "")
    sc = server_configs.get((ns, sc_name))
    pod = merge_seldon_pod_specs(
        as_map(as_map(as_map(sc).get("spec")).get("podSpec")) if sc else {},
        as_map(spec.get("podSpec")),
    )
    value: str | None = None
    for c in as_list(pod.get("containers")):
        for env in as_list(as_map(c).get("env")):
            if as_map(env).get("name") == SELDON_CAPABILITIES_ENV:
                value = str(as_map(env).get("value") or "")
    if value is not None:
        return frozenset({v.strip() for v in value.split(",") if v.strip()} | extra)
    if sc is None and sc_name in SELDON_DEFAULT_CAPABILITIES:
        return SELDON_DEFAULT_CAPABILITIES[sc_name] | extra
    return None


def server_capacity(pod: Mapping[str, Any], spec: Mapping[str, Any]) -> tuple[int, int | None]:
    """(replicas, bytes a replica may load) of a Seldon Server: replicas the most of `replicas`
    (1 when absent) and `maxReplicas`; memory the server container's memory request x (1 +
    SELDON_OVERCOMMIT_PERCENTAGE / 100), as the agent registers it. None: not stated."""
    replicas = max(as_int(spec.get("replicas")) or 1, as_int(spec.get("maxReplicas")) or 0)
    if as_int(spec.get("replicas")) == 0:
        replicas = as_int(spec.get("maxReplicas")) or 0
    containers = [as_map(c) for c in as_list(pod.get("containers"))]
    overcommit = SELDON_DEFAULT_OVERCOMMIT
    for c in containers:
        for env in as_list(c.get("env")):
            if as_map(env).get("name") == SELDON_OVERCOMMIT_ENV:
                overcommit = as_int(as_map(env).get("value")) or 0
    server = next((c for c in containers if c.get("name") in SELDON_SERVER_CONTAINERS), None)
    res = as_map(as_map(server).get("resources")) if server else {}
    memory = as_map(res.get("requests")).get("memory", as_map(res.get("limits")).get("memory"))
    if memory is None:
        return replicas, None
    return replicas, int(parse_quantity(memory) * (100 + overcommit) / 100)


def check_seldon_capacity(
    model_rid: str,
    spec: Mapping[str, Any],
    candidates: Mapping[str, tuple[int, int | None]],
    out: Findings,
) -> None:
    """Seldon Core 2 schedules a Model on one Server with at least `replicas` replicas, each with
    `memory` free (docs-gb/models/scheduling.md); otherwise the Model is ScheduleFailed."""
    if not candidates:
        return
    replicas = as_int(spec.get("replicas")) or 1
    memory = spec.get("memory")
    need = int(parse_quantity(memory)) if memory is not None else None
    fits = [
        n
        for n, (r, m) in candidates.items()
        if r >= replicas and (need is None or m is None or m >= need)
    ]
    if fits:
        return
    have = "; ".join(
        f"{n}: {r} replica(s), "
        + ("memory not stated" if m is None else f"{m / 2**30:.1f} GiB per replica")
        for n, (r, m) in sorted(candidates.items())
    )
    want = f"{replicas} replica(s)" + (f" of {memory}" if memory is not None else "")
    out.add(
        "GI018",
        model_rid,
        f"needs {want} but no capable Server has room ({have}): it ends ScheduleFailed",
        "lower the Model's replicas / memory, or give a capable Server more replicas or a "
        "larger memory request",
    )


# -- GI061: isolation -------------------------------------------------------------------------
# Kubernetes' ExtendedResourceToleration admission plugin (kubernetes v1.34.0
# `plugin/pkg/admission/extendedresourcetoleration/admission.go`) gives every pod requesting an
# extended resource `{key: <resource>, operator: Exists, effect: NoSchedule}`: a GPU pool whose only
# taint is `nvidia.com/gpu:NoSchedule` (GKE's own, or EKS's usual one) is then tolerated by every
# GPU pod of the cluster, and only labels keep the others off.

ERT_TOLERATIONS = extended_resource_tolerations([GPU_RESOURCE])
"""What the plugin adds to a pod asking `nvidia.com/gpu`."""


def ert_only_taint(ctx: CheckContext) -> None:
    """GI061: a GPU pool whose every filtering taint the plugin makes a GPU pod tolerate, while
    GPU workloads of the graph not wired to it exist (they, and any GPU pod, pass its taints).
    An Autopilot pool takes no taint of its own (Autopilot's nodes carry GKE's alone)."""
    if not ctx.extended_resource_toleration:
        return
    gpu_workloads = [w for w in ctx.workloads if w.gpus > 0 and not w.daemonset]
    names = sorted({w.resource for w in gpu_workloads})
    # Pool -> the names all of whose workloads are wired to it (the others are "others"): one
    # pass over the workloads, not one per pool.
    count = Counter(w.resource for w in gpu_workloads)
    wired: dict[str, Counter[str]] = {}
    for w in gpu_workloads:
        for name in set(w.wired):
            wired.setdefault(name, Counter())[w.resource] += 1
    for pool in ctx.pools:
        taints = [t for t in pool.taints if t.effect in FILTERING_EFFECTS]
        if not pool.gpu or not taints or "autopilot" in pool_kinds(pool, ctx.entry_by_key):
            continue
        if not all(any(tol.tolerates(t) for tol in ERT_TOLERATIONS) for t in taints):
            continue
        mine = wired.get(pool.name, Counter())
        kept = {r for r, n in mine.items() if n == count[r]}
        total = len(names) - len(kept)
        if not total:
            continue
        first = list(islice((r for r in names if r not in kept), 5))
        shown = ", ".join(first) + (f" and {total - 5} more" if total > 5 else "")
        ctx.out.add(
            "GI061",
            pool.resource,
            f"GPU pool {pool.name}'s only taint {', '.join(map(str, taints))} is tolerated by "
            f"every pod asking {GPU_RESOURCE} (ExtendedResourceToleration is on): only labels "
            f"keep the graph's other GPU workloads ({shown}) and any GPU pod of the cluster off it",
            f"give the pool a taint of its own that only the pods wired to it tolerate, e.g. "
            f"dedicated={pool.name}:NoSchedule",
        )
