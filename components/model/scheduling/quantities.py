"""Kubernetes resource quantities (`k8s.io/apimachinery/pkg/api/resource`), and Go's integer
parsing that `Gt` / `Lt` selector requirements use."""

import functools
import math
import re
from decimal import MAX_EMAX, MIN_EMIN, ROUND_UP, Context, Decimal
from typing import Any

from ..errors import InputError, show

_INT64 = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
QUANTITY_RULE = (
    "a Kubernetes quantity: a non-negative number with an optional suffix "
    "(n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent like 1e3), "
    "e.g. '500m', '2', '16Gi'"
)

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
    """The numeric value of a Kubernetes quantity: `_parse_quantity`, remembered for the ints and
    strings the placement check reads again and again (the same few quantities in every pod)."""
    if type(value) is str or type(value) is int:
        return _cached_quantity(value)
    return _parse_quantity(value)


@functools.lru_cache(maxsize=8192, typed=True)
def _cached_quantity(value: object) -> Decimal:
    return _parse_quantity(value)


def _parse_quantity(value: object) -> Decimal:
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


def whole_number(value: Any) -> Any:
    """A whole float (JSON numbers through Pulumi come back as 300.0) as an int; else as is."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): optional sign, ASCII digits, int64 range."""
    if not _INT64.fullmatch(text):
        return None
    number = int(text)
    if number < _INT64_MIN or number > _INT64_MAX:
        return None
    return number
