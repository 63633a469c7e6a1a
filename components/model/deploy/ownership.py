"""Which stack an object in the cluster belongs to, so that a re-run `up` adopts what this stack
made (an `up` killed after the API server created an object but before Pulumi recorded it) and
refuses what it did not.

Every object we create or patch carries the annotation `pulumi.com/patchFieldManager`, which the
kubernetes provider reads as its server-side apply field manager (pulumi-kubernetes v4.32.0
`provider.go` `fieldManagerName`: the annotation first, then the state, then a random name). One
manager per stack, `gpu-inference/<project>/<stack>`, is the same after a crash, so the re-apply
owns the same fields and meets no conflict; the annotation stays on the live object and names its
stack. Another stack's object of the same name differs in that annotation: its apply conflicts
(never forced), and the create hook refuses it before that with a clearer message.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

FIELD_MANAGER_ANNOTATION = "pulumi.com/patchFieldManager"
PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce"
MANAGER_PREFIX = "gpu-inference"
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has: used, never made (nor deleted) by a stack."""
MAX_MANAGER = 128
"""The API server refuses a field manager over 128 characters (apimachinery ValidateFieldManager)."""


def field_manager(project: str, stack: str) -> str:
    """This stack's server-side apply field manager."""
    name = f"{MANAGER_PREFIX}/{project}/{stack}"
    if len(name) > MAX_MANAGER:
        # Project and stack names are long only in generated cases: keep the head readable and
        # the whole unique.
        import hashlib

        digest = hashlib.sha256(name.encode()).hexdigest()[:12]
        name = f"{name[: MAX_MANAGER - 13]}-{digest}"
    return name


def with_manager(metadata: Mapping[str, Any], manager: str) -> dict[str, Any]:
    """`metadata` with the field manager annotation added (other annotations kept)."""
    annotations = dict(metadata.get("annotations") or {})
    annotations[FIELD_MANAGER_ANNOTATION] = manager
    return {**metadata, "annotations": annotations}


def manager_of(obj: Mapping[str, Any]) -> Optional[str]:
    """The stack's field manager a live object was made with, or None (made by something else)."""
    meta = obj.get("metadata") or {}
    value = (meta.get("annotations") or {}).get(FIELD_MANAGER_ANNOTATION)
    return value if isinstance(value, str) else None


def adoption_problem(live: Mapping[str, Any], manager: str) -> Optional[str]:
    """Why a create must not adopt `live`, the object of the same name already in the cluster;
    None when it is this stack's own (made by an `up` that did not get to record it)."""
    found = manager_of(live)
    if found == manager:
        return None
    meta = live.get("metadata") or {}
    ns = meta.get("namespace")
    what = f"{live.get('kind', 'object')} {ns + '/' if ns else ''}{meta.get('name', '?')}"
    if found is None:
        who = "was not made by gpu-inference"
    elif found.startswith(MANAGER_PREFIX + "/"):
        who = f"belongs to another stack ({found.removeprefix(MANAGER_PREFIX + '/')})"
    else:
        who = f"belongs to the field manager {found!r}"
    return (
        f"{what} already exists and {who}: this stack will not take it over. Delete it, rename "
        f"ours, or adopt it on purpose with `pulumi import`"
    )


@dataclass(frozen=True)
class NamespacePlan:
    """A namespace an install needs: the resource name it makes it under when it makes it itself
    (used alone), and the labels it wants on it."""

    resource: str
    labels: Mapping[str, str] = field(default_factory=dict)


def namespace_plans(entries: Iterable[tuple[str, NamespacePlan]]) -> dict[str, NamespacePlan]:
    """namespace -> plan, first one kept, the namespaces every cluster has left out (used, never
    made)."""
    out: dict[str, NamespacePlan] = {}
    for ns, plan in entries:
        if ns not in SYSTEM_NAMESPACES:
            out.setdefault(ns, plan)
    return out
