"""`docs/config-reference.md`, generated: every key of the stack config, its type, default and
meaning, read from the one declaration (the components' Args and what the stack adds, as the
config sections derive them). The prose around the tables is `docs/config-reference.in.md`; each
`<!-- keys: SECTION -->` line there becomes the table of that section.

    python -m components.platform.reference          # rewrite docs/config-reference.md
    python -m components.platform.reference --check  # exit 1 when it is stale

It also writes docs/config.md's summary table (`render_summary`), between its
`<!-- generated: summary -->` markers.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union, get_args, get_origin

from pydantic import BaseModel

from ..model.inputs import REQUIRED, Input, inputs, number_text
from ..model.nodes.catalog import reference_list
from . import config, llm_workloads, workload_files, workloads
from .config import CLUSTER_KEYS_BY_PROVIDER, NAMESPACE, SECTIONS, Spec
from .derive import ARGS, INPUTS, keys_named, section_model
from .pool_kinds import KINDS, pool_model
from .syntax import CONFIG_TYPES, aliases

PLACEHOLDER = re.compile(r"^<!-- keys: (\S+) -->$", re.M)
CATALOG_LIST = re.compile(r"<!-- catalog: (\S+) -->")  # a list from the GPU catalog
ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "docs" / "config-reference.in.md"
OUTPUT = ROOT / "docs" / "config-reference.md"
SUMMARY = ROOT / "docs" / "config.md"

SYNTAX_WORDS = {
    "pool-name": "DNS-1123 label, ≤ 40 chars (GKE node pools: DNS-1035)",
    "label-keys": "list of label keys (≥ 1, each once)",
    "dns1123": "DNS-1123 label",
    "dns1035": "DNS-1035 label",
    "server-name": "DNS-1123 label, ≤ 52 chars",
    "label-key": "label key",
    "labels": "map label key -> string",
    "quantity": 'quantity (`"500m"`, `2`, `"16Gi"`; not `0.5`, `"4GB"` or negative)',
    "version": "version (`v1.2.3` or `1.2.3`)",
    "storage-uri": "storage URI (`gs://`, `s3://`, `pvc://`, `hf://`, ...)",
    "env": "map name -> string, or `{valueFrom: {secretKeyRef: {name, key}}}`",
    "pool-ref": "pool name, or list of pool names",
    "capabilities": "list of capabilities (each once)",
    "resources": "map resource -> quantity",
    "kubernetes-version": "Kubernetes version (`1.33`, `1.33.2`)",
    "aks-agent-pool-name": "1-12 lowercase letters and digits, a letter first",
    "eks-cluster-name": "1-100 letters, digits, `-` or `_`, a letter or digit first",
    "gcp-zones": "list of zones (`us-central1-a`, ≥ 1, each once)",
    "gcp-service-account": "service account email (`NAME@PROJECT.iam.gserviceaccount.com`)",
    "gce-reservations": "list of reservation names (≥ 1)",
    "node-names": "list of node names (≥ 1, each once)",
    "aks-spot-price": "number > 0 with ≤ 5 decimals, or -1",
    "azure-zones": 'list of zone numbers (`["1", "2"]`, ≥ 1)',
}


def sections() -> dict[str, type[BaseModel]]:
    """Each documented section's config model, by the name its placeholder uses."""
    out: dict[str, type[BaseModel]] = {"cluster": config.Cluster}
    for kind in KINDS:
        out[f"pools.{kind.name}"] = pool_model(kind)
    out["knative"] = config.Knative
    for name, f in config.Addons.model_fields.items():
        out[f"addons.{f.alias or name}"] = _model(f.annotation)
    out["addons.kserve.llm"] = config.LLMServingAddon
    out["namespaces"] = config.Namespaces
    out["quotas"] = config.Quota
    out["inferenceServices"] = workloads.InferenceService
    out["inferenceServices.predictor"] = workloads.Predictor
    out["inferenceServices.transformer"] = workloads.Transformer
    out["inferenceServices.explainer"] = workloads.Explainer
    out["containers"] = _model(
        next(i.annotation for i in getattr(workloads.Predictor, INPUTS) if i.field == "containers")
    )
    out["gpuClaim"] = _model(
        next(i.annotation for i in getattr(workloads.Predictor, INPUTS) if i.field == "gpu_claim")
    )
    out["llmInferenceServices"] = llm_workloads.LLMInferenceService
    out["llmInferenceServices.decode"] = llm_workloads.LLMWorkload
    out["llmInferenceServices.worker"] = llm_workloads.LLMWorker
    out["llmInferenceServices.router"] = llm_workloads.LLMRouter
    out["seldon.serverConfigs"] = workloads.ServerConfig
    out["seldon.servers"] = workloads.Server
    out["seldon.models"] = workloads.SeldonModel
    return out


def table(model: type[BaseModel]) -> str:
    """The markdown table of a derived section: key, type, default, notes."""
    rows = ["| key | type | default | notes |", "| --- | --- | --- | --- |"]
    for path, inp in _rows(model):
        rows.append(
            f"| `{path}` | {_cell(type_text(inp))} | {_cell(default_text(inp))} | {_cell(inp.doc)} |"
        )
    return "\n".join(rows)


def _rows(model: type[BaseModel]) -> Iterator[tuple[str, Input]]:
    """Keys at the section's root first, then those inside mappings, each in declaration order;
    a docstring's argument names said as the keys."""
    given = [i for i in getattr(model, INPUTS, ()) if i.path is not None]
    args = getattr(model, ARGS, None)
    for inp in sorted(given, key=lambda i: "." in str(i.path)):
        doc = keys_named(inp.doc, args) if args is not None else inp.doc
        yield str(inp.path), dataclasses.replace(inp, decl=dataclasses.replace(inp.decl, doc=doc))


def type_text(inp: Input) -> str:
    decl = inp.decl
    if decl.syntax:
        return SYNTAX_WORDS.get(decl.syntax, decl.syntax)
    return _type_words(inp.annotation, decl)


def _type_words(tp: Any, decl: Any) -> str:
    tp = _plain(tp)
    origin = get_origin(tp)
    if origin in (list, Sequence, tuple) or tp in (list, Sequence):
        item = get_args(tp)[0] if get_args(tp) else Any
        what = _type_words(item, dataclasses.replace(decl, min_items=None))
        least = f" (≥ {decl.min_items})" if decl.min_items else ""
        return f"list of {what}{least}"
    if decl.choices:
        return " | ".join(f"`{c}`" for c in decl.choices)
    if tp is bool:
        return "bool"
    if tp is int or tp is float:
        word = "int" if tp is int else "number"
        if decl.ge is not None and decl.le is not None:
            return f"{word} {number_text(decl.ge)}..{number_text(decl.le)}"
        if decl.ge is not None:
            return f"{word} ≥ {number_text(decl.ge)}"
        return word
    if tp is str:
        return "string"
    if origin in (dict, Mapping) or tp in (dict, Mapping):
        value = get_args(tp)[1] if len(get_args(tp)) == 2 else str
        return "map string -> " + ("int" if value is int else "string")
    if tp in CONFIG_TYPES:
        return "`{" + ", ".join(aliases(CONFIG_TYPES[tp])) + "}`"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return "`{" + ", ".join(_camel_fields(tp)) + "}` (keys below)"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if getattr(tp, INPUTS, None) is not None:
            return "mapping (keys below)"
        return "`{" + ", ".join(aliases(tp)) + "}`"
    return "any"


def _camel_fields(tp: type) -> list[str]:
    return [i.path for i in inputs(tp) if i.path]


def _plain(tp: Any) -> Any:
    """The type inside Optional / pulumi.Input."""
    if get_origin(tp) is Union:
        parts = [a for a in get_args(tp) if a is not type(None) and "Output" not in str(a)]
        parts = [a for a in parts if "Awaitable" not in str(a) and not isinstance(a, str)]
        return _plain(parts[0]) if parts else Any
    return tp


def _model(tp: Any) -> Any:
    tp = _plain(tp)
    if get_origin(tp) in (list, Sequence) and get_args(tp):
        tp = _plain(get_args(tp)[0])
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return section_model(tp.__name__, inputs(tp), args=tp)
    return tp


def default_text(inp: Input) -> str:
    if inp.decl.default:
        return inp.decl.default
    if inp.required or inp.default is REQUIRED:
        return "required"
    value = inp.default
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, (list, tuple)):
        return "`[" + ", ".join(str(v) for v in value) + "]`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(template: str) -> str:
    """The reference: `template` with each placeholder replaced by its section's table."""
    known = sections()

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in known:
            raise KeyError(f"unknown section {name!r} in the template (known: {', '.join(known)})")
        return table(known[name])

    header = (
        "<!-- Generated by `python -m components.platform.reference` from "
        "docs/config-reference.in.md and the components' Args: edit those, not this file. -->\n"
    )
    text = PLACEHOLDER.sub(one, template)
    return header + CATALOG_LIST.sub(lambda m: reference_list(m.group(1)), text)


# -- docs/config.md's summary: one row per section, its keys -----------------------------------

SUMMARY_BLOCK = re.compile(
    r"(<!-- generated: summary[^\n]*-->\n)(.*?)(<!-- end: summary -->)", re.S
)


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


def summary_rows() -> Iterator[tuple[str, str]]:
    """(section key, what it holds) for every section of the stack config, in `Spec`'s order."""

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


def summary_table() -> str:
    lines = ["| key | what it holds |", "| --- | --- |"]
    lines += [f"| `{k}` | {v} |" for k, v in summary_rows()]
    return "\n".join(lines) + "\n"


def render_summary(text: str) -> str:
    """`text` (docs/config.md) with its generated block rewritten."""
    if not SUMMARY_BLOCK.search(text):
        raise KeyError("no <!-- generated: summary --> block")
    return SUMMARY_BLOCK.sub(lambda m: m.group(1) + summary_table() + m.group(3), text)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m components.platform.reference")
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    wanted = {
        OUTPUT: render(TEMPLATE.read_text()),
        SUMMARY: render_summary(SUMMARY.read_text()),
    }
    stale = [path for path, text in wanted.items() if path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path} is stale: run python -m components.platform.reference", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
