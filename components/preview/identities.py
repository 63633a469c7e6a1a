"""Which cluster object each resource of a `resources.json` graph stands for, and the URN the engine
gives it, so that two graphs (before and after a config change) can be checked for a move the
engine would carry out as create-then-delete of one object.

Pulumi knows a resource by its URN (its ancestors' types, its own type, its name). With
pulumi-kubernetes' `upsertExistingObjects` (this stack's provider), a resource whose URN changes
without an alias is created again (an upsert of the live object) and the old one deleted: the
object goes (pulumi-kubernetes CHANGELOG 4.29.0). So each cluster object, or Helm release, must
keep one URN whatever the config, or move with an alias naming the URN it had.

Identities: `(apiVersion, kind, namespace, name)` for a Kubernetes object (`namespace` None where
the input has none), `("patch", apiVersion, kind, namespace, name)` for a patch of one,
`("helm", namespace, release)` for a Helm release, `(type, file)` for a manifest applied whole
(`yaml/v2` ConfigFile, or `(type, chart)` for a chart rendered client side, `helm/v4` Chart: its
objects are named after it). Components, providers and cloud resources
have none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

UNKNOWN = "[unknown]"
Identity = tuple[Optional[str], ...]
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
MANIFESTS = (
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:yaml/v2:ConfigGroup",
    "kubernetes:helm.sh/v4:Chart",
)


def object_identity(entry: Mapping[str, Any]) -> Optional[Identity]:
    """The cluster object a graph entry makes, patches or installs; None for anything else."""
    typ = str(entry.get("type", ""))
    inputs = entry.get("inputs") or {}
    if typ == HELM_RELEASE:
        name = inputs.get("name")
        return None if name in (None, UNKNOWN) else ("helm", inputs.get("namespace"), name)
    if typ in MANIFESTS:
        return (typ, str(inputs.get("file") or inputs.get("files") or inputs.get("chart")))
    parts = typ.split(":")
    if len(parts) != 3 or parts[0] != "kubernetes" or "/" not in parts[1]:
        return None  # a provider, or a component of the package (`kubernetes:yaml/v2:...`)
    group, version = parts[1].rsplit("/", 1)
    api_version = version if group == "core" else f"{group}/{version}"
    meta = inputs.get("metadata") or {}
    name, namespace = meta.get("name"), meta.get("namespace")
    if not isinstance(name, str) or name == UNKNOWN or namespace == UNKNOWN:
        return None
    kind = parts[2]
    if kind.endswith("Patch"):
        return ("patch", api_version, kind.removesuffix("Patch"), namespace, name)
    return (api_version, kind, namespace, name)


def urns(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each entry's URN as the engine makes it, without `urn:pulumi:STACK::PROJECT::`: its
    ancestors' types and its own joined by `$`, then `::` and its name (parents are `type::name`
    references in a graph)."""
    by_ref = {f"{e['type']}::{e['name']}": e for e in entries}
    memo: dict[str, str] = {}

    def qualified(e: Mapping[str, Any]) -> str:
        key = f"{e['type']}::{e['name']}"
        if key not in memo:
            parent = by_ref.get(e.get("parent") or "")
            memo[key] = e["type"] if parent is None else f"{qualified(parent)}${e['type']}"
        return memo[key]

    return [f"{qualified(e)}::{e['name']}" for e in entries]


def objects(entries: Sequence[Mapping[str, Any]]) -> dict[Identity, list[tuple[str, list[str]]]]:
    """identity -> [(URN, aliases)] of the resources that stand for it, in graph order."""
    out: dict[Identity, list[tuple[str, list[str]]]] = {}
    for entry, urn in zip(entries, urns(entries), strict=True):
        found = object_identity(entry)
        if found is not None:
            aliases = list((entry.get("options") or {}).get("aliases") or [])
            out.setdefault(found, []).append((urn, aliases))
    return out


def show(identity: Identity) -> str:
    """`kind namespace/name` (or `helm release namespace/name`, or the manifest's file)."""
    if identity[0] == "helm":
        return f"Helm release {identity[1]}/{identity[2]}"
    if identity[0] in MANIFESTS:
        return f"{str(identity[0]).rsplit(':', 1)[-1]} {identity[1]}"
    patch = identity[0] == "patch"
    _, kind, ns, name = identity[1:] if patch else identity
    where = f"{ns}/{name}" if ns else str(name)
    return f"{'patch of ' if patch else ''}{kind} {where}"


def owners_problems(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Cluster objects that more than one resource of one graph stands for (each would own it:
    deleting either deletes it)."""
    return [
        f"{show(i)} is made by {len(found)} resources: {', '.join(u for u, _ in found)}"
        for i, found in objects(entries).items()
        if len(found) > 1
    ]


def moves(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[str]:
    """The cluster objects both graphs have that changed URN without the new resource naming the
    old URN as an alias: what the engine would create again and then delete."""
    old, new = objects(before), objects(after)
    out = []
    for identity in old.keys() & new.keys():
        was = {u for u, _ in old[identity]}
        for urn, aliases in new[identity]:
            if urn not in was and not was & set(aliases):
                out.append(
                    f"{show(identity)} moves from {sorted(was)[0]} to {urn} without an alias"
                )
    return sorted(out)
