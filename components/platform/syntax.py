"""Value syntax of the stack config: the checks a key's value gets when the config is read (label
and name syntax, taints, tolerations, quantities, versions, storage URIs, pool references), each
raising `InputError` (pydantic wraps it; `config_errors` unwraps it), and the config models of the
library's own value types (`Taint`, `Toleration`, `NodeSelectorRequirement`).

Pure: pydantic v2, imports no Pulumi."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ..model.errors import InputError, closest, show
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
from ..model.serving.env import SECRET_ONLY, env_value

POOL_NAME_MAX = 40  # GKE node pool names are at most 40 characters; EKS allows more.
SERVER_NAME_MAX = 52  # a StatefulSet's pods get label `controller-revision-hash: <name>-<hash>`,
# which must fit a 63-character label value (kubernetes/kubernetes#64023): Seldon Servers are
# StatefulSets.
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

_MODEL_FORMAT = re.compile(r"^[a-z0-9][-a-z0-9_.]*$")
_CAPABILITY = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$")


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
                raise InputError(problem, rule, key_path(key))
    return v


def _effect(v: str) -> str:
    if v in TAINT_EFFECTS:
        return v
    hint = ""
    if v in EFFECTS_FROM_CLOUD:
        hint = f"; that is the cloud API's spelling, write {EFFECTS_FROM_CLOUD[v]!r}"
    else:
        close = closest(v, TAINT_EFFECTS)
        if close:
            hint = f"; did you mean {close!r}?"
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


def _env(v: dict[str, Any]) -> dict[str, Any]:
    """Names checked; each value a string or a value from a Secret (`model.serving.env`)."""
    for name, value in v.items():
        if not _ENV_NAME.match(name):
            raise InputError(
                f"{show(name)} is not an environment variable name",
                "letters, digits, '_', '-' or '.', not starting with a digit",
                key_path(name),
            )
        try:
            env_value(value, SECRET_ONLY)
        except InputError as e:
            raise e.at(key_path(name)) from None
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
Env = Annotated[dict[str, Any], AfterValidator(_env)]
PoolRef = Annotated[Any, AfterValidator(_pool_ref)]
Int = Annotated[int, Field(strict=True)]
Bool = Annotated[bool, Field(strict=True)]
SchedulingStyle = Literal["nodeSelector", "nodeAffinity"]
Capabilities = Annotated[list[str], AfterValidator(_capabilities)]
ModelFormat = Annotated[str, AfterValidator(_model_format)]


def key_path(key: str) -> str:
    """A map key as a path segment: `.key`, or `["key"]` when it holds '.' or '/'."""
    return f".{key}" if re.match(r"^[A-Za-z0-9_-]+$", key) else f"[{json.dumps(key)}]"


class ConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=False)


class TaintSpec(ConfigModel):
    key: LabelKey
    value: Annotated[str, AfterValidator(_label_value)] = ""
    effect: Effect = "NoSchedule"

    def to_value(self) -> Taint:
        return self.taint

    @property
    def taint(self) -> Taint:
        return Taint(self.key, self.value, self.effect)


class TolerationSpec(ConfigModel):
    key: str = ""
    operator: Literal["Equal", "Exists"] = "Equal"
    value: str = ""
    effect: Optional[Effect] = None  # empty: every effect
    toleration_seconds: Optional[Int] = None

    @model_validator(mode="after")
    def _rules(self) -> TolerationSpec:
        if self.key:
            label_key_at(self.key, "key")
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

    def to_value(self) -> Toleration:
        return self.toleration

    @property
    def toleration(self) -> Toleration:
        return Toleration(
            self.key, self.operator, self.value, self.effect or "", self.toleration_seconds
        )


def label_key_at(key: str, path: str) -> None:
    problem = label_key_problem(key)
    if problem:
        raise InputError(problem, LABEL_KEY_RULE, path)


class ExpressionSpec(ConfigModel):
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

    def to_value(self) -> NodeSelectorRequirement:
        return self.requirement

    @property
    def requirement(self) -> NodeSelectorRequirement:
        return NodeSelectorRequirement(self.key, self.operator, tuple(self.values))


def aliases(model: type[BaseModel]) -> list[str]:
    """A config model's keys, in declaration order."""
    return [f.alias or n for n, f in model.model_fields.items()]


SYNTAX: dict[str, Any] = {
    "pool-name": PoolName,
    "label-keys": Annotated[list[LabelKey], Field(min_length=1)],
    "dns1123": Dns1123,
    "dns1035": Dns1035,
    "server-name": ServerName,
    "label-key": LabelKey,
    "labels": Labels,
    "quantity": Quantity,
    "version": Version,
    "storage-uri": StorageUri,
    "env": Env,
    "pool-ref": PoolRef,
    "capabilities": Capabilities,
    "resources": dict[str, Quantity],
}
"""A field's declared `syntax` -> the config type that checks it (`components.model.inputs`)."""

CONFIG_TYPES: dict[type, type[ConfigModel]] = {
    Taint: TaintSpec,
    Toleration: TolerationSpec,
    NodeSelectorRequirement: ExpressionSpec,
}
"""The library's value types -> their config models; each model's `to_value()` gives the value."""
