"""An environment variable's value as the stack config and the components take it: a string, or
`{valueFrom: {secretKeyRef: {name, key, optional}}}`, a credential (a gated model's `HF_TOKEN`)
the kubelet reads from a Secret of the pod's namespace, so that it is never in the stack config,
the state or the preview. Pure.

Kubernetes' rules, checked here so that a mistake is an error naming the key, not a pod the API
server refuses (kubernetes v1.34.0 pkg/apis/core/validation/validation.go,
`validateEnvVarValueFrom`: one source exactly, "may not have more than one field specified at a
time"; `validateSecretKeySelector`: `name` a Secret's name (`ValidateSecretName`, a DNS-1123
subdomain), `key` required and `IsConfigMapKey`: at most 253 of letters, digits, '-', '_', '.').
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..errors import InputError, show
from ..scheduling import validate_dns1123_subdomain

ENV_SOURCES = ("configMapKeyRef", "fieldRef", "resourceFieldRef", "secretKeyRef")
"""Kubernetes' EnvVarSource fields (k8s.io/api v0.34.0 core/v1 types.go)."""
SECRET_ONLY = ("secretKeyRef",)
"""What the stack config takes: a value from a Secret."""
_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
SECRET_KEY_RULE = "at most 253 letters, digits, '-', '_' or '.' (e.g. HF_TOKEN)"
SECRET_KEY_REF = "{valueFrom: {secretKeyRef: {name: SECRET, key: KEY}}}"
_SELECTOR_KEYS = ("name", "key", "optional")
_OBJECT = {"secretKeyRef": "Secret", "configMapKeyRef": "ConfigMap"}


def key_selector(ref: object, what: str) -> dict[str, Any]:
    """A `secretKeyRef` / `configMapKeyRef` checked: `{name, key[, optional]}`."""
    if not isinstance(ref, Mapping):
        raise InputError(
            f"{what} {show(ref)} is not a mapping", "{name, key} and optionally optional"
        )
    for k in ref:
        if k not in _SELECTOR_KEYS:
            raise InputError(f"unknown key {show(k)}", ", ".join(_SELECTOR_KEYS), str(k))
    for k in ("name", "key"):
        if k not in ref:
            raise InputError("required key is missing", f"the {_OBJECT[what]}'s {k}", k)
    try:
        validate_dns1123_subdomain(ref["name"])
    except InputError as e:
        raise e.at("name") from None
    key = ref["key"]
    if not isinstance(key, str) or len(key) > 253 or not _KEY.fullmatch(key):
        raise InputError(f"{show(key)} is not a {_OBJECT[what]} key", SECRET_KEY_RULE, "key")
    if "optional" in ref and not isinstance(ref["optional"], bool):
        raise InputError(
            f"{show(ref['optional'])} is not true or false", "true or false", "optional"
        )
    return {k: ref[k] for k in _SELECTOR_KEYS if k in ref}


def value_from(source: object, allowed: tuple[str, ...] = ENV_SOURCES) -> dict[str, Any]:
    """A `valueFrom` checked: exactly one of `allowed`; a key selector's name and key."""
    if not isinstance(source, Mapping) or not source:
        raise InputError(
            f"valueFrom {show(source)} names no source", f"one of {', '.join(allowed)}"
        )
    for k in source:
        if k not in allowed:
            raise InputError(f"unknown key {show(k)}", ", ".join(allowed), str(k))
    if len(source) > 1:
        raise InputError(
            f"valueFrom has {len(source)} sources ({', '.join(map(str, source))}); Kubernetes "
            "takes exactly one",
            f"one of {', '.join(allowed)}",
        )
    ((kind, body),) = source.items()
    if kind in ("secretKeyRef", "configMapKeyRef"):
        try:
            return {kind: key_selector(body, kind)}
        except InputError as e:
            raise e.at(kind) from None
    if not isinstance(body, Mapping):
        raise InputError(f"{kind} {show(body)} is not a mapping", "a mapping", kind)
    return {kind: dict(body)}


def env_value(value: object, allowed: tuple[str, ...] = ENV_SOURCES) -> dict[str, Any]:
    """`{"value": str}` or `{"valueFrom": {...}}` for a value of an `env` mapping: a string, or
    a mapping holding `valueFrom` alone."""
    if isinstance(value, str):
        return {"value": value}
    if isinstance(value, Mapping):
        for k in value:
            if k != "valueFrom":
                raise InputError(f"unknown key {show(k)}", "valueFrom", str(k))
        if "valueFrom" not in value:
            raise InputError("required key is missing", SECRET_KEY_REF, "valueFrom")
        try:
            return {"valueFrom": value_from(value["valueFrom"], allowed)}
        except InputError as e:
            raise e.at("valueFrom") from None
    raise InputError(
        f"{show(value)} is not a string",
        f"a string (quote numbers and booleans in YAML), or {SECRET_KEY_REF}",
    )
