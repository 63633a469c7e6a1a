"""Stack config sections derived from the components' `...Args` (see `components.model.inputs`).

From one declaration, three things: the section's pydantic model (`section_model`: camelCase keys,
the Args' types and defaults, nested mappings for dotted keys), the component's arguments from a
parsed section (`args_from`), and where a component's error about `args.<field>` points in the
stack file (`relocate`)."""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

from pydantic import Field, create_model

from ..model.errors import InputError
from ..model.inputs import REQUIRED, Input, Stack, arg_path, camel, inputs, int_bounds
from ..model.syntax import key_path
from .syntax import CONFIG_TYPES, SYNTAX, ConfigModel

_COMPONENT = re.compile(r"^[A-Z]\w*\('(?:[^'\\]|\\.)*'\)\.?")
ARGS = "__stack_args__"
"""On a derived model: the Args dataclass it stands for."""
INPUTS = "__stack_inputs__"
"""On a derived model: its inputs, one per key (and those fed from elsewhere), in key order."""
ATTRS = "__stack_attrs__"
"""On a derived model: Args field -> the attribute path that holds its value."""
FIELDS = "__stack_fields__"
"""On a derived model (and each nested one): attribute -> the input it holds. Its docstring is
what a missing key's error says (not a pydantic `description`: the docstrings are read from the
source only when someone asks)."""


def field_types(args: type) -> dict[str, Any]:
    return {i.field: i.annotation for i in inputs(args)}


def _optional(tp: Any) -> tuple[Any, bool]:
    """(the type inside Optional / pulumi.Input, whether None is allowed)."""
    if get_origin(tp) is Union:
        parts = [a for a in get_args(tp) if a is not type(None)]
        plain = [
            a
            for a in parts
            if not isinstance(a, typing.ForwardRef)
            and get_origin(a) not in (typing.Awaitable, Callable)
            and "Awaitable" not in str(get_origin(a) or "")
            and "Output" not in str(a)
        ]
        inner = plain[0] if plain else Any
        return _optional(inner)[0], type(None) in get_args(tp)
    return tp, False


def config_type(tp: Any, decl: Stack) -> Any:
    """The config type of an Args field type: strict ints and bools, lists and dicts of config
    types, the library's value types as their config models, a declared syntax or choices (of
    a list: of its items)."""
    tp, _ = _optional(tp)
    if decl.syntax:
        return SYNTAX[decl.syntax]
    origin = get_origin(tp)
    if origin in (list, Sequence, tuple) or tp in (list, Sequence):
        item = get_args(tp)[0] if get_args(tp) else Any
        item_type = config_type(item, Stack(choices=decl.choices))
        return Annotated[list[item_type], Field(min_length=decl.min_items)]  # type: ignore[valid-type]
    if decl.choices:
        return Literal[decl.choices]
    if tp is bool:
        return Annotated[bool, Field(strict=True)]
    if tp is int:
        ge, le = int_bounds(decl)
        return Annotated[int, Field(strict=True, ge=ge, le=le)]
    if tp is float:
        return Annotated[float, Field(strict=True, ge=decl.ge, le=decl.le)]
    if tp is str:
        return str
    if tp in CONFIG_TYPES:
        return CONFIG_TYPES[tp]
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        value = get_args(tp)[1] if get_args(tp) else Any
        return dict[str, config_type(value, Stack())]  # type: ignore[misc]
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return section_model(tp.__name__ + "Config", inputs(tp), args=tp)
    return tp


def section_model(
    name: str,
    decls: Sequence[Input],
    *,
    args: Optional[type] = None,
    base: type[ConfigModel] = ConfigModel,
    doc: str = "",
) -> type[ConfigModel]:
    """A config model with a key per input that has a key (`Input.path`); a dotted key makes a
    nested model (`gpuSharing.strategy`). Attribute names are the Args fields' names."""
    tree: dict[str, Any] = {}
    # The key that names the object (`name`) first, as a person reads and writes it.
    decls = sorted(decls, key=lambda i: i.path != "name")
    kept: list[Input] = []
    for inp in decls:
        if inp.path is None:
            kept.append(inp)
            continue
        node = tree
        *groups, leaf = inp.path.split(".")
        for g in groups:
            node = node.setdefault(g, {})
        if leaf not in node:
            node[leaf] = inp
            kept.append(inp)
    model, _ = _build(name, tree, base, doc)
    setattr(model, INPUTS, kept)
    if args is not None:
        setattr(model, ARGS, args)
    return model


def _build(
    name: str,
    tree: Mapping[str, Any],
    base: type[ConfigModel],
    doc: str,
) -> tuple[type[ConfigModel], dict[str, tuple[str, ...]]]:
    fields: dict[str, Any] = {}
    attrs: dict[str, tuple[str, ...]] = {}
    held: dict[str, Input] = {}
    for key, node in tree.items():
        if isinstance(node, Input):
            ctype = config_type(node.annotation, node.decl)
            if node.required:
                fields[node.field] = (ctype, Field(alias=key))
            elif node.default is None:
                fields[node.field] = (Optional[ctype], Field(default=None, alias=key))
            else:
                fields[node.field] = (ctype, Field(default=node.default, alias=key))
            attrs[node.field] = (node.field,)
            held[node.field] = node
        else:
            attr = _snake(key)
            sub, sub_attrs = _build(f"{name}_{key}", node, ConfigModel, "")
            fields[attr] = (Optional[sub], Field(default=None, alias=key))
            for f, path in sub_attrs.items():
                attrs[f] = (attr, *path)
    model = create_model(name, __base__=base, __doc__=doc or None, **fields)
    setattr(model, ATTRS, attrs)
    setattr(model, FIELDS, held)
    return model, attrs


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def value_of(section: Any, field: str) -> Any:
    """The parsed value of Args field `field` in a derived section, None when absent."""
    attrs = getattr(type(section), ATTRS, {})
    if field not in attrs:
        return None
    node = section
    for attr in attrs[field]:
        node = getattr(node, attr, None)
        if node is None:
            return None
    return node


def to_arg(value: Any) -> Any:
    """A parsed config value as the component takes it."""
    if isinstance(value, ConfigModel):
        if hasattr(value, "to_value"):
            return value.to_value()
        made = getattr(type(value), ARGS, None)
        if made is not None:
            return args_from(value, made)
        return value
    if isinstance(value, list):
        return [to_arg(v) for v in value]
    if isinstance(value, dict):
        return {k: to_arg(v) for k, v in value.items()}
    return value


def args_from(
    section: Any,
    args: type,
    /,
    block: Optional[str] = None,
    sources: Optional[Mapping[str, Any]] = None,
    **given: Any,
) -> Any:
    """The Args a parsed section stands for: each input with a key takes the section's value (its
    default when absent), each input fed from elsewhere `sources[<its source>]`; `given` sets the
    rest (and wins)."""
    kwargs: dict[str, Any] = {}
    for inp in inputs(args, block):
        if inp.field in given:
            continue
        if inp.path is not None:
            value = value_of(section, inp.field)
            if value is None and inp.default is not REQUIRED:
                continue
            kwargs[inp.field] = to_arg(value)
        elif inp.source is not None and sources is not None and inp.source in sources:
            kwargs[inp.field] = sources[inp.source]
    kwargs.update(given)
    return args(**kwargs)


def relocate(
    err: InputError, base: str, args: type, block: Optional[str] = None, namespace: str = ""
) -> InputError:
    """A component's error (`GkeGpuNodePool('l4').args.gpu_count: ...`) at the stack key that fed
    that argument, under `base` (`gpu-inference:pools[0]`): its key (a map key whole, list steps
    kept), the key it is fed from (`gpu-inference:cluster.name`), or `base` itself."""
    found = arg_path(err.path)
    target = base
    if found is None:
        own = _COMPONENT.sub("", err.path)
        if own == "args" and block:  # about the arguments together: the block that holds them
            target = f"{base}.{block}"
        bare = own.split("[", 1)[0].split(".", 1)[0]
        for inp in inputs(args, block):
            if inp.path == bare:
                target = f"{base}.{own}"
    else:
        field, rest = found
        types = field_types(args)
        for inp in inputs(args, block):
            if inp.field != field:
                continue
            if inp.path is not None:
                target = f"{base}.{inp.path}" + _rest(rest, types.get(field))
            elif inp.source is not None:
                target = f"{namespace}:{inp.source}" if namespace else inp.source
    return InputError(
        keys_named(err.problem, args, block), keys_named(err.allowed, args, block), target
    )


def keys_named(text: str, args: type, block: Optional[str] = None) -> str:
    """A component's message with its argument names (`min_nodes`) said as the stack's keys
    (`minNodes`), so that it reads right where the stack file is the input."""
    for inp in inputs(args, block):
        if "_" in inp.field and inp.path is not None:
            key = (
                inp.path.split(".", 1)[1]
                if block and inp.path.startswith(block + ".")
                else inp.path
            )
            text = re.sub(rf"(?<![\w.]){inp.field}(?![\w])", key, text)
    return text


def _rest(rest: str, tp: Any) -> str:
    """What follows an argument in a component's error path, as config key steps."""
    inner, _ = _optional(tp)
    origin = get_origin(inner)
    if rest.startswith(".") and (origin in (dict, Mapping) or inner in (dict, Mapping)):
        return key_path(rest[1:])
    out = ""
    for part in rest.replace("[", ".[").split("."):
        if not part:
            continue
        out += part if part.startswith("[") else "." + camel(part)
    return out
