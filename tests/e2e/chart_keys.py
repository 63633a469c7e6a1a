"""Whether every value key a Helm release sets exists in its chart (pure: a chart directory in,
messages out).

Helm merges the values it is given over the chart's ``values.yaml`` and renders the templates;
a key no template reads is kept and ignored, without a word (helm v3 ``pkg/chartutil/values.go``
``CoalesceValues``; only a ``values.schema.json`` that closes an object refuses one). A misspelt
key (``controller.nodeSelectr``) is therefore a setting lost. A key path we set is real when:

- ``values.yaml`` has it, or has one of its prefixes as an open map (``{}`` or null: the
  chart's ``nodeSelector: {}``, which the templates pass through whole);
- the templates or the files they render (``templates/``, ``files/``, any file but
  ``Chart.yaml``, ``values*`` and the READMEs) read it, or read one of its prefixes that
  ``values.yaml`` does not enumerate (``.Values.a.b``, ``$.Values.a.b``,
  ``index .Values "a" "b"``); a read of a prefix that ``values.yaml`` enumerates (a map with
  keys) does not make a new key under it real;
- ``values.schema.json`` declares it (``properties``, ``patternProperties``, a schema under
  ``additionalProperties``; local ``$ref``, ``allOf``/``anyOf``/``oneOf`` followed), or holds an
  object there whose keys it leaves free;
- or it is under a subtree the chart hands whole to a program (``ChartKeys.given``: Envoy
  Gateway's ``config.envoyGateway``, its EnvoyGateway configuration) and that program's
  configuration type has it (``go_accepts``: the json names of the Go structs in its module);
- or its first key names a subchart (``charts/<name>``, or a dependency's alias) and the rest is
  real in that subchart (``global`` is real in the parent when it is in any subchart).

A list we set is a leaf: its items are the chart's objects (tolerations, node selector terms),
not keys. The checker only accepts: a key it cannot find is reported with the closest real key
beside it, so a wrong verdict is a visible failure, never a silent pass.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

Path_ = tuple[str, ...]

NOT_TEMPLATES = ("Chart.yaml", "Chart.lock", "values.yaml", "values.schema.json", ".helmignore")
"""Files of a chart that are not rendered: what they mention is not a read of a value."""

_DOTTED = re.compile(r"\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
_INDEX = re.compile(
    r"index\s+\(?\s*\$?\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\)?((?:\s+\"[^\"]*\")+)"
)


@dataclass
class ChartKeys:
    """What a chart knows of its values: its defaults, the paths its templates read, its schema,
    its subcharts by the name the parent's values address them with."""

    name: str
    defaults: dict[str, Any]
    read: set[Path_] = field(default_factory=set)
    schema: Optional[dict[str, Any]] = None
    subcharts: dict[str, ChartKeys] = field(default_factory=dict)
    given: dict[Path_, Callable[[Path_], bool]] = field(default_factory=dict)
    """Subtrees handed whole to a program, with the check of a key path under them."""


def _yaml_load(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


def template_reads(text: str) -> set[Path_]:
    """The value paths a template's text reads: ``.Values.a.b``, ``$.Values.a.b`` and
    ``index .Values "a" "b"`` (also ``index .Values.a "b"``)."""
    out: set[Path_] = set()
    for m in _DOTTED.finditer(text):
        out.add(tuple(m.group(1).lstrip(".").split(".")))
    for m in _INDEX.finditer(text):
        head = tuple(k for k in m.group(1).split(".") if k)
        out.add(head + tuple(re.findall(r"\"([^\"]*)\"", m.group(2))))
    return out


def _rendered_files(chart: Path) -> Iterator[Path]:
    for p in sorted(chart.rglob("*")):
        rel = p.relative_to(chart).parts
        if not p.is_file() or rel[0] == "charts":
            continue
        if len(rel) == 1 and (p.name in NOT_TEMPLATES or p.name.upper().startswith("README")):
            continue
        yield p


def load_chart(chart: Path, name: Optional[str] = None) -> ChartKeys:
    """A chart directory (``Chart.yaml``, ``values.yaml``, ``templates/``, ``charts/``) read."""
    meta = _yaml_load((chart / "Chart.yaml").read_text()) or {}
    values = chart / "values.yaml"
    defaults = (_yaml_load(values.read_text()) if values.exists() else None) or {}
    schema_file = chart / "values.schema.json"
    schema = json.loads(schema_file.read_text()) if schema_file.exists() else None
    read: set[Path_] = set()
    for p in _rendered_files(chart):
        try:
            read |= template_reads(p.read_text())
        except UnicodeDecodeError:
            continue
    aliases = {
        d.get("name"): d.get("alias") or d.get("name") for d in meta.get("dependencies") or ()
    }
    subs: dict[str, ChartKeys] = {}
    for sub in sorted((chart / "charts").glob("*/Chart.yaml")):
        sub_name = (_yaml_load(sub.read_text()) or {}).get("name", sub.parent.name)
        key = aliases.get(sub_name, sub_name)
        subs[key] = load_chart(sub.parent, key)
    return ChartKeys(name or meta.get("name", chart.name), defaults, read, schema, subs)


def leaf_paths(values: Mapping[str, Any], prefix: Path_ = ()) -> Iterator[Path_]:
    """Every leaf key path of ``values``: a map recursed into, anything else (a list, a scalar,
    an empty map) a leaf."""
    for k, v in values.items():
        p = (*prefix, str(k))
        if isinstance(v, Mapping) and v:
            yield from leaf_paths(v, p)
        else:
            yield p


def show_path(path: Path_) -> str:
    """``a.b["eks.amazonaws.com/role-arn"]``: a key with a dot or a slash is quoted."""
    out = ""
    for k in path:
        out += f'["{k}"]' if re.search(r"[^A-Za-z0-9_-]", k) else (f".{k}" if out else k)
    return out


_MISSING = object()


def _lookup(tree: Any, path: Path_) -> Any:
    for k in path:
        if not isinstance(tree, Mapping) or k not in tree:
            return _MISSING
        tree = tree[k]
    return tree


def _open(value: Any) -> bool:
    """A default that leaves its keys to the user: ``{}`` or null."""
    return value is None or (isinstance(value, Mapping) and not value)


def _in_defaults(chart: ChartKeys, path: Path_) -> bool:
    if _lookup(chart.defaults, path) is not _MISSING:
        return True
    return any(_open(_lookup(chart.defaults, path[:i])) for i in range(1, len(path)))


def _in_templates(chart: ChartKeys, path: Path_) -> bool:
    for i in range(1, len(path) + 1):
        if path[:i] not in chart.read:
            continue
        if i == len(path):
            return True
        at = _lookup(chart.defaults, path[:i])
        if at is _MISSING or _open(at):
            return True
    return False


def _resolve(root: Mapping[str, Any], node: Any, depth: int = 0) -> list[Mapping[str, Any]]:
    """``node`` with its local ``$ref`` followed and its ``allOf``/``anyOf``/``oneOf`` branches
    spread: the schemas a value there is held to (one of them accepting is enough)."""
    if not isinstance(node, Mapping) or depth > 32:
        return []
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            step = part.replace("~1", "/").replace("~0", "~")
            target = target.get(step, {}) if isinstance(target, Mapping) else {}
        return [*_resolve(root, target, depth + 1), node]
    out = [node]
    for kw in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(kw) or ():
            out += _resolve(root, branch, depth + 1)
    return out


def _schema_accepts(root: Mapping[str, Any], node: Any, path: Path_) -> bool:
    if not path:
        return True
    nodes = _resolve(root, node)
    for n in nodes:
        props = n.get("properties") or {}
        if path[0] in props and _schema_accepts(root, props[path[0]], path[1:]):
            return True
        for pattern, sub in (n.get("patternProperties") or {}).items():
            if re.search(pattern, path[0]) and _schema_accepts(root, sub, path[1:]):
                return True
        extra = n.get("additionalProperties")
        if isinstance(extra, Mapping) and _schema_accepts(root, extra, path[1:]):
            return True
    enumerated = any(n.get("properties") or n.get("patternProperties") for n in nodes)
    closed = any(n.get("additionalProperties") is False for n in nodes)
    objects = any(n.get("type") == "object" for n in nodes)
    return objects and not enumerated and not closed


def _in_schema(chart: ChartKeys, path: Path_) -> bool:
    return chart.schema is not None and _schema_accepts(chart.schema, chart.schema, path)


def known(chart: ChartKeys, path: Path_) -> bool:
    """Whether the chart (or the subchart its first key names) has the key path ``path``."""
    if _in_defaults(chart, path) or _in_templates(chart, path) or _in_schema(chart, path):
        return True
    for prefix, accepts in chart.given.items():
        if (
            path[: len(prefix)] == prefix
            and len(path) > len(prefix)
            and accepts(path[len(prefix) :])
        ):
            return True
    if path and path[0] in chart.subcharts and known(chart.subcharts[path[0]], path[1:]):
        return True
    return (
        bool(path) and path[0] == "global" and any(known(s, path) for s in chart.subcharts.values())
    )


def _real_paths(chart: ChartKeys) -> Iterator[Path_]:
    yield from leaf_paths(chart.defaults)
    yield from _intermediate(chart.defaults)
    yield from chart.read
    if chart.schema is not None:
        yield from _schema_paths(chart.schema, chart.schema)
    for name, sub in chart.subcharts.items():
        for p in _real_paths(sub):
            yield (name, *p)


def _schema_paths(root: Mapping[str, Any], node: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    if len(prefix) > 16:
        return
    for n in _resolve(root, node):
        for k, sub in (n.get("properties") or {}).items():
            yield (*prefix, k)
            yield from _schema_paths(root, sub, (*prefix, k))


def _intermediate(tree: Mapping[str, Any], prefix: Path_ = ()) -> Iterator[Path_]:
    for k, v in tree.items():
        if isinstance(v, Mapping) and v:
            yield (*prefix, str(k))
            yield from _intermediate(v, (*prefix, str(k)))


def closest(chart: ChartKeys, path: Path_) -> Optional[Path_]:
    """The real key path nearest ``path``: under its longest real prefix, the key spelt most like
    its next one (difflib), else the real path under that prefix nearest it as a whole."""
    real = set(_real_paths(chart))
    depth = max((i for i in range(len(path)) if any(p[:i] == path[:i] for p in real)), default=0)
    under = sorted(p for p in real if len(p) > depth and p[:depth] == path[:depth])
    keys = sorted({p[depth] for p in under})
    match = (
        difflib.get_close_matches(path[depth], keys, n=1, cutoff=0.6) if depth < len(path) else []
    )
    if match:
        return (*path[:depth], match[0])
    shown = {show_path(p): p for p in under}
    near = difflib.get_close_matches(show_path(path), sorted(shown), n=1, cutoff=0.0)
    return shown[near[0]] if near else None


GoTypes = dict[str, list[tuple[Optional[str], str]]]
"""A Go package's structs: type name -> its fields as (json name, or None when embedded inline;
the field's type as written)."""


def go_struct_fields(texts: Iterable[str]) -> GoTypes:
    """The structs of Go source texts, each field with its json name (``json:"name,omitempty"``;
    ``json:",inline"`` and untagged embedded fields are inline, ``json:"-"`` is dropped)."""
    out: GoTypes = {}
    for text in texts:
        for m in re.finditer(r"^type (\w+) struct \{(.*?)^\}", text, flags=re.M | re.S):
            fields: list[tuple[Optional[str], str]] = []
            for line in m.group(2).splitlines():
                line = line.strip()
                if not line or line.startswith("//"):
                    continue
                decl = line.split("`")[0].split("//")[0].split()
                tag = re.search(r'json:"([^"]*)"', line)
                name = tag.group(1).split(",")[0] if tag else None
                if name == "-" or not decl:
                    continue
                if len(decl) == 1:  # embedded
                    fields.append((name or None, decl[0]))
                elif tag is not None:
                    fields.append((name or decl[0], decl[1]))
            out[m.group(1)] = fields
    return out


def _go_base(typ: str) -> tuple[str, str]:
    """(kind, type name): ``map`` with its value type, ``slice``, or ``struct`` (a pointer
    dropped; a package-qualified name keeps its last part)."""
    typ = typ.lstrip("*")
    if typ.startswith("map["):
        return "map", typ[typ.index("]") + 1 :].lstrip("*").rsplit(".", 1)[-1]
    if typ.startswith("[]"):
        return "slice", typ[2:].lstrip("*").rsplit(".", 1)[-1]
    return "struct", typ.rsplit(".", 1)[-1]


def _go_fields(types: GoTypes, name: str, depth: int = 0) -> dict[str, str]:
    out: dict[str, str] = {}
    for json_name, typ in types.get(name, ()) if depth < 16 else ():
        if json_name is None:
            out.update(_go_fields(types, _go_base(typ)[1], depth + 1))
        else:
            out[json_name] = typ
    return out


def go_accepts(types: GoTypes, root: str, path: Path_) -> bool:
    """Whether ``path`` names a field chain of the Go type ``root`` by json names. A map takes any
    key; a list is a leaf (its items are objects, not keys); a type the package does not define
    (a Kubernetes type, a scalar) ends the check: what is under it is not judged here."""
    name = root
    i = 0
    while i < len(path):
        if name not in types:
            return True
        fields = _go_fields(types, name)
        if path[i] not in fields:
            return False
        kind, name = _go_base(fields[path[i]])
        i += 1
        if kind == "map":
            i += 1  # the map's key
        elif kind == "slice":
            return i >= len(path)
    return True


@dataclass(frozen=True)
class Verdict:
    """One release against its chart: the leaf key paths set, and a message per unknown one."""

    release: str
    chart: str
    checked: tuple[Path_, ...]
    unknown: tuple[str, ...]
    exempt: tuple[Path_, ...] = ()


def check_values(
    release: str, chart: ChartKeys, values: Mapping[str, Any], exempt: Iterable[Path_] = ()
) -> Verdict:
    """Every leaf key path of ``values`` against ``chart``; ``exempt`` are the paths we set for
    ourselves (the release's marker, read back from Helm's records, never by the chart)."""
    skip = set(exempt)
    checked, unknown, skipped = [], [], []
    for path in leaf_paths(values):
        if path in skip:
            skipped.append(path)
            continue
        checked.append(path)
        if known(chart, path):
            continue
        near = closest(chart, path)
        hint = f"; the closest real key is {show_path(near)}" if near else ""
        unknown.append(
            f"release {release}: value key {show_path(path)} is not a key of chart "
            f"{chart.name} (in no values.yaml, template or values.schema.json){hint}"
        )
    return Verdict(release, chart.name, tuple(checked), tuple(unknown), tuple(skipped))
