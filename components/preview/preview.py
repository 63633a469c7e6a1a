"""The offline preview: run a stack's real `__main__.py` under Pulumi's mock runtime with
`stacks/Pulumi.<stack>.yaml` as its config, and write what `pulumi up` would create.

Writes, into the output directory (byte-identical on repeated runs; no timestamps, no absolute
paths, no secret values):
- `manifests.yaml`: every Kubernetes object, as multi-document YAML (see `components.preview.manifests`);
- `resources.json`: the whole graph `[{type, name, parent, dependsOn, inputs, options}]`, parent
  and dependencies as `type::name` references; `options` are those that decide deletion
  (`aliases` as `QUALIFIED_TYPE::NAME`, `retainOnDelete`, `protect`, `deletedWith`,
  `ignoreChanges`, and the resource `hooks`), so a graph can be checked for data safety;
- `placement.json` / `placement.md`: the placement check's report (or, while
  `components.check` is not there, only the pool each workload names).

Config, as the Pulumi CLI builds it: Pulumi.yaml's project-level `config:` defaults (`key: value`
or `key: {default: value}`), overridden by the stack file's `config:`. Bare keys belong to the
project's namespace. `{secure: ...}` values cannot be decrypted offline: the program sees the
string `[secret]` and the runtime treats the key as a secret.
"""

from __future__ import annotations

import gc
import json
import os
import re
import runpy
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..check import check, render_markdown
from .manifests import render_manifests

SECRET = "[secret]"
OUTPUT_FILES = ("manifests.yaml", "resources.json", "placement.json", "placement.md")
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class PreviewError(Exception):
    """Bad usage or a bad project/stack file: one clear message, exit 2, no traceback."""


# ---------------------------------------------------------------------------------------------
# Project and stack config


@dataclass
class Project:
    """A Pulumi project on disk: where it is, its name, where its stack files are."""

    dir: Path
    name: str
    stack_dir: Path
    main: Path
    defaults: dict[str, Any]
    secret_defaults: set[str] = field(default_factory=set)

    def stacks(self) -> list[str]:
        """The stacks that have a `Pulumi.<stack>.yaml` file, sorted."""
        if not self.stack_dir.is_dir():
            return []
        names = set()
        for path in self.stack_dir.iterdir():
            m = re.fullmatch(r"Pulumi\.(.+)\.ya?ml", path.name)
            if m and path.is_file():
                names.add(m.group(1))
        return sorted(names)

    def stack_file(self, stack: str) -> Path:
        for suffix in (".yaml", ".yml"):
            path = self.stack_dir / f"Pulumi.{stack}{suffix}"
            if path.is_file():
                return path
        return self.stack_dir / f"Pulumi.{stack}.yaml"


@dataclass
class StackConfig:
    """What the program sees: `namespace:key` -> value (structured values as plain data), and
    which keys are secrets."""

    stack: str
    file: Path
    values: dict[str, Any]
    secret_keys: set[str]
    notes: list[str] = field(default_factory=list)
    """What the CLI says on stderr about the config (ESC values left out offline)."""


def show_path(path: Path) -> str:
    """A path as messages show it: relative to the working directory when under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def find_project_dir(start: Path | None = None) -> Path:
    """The nearest directory from `start` (default: the working directory) up that holds a
    Pulumi.yaml."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "Pulumi.yaml").is_file():
            return candidate
    raise PreviewError(
        f"no Pulumi.yaml in {here} or any parent directory: run from inside the project, "
        "or give --project-dir"
    )


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that rejects a key given twice in one mapping (YAML keeps the last one)."""


class _FastUniqueKeyLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same with libyaml's parser; on an error the pure loader is run for its clearer message."""


_MERGE = "tag:yaml.org,2002:merge"


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE:  # `<<: *base`: its keys may be given again, to override
            continue
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, list | dict):
            continue  # unhashable: let the default constructor report it
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found the key {key!r} twice (first on line {seen[key].start_mark.line + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=True)


for _loader in (_UniqueKeyLoader, _FastUniqueKeyLoader):
    _loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


_STR, _MAP, _SEQ = (f"tag:yaml.org,2002:{t}" for t in ("str", "map", "seq"))


def load_yaml_file(path: Path, what: str) -> Any:
    """Parse a YAML file; a missing file or bad YAML is a PreviewError naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PreviewError(f"{show_path(path)}: {what} not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise PreviewError(f"{show_path(path)}: cannot read {what}: {err}") from None
    try:
        return yaml.load(text, Loader=_FastUniqueKeyLoader)
    except yaml.YAMLError:
        pass
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f"{show_path(path)}:{mark.line + 1}" if mark is not None else show_path(path)
        if mark is not None:
            where += f":{mark.column + 1}"
        problem = getattr(err, "problem", None) or str(err)
        context = getattr(err, "context", None)
        detail = f"{context}: {problem}" if context else problem
        raise PreviewError(f"{where}: invalid YAML in {what}: {detail}") from None


def _full_key(key: Any, namespace: str, path: Path, line_of: str) -> str:
    if not isinstance(key, str) or not key:
        raise PreviewError(f"{show_path(path)}: {line_of}: config key {key!r} is not a string")
    return key if ":" in key else f"{namespace}:{key}"


_SCHEMA_KEYS = {"type", "default", "description", "secret", "items"}
STACK_FILE_KEYS = ("config", "environment", "secretsprovider", "encryptedkey", "encryptionsalt")
"""A stack file's top-level keys: the Pulumi SDK's `StackSettings` (pulumi 3.272.0,
sdk/python/lib/pulumi/automation/_stack_settings.py `_deserialize`) and `environment`, the ESC
environments it imports."""


def load_project(project_dir: Path) -> Project:
    """Read Pulumi.yaml: name, stackConfigDir, main, project-level config defaults."""
    path = project_dir / "Pulumi.yaml"
    doc = load_yaml_file(path, "the project file")
    if not isinstance(doc, Mapping) or not isinstance(doc.get("name"), str):
        raise PreviewError(f"{show_path(path)}: not a Pulumi project file (needs `name:`)")
    name = doc["name"]
    stack_dir = project_dir / str(doc.get("stackConfigDir") or ".")
    main = project_dir / str(doc.get("main") or ".")
    if main.is_dir():
        main = main / "__main__.py"
    defaults: dict[str, Any] = {}
    secret_defaults: set[str] = set()
    config = doc.get("config") or {}
    if not isinstance(config, Mapping):
        raise PreviewError(f"{show_path(path)}: `config:` must be a mapping of keys to values")
    for key, value in config.items():
        full = _full_key(key, name, path, "config")
        if isinstance(value, Mapping) and value and set(value) <= _SCHEMA_KEYS:
            if value.get("secret") is True:
                secret_defaults.add(full)
            if "default" not in value:
                continue
            value = value["default"]
        defaults[full] = value
    return Project(project_dir, name, stack_dir, main, defaults, secret_defaults)


def _hide_secure(value: Any) -> tuple[Any, bool]:
    """Replace every `{secure: ...}` with `[secret]`; say whether there was one."""
    if isinstance(value, Mapping):
        if set(value) == {"secure"}:
            return SECRET, True
        found = False
        out = {}
        for k, v in value.items():
            out[k], hit = _hide_secure(v)
            found = found or hit
        return out, found
    if isinstance(value, list):
        items = [_hide_secure(v) for v in value]
        return [v for v, _ in items], any(hit for _, hit in items)
    return value, False


def load_stack_config(project: Project, stack: str, env_files: Sequence[Path] = ()) -> StackConfig:
    """The config a stack's program sees: project defaults under the `pulumiConfig` of the ESC
    environments the stack imports (or of `env_files`), under the stack file's values."""
    if not _STACK_NAME.match(stack):
        raise PreviewError(f"invalid stack name {stack!r}: use letters, digits, `-`, `_`, `.`")
    stacks = project.stacks()
    if stack not in stacks:
        where = show_path(project.stack_dir)
        if stacks:
            raise PreviewError(
                f"unknown stack {stack!r} (no {where}/Pulumi.{stack}.yaml); "
                f"the stacks are: {', '.join(stacks)}"
            )
        raise PreviewError(
            f"unknown stack {stack!r}: no stack files (Pulumi.<stack>.yaml) in {where}"
        )
    path = project.stack_file(stack)
    doc = load_yaml_file(path, "the stack file")
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise PreviewError(
            f"{show_path(path)}: a stack file is a mapping with a `config:` key, "
            f"got {type(doc).__name__}"
        )
    stray = [str(k) for k in doc if k not in STACK_FILE_KEYS]
    if stray and "config" not in doc:
        raise PreviewError(
            f"{show_path(path)}: no `config:` key: a stack file's settings go under `config:`, "
            f"indented below it (found at the top level: {', '.join(stray[:3])}"
            f"{', ...' if len(stray) > 3 else ''})"
        )
    config = doc.get("config") or {}
    if not isinstance(config, Mapping):
        raise PreviewError(
            f"{show_path(path)}: `config:` must be a mapping of `namespace:key` to values, "
            f"got {type(config).__name__}"
        )
    values: dict[str, Any] = dict(project.defaults)
    secret_keys = set(project.secret_defaults)
    own: dict[str, Any] = {}
    for key, value in config.items():
        full = _full_key(key, project.name, path, "config")
        own[full], secret = _hide_secure(value)
        if secret:
            secret_keys.add(full)
    notes: list[str] = []
    if "environment" in doc or env_files:
        own = _with_environment(project, stack, path, own, env_files, secret_keys, notes)
    values.update(own)
    return StackConfig(stack, path, dict(sorted(values.items())), secret_keys, notes)


def _with_environment(
    project: Project,
    stack: str,
    path: Path,
    own: dict[str, Any],
    env_files: Sequence[Path],
    secret_keys: set[str],
    notes: list[str],
) -> dict[str, Any]:
    """The stack's own config over its ESC environments' `pulumiConfig` (see `esc`)."""
    from . import esc

    esc_dir = project.stack_dir / "esc"
    try:
        if env_files:
            envs = [esc.load_env_file(Path(f), esc_dir, show_path) for f in env_files]
            names: list[str] = []
        else:
            env = esc.stack_environment(path, esc_dir, show_path)
            envs = [env] if env is not None else []
            names = [i.name for e in envs for i in e.imports]
        from_env = esc.pulumi_config(envs, project.name)
    except FileNotFoundError as missing:
        name = missing.args[0]
        raise PreviewError(
            f"{show_path(path)} imports the ESC environment {name}, which the offline preview "
            f"cannot open: keep its definition in {show_path(esc_dir)}/{name}.yaml (the file "
            f"`pulumi env init {name} --file` takes), or pass its values: pulumi env open {name} "
            f"--format detailed > env.json, then gpu-inference preview {stack} --env-file env.json"
        ) from None
    except esc.EscError as err:
        raise PreviewError(str(err)) from None
    merged = dict(own)
    left_out = []
    for key, value in from_env.items():
        value = esc.merge_layers([value, own.get(key, esc.MISSING)])
        hidden = esc.find(value, esc.Unresolved)
        if hidden is not None:
            if key.split(":", 1)[0] == project.name:
                raise PreviewError(
                    esc.unresolved_message(key, hidden[0], hidden[1].why, stack, names)
                )
            left_out.append(key)
            merged.pop(key, None)
            continue
        if esc.find(value, esc.Secret) is not None:
            value = esc.redact(value, SECRET)
            secret_keys.add(key)
        merged[key] = value
    if left_out:
        notes.append(
            f"note: ESC values not known offline, left out (the program does not read them): "
            f"{', '.join(sorted(left_out))}"
        )
    return merged


# ---------------------------------------------------------------------------------------------
# Running the program


@contextmanager
def _in_project(project_dir: Path) -> Iterator[None]:
    old_cwd = Path.cwd()
    old_path = list(sys.path)
    sys.path.insert(0, str(project_dir))
    os.chdir(project_dir)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection from the stack config's parse to the files written. The run
    leaves its registrations' cycles behind (Pulumi's Outputs, tasks and the closures its
    `contains_unknowns` makes per call: some 440,000 objects at 1000 models), and the first
    collections after it scanned them all again: a fifth of a 1000-model preview (the config's
    parse makes no cycles, only young collections of what it keeps). The `gpu-inference` process
    ends without collecting them (`cli.run`); in a longer process they are collected after, as
    usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_stack(
    project: Project, config: StackConfig, on_register: Callable[[str], None] | None = None
) -> Any:
    """Run the project's program under mocks with the stack's config; return the mockrun Graph
    (`on_register` gets each registration's type, as it happens).

    Raises whatever the program raises (see `user_error` to tell bad input from bugs)."""
    from .mockrun import run_program

    if not project.main.is_file():
        raise PreviewError(f"{show_path(project.main)}: the project's program is missing")
    main = str(project.main)

    def program() -> None:
        runpy.run_path(main, run_name="__main__")

    with _in_project(project.dir):
        return run_program(
            program,
            config={
                k: v if isinstance(v, str) else json.dumps(v) for k, v in config.values.items()
            },
            project=project.name,
            stack=config.stack,
            secret_keys=config.secret_keys,
            on_register=on_register,
        )


# ---------------------------------------------------------------------------------------------
# The graph as written


def ref(urn: str) -> str:
    """`type::name` for a URN (`urn:pulumi:stack::project::parent$type::name`)."""
    parts = urn.split("::")
    if len(parts) < 4:
        return urn
    return parts[2].split("$")[-1] + "::" + "::".join(parts[3:])


def qualified_types(resources: Sequence[Any]) -> dict[str, str]:
    """Each registration's URN -> its qualified type as the engine makes it: the types of its
    ancestors and its own, joined by `$` (the mock monitor's URNs keep the parent's type only)."""
    by_urn = {r.urn: r for r in resources}
    out: dict[str, str] = {}

    def chain(r: Any) -> str:
        if r.urn not in out:
            parent = by_urn.get(r.parent) if r.parent else None
            out[r.urn] = r.type if parent is None else f"{chain(parent)}${r.type}"
        return out[r.urn]

    for r in resources:
        chain(r)
    return out


def alias_ref(alias: Mapping[str, Any], r: Any, chains: Mapping[str, str]) -> str:
    """An alias as `resources.json` writes it: the URN it names without `urn:pulumi:STACK::
    PROJECT::`, i.e. `QUALIFIED_TYPE::NAME` (a parent given by URN read the same way; the root
    stack's type is no part of a qualified type, as the engine makes URNs)."""
    if "urn" in alias:
        return _unrooted(str(alias["urn"]).split("::", 2)[-1])
    typ = alias.get("type") or r.type
    name = alias.get("name") or r.name
    if alias.get("noParent"):
        return f"{typ}::{name}"
    parent = alias.get("parentUrn") or r.parent
    if parent in chains:
        head = chains[parent]
    elif parent:
        head = str(parent).split("::")[2] if str(parent).count("::") >= 3 else ""
    else:
        head = ""
    return _unrooted(f"{head}${typ}::{name}" if head else f"{typ}::{name}")


ROOT_STACK = "pulumi:pulumi:Stack"


def _unrooted(qualified: str) -> str:
    return qualified.removeprefix(ROOT_STACK + "$")


def resource_options(r: Any, chains: Mapping[str, str]) -> dict[str, Any]:
    """The options that decide what an `up` or `destroy` deletes: aliases (a move that keeps the
    object), retainOnDelete, protect, deletedWith, ignoreChanges, and the hooks bound to it."""
    return {
        "aliases": sorted({alias_ref(a, r, chains) for a in r.aliases}),
        "deletedWith": ref(r.deleted_with) if r.deleted_with else None,
        "hooks": dict(r.hooks),
        "ignoreChanges": list(r.ignore_changes),
        "protect": r.protect,
        "retainOnDelete": r.retain_on_delete,
    }


def graph_entries(resources: Sequence[Any]) -> list[dict[str, Any]]:
    """The mockrun registrations as `resources.json` entries, in a stable tree order: each
    resource after its parent, siblings sorted by type and name."""
    known = {r.urn for r in resources}
    chains = qualified_types(resources)
    entries = [
        {
            "type": r.type,
            "name": r.name,
            "parent": ref(r.parent) if r.parent and r.parent in known else None,
            "dependsOn": sorted({ref(d) for d in r.depends_on}),
            "inputs": r.inputs,
            "options": resource_options(r, chains),
        }
        for r in resources
    ]
    return tree_order(entries)


def tree_order(entries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Entries depth-first from the roots, siblings by (type, name); parents given as refs."""
    refs = {f"{e['type']}::{e['name']}" for e in entries}
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for e in entries:
        parent = e.get("parent")
        children.setdefault(parent if parent in refs else None, []).append(e)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()

    def walk(parent: str | None) -> None:
        for e in sorted(children.get(parent, []), key=lambda e: (e["type"], e["name"])):
            key = f"{e['type']}::{e['name']}"
            out.append(dict(e))
            if key not in seen:
                seen.add(key)
                walk(key)

    walk(None)
    return out


def to_json_text(value: Any) -> str:
    """Sorted, indented JSON and a newline: the same bytes for the same graph."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_tree(entries: Sequence[Mapping[str, Any]], root_label: str) -> str:
    """A `pulumi preview`-like tree: `+` and the type, indented under the parent, then the name."""
    rows: list[tuple[str, str]] = [("pulumi:pulumi:Stack", root_label)]
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for e in entries:
        children.setdefault(e.get("parent"), []).append(e)

    def walk(parent: str | None, prefix: str) -> None:
        kids = children.get(parent, [])
        for i, e in enumerate(kids):
            last = i == len(kids) - 1
            rows.append((prefix + ("└─ " if last else "├─ ") + e["type"], e["name"]))
            walk(f"{e['type']}::{e['name']}", prefix + ("   " if last else "│  "))

    walk(None, "")
    width = max(len(t) for t, _ in rows) + 2
    lines = ["     Type".ljust(width + 5) + "Name"]
    lines += [f" +   {t.ljust(width)}{n}".rstrip() for t, n in rows]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Placement


@dataclass
class Finding:
    """A placement finding as the CLI prints it."""

    code: str
    severity: str
    resource: str
    message: str
    fix: str

    def line(self) -> str:
        fix = f" Fix: {self.fix}" if self.fix else ""
        return f"{self.severity} {self.code} {self.resource}: {self.message.rstrip('.')}.{fix}"


@dataclass
class PlacementResult:
    """placement.json / placement.md contents and the findings."""

    json: dict[str, Any]
    markdown: str
    findings: list[Finding]

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")


def run_placement(
    graph: Sequence[Mapping[str, Any]],
    *,
    extended_resource_toleration: bool | None = None,
    not_judged: str = "info",
) -> PlacementResult:
    """Run the placement check on a `resources.json`-shaped graph; `not_judged`: `check`'s."""
    report = check(
        [dict(e) for e in graph],
        extended_resource_toleration=extended_resource_toleration,
        not_judged=not_judged,
    )
    findings = [
        Finding(
            code=str(f.code),
            severity=str(getattr(f.severity, "value", f.severity)).lower(),
            resource=str(f.resource),
            message=str(f.message),
            fix=str(f.fix or ""),
        )
        for f in report.findings
    ]
    markdown = render_markdown(report)
    return PlacementResult(
        json=report.to_json(),  # plain data already: new dicts and lists, str keys
        markdown=markdown if markdown.endswith("\n") else markdown + "\n",
        findings=findings,
    )


@dataclass
class PreviewResult:
    stack: str
    project: Project
    entries: list[dict[str, Any]]
    placement: PlacementResult
    out_dir: Path
    files: list[Path]

    @property
    def tree(self) -> str:
        return render_tree(self.entries, f"{self.project.name}-{self.stack}")


def write_outputs(
    out_dir: Path, entries: Sequence[Mapping[str, Any]], placement: PlacementResult, title: str
) -> list[Path]:
    """Write the four files; return their paths."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise PreviewError(
            f"{show_path(out_dir)}: cannot create the output directory: {err}"
        ) from None
    contents = {
        "manifests.yaml": render_manifests(entries, title=title),
        "resources.json": to_json_text(list(entries)),
        "placement.json": to_json_text(placement.json),
        "placement.md": placement.markdown,
    }
    paths = []
    for name in OUTPUT_FILES:
        path = out_dir / name
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(contents[name])
        except OSError as err:
            raise PreviewError(f"{show_path(path)}: cannot write: {err}") from None
        paths.append(path)
    return paths


def preview(
    stack: str,
    *,
    out_dir: Path | None = None,
    project_dir: Path | None = None,
    env_files: Sequence[Path] = (),
) -> PreviewResult:
    """Load the project and stack config, run the program under mocks, check placement, write
    the files. Raises PreviewError for bad usage or files, and whatever the program raises."""
    pdir = project_dir.resolve() if project_dir else find_project_dir()
    if project_dir and not (pdir / "Pulumi.yaml").is_file():
        raise PreviewError(f"{show_path(pdir)}: no Pulumi.yaml in the project directory")
    project = load_project(pdir)
    with collector_paused():
        config = load_stack_config(project, stack, env_files)
        graph = run_stack(project, config)
        entries = graph_entries(graph.resources)
        placement = run_placement(entries)
        out = out_dir if out_dir is not None else project.dir / "build" / stack
        files = write_outputs(
            out, entries, placement, f"gpu-inference preview {stack}: project {project.name}"
        )
    return PreviewResult(stack, project, entries, placement, out, files)


__all__ = [
    "OUTPUT_FILES",
    "Finding",
    "PlacementResult",
    "PreviewError",
    "PreviewResult",
    "Project",
    "StackConfig",
    "collector_paused",
    "find_project_dir",
    "graph_entries",
    "load_project",
    "load_stack_config",
    "preview",
    "ref",
    "render_tree",
    "run_placement",
    "run_stack",
    "to_json_text",
    "tree_order",
    "write_outputs",
]
