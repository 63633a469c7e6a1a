"""The Pulumi ESC environments a stack imports, resolved offline for the preview.

A stack file's `environment:` (a list of environment names, or an inline definition with
`imports:` and `values:`) is an anonymous environment; the Pulumi CLI opens it in Pulumi Cloud and
merges its `values.pulumiConfig` under the stack's own config: a key the stack file also sets is
merged as a JSON merge patch with the stack's values winning, and the project's defaults fill what
is still missing (pulumi `pkg/workspace/config.go` mergeConfig, `sdk/go/common/resource/config/
object.go` Merge; a bare key belongs to the project's namespace, `toConfigMap`).

Offline, an environment's values come from one of:
- its definition, the YAML `pulumi env init NAME --file FILE` takes, kept as
  `<stack dir>/esc/NAME.yaml`, evaluated here as far as that can be done without Pulumi Cloud:
  literals, `${path}` references and interpolations, `imports:` (later ones and the environment's
  own values win, maps merged), `fn::secret` with a plaintext, `fn::join`, `fn::toJSON`,
  `fn::toString`, `fn::toBase64`, `fn::fromBase64`. What only ESC computes (`fn::open::*` providers
  such as the OIDC logins, encrypted secrets, other functions) is *unresolved*;
- or its values as Pulumi Cloud opened them, `pulumi env open NAME --format detailed > FILE`
  (`--env-file FILE`): that format keeps which values are secret and which were unknown.

A `gpu-inference:` key the program reads that is still unresolved after the stack's own values
are merged stops the preview with one message naming the key, the environment and line it comes
from, and how to pass it; other namespaces' unresolved keys (provider credentials) are left out and
listed. Secret values are `[secret]`, like `secure:` stack values.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MISSING: Any = object()
_REF = re.compile(r"\$\$\{|\$\{([^}]*)\}")
_STEP = re.compile(
    r"""\.?([A-Za-z_][\w-]*)|\[\s*(\d+)\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*'([^']*)'\s*\]"""
)
_EVALUATED = (
    "fn::secret",
    "fn::join",
    "fn::toJSON",
    "fn::toString",
    "fn::toBase64",
    "fn::fromBase64",
)


class EscError(Exception):
    """A definition or values file the preview cannot read: one message, exit 2."""


@dataclass(frozen=True)
class Unresolved:
    """A value only Pulumi Cloud can compute; `why` names what and where."""

    why: str


@dataclass(frozen=True)
class Secret:
    """A secret value (`fn::secret`, or marked secret when the environment was opened)."""

    value: Any


@dataclass
class Environment:
    """One environment: its own values (a YAML mapping node) over its imports'."""

    name: str
    file: Path
    values: yaml.Node | None
    imports: list[Environment] = field(default_factory=list)
    opened: Any = MISSING
    """The values as `pulumi env open --format detailed` gave them, instead of a definition."""
    _memo: dict[int, Any] = field(default_factory=dict)
    _busy: set[int] = field(default_factory=set)

    def where(self, node: yaml.Node) -> str:
        return f"{self.file}:{node.start_mark.line + 1}"

    def get(self, path: tuple[Any, ...]) -> Any:
        """The value at `path` of the environment's values (MISSING when there is none)."""
        layers = [imp.get(path) for imp in self.imports]
        layers.append(_index(self.opened, path) if self.opened is not MISSING else self._own(path))
        return merge_layers(layers)

    def _own(self, path: tuple[Any, ...]) -> Any:
        node = self.values
        for i, step in enumerate(path):
            if node is None:
                return MISSING
            if _is_expression(node):
                return _index(self._expression(node), path[i:])
            node = _child(node, step)
        if node is None:
            return MISSING
        if _is_expression(node):
            return self._expression(node)
        if isinstance(node, yaml.MappingNode):
            return {str(k.value): self._own((*path, str(k.value))) for k, _ in node.value}
        if isinstance(node, yaml.SequenceNode):
            return [self._own((*path, i)) for i in range(len(node.value))]
        return yaml.SafeLoader(b"").construct_object(node)

    def _expression(self, node: yaml.Node) -> Any:
        key = id(node)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return Unresolved(f"a reference cycle at {self.where(node)}")
        self._busy.add(key)
        try:
            value = self._evaluate(node)
        finally:
            self._busy.discard(key)
        self._memo[key] = value
        return value

    def _evaluate(self, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return self._interpolate(str(node.value), node)
        assert isinstance(node, yaml.MappingNode)
        ((name_node, arg),) = node.value
        name = str(name_node.value)
        if name.startswith("fn::open"):
            return Unresolved(f"{name} at {self.where(node)}, which only Pulumi Cloud opens")
        if name not in _EVALUATED:
            return Unresolved(f"{name} at {self.where(node)}, not evaluated offline")
        if name == "fn::secret":
            if isinstance(arg, yaml.MappingNode) and _child(arg, "ciphertext") is not None:
                return Unresolved(f"an encrypted fn::secret at {self.where(node)}")
            return Secret(self._value(arg))
        value = self._value(arg)
        return _function(name, value, self.where(node))

    def _value(self, node: yaml.Node) -> Any:
        if _is_expression(node):
            return self._expression(node)
        if isinstance(node, yaml.MappingNode):
            return {str(k.value): self._value(v) for k, v in node.value}
        if isinstance(node, yaml.SequenceNode):
            return [self._value(v) for v in node.value]
        return yaml.SafeLoader(b"").construct_object(node)

    def _interpolate(self, text: str, node: yaml.Node) -> Any:
        parts: list[Any] = []
        last = 0
        for m in _REF.finditer(text):
            parts.append(text[last : m.start()])
            last = m.end()
            if m.group(0) == "$${":
                parts.append("${")
                continue
            path = parse_path(m.group(1), self.where(node))
            value = self.get(path) if path[0] != "context" else MISSING
            if value is MISSING:
                value = Unresolved(f"${{{m.group(1)}}} at {self.where(node)}, which has no value")
            parts.append(value)
        parts.append(text[last:])
        parts = [p for p in parts if p != ""]
        if len(parts) == 1:
            return parts[0]
        return _concat(parts)


def _function(name: str, value: Any, where: str) -> Any:
    hidden = find(value, Unresolved)
    if hidden is not None:
        return hidden[1]
    secret = find(value, Secret) is not None
    plain = reveal(value)
    try:
        if name == "fn::join":
            separator, items = plain
            out: Any = str(separator).join(_text(i) for i in items)
        elif name == "fn::toJSON":
            out = json.dumps(plain, separators=(",", ":"), sort_keys=True)
        elif name == "fn::toString":
            out = _text(plain)
        elif name == "fn::toBase64":
            out = base64.b64encode(str(plain).encode()).decode()
        else:
            out = base64.b64decode(str(plain)).decode()
    except (TypeError, ValueError) as err:
        raise EscError(f"{where}: {name}: {err}") from None
    return Secret(out) if secret else out


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return "" if value is None else str(value)


def _concat(parts: Sequence[Any]) -> Any:
    for p in parts:
        if isinstance(p, Unresolved):
            return p
    secret = any(isinstance(p, Secret) for p in parts)
    text = "".join(_text(reveal(p)) for p in parts)
    return Secret(text) if secret else text


def parse_path(text: str, where: str) -> tuple[Any, ...]:
    """`a.b[0]["c:d"]` as its steps."""
    steps: list[Any] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None or m.end() == pos:
            raise EscError(f"{where}: cannot read the reference ${{{text}}}")
        name, index, quoted, single = m.groups()
        steps.append(int(index) if index is not None else (name or quoted or single))
        pos = m.end()
    if not steps:
        raise EscError(f"{where}: an empty reference ${{}}")
    return tuple(steps)


def _is_expression(node: yaml.Node) -> bool:
    if isinstance(node, yaml.ScalarNode):
        return node.tag == "tag:yaml.org,2002:str" and "${" in str(node.value)
    if isinstance(node, yaml.MappingNode) and len(node.value) == 1:
        return str(node.value[0][0].value).startswith("fn::")
    return False


def _child(node: yaml.Node, step: Any) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if str(k.value) == str(step):
                return v
    if (
        isinstance(node, yaml.SequenceNode)
        and isinstance(step, int)
        and 0 <= step < len(node.value)
    ):
        return node.value[step]
    return None


def _index(value: Any, path: Sequence[Any]) -> Any:
    for step in path:
        if isinstance(value, Unresolved):
            return value
        if isinstance(value, Secret):
            inner = _index(value.value, [step])
            return inner if inner is MISSING or isinstance(inner, Unresolved) else Secret(inner)
        if (isinstance(value, Mapping) and step in value) or (
            isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value)
        ):
            value = value[step]
        else:
            return MISSING
    return value


def merge_layers(layers: Sequence[Any]) -> Any:
    """Later layers over earlier ones: maps merged key by key, anything else replaced."""
    out: Any = MISSING
    for layer in layers:
        if layer is MISSING:
            continue
        if isinstance(out, dict) and isinstance(layer, dict):
            merged = dict(out)
            for k, v in layer.items():
                merged[k] = merge_layers([merged.get(k, MISSING), v])
            out = merged
        else:
            out = layer
    return out


def find(value: Any, kind: type) -> tuple[str, Any] | None:
    """The first `kind` (Unresolved or Secret) inside `value`, with its path (`a.b[0]`)."""
    if isinstance(value, kind):
        return "", value
    if isinstance(value, Secret):
        return find(value.value, kind)
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        items = [(f".{k}", v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    for step, v in items:
        hit = find(v, kind)
        if hit is not None:
            return step + hit[0], hit[1]
    return None


def reveal(value: Any) -> Any:
    """`value` without its Secret wrappers."""
    if isinstance(value, Secret):
        return reveal(value.value)
    if isinstance(value, dict):
        return {k: reveal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [reveal(v) for v in value]
    return value


def redact(value: Any, secret: str) -> Any:
    """`value` with every Secret replaced by `secret`."""
    if isinstance(value, Secret):
        return secret
    if isinstance(value, dict):
        return {k: redact(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, secret) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# Reading definitions and opened values


def _compose(path: Path, show: Callable[[Path], str]) -> yaml.Node | None:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise EscError(f"{show(path)}: cannot read: {err}") from None
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        raise EscError(f"{show(path)}: invalid YAML: {err}") from None


def _opened(value: Any, where: str) -> Any:
    """`pulumi env open --format detailed` values (`{value, secret, unknown, trace}` nodes)."""
    if not isinstance(value, dict) or ("value" not in value and not value.get("unknown")):
        raise EscError(f"{where}: not a value of `pulumi env open --format detailed`")
    if value.get("unknown"):
        return Unresolved(f"a value unknown when the environment was opened ({where})")
    inner = value["value"]
    if isinstance(inner, dict):
        inner = {k: _opened(v, where) for k, v in inner.items()}
    elif isinstance(inner, list):
        inner = [_opened(v, where) for v in inner]
    return Secret(inner) if value.get("secret") else inner


def load_env_file(path: Path, esc_dir: Path, show: Callable[[Path], str]) -> Environment:
    """An `--env-file`: opened values (JSON of `pulumi env open --format detailed`) or a
    definition (YAML; its imports found in `esc_dir`)."""
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise EscError(f"{show(path)}: cannot read: {err}") from None
        if not (
            isinstance(doc, dict)
            and "value" in doc
            and set(doc) <= {"value", "secret", "unknown", "trace"}
        ):
            raise EscError(
                f"{show(path)}: not the output of `pulumi env open NAME --format detailed` (the "
                "plain JSON format does not say which values are secret); write it with "
                "`--format detailed`"
            )
        return Environment(show(path), path, None, opened=_opened(doc, show(path)))
    return _definition(show(path), path, _compose(path, show), esc_dir, show, ())


def _definition(
    name: str,
    file: Path,
    root: yaml.Node | None,
    esc_dir: Path,
    show: Callable[[Path], str],
    seen: tuple[str, ...],
) -> Environment:
    where = show(file)
    if root is not None and not isinstance(root, yaml.MappingNode):
        raise EscError(f"{where}: an environment definition is a mapping (imports:, values:)")
    imports: list[Environment] = []
    names = _child(root, "imports") if root is not None else None
    for item in names.value if isinstance(names, yaml.SequenceNode) else ():
        ref = item.value[0][0].value if isinstance(item, yaml.MappingNode) else item.value
        imports.append(find_environment(str(ref), esc_dir, show, (*seen, name)))
    values = _child(root, "values") if root is not None else None
    return Environment(name, Path(where), values, imports)


def find_environment(
    name: str, esc_dir: Path, show: Callable[[Path], str], seen: tuple[str, ...] = ()
) -> Environment:
    """The environment `name` (`project/env`) from its definition `esc_dir/NAME.yaml`."""
    if name in seen:
        raise EscError(f"ESC environment {name} imports itself ({' -> '.join((*seen, name))})")
    path = esc_dir / f"{name}.yaml"
    if not path.is_file():
        raise FileNotFoundError(name)
    return _definition(name, path, _compose(path, show), esc_dir, show, seen)


def stack_environment(
    stack_file: Path, esc_dir: Path, show: Callable[[Path], str]
) -> Environment | None:
    """The anonymous environment of a stack file's `environment:` (a list of environment names,
    or an inline definition with `imports:` and `values:`), its imports found as definitions in
    `esc_dir`; None when the stack imports none."""
    root = _compose(stack_file, show)
    spec = _child(root, "environment") if root is not None else None
    if spec is None or (isinstance(spec, yaml.ScalarNode) and spec.value in ("", "null", "~")):
        return None
    name = f"{show(stack_file)} environment"
    if isinstance(spec, yaml.SequenceNode):
        imports = [find_environment(str(item.value), esc_dir, show) for item in spec.value]
        return Environment(name, Path(show(stack_file)), None, imports)
    if isinstance(spec, yaml.MappingNode):
        return _definition(name, stack_file, spec, esc_dir, show, ())
    raise EscError(f"{show(stack_file)}: `environment:` is a list of environment names")


def pulumi_config(envs: Sequence[Environment], project: str) -> dict[str, Any]:
    """The environments' `pulumiConfig`, merged in order, by full key (`namespace:key`)."""
    merged = merge_layers([e.get(("pulumiConfig",)) for e in envs])
    if merged is MISSING:
        return {}
    if not isinstance(merged, dict):
        raise EscError("the environment's pulumiConfig is not a mapping of config keys")
    return {(k if ":" in k else f"{project}:{k}"): v for k, v in merged.items()}


def unresolved_message(key: str, path: str, why: str, stack: str, names: Sequence[str]) -> str:
    """What to tell a user whose stack config is not all known offline."""
    opened = " ".join(f"--env-file {n.rsplit('/', 1)[-1]}.json" for n in names) or "--env-file FILE"
    opens = "; ".join(
        f"pulumi env open {n} --format detailed > {n.rsplit('/', 1)[-1]}.json" for n in names
    )
    return (
        f"{key}{path} comes from the stack's ESC environment and is not known offline: {why}. "
        f"Pass the environment's values ({opens or 'pulumi env open NAME --format detailed > FILE'}), "
        f"then: gpu-inference preview {stack} {opened}; or set {key} in the stack file"
    )
