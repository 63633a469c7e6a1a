"""apps/v1 and batch/v1 workloads (Deployments, StatefulSets, DaemonSets, ...): their pod
templates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..contract import APPS_KINDS, WIRED_POOL_ANNOTATION
from ..read import Template, as_int, as_list, as_map, kind_of, metadata, namespace_of, split_pools


def is_apps_workload(typ: str) -> bool:
    return typ.startswith("kubernetes:apps/") and kind_of(typ) in APPS_KINDS


def apps_template(entry: Mapping[str, Any]) -> Template:
    """The pod template of an apps/v1 workload, wired by its annotation or its template's."""
    typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
    inputs = as_map(entry.get("inputs"))
    annotations = as_map(metadata(inputs).get("annotations"))
    spec = as_map(inputs.get("spec"))
    template = as_map(spec.get("template"))
    pod_spec = as_map(template.get("spec"))
    wired = split_pools(annotations.get(WIRED_POOL_ANNOTATION)) or split_pools(
        as_map(metadata(template).get("annotations")).get(WIRED_POOL_ANNOTATION)
    )
    daemonset = kind_of(typ) == "DaemonSet"
    replicas = as_int(spec.get("replicas"))
    return Template(
        type=typ,
        name=name,
        component=None,
        namespace=namespace_of(inputs),
        fragment=pod_spec,
        containers=[as_map(c) for c in as_list(pod_spec.get("containers"))],
        init_containers=[as_map(c) for c in as_list(pod_spec.get("initContainers"))],
        wired=wired,
        scales_to_zero=not daemonset and replicas == 0,
        max_replicas=None if daemonset else (1 if replicas is None else replicas),
        model_annotations={**as_map(metadata(template).get("annotations")), **annotations},
        annotations=annotations,
        daemonset=daemonset,
    )
