"""Karpenter's requirement algebra and label rules, as its provisioning scheduler applies them:
which labels are well-known or restricted, what makes a pod's or a NodePool's requirement
invalid, and `Req` / `Requirements` (a key's allowed values, their intersection and
compatibility).

Pure (imports nothing but `components.model`). Used by `components.model.autoscalers.karpenter_launch`.

Sources: kubernetes-sigs/karpenter v1.14.1 (commit 6e7eab7a0f48, the version
aws/karpenter-provider-aws v1.14.1 pins) `pkg/scheduling/requirement.go`, `requirements.go`,
`pkg/apis/v1/labels.go`, `nodeclaim_validation.go` (`ValidateRequirement`),
`nodepool_validation.go` (`RuntimeValidate`); aws/karpenter-provider-aws v1.14.1
`pkg/apis/v1/labels.go`:31-74 (the AWS labels registered as well-known, `karpenter.k8s.aws` a
restricted domain, the tenancy values).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..scheduling.quantities import parse_int64
from .karpenter import AUTO_MODE_PREFIX, AWS_PREFIX, CAPACITY_TYPE_LABEL, NODEPOOL_LABEL

# ---------------------------------------------------------------------------------------------
# Labels Karpenter knows
# ---------------------------------------------------------------------------------------------

ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
REGISTERED_LABEL = "karpenter.sh/registered"
INITIALIZED_LABEL = "karpenter.sh/initialized"
RESERVATION_ID_LABEL = AWS_PREFIX + "capacity-reservation-id"
RESERVATION_TYPE_LABEL = AWS_PREFIX + "capacity-reservation-type"
RESERVATION_INTERRUPTIBLE_LABEL = AWS_PREFIX + "capacity-reservation-interruptible"
RESERVATION_LABELS = (RESERVATION_ID_LABEL, RESERVATION_TYPE_LABEL, RESERVATION_INTERRUPTIBLE_LABEL)

_AWS_WELL_KNOWN = (
    "capacity-reservation-id",
    "capacity-reservation-type",
    "capacity-reservation-interruptible",
    "instance-hypervisor",
    "instance-encryption-in-transit-supported",
    "instance-category",
    "instance-capability-flex",
    "instance-family",
    "instance-generation",
    "instance-size",
    "instance-local-nvme",
    "instance-cpu",
    "instance-cpu-manufacturer",
    "instance-cpu-sustained-clock-speed-mhz",
    "instance-memory",
    "instance-ebs-bandwidth",
    "instance-network-bandwidth",
    "instance-gpu-name",
    "instance-gpu-manufacturer",
    "instance-gpu-count",
    "instance-gpu-memory",
    "instance-accelerator-name",
    "instance-accelerator-manufacturer",
    "instance-accelerator-count",
    "instance-tenancy",
    "placement-group-id",
    "placement-group-partition",
)
WELL_KNOWN_LABELS: frozenset[str] = frozenset(
    {
        # core apis/v1/labels.go WellKnownLabels
        NODEPOOL_LABEL,
        ZONE_LABEL,
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        CAPACITY_TYPE_LABEL,
        "node.kubernetes.io/windows-build",
        # the AWS provider's registrations (zone-id included)
        "topology.k8s.aws/zone-id",
        *(AWS_PREFIX + k for k in _AWS_WELL_KNOWN),
    }
)
"""Keys a pod may require although a NodePool does not name them (`AllowUndefinedWellKnownLabels`).
EKS Auto Mode's `eks.amazonaws.com/` keys are taken as its own well-known labels (Auto Mode's
provider is not public: unverified)."""
RESTRICTED_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
RESTRICTED_LABELS = frozenset({HOSTNAME_LABEL})
NORMALIZED_LABELS = {
    "failure-domain.beta.kubernetes.io/zone": ZONE_LABEL,
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/os": "kubernetes.io/os",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
CAPACITY_TYPE_VALUES = ("on-demand", "spot", "reserved")
# Instance-type keys the AWS provider sets to DoesNotExist when an instance lacks them and that
# our GPU catalog's instance types truly lack (types.go:193-215; no Neuron / Gaudi accelerators,
# no Windows).
ABSENT_ON_GPU_TYPES = (
    AWS_PREFIX + "instance-accelerator-name",
    AWS_PREFIX + "instance-accelerator-manufacturer",
    AWS_PREFIX + "instance-accelerator-count",
    "node.kubernetes.io/windows-build",
)


WELL_KNOWN_VALUES = {
    CAPACITY_TYPE_LABEL: frozenset(CAPACITY_TYPE_VALUES),
    AWS_PREFIX + "instance-tenancy": frozenset({"dedicated", "default"}),
}
"""`WellKnownValuesForRequirements` (core, and the AWS provider's tenancy)."""
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")

CORE_WELL_KNOWN_LABELS: frozenset[str] = frozenset(
    {
        NODEPOOL_LABEL,
        ZONE_LABEL,
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        CAPACITY_TYPE_LABEL,
        "node.kubernetes.io/windows-build",
    }
)
"""kubernetes-sigs/karpenter v1.14.1 `pkg/apis/v1/labels.go` `WellKnownLabels`, before a cloud
provider adds its own."""


@dataclass(frozen=True)
class KarpenterProvider:
    """What a cloud provider registers with Karpenter's core at start-up (its `labels.go` `init`):
    the labels it makes well-known, the label domains it reserves, the values it accepts for some
    keys; and the node class its NodePools name. The requirement rules below read it, so the same
    scheduler model judges NodePools of any provider."""

    name: str
    well_known: frozenset[str]
    restricted_domains: tuple[str, ...]
    well_known_values: Mapping[str, frozenset[str]]
    node_class_group: str
    node_class_kind: str
    well_known_prefixes: tuple[str, ...] = ()
    """Keys under these prefixes are taken as well-known too (EKS Auto Mode's, unverified)."""

    def is_well_known(self, key: str) -> bool:
        return key in self.well_known or any(key.startswith(p) for p in self.well_known_prefixes)

    @property
    def node_class_label(self) -> str:
        """The label `NewNodeClaimTemplate` gives nodes: `<group>/<kind lower case>`."""
        return f"{self.node_class_group}/{self.node_class_kind.lower()}"


AWS = KarpenterProvider(
    name="aws",
    well_known=WELL_KNOWN_LABELS,
    restricted_domains=RESTRICTED_DOMAINS,
    well_known_values=WELL_KNOWN_VALUES,
    node_class_group="karpenter.k8s.aws",
    node_class_kind="EC2NodeClass",
    well_known_prefixes=(AUTO_MODE_PREFIX,),
)
"""aws/karpenter-provider-aws v1.14.1 `pkg/apis/v1/labels.go`:31-74."""


def is_well_known(key: str, provider: KarpenterProvider = AWS) -> bool:
    return provider.is_well_known(key)


def restricted_label_problem(key: str, provider: KarpenterProvider = AWS) -> str | None:
    """`IsRestrictedLabel`: a key under a restricted domain that is not well-known, or the
    hostname label."""
    if provider.is_well_known(key):
        return None
    domain = key.split("/", 1)[0] if "/" in key else ""
    if any(domain == d or domain.endswith("." + d) for d in provider.restricted_domains):
        return f"label {key} is under a domain Karpenter reserves"
    if key in RESTRICTED_LABELS:
        return f"label {key} is reserved by Karpenter"
    return None


def requirement_problem(
    key: str, operator: str, values: Sequence[str], provider: KarpenterProvider = AWS
) -> str | None:
    """`ValidateRequirement` (apis/v1/nodeclaim_validation.go): what makes a pod's or a NodePool's
    requirement invalid for Karpenter (label syntax is left to the API server's rules)."""
    key = NORMALIZED_LABELS.get(key, key)
    if operator not in OPERATORS:
        return f"key {key} has an unsupported operator {operator}"
    problem = restricted_label_problem(key, provider)
    if problem:
        return problem
    known = provider.well_known_values.get(key)
    if known is not None and operator == "In" and not any(v in known for v in values):
        return f"no valid values found in {list(values)} for {key}, expected one of {sorted(known)}"
    if operator == "In" and not values:
        return f"key {key} with operator In must have a value defined"
    if operator in ("Gt", "Lt", "Gte", "Lte"):
        n = _int(values[0]) if len(values) == 1 else None
        if n is None or n < 0:
            return f"key {key} with operator {operator} must have a single positive integer value"
    return None


def nodepool_problem(
    requirements: Iterable[tuple[str, str, Sequence[str]]],
    labels: Mapping[str, str],
    provider: KarpenterProvider = AWS,
) -> str | None:
    """`NodePool.RuntimeValidate` (apis/v1/nodepool_validation.go): why the NodePool never becomes
    Ready, or None (taints and label syntax are left to the API server's rules)."""
    for key in sorted(labels):
        if key == NODEPOOL_LABEL:
            return f"invalid key name {key!r} in labels, restricted"
        problem = restricted_label_problem(key, provider)
        if problem:
            return f"invalid key name {key!r} in labels: {problem}"
    for key, op, values in requirements:
        if key == NODEPOOL_LABEL:
            return f"invalid key {key!r} in requirements, restricted"
        problem = requirement_problem(key, op, values, provider)
        if problem:
            return f"invalid requirement: {problem}"
    return None


# ---------------------------------------------------------------------------------------------
# Requirements (scheduling/requirement.go)
# ---------------------------------------------------------------------------------------------

_MAX_INT = 2**63 - 1


def _int(value: str) -> int | None:
    """`strconv.Atoi` as the bounds use it (int64 on the controller's platform)."""
    return parse_int64(value) if isinstance(value, str) else None


@dataclass(frozen=True)
class Req:
    """One key's allowed values: a finite set, or everything but a set (`complement`), within
    optional inclusive integer bounds. DoesNotExist is the empty finite set."""

    key: str
    complement: bool
    values: frozenset[str] = frozenset()
    gte: int | None = None
    lte: int | None = None

    @classmethod
    def of(cls, key: str, operator: str, values: Sequence[str] = ()) -> Req:
        """`NewRequirement` (operators In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte)."""
        key = NORMALIZED_LABELS.get(key, key)
        vals = [str(v) for v in values]
        if operator == "In":
            return cls(key, False, frozenset(vals))
        if operator == "DoesNotExist":
            return cls(key, False)
        if operator == "NotIn":
            return cls(key, True, frozenset(vals))
        if operator == "Exists":
            return cls(key, True)
        n = _int(vals[0]) if vals else None
        if n is None:
            raise ValueError(f"operator {operator} on {key} needs one integer, got {vals}")
        if operator == "Gt":
            return cls(key, False) if n == _MAX_INT else cls(key, True, gte=n + 1)
        if operator == "Lt":
            return cls(key, True, lte=n - 1)
        if operator == "Gte":
            return cls(key, True, gte=n)
        if operator == "Lte":
            return cls(key, True, lte=n)
        raise ValueError(f"operator {operator!r} on {key} is not a Karpenter operator")

    @property
    def operator(self) -> str:
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def _within(self, value: str, gte: int | None, lte: int | None) -> bool:
        if gte is None and lte is None:
            return True
        n = _int(value)
        if n is None:
            return False
        return (gte is None or n >= gte) and (lte is None or n <= lte)

    def has(self, value: str) -> bool:
        inside = value not in self.values if self.complement else value in self.values
        return inside and self._within(value, self.gte, self.lte)

    def intersection(self, other: Req) -> Req:
        complement = self.complement and other.complement
        gte = _max(self.gte, other.gte)
        lte = _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return Req(self.key, False)
        if self.complement and other.complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if self._within(v, gte, lte))
        if not complement:
            gte = lte = None
        return Req(self.key, complement, values, gte, lte)

    def has_intersection(self, other: Req) -> bool:
        gte = _max(self.gte, other.gte)
        lte = _min(self.lte, other.lte)
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and self._within(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and self._within(v, gte, lte) for v in self.values)
        return any(v in other.values and self._within(v, gte, lte) for v in self.values)

    def __str__(self) -> str:
        op = self.operator
        text = f"{self.key} {op}"
        if op in ("In", "NotIn"):
            text += " [" + ", ".join(sorted(self.values)) + "]"
        if self.gte is not None:
            text += f" >={self.gte}"
        if self.lte is not None:
            text += f" <={self.lte}"
        return text


def _max(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


class Requirements:
    """`scheduling.Requirements`: one `Req` per key; adding a key again intersects."""

    def __init__(self, reqs: Iterable[Req] = ()) -> None:
        self.by_key: dict[str, Req] = {}
        self.add(*reqs)

    def add(self, *reqs: Req) -> Requirements:
        for r in reqs:
            old = self.by_key.get(r.key)
            self.by_key[r.key] = r.intersection(old) if old is not None else r
        return self

    def copy(self) -> Requirements:
        out = Requirements()
        out.by_key = dict(self.by_key)
        return out

    def get(self, key: str) -> Req:
        return self.by_key.get(key, Req(key, True))

    def __contains__(self, key: str) -> bool:
        return key in self.by_key

    def intersects(self, other: Requirements) -> Req | None:
        """The first shared key (sorted) whose values do not intersect, else None."""
        for key in sorted(set(self.by_key) & set(other.by_key)):
            mine, theirs = self.by_key[key], other.by_key[key]
            if mine.has_intersection(theirs):
                continue
            if theirs.operator in ("NotIn", "DoesNotExist") and mine.operator in (
                "NotIn",
                "DoesNotExist",
            ):
                continue
            return theirs
        return None

    def compatible(self, other: Requirements, provider: KarpenterProvider = AWS) -> str | None:
        """`Compatible(other, AllowUndefinedWellKnownLabels)`: None, or why not."""
        for key in sorted(other.by_key):
            if provider.is_well_known(key) or key in self.by_key:
                continue
            if other.by_key[key].operator in ("NotIn", "DoesNotExist"):
                continue
            return f"label {key} does not have known values"
        bad = self.intersects(other)
        if bad is not None:
            return f"{bad} conflicts with {self.get(bad.key)}"
        return None


def requirements_of(items: Iterable[tuple[str, str, Sequence[str]]]) -> Requirements:
    """The requirements Karpenter can read; one it cannot (an unknown operator, a bound that is no
    integer) is left out: `requirement_problem` reports it, and a NodePool holding one is never
    Ready."""
    reqs = Requirements()
    for k, op, v in items:
        try:
            reqs.add(Req.of(k, op, v))
        except ValueError:
            continue
    return reqs


def label_requirements(labels: Mapping[str, str]) -> Requirements:
    return Requirements(Req.of(k, "In", [v]) for k, v in labels.items())
