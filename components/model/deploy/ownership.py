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

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
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


HELM_RELEASE_ANNOTATION = "meta.helm.sh/release-name"
HELM_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
DEFAULT_WAYS_OUT = "Delete it, rename ours, or adopt it on purpose with `pulumi import`"


def owner_found(obj: Mapping[str, Any]) -> str:
    """Who a live object belongs to, as a refusal says it: another stack (its field manager
    annotation), a Helm release (Helm's ownership annotations), else the field managers that
    wrote it (`metadata.managedFields`), else nobody named."""
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    found = manager_of(obj)
    if found is not None and found.startswith(MANAGER_PREFIX + "/"):
        return f"belongs to another stack ({found.removeprefix(MANAGER_PREFIX + '/')})"
    release = annotations.get(HELM_RELEASE_ANNOTATION)
    if isinstance(release, str):
        where = annotations.get(HELM_NAMESPACE_ANNOTATION)
        return f"belongs to Helm release {where + '/' if where else ''}{release}"
    if found is not None:
        return f"belongs to the field manager {found!r}"
    managers = sorted(
        {str(m.get("manager")) for m in meta.get("managedFields") or () if m.get("manager")}
    )
    if managers:
        return f"was made by {', '.join(repr(m) for m in managers)} (not gpu-inference)"
    return "was not made by gpu-inference"


def describe(obj: Mapping[str, Any]) -> str:
    """`Kind namespace/name` of a live object (or of a create's inputs)."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{obj.get('kind', 'object')} {ns + '/' if ns else ''}{meta.get('name', '?')}"


def adoption_problem(
    live: Mapping[str, Any], manager: str, ways_out: Optional[str] = None
) -> Optional[str]:
    """Why a create must not adopt `live`, the object of the same name already in the cluster;
    None when it is this stack's own (made by an `up` that did not get to record it). The message
    names the object, the owner found and the ways out (`ways_out`: the install's own, else
    the generic ones)."""
    if manager_of(live) == manager:
        return None
    return (
        f"{describe(live)} already exists and {owner_found(live)}: this stack will not take it "
        f"over. {ways_out or DEFAULT_WAYS_OUT}"
    )


CONFIG_SECTION: ContextVar[Optional[str]] = ContextVar("gpu_inference_config_section", default=None)
"""The stack config key (`gpu-inference:addons.karpenter`) of the section the component being
built comes from: the platform sets it around each component, so that a refusal at deploy time
names the keys that are the ways out."""


@dataclass(frozen=True)
class Ownership:
    """How an install treats what it would create that already exists and is not this stack's:
    refused with `ways_out` named, or, when `adopt`, taken over on purpose (then never deleted by
    `destroy`)."""

    ways_out: str
    adopt: bool = False
    scope: str = ""
    """Where the install comes from (`addons.karpenter`, `KarpenterInstall('x')`): the hooks
    that carry `ways_out` are named after it."""


@contextmanager
def config_section(key: Optional[str]) -> Iterator[None]:
    """`CONFIG_SECTION` is `key` inside (the platform, around each component it builds)."""
    token = CONFIG_SECTION.set(key)
    try:
        yield
    finally:
        CONFIG_SECTION.reset(token)


def install_ownership(
    owner: str,
    adopt: Optional[bool],
    use_own: Optional[str] = "enabled",
    use_own_arg: Optional[str] = None,
    own_value: str = "false",
) -> Ownership:
    """The ownership of an install (`owner`: `KarpenterInstall('x')`): the two ways out its
    refusals name, in stack config keys under the section being built (`CONFIG_SECTION`), else
    as the component's arguments. `use_own`: the key that uses the cluster's own when set to
    `own_value` (`enabled: false`, a step's switch such as `gatewayApiCrds: false`, Knative's
    `mode: patch`); `use_own_arg` its argument; None: there is no cluster's own to use (a
    models' namespace), the first way out is another name."""
    section = CONFIG_SECTION.get()
    if section:
        own = f"set `{section}.{use_own}: {own_value}`"
        take = f"set `{section}.adopt: true`"
        scope = section.split(":", 1)[-1]
    else:
        arg_value = own_value.capitalize() if own_value in ("false", "true") else repr(own_value)
        own = f"{owner} with `{use_own_arg}={arg_value}`" if use_own_arg else f"leave {owner} out"
        take = f"{owner} with `adopt=True`"
        scope = owner
    if use_own not in ("enabled", None):
        scope = f"{scope}.{use_own}"
    first = f"Use the cluster's own: {own}" if use_own else "Use another name"
    return Ownership(
        f"{first}; or adopt it on purpose: {take} (this stack then keeps it up to date, and "
        "destroy leaves it in place)",
        bool(adopt),
        scope,
    )


@dataclass(frozen=True)
class NamespacePlan:
    """A namespace an install needs: the resource name it makes it under when it makes it itself
    (used alone), and the labels it wants on it."""

    resource: str
    labels: Mapping[str, str] = field(default_factory=dict)
    switch: Optional[str] = None
    """The install's step it belongs to, by the stack key that turns that step off (uses the
    cluster's own), e.g. `envoyGateway`; None: the install's."""


def namespace_plans(entries: Iterable[tuple[str, NamespacePlan]]) -> dict[str, NamespacePlan]:
    """namespace -> plan, first one kept, the namespaces every cluster has left out (used, never
    made)."""
    out: dict[str, NamespacePlan] = {}
    for ns, plan in entries:
        if ns not in SYSTEM_NAMESPACES:
            out.setdefault(ns, plan)
    return out
