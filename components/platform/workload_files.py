"""`gpu-inference:workloadFiles`: workloads kept in YAML files the stack config names.

A stack of a thousand InferenceServices cannot hold them in its config: the Pulumi CLI hands the
whole config to the program in one environment variable, and Linux caps one at 128 KiB
(`MAX_ARG_STRLEN`), so `pulumi up` fails with `argument list too long` before the program runs.
The stack names files instead; the program reads them here, at its edge, and merges their lists
into the config mapping before the pure `load_spec` sees it:

    gpu-inference:workloadFiles:
      - stacks/models-prod.yaml          # relative to the project directory (Pulumi.yaml's)

    # stacks/models-prod.yaml
    inferenceServices: [...]             # the items of gpu-inference:inferenceServices
    llmInferenceServices: [...]          # the items of gpu-inference:llmInferenceServices
    seldon: {serverConfigs: [...], servers: [...], models: [...]}

Order: the stack config's own items first, then each file's, files in the order listed. An error
in a file's item names the file, its line and the key path inside the file; an error about a
file itself (missing, unreadable, not YAML, wrong shape) names `gpu-inference:workloadFiles[i]`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..model.errors import InputError, did_you_mean, show
from ..model.key_paths import deepest_line, path_steps

NAMESPACE = "gpu-inference"
KEY = "workloadFiles"
# The lists a workload file may hold (key paths in the stack config and in the file alike).
LISTS = (
    "inferenceServices",
    "llmInferenceServices",
    "seldon.serverConfigs",
    "seldon.servers",
    "seldon.models",
)
SHAPE = (
    "a YAML mapping with inferenceServices: [...], llmInferenceServices: [...] and/or "
    "seldon: {serverConfigs: [...], servers: [...], models: [...]}"
)


class WorkloadFileError(InputError):
    """An InputError about an item of a workload file: `path` is `<file>:<line>: <key path in
    the file>`; `file` and `line` locate it, `key` is the stack config key that named the file."""

    def __init__(
        self, problem: str, allowed: str, file: str, line: int | None, inner: str, key: str
    ) -> None:
        self.file, self.line, self.inner, self.key = file, line, inner, key
        where = f"{file}:{line}" if line else file
        super().__init__(problem, allowed, f"{where}: {inner}" if inner else where)


@dataclass(frozen=True)
class _Segment:
    section: str  # one of LISTS
    start: int  # index of its first item in the merged list
    count: int
    file: str  # as the stack config gives it
    path: Path  # where it was read
    key: str  # gpu-inference:workloadFiles[i]


@dataclass
class WorkloadSources:
    """Where each item of the merged workload lists came from: locates errors back into files."""

    namespace: str = NAMESPACE
    segments: list[_Segment] = field(default_factory=list)

    def origin(self, section: str, index: int) -> tuple[_Segment, int] | None:
        """The file segment holding merged item `index` of `section`, and its index in the file
        (None: the stack config's own item)."""
        for s in self.segments:
            if s.section == section and s.start <= index < s.start + s.count:
                return s, index - s.start
        return None

    def locate(self, err: InputError) -> InputError:
        """`err` (its key path into the merged config) pointing into the file the item came from;
        unchanged when the item is the stack config's own or nothing came from a file."""
        if not self.segments or isinstance(err, WorkloadFileError):
            return err
        problem = _ITEM_REF.sub(self._ref, err.problem)
        m = re.match(rf"^{re.escape(self.namespace)}:({_LIST_RE})\[(\d+)\](.*)$", err.path)
        found = self.origin(m.group(1), int(m.group(2))) if m else None
        if m is None or found is None:
            return err if problem == err.problem else InputError(problem, err.allowed, err.path)
        seg, i = found
        inner = f"{seg.section}[{i}]{m.group(3)}"
        return WorkloadFileError(
            problem, err.allowed, seg.file, _line(seg.path, inner), inner, seg.key
        )

    def _ref(self, m: re.Match[str]) -> str:
        """A list item named in an error's text (`inferenceServices[3]`, `models[3]`) as where
        it is written."""
        name, index = m.group(1), int(m.group(2))
        section = name if name in LISTS else f"seldon.{name}"
        found = self.origin(section, index)
        if found is None:
            return f"{self.namespace}:{section}[{index}]"
        seg, i = found
        inner = f"{section}[{i}]"
        line = _line(seg.path, inner)
        return f"{seg.file}:{line}: {inner}" if line else f"{seg.file}: {inner}"


_LIST_RE = "|".join(re.escape(s) for s in LISTS)
# An item named in an error's text: `inferenceServices[3]`, `llmInferenceServices[3]`, or
# `models[3]` (Seldon's checks name the section without `seldon.`).
_ITEM_REF = re.compile(
    r"(?<![\w.:-])(?:[\w-]+:)?(?:seldon\.)?"
    r"(inferenceServices|llmInferenceServices|serverConfigs|servers|models)\[(\d+)\]"
)


def project_dir(start: Path | None = None) -> Path:
    """The directory holding Pulumi.yaml, from `start` (default: the working directory, which
    is the project's when `pulumi` or `gpu-inference preview` runs the program) up; `start`
    itself when there is none."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "Pulumi.yaml").is_file():
            return candidate
    return here


def expand_workload_files(
    config: Mapping[str, Any], base_dir: Path, *, namespace: str = NAMESPACE
) -> tuple[dict[str, Any], WorkloadSources]:
    """`config` (full keys -> values, as `load_spec` takes it) with `<namespace>:workloadFiles`
    replaced by the files' items, appended to the stack config's own lists; and where each
    item came from. Relative file paths are under `base_dir` (the project directory)."""
    full = f"{namespace}:{KEY}"
    sources = WorkloadSources(namespace)
    if full not in config:
        return dict(config), sources
    out = {k: v for k, v in config.items() if k != full}
    files = _parsed(config[full])
    if not isinstance(files, list) or not files:
        raise InputError(
            f"expected a list of file paths, got {_shown(files)}",
            "a non-empty list of YAML file paths relative to the project directory",
            full,
        )
    merged = {s: _own_list(out, namespace, s) for s in LISTS}
    for i, name in enumerate(files):
        key = f"{full}[{i}]"
        if not isinstance(name, str) or not name.strip():
            raise InputError(
                f"expected a file path, got {_shown(name)}",
                "a YAML file path relative to the project directory",
                key,
            )
        path = base_dir / name
        doc = _read(path, name, key)
        for section in LISTS:
            items = _file_list(doc, section, name, path, key)
            if items:
                sources.segments.append(
                    _Segment(section, len(merged[section]), len(items), name, path, key)
                )
                merged[section].extend(items)
    for section in LISTS:
        if "." not in section and merged[section]:
            out[f"{namespace}:{section}"] = merged[section]
    seldon_lists = {s.split(".", 1)[1]: merged[s] for s in LISTS if s.startswith("seldon.")}
    if any(seldon_lists.values()):
        own = _parsed(out.get(f"{namespace}:seldon"))
        seldon = dict(own) if isinstance(own, Mapping) else {}
        seldon.update({k: v for k, v in seldon_lists.items() if v})
        out[f"{namespace}:seldon"] = seldon
    return out, sources


def _parsed(value: Any) -> Any:
    """A config value given as JSON text, parsed (as `load_spec` does)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        with contextlib.suppress(json.JSONDecodeError):
            return json.loads(value)
    return value


def _own_list(config: Mapping[str, Any], namespace: str, section: str) -> list[Any]:
    """A copy of the stack config's own list at `section`; empty when it has none. A value of
    the wrong shape stays in the config for `load_spec` to refuse."""
    top, _, sub = section.partition(".")
    value = _parsed(config.get(f"{namespace}:{top}"))
    if sub:
        value = value.get(sub) if isinstance(value, Mapping) else None
    return list(value) if isinstance(value, list) else []


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's safe loader refusing a key given twice in one mapping (YAML keeps the last)."""


def _mapping(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, list | dict):
            continue  # unhashable: the default constructor reports it
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the key {key!r} is given twice (first on line {seen[key]})",
                key_node.start_mark,
            )
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def _read(path: Path, name: str, key: str) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            f"file {show(name)} not found (looked for {path})",
            "a YAML file path relative to the project directory (where Pulumi.yaml is)",
            key,
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise InputError(f"cannot read file {show(name)}: {reason}", "", key) from None
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f"{name}:{mark.line + 1}:{mark.column + 1}" if mark is not None else name
        problem = getattr(err, "problem", None) or str(err)
        raise InputError(f"{at}: not valid YAML: {problem}", SHAPE, key) from None


def _file_list(doc: Any, section: str, name: str, path: Path, key: str) -> list[Any]:
    """The list at `section` of a workload file (empty when absent); a wrong shape is refused."""
    if not isinstance(doc, Mapping):
        got = "an empty file" if doc is None else _kind(doc)
        raise InputError(f"{name} holds {got}, not a mapping", SHAPE, key)
    top, _, sub = section.partition(".")
    tops = sorted({s.split(".")[0] for s in LISTS})
    for k in doc:
        if k not in tops:
            raise InputError(
                f"{_at(name, path, str(k))}: unknown key {_unknown(k, tops)}", SHAPE, key
            )
    value = doc.get(top)
    if sub:
        if value is None:
            return []
        if not isinstance(value, Mapping):
            raise InputError(
                f"{_at(name, path, top)}: {top} holds {_kind(value)}, not a mapping", SHAPE, key
            )
        subs = [s.split(".", 1)[1] for s in LISTS if s.startswith(f"{top}.")]
        for k in value:
            if k not in subs:
                raise InputError(
                    f"{_at(name, path, f'{top}.{k}')}: unknown key {_unknown(k, subs)}",
                    f"under {top}: "
                    + ", ".join(subs)
                    + " (the rest of seldon stays in the stack config)",
                    key,
                )
        value = value.get(sub)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(
            f"{_at(name, path, section)}: {section} holds {_kind(value)}, not a list", SHAPE, key
        )
    return value


def _at(name: str, path: Path, inner: str) -> str:
    line = _line(path, inner)
    return f"{name}:{line}" if line else name


def _unknown(k: Any, allowed: list[str]) -> str:
    return show(k) + did_you_mean(k, allowed, cutoff=0.75)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"the {type(value).__name__} {_shown(value)}"


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else show(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _line(path: Path, inner: str) -> int | None:
    """The line in a YAML file of the deepest part of key path `inner` (`inferenceServices[5].
    predictor.gpus`) it has; None when the file cannot be read again."""
    try:
        node = yaml.compose(
            path.read_text(encoding="utf-8"),
            Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader),
        )
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    m = re.match(r"^[^.\[\]]+", inner)
    if node is None or m is None:
        return None
    return deepest_line(node, [m.group(0), *path_steps(inner, m.end())])
