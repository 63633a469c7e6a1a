"""Turning pydantic's validation errors into one InputError that names the stack key path
(`gpu-inference:pools[0].taints[1].effect`), says what is allowed and shows the value given."""

from __future__ import annotations

import difflib
import json
import re
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..model.errors import InputError, show
from .config import (
    Spec,
    _aliases,
    _key_path,
)

# ---------------------------------------------------------------------------------------------
# pydantic errors -> one InputError
# ---------------------------------------------------------------------------------------------


def _unwrap_type(tp: Any) -> Any:
    """Strip Optional / Annotated down to the type that holds fields or items."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin is Union:
            args = [a for a in get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _walk(loc: tuple[Any, ...], namespace: str) -> tuple[str, Any]:
    """The config path of a pydantic `loc`, and the type found at its end."""
    path = namespace
    tp: Any = Spec
    first = True
    for part in loc:
        if part == "[key]":
            continue
        cur = _unwrap_type(tp)
        origin = get_origin(cur)
        if isinstance(part, int):
            path += f"[{part}]"
            tp = get_args(cur)[0] if origin is list and get_args(cur) else Any
        elif isinstance(cur, type) and issubclass(cur, BaseModel):
            path += f":{part}" if first else f".{part}"
            field = next(
                (f for n, f in cur.model_fields.items() if (f.alias or n) == part),
                None,
            )
            tp = field.annotation if field is not None else Any
        elif origin is dict:
            path += _key_path(str(part))
            tp = get_args(cur)[1]
        else:
            path += f".{part}"
            tp = Any
        first = False
    return path, tp


_TYPE_WORDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
}


def _from_validation_error(err: ValidationError, namespace: str) -> InputError:
    e = err.errors()[0]
    kind, loc, given = e["type"], tuple(e["loc"]), e.get("input")
    ctx = e.get("ctx") or {}
    if kind == "extra_forbidden":
        _parent_path, parent = _walk(loc[:-1], namespace)
        model = _unwrap_type(parent)
        allowed = (
            _aliases(model) if isinstance(model, type) and issubclass(model, BaseModel) else []
        )
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return InputError(
            f"unknown key {show(loc[-1])}{hint}",
            ", ".join(allowed),
            _walk(loc, namespace)[0],
        )
    path, _ = _walk(loc, namespace)
    if kind == "value_error" and isinstance(ctx.get("error"), InputError):
        inner: InputError = ctx["error"]
        return InputError(inner.problem, inner.allowed).at(_join(path, inner.path))
    if kind == "missing":
        return InputError("required key is missing", "", path)
    if kind in _TYPE_WORDS:
        hint = ""
        if kind == "string_type" and isinstance(given, (int, float, bool)):
            hint = " (quote numbers and booleans in YAML)"
        return InputError(f"expected {_TYPE_WORDS[kind]}, got {_shown(given)}{hint}", "", path)
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        options = re.findall(r"'([^']*)'", expected)
        close = [o for o in options if o.lower() == str(given).lower().replace("_", "")]
        close = close or difflib.get_close_matches(str(given), options, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return InputError(f"{_shown(given)} is not a valid value{hint}", ", ".join(options), path)
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return InputError(
            f"the list is empty; at least {n} item{'s' if n != 1 else ''} required",
            f"a list of at least {n}",
            path,
        )
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        op = {
            "greater_than_equal": ">=",
            "greater_than": ">",
            "less_than_equal": "<=",
            "less_than": "<",
        }[kind]
        bound = next(iter(ctx.values()), "")
        return InputError(f"{_shown(given)} is out of range", f"a number {op} {bound}", path)
    if kind == "value_error":
        return InputError(str(ctx.get("error", e["msg"])), "", path)
    return InputError(f"{e['msg']} (got {_shown(given)})", "", path)


def _join(path: str, sub: str) -> str:
    if not sub:
        return path
    return path + sub if sub.startswith(("[", ".")) else f"{path}.{sub}"


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:57] + "..."
    if isinstance(value, bool):
        return "true" if value else "false"
    return show(value)
