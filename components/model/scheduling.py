"""Kubernetes' own rules for where a pod may run: taints, tolerations, node selectors, node affinity.

Pure Python (imports no Pulumi). Every rule here follows upstream Kubernetes exactly:
- toleration vs taint: `k8s.io/api/core/v1` `Toleration.ToleratesTaint`;
- node selector requirements: `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`
  (`NotIn` and `DoesNotExist` match a node without the label; `Gt`/`Lt` parse both sides as base-10
  int64 and never match a label that is absent or not an integer);
- required node affinity: terms ORed, expressions within a term ANDed, a term with no expressions
  matches nothing, an empty term list matches nothing; `matchFields` (only `metadata.name`, In /
  NotIn, one value) is checked when the node's name is given, as upstream skips it for a nameless
  node;
- the scheduler's TaintToleration filter: `NoSchedule` and `NoExecute` taints must be tolerated,
  `PreferNoSchedule` never filters.
Validation of names, labels, taint keys and quantities follows `k8s.io/apimachinery` validation.
"""

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import MAX_EMAX, MIN_EMIN, ROUND_UP, Context, Decimal
from typing import Any, Optional

# No `from __future__ import annotations` here: Pulumi's component-provider analyzer reads these
# classes' field annotations at run time (Placement and its parts are component inputs), so they
# must be real types, written with Optional / Sequence / Mapping as its schema rules ask.
from .errors import InputError, show

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
FILTERING_EFFECTS = ("NoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")

# Cloud APIs (GKE node pools, EKS node groups) spell taint effects differently.
CLOUD_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}
EFFECTS_FROM_CLOUD = {v: k for k, v in CLOUD_EFFECTS.items()}

GPU_RESOURCE = "nvidia.com/gpu"

# ---------------------------------------------------------------------------------------------
# Validation (k8s.io/apimachinery/pkg/util/validation)
# ---------------------------------------------------------------------------------------------

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_INT64 = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

LABEL_KEY_RULE = (
    "an optional DNS subdomain prefix and '/', then a name of at most 63 characters: "
    "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric "
    "(e.g. 'pool' or 'cloud.google.com/gke-accelerator')"
)
LABEL_VALUE_RULE = (
    "empty, or at most 63 characters: alphanumerics, '-', '_' or '.', "
    "starting and ending with an alphanumeric"
)
DNS1123_LABEL_RULE = (
    "at most 63 characters: lowercase letters, digits and '-', starting and ending with a "
    "letter or digit (DNS-1123 label)"
)
DNS1123_SUBDOMAIN_RULE = (
    "at most 253 characters: dot-separated DNS-1123 labels (lowercase letters, digits, '-')"
)
DNS1035_LABEL_RULE = (
    "at most 63 characters: lowercase letters, digits and '-', starting with a letter and "
    "ending with a letter or digit (DNS-1035 label)"
)
QUANTITY_RULE = (
    "a Kubernetes quantity: a non-negative number with an optional suffix "
    "(n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent like 1e3), "
    "e.g. '500m', '2', '16Gi'"
)


def label_key_problem(key: object) -> str | None:
    """Why `key` is not a valid label key (or taint / toleration key), or None when it is valid.

    `IsQualifiedName` from k8s.io/apimachinery: an optional DNS-1123 subdomain prefix (at most
    253 characters) and '/', then a name of 1-63 characters `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
    """
    if not isinstance(key, str):
        return f"{show(key)} is not a string"
    if not key:
        return "the key is empty"
    parts = key.split("/")
    if len(parts) > 2:
        return f"{show(key)} has more than one '/'"
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            return f"{show(key)} has an empty prefix before '/'"
        if len(prefix) > 253:
            return f"the prefix of {show(key)} is {len(prefix)} characters long (at most 253)"
        if not _DNS1123_SUBDOMAIN.fullmatch(prefix):
            return f"the prefix {show(prefix)} of {show(key)} is not a lowercase DNS subdomain"
    if not name:
        return f"{show(key)} has an empty name after '/'"
    if len(name) > 63:
        return f"the name part of {show(key)} is {len(name)} characters long (at most 63)"
    if not _QUALIFIED_NAME.fullmatch(name):
        return f"{show(key)} is not a valid label key"
    return None


def label_value_problem(value: object) -> str | None:
    """Why `value` is not a valid label value (or taint value), or None when it is valid.

    `IsValidLabelValue` from k8s.io/apimachinery: empty, or 1-63 characters
    `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
    """
    if not isinstance(value, str):
        return f"{show(value)} is not a string (quote numbers and booleans in YAML)"
    if value == "":
        return None
    if len(value) > 63:
        return f"{show(value)} is {len(value)} characters long (at most 63)"
    if not _QUALIFIED_NAME.fullmatch(value):
        return f"{show(value)} is not a valid label value"
    return None


def validate_label_key(key: object) -> str:
    """`key` when it is a valid label key; InputError saying why not otherwise."""
    problem = label_key_problem(key)
    if problem or not isinstance(key, str):
        raise InputError(problem or f"{show(key)} is not a string", LABEL_KEY_RULE)
    return key


def validate_label_value(value: object) -> str:
    """`value` when it is a valid label value; InputError saying why not otherwise."""
    problem = label_value_problem(value)
    if problem or not isinstance(value, str):
        raise InputError(problem or f"{show(value)} is not a string", LABEL_VALUE_RULE)
    return value


def validate_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """Every key and value valid; errors are located at the offending key."""
    out: dict[str, str] = {}
    for k, v in labels.items():
        try:
            validate_label_key(k)
        except InputError as e:
            raise e.at(f"{k}") from None
        try:
            validate_label_value(v)
        except InputError as e:
            raise e.at(f"{k}") from None
        out[k] = v
    return out


def _name_problem(name: str, kind: str, dots: bool, letter_first: bool, max_length: int = 0) -> str:
    """Everything wrong with a name that failed a DNS pattern, in words, in one sentence: one
    fault reads as before; several are all named, so that one fix is enough."""
    faults: list[tuple[str, str]] = []  # (what the name does, why that is wrong)
    if max_length and len(name) > max_length:
        faults.append((f"is {len(name)} characters long", f"at most {max_length}"))
    if any(c.isupper() for c in name):
        faults.append(("has uppercase letters", f"a {kind} is lowercase"))
    if not dots and "." in name:
        faults.append(("contains '.'", f"a {kind} has no dots"))
    bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "-."))})
    if bad:
        faults.append((f"contains {', '.join(map(repr, bad))}", f"not allowed in a {kind}"))
    if letter_first and name and not name[0].isalpha():
        faults.append(("does not start with a letter", f"as a {kind} must"))
    elif name and not (name[0].isalnum() and name[-1].isalnum()):
        faults.append(("does not start and end with a letter or digit", f"as a {kind} must"))
    if not faults:  # e.g. 'a..b': an empty label between the dots
        faults.append(("does not start and end with a letter or digit", f"as a {kind} must"))
    if len(faults) == 1:
        what, why = faults[0]
        if why.startswith("at most"):
            return f"{show(name)} {what} ({why})"
        sep = "; " if why.startswith("a ") else ", "
        return f"{show(name)} {what}{sep}{why}"
    whats = [w for w, _ in faults]
    return (
        f"{show(name)} has {len(faults)} faults: it {', '.join(whats[:-1])} and {whats[-1]} "
        f"({'; '.join(why for _, why in faults)})"
    )


def validate_dns1123_label(name: object, max_length: int = 63) -> str:
    """`IsDNS1123Label`: lowercase alphanumerics and '-', alphanumeric at both ends, <= 63."""
    rule = DNS1123_LABEL_RULE.replace("at most 63", f"at most {max_length}")
    if not isinstance(name, str):
        raise InputError(f"{show(name)} is not a string", rule)
    if not name:
        raise InputError("the name is empty", rule)
    if len(name) > max_length or not _DNS1123_LABEL.fullmatch(name):
        raise InputError(_name_problem(name, "DNS-1123 label", False, False, max_length), rule)
    return name


def validate_dns1123_subdomain(name: object) -> str:
    """`IsDNS1123Subdomain`: dot-separated DNS-1123 labels, at most 253 characters."""
    if not isinstance(name, str):
        raise InputError(f"{show(name)} is not a string", DNS1123_SUBDOMAIN_RULE)
    if not name:
        raise InputError("the name is empty", DNS1123_SUBDOMAIN_RULE)
    if len(name) > 253:
        raise InputError(
            f"{show(name)} is {len(name)} characters long (at most 253)", DNS1123_SUBDOMAIN_RULE
        )
    if not _DNS1123_SUBDOMAIN.fullmatch(name):
        raise InputError(_name_problem(name, "DNS subdomain", True, False), DNS1123_SUBDOMAIN_RULE)
    return name


def validate_dns1035_label(name: object, max_length: int = 63) -> str:
    """`IsDNS1035Label`: like a DNS-1123 label but starting with a letter (Service names)."""
    rule = DNS1035_LABEL_RULE.replace("at most 63", f"at most {max_length}")
    if not isinstance(name, str):
        raise InputError(f"{show(name)} is not a string", rule)
    if not name:
        raise InputError("the name is empty", rule)
    if len(name) > max_length or not _DNS1035_LABEL.fullmatch(name):
        raise InputError(_name_problem(name, "DNS-1035 label", False, True, max_length), rule)
    return name


# Both gates a quantity passes: the CRD schema pattern of KServe / Seldon (int-or-string with
# `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(...)))?$`) and
# `resource.ParseQuantity` (k8s.io/apimachinery/pkg/api/resource/quantity.go) when the controller
# builds the pod. Their intersection: the exponent is an integer (ParseQuantity refuses `1e1.5`,
# the pattern refuses `+`, `.` and `-`, which ParseQuantity reads as 0).
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_SUFFIX_FACTORS: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    "Ki": Decimal(2**10),
    "Mi": Decimal(2**20),
    "Gi": Decimal(2**30),
    "Ti": Decimal(2**40),
    "Pi": Decimal(2**50),
    "Ei": Decimal(2**60),
}
_NANO = Decimal("1e-9")
_INT32_MAX = 2**31 - 1


def _float_hint(value: float) -> str:
    if not math.isfinite(value):
        return f"{value} is not a quantity"
    if value.is_integer():
        return (
            f"{value} is a bare number with a fraction part; write {int(value)} or '{int(value)}'"
        )
    text = repr(value)
    milli = Decimal(text) * 1000
    example = f"'{int(milli)}m'" if milli == milli.to_integral_value() else f"'{text}'"
    return f"{value} is a bare number with a fraction; write it as a string like {example}"


def _quantity_hint(text: str) -> str:
    """A likely cause for a string that is not a quantity."""
    if text != text.strip():
        return " (it has spaces around it)"
    rest = text[:-1]
    if text[-1:] in ("B", "b") and _QUANTITY.fullmatch(rest):
        if rest[-1:] in ("k", "M", "G", "T", "P", "E"):
            return f" (bytes take no 'B': write '{rest}' or '{rest[:-1]}{rest[-1].upper()}i')"
        return f" (bytes take no 'B': write '{rest}')"
    if text.endswith("K") and _QUANTITY.fullmatch(text[:-1]):
        return f" (kilo is a lowercase k: '{text[:-1]}k', or '{text[:-1]}Ki' for 1024)"
    return ""


def parse_quantity(value: object) -> Decimal:
    """The numeric value of a Kubernetes quantity (`resource.ParseQuantity` grammar).

    Integers are accepted as plain numbers. Floats are refused: the InferenceService and Seldon
    CRDs type quantities int-or-string, and `0.5` is rejected there; write `"500m"`.
    Negative quantities are refused: no resource request may be negative (`-0` is zero).
    Like ParseQuantity, a non-zero value finer than 1n is rounded up to the next nano unit.
    """
    if isinstance(value, bool):
        raise InputError(f"{show(value)} is not a quantity", QUANTITY_RULE)
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        raise InputError(_float_hint(value), QUANTITY_RULE)
    elif isinstance(value, str):
        text = value
    else:
        raise InputError(f"{show(value)} is not a quantity", QUANTITY_RULE)
    m = _QUANTITY.fullmatch(text)
    if not m:
        raise InputError(
            f"{show(value)} is not a valid quantity{_quantity_hint(text)}", QUANTITY_RULE
        )
    suffix = m.group("suffix") or ""
    ctx = Context(prec=len(text) + 40, Emax=MAX_EMAX, Emin=MIN_EMIN)
    number = Decimal(m.group("num"))
    if suffix not in _SUFFIX_FACTORS:  # an exponent: e3, E-2 (a lone E is exa, Ei is exbi)
        exponent = int(suffix[1:])
        if abs(exponent) > _INT32_MAX:
            raise InputError(
                f"{show(value)} has an exponent out of range", "an exponent within +/-2147483647"
            )
        number = number.scaleb(exponent, context=ctx)
    else:
        number = ctx.multiply(number, _SUFFIX_FACTORS[suffix])
    if number == 0:
        return Decimal(0)
    if m.group("sign") == "-":
        raise InputError(f"{show(value)} is negative", QUANTITY_RULE)
    if number.as_tuple().exponent < -9:  # type: ignore[operator]
        number = number.quantize(_NANO, rounding=ROUND_UP, context=ctx)
    return number


def validate_quantity(value: object) -> str:
    """A quantity as the string a CRD accepts (`"500m"`, `"16Gi"`, `"2"`)."""
    parse_quantity(value)
    return str(value)


def _whole(value: Any) -> Any:
    """A whole float (JSON numbers through Pulumi come back as 300.0) as an int; else as is."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): optional sign, ASCII digits, int64 range."""
    if not _INT64.fullmatch(text):
        return None
    number = int(text)
    if number < _INT64_MIN or number > _INT64_MAX:
        return None
    return number


# ---------------------------------------------------------------------------------------------
# Taints and tolerations
# ---------------------------------------------------------------------------------------------


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
            toleration_seconds=_whole(data.get("tolerationSeconds")),
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


# ---------------------------------------------------------------------------------------------
# Node selector requirements and node affinity
# ---------------------------------------------------------------------------------------------


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
            if _parse_int64(values[0]) is None:
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
        node_number = _parse_int64(value)
        if node_number is None:
            return False
        wanted = _parse_int64(self._values[0])
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
        """Upstream `nodeSelectorTerm.match`: every expression matches the labels, and (when the
        node has a name, as every real node does) every field matches it."""
        if self.is_empty:
            return False
        if not all(r.matches(labels) for r in self._expressions):
            return False
        if self.match_fields and node_name:
            fields = {_NODE_NAME_FIELD: node_name}
            return all(r.matches(fields) for r in self._fields)
        return True

    def and_expressions(self, exprs: Sequence[NodeSelectorRequirement]) -> "NodeSelectorTerm":
        """This term with `exprs` ANDed in (an empty term stays empty: it matches nothing, and
        nothing ANDed with more is still nothing)."""
        if self.is_empty or not exprs:
            return self
        return NodeSelectorTerm((*self._expressions, *exprs), self._fields)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NodeSelectorTerm":
        return cls(
            tuple(NodeSelectorRequirement.from_dict(r) for r in data.get("matchExpressions") or ()),
            tuple(NodeSelectorRequirement.from_dict(r) for r in data.get("matchFields") or ()),
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
        weight: Any = _whole(data.get("weight"))
        return cls(weight, NodeSelectorTerm.from_dict(data.get("preference") or {}))


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

    @property
    def _preferred(self) -> tuple[PreferredSchedulingTerm, ...]:
        return tuple(self.preferred or ())

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
        if req is not None:
            required = tuple(
                NodeSelectorTerm.from_dict(t) for t in req.get("nodeSelectorTerms") or ()
            )
        preferred = tuple(
            PreferredSchedulingTerm.from_dict(p)
            for p in data.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
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
                p.to_dict() for p in self._preferred
            ]
        return out


# ---------------------------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------------------------

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
        fragment = fragment or {}
        affinity = (fragment.get("affinity") or {}).get("nodeAffinity")
        return cls(
            fragment.get("nodeSelector") or {},
            [Toleration.from_dict(t) for t in fragment.get("tolerations") or ()],
            NodeAffinity.from_dict(affinity) if affinity else None,
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


def _and_into(
    affinity: NodeAffinity | None, exprs: tuple[NodeSelectorRequirement, ...]
) -> NodeAffinity:
    if affinity is None or affinity.required is None:
        preferred = affinity._preferred if affinity else ()
        return NodeAffinity((NodeSelectorTerm(exprs),), preferred)
    terms = tuple(t.and_expressions(exprs) for t in affinity.required)
    return replace(affinity, required=terms)
