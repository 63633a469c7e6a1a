"""The short table of docs/config.md: each section of the stack config and its keys, derived from
the same config models as the reference (`components.platform.reference`), so that a new key,
pool kind or provider is in it without an edit. `python -m components.platform.reference`
writes it between the `<!-- generated: summary -->` markers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, get_origin

from ..model.inputs import Input
from . import workload_files
from .config import CLUSTER_KEYS_BY_PROVIDER, NAMESPACE, SECTIONS, Spec
from .derive import INPUTS
from .pool_kinds import KINDS, pool_model

BLOCK = re.compile(r"(<!-- generated: summary[^\n]*-->\n)(.*?)(<!-- end: summary -->)", re.S)


def _inputs(model: Any) -> list[Input]:
    return [i for i in getattr(model, INPUTS, ()) if i.path is not None]


def _keys(model: Any) -> dict[str, list[str]]:
    """The model's root keys in declaration order, each with the keys below it (`chart.crd`)."""
    out: dict[str, list[str]] = {}
    for inp in _inputs(model):
        root, _, rest = str(inp.path).partition(".")
        out.setdefault(root, [])
        if rest:
            out[root].append(rest)
    return out


def _choices(model: Any) -> dict[str, tuple[str, ...]]:
    return {str(i.path): tuple(i.decl.choices) for i in _inputs(model) if i.decl.choices}


def _key(name: str, below: list[str], choices: tuple[str, ...] = ()) -> str:
    text = f"`{name}`"
    if choices:
        text += " (" + " \\| ".join(f"`{c}`" for c in choices) + ")"
    if below:
        text += " {" + ", ".join(below) + "}"
    return text


def section_keys(model: Any, sub: dict[str, Any]) -> str:
    """`model`'s keys; a key with a model of its own in `sub` lists that model's keys."""
    choices = _choices(model)
    parts = []
    for name, below in _keys(model).items():
        if name in sub:
            below = [
                f"{k} {{{', '.join(v)}}}" if v else k for k, v in _keys(sub[name]).items()
            ] + below
        parts.append(_key(name, below, choices.get(name, ())))
    return ", ".join(parts)


def cluster_row(model: Any) -> str:
    """The keys every provider takes, the providers, then each provider's own keys."""
    own = {k for keys in CLUSTER_KEYS_BY_PROVIDER.values() for k in keys}
    keys = _keys(model)
    choices = _choices(model)
    common = [_key(k, v, choices.get(k, ())) for k, v in keys.items() if k not in own]
    by_provider = [
        " / ".join(f"`{k}`" for k in ks) + f" ({provider})"
        for provider, ks in CLUSTER_KEYS_BY_PROVIDER.items()
    ]
    return ", ".join(common + by_provider)


def pools_row() -> str:
    """The keys most pool kinds take, then each kind's others (its block's keys in braces)."""
    per_kind = {k: _keys(pool_model(k)) for k in KINDS}
    counts: dict[str, int] = {}
    for keys in per_kind.values():
        for name in keys:
            counts[name] = counts.get(name, 0) + 1
    shared = [n for n in counts if counts[n] * 2 > len(KINDS)]
    parts = ["list, one entry per pool, its kind set by the cluster's provider and its block"]
    parts.append("most kinds: " + ", ".join(f"`{n}`" for n in shared))
    for kind, keys in per_kind.items():
        others = [_key(n, v) for n, v in keys.items() if n not in shared]
        parts.append(f"{kind.title} (`{kind.provider}`): " + (", ".join(others) or "no others"))
    return "; ".join(parts)


def rows() -> Iterator[tuple[str, str]]:
    """(section key, what it holds) for every section of the stack config, in `Spec`'s order."""
    from .reference import sections  # the reference's section models (it imports this module)

    known = sections()
    for section in SECTIONS:
        key = f"{NAMESPACE}:{section}"
        if section == "cluster":
            yield key, cluster_row(known["cluster"])
        elif section == "pools":
            yield key, pools_row()
        elif section == "addons":
            subs = {
                n.partition(".")[2]: m
                for n, m in known.items()
                if n.count(".") == 1 and n.startswith("addons.")
            }
            parts = []
            for name, model in subs.items():
                below = {"llm": known["addons.kserve.llm"]} if name == "kserve" else {}
                parts.append(f"`{name}` {{{section_keys(model, below)}}}")
            yield key, ", ".join(parts)
        elif section == "seldon":
            parts = ["`namespace`"]
            for name in ("serverConfigs", "servers", "models"):
                parts.append(f"`{name}` (list) {{{section_keys(known[f'seldon.{name}'], {})}}}")
            yield key, ", ".join(parts)
            yield (
                f"{NAMESPACE}:{workload_files.KEY}",
                (
                    "list of YAML files (paths relative to the project directory) holding more "
                    "`inferenceServices`, `llmInferenceServices` and Seldon `serverConfigs` / "
                    "`servers` / `models`, appended after the stack file's own"
                ),
            )
        elif section == "workloadFiles":
            yield (
                key,
                (
                    "list of YAML files (paths relative to the project directory) holding more "
                    "`inferenceServices`, `llmInferenceServices` and Seldon `serverConfigs` / "
                    "`servers` / `models`"
                ),
            )
        else:
            sub = {
                n.rpartition(".")[2]: m
                for n, m in known.items()
                if n.startswith(f"{section}.") and n.count(".") == 1
            }
            text = section_keys(known[section], sub)
            yield key, ("list: " if _is_list(section) else "") + text


def _is_list(section: str) -> bool:
    """Whether the section holds a list (`inferenceServices`), not a mapping."""
    for name, f in Spec.model_fields.items():
        if (f.alias or name) == section:
            return get_origin(f.annotation) is list
    raise KeyError(section)


def table() -> str:
    lines = ["| key | what it holds |", "| --- | --- |"]
    lines += [f"| `{k}` | {v} |" for k, v in rows()]
    return "\n".join(lines) + "\n"


def render(text: str) -> str:
    """`text` (docs/config.md) with its generated block rewritten."""
    if not BLOCK.search(text):
        raise KeyError("no <!-- generated: summary --> block")
    return BLOCK.sub(lambda m: m.group(1) + table() + m.group(3), text)
