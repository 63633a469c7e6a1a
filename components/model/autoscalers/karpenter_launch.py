"""Whether Karpenter launches a node for a pending pod from one NodePool, from zero, and with which
instance types and capacity types: its provisioning scheduler's decision, in pure Python.

Pure (imports nothing but `components.model`). The placement check turns a NodePool found in any
graph into a `NodePoolSpec`, our catalog into `InstanceType`s (`catalog_instance_types`), a pod
template into a `PendingPod`, and reports `launch(...)` when it launches nothing (GI026). The e2e
differential (tests/e2e/test_karpenter_differential.py) holds it against Karpenter's own scheduler.

Sources: kubernetes-sigs/karpenter at v1.14.1 (commit 6e7eab7a0f48, the version
aws/karpenter-provider-aws v1.14.1 pins); paths below are under its `pkg/`:
- `scheduling/requirement.go`, `requirements.go`: the requirement algebra (`Requirement`:
  a value set or its complement, with integer bounds; Gt n is Gte n+1, Lt n is Lte n-1;
  `Compatible` = every key the other side names is defined here, well-known, or NotIn /
  DoesNotExist there, then `Intersects` on the shared keys; NotIn / DoesNotExist on both sides
  always intersect).
- `controllers/provisioning/scheduling/nodeclaimtemplate.go` `NewNodeClaimTemplate`: a
  NodePool's requirements plus its template labels, `karpenter.sh/nodepool`, the node class
  label `<group>/<kind lower case>` and `karpenter.sh/{registered,initialized} In [true]`.
- `controllers/provisioning/scheduling/scheduler.go`: `NewScheduler` keeps the instance types
  compatible with the template that have a compatible offering (:155-170); `add` refuses DRA pods
  while IGNORE_DRA_REQUESTS (default true, `operator/options/options.go`:133) (:583-586);
  `addToNewNodeClaim` stops at `limits.nodes` 0 and drops every instance type whose *capacity*
  of a limited resource exceeds what remains (`filterByRemainingResources` :1069-1085);
  `trySchedule` relaxes the pod on failure (`preferences.go`: drop the first required node
  affinity term while more than one is left, then the heaviest preferred term, then tolerate
  PreferNoSchedule taints when a NodePool has one).
- `controllers/provisioning/scheduling/nodeclaim.go` `CanAdd`: every template taint (any effect)
  tolerated; the pod's requirements (`scheduling.NewPodRequirements`: nodeSelector, the heaviest
  preferred term, the first required term) compatible with the template's; then
  `filterInstanceTypesByRequirements`: compatible, requests (`resources.RequestsForPods`: the pod's
  requests plus `pods: 1`) within allocatable (capacity - kubeReserved - systemReserved -
  eviction), and an available offering compatible with the requirements. `FinalizeScheduling`
  narrows the capacity type to `reserved` when a reserved offering was taken (ReservedCapacity is
  on by default); the NodeClaim lists every remaining instance type (`MaxInstanceTypes` 600).
- `controllers/provisioning/provisioner.go` `Validate` (:561-653): a pod that requires
  `karpenter.sh/nodepool DoesNotExist`, or selects a restricted label, is ignored.
- `apis/v1/nodepool_validation.go` `RuntimeValidate`: a NodePool with restricted template
  labels or requirement keys is never Ready, so never used.
- aws/karpenter-provider-aws v1.14.1 `pkg/apis/v1/labels.go`:31-74 registers its labels as
  well-known and `karpenter.k8s.aws` as a restricted domain; `pkg/providers/instancetype/types.go`
  :171-245 gives each instance type `karpenter.sh/capacity-type In` the capacity types it is offered
  in, reserved only where the EC2NodeClass selects a capacity reservation.

DaemonSet overhead: `daemon_overheads` (`buildDaemonOverheadGroups`, `isDaemonPodCompatible`),
added to the pod's requests per instance type.

Not modelled (lenient: they never make this module refuse what Karpenter would launch): zones
and topology spread, pod (anti-)affinity, volumes, host ports, existing and in-flight
nodes (limits count from zero), minValues, instance types the catalog lacks, requirement keys
the catalog does not describe (they narrow nothing here).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property

from ..errors import InputError
from ..nodes.aws_instances import EC2_INSTANCES
from ..nodes.catalog import AWS_GPU_INSTANCES, AwsGpuInstance
from ..nodes.daemonsets import DaemonPod
from ..nodes.karpenter_kubelet import KarpenterKubelet
from ..nodes.shapes import (
    RESOURCE_NAMES,
    NodeShape,
    Resources,
    format_apart,
    format_resource,
    karpenter_node_shape_or_none,
)
from ..scheduling.placement import Placement
from ..scheduling.taints import Taint, Toleration
from .karpenter import (
    ARCHES,
    AUTO_MODE_PREFIX,
    AWS_PREFIX,
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    instance_labels,
)
from .karpenter_requirements import (
    ABSENT_ON_GPU_TYPES,
    AWS,
    CAPACITY_TYPE_VALUES,
    INITIALIZED_LABEL,
    REGISTERED_LABEL,
    RESERVATION_ID_LABEL,
    RESERVATION_LABELS,
    KarpenterProvider,
    Req,
    Requirements,
    label_requirements,
    requirement_problem,
    requirements_of,
)

# ---------------------------------------------------------------------------------------------
# Instance types, NodePools, pods
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Offering:
    """Where an instance type can be launched: a capacity type (reserved: in a reservation), with
    the labels a node of it gets (`labels`) and those it lacks (`absent`)."""

    capacity_type: str
    reservation_id: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    """Further single-valued labels of the offering (Azure: `kubernetes.azure.com/
    scalesetpriority` and `priority`, `regular` or `spot`)."""
    absent: tuple[str, ...] | None = None
    """Keys the offering has as DoesNotExist; None: the AWS resolvers' (the reservation labels
    unless it is reserved)."""

    @cached_property
    def requirements(self) -> Requirements:
        """As the AWS resolvers shape them (offering/base_resolver.go:127-139,
        reserved_capacity_resolver.go:90-103), or the Azure provider (instancetypes.go
        `createOfferings`); zones are not modelled."""
        reqs = Requirements([Req.of(CAPACITY_TYPE_LABEL, "In", [self.capacity_type])])
        reqs.add(*(Req.of(k, "In", [v]) for k, v in self.labels.items()))
        if self.reservation_id is not None:
            reqs.add(Req.of(RESERVATION_ID_LABEL, "In", [self.reservation_id]))
        reqs.add(*(Req.of(k, "DoesNotExist") for k in self.absent_keys))
        return reqs

    @property
    def absent_keys(self) -> tuple[str, ...]:
        if self.absent is not None:
            return self.absent
        return () if self.reservation_id is not None else RESERVATION_LABELS


@dataclass(frozen=True)
class InstanceType:
    """What the cloud provider hands the scheduler for one instance type (an EC2 instance type,
    an Azure VM size)."""

    name: str
    labels: Mapping[str, str]
    capacity: Resources
    allocatable: Resources | None  # None: not known (EKS Auto Mode): only GPUs are judged
    offerings: tuple[Offering, ...]
    absent: tuple[str, ...] = ABSENT_ON_GPU_TYPES  # keys it has as DoesNotExist
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Keys it has with several values (Azure: `kubernetes.azure.com/mode` In [system, user])."""

    @cached_property
    def requirements(self) -> Requirements:
        """Its labels, type, capacity types and the offerings' labels as requirements; computed
        once per instance type (every pod x NodePool pair reads them): callers `copy()` before
        adding. A key every offering lacks is DoesNotExist; one some offering has takes the
        values the offerings give it."""
        reqs = label_requirements(self.labels)
        reqs.add(*(Req.of(k, "In", list(v)) for k, v in self.values.items()))
        reqs.add(Req.of("node.kubernetes.io/instance-type", "In", [self.name]))
        types = sorted({o.capacity_type for o in self.offerings})
        reqs.add(Req.of(CAPACITY_TYPE_LABEL, "In", types))
        offered: dict[str, set[str]] = {}
        for o in self.offerings:
            for k, v in o.labels.items():
                offered.setdefault(k, set()).add(v)
            if o.reservation_id:
                offered.setdefault(RESERVATION_ID_LABEL, set()).add(o.reservation_id)
        reqs.add(*(Req.of(k, "In", sorted(v)) for k, v in sorted(offered.items())))
        lacking = set.intersection(*(set(o.absent_keys) for o in self.offerings))
        reqs.add(*(Req.of(k, "DoesNotExist") for k in sorted(lacking)))
        reqs.add(*(Req.of(k, "DoesNotExist") for k in self.absent if k not in self.labels))
        return reqs

    def fits(self, requests: Resources) -> bool:
        """`resources.Fits(requests, allocatable)`; with allocatable unknown, GPUs only."""
        if self.allocatable is None:
            return requests.gpus <= self.capacity.gpus
        held = self.allocatable
        if any(v < 0 for _, v in held.items()):
            return False
        return requests.fits_in(held)


@dataclass(frozen=True)
class NodePoolSpec:
    """A `karpenter.sh/v1` NodePool as the scheduler reads it."""

    name: str
    requirements: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    limits: Mapping[str, int] = field(default_factory=dict)
    """Resource name -> amount in `Resources` units (cpu millicores, bytes), plus `nodes`."""
    weight: int = 0
    node_class: tuple[str, str] = ("karpenter.k8s.aws/ec2nodeclass", "default")
    """The template label `<group>/<kind lower case>` = the node class name."""
    static: bool = False  # spec.replicas: nodes the provisioner never launches for pods
    problem: str | None = None  # why RuntimeValidate fails (the NodePool is never Ready)
    provider: KarpenterProvider = AWS
    """The cloud provider whose controller reads it (its well-known labels and domains)."""

    def template_requirements(self) -> Requirements:
        """What every node of the NodePool carries, as requirements; made once per NodePool
        (every pod it is asked about reads them): callers `copy()` before adding."""
        return self._template

    @cached_property
    def _template(self) -> Requirements:
        reqs = requirements_of(self.requirements)
        reqs.add(*label_requirements(self.labels).by_key.values())
        reqs.add(Req.of(NODEPOOL_LABEL, "In", [self.name]))
        reqs.add(Req.of(self.node_class[0], "In", [self.node_class[1]]))
        reqs.add(
            Req.of(REGISTERED_LABEL, "In", ["true"]), Req.of(INITIALIZED_LABEL, "In", ["true"])
        )
        return reqs


Term = tuple[tuple[str, str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class PendingPod:
    """What Karpenter reads of a pending pod."""

    node_selector: Mapping[str, str] = field(default_factory=dict)
    required: tuple[Term, ...] | None = None  # required node affinity terms (ORed)
    preferred: tuple[tuple[int, Term], ...] = ()  # (weight, term)
    tolerations: tuple[Toleration, ...] = ()
    requests: Resources = field(default_factory=lambda: Resources(pods=1))
    dra: bool = False  # spec.resourceClaims or a container's resources.claims
    match_fields: bool = False  # a required term uses matchFields

    def key(self) -> Hashable:
        """Everything Karpenter reads of the pod, hashable: two pods with one key get one
        decision from a NodePool."""
        return (
            tuple(sorted(self.node_selector.items())),
            self.required,
            self.preferred,
            self.tolerations,
            self.requests,
            self.dra,
            self.match_fields,
        )

    @cached_property
    def placement_key(self) -> Hashable:
        """`key` without the requests: all `refusal` reads of the pod."""
        return (
            tuple(sorted(self.node_selector.items())),
            self.required,
            self.preferred,
            self.tolerations,
            self.dra,
            self.match_fields,
        )

    def requirements(self) -> Requirements:
        """`NewPodRequirements`: nodeSelector, the heaviest preferred term, the first required
        term; made once per pod: callers `copy()` before adding."""
        return self._requirements

    @cached_property
    def _requirements(self) -> Requirements:
        reqs = label_requirements(self.node_selector)
        if self.preferred:
            heaviest = sorted(self.preferred, key=lambda p: -p[0])[0][1]
            reqs.add(*requirements_of(heaviest).by_key.values())
        if self.required:
            reqs.add(*requirements_of(self.required[0]).by_key.values())
        return reqs

    def problem(self, provider: KarpenterProvider = AWS) -> str | None:
        """`Provisioner.Validate`: why Karpenter ignores the pod, or None."""
        if self.required and self.match_fields:
            return "node selector term with matchFields is not supported"
        exprs: list[tuple[str, str, tuple[str, ...]]]
        exprs = [(k, "In", (v,)) for k, v in self.node_selector.items()]
        exprs += [r for t in self.required or () for r in t]
        for key, op, values in exprs:
            p = requirement_problem(key, op, values, provider)
            if p:
                return p
        reqs = self.requirements()
        nodepool = reqs.by_key.get(NODEPOOL_LABEL)
        if nodepool is not None and nodepool.operator == "DoesNotExist":
            return f"configured to not run on a Karpenter provisioned node ({NODEPOOL_LABEL} DoesNotExist)"
        return None


@dataclass(frozen=True)
class Launch:
    """Karpenter's decision for one pod and one NodePool."""

    node_pool: str
    instance_types: tuple[str, ...] = ()  # sorted; empty: nothing launched
    capacity_types: tuple[str, ...] = ()  # sorted
    cause: str = (
        ""  # "" | pod | dra | nodepool | requirements | capacity-type | limits | taints | requests
    )
    reason: str = ""

    @property
    def launches(self) -> bool:
        return bool(self.instance_types)


# ---------------------------------------------------------------------------------------------
# Our catalog as Karpenter's instance types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeClassInfo:
    """What of an EC2NodeClass (or EKS Auto Mode NodeClass) changes the instance types."""

    name: str = "default"
    disk_gib: int | None = 20  # the root (ephemeral) volume; None: not known
    ami_family: str | None = "AL2023"  # AL2023 | Bottlerocket; None: other (shape not known)
    max_pods: int | None = None
    reservations: bool = False  # capacityReservationSelectorTerms given
    auto_mode: bool = False
    shape_known: bool = True  # False: not in the graph, an AMI family or setting not modelled
    kubelet: KarpenterKubelet = field(default_factory=KarpenterKubelet)
    """kubeReserved, systemReserved, evictionHard, podsPerCore, instanceStorePolicy RAID0."""
    unknown: str | None = None  # why its nodes' shape is not known, when it is not
    provider: KarpenterProvider = AWS

    @property
    def daemon_kind(self) -> str:
        """The provider's own DaemonSets its nodes run (`system_daemons`): EKS's; none on Auto
        Mode's nodes, which run them on the host."""
        return "none" if self.auto_mode else "eks"

    def shape(self, instance_type: str) -> tuple[NodeShape | None, str | None]:
        """The node Karpenter believes it launches of `instance_type` with this node class, or
        None and why (`shapes.karpenter_node_shape` with its volume, AMI family, maxPods and
        kubelet settings)."""
        if self.auto_mode:
            return None, "EKS Auto Mode's node reservations are not modelled"
        if not self.shape_known or self.ami_family is None or not self.disk_gib:
            return None, self.unknown or f"node class {self.name}'s nodes are not modelled"
        try:
            shape = karpenter_node_shape_or_none(
                instance_type,
                disk_gib=self.disk_gib,
                ami_family=self.ami_family,
                max_pods=self.max_pods,
                kubelet=None if self.kubelet.is_default else self.kubelet,
            )
        except InputError as e:
            return None, f"{instance_type}: {e.problem}"
        if shape is None:
            return None, f"instance type {instance_type} is not in the node-shape catalog"
        return shape, None

    def instance_types(
        self,
        overlays: Sequence[tuple[Requirements, Mapping[str, int]]] = (),
        pool: str | None = None,
    ) -> list[InstanceType]:
        """The instance types the provider offers for this node class (`catalog_instance_types`):
        with `karpenter_azure.AksNodeClassInfo`, the one interface the check reads them by."""
        return catalog_instance_types(self, overlays, pool)

    def admits_cpu(self, pool: NodePoolSpec) -> bool:
        """Whether the NodePool also admits instance types without GPUs (`admits_cpu_types`)."""
        return admits_cpu_types(pool, self.auto_mode)


def catalog_instance_types(
    node_class: NodeClassInfo,
    overlays: Sequence[tuple[Requirements, Mapping[str, int]]] = (),
    pool: str | None = None,
) -> list[InstanceType]:
    """Every GPU instance type of the catalog as the AWS provider would hand it over for this
    node class: labels (`karpenter.instance_labels`), capacity and allocatable
    (`shapes.karpenter_node_shape`, the node class's volume, AMI family and maxPods), offerings
    (on-demand and spot; reserved where the node class selects reservations; Auto Mode: on-demand
    and spot). `overlays`: NodeOverlay (requirements, capacity) pairs whose capacity replaces the
    instance type's (`ApplyCapacityOverlay`) where the requirements match its labels (and `pool`'s
    NodePool label)."""
    out = []
    for inst in AWS_GPU_INSTANCES.values():
        out.append(_instance_type(inst, node_class, overlays, pool))
    return out


def _instance_type(
    inst: AwsGpuInstance,
    nc: NodeClassInfo,
    overlays: Sequence[tuple[Requirements, Mapping[str, int]]],
    pool: str | None,
) -> InstanceType:
    labels = instance_labels(inst, nc.auto_mode)
    shape, _ = nc.shape(inst.instance_type)
    if shape is not None:
        capacity, allocatable = shape.capacity, shape.allocatable
    else:
        ec2 = EC2_INSTANCES.get(inst.instance_type)
        vcpus = ec2.vcpus if ec2 is not None else 0
        capacity, allocatable = Resources(cpu=vcpus * 1000, gpus=inst.gpus), None
    offerings = [Offering("on-demand"), Offering("spot")]
    if nc.reservations and not nc.auto_mode:
        offerings.append(Offering("reserved", f"cr-{inst.instance_type}"))
    it = InstanceType(inst.instance_type, labels, capacity, allocatable, tuple(offerings))
    for reqs, amounts in overlays:
        own = it.requirements.copy()
        if pool is not None:
            own.add(Req.of(NODEPOOL_LABEL, "In", [pool]))
        if own.compatible(reqs) is None:
            it = replace(it, capacity=_override(it.capacity, amounts))
            if it.allocatable is not None:
                it = replace(it, allocatable=_override(it.allocatable, amounts))
    return it


def _override(res: Resources, amounts: Mapping[str, int]) -> Resources:
    fields = {f: getattr(res, f) for f in RESOURCE_NAMES}
    for name, value in amounts.items():
        for f, k8s in RESOURCE_NAMES.items():
            if k8s == name:
                fields[f] = value
    return Resources(**fields)


# ---------------------------------------------------------------------------------------------
# The decision
# ---------------------------------------------------------------------------------------------


def admitted_by(pool: NodePoolSpec, instance_types: Sequence[InstanceType]) -> list[InstanceType]:
    """`NewScheduler`'s pre-filter: instance types compatible with the NodePool's template that
    have an offering compatible with it."""
    reqs = pool.template_requirements()
    return [
        it
        for it in instance_types
        if it.requirements.intersects(reqs) is None
        and any(reqs.compatible(o.requirements, pool.provider) is None for o in it.offerings)
    ]


def _capacity(it: InstanceType, resource: str) -> int:
    if resource == "nodes":
        return 0
    try:
        return it.capacity.get(resource)
    except KeyError:
        return 0  # a resource the instance type does not have


def within_limits(pool: NodePoolSpec, instance_types: Sequence[InstanceType]) -> list[InstanceType]:
    """`filterByRemainingResources` from zero usage: capacity (not allocatable) of each limited
    resource at most the limit."""
    return [
        it
        for it in instance_types
        if all(_capacity(it, r) <= limit for r, limit in pool.limits.items())
    ]


def launch(
    pod: PendingPod,
    pool: NodePoolSpec,
    instance_types: Sequence[InstanceType],
    admitted: Sequence[InstanceType] | None = None,
    overheads: Mapping[str, Resources] | None = None,
) -> Launch:
    """Would Karpenter, with this NodePool alone and no nodes, create a NodeClaim for the pod?
    Which instance types and capacity types would it list? (See the module docstring.)
    `admitted`: `admitted_by(pool, instance_types)`, where the caller keeps it for many pods;
    `overheads`: instance type -> the DaemonSet pods its nodes would run
    (`daemon_overheads`), added to the pod's requests."""
    refused = refusal(pod, pool, instance_types, admitted)
    if refused is not None:
        return refused
    if admitted is None:
        admitted = admitted_by(pool, instance_types)
    allowed = within_limits(pool, admitted)
    result = Launch(pool.name)
    for state in _relaxations(pod, [pool]):
        result = _try(state, pool, pool.template_requirements(), allowed, overheads)
        if result.launches:
            return result
    return result


def refusal(
    pod: PendingPod,
    pool: NodePoolSpec,
    instance_types: Sequence[InstanceType],
    admitted: Sequence[InstanceType] | None = None,
) -> Launch | None:
    """`launch`'s answer when the pod's requests do not decide it (the pod, the NodePool and its
    limits refuse, or every relaxation of the pod fails on the taints or the requirements),
    else None. It reads only `PendingPod.placement_key`: callers keep it for the pods that
    differ only in what they request."""

    def no(cause: str, reason: str) -> Launch:
        return Launch(pool.name, cause=cause, reason=reason)

    problem = pod.problem(pool.provider)
    if problem:
        return no("pod", f"Karpenter ignores the pod: {problem}")
    if pool.static:
        return no("nodepool", f"NodePool {pool.name} is static (replicas): it launches for no pod")
    if pool.problem:
        return no("nodepool", f"NodePool {pool.name} is never Ready: {pool.problem}")
    if pod.dra:
        return no(
            "dra",
            "the pod takes devices through DRA ResourceClaims, which Karpenter does not provision "
            "for (IGNORE_DRA_REQUESTS defaults to true)",
        )
    if admitted is None:
        admitted = admitted_by(pool, instance_types)
    if not admitted:
        return no(*_why_none_admitted(pool, instance_types))
    if pool.limits.get("nodes", 1) <= 0:
        return no("limits", f"NodePool {pool.name} has limits.nodes {pool.limits['nodes']}")
    if not within_limits(pool, admitted):
        return no("limits", _limits_reason(pool, admitted))
    result = None
    for state in _relaxations(pod, [pool]):
        result = _blocked(state, pool, pool.template_requirements())
        if result is None:
            return None
    return result


def _relaxations(pod: PendingPod, pools: Sequence[NodePoolSpec]) -> Iterator[PendingPod]:
    """The pod as `trySchedule` tries it, least relaxed first (`Preferences.Relax`): with every
    term, then without the first required term while more than one is left, then without the
    heaviest preferred term, then tolerating PreferNoSchedule taints when a NodePool has one."""
    required = pod.required
    preferred = tuple(sorted(pod.preferred, key=lambda p: -p[0]))
    tolerations = pod.tolerations
    soft = any(t.effect == "PreferNoSchedule" for p in pools for t in p.taints)
    while True:
        if (required, preferred, tolerations) == (pod.required, pod.preferred, pod.tolerations):
            yield pod  # as it is (its requirements made once)
        else:
            yield replace(pod, required=required, preferred=preferred, tolerations=tolerations)
        if required and len(required) > 1:
            required = required[1:]
        elif preferred:
            preferred = preferred[1:]
        elif soft and not any(
            t.operator == "Exists" and not t.key and t.effect == "PreferNoSchedule"
            for t in tolerations
        ):
            tolerations = (*tolerations, Toleration("", "Exists", "", "PreferNoSchedule"))
        else:
            return


def _try(
    pod: PendingPod,
    pool: NodePoolSpec,
    template: Requirements,
    instance_types: Sequence[InstanceType],
    overheads: Mapping[str, Resources] | None = None,
) -> Launch:
    name = pool.name
    blocked = _blocked(pod, pool, template)
    if blocked is not None:
        return blocked
    merged = template.copy().add(*pod.requirements().by_key.values())
    compatible, fitting, remaining = [], [], []
    for it in instance_types:
        if it.requirements.intersects(merged) is not None:
            continue
        compatible.append(it)
        if not it.fits(pod.requests + (overheads or {}).get(it.name, _NONE)):
            continue
        fitting.append(it)
        if any(
            merged.compatible(o.requirements, pool.provider) is None for o in it.offerings
        ):  # available offering
            remaining.append(it)
    if not remaining:
        if not compatible:
            return Launch(
                name,
                cause=_requirements_cause(merged, instance_types),
                reason=(
                    "no instance type the NodePool admits meets the pod's node selector / affinity"
                    f" ({_failing(merged, instance_types)})"
                ),
            )
        if not fitting:
            return Launch(
                name,
                cause="requests",
                reason=_requests_reason(pod.requests, compatible, overheads or {}),
            )
        return Launch(
            name,
            cause="capacity-type",
            reason="no instance type that holds the pod is offered in the capacity type it "
            f"needs ({merged.get(CAPACITY_TYPE_LABEL)})",
        )
    reserved = [
        o
        for it in remaining
        for o in it.offerings
        if o.capacity_type == "reserved"
        and merged.compatible(o.requirements, pool.provider) is None
    ]
    if reserved:
        types: tuple[str, ...] = ("reserved",)
    else:
        types = tuple(
            sorted(
                {
                    o.capacity_type
                    for it in remaining
                    for o in it.offerings
                    if merged.compatible(o.requirements, pool.provider) is None
                }
            )
        )
    return Launch(name, tuple(sorted(it.name for it in remaining)), types)


def _blocked(pod: PendingPod, pool: NodePoolSpec, template: Requirements) -> Launch | None:
    """`CanAdd` before the instance types: a template taint the pod does not tolerate, or its
    requirements incompatible with the NodePool's."""
    name = pool.name
    for taint in pool.taints:
        if not any(t.tolerates(taint) for t in pod.tolerations):
            return Launch(name, cause="taints", reason=f"it does not tolerate the taint {taint}")
    conflict = template.compatible(pod.requirements(), pool.provider)
    if conflict:
        return Launch(
            name,
            cause="requirements",
            reason=f"its node selector / affinity and NodePool {name}'s requirements are "
            f"incompatible ({conflict})",
        )
    return None


def _why_none_admitted(
    pool: NodePoolSpec, instance_types: Sequence[InstanceType]
) -> tuple[str, str]:
    """Why the NodePool's template admits nothing: its capacity types (no instance type is
    offered in them, e.g. reserved without a selected reservation) or its other requirements."""
    reqs = pool.template_requirements()
    wanted = reqs.get(CAPACITY_TYPE_LABEL)
    relaxed = reqs.copy()
    relaxed.by_key.pop(CAPACITY_TYPE_LABEL, None)
    shaped = [it for it in instance_types if it.requirements.intersects(relaxed) is None]
    if shaped and CAPACITY_TYPE_LABEL in reqs:
        offered = sorted({o.capacity_type for it in shaped for o in it.offerings})
        why = ""
        if wanted.has("reserved") and "reserved" not in offered:
            why = (
                "; reserved capacity needs capacityReservationSelectorTerms on its node class "
                f"{pool.node_class[1]}, which selects no capacity reservation"
            )
        return (
            "capacity-type",
            f"NodePool {pool.name} allows only capacity type(s) "
            f"{', '.join(c for c in CAPACITY_TYPE_VALUES if wanted.has(c)) or 'none'} but the "
            f"instance types it admits are offered as {', '.join(offered)}{why}",
        )
    return (
        "requirements",
        f"NodePool {pool.name}'s requirements admit no instance type of the catalog "
        f"({_failing(reqs, instance_types)})",
    )


def _failing(reqs: Requirements, instance_types: Sequence[InstanceType]) -> str:
    """The requirement keys that rule instance types out, most often first."""
    counts: dict[str, int] = {}
    for it in instance_types:
        bad = it.requirements.intersects(reqs)
        if bad is not None:
            counts[bad.key] = counts.get(bad.key, 0) + 1
    keys = sorted(counts, key=lambda k: (-counts[k], k))[:3]
    return "; ".join(str(reqs.get(k)) for k in keys) or "no instance type"


def _requirements_cause(reqs: Requirements, instance_types: Sequence[InstanceType]) -> str:
    """`capacity-type` when only the capacity type keeps every instance type out."""
    relaxed = reqs.copy()
    relaxed.by_key.pop(CAPACITY_TYPE_LABEL, None)
    if CAPACITY_TYPE_LABEL in reqs and any(
        it.requirements.intersects(relaxed) is None for it in instance_types
    ):
        return "capacity-type"
    return "requirements"


def _limits_reason(pool: NodePoolSpec, admitted: Sequence[InstanceType]) -> str:
    over: dict[str, list[str]] = {}
    for it in admitted:
        for r, limit in sorted(pool.limits.items()):
            if _capacity(it, r) > limit:
                over.setdefault(r, []).append(f"{it.name}: {format_resource(r, _capacity(it, r))}")
    r, examples = sorted(over.items(), key=lambda kv: -len(kv[1]))[0]
    shown = ", ".join(examples[:3]) + (
        f" and {len(examples) - 3} more" if len(examples) > 3 else ""
    )
    return (
        f"every instance type NodePool {pool.name} admits exceeds its limits: {r} limit "
        f"{format_resource(r, pool.limits[r])}, capacity {shown} (Karpenter counts capacity, not "
        "allocatable)"
    )


def _requests_reason(
    requests: Resources,
    compatible: Sequence[InstanceType],
    overheads: Mapping[str, Resources],
) -> str:
    known = [it for it in compatible if it.allocatable is not None]
    misfits: dict[str, tuple[int, str, int]] = {}
    for it in compatible:
        held = it.allocatable if it.allocatable is not None else Resources(gpus=it.capacity.gpus)
        daemons = overheads.get(it.name, _NONE)
        name = (requests + daemons).first_misfit(held)
        if name is None:
            continue
        have = held.get(name) - daemons.get(name)
        if name not in misfits or have > misfits[name][0]:
            misfits[name] = (have, it.name, daemons.get(name))
    if not misfits:
        return "no instance type holds the pod's requests"
    name, (have, biggest, daemons_held) = sorted(misfits.items())[0]
    asked, most = format_apart(name, requests.get(name), have)
    estimate = ", Karpenter's estimate before any node was seen" if known else ""
    if daemons_held:
        allocatable = format_resource(name, have + daemons_held)
        return (
            f"it requests {asked} {name} but the most the instance types it may use leave it "
            f"beside their DaemonSets is {most} ({biggest}: {allocatable} allocatable less "
            f"{format_resource(name, daemons_held)}{estimate})"
        )
    return (
        f"it requests {asked} {name} but the largest allocatable of the "
        f"instance types it may use is {most} ({biggest}{estimate})"
    )


_NONE = Resources()


# ---------------------------------------------------------------------------------------------
# DaemonSet overhead (scheduler.go buildDaemonOverheadGroups)
# ---------------------------------------------------------------------------------------------


def _strict_requirements(placement: Placement) -> list[Requirements]:
    """`NewStrictPodRequirements` of a DaemonSet's pod (nodeSelector and the first required node
    affinity term; no preferences), then once more for each required term dropped while more than
    one is left (`removeRequiredNodeAffinityTerm`)."""
    base = label_requirements(placement.node_selector or {})
    affinity = placement.node_affinity
    terms = list((affinity.required if affinity is not None else None) or ())
    if not terms:
        return [base]
    out = []
    while True:
        reqs = base.copy()
        reqs.add(
            *requirements_of(
                (r.key, r.operator, tuple(r.values or ())) for r in terms[0].match_expressions or ()
            ).by_key.values()
        )
        out.append(reqs)
        if len(terms) <= 1:
            return out
        terms = terms[1:]


def daemon_compatible(
    daemon: DaemonPod, pool: NodePoolSpec, template: Requirements, it: InstanceType
) -> bool:
    """`isDaemonPodCompatible`: the DaemonSet's pod tolerates the NodePool's taints (a
    PreferNoSchedule one always), and its strict requirements are compatible with the NodePool's
    (undefined well-known labels allowed) and intersect the instance type's, at some relaxation."""
    tolerations = (
        *(daemon.placement.tolerations or ()),
        Toleration("", "Exists", "", "PreferNoSchedule"),
    )
    for taint in pool.taints:
        if not any(t.tolerates(taint) for t in tolerations):
            return False
    return any(
        template.compatible(reqs, pool.provider) is None
        and it.requirements.intersects(reqs) is None
        for reqs in _strict_requirements(daemon.placement)
    )


def daemon_overheads(
    pool: NodePoolSpec, instance_types: Sequence[InstanceType], daemons: Sequence[DaemonPod]
) -> dict[str, Resources]:
    """Instance type -> the summed requests (and pod count) of the DaemonSet pods a node of it
    launched from `pool` would run (`buildDaemonOverheadGroups` with `resources.RequestsForPods`:
    every compatible one, whether or not it fits; kubernetes-sigs/karpenter v1.14.1
    pkg/controllers/provisioning/scheduling/scheduler.go). `filterInstanceTypesByRequirements`
    then asks each instance type for the pod's requests plus its overhead."""
    if not daemons:
        return {}
    template = pool.template_requirements()
    out = {}
    for it in instance_types:
        total = Resources()
        for d in daemons:
            if daemon_compatible(d, pool, template, it):
                total = total + d.requests
        out[it.name] = total
    return out


def choose(
    pod: PendingPod,
    pools: Sequence[tuple[NodePoolSpec, Sequence[InstanceType]]],
    daemons: Sequence[DaemonPod] = (),
) -> Launch | None:
    """With all these NodePools: the NodePool and instance types Karpenter picks for the pod, or
    None. The NodePools it considers (not static, Ready, admitting an instance type) are tried by
    weight, then name descending (`OrderByWeight`), the first that launches winning, at each
    relaxation of the pod in turn: a lighter NodePool that fits the pod as written beats a heavier
    one that fits it only once a preference is dropped. `daemons`: the cluster's DaemonSet pods
    (their overhead per NodePool and instance type: `daemon_overheads`)."""
    provider = pools[0][0].provider if pools else AWS
    if pod.problem(provider) or pod.dra:
        return None
    ordered = sorted(pools, key=lambda p: (-p[0].weight, _desc(p[0].name)))
    usable = []
    for spec, types in ordered:
        if spec.static or spec.problem:
            continue
        admitted = admitted_by(spec, types)
        if admitted:
            usable.append((spec, admitted))
    for state in _relaxations(pod, [spec for spec, _ in usable]):
        for spec, admitted in usable:
            if spec.limits.get("nodes", 1) <= 0:
                continue
            allowed = within_limits(spec, admitted)
            if not allowed:
                continue
            overheads = daemon_overheads(spec, allowed, daemons)
            result = _try(state, spec, spec.template_requirements(), allowed, overheads)
            if result.launches:
                return result
    return None


def _desc(name: str) -> tuple[int, ...]:
    return (*(-ord(c) for c in name), 1)


_CATEGORY = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")  # types.go computeRequirements


def admits_cpu_types(pool: NodePoolSpec, auto_mode: bool = False) -> bool:
    """Whether the NodePool's requirements also admit EC2 instance types without GPUs (those of
    `aws_instances` the GPU catalog does not hold): then a pod that asks for no GPU may get one of
    them, which this module does not model."""
    reqs = pool.template_requirements()
    return any(it.requirements.intersects(reqs) is None for it in _cpu_instance_types(auto_mode))


@cache
def _cpu_instance_types(auto_mode: bool) -> tuple[InstanceType, ...]:
    """The EC2 instance types without GPUs as Karpenter labels them, made once (catalog data)."""
    prefix = AUTO_MODE_PREFIX if auto_mode else AWS_PREFIX
    out = []
    for inst in EC2_INSTANCES.values():
        if inst.name in AWS_GPU_INSTANCES:
            continue
        family, _, size = inst.name.partition(".")
        labels = {
            "kubernetes.io/arch": ARCHES[inst.arch],
            "kubernetes.io/os": "linux",
            prefix + "instance-family": family,
            prefix + "instance-size": size,
        }
        m = _CATEGORY.match(inst.name)
        if m:
            labels[prefix + "instance-category"] = m.group(1)
            labels[prefix + "instance-generation"] = m.group(3)
        gpu_keys = ("instance-gpu-name", "instance-gpu-manufacturer", "instance-gpu-count")
        offered = (Offering("on-demand"), Offering("spot"), Offering("reserved", "cr"))
        absent = tuple(prefix + k for k in gpu_keys)
        out.append(InstanceType(inst.name, labels, Resources(), None, offered, absent=absent))
    return tuple(out)
