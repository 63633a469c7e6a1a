"""DaemonSets that pools need: the NVIDIA device plugin (its tolerations, and the time-slicing its
config gives nodes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...model.errors import InputError
from ...model.nodes.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ...model.nodes.sharing import sharing_by_config
from ...model.scheduling import (
    Toleration,
)
from ..contract import (
    DEVICE_PLUGIN_CHART,
    DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
    DEVICE_PLUGIN_MARKERS,
    NFD_WORKER_DEFAULT_TOLERATIONS,
)
from ..read import (
    Findings,
    PoolDraft,
    as_list,
    as_map,
    helm_releases,
    kind_of,
    metadata,
    read_tolerations,
    resource_id,
)
from ..results import SharedGpus


def apply_time_slicing(
    graph: Sequence[Mapping[str, Any]], drafts: Mapping[str, list[PoolDraft]]
) -> None:
    """GPUs of nodes the NVIDIA device plugin time-slices (or shares with MPS): its chart's
    `config.map` names configs with `nvidia.com/gpu` replicas; a node picks one with the label
    `nvidia.com/device-plugin.config` (else `config.default`) and advertises GPUs x replicas.
    Existing nodes carry their own count (`NodeTemplate.gpus`): it is multiplied too. The pool
    is marked shared (`PoolDraft.shared`, for GI023)."""
    for entry in helm_releases(graph, DEVICE_PLUGIN_CHART):
        config = as_map(as_map(as_map(entry.get("inputs")).get("values")).get("config"))
        sharing = sharing_by_config(config)
        if not sharing:
            continue
        default = str(config.get("default") or "")
        for group in drafts.values():
            for d in group:
                picked = d.node.labels.get(DEVICE_PLUGIN_CONFIG_LABEL, default)
                if d.gpus and picked in sharing and d.provider != "gke":
                    how = sharing[picked]
                    n = how.replicas
                    d.shared = SharedGpus(
                        how.strategy, "the NVIDIA device plugin", how.refuses_more_than_one
                    )
                    d.gpus *= n
                    d.node = replace(d.node, gpus=d.node.gpus * n) if d.node.gpus else d.node
                    d.more_nodes = tuple(
                        replace(m, gpus=m.gpus * n) if m.gpus else m for m in d.more_nodes
                    )
        return  # one device plugin serves a cluster


def device_plugins(
    graph: Sequence[Mapping[str, Any]], out: Findings
) -> list[tuple[str, list[tuple[str, tuple[Toleration, ...]]]]]:
    """Each device plugin in the graph: (resource, [(part, tolerations)]) where the parts are the
    DaemonSets that must all run on a GPU node (the plugin, and NFD's worker when deployed)."""
    plugins = []
    for entry in helm_releases(graph, DEVICE_PLUGIN_CHART):
        rid = resource_id(str(entry["type"]), str(entry["name"]))
        values = as_map(as_map(entry.get("inputs")).get("values"))
        try:
            parts = [
                (
                    "device plugin",
                    read_tolerations(values["tolerations"])
                    if "tolerations" in values
                    else DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
                )
            ]
            nfd = as_map(values.get("nfd"))
            nfd_on = nfd.get("enabled")
            if nfd_on is None:
                nfd_on = as_map(values.get("gfd")).get("enabled")
            if nfd_on is True:
                worker = as_map(nfd.get("worker"))
                parts.append(
                    (
                        "NFD worker",
                        read_tolerations(worker["tolerations"])
                        if "tolerations" in worker
                        else NFD_WORKER_DEFAULT_TOLERATIONS,
                    )
                )
        except (InputError, TypeError, ValueError) as e:
            out.add("GI013", rid, f"invalid toleration in the chart values: {e}", "fix it")
            continue
        plugins.append((rid, parts))
    for entry in graph:
        typ = str(entry.get("type", ""))
        if not (typ.startswith("kubernetes:apps/") and kind_of(typ) == "DaemonSet"):
            continue
        inputs = as_map(entry.get("inputs"))
        pod = as_map(as_map(as_map(inputs.get("spec")).get("template")).get("spec"))
        names = [str(entry.get("name", "")), str(metadata(inputs).get("name") or "")]
        names += [str(as_map(c).get("image") or "") for c in as_list(pod.get("containers"))]
        if not any(m in n for n in names for m in DEVICE_PLUGIN_MARKERS):
            continue
        rid = resource_id(typ, str(entry["name"]))
        try:
            plugins.append((rid, [("device plugin", read_tolerations(pod.get("tolerations")))]))
        except (InputError, TypeError, ValueError):
            continue  # reported with the DaemonSet's own workload finding (GI013)
    return sorted(plugins, key=lambda p: p[0])
