"""DaemonSets of the graph: the NVIDIA device plugin that GPU pools need (its tolerations, and the
time-slicing its config gives nodes), and every DaemonSet's pod as a node's overhead
(`graph_daemons`: apps/v1 DaemonSets, and the DaemonSets of the NVIDIA device plugin and DCGM
exporter charts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...model.errors import InputError
from ...model.nodes.daemonsets import DaemonPod
from ...model.nodes.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ...model.nodes.sharing import sharing_by_config
from ...model.scheduling import (
    Placement,
    Toleration,
)
from ...model.serving.requests import pod_requests
from ..contract import (
    DCGM_EXPORTER_CHART,
    DCGM_EXPORTER_DEFAULTS,
    DEVICE_PLUGIN_CHART,
    DEVICE_PLUGIN_DEFAULT_AFFINITY,
    DEVICE_PLUGIN_DEFAULT_TOLERATIONS,
    DEVICE_PLUGIN_MARKERS,
    HELM_TYPES,
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


# ---------------------------------------------------------------------------------------------
# Every DaemonSet's pod, as the nodes it runs on see it
# ---------------------------------------------------------------------------------------------


def _merged(default: Any, given: Any) -> Any:
    """Helm's values merge: maps key by key, anything else replaced; a null removes the key."""
    if not isinstance(default, Mapping) or not isinstance(given, Mapping):
        return given
    out = dict(default)
    for k, v in given.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merged(out.get(k), v)
    return out


def _daemon(name: str, pod: Mapping[str, Any], source: str) -> DaemonPod | None:
    """A DaemonSet's pod from its pod spec; None when the spec is not valid Kubernetes (its own
    workload finding, GI013, names what)."""
    try:
        requests = pod_requests(
            [as_map(c) for c in as_list(pod.get("containers"))] or [{}],
            [as_map(c) for c in as_list(pod.get("initContainers"))],
            as_map(pod.get("overhead")) or None,
        )
        placement = Placement.from_pod_spec(pod)
    except (InputError, KeyError, TypeError, ValueError):
        return None
    return DaemonPod(name, requests, placement, source)


def _chart_pod(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The pod spec a chart's DaemonSet template renders from these values: resources,
    nodeSelector, affinity, tolerations (the chart's defaults where the values give none)."""
    v = _merged(defaults, values)
    pod: dict[str, Any] = {"containers": [{"resources": as_map(v.get("resources"))}]}
    for key in ("nodeSelector", "affinity", "tolerations"):
        if v.get(key):
            pod[key] = v[key]
    return pod


def _device_plugin_pods(rid: str, values: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The DaemonSets the nvidia-device-plugin chart (0.17.1, `NVIDIA_DEVICE_PLUGIN`) renders:
    the plugin (`devicePlugin.enabled`, default true) and GPU feature discovery
    (`gfd.enabled`, default false) from the top-level resources / nodeSelector / affinity /
    tolerations (templates/daemonset-device-plugin.yml, daemonset-gfd.yml), and the
    node-feature-discovery worker when its subchart is on (Chart.yaml `condition:
    nfd.enabled,gfd.enabled`) from `nfd.worker` (NFD chart 0.15.3 values: no resources, no
    selector). The MPS control daemon selects `nvidia.com/mps.capable`, a label GFD sets once a
    node runs: never on a node template, so not read."""
    defaults = {
        "resources": {},
        "affinity": DEVICE_PLUGIN_DEFAULT_AFFINITY,
        "tolerations": [t.to_dict() for t in DEVICE_PLUGIN_DEFAULT_TOLERATIONS],
    }
    out: list[tuple[str, Mapping[str, Any]]] = []
    if as_map(values.get("devicePlugin")).get("enabled") is not False:
        out.append((f"{rid}/device-plugin", _chart_pod(values, defaults)))
    gfd = as_map(values.get("gfd")).get("enabled") is True
    if gfd:
        out.append((f"{rid}/gpu-feature-discovery", _chart_pod(values, defaults)))
    nfd = as_map(values.get("nfd"))
    if (nfd.get("enabled") if "enabled" in nfd else gfd) is True:
        worker_defaults = {
            "resources": {},
            "tolerations": [t.to_dict() for t in NFD_WORKER_DEFAULT_TOLERATIONS],
        }
        out.append(
            (
                f"{rid}/nfd-worker",
                _chart_pod(as_map(nfd.get("worker")), worker_defaults),
            )
        )
    return out


def graph_daemons(graph: Sequence[Mapping[str, Any]]) -> list[DaemonPod]:
    """The pod of every DaemonSet the graph makes, in graph order: apps/v1 DaemonSets
    (`DaemonSet/<name>`), the NVIDIA device plugin chart's (`Release/<name>/device-plugin`,
    `.../gpu-feature-discovery`, `.../nfd-worker`) and the DCGM exporter chart's
    (`Release/<name>/dcgm-exporter`)."""
    out: list[DaemonPod] = []
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        if typ.startswith("kubernetes:apps/") and kind_of(typ) == "DaemonSet":
            pod = as_map(as_map(as_map(inputs.get("spec")).get("template")).get("spec"))
            rid = resource_id(typ, str(entry["name"]))
            parts: list[tuple[str, Mapping[str, Any]]] = [(rid, pod)]
            source = "the graph"
        elif typ in HELM_TYPES:
            chart = str(inputs.get("chart") or "").rstrip("/").rsplit("/", 1)[-1]
            rid = resource_id(typ, str(entry["name"]))
            values = as_map(inputs.get("values"))
            if chart == DEVICE_PLUGIN_CHART:
                parts = list(_device_plugin_pods(rid, values))
                source = (
                    f"the graph's {chart} release (chart defaults: {DEVICE_PLUGIN_CHART} 0.17.1)"
                )
            elif chart == DCGM_EXPORTER_CHART:
                parts = [(f"{rid}/dcgm-exporter", _chart_pod(values, DCGM_EXPORTER_DEFAULTS))]
                source = f"the graph's {chart} release (chart defaults: NVIDIA/dcgm-exporter 4.8.2)"
            else:
                continue
        else:
            continue
        for name, pod in parts:
            daemon = _daemon(name, pod, source)
            if daemon is not None:
                out.append(daemon)
    return out
