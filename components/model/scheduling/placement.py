"""`Placement`: the nodeSelector, node affinity and tolerations a pod needs to land on a pool."""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

from ..errors import InputError, show

# No `from __future__ import annotations` here: Pulumi's component-provider analyzer reads these
# classes' field annotations at run time (they are component inputs), so they must be real
# types, written with Optional / Sequence / Mapping as its schema rules ask.
from .affinity import (
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from .names import validate_label_key, validate_label_value
from .taints import FILTERING_EFFECTS, Taint, Toleration, untolerated

POOL_LABEL = "gpu-inference.dev/pool"
"""The label every node of a gpu-inference pool carries (its value: the pool's name), which the
stack's workloads select."""
WIRED_POOL_ANNOTATION = POOL_LABEL
"""On a workload (CR, Deployment, DaemonSet): the pools it is wired to, a comma list in order of
preference; the placement check holds it to them."""

SCHEDULING_STYLES = ("nodeSelector", "nodeAffinity")


def _frozen_map(
    m: Mapping[str, str] | Iterable[tuple[str, str]] | None,
) -> tuple[tuple[str, str], ...]:
    if m is None:
        return ()
    items = m.items() if isinstance(m, Mapping) else m
    out: dict[str, str] = {}
    for k, v in items:
        try:
            out[validate_label_key(k)] = validate_label_value(v)
        except InputError as e:
            raise e.at(f"nodeSelector.{k}") from None
    # Insertion order is kept: it is the order a person wrote, and the order emitted.
    return tuple(out.items())


@dataclass(frozen=True, eq=False, init=False)
class Placement:
    """What a pod needs to land on a pool: nodeSelector, required (and preferred) node affinity,
    tolerations. Immutable; `to_pod_spec()` gives the fragment KServe and Seldon take.
    """

    node_selector: Optional[Mapping[str, str]]
    tolerations: Optional[Sequence[Toleration]]
    node_affinity: Optional[NodeAffinity]

    def __init__(
        self,
        node_selector: Optional[Mapping[str, str]] = None,
        tolerations: Optional[Iterable[Toleration]] = None,
        node_affinity: Optional[NodeAffinity] = None,
    ) -> None:
        pairs = _frozen_map(node_selector)
        if node_affinity is not None and node_affinity.is_empty:
            node_affinity = None
        object.__setattr__(self, "node_selector", dict(pairs))
        object.__setattr__(self, "tolerations", tuple(dict.fromkeys(tolerations or ())))
        object.__setattr__(self, "node_affinity", node_affinity)

    def _key(self) -> tuple[Any, ...]:
        # nodeSelector is a map: its order does not matter; tolerations are a list.
        return (frozenset(self._pairs), self._tolerations, self.node_affinity)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Placement) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Placement({self.to_pod_spec()!r})"

    @property
    def _pairs(self) -> list[tuple[str, str]]:
        return list((self.node_selector or {}).items())

    @property
    def _tolerations(self) -> tuple[Toleration, ...]:
        return tuple(self.tolerations or ())

    # -- matching -------------------------------------------------------------------------

    @property
    def selector(self) -> dict[str, str]:
        """The nodeSelector as a dict (a copy)."""
        return dict(self._pairs)

    def admits(
        self,
        node_labels: Mapping[str, str],
        node_taints: Iterable[Taint],
        node_name: str | None = None,
    ) -> bool:
        """Whether the scheduler's filters let this pod onto a node with these labels and taints:
        nodeSelector, required node affinity, and every NoSchedule / NoExecute taint tolerated."""
        for k, v in self._pairs:
            if node_labels.get(k) != v:
                return False
        if self.node_affinity is not None and not self.node_affinity.matches(
            node_labels, node_name
        ):
            return False
        return not untolerated(node_taints, self._tolerations)

    def why_not(
        self,
        node_labels: Mapping[str, str],
        node_taints: Iterable[Taint],
        node_name: str | None = None,
    ) -> list[str]:
        """Human reasons the node is refused (empty when `admits` is True)."""
        reasons = [
            f"nodeSelector {k}={v} (node has "
            + (f"{k}={node_labels[k]}" if k in node_labels else "no such label")
            + ")"
            for k, v in self._pairs
            if node_labels.get(k) != v
        ]
        if self.node_affinity is not None and not self.node_affinity.matches(
            node_labels, node_name
        ):
            reasons.append("required node affinity matches no term")
        reasons += [f"taint {t} not tolerated" for t in untolerated(node_taints, self._tolerations)]
        return reasons

    # -- building -------------------------------------------------------------------------

    @classmethod
    def for_pool(
        cls,
        labels: Mapping[str, str],
        taints: Iterable[Taint],
        style: str = "nodeSelector",
    ) -> "Placement":
        """Select `labels`, tolerate every filtering taint exactly: lands there and nowhere else
        (as long as `labels` are unique to the pool)."""
        tolerations = [Toleration.for_taint(t) for t in taints if t.effect in FILTERING_EFFECTS]
        return cls(labels, tolerations).with_style(style)

    def with_style(self, style: str) -> "Placement":
        """The same constraint written as a nodeSelector or as required node affinity (In)."""
        if style not in SCHEDULING_STYLES:
            raise InputError(
                f"scheduling style {show(style)} is not known", " or ".join(SCHEDULING_STYLES)
            )
        if style == "nodeSelector" or not self.node_selector:
            return self
        selector_exprs = tuple(NodeSelectorRequirement(k, "In", (v,)) for k, v in self._pairs)
        return Placement({}, self._tolerations, _and_into(self.node_affinity, selector_exprs))

    def with_expressions(self, expressions: Iterable[NodeSelectorRequirement]) -> "Placement":
        """Add required expressions ANDed into every term (seed 004's `Gt` on the GPU count)."""
        exprs = tuple(expressions)
        if not exprs:
            return self
        return Placement(
            self.node_selector, self._tolerations, _and_into(self.node_affinity, exprs)
        )

    def with_node_selector(self, labels: Mapping[str, str]) -> "Placement":
        """The nodeSelector with `labels` over it (what a pod webhook adds)."""
        return Placement(
            {**(self.node_selector or {}), **labels}, self._tolerations, self.node_affinity
        )

    def with_tolerations(self, tolerations: Iterable[Toleration]) -> "Placement":
        return Placement(self.node_selector, (*self._tolerations, *tolerations), self.node_affinity)

    def without_tolerations(self, keys: Iterable[str]) -> "Placement":
        """Drop tolerations for these taint keys (e.g. the `nvidia.com/gpu` one that
        ExtendedResourceToleration adds by itself on GKE and EKS)."""
        drop = set(keys)
        return Placement(
            self.node_selector,
            [t for t in self._tolerations if t.key not in drop],
            self.node_affinity,
        )

    @classmethod
    def any_of(cls, placements: Sequence["Placement"]) -> "Placement":
        """Land on any of several pools, preferring them in the order given (spot first, then
        on-demand): the union of tolerations, required affinity ORing one term per pool, and
        preferred affinity weights falling with the position."""
        if not placements:
            raise InputError("no placement to choose from", "one or more pools")
        if len(placements) == 1:
            return placements[0]
        terms: list[NodeSelectorTerm] = []
        preferred: list[PreferredSchedulingTerm] = []
        tolerations: list[Toleration] = []
        for i, p in enumerate(placements):
            own = p.terms()
            if own is None:
                raise InputError(
                    "a placement in a preference list selects no labels",
                    "pools whose placement selects labels",
                )
            terms += own
            weight = max(1, 100 - 10 * i)
            preferred += [PreferredSchedulingTerm(weight, t) for t in own]
            tolerations += p._tolerations
        return cls({}, tolerations, NodeAffinity(tuple(terms), tuple(preferred)))

    def terms(self) -> list[NodeSelectorTerm] | None:
        """This placement's hard constraints as node selector terms (None: it selects nothing)."""
        selector_exprs = tuple(NodeSelectorRequirement(k, "In", (v,)) for k, v in self._pairs)
        req = self.node_affinity.required if self.node_affinity else None
        if req is None:
            return [NodeSelectorTerm(selector_exprs)] if selector_exprs else None
        # An empty term matches nothing; ANDing the selector into it must not make it match.
        return [
            t if t.is_empty else NodeSelectorTerm((*selector_exprs, *t._expressions), t._fields)
            for t in req
        ]

    # -- pod spec fragments ---------------------------------------------------------------

    def to_pod_spec(self) -> dict[str, Any]:
        """`{nodeSelector, affinity, tolerations}` as KServe components and Seldon podSpecs take
        them; keys with nothing to say are left out."""
        out: dict[str, Any] = {}
        if self.node_selector:
            out["nodeSelector"] = dict(self._pairs)
        if self.node_affinity is not None:
            out["affinity"] = {"nodeAffinity": self.node_affinity.to_dict()}
        if self.tolerations:
            out["tolerations"] = [t.to_dict() for t in self._tolerations]
        return out

    @classmethod
    def from_pod_spec(cls, fragment: Mapping[str, Any] | None) -> "Placement":
        """Read the placement back from a pod spec (or KServe component) fragment; other keys are
        ignored."""
        fragment = fragment if isinstance(fragment, Mapping) else {}
        affinity = _mapping(fragment.get("affinity")).get("nodeAffinity")
        tolerations = fragment.get("tolerations")
        return cls(
            _mapping(fragment.get("nodeSelector")),
            [
                Toleration.from_dict(t)
                for t in (tolerations if isinstance(tolerations, list) else ())
                if isinstance(t, Mapping)
            ],
            NodeAffinity.from_dict(affinity)
            if isinstance(affinity, Mapping) and affinity
            else None,
        )

    @property
    def uses(self) -> frozenset[str]:
        """Which pod spec fields this placement sets: the Knative feature flags it needs."""
        used = set()
        if self.node_selector:
            used.add("nodeSelector")
        if self.node_affinity is not None:
            used.add("affinity")
        if self.tolerations:
            used.add("tolerations")
        return frozenset(used)


def _mapping(value: Any) -> Mapping[str, Any]:
    """A fragment's field when it is a mapping, else empty: a graph may hold anything (a chart's
    values, a hand-written resource), and the API server refuses such a pod before any placement."""
    return value if isinstance(value, Mapping) else {}


def _and_into(
    affinity: NodeAffinity | None, exprs: tuple[NodeSelectorRequirement, ...]
) -> NodeAffinity:
    if affinity is None or affinity.required is None:
        preferred = affinity.preferred if affinity else ()
        return NodeAffinity((NodeSelectorTerm(exprs),), preferred)
    terms = tuple(t.and_expressions(exprs) for t in affinity.required)
    return replace(affinity, required=terms)
