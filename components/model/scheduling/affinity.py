"""Node selector requirements and node affinity, as `k8s.io/component-helpers/scheduling/corev1/
nodeaffinity` decides: `NotIn` and `DoesNotExist` match a node without the label; `Gt`/`Lt` parse
both sides as base-10 int64 and never match a label that is absent or not an integer; required
terms are ORed and expressions within a term ANDed; a term with no expressions matches nothing, an
empty term list matches nothing; `matchFields` (only `metadata.name`, In / NotIn, one value) is
checked when the node's name is given, as upstream skips it for a nameless node."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

# No `from __future__ import annotations` here: Pulumi's component-provider analyzer reads these
# classes' field annotations at run time (they are component inputs), so they must be real
# types, written with Optional / Sequence / Mapping as its schema rules ask.
from ..errors import InputError, show
from .names import (
    LABEL_KEY_RULE,
    LABEL_VALUE_RULE,
    label_key_problem,
    label_value_problem,
    validate_dns1123_subdomain,
)
from .quantities import parse_int64, whole_number

SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def maps(items: Any) -> list[Mapping[str, Any]]:
    """The mappings of a list field (none when it is not a list): a graph may hold anything where a
    pod spec goes, and a part not of its shape reads as absent (the API server refuses such a pod
    before any placement), never as an internal error."""
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


@dataclass(frozen=True, order=True)
class NodeSelectorRequirement:
    """One `matchExpressions` entry. Validated as the API server does
    (ValidateNodeSelectorRequirement and labels.NewRequirement): key a qualified name, values
    label values, In / NotIn one or more values, Exists / DoesNotExist none, Gt / Lt exactly one
    base-10 int64."""

    key: str
    operator: str
    values: Optional[Sequence[str]] = ()

    def __post_init__(self) -> None:
        raw = self.values
        if isinstance(raw, str):
            raise InputError(
                f"values of {show(self.key)} is the string {show(raw)}, not a list",
                "a list of strings, e.g. [" + show(raw) + "]",
            )
        object.__setattr__(self, "values", tuple(raw or ()))
        problem = label_key_problem(self.key)
        if problem:
            raise InputError(f"node selector requirement key: {problem}", LABEL_KEY_RULE)
        if self.operator not in SELECTOR_OPERATORS:
            raise InputError(
                f"node selector operator {show(self.operator)} on {show(self.key)} is not valid",
                ", ".join(SELECTOR_OPERATORS),
            )
        values = self._values
        for v in values:
            problem = label_value_problem(v)
            if problem and self.operator in ("Gt", "Lt") and isinstance(v, str) and v[:1] in "+-":
                raise InputError(
                    f"operator {self.operator} on {show(self.key)} has value {show(v)}: a signed "
                    "number is not a valid label value, so the API server refuses it",
                    "one unsigned base-10 integer such as '1' or '75000'",
                )
            if problem:
                raise InputError(
                    f"a value of {self.key} {self.operator}: {problem}", LABEL_VALUE_RULE
                )
        if self.operator in ("In", "NotIn") and not values:
            raise InputError(
                f"operator {self.operator} on {show(self.key)} has no values; it needs at "
                "least one",
                "one or more values",
            )
        if self.operator in ("Exists", "DoesNotExist") and values:
            raise InputError(
                f"operator {self.operator} on {show(self.key)} has values {list(values)!r}; "
                "it takes none",
                "no values",
            )
        if self.operator in ("Gt", "Lt"):
            if len(values) != 1:
                raise InputError(
                    f"operator {self.operator} on {show(self.key)} has {len(values)} values "
                    f"{list(values)!r}; it needs exactly one",
                    "one integer value",
                )
            if parse_int64(values[0]) is None:
                raise InputError(
                    f"operator {self.operator} on {show(self.key)} needs an integer, "
                    f"got {show(values[0])}",
                    "a base-10 64-bit integer such as '1' or '75000'",
                )

    @property
    def _values(self) -> tuple[str, ...]:
        return tuple(self.values or ())

    def matches(self, labels: Mapping[str, str]) -> bool:
        """`labels.Requirement.Matches`: NotIn and DoesNotExist match a node without the label;
        Gt / Lt never match a label that is absent or not a base-10 int64."""
        present = self.key in labels
        value = labels.get(self.key)
        op = self.operator
        if op == "In":
            return present and value in self._values
        if op == "NotIn":
            return not present or value not in self._values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if not present or not isinstance(value, str):
            return False
        node_number = parse_int64(value)
        if node_number is None:
            return False
        wanted = parse_int64(self._values[0])
        if wanted is None:  # pragma: no cover - refused in __post_init__
            return False
        return node_number > wanted if op == "Gt" else node_number < wanted

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NodeSelectorRequirement":
        for field in ("key", "operator"):
            if field not in data:
                raise InputError(
                    f"node selector requirement {dict(data)!r} has no {field}",
                    "key, operator and (for In, NotIn, Gt, Lt) values",
                )
        return cls(data["key"], data["operator"], data.get("values") or ())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self._values)
        return out


_NODE_NAME_FIELD = "metadata.name"


@dataclass(frozen=True, order=True)
class NodeSelectorTerm:
    """Expressions ANDed. A term with no expressions and no fields matches nothing (upstream)."""

    match_expressions: Optional[Sequence[NodeSelectorRequirement]] = ()
    # matchFields: only `metadata.name` exists upstream, In / NotIn with exactly one node name.
    match_fields: Optional[Sequence[NodeSelectorRequirement]] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "match_expressions", tuple(self.match_expressions or ()))
        object.__setattr__(self, "match_fields", tuple(self.match_fields or ()))
        for f in self._fields:
            if f.key != _NODE_NAME_FIELD or f.operator not in ("In", "NotIn"):
                raise InputError(
                    f"matchFields supports only 'metadata.name' with In / NotIn, got {f.key} "
                    f"{f.operator}",
                    "key 'metadata.name', operator In or NotIn",
                )
            if len(f._values) != 1:
                raise InputError(
                    f"matchFields metadata.name {f.operator} has {len(f._values)} values "
                    f"{list(f._values)!r}; it needs exactly one node name",
                    "exactly one node name",
                )
            try:
                validate_dns1123_subdomain(f._values[0])
            except InputError as e:
                raise e.at("matchFields.metadata.name") from None

    @property
    def _expressions(self) -> tuple[NodeSelectorRequirement, ...]:
        return tuple(self.match_expressions or ())

    @property
    def _fields(self) -> tuple[NodeSelectorRequirement, ...]:
        return tuple(self.match_fields or ())

    @property
    def is_empty(self) -> bool:
        """No expressions and no fields: upstream skips such a term, it matches nothing."""
        return not self.match_expressions and not self.match_fields

    def matches(self, labels: Mapping[str, str], node_name: str | None = None) -> bool:
        """Upstream `nodeSelectorTerm.match`: every expression matches the labels, and every
        field the node's name. A node the graph does not name (`node_name` None: one an
        autoscaler will make, named by the cloud when it boots, e.g. AKS's
        `aks-<pool>-<id>-vmss000000`) is no node a pod pinned `In` one name lands on, and
        `NotIn` one name keeps it: upstream skips the fields only for a node with an empty
        name, which no real node has (the scheduler differential's AKS cases, seed 715608022)."""
        if self.is_empty:
            return False
        if not all(r.matches(labels) for r in self._expressions):
            return False
        if not self.match_fields:
            return True
        if node_name:
            fields = {_NODE_NAME_FIELD: node_name}
            return all(r.matches(fields) for r in self._fields)
        return all(r.operator == "NotIn" for r in self._fields)

    def and_expressions(self, exprs: Sequence[NodeSelectorRequirement]) -> "NodeSelectorTerm":
        """This term with `exprs` ANDed in (an empty term stays empty: it matches nothing, and
        nothing ANDed with more is still nothing)."""
        if self.is_empty or not exprs:
            return self
        return NodeSelectorTerm((*self._expressions, *exprs), self._fields)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NodeSelectorTerm":
        return cls(
            tuple(NodeSelectorRequirement.from_dict(r) for r in maps(data.get("matchExpressions"))),
            tuple(NodeSelectorRequirement.from_dict(r) for r in maps(data.get("matchFields"))),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.match_expressions:
            out["matchExpressions"] = [r.to_dict() for r in self._expressions]
        if self.match_fields:
            out["matchFields"] = [r.to_dict() for r in self._fields]
        return out


@dataclass(frozen=True, order=True)
class PreferredSchedulingTerm:
    """A soft preference: weight 1..100. It orders nodes, it never filters them."""

    weight: int
    preference: NodeSelectorTerm

    def __post_init__(self) -> None:
        w = self.weight
        if isinstance(w, bool) or not isinstance(w, int) or not 1 <= w <= 100:
            raise InputError(f"preference weight {show(w)} is out of range", "an integer 1..100")

    def to_dict(self) -> dict[str, Any]:
        return {"weight": self.weight, "preference": self.preference.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PreferredSchedulingTerm":
        weight: Any = whole_number(data.get("weight"))
        preference = data.get("preference")
        return cls(
            weight,
            NodeSelectorTerm.from_dict(preference if isinstance(preference, Mapping) else {}),
        )


@dataclass(frozen=True)
class NodeAffinity:
    """`affinity.nodeAffinity`. `required=None` means no hard requirement; `required=()` (an
    empty term list) matches no node, as upstream."""

    required: Optional[Sequence[NodeSelectorTerm]] = None
    preferred: Optional[Sequence[PreferredSchedulingTerm]] = ()

    def __post_init__(self) -> None:
        if self.required is not None:
            object.__setattr__(self, "required", tuple(self.required))
        object.__setattr__(self, "preferred", tuple(self.preferred or ()))

    def matches(self, labels: Mapping[str, str], node_name: str | None = None) -> bool:
        """Required terms ORed; None (no requirement) matches every node, () none."""
        if self.required is None:
            return True
        return any(t.matches(labels, node_name) for t in self.required)

    @property
    def is_empty(self) -> bool:
        return self.required is None and not self.preferred

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NodeAffinity":
        req = data.get("requiredDuringSchedulingIgnoredDuringExecution")
        required = None
        if isinstance(req, Mapping):
            required = tuple(
                NodeSelectorTerm.from_dict(t) for t in maps(req.get("nodeSelectorTerms"))
            )
        preferred = tuple(
            PreferredSchedulingTerm.from_dict(p)
            for p in maps(data.get("preferredDuringSchedulingIgnoredDuringExecution"))
        )
        return cls(required, preferred)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.required is not None:
            out["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [t.to_dict() for t in self.required]
            }
        if self.preferred:
            out["preferredDuringSchedulingIgnoredDuringExecution"] = [
                p.to_dict() for p in self.preferred
            ]
        return out
