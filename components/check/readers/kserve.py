"""KServe InferenceServices: a pod template per component; and Knative Serving's settings, which
decide what Serverless components may set and whether they scale to zero."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...model.serving.isvc import (
    EXPLAINER_KEYS,
    FRAMEWORKS,
    MODEL_KEY,
    chart_resources,
    component_containers,
    gke_accelerator_selector,
    runtime_containers,
    runtime_pod_fields,
)
from ...model.serving.requests import queue_proxy
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


@dataclass(frozen=True)
class KServeSettings:
    """What of a graph's KServe and Knative configuration shapes an InferenceService's pods:
    the defaults KServe's webhook gives a custom container (`kserve_resource_defaults`), Knative's
    `config-features` and `config-deployment` (the queue-proxy), the graph's ServingRuntimes by
    (namespace, name) and ClusterServingRuntimes by ("", name)."""

    defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: chart_resources({}))
    features: Mapping[str, str] = field(default_factory=dict)
    deployment: Mapping[str, str] = field(default_factory=dict)
    runtimes: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)

    def runtime(self, namespace: str, component: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The spec of the runtime a `model` predictor names, when the graph holds it (utils.go
        GetServingRuntime: the namespace's ServingRuntime, else the ClusterServingRuntime)."""
        name = as_map(component.get(MODEL_KEY)).get("runtime")
        if not isinstance(name, str) or not name:
            return None
        return self.runtimes.get((namespace, name), self.runtimes.get(("", name)))


def kserve_settings(graph: Sequence[Mapping[str, Any]]) -> KServeSettings:
    runtimes: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        if is_type(typ, "serving.kserve.io", "ServingRuntime"):
            key = (namespace_of(inputs), str(metadata(inputs).get("name") or entry.get("name")))
        elif is_type(typ, "serving.kserve.io", "ClusterServingRuntime"):
            key = ("", str(metadata(inputs).get("name") or entry.get("name")))
        else:
            continue
        runtimes[key] = as_map(inputs.get("spec"))
    return KServeSettings(
        defaults=kserve_resource_defaults(graph),
        features=knative_settings(graph)[0] or {},
        deployment=knative_deployment(graph),
        runtimes=runtimes,
    )


def isvc_containers(
    kind: str,
    component: Mapping[str, Any],
    defaults: Mapping[str, Mapping[str, Any]],
    runtime: Mapping[str, Any] | None = None,
) -> list[Mapping[str, Any]]:
    """The component's containers as KServe makes them (`model.serving.isvc`: with the graph's
    `runtime` when the predictor names one it holds), then any other key that holds a
    container."""
    made = runtime_containers(component, runtime) if runtime is not None else None
    containers: list[Mapping[str, Any]] = list(
        made if made is not None else component_containers(kind, component, defaults)
    )
    known = {"containers", MODEL_KEY, *FRAMEWORKS, *EXPLAINER_KEYS}
    for key in sorted(component):
        value = component[key]
        if key in COMPONENT_NON_CONTAINER_KEYS or key in known:
            continue
        if isinstance(value, Mapping) and any(m in value for m in CONTAINER_MARKERS):
            containers.append(value)
    return containers


def kserve_default_mode(graph: Sequence[Mapping[str, Any]]) -> str:
    for values in _kserve_values(graph):
        mode = as_map(as_map(values.get("kserve")).get("controller")).get("deploymentMode")
        if isinstance(mode, str) and mode:
            return mode
    return "Serverless"


def kserve_resource_defaults(graph: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """What KServe's defaulting webhook gives a custom container without cpu / memory requests
    and limits, from the controller chart's values in the graph (`model.serving.isvc`
    chart_resources); the chart's own when the graph installs no KServe."""
    for values in _kserve_values(graph):
        return chart_resources(values)
    return chart_resources({})


def _kserve_values(graph: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [
        as_map(as_map(entry.get("inputs")).get("values"))
        for chart in KSERVE_CHARTS
        for entry in helm_releases(graph, chart)
    ]


def inference_service_templates(
    entry: Mapping[str, Any],
    default_mode: str,
    scale_to_zero_allowed: bool,
    settings: KServeSettings | None = None,
) -> list[Template]:
    """A pod template per component (predictor, transformer, explainer) of an InferenceService,
    wired to the pools its `gpu-inference.dev/pool.<component>` annotation (else the CR's) names;
    `settings`: `kserve_settings` of the graph (KServe's and Knative's defaults when None)."""
    settings = KServeSettings() if settings is None else settings
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
        runtime = settings.runtime(namespace_of(inputs), component) if comp == "predictor" else None
        if runtime is not None:
            component = runtime_pod_fields(component, runtime)
        own_key = wired_annotation(comp)
        wired = split_pools(annotations[own_key]) if own_key in annotations else cr_wired
        pod_annotations = {**annotations, **as_map(component.get("annotations"))}
        containers = isvc_containers(comp, component, settings.defaults, runtime)
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
                containers=containers,
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
                queue_proxy=queue_proxy(settings.features, settings.deployment, pod_annotations)
                if serverless
                else None,
                added_node_selector=gke_accelerator_selector(pod_annotations, containers),
            )
        )
    return out


def knative_deployment(graph: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Knative Serving's `config-deployment` as the graph sets it: the KnativeServing CR's
    `spec.config.deployment` when the graph has one (the operator reverts ConfigMap edits), else
    the ConfigMap's data (as `knative_settings` reads `config-features`)."""
    operator: dict[str, str] | None = None
    configmap: dict[str, str] = {}
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        if is_type(typ, "operator.knative.dev", "KnativeServing"):
            config = as_map(as_map(inputs.get("spec")).get("config"))
            operator = {**(operator or {}), **str_map(config.get("deployment"))}
        elif typ in ("kubernetes:core/v1:ConfigMapPatch", "kubernetes:core/v1:ConfigMap"):
            md = metadata(inputs)
            if md.get("name") == "config-deployment" and md.get("namespace") in (
                None,
                "knative-serving",
            ):
                configmap.update(str_map(inputs.get("data")))
    return configmap if operator is None else operator


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
