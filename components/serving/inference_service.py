"""KServe `InferenceService` (serving.kserve.io/v1beta1) wired to node pools through `Placement`.

One InferenceService CR with an explicit name and namespace. The CR body is decided by the pure
`inference_service_body(name, args)`; the component is a thin shell over it.

- predictor: a model (`model_format` + `storage_uri`, optional runtime / runtimeVersion /
  protocolVersion), a predefined framework key of the CRD (`triton`, `sklearn`, ... as in seed 001),
  or custom `containers`; exactly one of the three;
- transformer and explainer: custom containers;
- every component: its own placement (nodeSelector or required node affinity, as the pool's
  Placement is styled), extra node-affinity expressions, GPUs / CPU / memory, replicas, scaling;
- deployment mode Serverless (Knative) or RawDeployment (Standard), annotated in the spelling the
  KServe version expects (v0.16 renamed them; both spellings are accepted);
- Serverless: a placement needing a Knative podspec flag that the given Knative install does not
  enable is refused before anything is registered (the Knative webhook would refuse it later with
  "must not set the field(s): spec.template.spec.tolerations").
"""

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..kube.provider import create_opts, owned
from ..model.deploy import versions
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import MAX_REPLICAS
from ..model.scheduling import (
    NodeSelectorRequirement,
    Placement,
    validate_dns1035_label,
    validate_dns1123_label,
    validate_label_key,
)
from ..model.serving.annotations import (
    DEPLOYMENT_MODE_ANNOTATION,
    MODEL_SIZE_ANNOTATION,
    PROGRESS_DEADLINE_ANNOTATION,
)
from ..model.serving.isvc import FRAMEWORKS as ISVC_FRAMEWORKS
from ..model.serving.knative_features import HOST_IPC_FLAG, POD_FIELD_FLAGS
from ..model.serving.llm import MAX_MODEL_SIZE_GB
from .claims import GpuClaimArgs, claim_template, part_claim, refuse_serverless_claim
from .workload import (
    ContainerArgs,
    EnvValue,
    container_resources,
    containers_body,
    cr_metadata,
    effective_placement,
    env_list,
    placement_fields,
    requested_resources,
    resource_warnings,
)

API_VERSION = "serving.kserve.io/v1beta1"
KIND = "InferenceService"
DEFAULT_NAMESPACE = "default"

FRAMEWORKS = ISVC_FRAMEWORKS
PROTOCOL_VERSIONS = ("v1", "v2", "grpc-v1", "grpc-v2")
SCALE_METRICS = ("cpu", "memory", "concurrency", "rps")
MIN_REPLICAS = "resolved: 0 when Knative runs it (Serverless), else 1 (a raw Deployment)"
KPA_METRICS = ("concurrency", "rps")
HPA_METRICS = ("cpu", "memory")
HPA_CLASS = "hpa.autoscaling.knative.dev"
SERVERLESS_MODES = ("Serverless", "Knative")
RAW_MODES = ("RawDeployment", "Standard")
DEPLOYMENT_MODES = SERVERLESS_MODES + RAW_MODES
# KServe builds `<name>-<component>-<namespace>` host labels (default Knative domain template,
# and RawDeployment's host name); over 63 characters the controller fails to reconcile with
# "must be no more than 63 characters" (kserve/kserve#4807).
HOST_LABEL_MAX = 63
# Knative's field mask copies a podspec field unless its flag is "disabled" (unset = disabled).
_FLAG_ON = ("enabled", "allowed")


@dataclass
class PredictorArgs:
    """The predictor: exactly one of `model_format`, `framework`, `containers`."""

    model_format: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Model format name (`spec.predictor.model.modelFormat.name`, e.g. `sklearn`, `huggingface`)."""
    model_format_version: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Model format version (`modelFormat.version`)."""
    framework: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """A predefined predictor key instead of `model`: triton, sklearn, pytorch, tensorflow, onnx,
    xgboost, lightgbm, huggingface, pmml, paddle."""
    storage_uri: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Where the model is (`gs://...`, `s3://...`, `pvc://...`, `oci://...`, `hf://...`)."""
    runtime: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """ServingRuntime name (only with `model_format`)."""
    runtime_version: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Runtime image tag (e.g. `21.08-py3` for triton)."""
    protocol_version: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Inference protocol: v1, v2, grpc-v1, grpc-v2."""
    containers: Optional[Sequence[ContainerArgs]] = field(default=None, metadata=stack(min_items=1))
    """Custom containers instead of a model (resources, env and args are set per container)."""
    gpus: Optional[int] = field(
        default=None,
        metadata=stack(
            ge=0,
            doc="NVIDIA GPUs of the model container (request and limit); on a pool, only a GPU "
            "pool's, at most its GPUs per node (every listed pool's).",
        ),
    )
    """NVIDIA GPUs of the model container (request and limit)."""
    cpu: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """CPU request and limit of the model container (`"4"`, `"500m"`)."""
    memory: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Memory request and limit of the model container (`"16Gi"`)."""
    env: Optional[Mapping[str, EnvValue]] = field(default=None, metadata=stack(syntax="env"))
    """Environment of the model container, name -> a string, or
    `{valueFrom: {secretKeyRef: {name, key}}}` (a value read from a Secret, e.g. `HF_TOKEN`)."""
    args: Optional[Sequence[str]] = None
    """Arguments of the model container."""
    min_replicas: Optional[int] = field(
        default=None, metadata=stack(ge=0, le=MAX_REPLICAS, default=MIN_REPLICAS)
    )
    """Minimum replicas (0: scale to zero, Serverless only: a raw Deployment does not scale to
    zero, kserve/kserve#3514); KServe's default is 1."""
    max_replicas: Optional[int] = field(default=None, metadata=stack(ge=1, le=MAX_REPLICAS))
    """Maximum replicas, at least `min_replicas` (unset: no maximum); the placement check's
    max-scale capacity (GI015) counts it."""
    scale_target: Optional[int] = field(default=None, metadata=stack(ge=1))
    """Autoscaling target for `scale_metric`."""
    scale_metric: Optional[str] = field(default=None, metadata=stack(choices=SCALE_METRICS))
    """`concurrency` | `rps` (Serverless: Knative's autoscaler), `cpu` | `memory` (RawDeployment,
    or Serverless with the HPA class)."""
    service_account_name: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """ServiceAccount the pods run as (e.g. a ModelNamespace's, for storage access)."""
    placement: Optional[Placement] = field(default=None, metadata=stack(hidden=True))
    """Where the pods land: a node pool's `placement` (its scheduling style is kept)."""
    extra_expressions: Optional[Sequence[NodeSelectorRequirement]] = None
    """Required node-affinity expressions `{key, operator, values}` ANDed with the pool's:
    `In` / `NotIn` (values), `Exists` / `DoesNotExist` (none), `Gt` / `Lt` (one integer), e.g.
    seed 004's `Gt` on the GPU count."""
    omit_gpu_toleration: Optional[bool] = False
    """Leave out the `nvidia.com/gpu` toleration and rely on the ExtendedResourceToleration
    admission plugin to add it (GKE, EKS and AKS run it; refused where the cluster does not):
    only for GPU-requesting pods, which are the ones it adds it to."""
    model_size_gb: Optional[float] = field(
        default=None, metadata=stack(ge=0.001, le=MAX_MODEL_SIZE_GB)
    )
    """The model's weights in GB, checked against the GPUs' memory (GI019) and the node's disk
    (GI024). When KServe downloads the model (a storage URI other than pvc:// or oci://), the model
    container requests that much ephemeral storage, rounded up to GiB, plus 10%."""
    host_ipc: Optional[bool] = field(default=None, metadata=stack(hidden=True))
    """Run in the host's IPC namespace (GKE MPS pools need it: `hostIPC: true`)."""
    gpu_claim: Optional[GpuClaimArgs] = None
    """GPUs by claim (DRA) instead of `gpus`: a ResourceClaimTemplate `<name>-predictor-gpu` and
    the model container's claim on it. Not with `gpus`; RawDeployment (Standard) only (Knative
    refuses claims); on a DRA pool."""


@dataclass
class TransformerArgs:
    """A transformer: custom containers and their placement."""

    containers: Sequence[ContainerArgs] = field(metadata=stack(min_items=1))
    """The containers (the first one is the transformer or explainer)."""
    min_replicas: Optional[int] = field(
        default=None, metadata=stack(ge=0, le=MAX_REPLICAS, default=MIN_REPLICAS)
    )
    """Minimum replicas (0: scale to zero, Serverless only, kserve/kserve#3514)."""
    max_replicas: Optional[int] = field(default=None, metadata=stack(ge=1, le=MAX_REPLICAS))
    """Maximum replicas, at least `min_replicas` (unset: no maximum); the placement check's
    max-scale capacity (GI015) counts it."""
    scale_target: Optional[int] = field(default=None, metadata=stack(ge=1))
    """Autoscaling target for `scale_metric`."""
    scale_metric: Optional[str] = field(default=None, metadata=stack(choices=SCALE_METRICS))
    """`concurrency` | `rps` (Serverless: Knative's autoscaler), `cpu` | `memory` (RawDeployment,
    or Serverless with the HPA class)."""
    service_account_name: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """ServiceAccount the pods run as."""
    placement: Optional[Placement] = field(default=None, metadata=stack(hidden=True))
    """Where the pods land: a node pool's `placement`."""
    extra_expressions: Optional[Sequence[NodeSelectorRequirement]] = None
    """Required node-affinity expressions `{key, operator, values}` ANDed with the pool's:
    `In` / `NotIn` (values), `Exists` / `DoesNotExist` (none), `Gt` / `Lt` (one integer)."""
    omit_gpu_toleration: Optional[bool] = False
    """Leave out the `nvidia.com/gpu` toleration and rely on the ExtendedResourceToleration
    admission plugin to add it (GKE, EKS and AKS run it; refused where the cluster does not):
    GPU-requesting pods only."""
    host_ipc: Optional[bool] = field(default=None, metadata=stack(hidden=True))
    """Run in the host's IPC namespace (GKE MPS pools need it: `hostIPC: true`)."""
    gpu_claim: Optional[GpuClaimArgs] = None
    """GPUs by claim (DRA) for the first container instead of `gpus`: a ResourceClaimTemplate
    `<name>-<component>-gpu` and the container's claim on it. Not with `gpus`; RawDeployment
    (Standard) only (Knative refuses claims); on a DRA pool."""


@dataclass
class ExplainerArgs(TransformerArgs):
    """An explainer: custom containers and their placement (the same inputs as a transformer)."""


@dataclass
class InferenceServiceArgs:
    """Inputs of an `InferenceService`; every default is here."""

    predictor: PredictorArgs = field(metadata=stack(hidden=True))
    """The predictor (required)."""
    name: Optional[str] = field(
        default=None,
        metadata=stack(
            required=True,
            syntax="dns1035",
            doc="metadata.name, unique per namespace: a DNS-1035 label (KServe's webhook requires "
            "`[a-z]([-a-z0-9]*[a-z0-9])?`), and with `namespace` it makes KServe's host label "
            "`<name>-<component>-<namespace>`, at most 63 characters (kserve/kserve#4807).",
        ),
    )
    """metadata.name, unique per namespace (DNS-1035 label: KServe's webhook requires `[a-z]([-a-z0-9]*[a-z0-9])?`,
    `IsvcNameFmt` in pkg/apis/serving/v1beta1/inference_service_validation.go); default: the
    component's name."""
    namespace: Optional[str] = field(
        default=DEFAULT_NAMESPACE, metadata=stack(syntax="dns1123", value="models")
    )
    """Namespace of the InferenceService; `<name>-<component>-<namespace>` must fit 63
    characters, the host label KServe builds (kserve/kserve#4807)."""
    deployment_mode: Optional[str] = field(
        default="Serverless",
        metadata=stack(
            choices=DEPLOYMENT_MODES,
            value=None,
            default="resolved: `addons.kserve.defaultDeploymentMode`",
        ),
    )
    """Serverless (= Knative) or RawDeployment (= Standard): KServe 0.16 renamed them, both
    spellings are accepted and the annotation is written as `kserve_version` expects."""
    kserve_version: Optional[str] = field(
        default=None,
        metadata=stack(syntax="version", default="resolved: `addons.kserve.version`"),
    )
    """KServe version installed (decides the annotation's spelling); default: the pinned one."""
    transformer: Optional[TransformerArgs] = field(default=None, metadata=stack(hidden=True))
    """Optional transformer."""
    explainer: Optional[ExplainerArgs] = field(default=None, metadata=stack(hidden=True))
    """Optional explainer."""
    knative_features: Optional[Mapping[str, str]] = field(default=None, metadata=stack(hidden=True))
    """Knative's config-features as installed (e.g. `KnativeServing.features`); None: unknown,
    not checked."""
    annotations: Optional[Mapping[str, str]] = field(default=None, metadata=stack(hidden=True))
    """Extra metadata.annotations (the deployment mode annotation is set from deployment_mode)."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """metadata.labels."""
    progress_deadline_seconds: Optional[int] = field(default=None, metadata=stack(hidden=True))
    """Serverless only: `serving.knative.dev/progress-deadline`, how long a new revision may take
    to become ready (KServe copies the InferenceService's annotations to the Knative revision
    template: kserve ksvc_reconciler.go). Give it the GPU node start-up of a pool that scales to
    zero, or Knative fails the revision while the node boots (kserve/kserve#1247)."""
    ingress: Optional[str] = field(default="kourier", metadata=stack(source="knative.ingress"))
    """Knative's ingress (`kourier` | `istio`): with Istio, KServe's Serverless address is
    `NAME.NS`; without (`disableIstioVirtualHost`, as KServeInstall sets it) and in raw mode it
    is the entry component's service, `NAME-transformer` or `NAME-predictor`."""


# ---------------------------------------------------------------------------------------------
# Versions and Knative flags
# ---------------------------------------------------------------------------------------------


MODEL_DISK_MARGIN = 0.10
"""Ephemeral storage asked beyond the weights: room for what the server writes next to them
(logs, caches, compiled kernels). A margin we chose, not a measurement."""
# KServe v0.20.0 storage_initializer_injector.go: pvc:// is mounted and oci:// goes to the modelcar,
# so only other storage URIs are downloaded into the pod's emptyDir (the node's ephemeral storage).
NOT_DOWNLOADED = ("pvc://", "oci://")


def model_disk_request(size_gb: float) -> str:
    """The ephemeral-storage request for a model of `size_gb` GB: its bytes plus
    `MODEL_DISK_MARGIN`, rounded up to whole GiB (`"144Gi"` for 140 GB)."""
    return f"{math.ceil(size_gb * 1e9 * (1 + MODEL_DISK_MARGIN) / 2**30)}Gi"


def _pinned_kserve_version() -> str:
    return versions.KSERVE_VERSION


def deployment_mode_spelling(mode: str, kserve_version: str) -> str:
    """`mode` in the spelling `kserve_version` expects (v0.16+: Knative / Standard)."""
    if mode not in DEPLOYMENT_MODES:
        raise InputError(f"deployment mode {show(mode)} is not known", ", ".join(DEPLOYMENT_MODES))
    return versions.kserve_deployment_mode(mode, kserve_version)


def is_serverless(args: InferenceServiceArgs) -> bool:
    return (args.deployment_mode or "Serverless") in SERVERLESS_MODES


def service_url(
    name: str, namespace: str, serverless: bool, transformer: bool, ingress: str
) -> str:
    """The in-cluster address KServe v0.20 writes to `status.address.url`: the entry
    component's service (`getRawServiceHost` / `createAddress` in kube_ingress_reconciler.go for
    raw mode, `getHostPrefix` in ingress_reconciler.go for Serverless without Istio), or the
    InferenceService's own name (Serverless with Istio VirtualServices)."""
    if serverless and ingress == "istio":
        host = name
    else:
        host = f"{name}-transformer" if transformer else f"{name}-predictor"
    return f"http://{host}.{namespace}.svc.cluster.local"


# ---------------------------------------------------------------------------------------------
# Validation and body (pure)
# ---------------------------------------------------------------------------------------------


def _isvc_name(name: str, args: InferenceServiceArgs) -> str:
    return args.name or name


def _components(args: InferenceServiceArgs) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = [("predictor", args.predictor)]
    if args.transformer is not None:
        out.append(("transformer", args.transformer))
    if args.explainer is not None:
        out.append(("explainer", args.explainer))
    return out


def _validate_replicas_and_scaling(comp: Any, serverless: bool, hpa_class: bool) -> None:
    lo, hi = comp.min_replicas, comp.max_replicas
    for value, path in ((lo, "minReplicas"), (hi, "maxReplicas")):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise InputError(
                f"{path} {show(value)} is not a replica count", "an integer 0 or more", path
            )
    if lo is not None and hi and lo > hi:
        raise InputError(
            f"minReplicas {lo} is above maxReplicas {hi}",
            "minReplicas <= maxReplicas (maxReplicas 0 or unset: no maximum)",
            "minReplicas",
        )
    metric = comp.scale_metric
    if metric is not None:
        if metric not in SCALE_METRICS:
            raise InputError(
                f"scale metric {show(metric)} is not known", ", ".join(SCALE_METRICS), "scaleMetric"
            )
        allowed = HPA_METRICS if (not serverless or hpa_class) else KPA_METRICS
        if metric not in allowed:
            mode = "RawDeployment (HPA)" if not serverless else "Serverless (Knative KPA)"
            raise InputError(
                f"scale metric {metric!r} is not supported in {mode}",
                ", ".join(allowed),
                "scaleMetric",
            )
    target = comp.scale_target
    if target is not None:
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            raise InputError(
                f"scale target {show(target)} is not a positive integer",
                "an integer 1 or more",
                "scaleTarget",
            )
        if (metric or ("cpu" if not serverless else "concurrency")) == "cpu" and target > 100:
            raise InputError(
                f"scale target {target} is a CPU utilization above 100%", "1..100", "scaleTarget"
            )
    if comp.service_account_name is not None:
        try:
            validate_dns1123_label(comp.service_account_name)
        except InputError as e:
            raise e.at("serviceAccountName") from None


def _predictor_source(p: PredictorArgs) -> str:
    given = [
        k
        for k, v in (
            ("modelFormat", p.model_format),
            ("framework", p.framework),
            ("containers", p.containers),
        )
        if v
    ]
    if len(given) != 1:
        raise InputError(
            f"the predictor has {len(given)} model sources ({', '.join(given) or 'none'})",
            "exactly one of modelFormat (+ storageUri), framework (+ storageUri), containers",
        )
    return given[0]


def _predictor_implementation(p: PredictorArgs) -> tuple[str, Any]:
    """`(key, body)`: `("model", {...})`, `("triton", {...})` or `("containers", [...])`."""
    source = _predictor_source(p)
    if source == "containers":
        return "containers", _custom_predictor(p)
    key, body = _model_or_framework(p, source)
    _model_fields(p, source, body)
    size = _model_size(p)
    downloads = p.storage_uri is not None and not str(p.storage_uri).startswith(NOT_DOWNLOADED)
    res = container_resources(
        p.gpus, p.cpu, p.memory, model_disk_request(size) if size and downloads else None
    )
    if res:
        body["resources"] = res
    return key, body


def _custom_predictor(p: PredictorArgs) -> Any:
    """A predictor of custom containers: what a model's fields would say belongs on them."""
    for field_name, value in (
        ("gpus", p.gpus),
        ("cpu", p.cpu),
        ("memory", p.memory),
        ("env", p.env),
        ("args", p.args),
        ("storageUri", p.storage_uri),
        ("runtime", p.runtime),
        ("runtimeVersion", p.runtime_version),
        ("protocolVersion", p.protocol_version),
        ("modelFormatVersion", p.model_format_version),
    ):
        if value is not None:
            raise InputError(
                f"{field_name} is set on a predictor with custom containers",
                "set it on the container (ContainerArgs), or use modelFormat / framework",
                field_name,
            )
    return containers_body(list(p.containers or ()))


def _model_or_framework(p: PredictorArgs, source: str) -> tuple[str, dict[str, Any]]:
    """`("model", {modelFormat, runtime})` for a ServingRuntime format, else a framework's key."""
    body: dict[str, Any] = {}
    if source == "modelFormat":
        if not isinstance(p.model_format, str) or not re.match(
            r"^[a-z0-9][-a-z0-9_.]*$", p.model_format
        ):
            raise InputError(
                f"model format {show(p.model_format)} is not a format name",
                "e.g. sklearn, huggingface, pytorch, triton",
                "modelFormat",
            )
        fmt: dict[str, Any] = {"name": p.model_format}
        if p.model_format_version is not None:
            fmt["version"] = str(p.model_format_version)
        body["modelFormat"] = fmt
        if p.runtime is not None:
            try:
                validate_dns1123_label(p.runtime)
            except InputError as e:
                raise e.at("runtime") from None
            body["runtime"] = p.runtime
        key = "model"
    else:
        if p.framework not in FRAMEWORKS:
            raise InputError(
                f"framework {show(p.framework)} is not a predefined KServe predictor",
                ", ".join(FRAMEWORKS) + " (or modelFormat for any ServingRuntime)",
                "framework",
            )
        for field_name, value in (
            ("runtime", p.runtime),
            ("modelFormatVersion", p.model_format_version),
        ):
            if value is not None:
                raise InputError(
                    f"{field_name} is set with framework {p.framework!r}",
                    f"{field_name} only with modelFormat",
                    field_name,
                )
        key = str(p.framework)
    return key, body


def _model_fields(p: PredictorArgs, source: str, body: dict[str, Any]) -> None:
    """Where the model is, the runtime's version and protocol, its env and args."""
    fmt_name = p.model_format if source == "modelFormat" else p.framework
    if p.storage_uri is not None:
        if not isinstance(p.storage_uri, str) or "://" not in p.storage_uri:
            raise InputError(
                f"storage URI {show(p.storage_uri)} has no scheme",
                "gs://, s3://, pvc://, oci://, hf://, https:// ...",
                "storageUri",
            )
        body["storageUri"] = p.storage_uri
    elif fmt_name != "huggingface":
        raise InputError(
            f"the predictor ({source} {fmt_name!r}) has no storageUri",
            "storageUri: where the model is (gs://, s3://, pvc://, oci://, ...)",
            "storageUri",
        )
    if p.runtime_version is not None:
        body["runtimeVersion"] = str(p.runtime_version)
    if p.protocol_version is not None:
        if p.protocol_version not in PROTOCOL_VERSIONS:
            raise InputError(
                f"protocol version {show(p.protocol_version)} is not known",
                ", ".join(PROTOCOL_VERSIONS),
                "protocolVersion",
            )
        body["protocolVersion"] = p.protocol_version
    if p.env is not None:
        try:
            body["env"] = env_list(p.env)
        except InputError as e:
            raise e.at("env") from None
    if p.args is not None:
        if isinstance(p.args, str) or not all(isinstance(a, str) for a in p.args):
            raise InputError(
                f"args {show(p.args)} is not a list of strings", "a list of strings", "args"
            )
        body["args"] = list(p.args)


def _model_size(p: PredictorArgs) -> Optional[float]:
    size = p.model_size_gb
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, (int, float)) or not size > 0:
        raise InputError(
            f"model size {show(size)} GB is not a positive number",
            "a number above 0",
            "modelSizeGb",
        )
    return float(size)


def _requests_gpus(impl_key: str, impl: Any) -> bool:
    containers = impl if impl_key == "containers" else [impl]
    return any(
        "nvidia.com/gpu" in requested_resources(c.get("resources") or {}) for c in containers
    )


def _component_body(
    comp_name: str, comp: Any, serverless: bool, hpa_class: bool
) -> tuple[dict[str, Any], Optional[Placement]]:
    """The spec.<component> dict and the effective placement."""
    if isinstance(comp, PredictorArgs):
        impl_key, impl = _predictor_implementation(comp)
    else:
        if not comp.containers:
            raise InputError(
                f"the {comp_name} has no containers", "one or more ContainerArgs", "containers"
            )
        impl_key, impl = "containers", containers_body(list(comp.containers))
    _validate_replicas_and_scaling(comp, serverless, hpa_class)
    placement = effective_placement(
        comp.placement,
        comp.extra_expressions,
        comp.omit_gpu_toleration,
        _requests_gpus(impl_key, impl),
    )
    body: dict[str, Any] = {}
    if comp.min_replicas is not None:
        body["minReplicas"] = comp.min_replicas
    if comp.max_replicas is not None:
        body["maxReplicas"] = comp.max_replicas
    if comp.scale_metric is not None:
        body["scaleMetric"] = comp.scale_metric
    if comp.scale_target is not None:
        body["scaleTarget"] = comp.scale_target
    if comp.service_account_name is not None:
        body["serviceAccountName"] = comp.service_account_name
    body.update(placement_fields(placement))
    if comp.host_ipc:
        body["hostIPC"] = True
    body[impl_key] = impl
    return body, placement


def check_knative_features(
    component: str,
    placement: Optional[Placement],
    features: Optional[Mapping[str, str]],
    host_ipc: bool = False,
) -> None:
    """Refuse a Serverless component whose placement (or hostIPC) sets a pod field Knative's
    flags forbid."""
    if features is None:
        return
    if host_ipc and features.get(HOST_IPC_FLAG, "disabled (unset)") not in _FLAG_ON:
        raise InputError(
            f"the {component} sets hostIPC (a GKE MPS pool needs it), but the Knative feature "
            f"flag {HOST_IPC_FLAG} is {features.get(HOST_IPC_FLAG, 'disabled (unset)')!r}: "
            f"Knative's webhook would refuse it with \"must not set the field(s): "
            'spec.template.spec.hostIPC"',
            f"enable {HOST_IPC_FLAG} in the KnativeServing install, or deploymentMode "
            "RawDeployment",
            f"{component}.hostIPC",
        )
    if placement is None:
        return
    flags = POD_FIELD_FLAGS
    for field_name in ("nodeSelector", "affinity", "tolerations"):
        if field_name not in placement.uses:
            continue
        flag = flags[field_name]
        state = features.get(flag, "disabled (unset)")
        if state not in _FLAG_ON:
            raise InputError(
                f"the {component}'s placement sets {field_name}, but the Knative feature flag "
                f"{flag} is {state!r}: Knative's webhook would refuse the {component} with "
                f'"must not set the field(s): spec.template.spec.{field_name}"',
                f"enable {flag} in the KnativeServing install (knative_features "
                f"{{{flag!r}: 'enabled'}}), or deploymentMode RawDeployment",
                f"{component}.placement",
            )


def validate_inference_service_args(name: str, args: InferenceServiceArgs) -> None:
    """Every input checked before anything is registered (raises InputError)."""
    inference_service_body(name, args)


def _validate_header(name: str, args: InferenceServiceArgs) -> tuple[str, str, str]:
    isvc = _isvc_name(name, args)
    try:
        validate_dns1035_label(isvc)
    except InputError as e:
        raise InputError(
            f"{e.problem}; KServe requires an InferenceService name to match "
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            e.allowed,
            "name",
        ) from None
    namespace = args.namespace or DEFAULT_NAMESPACE
    try:
        validate_dns1123_label(namespace)
    except InputError as e:
        raise e.at("namespace") from None
    for comp_name, _ in _components(args):
        host = f"{isvc}-{comp_name}-{namespace}"
        if len(host) > HOST_LABEL_MAX:
            raise InputError(
                f"the host label {host!r} KServe builds from name, component and namespace is "
                f"{len(host)} characters; KServe fails to reconcile it ('must be no more than 63 "
                "characters')",
                f"len(name) + len(namespace) <= {HOST_LABEL_MAX - len(comp_name) - 2} "
                f"with a {comp_name}",
                "name",
            )
    mode = args.deployment_mode or "Serverless"
    version = args.kserve_version or _pinned_kserve_version()
    try:
        spelled = deployment_mode_spelling(mode, version)
    except InputError as e:
        raise e.at("kserveVersion" if mode in DEPLOYMENT_MODES else "deploymentMode") from None
    return isvc, namespace, spelled


def inference_service_body(name: str, args: InferenceServiceArgs) -> dict[str, Any]:
    """The InferenceService CR as a plain dict (apiVersion, kind, metadata, spec). Raises
    InputError (path relative to the args) for any bad input."""
    return _build(name, args)[0]


def inference_service_placements(name: str, args: InferenceServiceArgs) -> dict[str, Placement]:
    """The effective placement of each component that has one."""
    return _build(name, args)[1]


def inference_service_claims(name: str, args: InferenceServiceArgs) -> list[dict[str, Any]]:
    """The ResourceClaimTemplates of the components that claim their GPUs (`gpu_claim`)."""
    return _build(name, args)[3]


def _build(
    name: str, args: InferenceServiceArgs
) -> tuple[dict[str, Any], dict[str, Placement], list[str], list[dict[str, Any]]]:
    if not isinstance(args.predictor, PredictorArgs):
        raise InputError(
            f"predictor {show(args.predictor)} is not a PredictorArgs",
            "PredictorArgs(...)",
            "predictor",
        )
    check_declared(args, "", keys=True)
    isvc, namespace, spelled = _validate_header(name, args)
    if (args.ingress or "kourier") not in ("kourier", "istio"):
        raise InputError(
            f"ingress {show(args.ingress)} is not known", "kourier or istio", "ingress"
        )
    serverless = is_serverless(args)
    annotations = _annotations(args, serverless, spelled)
    hpa_class = annotations.get("autoscaling.knative.dev/class") == HPA_CLASS
    metadata = cr_metadata(isvc, namespace, args.labels, annotations)
    spec: dict[str, Any] = {}
    placements: dict[str, Placement] = {}
    warnings: list[str] = []
    templates: list[dict[str, Any]] = []
    for comp_name, comp in _components(args):
        spec[comp_name] = _component(
            args,
            isvc,
            namespace,
            comp_name,
            comp,
            serverless,
            hpa_class,
            placements,
            warnings,
            templates,
        )
    return (
        {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec},
        placements,
        warnings,
        templates,
    )


def _annotations(args: InferenceServiceArgs, serverless: bool, spelled: str) -> dict[str, str]:
    """The user's annotations, checked, with those written from the args (deployment mode,
    progress deadline, model size)."""
    annotations: dict[str, str] = {}
    if args.annotations:
        for k, v in dict(args.annotations).items():
            try:
                validate_label_key(k)
            except InputError as e:
                raise e.at(f"annotations.{k}") from None
            if not isinstance(v, str):
                raise InputError(
                    f"annotation {k} value {show(v)} is not a string", "a string", "annotations"
                )
            annotations[k] = v
        if DEPLOYMENT_MODE_ANNOTATION in annotations:
            raise InputError(
                f"annotation {DEPLOYMENT_MODE_ANNOTATION} is set by hand",
                "deploymentMode (the annotation is written from it)",
                "annotations",
            )
    if args.progress_deadline_seconds is not None:
        seconds = args.progress_deadline_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 1:
            raise InputError(
                f"progress_deadline_seconds {show(seconds)} is not a whole number of seconds",
                "an int >= 1",
                "progress_deadline_seconds",
            )
        if not serverless:
            raise InputError(
                "progress_deadline_seconds is a Knative setting; this InferenceService is "
                f"{spelled}",
                "deployment_mode Serverless (or leave progress_deadline_seconds unset)",
                "progress_deadline_seconds",
            )
        annotations[PROGRESS_DEADLINE_ANNOTATION] = f"{seconds}s"
    try:
        size = _model_size(args.predictor)
    except InputError as e:
        raise e.at("predictor") from None
    if size is not None:
        if MODEL_SIZE_ANNOTATION in annotations:
            raise InputError(
                f"annotation {MODEL_SIZE_ANNOTATION} is set by hand next to model_size_gb",
                "model_size_gb (the annotation is written from it)",
                "annotations",
            )
        annotations[MODEL_SIZE_ANNOTATION] = f"{size:g}"
    # Always written: when the cluster default (KServe's `deploymentMode` value) is the other
    # mode, a service that leaves it out silently runs there.
    annotations = {DEPLOYMENT_MODE_ANNOTATION: spelled, **annotations}
    return annotations


def _component(
    args: InferenceServiceArgs,
    isvc: str,
    namespace: str,
    comp_name: str,
    comp: Any,
    serverless: bool,
    hpa_class: bool,
    placements: dict[str, Placement],
    warnings: list[str],
    templates: list[dict[str, Any]],
) -> dict[str, Any]:
    """One component's spec (predictor, transformer, explainer), its placement, resource
    warnings and claim template added to the others'."""
    try:
        body, placement = _component_body(comp_name, comp, serverless, hpa_class)
        impl_key = next(k for k in body if k in ("containers", "model", *FRAMEWORKS))
        template = part_claim(
            body,
            impl_key,
            comp.gpu_claim,
            isvc,
            comp_name,
            namespace,
            _requests_gpus(impl_key, body[impl_key]),
        )
    except InputError as e:
        raise e.at(comp_name) from None
    if template is not None:
        if serverless:
            refuse_serverless_claim(comp_name, comp.gpu_claim)
        templates.append(template)
    if serverless:
        check_knative_features(comp_name, placement, args.knative_features, bool(comp.host_ipc))
    if placement is not None:
        placements[comp_name] = placement
    impl = [body[k] for k in body if k == "containers" or k == "model" or k in FRAMEWORKS]
    for part in impl:
        for c in part if isinstance(part, list) else [part]:
            warnings += [f"{comp_name}: {w}" for w in resource_warnings(c.get("resources") or {})]
    return body


# ---------------------------------------------------------------------------------------------
# Component
# ---------------------------------------------------------------------------------------------


class InferenceService(pulumi.ComponentResource):
    """One KServe InferenceService, its components placed on node pools.

    In Serverless mode pass `opts=ResourceOptions(depends_on=[knative.ready])` and
    `knative_features=knative.features` so that flags are checked and installed first.
    """

    # Outputs (the component schema other languages see).
    name: pulumi.Output[str]
    """metadata.name of the InferenceService."""
    namespace: pulumi.Output[str]
    """Its namespace."""
    url: pulumi.Output[str]
    """The in-cluster address KServe gives it (`status.address.url`, see `service_url`)."""

    def __init__(
        self, name: str, args: InferenceServiceArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            body, placements, warnings, templates = _build(name, args)
        except InputError as e:
            raise e.at(f"InferenceService({name!r})") from None
        super().__init__("gpu-inference:index:InferenceService", name, None, opts)
        # Plain Python attributes, known before deploy (not schema outputs).
        self.manifest: dict[str, Any] = body
        self.component_placements: dict[str, Placement] = placements
        self.isvc_name = body["metadata"]["name"]
        self.isvc_namespace = body["metadata"]["namespace"]
        for w in warnings:
            pulumi.log.warn(f"InferenceService({name!r}): {w}", resource=self)
        # Each claiming component's template, before the pods that name it.
        self.claim_templates = [
            claim_template(f"{name}-{t['metadata']['name']}", t, self) for t in templates
        ]
        self.cr = k8s.apiextensions.CustomResource(
            name,
            api_version=API_VERSION,
            kind=KIND,
            metadata=owned(body["metadata"]),
            spec=body["spec"],
            opts=create_opts(self, self.claim_templates),
        )
        self.name = pulumi.Output.from_input(self.isvc_name)
        self.namespace = pulumi.Output.from_input(self.isvc_namespace)
        address = service_url(
            self.isvc_name,
            self.isvc_namespace,
            is_serverless(args),
            args.transformer is not None,
            args.ingress or "kourier",
        )
        # The in-cluster address KServe gives the InferenceService (status.address.url); the
        # external URL depends on the ingress domain and is known only after deploy.
        self.url = self.cr.id.apply(lambda _: address)
        self.register_outputs({"name": self.name, "namespace": self.namespace, "url": self.url})
