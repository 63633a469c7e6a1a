"""`load_spec`: a stack's config -> a validated `Spec`, or ONE `InputError` naming the key path.

Pure: pydantic v2, imports no Pulumi. `load_spec(config, secret_keys=...)` takes the stack's config
as a mapping of full keys (`gpu-inference:pools`) to parsed values. Three passes:
1. shape: unknown keys, wrong types, missing keys, allowed values and syntax, checks local to one
   object; each `pools[i]` entry is read as the kind of pool it is (`pool_kinds`);
2. pools: each pool's component validates its arguments (nothing registered), an error naming the
   stack key that fed the argument;
3. cross-section (`config_checks`): what depends on the provider, other sections and secrets,
   and the defaults that depend on other sections.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..model.errors import InputError, closest, did_you_mean, show
from ..model.syntax import key_path
from .config import NAMESPACE, PROVIDER_NAMESPACES, SECTIONS, Cluster, Spec
from .config_checks import Checker
from .config_errors import from_validation_error, list_form, shown
from .pool_kinds import kind_for, kind_keys, kinds_with, pool_model


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
    data = _sections(config, namespace)
    _unwrap_secure(data, namespace, secret)
    try:
        cluster = Cluster.model_validate(data["cluster"])
    except ValidationError as e:
        raise from_validation_error(e, f"{namespace}:cluster", Cluster) from None
    data["cluster"] = cluster
    data["pools"] = _pools(data["pools"], cluster, f"{namespace}:pools")
    try:
        spec = Spec.model_validate(data)
    except ValidationError as e:
        raise from_validation_error(e, namespace, Spec) from None
    Checker(spec, namespace, secret).run()
    return spec


def _sections(config: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """The project's sections by key (JSON text parsed); other packages' settings left out."""
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
            hint = did_you_mean(ns, [namespace])
            if ns in PROVIDER_NAMESPACES or not hint:
                continue  # another package's settings (gcp:project, aws:region, ...)
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
            close = closest(key, SECTIONS)
            hint = f" (did you mean '{namespace}:{close}'?)" if close else ""
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
    return data


def _pools(raw: Any, cluster: Cluster, base: str) -> Any:
    """Each `pools[i]` entry read as its kind's config (anything else is left to the Spec's
    shape check, which words it)."""
    if isinstance(raw, Mapping) and raw:
        kind = kind_for({}, cluster.provider, cluster.autopilot)
        raise InputError(
            f"expected a list, got a mapping ({', '.join(map(str, list(raw)[:3]))}"
            f"{', ...' if len(raw) > 3 else ''})",
            "a list, one '- ' item per entry, e.g. " + list_form(dict(raw), list[pool_model(kind)]),  # type: ignore[misc]
            base,
        )
    if not isinstance(raw, list):
        return raw
    out: list[Any] = []
    for i, entry in enumerate(raw):
        path = f"{base}[{i}]"
        if not isinstance(entry, Mapping):
            raise InputError(f"expected a mapping (key: value), got {shown(entry)}", "", path)
        kind = kind_for(entry, cluster.provider, cluster.autopilot)
        keys = kind_keys(kind)
        for key in entry:
            if key in keys:
                continue
            others = kinds_with(str(key), kind)
            if others:
                providers = sorted({k.provider for k in others})
                where = (
                    (", ".join(providers[:-1]) + " and " if len(providers) > 1 else "")
                    + providers[-1]
                    + " pools"
                    if cluster.provider not in providers
                    else "another kind of pool"
                )
                why = f": {kind.note}" if kind.note else ""
                raise InputError(
                    f"key {key!r} is for {where} ({', '.join(k.title for k in others)}); this "
                    f"pool is {_article(kind.title)} {kind.title} (cluster provider "
                    f"{cluster.provider!r}){why}",
                    ", ".join(keys),
                    f"{path}{key_path(str(key))}",
                )
        model = pool_model(kind)
        try:
            pool = model.model_validate(entry)
        except ValidationError as e:
            raise from_validation_error(e, path, model) from None
        out.append(pool.of_kind(kind))
    return out


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
            secret.add(f"{namespace}:namespaces.staticCredentials{key_path(k)}")


def _article(title: str) -> str:
    """`a` or `an` before a kind's title (`an AKS agent pool`, `an EKS managed node group`)."""
    return "an" if title[:1] in "AEIOU" else "a"
