"""Turning pydantic's validation errors into one InputError that names the stack key path
(`gpu-inference:pools[0].taints[1].effect`), says what is allowed and shows the value given."""

from __future__ import annotations

import re
from typing import Annotated, Any, Optional, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from ..model.errors import (
    InputError,
    did_you_mean,
    not_a_choice,
    show,
    shown,
    too_short,
    type_error,
)
from ..model.inputs import QUOTE_HINT, number_text
from ..model.syntax import key_path
from .derive import FIELDS
from .syntax import aliases

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


def _walk(loc: tuple[Any, ...], root: str, model: Any) -> tuple[str, Any]:
    """The config path of a pydantic `loc` under `root` (the path of `model`: the namespace for the
    whole Spec, `gpu-inference:pools[0]` for one pool), and the type found at its end."""
    path = root
    tp: Any = model
    first = ":" not in root
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
            path += key_path(str(part))
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
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
}


def from_validation_error(err: ValidationError, root: str, model: Any) -> InputError:
    """The first of pydantic's errors as one InputError at its stack key (see `_walk`)."""
    e = err.errors()[0]
    kind, loc, given = e["type"], tuple(e["loc"]), e.get("input")
    ctx = e.get("ctx") or {}
    if kind == "extra_forbidden":
        _parent_path, parent = _walk(loc[:-1], root, model)
        model = _unwrap_type(parent)
        allowed = aliases(model) if isinstance(model, type) and issubclass(model, BaseModel) else []
        hint = did_you_mean(loc[-1], allowed, cutoff=0.75)
        return InputError(
            f"unknown key {show(loc[-1])}{hint}",
            ", ".join(allowed),
            _walk(loc, root, model)[0],
        )
    path, _ = _walk(loc, root, model)
    if kind == "value_error" and isinstance(ctx.get("error"), InputError):
        inner: InputError = ctx["error"]
        return InputError(inner.problem, inner.allowed).at(_join(path, inner.path))
    if kind == "missing":
        parent = _unwrap_type(_walk(loc[:-1], root, model)[1])
        about = ""
        if isinstance(parent, type) and issubclass(parent, BaseModel):
            held = getattr(parent, FIELDS, {})
            found = [n for n, f in parent.model_fields.items() if (f.alias or n) == loc[-1]]
            about = held[found[0]].doc if found and found[0] in held else ""
        return InputError("required key is missing", about, path)
    if kind == "list_type" and isinstance(given, dict) and given:
        return InputError(
            f"expected a list, got a mapping ({', '.join(map(str, list(given)[:3]))}"
            f"{', ...' if len(given) > 3 else ''})",
            "a list, one '- ' item per entry, e.g. " + list_form(given, _walk(loc, root, model)[1]),
            path,
        )
    if kind in _TYPE_WORDS:
        hint = ""
        if kind == "string_type" and isinstance(given, (int, float, bool)):
            hint = QUOTE_HINT
        elif kind in ("float_type", "float_parsing", "int_parsing") and isinstance(given, str):
            hint = " (a bare number, without a unit or quotes)"
        return type_error(_TYPE_WORDS[kind], given, hint).at(path)
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        options = re.findall(r"'([^']*)'", expected)
        return not_a_choice(given, options).at(path)
    if kind == "too_short":
        return too_short(ctx.get("min_length", 1)).at(path)
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        op = {
            "greater_than_equal": ">=",
            "greater_than": ">",
            "less_than_equal": "<=",
            "less_than": "<",
        }[kind]
        bound = next(iter(ctx.values()), "")
        text = number_text(bound) if isinstance(bound, (int, float)) else str(bound)
        return InputError(f"{shown(given)} is out of range", f"a number {op} {text}", path)
    if kind == "value_error":
        return InputError(str(ctx.get("error", e["msg"])), "", path)
    return InputError(f"{e['msg']} (got {shown(given)})", "", path)


def list_form(given: dict[Any, Any], list_type: Any) -> str:
    """The list a mapping was probably meant to be, in YAML flow style (its first entry)."""
    item = _unwrap_type(list_type)
    item = get_args(item)[0] if get_origin(item) is list and get_args(item) else None
    fields = aliases(item) if isinstance(item, type) and issubclass(item, BaseModel) else []
    key, value = next(iter(given.items()))
    if "name" in fields and (isinstance(value, dict) or value is None):
        inner = [f"name: {key}"] + [f"{k}: {_plain(v)}" for k, v in (value or {}).items()]
        return "- {" + ", ".join(inner[:3]) + (", ...}" if len(inner) > 3 else "}")
    if "key" in fields and not isinstance(value, (dict, list)):
        return f"- {{key: {key}, value: {_plain(value)}}}"
    return f"- {key}"


def _plain(value: Any) -> str:
    return shown(value) if isinstance(value, (dict, list, bool)) else str(value)


def _join(path: str, sub: str) -> str:
    if not sub:
        return path
    return path + sub if sub.startswith(("[", ".")) else f"{path}.{sub}"


# -----------------------------------------------------------------------------------------------
# component errors -> the stack config key that fed them
# ---------------------------------------------------------------------------------------------

_COMPONENT_PREFIX = re.compile(r"^[A-Z]\w*\('(?:[^'\\]|\\.)*'\)\.?")
_FIRST_SEGMENT = re.compile(r"^([A-Za-z_]\w*)(.*)$")
# Config keys whose values are maps: what follows them in a component path is one map key
# (`args.labels.cloud.google.com/gke-accelerator`).
_MAP_KEYS = {"labels", "presentLabels", "env", "nodeSelector", "features", "annotations"}


def relocate(
    err: InputError,
    base: str,
    model: type[BaseModel],
    renames: Optional[dict[str, str]] = None,
) -> InputError:
    """A component's InputError (`GkeGpuNodePool('l4').args.gpu_count: ...`) located under the
    stack config key that fed the component (`base`, e.g. `gpu-inference:pools[0]`, whose config
    model is `model`): the argument is renamed (`renames`, else snake_case -> camelCase), and kept
    only when `model` has that key; otherwise the error points at `base` itself. A rename that
    starts with `<namespace>:` is a key elsewhere in the stack (`gpu-inference:cluster.location`).
    """
    path = _COMPONENT_PREFIX.sub("", err.path)
    if path == "args" or path.startswith("args."):
        path = path[len("args.") :]
    match = _FIRST_SEGMENT.match(path)
    target = base
    if match:
        first, rest = match.groups()
        key = (renames or {}).get(first, to_camel(first))
        if ":" in key:
            target = key
        elif key in aliases(model):
            target = _deepest(f"{base}.{key}", _field_type(model, key), key, rest)
    return InputError(err.problem, err.allowed, target)


_STEP = re.compile(r"\.([A-Za-z_][\w-]*)|\[(\d+)\]")


def _field_type(model: type[BaseModel], alias: str) -> Any:
    for n, f in model.model_fields.items():
        if (f.alias or n) == alias:
            return f.annotation
    return Any


def _deepest(path: str, tp: Any, key: str, rest: str) -> str:
    """`path` extended by the steps of `rest` the config model has (a map key whole)."""
    if key in _MAP_KEYS and rest.startswith("."):
        return path + key_path(rest[1:])
    pos = 0
    while pos < len(rest):
        step = _STEP.match(rest, pos)
        if step is None:
            break
        cur = _unwrap_type(tp)
        if step.group(2) is not None and get_origin(cur) is list:
            path += f"[{step.group(2)}]"
            tp = get_args(cur)[0]
        elif (
            step.group(1)
            and isinstance(cur, type)
            and issubclass(cur, BaseModel)
            and step.group(1) in aliases(cur)
        ):
            name = step.group(1)
            tp = _field_type(cur, name)
            if name in _MAP_KEYS and step.end() < len(rest):
                return f"{path}.{name}" + key_path(rest[step.end() + 1 :])
            path += f".{name}"
        else:
            break
        pos = step.end()
    return path
