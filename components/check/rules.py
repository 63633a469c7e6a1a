"""Judging the graph: where each pod template can land (`CheckContext.pod`), then the registry's
rules (`registry.RULES`) in its order, each given one context: the pod rules a `PodContext` per
template, the pool and graph rules the `CheckContext` once after them."""

from __future__ import annotations

import functools
import gc
import importlib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ..model.errors import InputError
from ..model.scheduling import ERT_PROVIDERS, Placement, extended_resource_tolerations
from .capacity.model import CapacityCase, Demand
from .contract import ERT_ANNOTATION, NODE_PATCH
from .dra import Allocation, DraCheck
from .failures import knative_progress_deadline, label_keys, lands_once_booted
from .graph import read_pools, read_templates
from .llm import llm_shape, stated_weights
from .pod import extended_resources, pod_gpus, stated_model_size
from .read import Findings, Template, as_map, is_type, kind_of, metadata, str_map
from .readers.compute_class import compute_class_tolerations
from .readers.dra import DraUse
from .readers.kserve import knative_settings
from .registry import NOT_JUDGED_CODES, RULES
from .registry.rule import NOT_JUDGED_MODES
from .results import Finding, PoolFacts, Report, WorkloadFacts
from .scaleup import ScaleUp
from .shapes import Pod, Shapes, landing_key


def check(
    graph: Iterable[Mapping[str, Any]],
    *,
    extended_resource_toleration: bool | None = None,
    quotas: Iterable[Mapping[str, Any]] = (),
    share_shapes: bool = True,
    not_judged: str = "info",
) -> Report:
    """Where every pod template in `graph` can land, and the findings (docs/findings.md).

    `not_judged`: how a finding that says a rule could not judge (`NOT_JUDGED_CODES`) is
    reported: `info`, or `error` (a CI gate that accepts only what was judged).

    `share_shapes`: decide the pods of one shape once (`shapes`); False decides every template
    alone, with the same report.

    `quotas`: cloud quotas the pools count against, `{provider, region, limits}` each (what the
    stack config's `quotas` holds), besides the graph's `CloudQuota` entries (GI045, GI046).

    `extended_resource_toleration`: whether the cluster runs Kubernetes' ExtendedResourceToleration
    admission plugin (GPU-requesting pods then tolerate `nvidia.com/gpu` taints by themselves);
    None infers it: on when any pool is GKE, EKS or AKS or a NodePatch says so
    (`ERT_ANNOTATION`), off when the graph has only other existing nodes.
    """
    if not_judged not in NOT_JUDGED_MODES:
        raise ValueError(f"not_judged {not_judged!r}: give one of {', '.join(NOT_JUDGED_MODES)}")
    # What a check makes lives until it returns, and it leaves no cycles behind: the collector's
    # passes over it free nothing (0.4 to 0.7 s of 10000 pods x 200 pools). Off meanwhile.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _check(graph, extended_resource_toleration, quotas, share_shapes, not_judged)
    finally:
        if enabled:
            gc.enable()


def _check(
    graph: Iterable[Mapping[str, Any]],
    extended_resource_toleration: bool | None,
    quotas: Iterable[Mapping[str, Any]],
    share_shapes: bool,
    not_judged: str,
) -> Report:
    ctx = CheckContext.of(graph, extended_resource_toleration, quotas, share_shapes)
    pod_rules = runs(("pod",))
    for t in read_templates(ctx.entries, ctx.scale_to_zero_allowed):
        pod = ctx.pod(t)
        if pod is None:
            continue
        for rule in pod_rules:
            rule(pod)
        ctx.record(pod)
    for rule in runs(("pool", "graph")):
        rule(ctx)
    ctx.workloads.sort(key=lambda w: w.resource)
    findings = ctx.out.sorted()
    if not_judged == "error":
        findings = sorted(
            (replace(f, severity="error") if f.code in NOT_JUDGED_CODES else f for f in findings),
            key=Finding.sort_key,
        )
    return Report(
        ctx.pools,
        ctx.workloads,
        findings,
        ctx.extended_resource_toleration,
        ctx.capacity,
        not_judged=_not_judged_pods(ctx, findings),
    )


def _not_judged_pods(ctx: CheckContext, findings: Sequence[Finding]) -> tuple[str, ...]:
    """The pod templates some rule did not judge: those GI022 names on a pool, and those a
    not-judged finding is about."""
    names = {w.resource for w in ctx.workloads}
    found = {r for rs in ctx.unknown_fit.values() for r in rs}
    found |= {f.resource for f in findings if f.code in NOT_JUDGED_CODES and f.resource in names}
    return tuple(sorted(found & names))


@functools.cache
def runs(scopes: tuple[str, ...]) -> tuple[Callable[[Any], None], ...]:
    """The functions of the registry's rules of `scopes`, in its order, each once (codes that
    share a function share its run)."""
    names = dict.fromkeys(r.run for r in RULES if r.scope in scopes and r.run is not None)
    return tuple(resolve(name) for name in names)


def resolve(run: str) -> Callable[[Any], None]:
    """A rule's function from its `module:function` under this package."""
    module, _, name = run.partition(":")
    function: Callable[[Any], None] = getattr(
        importlib.import_module(f"{__package__}.{module}"), name
    )
    return function


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


@dataclass
class CheckContext:
    """The graph as the rules see it, and what its pod templates gave once judged."""

    entries: list[Mapping[str, Any]]
    out: Findings
    pools: list[PoolFacts]
    extended_resource_toleration: bool
    quotas: tuple[Mapping[str, Any], ...]
    shapes: Shapes
    scale: ScaleUp
    dra: DraCheck
    knative_features: dict[str, str] | None
    """The graph's Knative feature flags (None: the graph has no Knative config)."""
    knative_where: str
    scale_to_zero_allowed: bool
    deadline_default: float
    """The Knative progress deadline of the graph's config (GI020)."""

    workloads: list[WorkloadFacts] = field(default_factory=list)
    lands_on: dict[str, list[WorkloadFacts]] = field(default_factory=dict)
    selected_keys: dict[str, set[str]] = field(default_factory=dict)
    """Pool -> the label keys the workloads that land there or select it select (GI016)."""
    unknown_fit: dict[str, list[str]] = field(default_factory=dict)
    """Pool -> the workloads whose fit was not judged there (GI022)."""
    demands: list[Demand] = field(default_factory=list)
    """What the capacity proof counts."""
    dra_pools: dict[str, bool] = field(default_factory=dict)
    """The pools pods with DRA claims land on (GI054, GI058)."""
    capacity: list[CapacityCase] = field(default_factory=list)
    """The capacity proof's cases (the capacity rule sets them)."""
    model_fits: dict[Hashable, list[tuple[str, str, str]]] = field(default_factory=dict)
    """GI019 / GI059 decided once per pod shape (`model_fit._key`)."""
    _wheres: dict[tuple[Placement, int], Where] = field(default_factory=dict)
    _booting: dict[tuple[Placement, int], list[tuple[PoolFacts, list[str]]]] = field(
        default_factory=dict
    )

    @classmethod
    def of(
        cls,
        graph: Iterable[Mapping[str, Any]],
        extended_resource_toleration: bool | None,
        quotas: Iterable[Mapping[str, Any]],
        share_shapes: bool,
    ) -> CheckContext:
        entries = [e for e in graph if isinstance(e, Mapping) and "type" in e and "name" in e]
        out = Findings()
        pools = read_pools(entries, out)
        if extended_resource_toleration is None:
            extended_resource_toleration = _infer_ert(entries, pools)
        scale = ScaleUp(entries, out)
        dra = DraCheck(scale.dra, _dra_ignoring_autoscalers(entries, pools))
        dra.remember_devices(pools)
        features, where, scale_to_zero = knative_settings(entries)
        return cls(
            entries=entries,
            out=out,
            pools=pools,
            extended_resource_toleration=extended_resource_toleration,
            quotas=tuple(quotas),
            shapes=Shapes(share_shapes),
            scale=scale,
            dra=dra,
            knative_features=features,
            knative_where=where,
            scale_to_zero_allowed=scale_to_zero,
            deadline_default=knative_progress_deadline(entries),
            lands_on={p.name: [] for p in pools},
        )

    @functools.cached_property
    def pool_by_name(self) -> dict[str, PoolFacts]:
        return {p.name: p for p in self.pools}

    @functools.cached_property
    def gke(self) -> bool:
        return any(p.provider == "gke" for p in self.pools)

    @functools.cached_property
    def entry_by_key(self) -> dict[str, Mapping[str, Any]]:
        """The graph's entries by `type::name` (what `PoolFacts.keys` and dependsOn name)."""
        return {f"{e['type']}::{e['name']}": e for e in self.entries}

    def where(self, placement: Placement, gpus: int) -> Where:
        """Where a pod can land follows from its placement and GPU count alone: derived once for
        each distinct pair (the pods of a stack share a few placements), not once per pod."""
        found = self._wheres.get((placement, gpus))
        if found is None:
            found = self._wheres[(placement, gpus)] = Where.of(placement, gpus, self.pools)
        return found

    def booting(self, placement: Placement, gpus: int) -> list[tuple[PoolFacts, list[str]]]:
        """The cloud pools a pod would land on once discovery labels their nodes, with those
        labels (`lands_once_booted`): derived once per placement and GPU count, like `where`."""
        found = self._booting.get((placement, gpus))
        if found is None:
            found = self._booting[(placement, gpus)] = [
                (p, labels) for p in self.pools if (labels := lands_once_booted(placement, p, gpus))
            ]
        return found

    def pod(self, t: Template) -> PodContext | None:
        """The template's context for the pod rules; None when its pod spec is not valid
        Kubernetes (GI013: nothing else is judged)."""
        shape = self.shapes.key(t)
        try:
            base, gpus, placement = self.shapes.pod(shape, functools.partial(self._pod_of, t))
        except (InputError, KeyError, TypeError, ValueError) as e:
            self.out.add(
                "GI013",
                t.resource,
                f"its pod spec is not valid Kubernetes: {e}",
                "fix the nodeSelector / affinity / tolerations / nvidia.com/gpu quantity named",
            )
            return None
        found = self.where(placement, gpus)
        use = self.scale.dra_use(t)
        # A node Karpenter launches takes the labels the pod asks for (a zone, a value of a
        # requirement with several): where Karpenter would launch for it, it lands.
        launched = self.shapes.landing(
            functools.partial(landing_key, t, placement, gpus, use.any),
            functools.partial(self.scale.karpenter_landing, t, placement, found.elsewhere),
        )
        placed = found.placed + [p for p in launched if not any(p is q for q in found.placed)]
        on_gpus = found.admitted + launched
        # Devices by claim: of those, the pools with a node that also allocates its claims.
        admitted, verdicts = _dra_landing(t, use, placement, gpus, on_gpus, self.scale, self.dra)
        facts = _facts(t, base, gpus, admitted, use, self._model_size(t))
        # Cloud pools it would land on once discovery labels its nodes (GI014).
        booting = [] if admitted or t.daemonset else self.booting(placement, gpus)
        return PodContext(
            check=self,
            template=t,
            base=base,
            placement=placement,
            gpus=gpus,
            use=use,
            facts=facts,
            placed=placed,
            on_gpus=on_gpus,
            admitted=admitted,
            selected=found.selected,
            launched=launched,
            dra_verdicts=verdicts,
            booting=booting,
            shape=shape,
        )

    def _pod_of(self, t: Template) -> Pod:
        base = Placement.from_pod_spec(t.fragment)
        gpus = pod_gpus(t)
        placement = base
        if self.extended_resource_toleration:
            placement = base.with_tolerations(extended_resource_tolerations(extended_resources(t)))
        if t.added_node_selector:  # KServe's pod webhook (model.serving.isvc)
            placement = placement.with_node_selector(t.added_node_selector)
        if self.gke:  # GKE's admission: a pod selecting a ComputeClass tolerates its taint
            placement = placement.with_tolerations(compute_class_tolerations(base))
        return Pod(base, gpus, placement)

    def _model_size(self, t: Template) -> float | None:
        try:
            model_size = stated_model_size(t.model_annotations)
        except (TypeError, ValueError) as e:
            self.out.add(
                "GI013", t.resource, f"its model size is not readable: {e}", "fix the annotation"
            )
            model_size = None
        if t.llm is not None and model_size is None:  # the weights of its shape, when known
            model_size = stated_weights(t.llm, None, llm_shape(t.llm)[0])
        return model_size

    def record(self, pod: PodContext) -> None:
        """Keep what the pod rules left of the template for the pool and graph rules."""
        facts = pod.facts
        self.workloads.append(facts)
        for p in pod.admitted:
            self.lands_on[p.name].append(facts)
        keys = label_keys(pod.placement)
        for name in {p.name for p in pod.admitted} | {p.name for p in pod.selected}:
            self.selected_keys.setdefault(name, set()).update(keys)
        confined = facts.gpus > 0 or bool(facts.wired) or bool(pod.selected)
        self.demands.append(Demand(pod.template, facts, pod.placement, confined, pod.use.any))
        if pod.use.any:
            for p in pod.admitted:
                self.dra_pools[p.name] = True


@dataclass
class PodContext:
    """One pod template as the pod rules see it. Rules run in the registry's order: the fit
    (GI021) records the pod's requests and the pools whose nodes cannot hold it in `facts`,
    which the rules after it read (GI026)."""

    check: CheckContext
    template: Template
    base: Placement
    """Its placement as written."""
    placement: Placement
    """With the tolerations admission adds (ExtendedResourceToleration, GKE's ComputeClass)."""
    gpus: int
    use: DraUse
    """Its DRA claims."""
    facts: WorkloadFacts
    placed: list[PoolFacts]
    """The pools its labels and taints let it onto (Karpenter's launches included)."""
    on_gpus: list[PoolFacts]
    """Of those, the ones with a node that has its GPUs, or that Karpenter launches for it."""
    admitted: list[PoolFacts]
    """Of those, where it lands: a node also allocates its DRA claims (`facts.pools`)."""
    selected: list[PoolFacts]
    """The pools its nodeSelector / required affinity picks by label."""
    launched: list[PoolFacts]
    """The Karpenter pools it lands on by the node Karpenter would launch for it."""
    dra_verdicts: dict[str, Allocation | None]
    """Pool -> the allocation that keeps its claims out (None: they are allocated)."""
    booting: list[tuple[PoolFacts, list[str]]]
    """Cloud pools it would land on once discovery labels their nodes, with those labels."""
    shape: bytes | None = None
    """Its shape key (`shapes.Shapes.key`; None: decided alone): what it shares with its twins."""

    @property
    def out(self) -> Findings:
        return self.check.out

    @property
    def pools(self) -> list[PoolFacts]:
        return self.check.pools


def _facts(
    t: Template,
    base: Placement,
    gpus: int,
    admitted: Sequence[PoolFacts],
    use: DraUse,
    model_size: float | None,
) -> WorkloadFacts:
    return WorkloadFacts(
        resource=t.resource,
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


def _infer_ert(entries: Sequence[Mapping[str, Any]], pools: Sequence[PoolFacts]) -> bool:
    """ExtendedResourceToleration: on when any pool is GKE's, EKS's or AKS's (`ERT_PROVIDERS`) or
    a NodePatch says so (`ERT_ANNOTATION`), off when the graph has only other existing nodes."""
    return any(p.provider in ERT_PROVIDERS for p in pools) or any(
        e["type"] == NODE_PATCH
        and str(str_map(metadata(as_map(e.get("inputs"))).get("annotations")).get(ERT_ANNOTATION))
        == "true"
        for e in entries
    )


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
