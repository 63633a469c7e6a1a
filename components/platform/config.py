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
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ..model.errors import InputError, show
from ..model.identity import GSA_EMAIL, validate_workload_identity
from ..model.knative_features import KNATIVE_FEATURES, POD_FIELD_FLAGS, feature_values
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
# The ServerConfigs Seldon Core 2 provides itself ("By default one is provided for Seldon MLServer
# and one for NVIDIA Triton Inference Server": SeldonIO/seldon-core docs-gb/kubernetes/resources/
# serverconfig.md; operator/config/serverconfigs/). One of ours with the same name replaces it.
SELDON_BUILTIN_SERVER_CONFIGS = ("mlserver", "triton")
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

_MODEL_FORMAT = re.compile(r"^[a-z0-9][-a-z0-9_.]*$")
_CAPABILITY = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")
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


def _model_format(v: str) -> str:
    # The InferenceService component's rule for `modelFormat.name` (serving/inference_service.py).
    if not _MODEL_FORMAT.match(v):
        raise InputError(
            f"model format {show(v)} is not a format name",
            "lowercase letters, digits, '-', '_' or '.', e.g. sklearn, huggingface, pytorch",
        )
    return v


def _capabilities(v: list[str]) -> list[str]:
    """Seldon capabilities / requirements: one token each (SELDON_SERVER_CAPABILITIES is a comma
    list), each once; the Seldon components' rule (serving/seldon.py)."""
    for i, c in enumerate(v):
        if not _CAPABILITY.match(c):
            raise InputError(
                f"capability {show(c)} is not valid",
                "letters, digits, '-', '_' or '.', no commas or spaces (e.g. 'model-on-gpu')",
                f"[{i}]",
            )
        if c in v[:i]:
            raise InputError(f"capability {c!r} is listed twice", "each once", f"[{i}]")
    return v


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
Capabilities = Annotated[list[str], AfterValidator(_capabilities)]


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
    "gke": (
        "location",
        "project",
        "create",
        "releaseChannel",
        "nodeServiceAccount",
        "autopilot",
        "gkeMetadata",
    ),
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
    # gke: pools use the GKE metadata server (Workload Identity); false for an existing cluster
    # without Workload Identity, where a GKE_METADATA pool fails to create.
    gke_metadata: Bool = True
    autopilot: Bool = False  # gke: an existing Autopilot cluster (GPU pools make no node pools)

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
        if not self.gke_metadata and self.create:
            raise InputError(
                "gkeMetadata: false, but create: true makes a cluster with Workload Identity, "
                "whose pools use the GKE metadata server",
                "gkeMetadata: false only with create: false (an existing cluster without "
                "Workload Identity)",
                "gkeMetadata",
            )
        if (
            not self.gke_metadata
            and self.workload_identity is not None
            and self.workload_identity.gcp_service_account
        ):
            raise InputError(
                "gkeMetadata: false says the cluster has no Workload Identity, but "
                "workloadIdentity.gcpServiceAccount needs it (pods reach the Google service "
                "account through the GKE metadata server)",
                "one of them: enable Workload Identity on the cluster and drop gkeMetadata, or "
                "drop workloadIdentity.gcpServiceAccount",
                "gkeMetadata",
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


class KarpenterSpec(_Model):
    """`pools[i].karpenter`: the pool is a Karpenter NodePool (+ EC2NodeClass) on EKS, whose
    requirements these keys make (see `components.pools.karpenter`)."""

    gpu_names: Optional[Annotated[list[str], Field(min_length=1)]] = None
    instance_families: Optional[Annotated[list[str], Field(min_length=1)]] = None
    instance_types: Optional[Annotated[list[str], Field(min_length=1)]] = None
    min_gpus: Annotated[int, Field(strict=True, ge=1)] = 1
    max_gpus: Optional[Annotated[int, Field(strict=True, ge=1)]] = None
    capacity_types: Optional[
        Annotated[list[Literal["reserved", "spot", "on-demand"]], Field(min_length=1)]
    ] = None
    node_role: Optional[str] = None
    node_class: Optional[str] = None
    ami_alias: Optional[str] = None
    consolidate_after: Optional[str] = None
    max_total_gpus: Optional[Annotated[int, Field(strict=True, ge=1)]] = None
    weight: Optional[Annotated[int, Field(strict=True, ge=1, le=100)]] = None
    auto_mode: Bool = False  # EKS Auto Mode: eks.amazonaws.com/* keys, its NodeClass


class GpuSharingSpec(_Model):
    """`pools[i].gpuSharing` (gke): containers share each GPU; a node exposes GPUs x clients."""

    strategy: Literal["TIME_SHARING", "MPS"]
    max_clients_per_gpu: Annotated[int, Field(strict=True, ge=2, le=48)]


class ComputeClassSpec(_Model):
    """`pools[i].computeClass`: the pool is a GKE custom ComputeClass (GKE auto-creates its node
    pools) for the pool's accelerator and machine type (see `components.pools.compute_class`)."""

    priorities: Optional[
        Annotated[
            list[Literal["reservation", "on-demand", "flex-start", "spot"]], Field(min_length=1)
        ]
    ] = None
    reservations: Optional[Annotated[list[str], Field(min_length=1)]] = None
    driver_version: Optional[Literal["default", "latest"]] = None
    consolidation_delay_minutes: Optional[Annotated[int, Field(strict=True, ge=1, le=1440)]] = None
    active_migration: Bool = False


# Keys of a pool that only one provider takes (others: every provider).
POOL_KEYS_BY_PROVIDER: dict[str, tuple[str, ...]] = {
    "gke": (
        "machineType",
        "nodeLocations",
        "gpuDriverVersion",
        "computeClass",
        "gpuPartitionSize",
    ),
    "eks": ("instanceTypes", "amiType", "capacityType", "karpenter"),
    "existing": ("nodes", "presentLabels"),
}
POOL_REQUIRED_BY_PROVIDER = {"gke": "machineType", "eks": "instanceTypes", "existing": "nodes"}
POOL_NOT_ON_EXISTING = ("diskSizeGb", "minNodes", "maxNodes", "nodeStartupSeconds")


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
    karpenter: Optional[KarpenterSpec] = None  # eks: a Karpenter NodePool instead of a node group
    # gke: time-sharing / MPS; eks and existing: the device plugin's time-slicing
    gpu_sharing: Optional[GpuSharingSpec] = None
    gpu_partition_size: Optional[str] = None  # gke: MIG profile, e.g. 1g.10gb
    compute_class: Optional[ComputeClassSpec] = None  # gke: a ComputeClass instead of a node pool
    # gke/eks: seconds a node of this pool takes, from scale-up to an allocatable GPU; default
    # `catalog.node_startup_seconds` (900). Serverless InferenceServices scaling to zero on the
    # pool get it as their Knative progress deadline.
    node_startup_seconds: Optional[Annotated[int, Field(strict=True, ge=1)]] = None

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
        """`nvidia.com/gpu` per node (0 for a CPU pool): the GPUs (resolved from the catalog when
        not given) times the clients sharing each GPU and the MIG instances it is cut into."""
        from ..model.catalog import MIG_PROFILES

        shared = self.gpu_sharing.max_clients_per_gpu if self.gpu_sharing else 1
        mig = MIG_PROFILES.get(self.accelerator or "", {}).get(self.gpu_partition_size or "", 1)
        return (self.gpus_per_node or 0) * shared * mig

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

    format: Annotated[str, AfterValidator(_model_format)]
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


class PlacementSpec(_Model):
    """A workload's own scheduling instead of a pool's: the pod gets exactly this nodeSelector and
    these tolerations (seed 001's selector on a label the user names, tolerations alone, or
    `placement: {}` for a pod that may run on any node). The workload's `extraExpressions` add
    required node affinity, and `schedulingStyle: nodeAffinity` writes the selector as affinity."""

    node_selector: Labels = Field(default_factory=dict)
    tolerations: list[TolerationSpec] = Field(default_factory=list)

    @property
    def toleration_list(self) -> list[Toleration]:
        return [t.toleration for t in self.tolerations]


class _Placed(_Model):
    """What every workload has: where it runs and what it asks for."""

    pool: Optional[PoolRef] = None  # a pool name or a list in preference order
    placement: Optional[PlacementSpec] = None  # instead of `pool`: scheduling of its own
    scheduling_style: SchedulingStyle = "nodeSelector"
    gpus: Annotated[int, Field(strict=True, ge=0)] = 0
    cpu: Optional[Quantity] = None
    memory: Optional[Quantity] = None
    extra_expressions: list[ExpressionSpec] = Field(default_factory=list)
    tolerations: list[TolerationSpec] = Field(default_factory=list)  # extra tolerations
    omit_gpu_toleration: Bool = False  # rely on ExtendedResourceToleration for nvidia.com/gpu

    @model_validator(mode="after")
    def _own_placement(self) -> _Placed:
        if self.placement is None:
            return self
        if self.pool is not None:
            raise InputError(
                "pool and placement are both given: a workload is wired to pools, or places itself",
                "pool (the pool's selector and tolerations), or placement: {nodeSelector, "
                "tolerations} of its own",
                "placement",
            )
        if self.tolerations:
            raise InputError(
                "tolerations next to placement: an own placement lists every toleration the "
                "pod gets",
                "the tolerations under placement.tolerations",
                "tolerations",
            )
        if self.omit_gpu_toleration:
            raise InputError(
                "omitGpuToleration drops a pool's nvidia.com/gpu toleration; an own placement "
                "has only the tolerations it lists",
                "leave omitGpuToleration out",
                "omitGpuToleration",
            )
        return self

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
    # predictor: the model's weights in GB, checked against the GPUs' memory (placement GI019)
    model_size_gb: Optional[Annotated[float, Field(gt=0)]] = None

    @model_validator(mode="after")
    def _rules(self) -> Component:
        if self.pool is None and self.placement is None:
            raise InputError("required key is missing", PLACEMENT_HELP, "pool")
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
        return self.deployment_mode in KNATIVE_MODES

    def components(self) -> Iterator[tuple[str, Component]]:
        for kind in KSERVE_COMPONENTS:
            comp = getattr(self, kind)
            if comp is not None:
                yield kind, comp


class _SeldonPlaced(_Placed):
    gpu_limit: Optional[Annotated[int, Field(strict=True, ge=0)]] = None  # default: = gpus
    ephemeral_storage: Optional[Quantity] = None
    capabilities: Capabilities = Field(default_factory=list)
    container: Dns1123 = "mlserver"  # the container whose resources / image / env are set

    @model_validator(mode="after")
    def _limit(self) -> _SeldonPlaced:
        if self.gpu_limit and not self.gpus:
            raise InputError(
                f"gpuLimit {self.gpu_limit} is set without gpus",
                "gpus (the request), and gpuLimit only when it must differ",
                "gpuLimit",
            )
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
    # A ServerConfig named like Seldon's own (mlserver, triton) replaces it: only on purpose.
    replaces_builtin: Bool = False


class Server(_SeldonPlaced):
    name: ServerName
    server_config: Dns1123 = "mlserver"
    replicas: Annotated[int, Field(strict=True, ge=0)] = 1
    image: Optional[str] = None  # override of `container`'s image
    env: Optional[Env] = None  # extra env of `container`


class SeldonModel(_Model):
    name: Dns1123
    storage_uri: StorageUri
    requirements: Optional[Capabilities] = None
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
    chart: Optional[str] = None  # mode operator: a local knative-operator chart (dir or .tgz)

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
            allowed = feature_values(name)
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


class KServeCharts(_Model):
    """Local charts (a directory or .tgz each) instead of KServe's registry: all, or none."""

    crd: str
    controller: str
    runtimes: str  # kserve-runtime-configs (KServe v0.17 on; unused before)


class KServeAddon(_Model):
    enabled: Bool = True
    version: Optional[Version] = None  # default: the KServe component's pinned version
    default_deployment_mode: Literal[DEPLOYMENT_MODES] = "Serverless"  # type: ignore[valid-type]
    chart: Optional[KServeCharts] = None  # local charts; `version` still says which KServe


class Addon(_Model):
    enabled: Optional[Bool] = None  # resolved per add-on, see _Checker.resolve_addons
    version: Optional[Version] = None  # default: the component's pinned chart version
    chart: Optional[str] = None  # a local chart (dir or .tgz) instead of the repository's


class SeldonCharts(_Model):
    """Local charts (a directory or .tgz each) instead of Seldon's repository: all three."""

    crds: str
    setup: str
    runtime: str


class SeldonAddon(_Model):
    enabled: Optional[Bool] = None  # resolved: see _Checker.resolve_addons
    version: Optional[Version] = None  # default: the component's pinned chart version
    chart: Optional[SeldonCharts] = None  # local charts instead of the repository's


class KarpenterCharts(_Model):
    """Local charts (a directory or .tgz each) instead of Karpenter's registry: both."""

    crd: str  # karpenter-crd
    controller: str  # karpenter


class KarpenterAddon(_Model):
    """`addons.karpenter` (eks): the Karpenter controller from its charts (see
    `components.serving.karpenter_install`); off unless enabled. Its IAM roles are not made here."""

    enabled: Bool = False
    version: Optional[Version] = None  # chart version (`1.14.1`); default: the pinned one
    chart: Optional[KarpenterCharts] = None  # local charts instead of the registry's
    namespace: Dns1123 = "kube-system"
    role_arn: Optional[str] = None  # the controller's IAM role (IRSA); required unless podIdentity
    pod_identity: Bool = False  # the role comes from an EKS Pod Identity association
    interruption_queue: Optional[str] = None  # SQS queue name: spot interruption handling
    system_pools: Optional[Annotated[list[str], Field(min_length=1)]] = None  # pools it runs on
    node_groups: Optional[Annotated[list[str], Field(min_length=1)]] = None  # EKS node groups


class Addons(_Model):
    kserve: KServeAddon = Field(default_factory=KServeAddon)
    seldon: SeldonAddon = Field(default_factory=SeldonAddon)
    nvidia_device_plugin: Addon = Field(default_factory=Addon)
    cert_manager: Addon = Field(default_factory=Addon)
    karpenter: KarpenterAddon = Field(default_factory=KarpenterAddon)


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
    # Where workloads read from `workloadFiles` came from (a `WorkloadSources`, set by the stack
    # program's `load_stack_spec`): a component's error about one points into its file.
    _workload_sources: Any = PrivateAttr(default=None)

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
    # The second pass and the error wording read this module's models: imported here, not above.
    from .config_checks import _Checker
    from .config_errors import _from_validation_error

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
        if key == "workloadFiles":  # read at the edge: components.platform.workload_files
            raise InputError(
                "names files, and load_spec reads none",
                "the config after expand_workload_files(config, project_dir), which merges them",
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
