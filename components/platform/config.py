"""The stack config as a typed `Spec`, validated before any resource is registered.

Pure: pydantic v2, imports no Pulumi. `load_spec(config, secret_keys=...)` takes the stack's config
as a mapping of full keys (`gpu-inference:pools`) to parsed values and returns a `Spec`, or raises
ONE `InputError` whose path is the full key path (`gpu-inference:inferenceServices[0].predictor.pool`)
and whose message says what was given and what is allowed.

Two passes:
1. shape (pydantic): unknown keys, wrong types, missing keys, allowed values, name / label / taint /
   quantity syntax, and checks local to one object (minNodes > maxNodes, exactly one model source);
2. cross-section (`_Checker`): what depends on the provider, the catalog, other sections
   (pool references, GPUs per node, Knative flags, Seldon references, secrets). It also fills in
   the defaults that depend on other sections (`_Checker` is their ONE place; the others are the
   field defaults below). docs/config-reference.md lists every key.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from ..model import catalog
from ..model.errors import InputError, show
from ..model.identity import GSA_EMAIL, validate_workload_identity
from ..model.knative_features import KNATIVE_FEATURE_VALUES, KNATIVE_FEATURES, POD_FIELD_FLAGS
from ..model.scheduling import (
    EFFECTS_FROM_CLOUD,
    LABEL_KEY_RULE,
    LABEL_VALUE_RULE,
    TAINT_EFFECTS,
    NodeSelectorRequirement,
    Taint,
    Toleration,
    label_key_problem,
    label_value_problem,
    parse_quantity,
    validate_dns1035_label,
    validate_dns1123_label,
    validate_dns1123_subdomain,
)

NAMESPACE = "gpu-inference"
PROVIDERS = ("gke", "eks", "existing")
# Config namespaces that configure Pulumi's own providers, not this program: a stack file may hold
# them (`gcp:project`, `aws:region`), and load_spec leaves them alone.
PROVIDER_NAMESPACES = ("gcp", "aws", "kubernetes", "pulumi")

POOL_NAME_MAX = 40  # GKE node pool names are at most 40 characters; EKS allows more.
SERVER_NAME_MAX = 52  # a StatefulSet's pods get label `controller-revision-hash: <name>-<hash>`,
# which must fit a 63-character label value (kubernetes/kubernetes#64023): Seldon Servers are
# StatefulSets.
KSERVE_COMPONENTS = ("predictor", "transformer", "explainer")
# KServe's webhook only checks the name's format (`[a-z]([-a-z0-9]*[a-z0-9])?`, kserve
# pkg/apis/serving/v1beta1/inference_service_validation.go `IsvcNameFmt`); the length limit bites
# later, in the controller, which builds the host label `<name>-<component>-<namespace>` and fails
# to reconcile when it is longer than a 63-character DNS label (kserve/kserve#4807, "failed
# creating host name ... must be no more than 63 characters"). We refuse it up front.
HOST_LABEL_MAX = 63

DEPLOYMENT_MODES = ("Serverless", "RawDeployment", "Knative", "Standard")
KNATIVE_MODES = ("Serverless", "Knative")  # the old and the new (KServe >= 0.16) name
KNATIVE_PODSPEC_FLAGS = POD_FIELD_FLAGS
SELDON_BUILTIN_SERVER_CONFIGS = ("mlserver", "triton")
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
# KServe's storage initializer (plus the schemes newer releases added).
STORAGE_SCHEMES = (
    "gs://",
    "s3://",
    "pvc://",
    "file://",
    "https://",
    "http://",
    "hdfs://",
    "webhdfs://",
    "oci://",
    "hf://",
)
EKS_AMI_TYPES = (
    "AL2023_x86_64_NVIDIA",
    "AL2023_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA",
    "AL2_x86_64_GPU",
    "AL2023_x86_64_STANDARD",
    "AL2023_ARM_64_STANDARD",
    "AL2023_x86_64_NEURON",
    "BOTTLEROCKET_x86_64",
    "BOTTLEROCKET_ARM_64",
    "AL2_x86_64",
    "AL2_ARM_64",
    "CUSTOM",
)
EKS_GPU_AMI_TYPES = tuple(a for a in EKS_AMI_TYPES if a.endswith(("_NVIDIA", "_GPU")))

_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$")
_MACHINE_TYPE = re.compile(r"^[a-z][a-z0-9]*-[a-z0-9-]+$")
_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")


# ---------------------------------------------------------------------------------------------
# Field types: each raises InputError (pydantic wraps it; `_from_validation_error` unwraps it)
# ---------------------------------------------------------------------------------------------


def _pool_name(v: str) -> str:
    return validate_dns1123_label(v, max_length=POOL_NAME_MAX)


def _dns1123(v: str) -> str:
    return validate_dns1123_label(v)


def _dns1035(v: str) -> str:
    return validate_dns1035_label(v)


def _server_name(v: str) -> str:
    return validate_dns1123_label(v, max_length=SERVER_NAME_MAX)


def _label_key(v: str) -> str:
    problem = label_key_problem(v)
    if problem:
        raise InputError(problem, LABEL_KEY_RULE)
    return v


def _label_value(v: str) -> str:
    problem = label_value_problem(v)
    if problem:
        raise InputError(problem, LABEL_VALUE_RULE)
    return v


def _labels(v: dict[str, str]) -> dict[str, str]:
    for key, value in v.items():
        for problem, rule in (
            (label_key_problem(key), LABEL_KEY_RULE),
            (label_value_problem(value), LABEL_VALUE_RULE),
        ):
            if problem:
                raise InputError(problem, rule, _key_path(key))
    return v


def _effect(v: str) -> str:
    if v in TAINT_EFFECTS:
        return v
    hint = ""
    if v in EFFECTS_FROM_CLOUD:
        hint = f"; that is the cloud API's spelling, write {EFFECTS_FROM_CLOUD[v]!r}"
    else:
        close = [e for e in TAINT_EFFECTS if e.lower() == str(v).lower()]
        if close:
            hint = f"; did you mean {close[0]!r}?"
    raise InputError(
        f"effect {show(v)} is not a Kubernetes taint effect{hint}", ", ".join(TAINT_EFFECTS)
    )


def _quantity(v: Any) -> Any:
    parse_quantity(v)
    return v


def _version(v: str) -> str:
    if not _VERSION.match(v):
        raise InputError(
            f"{show(v)} is not a version", "a release version like 'v1.16.0' or '0.15.2'"
        )
    return v


def _storage_uri(v: str) -> str:
    if not v.startswith(STORAGE_SCHEMES) or v.endswith("://"):
        raise InputError(
            f"{show(v)} is not a storage URI KServe / Seldon can fetch",
            "a URI starting with " + ", ".join(STORAGE_SCHEMES),
        )
    return v


def _env(v: dict[str, str]) -> dict[str, str]:
    for name in v:
        if not _ENV_NAME.match(name):
            raise InputError(
                f"{show(name)} is not an environment variable name",
                "letters, digits, '_', '-' or '.', not starting with a digit",
                _key_path(name),
            )
    return v


def _pool_ref(v: Any) -> Any:
    """A pool name, or a non-empty list of pool names in preference order (no duplicates)."""
    if isinstance(v, str):
        if not v:
            raise InputError("the pool name is empty", "a pool name, or a list of pool names")
        return v
    if isinstance(v, list):
        if not v:
            raise InputError(
                "the pool list is empty", "one pool name, or pool names in preference order"
            )
        for i, name in enumerate(v):
            if not isinstance(name, str) or not name:
                raise InputError(f"{show(name)} is not a pool name", "a pool name", f"[{i}]")
        for i, name in enumerate(v):
            if name in v[:i]:
                raise InputError(
                    f"pool {name!r} is listed twice",
                    "each pool once, in preference order",
                    f"[{i}]",
                )
        return v
    raise InputError(
        f"expected a pool name or a list of pool names, got {show(v)}",
        "a pool name, or a list of pool names in preference order (spot first, on-demand next)",
    )


PoolName = Annotated[str, AfterValidator(_pool_name)]
Dns1123 = Annotated[str, AfterValidator(_dns1123)]
Dns1035 = Annotated[str, AfterValidator(_dns1035)]
ServerName = Annotated[str, AfterValidator(_server_name)]
LabelKey = Annotated[str, AfterValidator(_label_key)]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]
Effect = Annotated[str, AfterValidator(_effect)]
Quantity = Annotated[Any, AfterValidator(_quantity)]
Version = Annotated[str, AfterValidator(_version)]
StorageUri = Annotated[str, AfterValidator(_storage_uri)]
Env = Annotated[dict[str, str], AfterValidator(_env)]
PoolRef = Annotated[Any, AfterValidator(_pool_ref)]
Int = Annotated[int, Field(strict=True)]
Bool = Annotated[bool, Field(strict=True)]
SchedulingStyle = Literal["nodeSelector", "nodeAffinity"]


def _key_path(key: str) -> str:
    """A map key as a path segment: `.key`, or `["key"]` when it holds '.' or '/'."""
    return f".{key}" if re.match(r"^[A-Za-z0-9_-]+$", key) else f"[{json.dumps(key)}]"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=False)


# ---------------------------------------------------------------------------------------------
# cluster
# ---------------------------------------------------------------------------------------------


class WorkloadIdentity(_Model):
    """The cloud identity model namespaces' ServiceAccounts are bound to (no storage keys)."""

    gcp_service_account: Optional[str] = None  # GKE Workload Identity: a Google SA email
    aws_role_arn: Optional[str] = None  # EKS IRSA: an IAM role ARN

    @model_validator(mode="after")
    def _one_identity(self) -> WorkloadIdentity:
        validate_workload_identity(self.gcp_service_account, self.aws_role_arn)
        return self


# Keys of `cluster` that only one provider takes.
CLUSTER_KEYS_BY_PROVIDER: dict[str, tuple[str, ...]] = {
    "gke": ("location", "project", "create", "releaseChannel", "nodeServiceAccount"),
    "eks": ("region", "subnetIds"),
    "existing": ("kubeconfig", "context"),
}
CLUSTER_REQUIRED_BY_PROVIDER: dict[str, tuple[str, ...]] = {
    "gke": ("name", "location"),
    "eks": ("name",),
    "existing": (),
}


class Cluster(_Model):
    provider: Literal["gke", "eks", "existing"]
    name: Optional[str] = None  # the cluster's name (gke, eks: required)
    location: Optional[str] = None  # gke: region or zone
    project: Optional[str] = None  # gke: defaults to the gcp:project config
    region: Optional[str] = None  # eks: defaults to the aws:region config
    create: Optional[Bool] = None  # gke: make a small regional cluster (resolved: False)
    release_channel: Optional[Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"]] = None
    subnet_ids: Optional[Annotated[list[str], Field(min_length=1)]] = None  # eks
    kubeconfig: Optional[str] = None  # existing: path or content; default: ambient
    context: Optional[str] = None  # existing
    # Whether the ExtendedResourceToleration admission plugin is on. resolved: True on gke/eks
    # (they enable it; false is refused there), False on existing (upstream default: off).
    extended_resource_toleration: Optional[Bool] = None
    workload_identity: Optional[WorkloadIdentity] = None
    node_service_account: Optional[str] = None  # gke: dedicated node SA email

    @model_validator(mode="after")
    def _provider_keys(self) -> Cluster:
        given = {to_camel(f) for f in self.model_fields_set}
        for provider, keys in CLUSTER_KEYS_BY_PROVIDER.items():
            if provider == self.provider:
                continue
            for key in keys:
                if key in given:
                    raise InputError(
                        f"key {key!r} is for provider {provider!r}, this cluster's provider is "
                        f"{self.provider!r}",
                        f"for {self.provider}: " + ", ".join(_cluster_keys(self.provider)),
                        key,
                    )
        for key in CLUSTER_REQUIRED_BY_PROVIDER[self.provider]:
            if getattr(self, _snake(key)) in (None, ""):
                raise InputError(
                    f"required key is missing (provider {self.provider!r} needs it)",
                    _CLUSTER_KEY_HELP[key],
                    key,
                )
        if self.extended_resource_toleration is False and self.provider != "existing":
            raise InputError(
                f"extendedResourceToleration: false, but {self.provider.upper()} enables the "
                "ExtendedResourceToleration admission plugin itself",
                "true, or leave it out (it is only a choice for provider existing)",
                "extendedResourceToleration",
            )
        if self.release_channel and not self.create:
            raise InputError(
                "releaseChannel is set but create is not true: an existing cluster keeps its "
                "own channel",
                "releaseChannel only with create: true",
                "releaseChannel",
            )
        if self.node_service_account and not GSA_EMAIL.fullmatch(self.node_service_account):
            raise InputError(
                f"{show(self.node_service_account)} is not a Google service account email",
                "NAME@PROJECT.iam.gserviceaccount.com",
                "nodeServiceAccount",
            )
        wi = self.workload_identity
        if wi and self.provider == "gke" and wi.aws_role_arn:
            raise InputError(
                "awsRoleArn is for EKS (IRSA); this cluster is GKE",
                "gcpServiceAccount",
                "workloadIdentity.awsRoleArn",
            )
        if wi and self.provider == "eks" and wi.gcp_service_account:
            raise InputError(
                "gcpServiceAccount is for GKE Workload Identity; this cluster is EKS",
                "awsRoleArn",
                "workloadIdentity.gcpServiceAccount",
            )
        return self


_CLUSTER_KEY_HELP = {
    "name": "the cluster's name",
    "location": "a GCP region ('us-central1') or zone ('us-central1-a')",
}


def _cluster_keys(provider: str) -> list[str]:
    others = {k for p, ks in CLUSTER_KEYS_BY_PROVIDER.items() if p != provider for k in ks}
    return [a for a in _aliases(Cluster) if a not in others]


def _snake(alias: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), alias)


def _aliases(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


# ---------------------------------------------------------------------------------------------
# pools
# ---------------------------------------------------------------------------------------------


class TaintSpec(_Model):
    key: LabelKey
    value: Annotated[str, AfterValidator(_label_value)] = ""
    effect: Effect = "NoSchedule"

    @property
    def taint(self) -> Taint:
        return Taint(self.key, self.value, self.effect)


class TolerationSpec(_Model):
    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Optional[Effect] = None  # empty: every effect
    toleration_seconds: Optional[Int] = None

    @model_validator(mode="after")
    def _rules(self) -> TolerationSpec:
        if self.key:
            _label_key_at(self.key, "key")
        elif self.operator != "Exists":
            raise InputError(
                "a toleration without a key must use operator 'Exists' (it then tolerates every "
                "taint)",
                "a key, or operator 'Exists' without a key",
                "key",
            )
        if self.operator == "Exists" and self.value:
            raise InputError(
                f"operator 'Exists' takes no value, got {show(self.value)}",
                "operator 'Exists' without a value, or operator 'Equal' with the value",
                "value",
            )
        if self.operator == "Equal" and label_value_problem(self.value):
            raise InputError(str(label_value_problem(self.value)), LABEL_VALUE_RULE, "value")
        if self.toleration_seconds is not None and self.effect != "NoExecute":
            raise InputError(
                "tolerationSeconds is set but the effect is not 'NoExecute'",
                "tolerationSeconds only with effect 'NoExecute'",
                "tolerationSeconds",
            )
        return self

    @property
    def toleration(self) -> Toleration:
        return Toleration(
            self.key, self.operator, self.value, self.effect or "", self.toleration_seconds
        )


def _label_key_at(key: str, path: str) -> None:
    problem = label_key_problem(key)
    if problem:
        raise InputError(problem, LABEL_KEY_RULE, path)


class ExpressionSpec(_Model):
    """An extra required node-affinity expression (seed 004's `Gt` on the GPU count)."""

    key: LabelKey
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _rules(self) -> ExpressionSpec:
        try:
            NodeSelectorRequirement(self.key, self.operator, tuple(self.values))
        except InputError as e:
            raise InputError(e.problem, e.allowed, "values") from None
        return self

    @property
    def requirement(self) -> NodeSelectorRequirement:
        return NodeSelectorRequirement(self.key, self.operator, tuple(self.values))


# Keys of a pool that only one provider takes (others: every provider).
POOL_KEYS_BY_PROVIDER: dict[str, tuple[str, ...]] = {
    "gke": ("machineType", "nodeLocations", "gpuDriverVersion"),
    "eks": ("instanceTypes", "amiType", "capacityType"),
    "existing": ("nodes", "presentLabels"),
}
POOL_REQUIRED_BY_PROVIDER = {"gke": "machineType", "eks": "instanceTypes", "existing": "nodes"}
POOL_NOT_ON_EXISTING = ("diskSizeGb", "minNodes", "maxNodes")


class Pool(_Model):
    name: PoolName
    accelerator: Optional[str] = None  # GPU pool when set (or gpusPerNode); gke: catalog name
    gpus_per_node: Optional[Annotated[int, Field(strict=True, ge=1)]] = None
    machine_type: Optional[str] = None  # gke
    instance_types: Optional[Annotated[list[str], Field(min_length=1)]] = None  # eks
    nodes: Optional[Annotated[list[str], Field(min_length=1)]] = None  # existing: node names
    ami_type: Optional[Literal[EKS_AMI_TYPES]] = None  # type: ignore[valid-type]  # eks
    min_nodes: Annotated[int, Field(strict=True, ge=0)] = 0
    max_nodes: Optional[Annotated[int, Field(strict=True, ge=0)]] = None  # gke/eks: required
    spot: Bool = False
    capacity_type: Optional[Literal["ON_DEMAND", "SPOT"]] = None  # eks
    labels: Labels = Field(default_factory=dict)
    # existing: labels the nodes already carry (node-feature-discovery, GPU feature discovery):
    # selectable and known to the placement check, never patched.
    present_labels: Labels = Field(default_factory=dict)
    taints: list[TaintSpec] = Field(default_factory=list)
    select_labels: Optional[Annotated[list[LabelKey], Field(min_length=1)]] = None
    disk_size_gb: Optional[Annotated[int, Field(strict=True, ge=10)]] = None
    node_locations: Optional[Annotated[list[str], Field(min_length=1)]] = None  # gke zones
    gpu_driver_version: Optional[Literal["DEFAULT", "LATEST", "INSTALLATION_DISABLED"]] = None

    @model_validator(mode="after")
    def _rules(self) -> Pool:
        if self.max_nodes == 0:
            raise InputError(
                "maxNodes is 0: the pool could never have a node",
                "maxNodes >= 1 (minNodes 0 lets it scale to zero)",
                "maxNodes",
            )
        if self.max_nodes is not None and self.min_nodes > self.max_nodes:
            raise InputError(
                f"minNodes {self.min_nodes} is above maxNodes {self.max_nodes}",
                f"minNodes between 0 and {self.max_nodes}",
                "minNodes",
            )
        if self.spot and self.capacity_type == "ON_DEMAND":
            raise InputError(
                "spot: true conflicts with capacityType: ON_DEMAND; for spot with an on-demand "
                "fallback declare two pools and give the workload both, spot first",
                "spot: true (or capacityType: SPOT), or capacityType: ON_DEMAND without spot",
                "capacityType",
            )
        seen: dict[tuple[str, str], int] = {}
        for i, t in enumerate(self.taints):
            if (t.key, t.effect) in seen:
                raise InputError(
                    f"taint {t.key}:{t.effect} is declared twice (taints[{seen[t.key, t.effect]}] "
                    "and this one); Kubernetes keeps one taint per key and effect",
                    "each key + effect once",
                    f"taints[{i}]",
                )
            seen[t.key, t.effect] = i
        if self.select_labels:
            for i, k in enumerate(self.select_labels):
                if k in self.select_labels[:i]:
                    raise InputError(
                        f"label key {k!r} is listed twice", "each key once", f"selectLabels[{i}]"
                    )
        return self

    @property
    def is_gpu(self) -> bool:
        """A GPU pool sets `accelerator` or `gpusPerNode`; a CPU pool neither."""
        return self.accelerator is not None or self.gpus_per_node is not None

    @property
    def gpus(self) -> int:
        """GPUs per node (0 for a CPU pool); resolved from the catalog when not given."""
        return self.gpus_per_node or 0

    @property
    def size_range(self) -> tuple[int, int]:
        """(fewest, most) nodes: minNodes..maxNodes, or the listed nodes for existing pools."""
        if self.nodes is not None:
            return len(self.nodes), len(self.nodes)
        return self.min_nodes, self.max_nodes or 0

    @property
    def is_spot(self) -> bool:
        return self.spot or self.capacity_type == "SPOT"

    @property
    def taint_list(self) -> list[Taint]:
        return [t.taint for t in self.taints]


# ---------------------------------------------------------------------------------------------
# workloads
# ---------------------------------------------------------------------------------------------


class ModelSource(_Model):
    """`predictor.model`: KServe's model spec (`modelFormat.name`, a ServingRuntime)."""

    format: str
    storage_uri: StorageUri
    runtime: Optional[str] = None
    runtime_version: Optional[str] = None
    protocol_version: Optional[Literal["v1", "v2", "grpc-v1", "grpc-v2"]] = None


class FrameworkSource(_Model):
    """`predictor.<framework>` (the seeds' `triton:` form)."""

    name: Literal[KSERVE_FRAMEWORKS]  # type: ignore[valid-type]
    storage_uri: StorageUri
    runtime_version: Optional[str] = None
    protocol_version: Optional[Literal["v1", "v2", "grpc-v1", "grpc-v2"]] = None


class Container(_Model):
    name: Dns1123
    image: Optional[str] = None  # required for an InferenceService component's containers
    command: Optional[list[str]] = None
    args: Optional[list[str]] = None
    env: Optional[Env] = None


class _Placed(_Model):
    """What every workload has: where it runs and what it asks for."""

    pool: Optional[PoolRef] = None  # a pool name or a list in preference order
    scheduling_style: SchedulingStyle = "nodeSelector"
    gpus: Annotated[int, Field(strict=True, ge=0)] = 0
    cpu: Optional[Quantity] = None
    memory: Optional[Quantity] = None
    extra_expressions: list[ExpressionSpec] = Field(default_factory=list)
    tolerations: list[TolerationSpec] = Field(default_factory=list)  # extra tolerations
    omit_gpu_toleration: Bool = False  # rely on ExtendedResourceToleration for nvidia.com/gpu

    @property
    def pool_names(self) -> tuple[str, ...]:
        if self.pool is None:
            return ()
        return (self.pool,) if isinstance(self.pool, str) else tuple(self.pool)


class Component(_Placed):
    """An InferenceService predictor, transformer or explainer."""

    model: Optional[ModelSource] = None
    framework: Optional[FrameworkSource] = None
    containers: Optional[Annotated[list[Container], Field(min_length=1)]] = None
    env: Optional[Env] = None  # env of the model container
    args: Optional[list[str]] = None  # args of the model container
    min_replicas: Optional[Annotated[int, Field(strict=True, ge=0)]] = None
    max_replicas: Optional[Annotated[int, Field(strict=True, ge=1)]] = None

    @model_validator(mode="after")
    def _rules(self) -> Component:
        if self.pool is None:
            raise InputError(
                "required key is missing", "a pool name or a list of pool names", "pool"
            )
        sources = [k for k in ("model", "framework", "containers") if getattr(self, k) is not None]
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
        for i, c in enumerate(self.containers or ()):
            if not c.image:
                raise InputError(
                    "required key is missing", "a container image", f"containers[{i}].image"
                )
        if (
            self.min_replicas is not None
            and self.max_replicas is not None
            and self.min_replicas > self.max_replicas
        ):
            raise InputError(
                f"minReplicas {self.min_replicas} is above maxReplicas {self.max_replicas}",
                f"minReplicas between 0 and {self.max_replicas}",
                "minReplicas",
            )
        return self


class InferenceService(_Model):
    name: Dns1035  # KServe requires a DNS-1035 label
    namespace: Dns1123 = "models"
    deployment_mode: Optional[Literal[DEPLOYMENT_MODES]] = None  # type: ignore[valid-type]
    # ^ resolved: addons.kserve.defaultDeploymentMode
    kserve_version: Optional[Version] = None  # resolved: addons.kserve.version
    predictor: Component
    transformer: Optional[Component] = None
    explainer: Optional[Component] = None

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
        return data

    @property
    def is_knative(self) -> bool:
        """Serverless / Knative: Knative Serving runs it (and its podspec flags apply)."""
        return self.deployment_mode in KNATIVE_MODES

    def components(self) -> Iterator[tuple[str, Component]]:
        for kind in KSERVE_COMPONENTS:
            comp = getattr(self, kind)
            if comp is not None:
                yield kind, comp


class _SeldonPlaced(_Placed):
    gpu_limit: Optional[Annotated[int, Field(strict=True, ge=0)]] = None  # default: = gpus
    ephemeral_storage: Optional[Quantity] = None
    capabilities: list[str] = Field(default_factory=list)
    container: Dns1123 = "mlserver"  # the container whose resources / image / env are set

    @model_validator(mode="after")
    def _limit(self) -> _SeldonPlaced:
        if self.gpu_limit is not None and self.gpu_limit < self.gpus:
            raise InputError(
                f"gpuLimit {self.gpu_limit} is below the request gpus {self.gpus}",
                f"gpuLimit >= {self.gpus}",
                "gpuLimit",
            )
        return self


class ServerConfig(_SeldonPlaced):
    name: Dns1123
    containers: Annotated[list[Container], Field(min_length=1)]


class Server(_SeldonPlaced):
    name: ServerName
    server_config: Dns1123 = "mlserver"
    replicas: Annotated[int, Field(strict=True, ge=0)] = 1
    image: Optional[str] = None  # override of `container`'s image
    env: Optional[Env] = None  # extra env of `container`


class SeldonModel(_Model):
    name: Dns1123
    storage_uri: StorageUri
    requirements: Optional[list[str]] = None
    server: Optional[str] = None  # pin to this Server
    replicas: Optional[Annotated[int, Field(strict=True, ge=1)]] = None
    memory: Optional[Quantity] = None


class Seldon(_Model):
    namespace: Dns1123 = "seldon-mesh"
    server_configs: list[ServerConfig] = Field(default_factory=list)
    servers: list[Server] = Field(default_factory=list)
    models: list[SeldonModel] = Field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# knative, addons, namespaces
# ---------------------------------------------------------------------------------------------


class Knative(_Model):
    mode: Literal["operator", "patch", "none"] = "operator"
    version: Optional[Version] = None  # default: the Knative component's pinned version
    ingress: Literal["kourier", "istio"] = "kourier"
    features: dict[str, str] = Field(default_factory=dict)  # extra config-features entries
    allow_disabling_podspec_flags: Bool = False
    assume_flags_enabled: Bool = False  # mode none: the cluster's Knative already has the flags

    @model_validator(mode="after")
    def _rules(self) -> Knative:
        for name, value in self.features.items():
            if name not in KNATIVE_FEATURES:
                close = difflib.get_close_matches(name, KNATIVE_FEATURES, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise InputError(
                    f"{show(name)} is not a Knative Serving feature{hint}",
                    ", ".join(KNATIVE_FEATURES),
                    f"features{_key_path(name)}",
                )
            allowed = KNATIVE_FEATURE_VALUES + (
                ("root-allowed",) if name == "secure-pod-defaults" else ()
            )
            if value not in allowed:
                raise InputError(
                    f"{show(value)} is not a value of feature {name!r}",
                    ", ".join(allowed),
                    f"features{_key_path(name)}",
                )
        if self.assume_flags_enabled and self.mode != "none":
            raise InputError(
                f"assumeFlagsEnabled is for mode 'none'; mode {self.mode!r} sets the flags itself",
                "assumeFlagsEnabled only with mode: none",
                "assumeFlagsEnabled",
            )
        if self.features and self.mode == "none":
            raise InputError(
                "features are given but mode is 'none': nothing would apply them",
                "mode operator or patch, or no features",
                "features",
            )
        for flag in KNATIVE_PODSPEC_FLAGS.values():
            if (
                self.features.get(flag, "enabled") != "enabled"
                and not self.allow_disabling_podspec_flags
            ):
                raise InputError(
                    f"{flag} is set to {self.features[flag]!r}; Knative says it cannot safely be "
                    "disabled once enabled, and node scheduling of InferenceServices needs it",
                    f"leave {flag} out (it is enabled), or set allowDisablingPodspecFlags: true",
                    f"features{_key_path(flag)}",
                )
        return self


class KServeAddon(_Model):
    enabled: Bool = True
    version: Optional[Version] = None  # default: the KServe component's pinned version
    default_deployment_mode: Literal[DEPLOYMENT_MODES] = "Serverless"  # type: ignore[valid-type]


class Addon(_Model):
    enabled: Optional[Bool] = None  # resolved per add-on, see _Checker.resolve_addons
    version: Optional[Version] = None  # default: the component's pinned chart version


class Addons(_Model):
    kserve: KServeAddon = Field(default_factory=KServeAddon)
    seldon: Addon = Field(default_factory=Addon)
    nvidia_device_plugin: Addon = Field(default_factory=Addon)
    cert_manager: Addon = Field(default_factory=Addon)


class Namespaces(_Model):
    pod_security: Literal["privileged", "baseline", "restricted"] = "baseline"
    service_account: Dns1123 = "model-reader"
    static_credentials: Optional[dict[str, str]] = None  # values must be Pulumi secrets
    secret_annotations: Optional[dict[str, str]] = None  # e.g. serving.kserve.io/s3-endpoint

    @model_validator(mode="after")
    def _rules(self) -> Namespaces:
        for key in self.static_credentials or {}:
            if not _SECRET_KEY.match(key):
                raise InputError(
                    f"{show(key)} is not a Secret key",
                    "letters, digits, '-', '_' or '.' (e.g. AWS_ACCESS_KEY_ID)",
                    f"staticCredentials{_key_path(key)}",
                )
        if self.static_credentials == {}:
            raise InputError(
                "staticCredentials is empty", "leave it out, or give the keys", "staticCredentials"
            )
        return self


# ---------------------------------------------------------------------------------------------
# Spec
# ---------------------------------------------------------------------------------------------

Workload = Union[Component, Server, ServerConfig]


class Spec(_Model):
    """The whole stack config, validated, with every default filled in."""

    cluster: Cluster
    pools: Annotated[list[Pool], Field(min_length=1)]
    knative: Knative = Field(default_factory=Knative)
    addons: Addons = Field(default_factory=Addons)
    inference_services: list[InferenceService] = Field(default_factory=list)
    seldon: Seldon = Field(default_factory=Seldon)
    namespaces: Namespaces = Field(default_factory=Namespaces)

    @property
    def provider(self) -> str:
        return self.cluster.provider

    @property
    def pools_by_name(self) -> dict[str, Pool]:
        return {p.name: p for p in self.pools}

    def pool(self, name: str) -> Pool:
        """The pool called `name` (KeyError naming the known pools if there is none)."""
        for p in self.pools:
            if p.name == name:
                return p
        raise KeyError(f"no pool {name!r} (pools: {', '.join(p.name for p in self.pools)})")

    def workloads(self) -> Iterator[tuple[str, str, Workload, tuple[str, ...]]]:
        """`(path, kind, workload, pool_names)` for every workload that names pools, in config
        order: InferenceService components (kind predictor / transformer / explainer), Seldon
        serverConfigs with a pool (kind serverConfig) and servers (kind server; pool_names falls
        back to their serverConfig's)."""
        for i, isvc in enumerate(self.inference_services):
            for kind, comp in isvc.components():
                yield f"{NAMESPACE}:inferenceServices[{i}].{kind}", kind, comp, comp.pool_names
        configs = {c.name: c for c in self.seldon.server_configs}
        for i, sc in enumerate(self.seldon.server_configs):
            if sc.pool_names:
                yield f"{NAMESPACE}:seldon.serverConfigs[{i}]", "serverConfig", sc, sc.pool_names
        for i, srv in enumerate(self.seldon.servers):
            names = srv.pool_names
            if not names and srv.server_config in configs:
                names = configs[srv.server_config].pool_names
            yield f"{NAMESPACE}:seldon.servers[{i}]", "server", srv, names

    def to_config(self, namespace: str = NAMESPACE) -> dict[str, Any]:
        """The Spec back as stack config (full keys, camelCase, defaults filled in): what
        `load_spec` reads gives the same Spec again."""
        data = self.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)
        return {f"{namespace}:{section}": value for section, value in data.items()}

    def model_namespaces(self) -> list[str]:
        """Namespaces that hold models (InferenceServices' and Seldon's), in first-use order."""
        out = [isvc.namespace for isvc in self.inference_services]
        if self.seldon.servers or self.seldon.models or self.seldon.server_configs:
            out.append(self.seldon.namespace)
        return list(dict.fromkeys(out))


SECTIONS = tuple(f.alias or n for n, f in Spec.model_fields.items())


def load_spec(
    config: Mapping[str, Any],
    secret_keys: frozenset[str] | set[str] = frozenset(),
    *,
    namespace: str = NAMESPACE,
) -> Spec:
    """Parse and validate a stack's config; raise one `InputError` naming the key path.

    `config` maps full keys (`gpu-inference:pools`) to parsed values (a JSON text is parsed too).
    `secret_keys` holds the full keys (or key paths) whose values were `secure:` in the stack file;
    a static credential must be under one of them (or be a `{secure: ...}` mapping).
    """
    secret = set(secret_keys)
    data: dict[str, Any] = {}
    for full_key, value in config.items():
        ns, colon, key = str(full_key).partition(":")
        if not colon:
            raise InputError(
                f"key {show(full_key)} has no namespace",
                ", ".join(f"{namespace}:{s}" for s in SECTIONS),
                str(full_key),
            )
        if ns != namespace:
            close = difflib.get_close_matches(ns, [namespace], n=1)
            if ns in PROVIDER_NAMESPACES or not close:
                continue  # another package's settings (gcp:project, aws:region, ...)
            hint = f" (did you mean {close[0]!r}?)"
            raise InputError(
                f"key {show(full_key)} is outside this project's namespace {namespace!r}{hint}",
                ", ".join(f"{namespace}:{s}" for s in SECTIONS)
                + "; provider settings under "
                + ", ".join(f"{p}:" for p in PROVIDER_NAMESPACES),
                str(full_key),
            )
        if key not in SECTIONS:
            close = difflib.get_close_matches(key, SECTIONS, n=1)
            hint = f" (did you mean '{namespace}:{close[0]}'?)" if close else ""
            raise InputError(
                f"unknown key {show(full_key)}{hint}",
                ", ".join(f"{namespace}:{s}" for s in SECTIONS),
                str(full_key),
            )
        if isinstance(value, str) and value[:1] in ("{", "["):
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(value)
        data[key] = value
    for missing in ("cluster", "pools"):
        if missing not in data:
            raise InputError(
                "required key is missing",
                "cluster: {provider, ...}" if missing == "cluster" else "a list of pools",
                f"{namespace}:{missing}",
            )
    _unwrap_secure(data, namespace, secret)
    try:
        spec = Spec.model_validate(data)
    except ValidationError as e:
        raise _from_validation_error(e, namespace) from None
    _Checker(spec, namespace, secret).run()
    return spec


def _unwrap_secure(data: dict[str, Any], namespace: str, secret: set[str]) -> None:
    """Static credentials given as `{secure: ciphertext}` (a stack file read directly): keep the
    opaque value and remember the key as secret."""
    ns = data.get("namespaces")
    creds = ns.get("staticCredentials") if isinstance(ns, dict) else None
    if not isinstance(creds, dict):
        return
    for k, v in list(creds.items()):
        if isinstance(v, Mapping) and set(v) == {"secure"}:
            creds[k] = str(v["secure"])
            secret.add(f"{namespace}:namespaces.staticCredentials{_key_path(k)}")


# ---------------------------------------------------------------------------------------------
# pydantic errors -> one InputError
# ---------------------------------------------------------------------------------------------


def _unwrap_type(tp: Any) -> Any:
    """Strip Optional / Annotated down to the type that holds fields or items."""
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin is Union:
            args = [a for a in get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _walk(loc: tuple[Any, ...], namespace: str) -> tuple[str, Any]:
    """The config path of a pydantic `loc`, and the type found at its end."""
    path = namespace
    tp: Any = Spec
    first = True
    for part in loc:
        if part == "[key]":
            continue
        cur = _unwrap_type(tp)
        origin = get_origin(cur)
        if isinstance(part, int):
            path += f"[{part}]"
            tp = get_args(cur)[0] if origin is list and get_args(cur) else Any
        elif isinstance(cur, type) and issubclass(cur, BaseModel):
            path += f":{part}" if first else f".{part}"
            field = next(
                (f for n, f in cur.model_fields.items() if (f.alias or n) == part),
                None,
            )
            tp = field.annotation if field is not None else Any
        elif origin is dict:
            path += _key_path(str(part))
            tp = get_args(cur)[1]
        else:
            path += f".{part}"
            tp = Any
        first = False
    return path, tp


_TYPE_WORDS = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping (key: value)",
    "model_type": "a mapping (key: value)",
    "model_attributes_type": "a mapping (key: value)",
}


def _from_validation_error(err: ValidationError, namespace: str) -> InputError:
    e = err.errors()[0]
    kind, loc, given = e["type"], tuple(e["loc"]), e.get("input")
    ctx = e.get("ctx") or {}
    if kind == "extra_forbidden":
        _parent_path, parent = _walk(loc[:-1], namespace)
        model = _unwrap_type(parent)
        allowed = (
            _aliases(model) if isinstance(model, type) and issubclass(model, BaseModel) else []
        )
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return InputError(
            f"unknown key {show(loc[-1])}{hint}",
            ", ".join(allowed),
            _walk(loc, namespace)[0],
        )
    path, _ = _walk(loc, namespace)
    if kind == "value_error" and isinstance(ctx.get("error"), InputError):
        inner: InputError = ctx["error"]
        return InputError(inner.problem, inner.allowed).at(_join(path, inner.path))
    if kind == "missing":
        return InputError("required key is missing", "", path)
    if kind in _TYPE_WORDS:
        hint = ""
        if kind == "string_type" and isinstance(given, (int, float, bool)):
            hint = " (quote numbers and booleans in YAML)"
        return InputError(f"expected {_TYPE_WORDS[kind]}, got {_shown(given)}{hint}", "", path)
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        options = re.findall(r"'([^']*)'", expected)
        close = [o for o in options if o.lower() == str(given).lower().replace("_", "")]
        close = close or difflib.get_close_matches(str(given), options, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return InputError(f"{_shown(given)} is not a valid value{hint}", ", ".join(options), path)
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return InputError(
            f"the list is empty; at least {n} item{'s' if n != 1 else ''} required",
            f"a list of at least {n}",
            path,
        )
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        op = {
            "greater_than_equal": ">=",
            "greater_than": ">",
            "less_than_equal": "<=",
            "less_than": "<",
        }[kind]
        bound = next(iter(ctx.values()), "")
        return InputError(f"{_shown(given)} is out of range", f"a number {op} {bound}", path)
    if kind == "value_error":
        return InputError(str(ctx.get("error", e["msg"])), "", path)
    return InputError(f"{e['msg']} (got {_shown(given)})", "", path)


def _join(path: str, sub: str) -> str:
    if not sub:
        return path
    return path + sub if sub.startswith(("[", ".")) else f"{path}.{sub}"


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:57] + "..."
    if isinstance(value, bool):
        return "true" if value else "false"
    return show(value)


# ---------------------------------------------------------------------------------------------
# second pass: everything that needs more than one object
# ---------------------------------------------------------------------------------------------


class _Checker:
    def __init__(self, spec: Spec, namespace: str, secret_keys: set[str]) -> None:
        self.spec = spec
        self.ns = namespace
        self.secret_keys = secret_keys

    def p(self, path: str) -> str:
        return f"{self.ns}:{path}"

    def run(self) -> None:
        self.resolve_cluster()
        self.check_pools()
        self.resolve_addons()
        self.check_inference_services()
        self.check_seldon()
        self.check_placements()
        self.check_knative()
        self.check_namespaces()

    # -- defaults that depend on other sections (their ONE place) --------------------------

    def resolve_cluster(self) -> None:
        c = self.spec.cluster
        if c.create is None:
            c.create = False if c.provider == "gke" else None
        if c.extended_resource_toleration is None:
            # GKE enables the ExtendedResourceToleration admission plugin, EKS has since 1.19;
            # upstream Kubernetes (and so most on-prem clusters) does not.
            c.extended_resource_toleration = c.provider in ("gke", "eks")

    def resolve_addons(self) -> None:
        s, a = self.spec, self.spec.addons
        if a.nvidia_device_plugin.enabled is None:
            # GKE installs the NVIDIA driver and device plugin itself.
            a.nvidia_device_plugin.enabled = s.provider != "gke"
        if a.seldon.enabled is None:
            a.seldon.enabled = bool(s.seldon.servers or s.seldon.models or s.seldon.server_configs)
        if a.cert_manager.enabled is None:
            a.cert_manager.enabled = a.kserve.enabled  # KServe's webhooks need certificates
        for isvc in s.inference_services:
            if isvc.deployment_mode is None:
                isvc.deployment_mode = a.kserve.default_deployment_mode
            if isvc.kserve_version is None:
                isvc.kserve_version = a.kserve.version
            for _, comp in isvc.components():
                if comp.min_replicas is None:
                    # Knative scales to zero; RawDeployment cannot (kserve/kserve#3514).
                    comp.min_replicas = 0 if isvc.is_knative else 1

    # -- pools ------------------------------------------------------------------------------

    def check_pools(self) -> None:
        provider = self.spec.provider
        seen: dict[str, int] = {}
        for i, pool in enumerate(self.spec.pools):
            path = self.p(f"pools[{i}]")
            if pool.name in seen:
                raise InputError(
                    f"pool name {pool.name!r} is used twice (pools[{seen[pool.name]}] and here)",
                    "unique pool names",
                    f"{path}.name",
                )
            seen[pool.name] = i
            given = {to_camel(f) for f in pool.model_fields_set}
            for other, keys in POOL_KEYS_BY_PROVIDER.items():
                if other == provider:
                    continue
                for key in keys:
                    if key in given:
                        raise InputError(
                            f"key {key!r} is for {other} pools; this cluster's provider is "
                            f"{provider!r}",
                            f"{provider} pools take {POOL_REQUIRED_BY_PROVIDER[provider]!r}",
                            f"{path}.{key}",
                        )
            required = POOL_REQUIRED_BY_PROVIDER[provider]
            if required not in given:
                raise InputError(
                    f"required key is missing ({provider} pools need it)",
                    _POOL_REQUIRED_HELP[required],
                    f"{path}.{required}",
                )
            if provider == "existing":
                self._existing_pool(pool, path, given)
            else:
                if pool.max_nodes is None:
                    raise InputError(
                        "required key is missing",
                        "the most nodes the pool may scale to",
                        f"{path}.maxNodes",
                    )
                if provider == "gke":
                    self._gke_pool(pool, path)
                else:
                    self._eks_pool(pool, path)

    def _existing_pool(self, pool: Pool, path: str, given: set[str]) -> None:
        if pool.spot:
            raise InputError(
                "spot: true on existing nodes: spot capacity comes from a cloud node pool",
                "spot only on gke or eks pools",
                f"{path}.spot",
            )
        for key in POOL_NOT_ON_EXISTING:
            if key in given:
                raise InputError(
                    f"key {key!r} does not apply to existing nodes (the pool is the listed nodes)",
                    "name, nodes, accelerator, gpusPerNode, labels, presentLabels, taints, selectLabels",
                    f"{path}.{key}",
                )
        for j, node in enumerate(pool.nodes or ()):
            try:
                validate_dns1123_subdomain(node)
            except InputError as e:
                raise e.at(f"{path}.nodes[{j}]") from None
            if node in (pool.nodes or [])[:j]:
                raise InputError(
                    f"node {node!r} is listed twice", "each node once", f"{path}.nodes[{j}]"
                )
        if pool.accelerator is not None:
            problem = label_value_problem(pool.accelerator)
            if problem:
                raise InputError(problem, LABEL_VALUE_RULE, f"{path}.accelerator")
            if pool.gpus_per_node is None:
                raise InputError(
                    "required key is missing: an existing GPU pool must say how many GPUs each "
                    "node has",
                    "gpusPerNode: 1 or more",
                    f"{path}.gpusPerNode",
                )

    def _gke_pool(self, pool: Pool, path: str) -> None:
        mt = pool.machine_type or ""
        if not _MACHINE_TYPE.match(mt):
            raise InputError(
                f"{show(mt)} is not a GCE machine type",
                "e.g. 'g2-standard-8', 'n1-standard-4'",
                f"{path}.machineType",
            )
        attached = catalog.gke_gpus_for_machine(mt)
        if not pool.is_gpu:
            if attached:
                raise InputError(
                    f"machine type {mt!r} comes with {attached[1]} {attached[0]} GPU(s) but the "
                    "pool declares no accelerator, so it would not be a tainted GPU pool",
                    f"accelerator: {attached[0]} (a GPU pool), or a machine type without GPUs",
                    f"{path}.machineType",
                )
            return
        if pool.accelerator is None:
            if attached is None:
                raise InputError(
                    f"gpusPerNode is set but no accelerator, and {mt!r} has no GPUs attached",
                    ", ".join(sorted(catalog.GKE_ACCELERATORS)),
                    f"{path}.accelerator",
                )
            pool.accelerator = attached[0]
        try:
            acc = catalog.gke_accelerator(pool.accelerator)
        except InputError as e:
            raise e.at(f"{path}.accelerator") from None
        counts = acc.counts_for(mt)
        if not counts:
            shapes = sorted(m + "*" if m.endswith("-") else m for m in acc.machines)
            raise InputError(
                f"machine type {mt!r} does not take {acc.name} (machine family and accelerator "
                "do not match)",
                f"{acc.name} runs on " + ", ".join(shapes),
                f"{path}.machineType",
            )
        if pool.gpus_per_node is None:
            pool.gpus_per_node = counts[0]
        elif pool.gpus_per_node not in counts:
            raise InputError(
                f"{mt!r} does not take {pool.gpus_per_node} {acc.name} GPU(s)",
                f"gpusPerNode {' or '.join(str(c) for c in counts)} on {mt}",
                f"{path}.gpusPerNode",
            )

    def _eks_pool(self, pool: Pool, path: str) -> None:
        types = pool.instance_types or []
        for j, t in enumerate(types):
            if not _INSTANCE_TYPE.match(t):
                raise InputError(
                    f"{show(t)} is not an EC2 instance type",
                    "e.g. 'g5.xlarge', 'm6i.large'",
                    f"{path}.instanceTypes[{j}]",
                )
            if t in types[:j]:
                raise InputError(
                    f"instance type {t!r} is listed twice",
                    "each once",
                    f"{path}.instanceTypes[{j}]",
                )
        if not pool.is_gpu:
            for j, t in enumerate(types):
                if t in catalog.AWS_GPU_INSTANCES:
                    inst = catalog.AWS_GPU_INSTANCES[t]
                    raise InputError(
                        f"instance type {t!r} has {inst.gpus} {inst.gpu_model} GPU(s) but the "
                        "pool declares no accelerator / gpusPerNode, so it would not be a "
                        "tainted GPU pool",
                        "a GPU pool (set gpusPerNode or accelerator), or CPU instance types",
                        f"{path}.instanceTypes[{j}]",
                    )
            if pool.ami_type in EKS_GPU_AMI_TYPES:
                raise InputError(
                    f"amiType {pool.ami_type!r} is a GPU AMI on a CPU pool",
                    "a standard AMI type, or leave amiType out",
                    f"{path}.amiType",
                )
            return
        insts = []
        for j, t in enumerate(types):
            try:
                insts.append(catalog.aws_instance(t))
            except InputError as e:
                raise InputError(
                    f"{e.problem}: a GPU pool (it sets accelerator / gpusPerNode) needs GPU "
                    "instance types",
                    e.allowed,
                    f"{path}.instanceTypes[{j}]",
                ) from None
        for j, inst in enumerate(insts):
            first = insts[0]
            if inst.accelerator_label != first.accelerator_label or inst.gpus != first.gpus:
                raise InputError(
                    f"{inst.instance_type!r} ({inst.gpus} {inst.gpu_model}) differs from "
                    f"{first.instance_type!r} ({first.gpus} {first.gpu_model}); one pool's nodes "
                    "must have the same GPU model and count (labels, taints and the check rely on "
                    "it)",
                    "instance types with the same GPU model and count; make another pool for others",
                    f"{path}.instanceTypes[{j}]",
                )
            if pool.ami_type and pool.ami_type != "CUSTOM":
                arm = "ARM_64" in pool.ami_type
                if (inst.arch == "arm64") != arm:
                    raise InputError(
                        f"amiType {pool.ami_type!r} does not run on {inst.instance_type!r} ({inst.arch})",
                        ", ".join(
                            a
                            for a in EKS_GPU_AMI_TYPES
                            if ("ARM_64" in a) == (inst.arch == "arm64")
                        ),
                        f"{path}.amiType",
                    )
        label, count = insts[0].accelerator_label, insts[0].gpus
        if pool.accelerator is not None and pool.accelerator != label:
            raise InputError(
                f"accelerator {pool.accelerator!r} is not the GPU of {insts[0].instance_type!r} "
                f"({insts[0].gpu_model}, label {label!r})",
                f"{label!r}, or leave accelerator out (it comes from the instance types)",
                f"{path}.accelerator",
            )
        if pool.gpus_per_node is not None and pool.gpus_per_node != count:
            raise InputError(
                f"{insts[0].instance_type!r} has {count} GPU(s), not {pool.gpus_per_node}",
                f"gpusPerNode {count}, or leave it out",
                f"{path}.gpusPerNode",
            )
        if pool.ami_type is not None and pool.ami_type not in (*EKS_GPU_AMI_TYPES, "CUSTOM"):
            raise InputError(
                f"amiType {pool.ami_type!r} has no NVIDIA driver; the GPUs would not show up",
                ", ".join(EKS_GPU_AMI_TYPES),
                f"{path}.amiType",
            )
        pool.accelerator, pool.gpus_per_node = label, count

    # -- InferenceServices --------------------------------------------------------------------

    def check_inference_services(self) -> None:
        seen: dict[tuple[str, str], int] = {}
        for i, isvc in enumerate(self.spec.inference_services):
            path = self.p(f"inferenceServices[{i}]")
            key = (isvc.namespace, isvc.name)
            if key in seen:
                raise InputError(
                    f"InferenceService {isvc.name!r} in namespace {isvc.namespace!r} is declared "
                    f"twice (inferenceServices[{seen[key]}] and here)",
                    "unique names per namespace",
                    f"{path}.name",
                )
            seen[key] = i
            for kind, _ in isvc.components():
                host = f"{isvc.name}-{kind}-{isvc.namespace}"
                if len(host) > HOST_LABEL_MAX:
                    room = HOST_LABEL_MAX - len(f"--{kind}")
                    raise InputError(
                        f"name {isvc.name!r} with namespace {isvc.namespace!r} gives the {kind} "
                        f"host label {host!r} of {len(host)} characters; KServe builds "
                        "'<name>-<component>-<namespace>' and it must fit a DNS label "
                        "(kserve/kserve#4807)",
                        f"name and namespace together at most {room} characters",
                        f"{path}.name",
                    )
            if isvc.deployment_mode in ("RawDeployment", "Standard"):
                for kind, comp in isvc.components():
                    if comp.min_replicas == 0:
                        raise InputError(
                            f"minReplicas 0 with deploymentMode {isvc.deployment_mode}: a raw "
                            "Deployment does not scale to zero (kserve/kserve#3514)",
                            "minReplicas >= 1, or deploymentMode Serverless to scale to zero",
                            f"{path}.{kind}.minReplicas",
                        )

    # -- Seldon ------------------------------------------------------------------------------

    def check_seldon(self) -> None:
        sel = self.spec.seldon
        for section, names in (
            ("serverConfigs", [c.name for c in sel.server_configs]),
            ("servers", [s.name for s in sel.servers]),
            ("models", [m.name for m in sel.models]),
        ):
            seen: dict[str, int] = {}
            for i, name in enumerate(names):
                if name in seen:
                    raise InputError(
                        f"name {name!r} is used twice ({section}[{seen[name]}] and here)",
                        "unique names",
                        self.p(f"seldon.{section}[{i}].name"),
                    )
                seen[name] = i
        configs = {c.name: c for c in sel.server_configs}
        for i, sc in enumerate(sel.server_configs):
            names = [c.name for c in sc.containers]
            if (
                sc.gpus or sc.cpu or sc.memory or sc.ephemeral_storage
            ) and sc.container not in names:
                raise InputError(
                    f"container {sc.container!r} (which gets the resources) is not among the "
                    "containers",
                    ", ".join(names),
                    self.p(f"seldon.serverConfigs[{i}].container"),
                )
        for i, srv in enumerate(sel.servers):
            path = self.p(f"seldon.servers[{i}]")
            if (
                srv.server_config not in configs
                and srv.server_config not in SELDON_BUILTIN_SERVER_CONFIGS
            ):
                known = sorted({*configs, *SELDON_BUILTIN_SERVER_CONFIGS})
                raise InputError(
                    f"serverConfig {srv.server_config!r} is not declared and is not built into Seldon",
                    ", ".join(known),
                    f"{path}.serverConfig",
                )
            if srv.pool is None and not (
                srv.server_config in configs and configs[srv.server_config].pool_names
            ):
                raise InputError(
                    "required key is missing: the server has no pool, and its serverConfig names "
                    "none",
                    "a pool name or a list of pool names",
                    f"{path}.pool",
                )
        servers = [s.name for s in sel.servers]
        for i, m in enumerate(sel.models):
            if m.server is not None and m.server not in servers:
                also = " (and has requirements)" if m.requirements else ""
                raise InputError(
                    f"model pins server {m.server!r}{also}, but no server has that name; a "
                    "pinned model fails to load instead of trying another server",
                    (", ".join(servers) or "no servers declared")
                    + (
                        " (or leave server out and match by requirements)" if m.requirements else ""
                    ),
                    self.p(f"seldon.models[{i}].server"),
                )
            for j, r in enumerate(m.requirements or ()):
                if not r:
                    raise InputError(
                        "empty requirement",
                        "a capability name",
                        self.p(f"seldon.models[{i}].requirements[{j}]"),
                    )

    # -- placements: pool references and GPU fit --------------------------------------------

    def check_placements(self) -> None:
        pools = self.spec.pools_by_name
        for path, _kind, w, names in self.spec.workloads():
            own = w.pool is not None
            for j, name in enumerate(names):
                where = f"{path}.pool" + (f"[{j}]" if isinstance(w.pool, list) else "")
                if not own:
                    where = f"{path}.serverConfig"
                pool = pools.get(name)
                if pool is None:
                    raise InputError(
                        f"pool {name!r} does not exist",
                        ", ".join(pools),
                        where,
                    )
                need = max(w.gpus, getattr(w, "gpu_limit", None) or 0)
                if w.gpus and not pool.is_gpu:
                    raise InputError(
                        f"{w.gpus} GPU(s) requested on pool {name!r}, which has no GPUs",
                        "gpus: 0 on a CPU pool, or a GPU pool: "
                        + (
                            ", ".join(p.name for p in self.spec.pools if p.is_gpu)
                            or "none declared"
                        ),
                        f"{path}.gpus",
                    )
                if pool.is_gpu and need > pool.gpus:
                    what = "gpuLimit" if need > w.gpus else "gpus"
                    raise InputError(
                        f"{need} GPU(s) asked for but a node of pool {name!r} has {pool.gpus}"
                        + (" (every pool in the list must fit)" if len(names) > 1 else ""),
                        f"{what} at most {pool.gpus}",
                        f"{path}.{what}",
                    )
            if (
                getattr(w, "omit_gpu_toleration", False)
                and not self.spec.cluster.extended_resource_toleration
            ):
                raise InputError(
                    "omitGpuToleration relies on the ExtendedResourceToleration admission plugin, "
                    "which this cluster does not have (cluster.extendedResourceToleration is false)",
                    "omitGpuToleration: false, or cluster.extendedResourceToleration: true",
                    f"{path}.omitGpuToleration",
                )

    # -- Knative -----------------------------------------------------------------------------

    def uses(self, comp: Component) -> list[str]:
        """The pod spec fields a component's placement sets (close to Placement.uses; the
        placement check has the exact answer)."""
        pools = self.spec.pools_by_name
        listed = [pools[n] for n in comp.pool_names if n in pools]
        used = []
        if (
            comp.scheduling_style == "nodeSelector"
            and len(listed) == 1
            and not comp.extra_expressions
        ):
            used.append("nodeSelector")
        else:
            used.append("affinity")
        tolerations = bool(comp.tolerations) or any(
            [t for t in p.taints if t.effect != "PreferNoSchedule"] for p in listed
        )
        if any(p.is_gpu for p in listed) and not (comp.omit_gpu_toleration and comp.gpus):
            tolerations = True
        if tolerations:
            used.append("tolerations")
        return used

    def check_knative(self) -> None:
        kn = self.spec.knative
        for i, isvc in enumerate(self.spec.inference_services):
            if not isvc.is_knative:
                continue
            path = self.p(f"inferenceServices[{i}]")
            for kind, comp in isvc.components():
                for field in self.uses(comp):
                    flag = KNATIVE_PODSPEC_FLAGS[field]
                    value = kn.features.get(flag)
                    if value is not None and value != "enabled":
                        raise InputError(
                            f"knative.features sets {flag} to {value!r}, but InferenceService "
                            f"{isvc.name!r} ({isvc.deployment_mode}) sets {field} on its {kind}; "
                            "Knative's webhook would refuse it",
                            f"{flag}: enabled (or leave it out), or deploymentMode RawDeployment",
                            self.p(f"knative.features{_key_path(flag)}"),
                        )
                    if kn.mode == "none" and not kn.assume_flags_enabled:
                        raise InputError(
                            f"InferenceService {isvc.name!r} is {isvc.deployment_mode} and its "
                            f"{kind} sets {field}, but knative.mode is 'none', so nothing enables "
                            f"{flag}; Knative's webhook would refuse it",
                            "knative.mode operator or patch; or knative.assumeFlagsEnabled: true "
                            "if the cluster's Knative has the flags; or deploymentMode RawDeployment",
                            f"{path}.deploymentMode",
                        )

    # -- namespaces and secrets --------------------------------------------------------------

    def check_namespaces(self) -> None:
        creds = self.spec.namespaces.static_credentials or {}
        base = self.p("namespaces")
        for key in creds:
            path = f"{base}.staticCredentials{_key_path(key)}"
            prefixes = (self.p("namespaces"), f"{base}.staticCredentials", path)
            if not any(p in self.secret_keys for p in prefixes):
                raise InputError(
                    f"static credential {key!r} is in plain text; it would be stored unencrypted "
                    "in the stack file and the state",
                    "a workload identity (cluster.workloadIdentity, no keys), or the value set "
                    f"with `pulumi config set --secret --path '{base}.staticCredentials.{key}'`",
                    path,
                )


_POOL_REQUIRED_HELP = {
    "machineType": "a GCE machine type, e.g. 'g2-standard-8'",
    "instanceTypes": "a list of EC2 instance types, e.g. ['g5.xlarge']",
    "nodes": "a list of node names",
}
