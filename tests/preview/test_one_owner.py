"""One resource per cluster object, whatever the config: every example stack previewed under each
change a user can make without meaning to replace anything (each switch flipped, each section
left out, each pool, workload and namespace renamed) keeps every cluster object both previews
have at one URN, or moves it with an alias naming the URN it had (`components.preview.identities`:
the identities come from the graphs, not from a list here). A move without an alias is what the
engine carries out as create-then-delete of the same object."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from components.model.errors import InputError
from components.platform.load import load_spec
from components.preview import preview as pv
from components.preview.identities import moves, object_identity, owners_problems
from tests.conftest import EXAMPLE_STACKS, ROOT

NS = "gpu-inference:"
KEEP = ("cluster", "pools")
"""Sections a stack cannot leave out."""
WORKLOAD_LISTS = ("inferenceServices", "llmInferenceServices")
SELDON_LISTS = ("servers", "models", "serverConfigs")


@cache
def project() -> pv.Project:
    return pv.load_project(ROOT)


def graph(values: dict[str, Any], stack: str) -> list[dict[str, Any]]:
    proj = project()
    config = pv.load_stack_config(proj, stack)
    config = pv.StackConfig(config.stack, config.file, values, config.secret_keys)
    return pv.graph_entries(pv.run_stack(proj, config).resources)


def spec_text(values: dict[str, Any], secret: frozenset[str]) -> str:
    """The whole config as the program reads it (raises the config's InputError)."""
    return json.dumps(load_spec(values, secret).model_dump(mode="json"), sort_keys=True)


def bools(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], bool]]:
    """Every boolean of a config dump outside lists (lists are pools and workloads)."""
    if isinstance(value, bool):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from bools(v, (*path, k))


def set_path(values: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = values.setdefault(NS + path[0], {})
    for key in path[1:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def replace_strings(value: Any, old: str, new: str) -> Any:
    """`value` with every string equal to `old` (a name, and each reference to it) now `new`."""
    if value == old:
        return new
    if isinstance(value, dict):
        return {k: replace_strings(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_strings(v, old, new) for v in value]
    return value


def variants(values: dict[str, Any], secret: frozenset[str]) -> Iterator[tuple[str, dict]]:
    """(label, config) for each change: switches flipped, sections left out, renames."""
    dump = load_spec(values, secret).model_dump(by_alias=True)
    for path, value in bools({k: v for k, v in dump.items() if k not in KEEP}):
        changed = copy.deepcopy(values)
        set_path(changed, path, not value)
        yield f"{'.'.join(path)}: {not value}", changed
    for key, section in values.items():
        name = key.removeprefix(NS)
        if name in KEEP or not key.startswith(NS):
            continue
        changed = copy.deepcopy(values)
        del changed[key]
        yield f"{name} left out", changed
        for sub in section if isinstance(section, dict) else ():
            changed = copy.deepcopy(values)
            del changed[key][sub]
            yield f"{name}.{sub} left out", changed
    # Renames, each kind at once (each object keeps or moves its URN on its own): every pool
    # (its references too), every workload, every namespace the stack names.
    pools = [p["name"] for p in values[NS + "pools"]]
    seldon = values.get(NS + "seldon") or {}
    workloads = [w["name"] for lst in WORKLOAD_LISTS for w in values.get(NS + lst, ())]
    workloads += [w["name"] for lst in SELDON_LISTS for w in seldon.get(lst, ())]
    spaces = {w.get("namespace") for lst in WORKLOAD_LISTS for w in values.get(NS + lst, ())}
    spaces |= {seldon.get("namespace")}
    spaces |= {a.get("namespace") for a in (values.get(NS + "addons") or {}).values()}
    for what, names in (
        ("pool", pools),
        ("workload", workloads),
        ("namespace", sorted(s for s in spaces if isinstance(s, str))),
    ):
        if names:
            yield f"every {what} renamed", rename(values, names)


def rename(values: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """`values` with each of `names`, and every reference to it, given a new name (`-r`)."""
    out = copy.deepcopy(values)
    for old in names:
        out = {k: replace_strings(v, old, f"{old}-r") for k, v in out.items()}
    return out


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_no_change_moves_a_cluster_object_without_an_alias(stack: str, example_previews) -> None:
    config = pv.load_stack_config(project(), stack)
    base = example_previews[stack].entries  # the stack as it is: graph(config.values, stack)
    assert owners_problems(base) == []
    secret = frozenset(config.secret_keys)
    problems: list[str] = []
    seen = {spec_text(config.values, secret)}
    ran = 0
    for label, values in variants(config.values, secret):
        try:
            text = spec_text(values, secret)
        except InputError:
            continue  # a change the config refuses is no change at all
        if text in seen:
            continue  # the same stack as one already previewed (a default left out)
        seen.add(text)
        changed = graph(values, stack)
        ran += 1
        # Both ways: the change, and undoing it.
        found = owners_problems(changed) + moves(base, changed) + moves(changed, base)
        problems += [f"{label}: {p}" for p in found]
    assert problems == []
    # Not vacuous: most changes run, and the stack has objects to keep.
    assert ran >= 10 and sum(object_identity(e) is not None for e in base) >= 10, ran


def test_a_move_without_an_alias_is_found_and_an_alias_keeps_it() -> None:
    ns = {"type": "kubernetes:core/v1:Namespace", "inputs": {"metadata": {"name": "kserve"}}}
    a = {"type": "gpu-inference:index:KServeInstall", "name": "k", "parent": None, "inputs": {}}
    b = {"type": "gpu-inference:index:LLMServingInstall", "name": "l", "parent": None, "inputs": {}}
    before = [a, {**ns, "name": "k-ns", "parent": "gpu-inference:index:KServeInstall::k"}]
    moved = {**ns, "name": "l-ns", "parent": "gpu-inference:index:LLMServingInstall::l"}
    assert moves(before, [b, moved]) == [
        "Namespace kserve moves from gpu-inference:index:KServeInstall$kubernetes:core/v1:"
        "Namespace::k-ns to gpu-inference:index:LLMServingInstall$kubernetes:core/v1:"
        "Namespace::l-ns without an alias"
    ]
    aliased = {
        **moved,
        "options": {
            "aliases": ["gpu-inference:index:KServeInstall$kubernetes:core/v1:Namespace::k-ns"]
        },
    }
    assert moves(before, [b, aliased]) == []
    assert owners_problems([a, b, before[1], moved]) == [
        "Namespace kserve is made by 2 resources: gpu-inference:index:KServeInstall$kubernetes:"
        "core/v1:Namespace::k-ns, gpu-inference:index:LLMServingInstall$kubernetes:core/v1:"
        "Namespace::l-ns"
    ]


def test_identities_of_objects_patches_releases_and_manifests() -> None:
    def ident(typ: str, inputs: dict) -> Any:
        return object_identity({"type": typ, "inputs": inputs})

    meta = {"metadata": {"name": "config-features", "namespace": "knative-serving"}}
    assert ident("kubernetes:core/v1:ConfigMapPatch", meta) == (
        "patch", "v1", "ConfigMap", "knative-serving", "config-features"
    )  # fmt: skip
    assert ident("kubernetes:serving.kserve.io/v1beta1:InferenceService", meta)[:2] == (
        "serving.kserve.io/v1beta1",
        "InferenceService",
    )
    release = {"name": "karpenter", "namespace": "kube-system"}
    assert ident("kubernetes:helm.sh/v3:Release", release) == ("helm", "kube-system", "karpenter")
    assert ident("kubernetes:yaml/v2:ConfigFile", {"file": "lws.yaml"})[1] == "lws.yaml"
    assert ident("pulumi:providers:kubernetes", {}) is None
    assert ident("gpu-inference:index:KServeInstall", {}) is None
    assert ident("gcp:container/nodePool:NodePool", {"name": "x"}) is None
    assert ident("kubernetes:core/v1:Namespace", {"metadata": {"name": "[unknown]"}}) is None


def test_the_variants_cover_switches_sections_and_renames() -> None:
    config = pv.load_stack_config(project(), "gke-llm")
    labels = [label for label, _ in variants(config.values, frozenset())]
    for wanted in (
        "addons.kserve.enabled: False",
        "addons.kserve.llm.gatewayApiCrds: False",
        "addons.seldon.enabled: True",
        "addons left out",
        "addons.kserve left out",
        "every pool renamed",
        "every workload renamed",
    ):
        assert wanted in labels, (wanted, labels)
