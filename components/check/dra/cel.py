"""CEL device selectors, evaluated as kube-scheduler's DRA allocator evaluates them.

The engine is `cel-expr-python` (Google's CEL-C++ runtime, the reference implementation of the
CEL spec that cel-go, Kubernetes' engine, also follows): the same operators, error values
(`false && error` is false, `error && false` too), `in`, map lookups that fail on a missing key,
`matches` (RE2), and the extensions Kubernetes' base environment adds that selectors use: the
strings extension (`lowerAscii`, `split`, ...) and `cel.bind` (k8s.io/apiserver v0.36
`pkg/cel/environment/base.go`; `ext.Bindings` in k8s.io/dynamic-resource-allocation v0.36
`cel/compile.go`). It is imported only when a graph holds a DRA selector, so a graph without
DRA never loads it.

What Kubernetes adds, done here (k8s.io/dynamic-resource-allocation v0.36.3 `cel/compile.go`):
- `device.driver`, `device.attributes[domain][id]`, `device.capacity[domain][id]`; an attribute
  or capacity name without a domain is in the driver's domain (`parseQualifiedName`); a domain
  the device lacks is an empty map (`newStringInterfaceMapWithDefault`), so reading an id there
  is a "no such key" error, like an id missing from a domain it has;
- versions are semver values, capacities quantities. The quantity library (k8s.io/apiserver
  v0.36.3 `pkg/cel/library/quantity.go`: `quantity`, `isQuantity`, `sign`, `isGreaterThan`,
  `isLessThan`, `compareTo`, `asApproximateFloat`, `asInteger`, `isInteger`, `add`, `sub`) and
  the semver library (`pkg/cel/library/semverlib.go`: `semver`, `isSemver` (with the normalize
  flag), `major`, `minor`, `patch`, `isGreaterThan`, `isLessThan`, `compareTo`) are implemented
  here over an exact value: a quantity is `{"kubernetes.Quantity": <exact decimal>}`, a semver
  `{"kubernetes.Semver": <version without build metadata>}`, so that `==` is Kubernetes'
  `Quantity.Equal` / `Semver.Equal` (value equality; build metadata ignored: blang/semver).

Not like Kubernetes: expressions are not type-checked against Kubernetes' declarations (a
selector Kubernetes refuses at admission for its types may evaluate here), and `'d' in
device.attributes` is true for a domain the expression also indexes literally.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ...model.errors import InputError
from ...model.scheduling.quantities import parse_quantity

_Q = "kubernetes.Quantity"
_V = "kubernetes.Semver"
_DOMAIN_INDEX = re.compile(r"""(?:attributes|capacity)\s*\[\s*(?:'([^']*)'|"([^"]*)")\s*\]""")


class CelError(Exception):
    """A selector that does not compile, or an evaluation that ends in a CEL error."""


@dataclass(frozen=True)
class Outcome:
    """One selector on one device: matched (True / False), or the CEL error."""

    matches: bool
    error: str | None = None


# -- quantity and semver values -------------------------------------------------------------


def _quantity_text(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "") else text


def quantity_value(text: str) -> dict[str, str]:
    """`resource.ParseQuantity(text)` as a CEL quantity value; CelError when it does not parse."""
    negative = text.startswith("-")
    try:
        value = parse_quantity(text[1:] if negative else text)
    except InputError as e:
        raise CelError(f"quantities must match the regular expression: {e}") from None
    return {_Q: _quantity_text(-value if negative else value)}


def _q(value: Any) -> Decimal:
    if isinstance(value, Mapping) and _Q in value:
        return Decimal(value[_Q])
    raise CelError("no such overload")


_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)


def _normalize(text: str) -> str:
    """semverlib.go `normalizeAndParse`: drop a leading v, strip leading zeros, pad to 3 parts."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or not p[0].isdigit():
                p = "0" + p
            parts[i] = p
    while len(parts) < 3:
        parts.append("0")
    return ".".join(parts)


def semver_value(text: str, normalize: bool = False) -> dict[str, str]:
    """blang/semver `Parse` (strict semver 2.0) as a CEL semver value (build metadata dropped:
    it takes no part in comparison or equality)."""
    if normalize:
        text = _normalize(text)
    m = _SEMVER.fullmatch(text)
    if not m:
        raise CelError(f"invalid semantic version: {text!r}")
    return {_V: text.split("+", 1)[0]}


def _v(value: Any) -> tuple[int, int, int, tuple[Any, ...] | None]:
    if not (isinstance(value, Mapping) and _V in value):
        raise CelError("no such overload")
    core, _, pre = str(value[_V]).partition("-")
    major, minor, patch = (int(x) for x in core.split("."))
    ids = (
        tuple((0, int(x), "") if x.isdigit() else (1, 0, x) for x in pre.split("."))
        if pre
        else None
    )
    return major, minor, patch, ids


def _semver_cmp(a: Any, b: Any) -> int:
    """blang/semver `Version.Compare`: major, minor, patch, then a pre-release is lower than the
    release, pre-release identifiers compared one by one (numeric below alphanumeric)."""
    x, y = _v(a), _v(b)
    if x[:3] != y[:3]:
        return -1 if x[:3] < y[:3] else 1
    if x[3] is None or y[3] is None:
        return 0 if x[3] == y[3] else (1 if x[3] is None else -1)
    return 0 if x[3] == y[3] else (-1 if x[3] < y[3] else 1)


def _cmp(a: Any, b: Any) -> int:
    if isinstance(a, Mapping) and _V in a:
        return _semver_cmp(a, b)
    x, y = _q(a), _q(b)
    return (x > y) - (x < y)


def _as_integer(a: Any) -> int:
    value = _q(a)
    if value != value.to_integral_value() or not -(2**63) <= value < 2**63:
        raise CelError("cannot convert value to integer")
    return int(value)


def _add(a: Any, b: Any, sign: int) -> dict[str, str]:
    other = Decimal(b) if isinstance(b, int) else _q(b)
    return {_Q: _quantity_text(_q(a) + sign * other)}


def _is(parse: Any, *args: Any) -> bool:
    try:
        parse(*args)
    except CelError:
        return False
    return True


def _major(a: Any) -> int:
    return _v(a)[0]


# -- the environment -------------------------------------------------------------------------


@functools.cache
def _env() -> Any:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_bindings, ext_strings

    T = cel.Type
    value = T.Map(T.STRING, T.STRING)  # a quantity or a semver value

    def fn(name: str, result: Any, params: list[Any], impl: Any, member: bool = False) -> Any:
        return cel.FunctionDecl(
            name,
            [
                cel.Overload(
                    f"{name}_{'_'.join(p.name() for p in params)}",
                    result,
                    params,
                    is_member=member,
                    impl=impl,
                )
            ],
        )

    def overloads(name: str, *variants: tuple[Any, list[Any], Any, bool]) -> Any:
        return cel.FunctionDecl(
            name,
            [
                cel.Overload(f"{name}_{i}", r, p, is_member=m, impl=f)
                for i, (r, p, f, m) in enumerate(variants)
            ],
        )

    functions = [
        fn("quantity", value, [T.STRING], quantity_value),
        fn("isQuantity", T.BOOL, [T.STRING], lambda s: _is(quantity_value, s)),
        fn("sign", T.INT, [value], lambda a: (_q(a) > 0) - (_q(a) < 0), True),
        fn("isGreaterThan", T.BOOL, [value, value], lambda a, b: _cmp(a, b) == 1, True),
        fn("isLessThan", T.BOOL, [value, value], lambda a, b: _cmp(a, b) == -1, True),
        fn("compareTo", T.INT, [value, value], _cmp, True),
        fn("asApproximateFloat", T.DOUBLE, [value], lambda a: float(_q(a)), True),
        fn("asInteger", T.INT, [value], _as_integer, True),
        fn("isInteger", T.BOOL, [value], lambda a: _is(_as_integer, a), True),
        overloads(
            "add",
            (value, [value, value], lambda a, b: _add(a, b, 1), True),
            (value, [value, T.INT], lambda a, b: _add(a, b, 1), True),
        ),
        overloads(
            "sub",
            (value, [value, value], lambda a, b: _add(a, b, -1), True),
            (value, [value, T.INT], lambda a, b: _add(a, b, -1), True),
        ),
        overloads(
            "semver",
            (value, [T.STRING], semver_value, False),
            (value, [T.STRING, T.BOOL], semver_value, False),
        ),
        overloads(
            "isSemver",
            (T.BOOL, [T.STRING], lambda s: _is(semver_value, s), False),
            (T.BOOL, [T.STRING, T.BOOL], lambda s, n: _is(semver_value, s, n), False),
        ),
        fn("major", T.INT, [value], _major, True),
        fn("minor", T.INT, [value], lambda a: _v(a)[1], True),
        fn("patch", T.INT, [value], lambda a: _v(a)[2], True),
    ]
    return cel.NewEnv(
        variables={"device": T.Map(T.STRING, T.DYN)},
        extensions=[ext_strings.ExtStrings(), ext_bindings.ExtBindings()],
        functions=functions,
    )


@functools.lru_cache(maxsize=1024)
def compiled(expression: str) -> Any:
    """The compiled selector; CelError naming the compile error."""
    try:
        return _env().compile(expression)
    except RuntimeError as e:
        raise CelError(str(e).split(" [INVALID_ARGUMENT]")[0]) from None


def compile_error(expression: str) -> str | None:
    try:
        compiled(expression)
    except CelError as e:
        return str(e)
    return None


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_variable(
    driver: str, device: Mapping[str, Any], domains: tuple[str, ...] = ()
) -> dict[str, Any]:
    """`device` as Kubernetes binds it for one ResourceSlice device (`DeviceMatches`); `domains`
    the expression indexes get an empty map when the device has none (the default map)."""
    attributes: dict[str, dict[str, Any]] = {d: {} for d in domains}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = _qualified(str(name), driver)
        if "version" in attr:
            value: Any = semver_value(str(attr["version"]))
        else:
            value = next((attr[k] for k in ("string", "int", "bool") if k in attr), None)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {d: {} for d in domains}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _qualified(str(name), driver)
        capacity.setdefault(domain, {})[ident] = quantity_value(str(cap.get("value", "0")))
    return {"driver": driver, "attributes": attributes, "capacity": capacity}


def evaluate(expression: str, driver: str, device: Mapping[str, Any]) -> Outcome:
    """One selector on one device. CelError when it does not compile."""
    program = compiled(expression)
    domains = tuple(a or b for a, b in _DOMAIN_INDEX.findall(expression))
    from cel_expr_python import cel

    try:
        result = program.eval(data={"device": device_variable(driver, device, domains)})
    except (RuntimeError, CelError) as e:
        return Outcome(False, str(e))
    if result.type() == cel.Type.ERROR:
        return Outcome(False, str(result.value()))
    value = result.plain_value()
    if not isinstance(value, bool):
        return Outcome(False, f"CEL result of type {result.type().name()} is not a bool")
    return Outcome(value)
