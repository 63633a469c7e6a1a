"""The workload sections of the stack config: `inferenceServices[i]` (predictor, transformer,
explainer) and `seldon` (serverConfigs, servers, models).

Each section's keys are its component's Args (`components.serving.inference_service`,
`components.serving.seldon`, derived as `components.model.inputs` says) plus what the stack adds:
where the workload runs (`pool`, or a `placement` of its own), the model source forms of the
predictor, and the pod resources the platform puts on the workload's main container."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Optional

from pydantic import Field, model_validator

from ..model.errors import InputError
from ..model.inputs import class_doc, inputs, stack
from ..model.scheduling import SCHEDULING_STYLES, Toleration
from ..serving.inference_service import (
    SERVERLESS_MODES,
    ExplainerArgs,
    InferenceServiceArgs,
    PredictorArgs,
    TransformerArgs,
)
from ..serving.seldon import SeldonModelArgs, SeldonServerArgs, SeldonServerConfigArgs
from ..serving.workload import EnvValue
from .derive import section_model
from .syntax import ConfigModel, Dns1123, Labels, ModelFormat, StorageUri, TolerationSpec

KSERVE_COMPONENTS = ("predictor", "transformer", "explainer")
KNATIVE_MODES = SERVERLESS_MODES  # the old and the new (KServe >= 0.16) name of Knative's mode
PLACEMENT_HELP = (
    "a pool name or a list of pool names; or a placement of its own: placement: {nodeSelector, "
    "tolerations} (placement: {} runs on any node)"
)
KSERVE_FRAMEWORKS = (
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
)
PROTOCOLS = ("v1", "v2", "grpc-v1", "grpc-v2")


class ModelSource(ConfigModel):
    """`predictor.model`: KServe's model spec (`modelFormat.name`, a ServingRuntime)."""

    format: ModelFormat
    storage_uri: StorageUri
    runtime: Optional[str] = None
    runtime_version: Optional[str] = None
    protocol_version: Optional[Literal[PROTOCOLS]] = None  # type: ignore[valid-type]


class FrameworkSource(ConfigModel):
    """`predictor.framework`: a predefined predictor key (the seeds' `triton:` form)."""

    name: Literal[KSERVE_FRAMEWORKS]  # type: ignore[valid-type]
    storage_uri: StorageUri
    runtime_version: Optional[str] = None
    protocol_version: Optional[Literal[PROTOCOLS]] = None  # type: ignore[valid-type]


class PlacementSpec(ConfigModel):
    """A workload's own scheduling instead of a pool's: the pod gets exactly this nodeSelector and
    these tolerations (seed 001's selector on a label the user names, tolerations alone, or
    `placement: {}` for a pod that may run on any node). The workload's `extraExpressions` add
    required node affinity, and `schedulingStyle: nodeAffinity` writes the selector as affinity."""

    node_selector: Labels = Field(default_factory=dict)
    tolerations: list[TolerationSpec] = Field(default_factory=list)


@dataclass
class Wiring:
    """Where a workload runs: what the stack adds to every workload's component Args."""

    pool: Optional[Any] = field(
        default=None,
        metadata=stack(
            syntax="pool-ref",
            default="required unless `placement` (Seldon: see notes)",
        ),
    )
    """The pool it runs on: a declared pool's name, or a non-empty list of names in preference
    order, each once (spot first, on-demand next: the placement tolerates each, requires one,
    prefers them in order). The pod gets the pool's placement and the annotation
    `gpu-inference.dev/pool`; a GPU request must fit every listed pool's GPUs per node. Optional
    on a Seldon serverConfig; a Server without `pool` or `placement` takes its serverConfig's."""
    placement: Optional[PlacementSpec] = None
    """Instead of `pool`: scheduling of its own, exactly `{nodeSelector, tolerations}` (a label map
    and a list of tolerations; `{}` runs on any node, seed 001 selects a label you name). Not
    with `pool`, `tolerations` (put them under `placement.tolerations`) or `omitGpuToleration`;
    `extraExpressions` add required node affinity, `schedulingStyle: nodeAffinity` writes the
    selector as affinity. The pod is wired to no pool, so the placement check judges it against
    every pool."""
    scheduling_style: Optional[str] = field(
        default="nodeSelector", metadata=stack(choices=SCHEDULING_STYLES)
    )
    """How the placement selects its pool: `nodeSelector`, or `nodeAffinity` (required, In); a
    pool list always uses node affinity."""
    tolerations: Optional[Sequence[Toleration]] = None
    """Tolerations added to the pool's (not with `placement`, which lists its own), each
    `{key, operator, value, effect, tolerationSeconds}`: operator `Equal` (default) or `Exists`
    (no value; without a key it tolerates every taint), effect empty for every effect."""


@dataclass
class ModelSources:
    """The predictor's model: one of `model`, `framework` or `containers`."""

    model: Optional[ModelSource] = None
    """KServe's model spec: `{format, storageUri, runtime, runtimeVersion, protocolVersion}`;
    `format` (`modelFormat.name`: lowercase letters, digits, `-`, `_` or `.`, e.g. `sklearn`,
    `huggingface`) and `storageUri` required; `protocolVersion` `v1` | `v2` | `grpc-v1` |
    `grpc-v2`. One of `model`, `framework` or `containers`."""
    framework: Optional[FrameworkSource] = None
    """A predefined predictor (the seeds' `triton:` form): `{name, storageUri, runtimeVersion,
    protocolVersion}`, `name` one of sklearn, xgboost, tensorflow, pytorch, triton, onnx,
    huggingface, pmml, lightgbm, paddle; `storageUri` required."""


@dataclass
class PodResources:
    """What the workload's main container asks for (its first container, or `container`)."""

    gpus: Optional[int] = field(default=None, metadata=stack(ge=0))
    """NVIDIA GPUs (request and limit); on a pool, only a GPU pool's, at most its GPUs per node
    (every listed pool's)."""
    cpu: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """CPU request and limit (`"4"`, `"500m"`)."""
    memory: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Memory request and limit (`"16Gi"`)."""


@dataclass
class SeldonPod:
    """What a Seldon server pod's container gets (`container`, default `mlserver`)."""

    gpu_limit: Optional[int] = field(default=None, metadata=stack(ge=0))
    """GPU limit when it must differ from `gpus`: only with `gpus`, at least `gpus` (seed 004
    requests 1 and limits 2; default: `gpus`)."""
    ephemeral_storage: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Ephemeral storage request (model downloads)."""
    container: Optional[str] = field(default="mlserver", metadata=stack(syntax="dns1123"))
    """The container whose resources, image and env are set (on a serverConfig, one of its
    `containers` when it gets resources)."""


@dataclass
class ServerConfigSettings:
    """`seldon.serverConfigs[i]`: a Seldon ServerConfig, the whole server pod."""

    replaces_builtin: Optional[bool] = False
    """A ServerConfig named like Seldon's own (`mlserver`, `triton`) replaces it for every Server
    that uses it: only with this on purpose (refused on another name)."""


@dataclass
class ServerSettings:
    """`seldon.servers[i]`: a Seldon Server on its ServerConfig."""

    image: Optional[str] = None
    """Override of `container`'s image."""
    env: Optional[dict[str, EnvValue]] = field(default=None, metadata=stack(syntax="env"))
    """Extra env of `container`: a string, or `{valueFrom: {secretKeyRef: {name, key}}}`."""


class PlacedRules(ConfigModel):
    """Rules of every workload's placement keys (`Wiring`)."""

    @model_validator(mode="after")
    def _own_placement(self) -> PlacedRules:
        if getattr(self, "placement", None) is None:
            return self
        if getattr(self, "pool", None) is not None:
            raise InputError(
                "pool and placement are both given: a workload is wired to pools, or places itself",
                "pool (the pool's selector and tolerations), or placement: {nodeSelector, "
                "tolerations} of its own",
                "placement",
            )
        if getattr(self, "tolerations", None):
            raise InputError(
                "tolerations next to placement: an own placement lists every toleration the "
                "pod gets",
                "the tolerations under placement.tolerations",
                "tolerations",
            )
        if getattr(self, "omit_gpu_toleration", False):
            raise InputError(
                "omitGpuToleration drops a pool's nvidia.com/gpu toleration; an own placement "
                "has only the tolerations it lists",
                "leave omitGpuToleration out",
                "omitGpuToleration",
            )
        return self

    @property
    def pool_names(self) -> tuple[str, ...]:
        pool = getattr(self, "pool", None)
        if pool is None:
            return ()
        return (pool,) if isinstance(pool, str) else tuple(pool)

    @property
    def gpu_count(self) -> int:
        """GPUs the main container asks for (0 when not given)."""
        return int(getattr(self, "gpus", None) or 0)


class ComponentRules(PlacedRules):
    """Rules of an InferenceService component (predictor, transformer, explainer)."""

    @model_validator(mode="after")
    def _rules(self) -> ComponentRules:
        if getattr(self, "pool", None) is None and getattr(self, "placement", None) is None:
            raise InputError("required key is missing", PLACEMENT_HELP, "pool")
        sources = [
            k for k in ("model", "framework", "containers") if getattr(self, k, None) is not None
        ]
        if not sources:
            raise InputError(
                "no model source: nothing says what to run",
                "exactly one of model, framework or containers",
            )
        if len(sources) > 1:
            raise InputError(
                f"{' and '.join(sources)} are both given",
                "exactly one of model, framework or containers",
                sources[1],
            )
        for i, c in enumerate(getattr(self, "containers", None) or ()):
            if not c.image:
                raise InputError(
                    "required key is missing", "a container image", f"containers[{i}].image"
                )
        low, high = getattr(self, "min_replicas", None), getattr(self, "max_replicas", None)
        if low is not None and high is not None and low > high:
            raise InputError(
                f"minReplicas {low} is above maxReplicas {high}",
                f"minReplicas between 0 and {high}",
                "minReplicas",
            )
        return self


class SeldonRules(PlacedRules):
    """Rules of a Seldon ServerConfig's or Server's pod keys."""

    @model_validator(mode="after")
    def _limit(self) -> SeldonRules:
        limit, gpus = getattr(self, "gpu_limit", None), self.gpu_count
        if limit and not gpus:
            raise InputError(
                f"gpuLimit {limit} is set without gpus",
                "gpus (the request), and gpuLimit only when it must differ",
                "gpuLimit",
            )
        if limit is not None and limit < gpus:
            raise InputError(
                f"gpuLimit {limit} is below the request gpus {gpus}",
                f"gpuLimit >= {gpus}",
                "gpuLimit",
            )
        return self


class InferenceServiceRules(ConfigModel):
    """Rules between an InferenceService's components."""

    @model_validator(mode="before")
    @classmethod
    def _containers_only(cls, data: Any) -> Any:
        """KServe transformers and explainers run containers; a model source is the predictor's."""
        for kind in ("transformer", "explainer"):
            comp = data.get(kind) if isinstance(data, dict) else None
            for key in ("model", "framework"):
                if isinstance(comp, dict) and key in comp:
                    raise InputError(
                        f"a {kind} runs containers, not a {key}", "containers", f"{kind}.{key}"
                    )
            if isinstance(comp, dict) and "modelSizeGb" in comp:
                raise InputError(
                    f"a {kind} loads no model: modelSizeGb is the predictor's",
                    "predictor.modelSizeGb",
                    f"{kind}.modelSizeGb",
                )
        return data

    @property
    def is_knative(self) -> bool:
        """Serverless / Knative: Knative Serving runs it (and its podspec flags apply)."""
        return getattr(self, "deployment_mode", None) in KNATIVE_MODES

    def components(self) -> Iterator[tuple[str, Any]]:
        for kind in KSERVE_COMPONENTS:
            comp = getattr(self, kind, None)
            if comp is not None:
                yield kind, comp


def workload_section(
    name: str, args: type, extras: Sequence[type], base: type[ConfigModel], doc: str = ""
) -> Any:
    """A workload section: its component's Args and what the stack adds (`extras`, each key
    only where the Args have none of that name)."""
    own = inputs(args)
    keys = {i.path for i in own}
    added = [i for e in extras for i in inputs(e) if i.path not in keys]
    return section_model(
        name, [*own, *added], args=args, base=base, doc=doc or class_doc(extras[0])
    )


# Sections derived from a component's Args are made at import time; type checkers see them as Any.
if TYPE_CHECKING:
    Predictor = Any
    Transformer = Any
    Explainer = Any
    InferenceService = Any
    ServerConfig = Any
    Server = Any
    SeldonModel = Any
    Component = Any
else:
    Predictor = workload_section("Predictor", PredictorArgs, (Wiring, ModelSources), ComponentRules)
    Transformer = workload_section(
        "Transformer", TransformerArgs, (Wiring, PodResources), ComponentRules
    )
    Explainer = workload_section("Explainer", ExplainerArgs, (Wiring, PodResources), ComponentRules)
    Component = (Predictor, Transformer, Explainer)

    @dataclass
    class _Components:
        """An InferenceService (`components.serving.inference_service`): a predictor and an
        optional transformer and explainer, each on its pool."""

        predictor: Predictor = field(metadata=stack())
        """The predictor: where it runs (`pool`, or a `placement` of its own) and what it serves
        (`model`, `framework` or `containers`)."""
        transformer: Optional[Transformer] = None
        """A transformer in front of the predictor (containers)."""
        explainer: Optional[Explainer] = None
        """An explainer (containers)."""

    InferenceService = workload_section(
        "InferenceService",
        InferenceServiceArgs,
        (_Components,),
        InferenceServiceRules,
        doc=class_doc(_Components),
    )
    ServerConfig = workload_section(
        "ServerConfig",
        SeldonServerConfigArgs,
        (ServerConfigSettings, Wiring, PodResources, SeldonPod),
        SeldonRules,
    )
    Server = workload_section(
        "Server", SeldonServerArgs, (ServerSettings, Wiring, PodResources, SeldonPod), SeldonRules
    )
    SeldonModel = section_model(
        "SeldonModel",
        inputs(SeldonModelArgs),
        args=SeldonModelArgs,
        doc="`seldon.models[i]`: a Seldon Model, placed by its requirements or pinned server.",
    )


class Seldon(ConfigModel):
    """`seldon`: Seldon Core 2 ServerConfigs, Servers and Models in one namespace."""

    namespace: Dns1123 = "seldon-mesh"
    server_configs: list[ServerConfig] = Field(default_factory=list)
    servers: list[Server] = Field(default_factory=list)
    models: list[SeldonModel] = Field(default_factory=list)
