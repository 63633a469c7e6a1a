"""Seldon Core 2 Servers: a pod template per Server, its ServerConfig's podSpec merged with its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...model.serving.requests import seldon_builtin_containers
from ...model.serving.seldon_servers import BUILTIN_SERVER_CONFIGS
from ..contract import (
    WIRED_POOL_ANNOTATION,
)
from ..read import (
    Template,
    as_int,
    as_list,
    as_map,
    is_type,
    metadata,
    namespace_of,
    split_pools,
)


def mergo(dst: Any, src: Any) -> Any:
    """Go's `mergo.Merge(dst, src, WithOverride, WithAppendSlice)` on plain data: maps merge key by
    key, lists append, a non-empty scalar of `src` replaces `dst`'s."""
    if isinstance(dst, Mapping) and isinstance(src, Mapping):
        out = dict(dst)
        for k, v in src.items():
            out[k] = mergo(dst[k], v) if k in dst else v
        return out
    if isinstance(dst, list | tuple) and isinstance(src, list | tuple):
        return [*dst, *src]
    if src is None or src == "" or src == 0 or src is False:
        return dst
    return src


def merge_seldon_pod_specs(server_config: Mapping[str, Any], server: Mapping[str, Any]) -> dict:
    """A Server's effective podSpec: its ServerConfig's podSpec with the Server's merged in, as
    Seldon Core 2's operator does (`mergePodSpecs`): containers merged by name, everything else
    mergo with override and append-slice (nodeSelector keys merge, tolerations append)."""
    merged = dict(
        mergo(dict(server_config), {k: v for k, v in server.items() if k != "containers"})
    )
    existing = [as_map(c) for c in as_list(server_config.get("containers"))]
    overrides = [as_map(c) for c in as_list(server.get("containers"))]
    containers: list[Any] = []
    for o in overrides:
        same = [e for e in existing if e.get("name") == o.get("name")]
        containers += [mergo(e, o) for e in same] or [o]
    containers += [
        e for e in existing if not any(o.get("name") == e.get("name") for o in overrides)
    ]
    if containers:
        merged["containers"] = containers
    return merged


def server_configs(graph: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """The graph's ServerConfigs by (namespace, name)."""
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in graph:
        if is_type(str(entry.get("type", "")), "mlops.seldon.io", "ServerConfig"):
            inputs = as_map(entry.get("inputs"))
            sc_name = str(metadata(inputs).get("name") or entry.get("name"))
            found[(namespace_of(inputs), sc_name)] = inputs
    return found


def server_template(
    entry: Mapping[str, Any], configs: Mapping[tuple[str, str], Mapping[str, Any]]
) -> Template:
    """A Server's pods: its ServerConfig's podSpec with its own merged in (the ServerConfig of its
    namespace, else the only one of that name), wired to its pools or its ServerConfig's."""
    typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
    inputs = as_map(entry.get("inputs"))
    annotations = as_map(metadata(inputs).get("annotations"))
    ns = namespace_of(inputs)
    spec = as_map(inputs.get("spec"))
    sc_name = str(spec.get("serverConfig") or "")
    sc = configs.get((ns, sc_name))
    if sc is None:
        same = [v for (n, s), v in configs.items() if s == sc_name]
        sc = same[0] if len(same) == 1 else None
    sc_spec = as_map(as_map(sc.get("spec")).get("podSpec")) if sc else {}
    added: tuple[str, ...] = ()
    if sc is None and sc_name in BUILTIN_SERVER_CONFIGS:
        # Seldon's own ServerConfig, installed by its setup chart (not in the graph): its
        # containers as the pinned chart has them, the Server's merged in by name.
        sc_spec = {"containers": seldon_builtin_containers(sc_name)}
        added = tuple(str(c["name"]) for c in sc_spec["containers"])
    pod = merge_seldon_pod_specs(sc_spec, as_map(spec.get("podSpec")))
    wired = split_pools(annotations.get(WIRED_POOL_ANNOTATION))
    if not wired and sc:
        sc_annotations = as_map(metadata(sc).get("annotations"))
        wired = split_pools(sc_annotations.get(WIRED_POOL_ANNOTATION))
    replicas = as_int(spec.get("replicas"))
    return Template(
        type=typ,
        name=name,
        component=None,
        namespace=ns,
        fragment=pod,
        containers=[as_map(c) for c in as_list(pod.get("containers"))],
        init_containers=[as_map(c) for c in as_list(pod.get("initContainers"))],
        wired=wired,
        scales_to_zero=replicas == 0,
        max_replicas=max(1 if replicas is None else replicas, as_int(spec.get("maxReplicas")) or 0),
        always=1 if replicas is None else replicas,
        model_annotations=annotations,
        annotations=annotations,
        added=added,
    )
