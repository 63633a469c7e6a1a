"""Resource graph -> Kubernetes manifests a person could `kubectl apply`.

Pure (imports no Pulumi): the input is the resource graph as `resources.json` holds it, a list of
`{type, name, inputs}` with Pulumi type tokens and the inputs as registered (camelCase). Every
`kubernetes:<group>/<version>:<Kind>` resource whose inputs carry `apiVersion` and `kind` is an
object (custom resources included); Helm releases are not objects and are listed in the header;
`...Patch` resources (NodePatch, ConfigMapPatch) are server-side-apply patches and are rendered
last, each under a comment saying so; cloud resources (`gcp:`, `aws:`) are not Kubernetes objects.

The order is stable whatever the registration order: Namespaces, then CRDs, then the other kinds
in the order Helm installs them, custom resources after the built-in kinds, then patches; within a
kind by namespace and name.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from types import NoneType
from typing import Any

import yaml

from ..model.scheduling import WIRED_POOL_ANNOTATION

# Helm's install order, with CRDs right after Namespaces (they must exist before any CR).
KIND_ORDER: tuple[str, ...] = (
    "Namespace",
    "CustomResourceDefinition",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PriorityClass",
    "RuntimeClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
)
_KIND_RANK = {kind: i for i, kind in enumerate(KIND_ORDER)}

# Kubernetes resource types that are not objects: installers, groups and providers.
_NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml/", "kubernetes:kustomize/")
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")


def type_kind(typ: str) -> str:
    """The last part of a type token: `kubernetes:core/v1:ConfigMapPatch` -> `ConfigMapPatch`."""
    return typ.rsplit(":", 1)[-1]


def is_kubernetes_object(entry: Mapping[str, Any]) -> bool:
    """Whether a graph entry is a Kubernetes object (or patch) that belongs in the manifests."""
    typ = str(entry.get("type", ""))
    inputs = entry.get("inputs") or {}
    return (
        typ.startswith("kubernetes:")
        and not typ.startswith(_NOT_OBJECTS)
        and isinstance(inputs, Mapping)
        and isinstance(inputs.get("apiVersion"), str)
        and isinstance(inputs.get("kind"), str)
    )


def is_patch(entry: Mapping[str, Any]) -> bool:
    """Whether a Kubernetes entry is a server-side-apply patch (`NodePatch`, `ConfigMapPatch`, ...):
    its type token's kind is the object's kind plus `Patch`."""
    inputs = entry.get("inputs") or {}
    return type_kind(str(entry.get("type", ""))) == f"{inputs.get('kind')}Patch"


def kubernetes_objects(graph: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The graph's Kubernetes objects and patches, in manifest order."""
    return sorted((dict(e) for e in graph if is_kubernetes_object(e)), key=_object_order)


def helm_releases(graph: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The Helm releases in the graph as `{resource, release, chart, version, repo, namespace}`,
    sorted by namespace and release name."""
    out = []
    for entry in graph:
        if entry.get("type") not in HELM_TYPES:
            continue
        inputs = entry.get("inputs") or {}
        repo_opts = inputs.get("repositoryOpts") or {}
        out.append(
            {
                "resource": f"{entry['type']}::{entry['name']}",
                "release": str(inputs.get("name") or entry["name"]),
                "chart": str(inputs.get("chart") or ""),
                "version": str(inputs.get("version") or ""),
                "repo": str(repo_opts.get("repo") or "") if isinstance(repo_opts, Mapping) else "",
                "namespace": str(inputs.get("namespace") or "default"),
            }
        )
    return sorted(out, key=lambda r: (r["namespace"], r["release"], r["resource"]))


def pools_named(entry: Mapping[str, Any]) -> list[str]:
    """The pool(s) a workload names in its `gpu-inference.dev/pool` annotation (a name, or names
    in preference order separated by commas); empty when it names none."""
    inputs = entry.get("inputs") or {}
    metadata = inputs.get("metadata") if isinstance(inputs, Mapping) else None
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    value = annotations.get(WIRED_POOL_ANNOTATION) if isinstance(annotations, Mapping) else None
    if not isinstance(value, str):
        return []
    return [p.strip() for p in value.split(",") if p.strip()]


def render_manifests(graph: Sequence[Mapping[str, Any]], *, title: str = "") -> str:
    """The graph's Kubernetes objects as one multi-document YAML text, with a header comment that
    lists the Helm releases Pulumi installs (they are not objects)."""
    objects = kubernetes_objects(graph)
    releases = helm_releases(graph)
    patches = sum(1 for o in objects if is_patch(o))
    lines = []
    if title:
        lines.append(f"# {title}")
    lines.append(
        f"# {_count(len(objects) - patches, 'Kubernetes object')} and "
        f"{_count(patches, 'server-side-apply patch', 'patches')}; "
        "cloud resources (node pools, IAM) are in resources.json."
    )
    if releases:
        lines.append(
            "# Helm releases (not objects: Pulumi installs them before the objects that need "
            "their CRDs; values in resources.json):"
        )
        for r in releases:
            source = f" from {r['repo']}" if r["repo"] else ""
            version = f" {r['version']}" if r["version"] else ""
            lines.append(
                f"#   {r['release']}: chart {r['chart']}{version}{source}, namespace {r['namespace']}"
            )
    else:
        lines.append("# Helm releases: none.")
    return "".join(["\n".join(lines) + "\n", *("---\n" + _document(obj) for obj in objects)])


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _document(entry: Mapping[str, Any]) -> str:
    inputs = dict(entry.get("inputs") or {})
    comments = [f"# {entry.get('type')}::{entry.get('name')}"]
    if is_patch(entry):
        comments.append(
            "# server-side-apply patch of an existing object, not a whole object: "
            "kubectl apply --server-side"
        )
    if inputs.get("apiVersion") == "v1" and inputs.get("kind") == "Secret":
        inputs, redacted, dropped = redacted_secret(inputs)
        if redacted:
            comments.append(
                f"# values redacted: each {REDACTED!r} ({REDACTED_BASE64} in data, its base64)"
            )
        for key in dropped:
            comments.append(f"# {key}: secret as a whole (its keys too), left out")
    metadata = inputs.get("metadata")
    if not isinstance(metadata, Mapping) or not metadata.get("name"):
        comments.append(
            f"# metadata.name is not set: Pulumi auto-names it {entry.get('name')}-<random>"
        )
    return "\n".join(comments) + "\n" + object_yaml(inputs)


REDACTED = "[secret]"
"""What the preview writes for a secret value (`mockrun.SECRET`)."""
REDACTED_BASE64 = base64.b64encode(REDACTED.encode()).decode()


def redacted_secret(inputs: Mapping[str, Any]) -> tuple[dict[str, Any], bool, list[str]]:
    """A Secret's inputs as the API server takes them when their values are redacted: `data`
    holds base64 (a `[secret]` there would be refused as "illegal base64 data"), so each redacted
    `data` value is written as the base64 of `[secret]`; `stringData` keeps `[secret]`. Also says
    whether a value was redacted, and which maps were left out (secret as a whole: no map to
    write)."""
    out = dict(inputs)
    redacted = False
    dropped = []
    for key in ("data", "stringData"):
        values = inputs.get(key)
        if values == REDACTED:  # a whole map redacted: its keys are unknown here
            out.pop(key)
            dropped.append(key)
        elif isinstance(values, Mapping):
            hidden = [k for k, v in values.items() if v == REDACTED]
            redacted = redacted or bool(hidden)
            if key == "data" and hidden:
                out[key] = {k: REDACTED_BASE64 if k in hidden else v for k, v in values.items()}
    return out, redacted, dropped


def _object_order(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    inputs = entry.get("inputs") or {}
    kind = str(inputs.get("kind", ""))
    md = inputs.get("metadata")
    metadata: Mapping[str, Any] = md if isinstance(md, Mapping) else {}
    rank = _KIND_RANK.get(kind, len(KIND_ORDER))
    return (
        is_patch(entry),
        rank,
        kind if rank == len(KIND_ORDER) else "",
        str(inputs.get("apiVersion", "")),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
        str(entry.get("type", "")),
        str(entry.get("name", "")),
    )


_FIRST_KEYS = ("apiVersion", "kind", "metadata")
_FIRST_METADATA_KEYS = ("name", "namespace")


def _sorted(value: Any) -> Any:
    if isinstance(value, str | int | float | NoneType):  # most values: no ABC check (`Mapping`)
        return value
    if isinstance(value, list | tuple):
        return [_sorted(v) for v in value]
    if isinstance(value, dict | Mapping):
        return {k: _sorted(value[k]) for k in sorted(value, key=str)}
    return value


def object_yaml(inputs: Mapping[str, Any]) -> str:
    """One object's YAML, keys in `ordered_object`'s order, through PyYAML's libyaml emitter."""
    return pyyaml_text(ordered_object(inputs))


def ordered_object(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """apiVersion, kind, metadata (name, namespace first) then the rest, keys sorted below."""
    out: dict[str, Any] = {}
    for k in _keys_first(inputs, _FIRST_KEYS):
        v = inputs[k]
        if k not in _FIRST_KEYS:
            out[k] = _sorted(v)
        elif k == "metadata" and isinstance(v, Mapping):
            md = _sorted(v)
            out[k] = {f: md[f] for f in _keys_first(md, _FIRST_METADATA_KEYS)}
        else:  # apiVersion, kind, a metadata that is no mapping: as given
            out[k] = v
    return out


def _keys_first(value: Mapping[str, Any], first: tuple[str, ...]) -> list[Any]:
    """`first` (those `value` has), then its other keys sorted: the order of an object's top level
    and of its metadata."""
    return [k for k in first if k in value] + sorted((k for k in value if k not in first), key=str)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Block style, multi-line strings as literal blocks, no aliases; libyaml's emitter where
    there is one. A writer of our own made the 1000-model manifests 0.32 s faster, 5% of that
    preview's CPU: not worth its code."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_representer)


def pyyaml_text(value: Any) -> str:
    """YAML text for plain data, keys in the order given, stable line breaks, through PyYAML
    (libyaml's emitter where there is one)."""
    return yaml.dump(
        value,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=4096,
    )
