"""apps/v1 and batch/v1 workloads (Deployments, StatefulSets, DaemonSets, ...): their pod
templates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..contract import APPS_KINDS, WIRED_POOL_ANNOTATION
from ..read import (
    Gang,
    Template,
    as_int,
    as_list,
    as_map,
    kind_of,
    metadata,
    namespace_of,
    resource_id,
    split_pools,
)


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
        always=None if daemonset else (1 if replicas is None else replicas),
        model_annotations={**as_map(metadata(template).get("annotations")), **annotations},
        annotations=annotations,
        daemonset=daemonset,
    )


def leader_worker_set_templates(entry: Mapping[str, Any]) -> list[Template]:
    """A LeaderWorkerSet (`leaderworkerset.x-k8s.io`, written by anyone): `replicas` groups
    (default 1) of `leaderWorkerTemplate.size` pods (default 1, the leader included). The leader
    pods come from `leaderTemplate`, or from `workerTemplate` when it is absent; the other
    size - 1 pods of a group from `workerTemplate` (kubernetes-sigs/lws v0.8.0, the version
    KServe v0.20.0 pins: pkg/controllers/leaderworkerset_controller.go
    constructLeaderStatefulSetApplyConfiguration, pod_controller.go `WithReplicas(Size - 1)`). Resource ids `LeaderWorkerSet/<name>/leader` and `.../worker`; wired like
    an apps workload (the LWS's annotation, else its template's)."""
    typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
    inputs = as_map(entry.get("inputs"))
    annotations = as_map(metadata(inputs).get("annotations"))
    spec = as_map(inputs.get("spec"))
    lwt = as_map(spec.get("leaderWorkerTemplate"))
    replicas = as_int(spec.get("replicas"))
    replicas = 1 if replicas is None else replicas
    size = as_int(lwt.get("size")) or 1
    worker = as_map(lwt.get("workerTemplate"))
    parts = [("leader", as_map(lwt.get("leaderTemplate")) or worker, 1)]
    if size > 1:
        parts.append(("worker", worker, size - 1))
    out = []
    for role, template, per_group in parts:
        pods = replicas * per_group
        pod_spec = as_map(template.get("spec"))
        own = as_map(metadata(template).get("annotations"))
        out.append(
            Template(
                type=typ,
                name=name,
                component=role,
                namespace=namespace_of(inputs),
                fragment=pod_spec,
                containers=[as_map(c) for c in as_list(pod_spec.get("containers"))],
                init_containers=[as_map(c) for c in as_list(pod_spec.get("initContainers"))],
                wired=split_pools(annotations.get(WIRED_POOL_ANNOTATION))
                or split_pools(own.get(WIRED_POOL_ANNOTATION)),
                scales_to_zero=replicas == 0,
                max_replicas=pods,
                always=pods,
                gang=Gang(resource_id(typ, name), per_group, role == "leader"),
                model_annotations={**own, **annotations},
                annotations=annotations,
            )
        )
    return out
