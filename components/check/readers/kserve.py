"""KServe InferenceServices: a pod template per component; and Knative Serving's settings, which
decide what Serverless components may set and whether they scale to zero."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..contract import (
    COMPONENT_NON_CONTAINER_KEYS,
    CONTAINER_MARKERS,
    DEPLOYMENT_MODE_ANNOTATION,
    ISVC_COMPONENTS,
    KSERVE_CHARTS,
    SERVERLESS_MODES,
    WIRED_POOL_ANNOTATION,
    wired_annotation,
)
from ..read import (
    Template,
    as_int,
    as_list,
    as_map,
    helm_releases,
    is_type,
    kind_of,
    metadata,
    namespace_of,
    split_pools,
    str_map,
)


def isvc_containers(component: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    containers = [as_map(c) for c in as_list(component.get("containers"))]
    for key in sorted(component):
        value = component[key]
        if key in COMPONENT_NON_CONTAINER_KEYS or key == "containers":
            continue
        if isinstance(value, Mapping) and any(m in value for m in CONTAINER_MARKERS):
            containers.append(value)
    return containers


def kserve_default_mode(graph: Sequence[Mapping[str, Any]]) -> str:
    for chart in KSERVE_CHARTS:
        for entry in helm_releases(graph, chart):
            values = as_map(as_map(entry.get("inputs")).get("values"))
            mode = as_map(as_map(values.get("kserve")).get("controller")).get("deploymentMode")
            if isinstance(mode, str) and mode:
                return mode
    return "Serverless"


def inference_service_templates(
    entry: Mapping[str, Any], default_mode: str, scale_to_zero_allowed: bool
) -> list[Template]:
    """A pod template per component (predictor, transformer, explainer) of an InferenceService,
    wired to the pools its `gpu-inference.dev/pool.<component>` annotation (else the CR's) names."""
    typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
    inputs = as_map(entry.get("inputs"))
    annotations = as_map(metadata(inputs).get("annotations"))
    spec = as_map(inputs.get("spec"))
    mode = str(annotations.get(DEPLOYMENT_MODE_ANNOTATION) or default_mode)
    serverless = mode in SERVERLESS_MODES
    cr_wired = split_pools(annotations.get(WIRED_POOL_ANNOTATION))
    out = []
    for comp in ISVC_COMPONENTS:
        component = spec.get(comp)
        if not isinstance(component, Mapping):
            continue
        own_key = wired_annotation(comp)
        wired = split_pools(annotations[own_key]) if own_key in annotations else cr_wired
        min_replicas = as_int(component.get("minReplicas"))
        min_replicas = 1 if min_replicas is None else min_replicas
        zero = serverless and min_replicas == 0 and scale_to_zero_allowed
        out.append(
            Template(
                type=typ,
                name=name,
                component=comp,
                namespace=namespace_of(inputs),
                fragment=component,
                containers=isvc_containers(component),
                init_containers=[as_map(c) for c in as_list(component.get("initContainers"))],
                wired=wired,
                scales_to_zero=zero,
                max_replicas=as_int(component.get("maxReplicas"))
                or (None if serverless else max(min_replicas, 1)),
                # Knative keeps minReplicas (at least 1 where it may not scale to zero); a raw
                # Deployment never scales to zero (kserve #3514).
                always=0 if zero else max(min_replicas, 1),
                model_annotations=annotations if comp == "predictor" else {},
                annotations=annotations,
                serverless=serverless,
                deployment_mode=mode,
            )
        )
    return out


def knative_settings(
    graph: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, str] | None, str, bool]:
    """(features or None when the graph has no Knative config, where they are set, scale-to-zero
    allowed). The KnativeServing CR wins over a ConfigMap: the operator reverts ConfigMap edits."""
    operator: tuple[dict[str, str], str] | None = None
    configmap: tuple[dict[str, str], str] | None = None
    scale_to_zero = True
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        if is_type(typ, "operator.knative.dev", "KnativeServing"):
            config = as_map(as_map(inputs.get("spec")).get("config"))
            features = str_map(config.get("features"))
            operator = (
                {**(operator[0] if operator else {}), **features},
                f"spec.config.features of KnativeServing {entry.get('name')}",
            )
            autoscaler = str_map(config.get("autoscaler"))
            if autoscaler.get("enable-scale-to-zero", "").lower() == "false":
                scale_to_zero = False
        elif typ in ("kubernetes:core/v1:ConfigMapPatch", "kubernetes:core/v1:ConfigMap"):
            md = metadata(inputs)
            if md.get("namespace") not in (None, "knative-serving"):
                continue
            data = str_map(inputs.get("data"))
            if md.get("name") == "config-features":
                configmap = (
                    {**(configmap[0] if configmap else {}), **data},
                    f"data of {kind_of(typ)} knative-serving/config-features",
                )
            elif (
                md.get("name") == "config-autoscaler"
                and data.get("enable-scale-to-zero", "").lower() == "false"
            ):
                scale_to_zero = False
    chosen = operator or configmap
    if chosen is None:
        return None, "", scale_to_zero
    return chosen[0], chosen[1], scale_to_zero
