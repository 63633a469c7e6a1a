"""How a component's inputs meet the stack config, declared once on its `...Args` dataclass.

A field of an Args dataclass is, by default, the stack key of its camelCase name in the config
section that feeds the component (`min_nodes` -> `minNodes`). A field whose key differs, is fed from
another section, or is not a stack key at all says so in its metadata: `field(default=...,
metadata=stack(...))`. From that one declaration the platform derives the section's schema, the
component's arguments from a parsed section, where a component's error about `args.<field>` points
in the stack file, and the config reference (`docs/config-reference.md`).

Pure: imports nothing but the standard library, the library's error type and its value
syntaxes (`syntax.py`).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import re
import sys
import textwrap
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .errors import InputError, not_a_choice, too_short, type_error
from .syntax import CHECKS, SHAPES

STACK = "gpu-inference.stack"
"""The metadata key of a field's `Stack` declaration."""

REQUIRED = dataclasses.MISSING

INT32_MAX = 2**31 - 1
"""The most an integer input may be unless its field declares less (`Stack.le`): every count the
Args take lands in an int32 of the API that receives it: Kubernetes' replicas (k8s.io/api v0.36.3
apps/v1 `DeploymentSpec.Replicas *int32`), the CRDs' `format: int32` fields (KServe v0.20.0
`minReplicas`/`maxReplicas`/`parallelism.tensor`, Seldon Core 2.6.0 Server `replicas`,
LeaderWorkerSet `size`), GKE's `NodePoolAutoscaling.total_max_node_count` (`int32` in
google/container/v1 cluster_service.proto), EKS's `NodegroupScalingConfig.maxSize` (a 32-bit
`Integer` in the EKS API model). A value past it is refused where it is given, never carried
into work that grows with it."""


class _NotGiven:
    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Any = _NotGiven()
"""`Stack.value` when the stack config takes the component's own default."""


@dataclass(frozen=True)
class Stack:
    """How one Args field meets the stack config (see `stack`)."""

    key: Optional[str] = None
    source: Optional[str] = None
    hidden: bool = False
    root: bool = False
    required: bool = False
    choices: tuple[Any, ...] = ()
    ge: Optional[float] = None
    le: Optional[float] = None
    min_items: Optional[int] = None
    syntax: Optional[str] = None
    default: Optional[str] = None
    doc: Optional[str] = None
    value: Any = NOT_GIVEN


def stack(
    key: Optional[str] = None,
    *,
    source: Optional[str] = None,
    hidden: bool = False,
    root: bool = False,
    required: bool = False,
    choices: tuple[Any, ...] = (),
    ge: Optional[float] = None,
    le: Optional[float] = None,
    min_items: Optional[int] = None,
    syntax: Optional[str] = None,
    default: Optional[str] = None,
    doc: Optional[str] = None,
    value: Any = NOT_GIVEN,
) -> dict[str, Stack]:
    """Field metadata saying how the field meets the stack config:

    - `key`: its key, when not the camelCase of the field name; dotted for a key inside a mapping
      (`gpuSharing.maxClientsPerGpu`).
    - `source`: the value is another section's key (`cluster.name`), set by the platform; not a
      key of this section, and errors about the field point there.
    - `hidden`: not a stack key; the platform computes it (errors point at the section).
    - `root`: in a section with a block of its own (`pools[].karpenter`), the key sits at the
      section's root beside the block, not in it.
    - `required`: the stack must give the key, though the component has a default for it.
    - `choices`, `ge`, `le`, `min_items`: what the config accepts, checked when it is read and
      listed in the reference. `syntax`: a named value syntax the platform checks (`labels`,
      `label-keys`, `dns1123`, `quantity`, `version`, ...).
    - `default`: the default as the reference states it, when it is not the field's value (a
      default the platform resolves from other keys). `doc`: the reference's text, when the
      field's docstring speaks to component users rather than stack authors.
    - `value`: the default the stack config takes when it is not the component's (a stack puts
      models in its own namespace `models`; None where the platform resolves it).
    """
    return {
        STACK: Stack(
            key,
            source,
            hidden,
            root,
            required,
            choices,
            ge,
            le,
            min_items,
            syntax,
            default,
            doc,
            value,
        )
    }


@dataclass(frozen=True)
class Input:
    """One input of a component as the stack config sees it."""

    field: str
    """The Args field."""
    path: Optional[str]
    """Its key relative to the section (dotted inside mappings); None when not a key of it."""
    annotation: Any
    """The field's type (evaluated when its module postpones annotations)."""
    default: Any
    """The field's default, `REQUIRED` when it has none."""
    decl: Stack
    """The whole declaration."""
    owner: type
    """The Args class it is a field of."""

    @property
    def doc(self) -> str:
        """The reference's text for it. Read on demand: the docstrings come from the source's
        syntax tree, which only the reference, the schema and a missing key's error need (reading
        them for every section cost a 1000-model preview a fifth of a second)."""
        return self.decl.doc or field_docs(self.owner).get(self.field, "")

    @property
    def source(self) -> Optional[str]:
        return self.decl.source

    @property
    def required(self) -> bool:
        return self.default is REQUIRED or self.decl.required


def int_bounds(decl: Stack) -> tuple[Optional[float], float]:
    """(least, most) an integer input may be: its declared `ge` and `le`, `INT32_MAX` when it
    declares no `le`. A declared `le` is taken as it is: a count that is no API's int32 (a
    model's parameters) declares its own bound."""
    return decl.ge, INT32_MAX if decl.le is None else decl.le


def range_error(value: Any, tp: Any, decl: Stack) -> Optional[InputError]:
    """The error for a number outside its field's declared range (worded as the stack config's
    own refusal words it), or None. `tp`: the field's plain type (int or float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    ge, le = int_bounds(decl) if tp is int else (decl.ge, decl.le)
    if ge is not None and value < ge:
        return InputError(f"{value} is out of range", f"a number >= {number_text(ge)}")
    if le is not None and value > le:
        return InputError(f"{value} is out of range", f"a number <= {number_text(le)}")
    return None


def number_text(x: float) -> str:
    """`2147483647`, `0.001`: a bound as the errors and the reference write it."""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def check_declared(args: Any, path: str = "args", keys: bool = False) -> None:
    """Raise the `InputError` of `violation` at its path, if any. `keys`: the path in the
    config's keys (`predictor.gpuClaim.count`), for a component whose errors are relative to
    its args and name them so; else in field names under `path` (`args.max_nodes`)."""
    found = violation(args, path, keys)
    if found is not None:
        raise found[1].at(found[0])


def violation(
    args: Any, path: str = "args", keys: bool = False
) -> Optional[tuple[str, InputError]]:
    """The first field of an Args value (and of the Args inside it: a field, a list's or a
    mapping's items) that breaks what its declaration says (`Stack`: a value for a field without
    default, `syntax`, `min_items`, `choices`, a plain type's (int, float, bool), `ge`/`le`), as (its path under `path`, the error);
    None when none does. The Python entry point's half of the one check the stack config makes
    when it is read (`components.platform.derive.config_type`), in the same words."""
    if not dataclasses.is_dataclass(args) or isinstance(args, type):
        return None
    for inp in inputs(type(args)):
        value = getattr(args, inp.field, None)
        step = (inp.path or camel(inp.field)) if keys else inp.field
        at = f"{path}.{step}" if path else step
        bad = field_violation(inp, value)
        if bad is not None:
            return _join(at, bad[0]), bad[1]
        for sub, item in _inner(value):
            found = violation(item, at + sub, keys)
            if found:
                return found
    return None


def _join(at: str, sub: str) -> str:
    return at + sub if not sub or sub.startswith(("[", ".")) else f"{at}.{sub}"


def _inner(value: Any) -> list[tuple[str, Any]]:
    """The Args a field's value holds, with their path steps: itself, a list's or a mapping's
    items."""
    if isinstance(value, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(value) if dataclasses.is_dataclass(v)]
    if isinstance(value, dict):
        return [(f".{k}", v) for k, v in value.items() if dataclasses.is_dataclass(v)]
    return [("", value)] if dataclasses.is_dataclass(value) else []


_PLAIN = (str, int, float, bool, list, tuple, dict)
"""Values a declaration judges; anything else (a Pulumi Output, an object the component
resolves) is left to the component."""


def field_violation(inp: Input, value: Any) -> Optional[tuple[str, InputError]]:
    """What is wrong with one field's value by its declaration, as (the path below the field,
    the error), or None."""
    decl = inp.decl
    if value is None:
        if inp.default is REQUIRED and not _takes_none(inp.annotation):
            return "", InputError("required key is missing", inp.doc)
        return None
    if not isinstance(value, _PLAIN):
        return None
    tp = plain_type(inp.annotation)
    bad = wrong_type(value, tp) if tp is not None else None
    if bad is not None:
        return "", bad
    if not decl.syntax:
        shape = wrong_shape(inp.annotation, value)
        if shape is not None:
            return shape
    if decl.syntax:
        shape, check, left = CHECKS[decl.syntax]
        words, types = SHAPES[shape]
        if isinstance(value, left):
            return None
        if not isinstance(value, types):
            quote = shape is str and isinstance(value, (int, float, bool))
            return "", type_error(words, value, QUOTE_HINT if quote else "")
        try:
            check(value)
        except InputError as e:
            return e.path, InputError(e.problem, e.allowed)
        return None
    if isinstance(value, (list, tuple)):
        if decl.min_items is not None and len(value) < decl.min_items:
            return "", too_short(decl.min_items)
        for i, item in enumerate(value):
            if decl.choices and item not in decl.choices:
                return f"[{i}]", not_a_choice(item, decl.choices)
        return None
    if decl.choices and value not in decl.choices:
        return "", not_a_choice(value, decl.choices)
    bad = range_error(value, tp, decl) if tp is not None else None
    return ("", bad) if bad is not None else None


def wrong_shape(tp: Any, value: Any) -> Optional[tuple[str, InputError]]:
    """A string, list or mapping field given a value of another shape, or a list of plain
    items (str, int, float, bool) with an item of another type: (its path below the field, the
    error in the stack config's words), or None."""
    one = single_type(tp)
    origin = typing.get_origin(one)
    scalar = isinstance(value, (str, int, float, bool))
    if one is str and not isinstance(value, str):
        quote = isinstance(value, (int, float, bool))
        return "", type_error("a string", value, QUOTE_HINT if quote else "")
    if origin in (list, tuple, Sequence) or one in (list, tuple):
        if scalar:
            return "", type_error("a list", value)
        item = typing.get_args(one)[0] if typing.get_args(one) else None
        for i, v in enumerate(value if isinstance(value, (list, tuple)) else ()):
            if item is str:
                found = wrong_shape(str, v)
                bad = found[1] if found else None
            else:
                bad = wrong_type(v, item) if item in (int, float, bool) else None
            if bad is not None:
                return f"[{i}]", bad
        return None
    if (origin in (dict, Mapping) or one is dict) and scalar:
        return "", type_error("a mapping (key: value)", value)
    return None


def single_type(tp: Any) -> Any:
    """The one type inside Optional / pulumi.Input (its awaitable and Output parts left out),
    or None when the field takes several."""
    if typing.get_origin(tp) is not typing.Union:
        return tp
    parts = [
        a
        for a in typing.get_args(tp)
        if a is not type(None) and "Awaitable" not in str(a) and "Output" not in str(a)
    ]
    return parts[0] if len(parts) == 1 else None


_TYPE_WORDS = {int: "an integer", float: "a number", bool: "true or false"}
QUOTE_HINT = " (quote numbers and booleans in YAML)"
"""What a string key given a number or boolean is told (YAML reads `1.30` and `yes` as such)."""


def wrong_type(value: Any, tp: type) -> Optional[InputError]:
    """The error for a value that is not of its field's plain type (int, float or bool: the stack
    config's strict types, in its words), or None."""
    if tp is bool:
        ok = isinstance(value, bool)
    else:
        ok = not isinstance(value, bool) and isinstance(value, int if tp is int else (int, float))
    if ok:
        return None
    hint = (
        " (a bare number, without a unit or quotes)"
        if tp is float and isinstance(value, str)
        else ""
    )
    return type_error(_TYPE_WORDS[tp], value, hint)


def _takes_none(tp: Any) -> bool:
    return tp is None or tp is type(None) or type(None) in typing.get_args(tp) or tp is Any


def plain_number_type(tp: Any) -> Optional[type]:
    """int or float when the field's type is one (inside Optional / pulumi.Input), else None."""
    found = plain_type(tp)
    return found if found is not bool else None


def plain_type(tp: Any) -> Optional[type]:
    """int, float or bool when the field's type is one (inside Optional / pulumi.Input), else
    None."""
    if tp in (int, float, bool):
        return typing.cast(type, tp)
    if typing.get_origin(tp) is typing.Union:
        for a in typing.get_args(tp):
            if a in (int, float, bool):
                return typing.cast(type, a)
    return None


def camel(name: str) -> str:
    """`min_nodes` -> `minNodes`."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def declaration(f: dataclasses.Field[Any]) -> Stack:
    found = f.metadata.get(STACK) if f.metadata else None
    return found if isinstance(found, Stack) else Stack()


def inputs(args: type, block: Optional[str] = None) -> list[Input]:
    """The inputs of an Args dataclass, in field order. `block`: the key of the section's own block
    (`karpenter`), under which every key goes that is not declared `root`."""
    return list(_inputs(args, block))


@functools.cache
def _inputs(args: type, block: Optional[str]) -> tuple[Input, ...]:
    """Derived once per Args class and block: a class's fields, declarations and docstrings do not
    change while a program runs, and the config, the platform and every error path ask for the
    same ones again and again (a stack of 1000 models asked 22 000 times)."""
    out = []
    for f in dataclasses.fields(args):
        decl = declaration(f)
        if decl.hidden or decl.source is not None:
            path = None
        else:
            path = decl.key or camel(f.name)
            if block and not decl.root:
                path = f"{block}.{path}"
        if decl.value is not NOT_GIVEN:
            default = decl.value
        elif f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = REQUIRED
        out.append(Input(f.name, path, field_type(args, f), default, decl, args))
    return tuple(out)


def field_type(args: type, f: dataclasses.Field[Any]) -> Any:
    """A field's type, evaluated when its module postpones annotations."""
    if not isinstance(f.type, str):
        return f.type
    module = sys.modules[args.__module__]
    return eval(f.type, {**typing.__dict__, **vars(module)})


def field_docs(cls: type) -> dict[str, str]:
    """The docstrings written under a dataclass's fields (as Pulumi's component-provider analyzer
    reads them), by field name; empty when the source cannot be read."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            out.update(_own_field_docs(klass))
    return out


@functools.cache
def _own_field_docs(klass: type) -> dict[str, str]:
    """One class's own field docstrings, read once: the config sections, the reference and the
    schema ask for the same classes often. Read from its module's syntax tree, parsed once for
    all its classes (`inspect.getsource` parses the whole module again for each class)."""
    found = _module_classes(klass.__module__).get(klass.__qualname__)
    if found is not None:
        return _docs_of(found.body)
    try:  # not found by name (made in a function, or defined twice): its own source
        tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
    except (OSError, TypeError):
        return {}
    return _docs_of(
        tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    )


@functools.cache
def _module_classes(module: str) -> dict[str, ast.ClassDef]:
    """A module's classes by qualified name (outside functions; a name defined twice is left
    out), from one parse of its source."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
    except (KeyError, OSError, TypeError, SyntaxError):
        return {}
    out: dict[str, ast.ClassDef] = {}
    twice: set[str] = set()

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                if name in out:
                    twice.add(name)
                out[name] = node
                walk(node.body, name + ".")

    walk(tree.body, "")
    return {k: v for k, v in out.items() if k not in twice}


def _docs_of(body: list[ast.stmt]) -> dict[str, str]:
    out: dict[str, str] = {}
    for stmt, after in zip(body, [*body[1:], None], strict=True):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            out[stmt.target.id] = " ".join(inspect.cleandoc(after.value.value).split())
    return out


def class_doc(cls: type) -> str:
    """A class's docstring as one paragraph."""
    return " ".join(inspect.cleandoc(cls.__doc__ or "").split())


_ARG = re.compile(r"^(?:[A-Z]\w*\('(?:[^'\\]|\\.)*'\)\.)?args\.([a-z_][a-z0-9_]*)(.*)$")


def arg_path(path: str) -> Optional[tuple[str, str]]:
    """`GkeGpuNodePool('l4').args.labels.pool` or `args.taints[1]` -> (field, rest after it);
    None when the path does not name an argument."""
    m = _ARG.match(path)
    return (m.group(1), m.group(2)) if m else None


def locate(args: type, block: Optional[str], field: str) -> Optional[Input]:
    """The input of `args` that field `field` is, or None."""
    for i in inputs(args, block):
        if i.field == field:
            return i
    return None
