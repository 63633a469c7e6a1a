"""The house rules of `components/`, over its whole import graph (imports inside functions
included, those only for type checkers left out): no import circle between any two modules, no
module takes another's private name, no module over ~900 lines."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "components"
MAX_LINES = 900


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        parts = f.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(sub) for sub in ast.walk(node))
    return skip


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str]]:
    """(module imported, name taken from it) for every `from ... import` of ours."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or id(node) in skip:
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("components"):
            continue
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            out.append((sub if sub in modules else target, alias.name))
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {m for m, _ in _imports(name, path, modules) if m in modules and m != name}
        for name, path in modules.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_between_any_two_modules():
    assert _cycles(_graph()) == []


def test_the_circle_finder_finds_one():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_takes_another_modules_private_name():
    modules = _modules()
    taken = [
        f"{name} takes {target}.{attr}"
        for name, path in modules.items()
        for target, attr in _imports(name, path, modules)
        if attr.startswith("_") and not attr.startswith("__")
    ]
    assert taken == []


def test_no_module_over_900_lines():
    long = {
        name: n
        for name, path in _modules().items()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_a_pool_kind_has_one_room_per_layer_named_alike():
    """Each pool kind's component (`components/pools/<kind>.py`, its `KIND`) has its graph reader
    in `components/check/readers/<kind>.py`."""
    from components.platform.pool_kinds import KINDS

    for kind in KINDS:
        assert (PACKAGE / "pools" / f"{kind.name}.py").exists(), kind.name
        assert (PACKAGE / "check" / "readers" / f"{kind.name}.py").exists(), kind.name


def test_no_folder_holds_more_than_16_modules_directly():
    """A room a newcomer can scan: past 16 modules a folder grows sub-rooms by concern."""
    crowded = {
        str(d.relative_to(ROOT)): n
        for d in [PACKAGE, *sorted(p for p in PACKAGE.rglob("*") if p.is_dir())]
        if (n := len(list(d.glob("*.py")))) > 16
    }
    assert crowded == {}
