"""Judging the graph: where each pod template can land, and the findings (codes in `contract.CODES`)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ..model.errors import InputError
from ..model.scheduling import (
    FILTERING_EFFECTS,
    Placement,
    Taint,
    extended_resource_tolerations,
    untolerated,
)
from .capacity.judge import check_capacity
from .capacity.model import Demand
from .contract import (
    DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
    ERT_ANNOTATION,
    GKE_GPU_TAINT,
    KNATIVE_FEATURE_FOR_FIELD,
    NODE_PATCH,
    POOL_LABEL,
    SELDON_CAPABILITIES_ENV,
    SELDON_DEFAULT_CAPABILITIES,
    SELDON_SERVER_CHARTS,
)
from .dra import Allocation, DraCheck, is_dra_pool
from .failures import (
    check_aks_tags,
    check_asg_tags,
    check_cold_pools,
    check_empty_pools,
    check_knative_config_reverted,
    check_model_fits,
    check_progress_deadline,
    check_seldon_capacity,
    check_template_storage,
    knative_progress_deadline,
    lands_once_booted,
    never_has_nodes,
    server_capacity,
)
from .fit import check_fit_unknown, judge_fit
from .graph import (
    read_pools,
    read_templates,
)
from .llm import check_llm, llm_shape, stated_weights
from .pod import (
    extended_resources,
    pod_gpus,
    stated_model_size,
)
from .read import (
    Findings,
    Template,
    as_list,
    as_map,
    helm_releases,
    is_type,
    kind_of,
    metadata,
    namespace_of,
    resource_id,
    str_map,
)
from .readers.compute_class import (
    compute_class_tolerations,
)
from .readers.daemonsets import (
    device_plugins,
)
from .readers.dra import DraUse
from .readers.kserve import (
    knative_settings,
)
from .readers.seldon import (
    merge_seldon_pod_specs,
)
from .results import (
    PoolFacts,
    Report,
    WorkloadFacts,
)
from .scaleup import ScaleUp
from .shapes import Pod, Shapes, fit_key, landing_key

# ---------------------------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------------------------


def _names(items: Iterable[str]) -> str:
    items = list(items)
    return ", ".join(items) if items else "none"


class Where(NamedTuple):
    """Where a pod with one placement and GPU count can land, by the pools' nodes (the lists are
    shared by every pod with that placement: never changed)."""

    placed: list[PoolFacts]
    """The pools the label and taint filters let it onto."""
    admitted: list[PoolFacts]
    """Of those, the ones with a node that also has the GPUs it asks for (the scheduler's
    NodeResourcesFit): where it can land."""
    selected: list[PoolFacts]
    """The pools its nodeSelector / required affinity picks by label (taints and GPUs aside)."""
    elsewhere: list[PoolFacts]
    """The pools not admitted (where only a node Karpenter launches for it could take it):
    those whose nodes the filters keep it off, and those placed on nodes without its GPUs. A
    pod whose affinity ORs terms may pass one term on small nodes and need the other, on a
    label value Karpenter gives the node it launches, for the size with its GPUs."""

    @classmethod
    def of(cls, placement: Placement, gpus: int, pools: Sequence[PoolFacts]) -> Where:
        placed = [p for p in pools if p.admits(placement)]
        admitted = [p for p in placed if p.lands(placement, gpus)]
        return cls(
            placed,
            admitted,
            [p for p in pools if p.selected_by(placement)],
            [p for p in pools if not any(p is q for q in admitted)],
        )


def check(
    graph: Iterable[Mapping[str, Any]],
    *,
    extended_resource_toleration: bool | None = None,
    quotas: Iterable[Mapping[str, Any]] = (),
    share_shapes: bool = True,
) -> Report:
    """Where every pod template in `graph` can land, and the findings (see the module docstring).

    `share_shapes`: decide the pods of one shape once (`shapes`); False decides every template
    alone, with the same report.

    `quotas`: cloud quotas the pools count against, `{provider, region, limits}` each (what the
    stack config's `quotas` holds), besides the graph's `CloudQuota` entries (GI045, GI046).

    `extended_resource_toleration`: whether the cluster runs Kubernetes' ExtendedResourceToleration
    admission plugin (GPU-requesting pods then tolerate `nvidia.com/gpu` taints by themselves);
    None infers it: on when any pool is GKE or EKS or a NodePatch says so (`ERT_ANNOTATION`), off
    when the graph has only other existing nodes.
    """
    entries = [e for e in graph if isinstance(e, Mapping) and "type" in e and "name" in e]
    out = Findings()
    pools = read_pools(entries, out)
    if extended_resource_toleration is None:
        extended_resource_toleration = any(p.provider in ("gke", "eks") for p in pools) or any(
            e["type"] == NODE_PATCH
            and str(
                str_map(metadata(as_map(e.get("inputs"))).get("annotations")).get(ERT_ANNOTATION)
            )
            == "true"
            for e in entries
        )
    pool_by_name = {p.name: p for p in pools}
    gke = any(p.provider == "gke" for p in pools)
    scale = ScaleUp(entries, out)
    dra = DraCheck(scale.dra, _dra_ignoring_autoscalers(entries, pools))
    dra.remember_devices(pools)
    dra_pools: dict[str, bool] = {}
    features, features_where, scale_to_zero_allowed = knative_settings(entries)

    # Where a pod can land follows from its placement and GPU count alone: derived once for
    # each distinct pair (the pods of a stack share a few placements), not once per pod.
    wheres: dict[tuple[Placement, int], Where] = {}

    def where(placement: Placement, gpus: int) -> Where:
        found = wheres.get((placement, gpus))
        if found is None:
            found = wheres[(placement, gpus)] = Where.of(placement, gpus, pools)
        return found

    workloads: list[WorkloadFacts] = []
    lands_on: dict[str, list[WorkloadFacts]] = {p.name: [] for p in pools}
    selected_keys: dict[str, set[str]] = {}  # pool -> label keys its workloads select
    deadline_default = knative_progress_deadline(entries)
    unknown_fit: dict[str, list[str]] = {}  # pool -> workloads whose fit was not judged
    demands: list[Demand] = []  # what the capacity proof counts
    shapes = Shapes(share_shapes)

    def pod_of(t: Template) -> Pod:
        base = Placement.from_pod_spec(t.fragment)
        gpus = pod_gpus(t)
        placement = base
        if extended_resource_toleration:
            placement = base.with_tolerations(extended_resource_tolerations(extended_resources(t)))
        if gke:  # GKE's admission: a pod selecting a ComputeClass tolerates its taint
            placement = placement.with_tolerations(compute_class_tolerations(base))
        return Pod(base, gpus, placement)

    for t in read_templates(entries, scale_to_zero_allowed):
        rid = t.resource
        shape = shapes.key(t)
        try:
            base, gpus, placement = shapes.pod(shape, functools.partial(pod_of, t))
        except (InputError, KeyError, TypeError, ValueError) as e:
            out.add(
                "GI013",
                rid,
                f"its pod spec is not valid Kubernetes: {e}",
                "fix the nodeSelector / affinity / tolerations / nvidia.com/gpu quantity named",
            )
            continue
        try:
            model_size = stated_model_size(t.model_annotations)
        except (TypeError, ValueError) as e:
            out.add("GI013", rid, f"its model size is not readable: {e}", "fix the annotation")
            model_size = None
        if t.llm is not None and model_size is None:  # the weights of its shape, when known
            model_size = stated_weights(t.llm, None, llm_shape(t.llm)[0])
        found = where(placement, gpus)
        use = scale.dra_use(t)
        # A node Karpenter launches takes the labels the pod asks for (a zone, a value of a
        # requirement with several): where Karpenter would launch for it, it lands.
        launched = shapes.landing(
            functools.partial(landing_key, t, placement, gpus, use.any),
            functools.partial(scale.karpenter_landing, t, placement, found.elsewhere),
        )
        placed = found.placed + [p for p in launched if not any(p is q for q in found.placed)]
        admitted = found.admitted + launched
        selected = found.selected
        # Devices by claim: of those, the pools with a node that also allocates its claims.
        on_gpus = admitted
        admitted, dra_verdicts = _dra_landing(t, use, placement, gpus, admitted, scale, dra)
        facts = WorkloadFacts(
            resource=rid,
            type=t.type,
            name=t.name,
            kind=kind_of(t.type),
            component=t.component,
            namespace=t.namespace,
            pools=tuple(p.name for p in admitted),
            wired=t.wired,
            gpus=gpus,
            scales_to_zero=t.scales_to_zero,
            daemonset=t.daemonset,
            deployment_mode=t.deployment_mode,
            placement=base.to_pod_spec(),
            max_replicas=t.max_replicas,
            model_size_gb=model_size,
            claimed_gpus=use.whole_gpus,
        )
        facts = shapes.fit(
            functools.partial(fit_key, t, placement, gpus, model_size, use.any),
            facts,
            out,
            unknown_fit,
            functools.partial(
                judge_fit,
                t,
                facts,
                placement,
                admitted,
                pools,
                launched=functools.partial(scale.launches_for, t, placement),
            ),
        )
        workloads.append(facts)
        for p in admitted:
            lands_on[p.name].append(facts)
        landing = {p.name for p in admitted} | {p.name for p in selected}
        for p in pools:
            if p.name in landing:
                selected_keys.setdefault(p.name, set()).update(_selected_keys(placement))
        # Cloud pools it would land on once discovery labels its nodes (GI014).
        booting = (
            []
            if admitted or t.daemonset
            else [(p, labels) for p in pools if (labels := lands_once_booted(placement, p, gpus))]
        )
        confined = facts.gpus > 0 or bool(facts.wired) or bool(selected)
        demands.append(Demand(t, facts, placement, confined, use.any))
        _check_workload(
            t,
            facts,
            placement,
            placed,
            admitted,
            pools,
            pool_by_name,
            out,
            booting,
            selected,
            use.any,
        )
        scale.check(t, facts, placement, on_gpus, out)
        if use.any:
            dra.check(t, facts, use, dra_verdicts, [p.name for p in on_gpus], out)
            for p in admitted:
                dra_pools[p.name] = True
        check_cold_pools(facts, booting, out)
        if t.llm is None:
            check_model_fits(facts, pools, out)
        else:
            check_llm(t.llm, facts, pools, out)
        check_progress_deadline(t, facts, pools, deadline_default, out)
        if t.serverless:
            _check_knative(t, base, features, features_where, out)

    _check_pools(entries, pools, lands_on, out)
    dra.check_pools(pools, dra_pools, out)
    check_fit_unknown(pools, unknown_fit, out)
    _check_seldon_models(entries, out)
    capacity = check_capacity(demands, pools, out, graph=entries, quotas=quotas)
    check_empty_pools(workloads, pools, out)
    check_asg_tags(entries, pools, selected_keys, out)
    check_aks_tags(entries, pools, selected_keys, out)
    check_template_storage(entries, pools, lands_on, out)
    check_knative_config_reverted(entries, out)
    workloads.sort(key=lambda w: w.resource)
    return Report(pools, workloads, out.sorted(), extended_resource_toleration, capacity)


def _dra_landing(
    t: Template,
    use: DraUse,
    placement: Placement,
    gpus: int,
    admitted: list[PoolFacts],
    scale: ScaleUp,
    dra: DraCheck,
) -> tuple[list[PoolFacts], dict[str, Allocation | None]]:
    """Of `admitted`, the pools where a node also allocates the pod's DRA claims, and each pool's
    verdict (None: it lands; Karpenter pools are GI027's). A CEL error on any node aborts the
    pod's scheduling everywhere (`dra` module docstring)."""
    if not use.any:
        return admitted, {}
    if use.missing or not use.resolved:
        return admitted, {}
    verdicts: dict[str, Allocation | None] = {}
    keep = []
    for p in admitted:
        ok, verdict = dra.lands(t, use, p, placement, gpus)
        if not scale.karpenter_pools(p) and p.name not in dra.autoscaled_by:
            verdicts[p.name] = None if ok else verdict
        if ok:
            keep.append(p)
    if any(v is not None and v.cause == "error" for v in verdicts.values()):
        return [], {n: v for n, v in verdicts.items() if v is not None and v.cause == "error"}
    return keep, verdicts


def _dra_ignoring_autoscalers(
    entries: Sequence[Mapping[str, Any]], pools: Sequence[PoolFacts]
) -> dict[str, str]:
    """Pools whose autoscaler provisions nothing for DRA claims (GI055): a GKE ComputeClass that
    creates its node pools (node auto-provisioning: GKE's DRA setup page, "Limitations")."""
    auto = {
        f"{e['type']}::{e['name']}"
        for e in entries
        if is_type(str(e["type"]), "cloud.google.com", "ComputeClass")
        and as_map(as_map(as_map(e.get("inputs")).get("spec")).get("nodePoolAutoCreation")).get(
            "enabled"
        )
        is True
    }
    return {
        p.name: "GKE node auto-provisioning (a ComputeClass that creates node pools), which "
        "does not support DRA"
        for p in pools
        if any(k in auto for k in p.keys)
    }


def _check_workload(
    t: Template,
    w: WorkloadFacts,
    placement: Placement,
    placed: list[PoolFacts],
    admitted: list[PoolFacts],
    pools: list[PoolFacts],
    pool_by_name: Mapping[str, PoolFacts],
    out: Findings,
    booting: Sequence[tuple[PoolFacts, list[str]]] = (),
    selected: list[PoolFacts] | None = None,
    dra: bool = False,
) -> None:
    """`dra`: the pod takes devices through DRA ResourceClaims (a GPU pod without
    `nvidia.com/gpu`)."""
    rid = w.resource
    names = [p.name for p in admitted]
    gpu_pools = [p for p in admitted if p.gpu]
    missing = [n for n in w.wired if n not in pool_by_name]
    # Pools its nodeSelector / required affinity picks by label. When none of them admits it,
    # the pod stays Pending whatever it requests and whether or not it is wired: a cluster node
    # outside the graph cannot help, since it would need the labels of a pool in the graph.
    if selected is None:
        selected = [p for p in pools if p.selected_by(placement)]

    def reasons(pool: PoolFacts) -> str:
        return "; ".join(pool.why_not(placement, w.gpus)) or "refused"

    # The DaemonSet controller makes no pod for a node the pod does not fit: nothing Pending.
    # A pod that lands once GPU / node feature discovery has labelled a node is judged by GI014.
    stuck = not admitted and not placed and not t.daemonset and not booting
    if stuck and (w.gpus > 0 or w.wired or selected):
        if w.wired:
            detail = "; ".join(
                f"pool {n}: {reasons(pool_by_name[n]) if n in pool_by_name else 'not in the graph'}"
                for n in w.wired
            )
            message = f"wired to {_names(w.wired)} but can land on no pool ({detail})"
            fix = (
                f"give it the placement of pool {w.wired[0]} (select its labels, tolerate its "
                "taints)"
                if not missing
                else f"wire it to a pool the graph has ({_names(p.name for p in pools)})"
            )
        elif selected:
            detail = "; ".join(f"pool {p.name}: {reasons(p)}" for p in selected)
            message = (
                f"selects pool(s) {_names(p.name for p in selected)} by label but none admits "
                f"it ({detail}): it stays Pending"
            )
            fix = _admit_fix(selected, placement, w.gpus)
        else:
            detail = "; ".join(f"pool {p.name}: {reasons(p)}" for p in pools if p.gpu)
            message = f"requests {w.gpus} GPU(s) but can land on no pool" + (
                f" ({detail})" if detail else ": the graph has no GPU pool"
            )
            fix = "select a GPU pool's labels and tolerate its taints (or add a GPU pool)"
        out.add("GI001", rid, message, fix)

    if w.wired:
        extra = [n for n in names if n not in w.wired]
        if extra:
            out.add(
                "GI002",
                rid,
                f"wired to {_names(w.wired)} but can also land on {_names(extra)}",
                f"select a label only {_names(w.wired)} has (e.g. {POOL_LABEL}) and drop "
                f"tolerations that let it onto {_names(extra)}",
            )
        unreachable = [n for n in w.wired if n not in names]
        if admitted and unreachable:
            detail = "; ".join(
                f"pool {n}: {reasons(pool_by_name[n]) if n in pool_by_name else 'not in the graph'}"
                for n in unreachable
            )
            out.add(
                "GI011",
                rid,
                f"wired to {_names(w.wired)} but cannot land on {_names(unreachable)} ({detail})",
                "add the selector term and tolerations of every pool it is wired to",
            )

    # A DaemonSet too: its controller checks labels and taints, not resources
    # (pkg/controller/daemon `predicates`), so the pod is made and stays Pending.
    # Judged on the nodes that let it in, not the pool's headline count: in a pool of existing
    # nodes with unequal GPUs, the pod may get only onto the small ones.
    if placed and not admitted:
        counts = {p.name: p.most_gpus_admitting(placement) or 0 for p in placed}
        most = max(counts.values())
        if w.gpus > most:
            sizes = ", ".join(f"{name}: {n}" for name, n in counts.items())
            dra_pools = sorted(p.name for p in placed if is_dra_pool(p))
            why = (
                f"; {_names(dra_pools)}: DRA, whose GPUs are taken by claim (no nvidia.com/gpu)"
                if dra_pools
                else ""
            )
            out.add(
                "GI004",
                rid,
                f"requests {w.gpus} GPU(s) per pod but the nodes it can land on have fewer "
                f"({sizes}{why}): it stays Pending",
                f"request at most {most} GPU(s) or wire it to a pool with {w.gpus}+ GPUs per node"
                + (" (on a DRA pool: claim them, resourceClaims)" if dra_pools else ""),
            )

    if t.daemonset:
        return

    if w.gpus == 0 and gpu_pools and not dra:
        untainted = [p.name for p in gpu_pools if not _filtering(p.taints)]
        tolerated = [p for p in gpu_pools if _filtering(p.taints)]
        fixes = []
        if tolerated and any(x.is_wildcard for x in placement.tolerations or ()):
            fixes.append("drop its wildcard toleration (operator Exists, no key)")
        elif tolerated:
            taints = sorted({str(x) for p in tolerated for x in _filtering(p.taints)})
            fixes.append(f"drop its toleration for {_names(taints)} or select a CPU pool")
        if untainted:
            fixes.append(
                f"taint {_names(untainted)} (e.g. {GKE_GPU_TAINT}) so only GPU pods land there"
            )
        out.add(
            "GI003",
            rid,
            f"requests no GPU but can land on GPU pool(s) {_names(p.name for p in gpu_pools)}, "
            "keeping a GPU node up",
            "; ".join(fixes),
        )

    wild = [x for x in placement.tolerations or () if x.is_wildcard]
    if wild and gpu_pools:
        tame = Placement(
            placement.node_selector,
            [x for x in placement.tolerations or () if not x.is_wildcard],
            placement.node_affinity,
        )
        only_wild = [p.name for p in gpu_pools if not p.admits(tame)]
        if only_wild:
            out.add(
                "GI009",
                rid,
                f"a toleration with operator Exists and no key lets it onto GPU pool(s) "
                f"{_names(only_wild)}",
                "replace the wildcard toleration with tolerations for the taints it needs",
            )


def _selected_keys(placement: Placement) -> list[str]:
    keys = list(placement.node_selector or {})
    for term in (placement.node_affinity.required if placement.node_affinity else None) or ():
        keys += [r.key for r in term.match_expressions or ()]
    return keys


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


def _filtering(taints: Iterable[Taint]) -> list[Taint]:
    return [t for t in taints if t.effect in FILTERING_EFFECTS]


def _check_knative(
    t: Template,
    base: Placement,
    features: Mapping[str, str] | None,
    where: str,
    out: Findings,
) -> None:
    needed = [KNATIVE_FEATURE_FOR_FIELD[f] for f in sorted(base.uses)]
    if not needed:
        return
    if features is None:
        out.add(
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
        out.add(
            "GI005",
            t.resource,
            f"Serverless InferenceService sets {_names(sorted(base.uses))} but {given} in "
            f"{where}: Knative's webhook rejects it",
            f'set {_names(off)} to "enabled" in {where}, or use deploymentMode RawDeployment',
        )


def _check_pools(
    graph: Sequence[Mapping[str, Any]],
    pools: list[PoolFacts],
    lands_on: Mapping[str, list[WorkloadFacts]],
    out: Findings,
) -> None:
    plugins = device_plugins(graph, out)
    for pool in pools:
        if pool.min_nodes == 0 and not never_has_nodes(pool):  # that is GI034's
            pinned = sorted(
                w.resource for w in lands_on[pool.name] if not w.scales_to_zero and not w.daemonset
            )
            if pinned:
                out.add(
                    "GI008",
                    pool.resource,
                    f"pool {pool.name} has min 0 nodes but hosts workloads that never scale to "
                    f"zero: {_names(pinned)}",
                    "let them scale to zero (a Serverless InferenceService with minReplicas 0) "
                    "or give the pool the minimum of nodes they keep busy",
                )
        if not pool.gpu or pool.builtin_device_plugin or is_dra_pool(pool):
            continue  # a DRA pool's GPUs are the DRA driver's (GI054), not a device plugin's
        taints = [t for t in pool.taints if t.effect in FILTERING_EFFECTS]
        if not taints:
            continue
        if plugins:
            failures = []
            for rid, parts in plugins:
                missing = [
                    (part, untolerated(taints, tols))
                    for part, tols in parts
                    if untolerated(taints, tols)
                ]
                if not missing:
                    break
                failures.append((rid, missing))
            else:
                rid, missing = failures[0]
                detail = "; ".join(f"{part}: {_names(map(str, ts))}" for part, ts in missing)
                needed = sorted({str(t) for _, ts in missing for t in ts})
                out.add(
                    "GI007",
                    pool.resource,
                    f"GPU pool {pool.name} has taints the device plugin {rid} does not tolerate "
                    f"({detail}): its nodes would expose no GPUs",
                    f"add tolerations {{key, operator: Exists}} for {_names(needed)} to "
                    f"{rid} (values.tolerations and values.nfd.worker.tolerations for the chart)",
                )
        else:
            missing_default = untolerated(taints, DEVICE_PLUGIN_DEFAULT_TOLERATIONS)
            if missing_default:
                out.add(
                    "GI012",
                    pool.resource,
                    f"GPU pool {pool.name} ({pool.provider}) needs an NVIDIA device plugin "
                    "DaemonSet, the graph installs none, and the upstream chart's default "
                    f"tolerations do not cover {_names(map(str, missing_default))}",
                    "install the nvidia-device-plugin chart with tolerations for these taints "
                    "(or make sure the cluster's plugin has them)",
                )


def _check_seldon_models(graph: Sequence[Mapping[str, Any]], out: Findings) -> None:
    server_configs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in graph:
        if is_type(str(entry.get("type", "")), "mlops.seldon.io", "ServerConfig"):
            inputs = as_map(entry.get("inputs"))
            name = str(metadata(inputs).get("name") or entry.get("name"))
            server_configs[(namespace_of(inputs), name)] = inputs
    servers: dict[str, dict[str, frozenset[str] | None]] = {}
    room: dict[str, dict[str, tuple[int, int | None]]] = {}  # replicas, bytes per replica
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
    for entry in graph:
        typ = str(entry.get("type", ""))
        if not is_type(typ, "mlops.seldon.io", "Model"):
            continue
        inputs = as_map(entry.get("inputs"))
        spec = as_map(inputs.get("spec"))
        ns = namespace_of(inputs)
        rid = resource_id(typ, str(entry.get("name")))
        reqs = frozenset(
            str(r).strip() for r in as_list(spec.get("requirements")) if str(r).strip()
        )
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
            if pinned not in in_ns:
                out.add(
                    "GI010",
                    rid,
                    f"pinned to Server {pinned}, which is not in namespace {ns} "
                    f"(Servers there: {_names(sorted(in_ns))})",
                    f"create Server {pinned} in {ns} or pin the Model to an existing one",
                )
                continue
            caps = in_ns[pinned]
            if caps is not None and not reqs <= caps:
                out.add(
                    "GI010",
                    rid,
                    f"pinned to Server {pinned}, which lacks the capabilities "
                    f"{_names(sorted(reqs - caps))}",
                    f"add {_names(sorted(reqs - caps))} to Server {pinned}'s extraCapabilities",
                )
            continue
        if not reqs:
            continue
        if any(c is None or reqs <= c for c in in_ns.values()):
            continue
        have = "; ".join(f"{n}: {_names(sorted(c or ()))}" for n, c in sorted(in_ns.items()))
        out.add(
            "GI010",
            rid,
            f"requirements {_names(sorted(reqs))} match no Server's capabilities in {ns} "
            f"({have or 'no Servers'})",
            "add the requirement to a Server's extraCapabilities (or its ServerConfig's "
            f"{SELDON_CAPABILITIES_ENV})",
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
