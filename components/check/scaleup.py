"""The scale-up proof: for a pool that can be at zero, will its autoscaler make a node for the pod?

- GI026 karpenter-will-not-launch: the pod lands on a Karpenter pool (its node templates admit it)
  but Karpenter's provisioner would create no NodeClaim for it from that NodePool
  (`components.model.autoscalers.karpenter_launch.launch`: requirements, requests against allocatable,
  `limits` against capacity, capacity types and their offerings). Judged against the catalog's
  GPU instance types, so only for pods that request GPUs or pools that admit nothing but GPU
  instance types (a CPU pod may get a CPU type the catalog does not list), unless the reason
  holds whatever the instance types (an ignored pod, a NodePool never Ready, a taint).
- GI027 dra-not-provisioned: a pod taking devices through DRA ResourceClaims lands on a Karpenter
  (or EKS Auto Mode) pool: Karpenter ignores such pods (IGNORE_DRA_REQUESTS, default true at
  kubernetes-sigs/karpenter v1.14.1; kubernetes-sigs/karpenter#3228,
  aws/karpenter-provider-aws#9519), so no node is launched for it.
- GI028 dra-driver-label: a pod taking GPUs through DRA lands on a GKE pool whose nodes lack the
  labels GKE's DRA setup needs (`readers.gke_dra`), or on Autopilot, which has no DRA.
- GI029 autopilot-request-out-of-range: a GPU pod Autopilot would reject
  (`components.model.nodes.autopilot.autopilot_gpu_problem`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..model.autoscalers.karpenter_azure import AksNodeClassInfo
from ..model.autoscalers.karpenter_launch import (
    InstanceType,
    Launch,
    NodeClassInfo,
    NodePoolSpec,
    PendingPod,
    admitted_by,
    daemon_overheads,
    launch,
    refusal,
)
from ..model.errors import InputError
from ..model.nodes.autopilot import autopilot_gpu_problem
from ..model.nodes.daemonsets import DaemonPod, system_daemons
from ..model.nodes.shapes import Resources
from ..model.scheduling import Placement
from .contract import (
    AUTOPILOT_CLUSTER,
    AUTOPILOT_POOL,
    GKE_ACCELERATOR_COUNT_LABEL,
    GKE_ACCELERATOR_LABEL,
    GKE_NODE_POOL,
)
from .fit import pod_ask
from .read import Findings, Template, is_type
from .readers.autopilot import is_autopilot_cluster
from .readers.daemonsets import graph_daemons
from .readers.dra import DraIndex, DraUse, missing_dra_labels, read_dra
from .readers.karpenter import karpenter_launch_spec, node_classes, node_overlays
from .readers.nap import aks_node_classes, is_nap_nodepool, nap_launch_spec
from .results import PoolFacts

if TYPE_CHECKING:
    from .rules import PodContext

# Reasons that hold whatever instance types exist: judged for every pod.
_ANY_UNIVERSE = ("pod", "nodepool", "taints")


@dataclass(frozen=True)
class KarpenterPool:
    """One NodePool of the graph with what Karpenter would offer it."""

    key: str  # `type::name`, as PoolFacts.keys holds it
    spec: NodePoolSpec
    node_class: NodeClassInfo | AksNodeClassInfo
    instance_types: tuple[InstanceType, ...]
    admits_cpu: bool
    daemons: tuple[DaemonPod, ...] = ()  # the cluster's DaemonSet pods Karpenter reads

    @cached_property
    def admitted(self) -> list[InstanceType]:
        """The instance types the NodePool admits, whatever the pod: computed once."""
        return admitted_by(self.spec, self.instance_types)

    @cached_property
    def overheads(self) -> dict[str, Resources]:
        """Instance type -> the DaemonSet pods its nodes would run (`daemon_overheads`)."""
        return daemon_overheads(self.spec, self.admitted, self.daemons)

    @cached_property
    def _decisions(self) -> dict[Hashable, Launch]:
        return {}

    @cached_property
    def _refusals(self) -> dict[Hashable, Launch | None]:
        return {}

    def launch(self, pod: PendingPod, key: Hashable | None = None) -> Launch:
        """Karpenter's decision for the pod with this NodePool alone (`karpenter_launch.launch`):
        made once per distinct pod (its `key`), since the pods of a stack repeat a few shapes;
        and a refusal their requests do not decide (`karpenter_launch.refusal`: most pods'
        selectors rule out most NodePools) once per placement."""
        key = pod.key() if key is None else key
        found = self._decisions.get(key)
        if found is None:
            placed = pod.placement_key
            if placed not in self._refusals:
                self._refusals[placed] = refusal(pod, self.spec, self.instance_types, self.admitted)
            refused = self._refusals[placed]
            found = self._decisions[key] = (
                refused
                if refused is not None
                else launch(pod, self.spec, self.instance_types, self.admitted, self.overheads)
            )
        return found


def karpenter_pod_requests(t: Template) -> Resources:
    """What Karpenter (and kube-scheduler) count for the pod template: the pod as it runs, with
    what Knative, KServe and Seldon add to it, as the fit judgement counts it (`fit.pod_ask`:
    containers, sidecars, the largest init container, overhead, `pods: 1`). Raises InputError for
    a quantity Kubernetes would refuse."""
    return pod_ask(t)


def pending_pod(placement: Placement, requests: Resources, dra: bool) -> PendingPod:
    """The pod as Karpenter reads it (`placement` with the tolerations admission adds)."""
    affinity = placement.node_affinity
    required = None
    match_fields = False
    if affinity is not None and affinity.required is not None:
        terms = []
        for term in affinity.required:
            match_fields = match_fields or bool(term.match_fields)
            terms.append(
                tuple(
                    (r.key, r.operator, tuple(r.values or ())) for r in term.match_expressions or ()
                )
            )
        required = tuple(terms) or None
    preferred = tuple(
        (
            p.weight,
            tuple(
                (r.key, r.operator, tuple(r.values or ()))
                for r in p.preference.match_expressions or ()
            ),
        )
        for p in (affinity.preferred if affinity is not None else ()) or ()
    )
    return PendingPod(
        node_selector=dict(placement.node_selector or {}),
        required=required,
        preferred=preferred,
        tolerations=tuple(placement.tolerations or ()),
        requests=requests,
        dra=dra,
        match_fields=match_fields,
    )


class ScaleUp:
    """The scale-up facts of one graph: its Karpenter NodePools, its DRA objects, Autopilot."""

    def __init__(self, graph: Sequence[Mapping[str, Any]], out: Findings) -> None:
        classes = node_classes(graph)
        aks_classes = aks_node_classes(graph)
        overlays = node_overlays(graph)
        self.graph_daemons = tuple(graph_daemons(graph))
        self.karpenter: dict[str, KarpenterPool] = {}
        offered: list[tuple[object, tuple[InstanceType, ...]]] = []
        for entry in graph:
            typ = str(entry.get("type", ""))
            if not is_type(typ, "karpenter.sh", "NodePool"):
                continue
            # The provider's node class offers the instance types (AWS: EC2NodeClass; Azure:
            # AKSNodeClass); the same scheduler model judges both.
            nc: NodeClassInfo | AksNodeClassInfo
            if is_nap_nodepool(entry):
                spec, nc = nap_launch_spec(entry, aks_classes, out)
            else:
                spec, nc = karpenter_launch_spec(entry, classes, out)
            # Node classes that differ in their name alone offer equal instance types (for
            # one NodePool, when a NodeOverlay may name it): made once, their requirements too.
            same = (replace(nc, name=""), spec.name if overlays else None)
            types = next((ts for key, ts in offered if key == same), None)
            if types is None:
                types = tuple(nc.instance_types(overlays, spec.name))
                offered.append((same, types))
            self.karpenter[f"{typ}::{entry.get('name')}"] = KarpenterPool(
                f"{typ}::{entry.get('name')}",
                spec,
                nc,
                types,
                nc.admits_cpu(spec),
                self.daemons_for(nc),
            )
        self.dra: DraIndex = read_dra(graph)
        self.autopilot = any(
            entry.get("type") == AUTOPILOT_POOL or is_autopilot_cluster(entry) for entry in graph
        )

    def daemons_for(self, node_class: NodeClassInfo | AksNodeClassInfo) -> tuple[DaemonPod, ...]:
        """The DaemonSet pods Karpenter reads for a NodePool of this node class: the provider's
        own (`daemon_kind`: EKS's on EC2NodeClass nodes, none on Auto Mode's, which run them on
        the host, nor on AKS's, whose system DaemonSets have no public manifest at a version),
        then the graph's."""
        own = system_daemons(node_class.daemon_kind)
        return (*own, *self.graph_daemons)

    def karpenter_pools(self, pool: PoolFacts) -> list[KarpenterPool]:
        """The pool's Karpenter NodePools (none: not Karpenter), found once per pool."""
        found = self._of_pool.get(pool.name)
        if found is None:
            found = self._of_pool[pool.name] = [
                self.karpenter[k] for k in pool.keys if k in self.karpenter
            ]
        return found

    @cached_property
    def _of_pool(self) -> dict[str, list[KarpenterPool]]:
        return {}

    def dra_use(self, t: Template) -> DraUse:
        """The template's DRA claims, read once per template (the landing, the fit judgement
        and the checks each ask). Keyed by identity, the template held beside its answer."""
        found = self._uses.get(id(t))
        if found is None or found[0] is not t:
            found = self._uses[id(t)] = (t, self.dra.use(t))
        return found[1]

    @cached_property
    def _uses(self) -> dict[int, tuple[Template, DraUse]]:
        return {}

    def launches(self, t: Template, placement: Placement, pool: PoolFacts) -> list[Launch]:
        """Karpenter's decision for the pod on each NodePool of `pool` (none: not Karpenter).
        Raises InputError for a request quantity Kubernetes would refuse."""
        pod = pending_pod(placement, karpenter_pod_requests(t), self.dra_use(t).any)
        return [kp.launch(pod) for kp in self.karpenter_pools(pool)]

    def launches_for(self, t: Template, placement: Placement, pool: PoolFacts) -> bool:
        """Karpenter launches a node for the pod from a (non-static) NodePool of `pool`."""
        mine = [kp for kp in self.karpenter_pools(pool) if not kp.spec.static]
        if t.daemonset or not mine:
            return False
        try:
            pod = pending_pod(placement, karpenter_pod_requests(t), self.dra_use(t).any)
        except (InputError, TypeError, ValueError):
            return False
        return any(kp.launch(pod).launches for kp in mine)

    def karpenter_landing(
        self, t: Template, placement: Placement, pools: Sequence[PoolFacts]
    ) -> list[PoolFacts]:
        """Of `pools`, the Karpenter pools on which Karpenter would launch a node for the pod:
        their node templates carry only the labels known before launch, the node Karpenter makes
        also those the pod's selectors pick (`karpenter_launch.launch`)."""
        launching = [
            (p, kps)
            for p in pools
            if (kps := [kp for kp in self.karpenter_pools(p) if not kp.spec.static])
        ]
        if t.daemonset or not launching:
            return []
        try:
            pod = pending_pod(placement, karpenter_pod_requests(t), self.dra_use(t).any)
        except (InputError, TypeError, ValueError):
            return []
        key = pod.key()
        return [p for p, kps in launching if any(kp.launch(pod, key).launches for kp in kps)]


def karpenter_will_not_launch(ctx: PodContext) -> None:
    """GI026: Karpenter's decision for the pod on each (dynamic) NodePool it lands on. A pod
    asking no GPU on a NodePool that admits CPU instance types is judged only for the causes
    that hold whatever the instance types (the catalog lists GPU types alone)."""
    t, w, scale = ctx.template, ctx.facts, ctx.check.scale
    if t.daemonset or ctx.use.any:
        return  # a pod with claims is GI027's
    try:
        requests = karpenter_pod_requests(t)
    except (InputError, TypeError, ValueError):
        return  # GI013 names the quantity
    pod = pending_pod(ctx.placement, requests, False)
    for pool in ctx.on_gpus:
        for kp in scale.karpenter_pools(pool):
            if kp.spec.static:
                continue
            result = kp.launch(pod)
            if result.launches:
                continue
            if w.gpus == 0 and kp.admits_cpu and result.cause not in _ANY_UNIVERSE:
                continue
            if result.cause == "requests" and pool.name in w.unfit:
                continue  # no node of the pool holds it: GI021 / GI024 say which resource
            ctx.out.add(
                "GI026",
                w.resource,
                f"lands on pool {pool.name} but Karpenter would launch no node for it from "
                f"NodePool {kp.spec.name} ({result.cause}): {result.reason}",
                _fix(result, kp),
            )


def dra_not_provisioned(ctx: PodContext) -> None:
    """GI027: a pod with DRA claims on a Karpenter pool, which Karpenter ignores."""
    if ctx.template.daemonset or not ctx.use.any:
        return
    claims = ", ".join(ctx.use.claims)
    for pool in ctx.on_gpus:
        nodepools = [
            kp.spec.name for kp in ctx.check.scale.karpenter_pools(pool) if not kp.spec.static
        ]
        if nodepools:
            ctx.out.add(
                "GI027",
                ctx.facts.resource,
                f"takes its devices through DRA ResourceClaim(s) ({claims}) and lands on pool "
                f"{pool.name}, which Karpenter provisions (NodePool {', '.join(nodepools)}); "
                "Karpenter ignores pods with DRA requests (IGNORE_DRA_REQUESTS, default true "
                "in v1.14.1): no node is ever launched for it",
                "request nvidia.com/gpu instead of a ResourceClaim on Karpenter pools, or run "
                "it on a pool that keeps nodes up",
            )


def dra_driver_label(ctx: PodContext) -> None:
    """GI028: a pod taking GPUs by claim on Autopilot, or on a GKE pool without DRA's labels."""
    use, rid = ctx.use, ctx.facts.resource
    if ctx.template.daemonset or use.gpu is not True:
        return
    claims = ", ".join(use.claims)
    for pool in ctx.on_gpus:
        if pool.provider != "gke":
            continue
        if _on_autopilot(pool):
            ctx.out.add(
                "GI028",
                rid,
                f"takes its GPU(s) through DRA ResourceClaim(s) ({claims}) on Autopilot pool "
                f"{pool.name}: Autopilot clusters do not support DRA",
                "request nvidia.com/gpu on Autopilot, or use a GKE Standard node pool set up "
                "for DRA",
            )
            continue
        if not any(
            _type_of(k) == GKE_NODE_POOL or _type_of(k).endswith(":ComputeClass") for k in pool.keys
        ):
            continue
        missing = missing_dra_labels(pool.labels)
        if missing:
            ctx.out.add(
                "GI028",
                rid,
                f"takes its GPU(s) through DRA ResourceClaim(s) ({claims}) on GKE pool "
                f"{pool.name}, whose nodes lack {', '.join(missing)}: no DRA driver publishes "
                "their GPUs, so the claim is never allocated",
                f"label pool {pool.name}'s nodes {', '.join(missing)} (GKE's DRA setup; also "
                "gpu-driver-version=disabled), and install NVIDIA's DRA driver",
            )


def autopilot_request(ctx: PodContext) -> None:
    """GI029: in a graph with Autopilot, a GPU pod Autopilot would reject."""
    w, placement = ctx.facts, ctx.placement
    if ctx.template.daemonset or not ctx.check.scale.autopilot:
        return
    accelerator = _selected(placement, GKE_ACCELERATOR_LABEL)
    count = _selected(placement, GKE_ACCELERATOR_COUNT_LABEL)
    if accelerator == _SEVERAL or count == _SEVERAL:
        return  # one of several: which one Autopilot sees is not known here
    if not any(_on_autopilot(p) for p in ctx.on_gpus) and accelerator is None and w.gpus == 0:
        return
    problem = autopilot_gpu_problem(accelerator, count, w.gpus)
    if problem:
        ctx.out.add(
            "GI029",
            w.resource,
            f"Autopilot would reject it: {problem[0]}",
            f"request what Autopilot accepts ({problem[1]})",
        )


_SEVERAL = "(several)"


def _selected(placement: Placement, key: str) -> str | None:
    """The value the pod selects for `key`: by nodeSelector, or `In` one value in every required
    node affinity term; `_SEVERAL` when the terms allow several; None when it selects none."""
    value = (placement.node_selector or {}).get(key)
    if value is not None:
        return value
    affinity = placement.node_affinity
    terms = affinity.required if affinity is not None else None
    values: set[str] = set()
    for term in terms or ():
        found = [r for r in term.match_expressions or () if r.key == key and r.operator == "In"]
        if not found:
            return None
        values.update(found[0].values or ())
    if not values:
        return None
    return values.pop() if len(values) == 1 else _SEVERAL


def _type_of(key: str) -> str:
    return key.rsplit("::", 1)[0]


def _on_autopilot(pool: PoolFacts) -> bool:
    return any(_type_of(k) in (AUTOPILOT_POOL, AUTOPILOT_CLUSTER) for k in pool.keys)


def _fix(result: Launch, kp: KarpenterPool) -> str:
    name = kp.spec.name
    if result.cause == "limits":
        return (
            f"raise NodePool {name}'s limits (karpenter.maxTotalGpus / maxNodes) to at least one "
            "instance type's capacity, or admit smaller instance types"
        )
    if result.cause == "capacity-type":
        return (
            f"select capacity reservations on node class {kp.node_class.name} "
            "(capacityReservationSelectorTerms; karpenter.capacityReservations) or allow "
            "on-demand / spot capacity"
        )
    if result.cause == "requests":
        return f"lower the pod's requests or let NodePool {name} admit larger instance types"
    if result.cause == "nodepool":
        return f"fix NodePool {name} (Karpenter leaves a NodePool that fails validation unused)"
    if result.cause == "pod":
        return "drop the restricted node selector / affinity (Karpenter ignores the pod)"
    if result.cause == "taints":
        return f"tolerate NodePool {name}'s taints"
    return f"loosen NodePool {name}'s requirements or the pod's node selector / affinity"
