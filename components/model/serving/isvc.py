"""The containers KServe v0.20.0 makes from an InferenceService component, as far as they decide
placement and fit: their names and their cpu / memory requests and limits.

Pure: imports nothing but `components.model`.

Sources (kserve/kserve at tag v0.20.0, commit 1fb781055dd1567164358233e1125142ca6ef1fe):

- The defaulting webhook (`pkg/apis/serving/v1beta1/inference_service_defaults.go`
  `DefaultInferenceService`) first turns a framework predictor (`sklearn`, `triton`, ...) into a
  `model` one (`setPredictorModelDefaults`, `assign<Framework>Runtime`: the framework field is
  cleared), then calls `Default` on each component's implementation, `GetImplementations()[0]`:
  a framework or `model` predictor's is `ModelSpec.Default`, which sets nothing
  (`predictor_model.go`); a custom predictor's (`predictor_custom.go`), a transformer's
  (`transformer_custom.go`), a custom explainer's (`explainer_custom.go`) and the ART
  explainer's (`explainer_art.go`) call `setResourceRequirementDefaults` on the first container:
  each of cpu and memory missing from its requests gets the config's request, and missing from
  its limits gets the config's limit (an empty config value sets nothing). The config is
  `inferenceservice-config`'s `inferenceService.resource`, which the controller chart renders
  from the values `kserve.inferenceservice.resources` (`charts/kserve-resources/files/common/
  configmap-patch.yaml`; `values.yaml`: requests and limits cpu 1, memory 2Gi). The first
  container of a transformer or custom explainer is renamed `kserve-container`, a custom
  predictor's when it is the only one or has no name.
- A `model` predictor's container is the ServingRuntime's `kserve-container` with the
  InferenceService's container patched over it (`pkg/controller/v1beta1/inferenceservice/
  components/predictor.go` buildPodSpec, `utils.MergeServingRuntimeAndInferenceServiceSpecs`,
  `pkg/utils/container_merge.go` MergeContainerWithPatch: a strategic merge patch, so requests
  and limits merge key by key, the InferenceService's winning). Every ClusterServingRuntime of
  the runtime chart (`charts/kserve-runtime-configs/files/runtimes/resources.yaml`, installed
  with `kserve.servingruntime.enabled: true`) gives its `kserve-container` requests and limits
  cpu 1, memory 2Gi, but `kserve-huggingfaceserver-multinode` (picked only for a `workerSpec`,
  which the check does not read). The InferenceService's other predictor containers follow it
  as they are. A ServingRuntime (or ClusterServingRuntime) the predictor names in
  `model.runtime` and the graph holds gives its own containers and pod fields instead
  (`runtime_containers`, `runtime_pod_fields`): its `kserve-container` under the
  InferenceService's (args concatenated, the runtime's first: utils.go MergeRuntimeContainers),
  its `transformer-container` merged with the InferenceService's, its other containers after
  them, then the InferenceService's other ones (buildPodSpec); its nodeSelector, affinity,
  tolerations, volumes, imagePullSecrets and schedulerName under the predictor's, as a strategic
  merge patch (utils.go MergePodSpec). A runtime that KServe picks by model format is not
  looked for in the graph.
- The pod-mutating webhook's first mutator (`pkg/webhook/admission/pod/accelerator_injector.go`
  InjectGKEAcceleratorSelector): a pod with a container whose limits give `nvidia.com/gpu` and
  the annotation `serving.kserve.io/gke-accelerator` gets the nodeSelector
  `cloud.google.com/gke-accelerator: <the annotation>`, over its own (`gke_accelerator_selector`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .llmisvc import strategic_merge

CONTAINER_NAME = "kserve-container"
"""pkg/constants InferenceServiceContainerName."""
TRANSFORMER_CONTAINER_NAME = "transformer-container"
"""pkg/constants TransformerContainerName."""
RUNTIME_POD_FIELDS = (
    "nodeSelector",
    "affinity",
    "tolerations",
    "volumes",
    "imagePullSecrets",
    "schedulerName",
)
"""The ServingRuntime's pod fields MergePodSpec puts under the predictor's."""

FRAMEWORKS = (
    "huggingface",
    "lightgbm",
    "onnx",
    "paddle",
    "pmml",
    "pytorch",
    "sklearn",
    "tensorflow",
    "triton",
    "xgboost",
)
"""The predefined predictor keys of the v1beta1 CRD (`spec.predictor.<framework>`,
pkg/apis/serving/v1beta1/predictor.go PredictorSpec); each becomes a `model` predictor."""
MODEL_KEY = "model"
EXPLAINER_KEYS = ("art",)
"""The predefined explainer keys (pkg/apis/serving/v1beta1/explainer.go ExplainerSpec)."""

CHART_RESOURCES: Mapping[str, Mapping[str, str]] = {
    "requests": {"cpu": "1", "memory": "2Gi"},
    "limits": {"cpu": "1", "memory": "2Gi"},
}
"""`kserve.inferenceservice.resources` in charts/kserve-resources/values.yaml (v0.20.0): what
`setResourceRequirementDefaults` gives a custom container, unless the chart's values change it."""

RUNTIME_RESOURCES: Mapping[str, Mapping[str, str]] = {
    "requests": {"cpu": "1", "memory": "2Gi"},
    "limits": {"cpu": "1", "memory": "2Gi"},
}
"""The `kserve-container` resources of every single-node ClusterServingRuntime in
charts/kserve-runtime-configs/files/runtimes/resources.yaml (v0.20.0), under the
InferenceService's own."""

DEFAULTED = ("cpu", "memory")


def _as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def chart_resources(values: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The defaults `setResourceRequirementDefaults` gives, from the controller chart's values
    as set (`kserve.inferenceservice.resources`, deep-merged over the chart's, as Helm does); an
    empty value gives none."""
    given = _as_map(_as_map(_as_map(values.get("kserve")).get("inferenceservice")).get("resources"))
    out: dict[str, dict[str, str]] = {}
    for part in ("requests", "limits"):
        merged = {**CHART_RESOURCES[part], **_as_map(given.get(part))}
        out[part] = {k: str(merged[k]) for k in DEFAULTED if merged.get(k) not in (None, "")}
    return out


def with_defaults(
    container: Mapping[str, Any], defaults: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """`container` with each of `defaults`' requests and limits it does not give itself (key by
    key: `setResourceRequirementDefaults`, and the strategic merge of a runtime's container under
    it, both do so)."""
    res = _as_map(container.get("resources"))
    out = dict(res)
    for part in ("requests", "limits"):
        own = _as_map(res.get(part))
        merged = {**_as_map(defaults.get(part)), **own}
        if merged:
            out[part] = merged
    return {**container, "resources": out}


def _implementation(component: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        if isinstance(component.get(key), Mapping):
            return key
    return None


def component_containers(
    kind: str,
    component: Mapping[str, Any],
    custom_defaults: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The containers of the pods KServe makes for one component (`predictor`, `transformer`,
    `explainer`) of an InferenceService, each with its name and the requests and limits the
    defaulting webhook and the ServingRuntime merge give it (see the module docstring);
    `custom_defaults`: `chart_resources` of the installed chart. Other fields stay as given."""
    own = [dict(c) for c in component.get("containers") or [] if isinstance(c, Mapping)]
    keys = (*FRAMEWORKS, MODEL_KEY) if kind == "predictor" else EXPLAINER_KEYS
    impl = _implementation(component, keys) if kind != "transformer" else None
    if impl is not None:
        first = {**component[impl], "name": CONTAINER_NAME}
        defaults = RUNTIME_RESOURCES if kind == "predictor" else custom_defaults
        return [with_defaults(first, defaults), *own]
    if not own:
        return []
    first = own[0]
    if kind != "predictor" or len(own) == 1 or not first.get("name"):
        first = {**first, "name": CONTAINER_NAME}
    return [with_defaults(first, custom_defaults), *own[1:]]


def _merge_container(runtime: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """utils.go MergeRuntimeContainers: `own` patched over `runtime`, args concatenated."""
    merged = dict(strategic_merge(dict(runtime), dict(own)))
    args = [*(runtime.get("args") or []), *(own.get("args") or [])]
    if args:
        merged["args"] = args
    merged["name"] = runtime.get("name") or own.get("name")
    return merged


def runtime_containers(
    component: Mapping[str, Any], runtime: Mapping[str, Any]
) -> list[dict[str, Any]] | None:
    """The containers of a `model` predictor served by `runtime` (a ServingRuntimeSpec), as
    buildPodSpec makes them; None when the runtime has no `kserve-container` (KServe refuses
    the predictor: InvalidPredictorSpec)."""
    ours = [dict(c) for c in runtime.get("containers") or [] if isinstance(c, Mapping)]
    own = [dict(c) for c in component.get("containers") or [] if isinstance(c, Mapping)]
    by_name = {c.get("name"): c for c in ours}
    if CONTAINER_NAME not in by_name:
        return None
    model = dict(_as_map(component.get(MODEL_KEY)))
    out = [_merge_container(by_name[CONTAINER_NAME], model)]
    own_transformer = next((c for c in own if c.get("name") == TRANSFORMER_CONTAINER_NAME), None)
    if TRANSFORMER_CONTAINER_NAME in by_name and own_transformer is not None:
        out.append(_merge_container(by_name[TRANSFORMER_CONTAINER_NAME], own_transformer))
    elif TRANSFORMER_CONTAINER_NAME in by_name:
        out.append(by_name[TRANSFORMER_CONTAINER_NAME])
    elif own_transformer is not None:
        out.append(own_transformer)
    out += [c for c in ours if c.get("name") not in (CONTAINER_NAME, TRANSFORMER_CONTAINER_NAME)]
    out += [c for c in own if c.get("name") != TRANSFORMER_CONTAINER_NAME]
    return out


def runtime_pod_fields(component: Mapping[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
    """The predictor's pod fields with the runtime's under them (utils.go MergePodSpec): the
    component with its nodeSelector, affinity, tolerations, ... as the pod gets them."""
    base = {k: runtime[k] for k in RUNTIME_POD_FIELDS if runtime.get(k) is not None}
    over = {k: component[k] for k in RUNTIME_POD_FIELDS if component.get(k) is not None}
    return {**component, **strategic_merge(base, over)}


GKE_ACCELERATOR_ANNOTATION = "serving.kserve.io/gke-accelerator"
"""pkg/constants InferenceServiceGKEAcceleratorAnnotationKey."""
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
"""accelerator_injector.go GkeAcceleratorNodeSelector."""


def gke_accelerator_selector(
    annotations: Mapping[str, Any], containers: Sequence[Mapping[str, Any]]
) -> dict[str, str]:
    """What KServe's pod webhook adds to the pod's nodeSelector (see the module docstring): the
    pod's annotations (the InferenceService's and its component's) and its containers."""
    if GKE_ACCELERATOR_ANNOTATION not in annotations:
        return {}
    for c in containers:
        limits = _as_map(_as_map(c.get("resources")).get("limits"))
        if "nvidia.com/gpu" in limits:
            return {GKE_ACCELERATOR_LABEL: str(annotations[GKE_ACCELERATOR_ANNOTATION])}
    return {}
