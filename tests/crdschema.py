"""Validate a custom resource against its upstream CRD in ../shared/crds, strictly.

The CRD's openAPIV3Schema becomes a JSON schema: every object that lists `properties` (and does not
preserve unknown fields) refuses other keys, as kubectl's strict mode does (the API server would
prune them silently); `x-kubernetes-int-or-string` takes an integer or a string; `nullable` allows
null. Validators are cached per CRD file. Callers skip when ../shared/crds is absent.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tests.conftest import CRDS

_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
METADATA_KEYS = {"name", "namespace", "labels", "annotations"}


def _convert(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_convert(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "definitions"):
            out[key] = {k: _convert(v) for k, v in value.items()}
        elif key.startswith("x-kubernetes-") or key in ("nullable", "format", "description"):
            continue
        else:
            out[key] = _convert(value)
    if schema.get("x-kubernetes-int-or-string"):
        pattern = out.pop("pattern", None)
        string = {"type": "string", **({"pattern": pattern} if pattern else {})}
        out = {k: v for k, v in out.items() if k not in ("anyOf", "type")}
        out["anyOf"] = [{"type": "integer"}, string]
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    if schema.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"] if isinstance(out["type"], str) else out["type"]
    return out


@functools.cache
def _crd_index(crds: Path = CRDS) -> dict[tuple[str, str], Path]:
    index = {}
    for path in sorted(crds.glob("*.yaml")):
        head = path.read_text()[:4000]
        group = re.search(r"^\s{2}group:\s*(\S+)", head, re.M)
        kind = re.search(r"^\s{4}kind:\s*(\S+)", head, re.M)
        if group and kind:
            index[(group.group(1), kind.group(1))] = path
    return index


@functools.cache
def _validator(path: Path, version: str) -> jsonschema.protocols.Validator:
    crd = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            schema = _convert(v["schema"]["openAPIV3Schema"])
            schema.setdefault("properties", {})["metadata"] = {"type": "object"}
            for key in ("apiVersion", "kind"):
                schema["properties"].setdefault(key, {"type": "string"})
            schema.pop("additionalProperties", None)
            schema["additionalProperties"] = False
            cls = jsonschema.validators.validator_for(schema)
            return cls(schema)
    raise ValueError(f"{path.name} has no version {version}")


def validate_cr(obj: dict[str, Any], crds: Path = CRDS) -> None:
    """Raise AssertionError listing every violation (with its JSON path) of `obj` against the
    upstream CRD for its apiVersion / kind (in `crds`: ../shared/crds, or another directory of
    CRD files such as an operator's Go module), and of its metadata."""
    group, _, version = obj["apiVersion"].partition("/")
    path = _crd_index(crds).get((group, obj["kind"]))
    if path is None:
        raise AssertionError(f"no upstream CRD for {obj['apiVersion']} {obj['kind']} in {crds}")
    errors = [
        f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
        for e in _validator(path, version).iter_errors(obj)
    ]
    md = obj.get("metadata") or {}
    errors += [f"metadata.{k}: not allowed here" for k in sorted(set(md) - METADATA_KEYS)]
    if not isinstance(md.get("name"), str) or not _NAME.fullmatch(md["name"]):
        errors.append(f"metadata.name: {md.get('name')!r} is not a DNS-1123 subdomain")
    if "namespace" in md and not _LABEL.fullmatch(str(md["namespace"])):
        errors.append(f"metadata.namespace: {md['namespace']!r} is not a DNS-1123 label")
    if errors:
        raise AssertionError(
            f"{obj['kind']} {md.get('name')!r} does not validate against {path.name}:\n  "
            + "\n  ".join(sorted(errors))
        )
