"""Taints and tolerations, as `k8s.io/api/core/v1` `Toleration.ToleratesTaint` and the scheduler's
TaintToleration filter decide: `NoSchedule` and `NoExecute` taints must be tolerated,
`PreferNoSchedule` never filters."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

# No `from __future__ import annotations` here: Pulumi's component-provider analyzer reads these
# classes' field annotations at run time (they are component inputs), so they must be real
# types, written with Optional / Sequence / Mapping as its schema rules ask.
from ..errors import InputError, show
from .names import LABEL_KEY_RULE, LABEL_VALUE_RULE, label_key_problem, label_value_problem
from .quantities import whole_number

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
FILTERING_EFFECTS = ("NoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")

# Cloud APIs (GKE node pools, EKS node groups) spell taint effects differently.
CLOUD_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}
EFFECTS_FROM_CLOUD = {v: k for k, v in CLOUD_EFFECTS.items()}

GPU_RESOURCE = "nvidia.com/gpu"
OWN_TAINTS_ANNOTATION = "gpu-inference.dev/taints"
"""On a node patch that adds taints: those taints (JSON), so that the hook run before the patch
is deleted takes exactly them off the node."""


@dataclass(frozen=True, order=True)
class Taint:
    """A node taint. `effect` is Kubernetes' spelling: NoSchedule, PreferNoSchedule, NoExecute.

    Validated as the API server validates `node.spec.taints`: key a qualified name, value a label
    value, effect required and one of the three.
    """

    key: str
    value: Optional[str] = ""
    effect: Optional[str] = "NoSchedule"

    def __post_init__(self) -> None:
        if self.value is None:
            object.__setattr__(self, "value", "")
        if self.effect is None:
            object.__setattr__(self, "effect", "NoSchedule")
        problem = label_key_problem(self.key)
        if problem:
            raise InputError(f"taint key: {problem}", LABEL_KEY_RULE)
        problem = label_value_problem(self.value)
        if problem:
            raise InputError(f"taint {self.key} value: {problem}", LABEL_VALUE_RULE)
        if self.effect not in TAINT_EFFECTS:
            hint = ""
            if self.effect in EFFECTS_FROM_CLOUD:
                hint = f" (that is the cloud API's spelling of {EFFECTS_FROM_CLOUD[self.effect]})"
            what = "empty" if self.effect == "" else "not a Kubernetes effect"
            raise InputError(
                f"taint {self.key} effect {show(self.effect)} is {what}{hint}",
                ", ".join(TAINT_EFFECTS),
            )

    @property
    def _value(self) -> str:
        return self.value or ""

    @property
    def _effect(self) -> str:
        return self.effect or "NoSchedule"

    @classmethod
    def parse(cls, text: str) -> "Taint":
        """`key[=value]:Effect`, as `kubectl taint` writes it."""
        head, colon, effect = text.rpartition(":")
        if not colon:
            raise InputError(
                f"{show(text)} has no effect",
                "'key=value:Effect' with Effect one of " + ", ".join(TAINT_EFFECTS),
            )
        key, _, value = head.partition("=")
        return cls(key, value, effect)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Taint":
        """A taint as the Kubernetes API or a cloud API (`NO_SCHEDULE`) writes it."""
        if "key" not in data:
            raise InputError(f"taint {dict(data)!r} has no key", "a taint with key and effect")
        effect = data.get("effect")  # absent: the constructor's default, NoSchedule
        if isinstance(effect, str):
            effect = EFFECTS_FROM_CLOUD.get(effect, effect)
        return cls(data["key"], data.get("value"), effect)

    def to_dict(self) -> dict[str, str]:
        out = {"key": self.key, "effect": self._effect}
        if self.value:
            out["value"] = self._value
        return out

    def to_cloud(self) -> dict[str, str]:
        """The GKE / EKS API shape: effect in upper snake case, value always present."""
        return {"key": self.key, "value": self._value, "effect": CLOUD_EFFECTS[self._effect]}

    def __str__(self) -> str:
        return (
            f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"
        )


@dataclass(frozen=True, order=True)
class Toleration:
    """A pod toleration, exactly as Kubernetes matches it against a taint.

    Validated as the API server validates `pod.spec.tolerations` (ValidateTolerations): a key is a
    qualified name; an empty key needs operator Exists; Exists takes no value; Equal (the default)
    takes a label value; effect empty (every effect) or one of the three; tolerationSeconds only
    with NoExecute.
    """

    key: Optional[str] = ""
    operator: Optional[str] = "Equal"
    value: Optional[str] = ""
    effect: Optional[str] = ""
    toleration_seconds: Optional[int] = None

    def __post_init__(self) -> None:
        for name, default in (("key", ""), ("operator", "Equal"), ("value", ""), ("effect", "")):
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        if self.operator == "":  # upstream: an empty operator means Equal
            object.__setattr__(self, "operator", "Equal")
        if self.operator not in TOLERATION_OPERATORS:
            raise InputError(
                f"toleration operator {show(self.operator)} is not valid",
                ", ".join(TOLERATION_OPERATORS),
            )
        if self.key:
            problem = label_key_problem(self.key)
            if problem:
                raise InputError(f"toleration key: {problem}", LABEL_KEY_RULE)
        elif self.operator != "Exists":
            raise InputError(
                f"a toleration with an empty key has operator {show(self.operator)}; an empty key "
                "must use operator 'Exists' (it then tolerates every taint)",
                "operator 'Exists' with no key, or a key",
            )
        if self.operator == "Exists" and self.value != "":
            raise InputError(
                f"toleration for {self.key or 'every key'} has operator 'Exists' and value "
                f"{show(self.value)}; 'Exists' takes no value",
                "operator 'Exists' without a value, or operator 'Equal' with the value",
            )
        if self.operator == "Equal":
            problem = label_value_problem(self.value)
            if problem:
                raise InputError(f"toleration {self.key} value: {problem}", LABEL_VALUE_RULE)
        if self.effect and self.effect not in TAINT_EFFECTS:
            hint = ""
            if self.effect in EFFECTS_FROM_CLOUD:
                hint = f" (that is the cloud API's spelling of {EFFECTS_FROM_CLOUD[self.effect]})"
            raise InputError(
                f"toleration effect {show(self.effect)} is not a Kubernetes effect{hint}",
                "empty (every effect), " + ", ".join(TAINT_EFFECTS),
            )
        seconds = self.toleration_seconds
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, int):
                raise InputError(
                    f"tolerationSeconds {show(seconds)} is not an integer", "a whole number"
                )
            if self.effect != "NoExecute":
                raise InputError(
                    f"tolerationSeconds is {seconds} but the effect is "
                    f"{show(self.effect) if self.effect else 'empty'}, not 'NoExecute'",
                    "tolerationSeconds only with effect 'NoExecute'",
                )

    @property
    def _key(self) -> str:
        return self.key or ""

    @property
    def _value(self) -> str:
        return self.value or ""

    @property
    def _effect(self) -> str:
        return self.effect or ""

    def tolerates(self, taint: Taint) -> bool:
        """`Toleration.ToleratesTaint` from k8s.io/api/core/v1: an empty effect matches every
        effect, an empty key every key; Exists matches every value, Equal the same value."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self._value == taint._value

    @property
    def is_wildcard(self) -> bool:
        """Tolerates every taint key (operator Exists, no key): such a pod lands anywhere."""
        return not self.key and self.operator == "Exists"

    @classmethod
    def for_taint(cls, taint: Taint) -> "Toleration":
        """The exact toleration the seeds write for a taint (`Equal`, value, effect)."""
        if taint.value:
            return cls(taint.key, "Equal", taint.value, taint.effect)
        return cls(taint.key, "Exists", "", taint.effect)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Toleration":
        """A toleration as a pod spec writes it (camelCase; absent fields take their default)."""
        return cls(
            key=data.get("key"),
            operator=data.get("operator"),
            value=data.get("value"),
            effect=data.get("effect"),
            toleration_seconds=whole_number(data.get("tolerationSeconds")),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.key:
            out["key"] = self._key
        out["operator"] = self.operator
        if self.value:
            out["value"] = self._value
        if self.effect:
            out["effect"] = self._effect
        if self.toleration_seconds is not None:
            out["tolerationSeconds"] = self.toleration_seconds
        return out


def untolerated(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> list[Taint]:
    """The NoSchedule / NoExecute taints no toleration tolerates (the scheduler's filter)."""
    tols = list(tolerations)
    return [
        t for t in taints if t.effect in FILTERING_EFFECTS and not any(x.tolerates(t) for x in tols)
    ]


def _is_extended_resource(name: str) -> bool:
    """`IsExtendedResourceName` (pkg/apis/core/v1/helper): has a domain, not `*kubernetes.io/`,
    not `requests.*`, and `requests.<name>` is a qualified name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return label_key_problem("requests." + name) is None


def extended_resource_tolerations(resources: Iterable[str]) -> tuple[Toleration, ...]:
    """What the ExtendedResourceToleration admission plugin adds to a pod requesting `resources`.

    For every extended resource (a name with a domain outside `kubernetes.io`, e.g.
    `nvidia.com/gpu`) it adds `{key: <resource>, operator: Exists, effect: NoSchedule}`.
    """
    out = []
    for name in sorted(set(resources)):
        if _is_extended_resource(name):
            out.append(Toleration(name, "Exists", "", "NoSchedule"))
    return tuple(out)


def tolerating(
    defaults: Iterable[Mapping[str, str]], taints: Iterable[Taint]
) -> list[dict[str, str]]:
    """`defaults` (a chart's own tolerations) plus `Exists` for every taint key, whatever its
    value: what a DaemonSet that must run on every pool's nodes tolerates."""
    out = [dict(t) for t in defaults]
    for key, effect in sorted({(t.key, t.effect or "NoSchedule") for t in taints}):
        entry = {"key": key, "operator": "Exists", "effect": effect}
        if entry not in out:
            out.append(entry)
    return out


def taint_entry(t: Any) -> dict[str, str]:
    """A live taint (a dict, or the SDK's object) as `{key, value, effect}` without empty fields."""
    return {
        k: v
        for k in ("key", "value", "effect")
        if (v := (t.get(k) if isinstance(t, Mapping) else getattr(t, k, None)))
    }


def taints_without(current: Any, ours: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """The node's taints less ours (matched by key and effect, as the taint list itself keys
    them): what a node keeps when its pool goes."""
    mine = {(t["key"], t.get("effect", "NoSchedule")) for t in ours}
    kept = []
    for t in current or ():
        entry = taint_entry(t)
        if (entry.get("key", ""), entry.get("effect", "")) not in mine:
            kept.append(entry)
    return kept
