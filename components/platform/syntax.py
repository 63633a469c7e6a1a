"""Value syntax of the stack config: the checks a key's value gets when the config is read (label
and name syntax, taints, tolerations, quantities, versions, storage URIs, pool references), each
raising `InputError` (pydantic wraps it; `config_errors` unwraps it), and the config models of the
library's own value types (`Taint`, `Toleration`, `NodeSelectorRequirement`). The named syntaxes'
checks are `components.model.syntax`'s, which the Python args run too.

Pure: pydantic v2, imports no Pulumi."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from ..model import syntax
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
)

# ---------------------------------------------------------------------------------------------
# Field types: each raises InputError (pydantic wraps it; `_from_validation_error` unwraps it)
# ---------------------------------------------------------------------------------------------


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


PoolName = Annotated[str, AfterValidator(syntax.pool_name)]
Dns1123 = Annotated[str, AfterValidator(syntax.dns1123)]
Dns1035 = Annotated[str, AfterValidator(syntax.dns1035)]
ServerName = Annotated[str, AfterValidator(syntax.server_name)]
LabelKey = Annotated[str, AfterValidator(syntax.label_key)]
Labels = Annotated[dict[str, str], AfterValidator(syntax.labels)]
Effect = Annotated[str, AfterValidator(_effect)]
Quantity = Annotated[Any, AfterValidator(syntax.quantity)]
Version = Annotated[str, AfterValidator(syntax.version)]
StorageUri = Annotated[str, AfterValidator(syntax.storage_uri)]
Env = Annotated[dict[str, Any], AfterValidator(syntax.env)]
PoolRef = Annotated[Any, AfterValidator(syntax.pool_ref)]
Int = Annotated[int, Field(strict=True)]
Bool = Annotated[bool, Field(strict=True)]
SchedulingStyle = Literal["nodeSelector", "nodeAffinity"]
Capabilities = Annotated[list[str], AfterValidator(syntax.capabilities)]
ModelFormat = Annotated[str, AfterValidator(syntax.model_format)]


class ConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=False)


class TaintSpec(ConfigModel):
    key: LabelKey
    value: Annotated[str, AfterValidator(syntax.label_value)] = ""
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
    "kubernetes-version": Annotated[str, AfterValidator(syntax.kubernetes_version)],
    "aks-agent-pool-name": Annotated[str, AfterValidator(syntax.aks_agent_pool_name)],
    "eks-cluster-name": Annotated[str, AfterValidator(syntax.eks_cluster_name)],
    "gcp-zones": Annotated[list[str], AfterValidator(syntax.gcp_zones)],
    "gcp-service-account": Annotated[str, AfterValidator(syntax.gcp_service_account)],
    "gce-reservations": Annotated[list[str], AfterValidator(syntax.gce_reservations)],
    "node-names": Annotated[list[str], AfterValidator(syntax.node_names)],
    "aks-spot-price": Annotated[float, Field(strict=True), AfterValidator(syntax.aks_spot_price)],
    "azure-zones": Annotated[list[str], AfterValidator(syntax.azure_zones)],
}
"""A field's declared `syntax` -> the config type that checks it with `model.syntax.CHECKS`."""

CONFIG_TYPES: dict[type, type[ConfigModel]] = {
    Taint: TaintSpec,
    Toleration: TolerationSpec,
    NodeSelectorRequirement: ExpressionSpec,
}
"""The library's value types -> their config models; each model's `to_value()` gives the value."""
