"""The bodies of the deploy-time hooks, on a `Cluster` (no Pulumi here: `provider.py` binds them).

- `refuse_foreign` (before a create): the object may already exist, made by this stack's `up` that
  was killed before recording it (adopted: the provider upserts it) or by someone else (refused,
  naming the owner found and the ways out).
- `guard_release` (before a Helm release's create): a release of that name may already exist.
  Its records marked with this resource's URN are what its own killed create left (the error
  hook clears them); any other release (plain Helm, another stack, another resource) is refused,
  or, adopted on purpose, its records are moved aside (kept, renamed) so that our install takes
  its objects over.
- `recover_release` (on a Helm release's failed create or update): clears the records this
  resource's killed operation left, and only those (`components.model.deploy.helm_records`), and
  asks the engine to retry.
- `drop_crd`, `drop_namespace` (after a CRD or namespace this stack made left the state: it is
  `retainOnDelete`, so the engine deletes nothing): delete it when what it still holds is this
  stack's own, else leave it and say what it holds (`components.model.deploy.leftovers`).
- `keep_release_crds` (before a Helm release is uninstalled): the release's CRDs that still hold
  others' objects are marked `helm.sh/resource-policy: keep` in its record, so Helm leaves them.
- `restore_taints` (before a tainting node patch is deleted): puts the node's taints back as they
  are less ours, before the provider releases the patch's fields; the taint list is one atomic
  field under server-side apply, so releasing it would take the node's own taints too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

from ..model.deploy.helm_records import (
    OWNER_VALUE,
    RECORD_LABELS,
    decode_release,
    encode_release,
    record_of,
    records_to_clear,
    release_owner,
)
from ..model.deploy.leftovers import (
    certificates_named,
    keep_crds,
    kept_message,
    others,
    release_crds,
    storage_version,
)
from ..model.deploy.ownership import (
    FIELD_MANAGER_ANNOTATION,
    Ownership,
    adoption_problem,
    manager_of,
    owner_found,
)
from ..model.scheduling.taints import OWN_TAINTS_ANNOTATION, taints_without
from .cluster import Cluster

RESTORE_MANAGER = "gpu-inference-restore"
"""The field manager of the taint list a pool leaves behind (the node's own taints)."""
RETRIES = 2
"""How many times a Helm release is cleared and retried before its error stands."""
ASIDE_PREFIX = "gpu-inference-adopted."
"""The name prefix of a foreign release record moved aside when its release is adopted."""
ASIDE_OWNER = "gpu-inference-adopted"
"""The `owner` label of a record moved aside (Helm reads `owner=helm` only)."""


DELETE_WAIT = 600.0
"""How long (s) a hook waits for an object being deleted to be gone: a namespace or CRD goes only
once the API server has emptied it, and until then nothing can be created in it or in its place."""


class AdoptionRefused(Exception):
    """An object of our name exists and is not this stack's."""


def wait_gone(
    cluster: Cluster,
    api_version: str,
    kind: str,
    name: str,
    namespace: Optional[str],
    timeout: float = DELETE_WAIT,
    sleep: Optional[Callable[[float], None]] = None,
    clock: Optional[Callable[[], float]] = None,
) -> bool:
    """Whether the object is gone within `timeout`, polling as it goes (a deletion is
    asynchronous: finalizers run first)."""
    sleep, clock = sleep or time.sleep, clock or time.monotonic
    deadline = clock() + timeout
    pause = 0.5
    while cluster.get(api_version, kind, name, namespace) is not None:
        if clock() >= deadline:
            return False
        sleep(pause)
        pause = min(pause * 2, 5.0)
    return True


def _still_going(kind: str, name: str, timeout: float) -> str:
    return (
        f"{kind} {name} is still being deleted after {timeout:.0f} s (its finalizers have not "
        "finished): nothing can be made in it or in its place until it is gone; see what holds "
        f"it with `kubectl get {kind.lower()} {name} -o yaml`"
    )


def refuse_foreign(
    cluster: Cluster, inputs: Mapping[str, Any], ownership: Optional[Ownership] = None
) -> None:
    """Raise `AdoptionRefused` when the object `inputs` would create exists and is another's
    (adopted on purpose: never refused)."""
    if ownership is not None and ownership.adopt:
        return
    meta = inputs.get("metadata") or {}
    manager = (meta.get("annotations") or {}).get(FIELD_MANAGER_ANNOTATION)
    name = meta.get("name")
    if not isinstance(manager, str) or not isinstance(name, str):
        return  # not one of ours, or named by the provider (never taken)
    live = cluster.get(
        str(inputs.get("apiVersion", "")), str(inputs.get("kind", "")), name, meta.get("namespace")
    )
    if live is None:
        return
    if (live.get("metadata") or {}).get("deletionTimestamp"):
        # Being deleted (a `destroy` just before, or by hand): ours is made once it is gone.
        api, kind = str(inputs.get("apiVersion", "")), str(inputs.get("kind", ""))
        if wait_gone(cluster, api, kind, name, meta.get("namespace")):
            return
        raise AdoptionRefused(_still_going(kind, name, DELETE_WAIT))
    problem = adoption_problem(live, manager, ownership.ways_out if ownership else None)
    if problem:
        raise AdoptionRefused(problem)


DEFAULT_RELEASE_WAYS_OUT = "Uninstall it, rename ours, or adopt it on purpose"


def _release(inputs: Mapping[str, Any]) -> tuple[Optional[str], str]:
    release = inputs.get("name")
    namespace = str(inputs.get("namespace") or "default")
    return (release if isinstance(release, str) and release else None), namespace


def guard_release(
    cluster: Cluster, inputs: Mapping[str, Any], urn: str, ownership: Optional[Ownership] = None
) -> list[str]:
    """Before the resource `urn` installs the release `inputs` describes: nothing when no release
    of that name exists or its newest record is this resource's (its own killed create); else
    `AdoptionRefused`, or, adopted on purpose, the foreign records moved aside (returned)."""
    release, namespace = _release(inputs)
    if release is None:
        return []
    secrets = cluster.secrets(namespace, RECORD_LABELS.format(release=release))
    who = release_owner([record_of(s) for s in secrets], urn)
    if who is None:
        return []
    if ownership is None or not ownership.adopt:
        ways = ownership.ways_out if ownership else DEFAULT_RELEASE_WAYS_OUT
        raise AdoptionRefused(
            f"Helm release {namespace}/{release} already exists and {who}: this stack will not "
            f"take it over. {ways}"
        )
    moved = []
    for secret in secrets:
        meta = secret.get("metadata") or {}
        name = str(meta.get("name", ""))
        labels = {**(meta.get("labels") or {}), "owner": ASIDE_OWNER}
        cluster.create_secret(
            namespace,
            {
                "metadata": {
                    "name": ASIDE_PREFIX + name,
                    "labels": labels,
                    "annotations": {"gpu-inference.dev/adopted-by": urn},
                },
                "type": secret.get("type"),
                "data": secret.get("data"),
            },
        )
        cluster.delete_secret(namespace, name)
        moved.append(name)
    return moved


def recover_release(
    cluster: Cluster, operation: str, errors: Sequence[str], inputs: Mapping[str, Any], urn: str
) -> list[str]:
    """Clear what blocks the release `inputs` describes after `operation` of the resource `urn`
    failed with `errors` (newest first): the records that resource's own killed operation left,
    proven by their marker, and nothing else. The Secrets deleted ([] when the error is not one
    a killed `up` leaves, the records are not proven ours, or after `RETRIES` tries)."""
    if not errors or len(errors) > RETRIES:
        return []
    release, namespace = _release(inputs)
    if release is None:
        return []
    records = [
        record_of(s) for s in cluster.secrets(namespace, RECORD_LABELS.format(release=release))
    ]
    doomed = records_to_clear(records, operation, errors[0], urn)
    for secret in doomed:
        cluster.delete_secret(namespace, secret)
    return doomed


CRD_API = "apiextensions.k8s.io/v1"


def _crd_others(cluster: Cluster, crd: Mapping[str, Any], manager: str) -> Optional[list[str]]:
    """The objects of others a live CRD holds (None: its objects cannot be listed)."""
    api = storage_version(crd)
    kind = ((crd.get("spec") or {}).get("names") or {}).get("kind")
    if api is None or not isinstance(kind, str):
        return None
    return others(cluster.objects(api, kind), manager)


def drop_crd(cluster: Cluster, inputs: Mapping[str, Any]) -> Optional[str]:
    """After a CRD this stack made left the state: delete it unless it holds others' objects (or
    is not this stack's, or was taken over on purpose); what it says when it keeps one."""
    meta = inputs.get("metadata") or {}
    name, manager = meta.get("name"), (meta.get("annotations") or {}).get(FIELD_MANAGER_ANNOTATION)
    if not isinstance(name, str) or not isinstance(manager, str):
        return None
    live = cluster.get(CRD_API, "CustomResourceDefinition", name, None)
    if live is None:
        return None
    if manager_of(live) != manager:
        return f"kept CustomResourceDefinition {name}: it is not this stack's ({owner_found(live)})"
    held = _crd_others(cluster, live, manager)
    if held is None:
        return f"kept CustomResourceDefinition {name}: its objects could not be listed"
    if held:
        return kept_message(f"CustomResourceDefinition {name}", held)
    cluster.delete(CRD_API, "CustomResourceDefinition", name, None)
    if not wait_gone(cluster, CRD_API, "CustomResourceDefinition", name, None):
        return _still_going("CustomResourceDefinition", name, DELETE_WAIT)
    return None


def drop_namespace(cluster: Cluster, inputs: Mapping[str, Any]) -> Optional[str]:
    """After a namespace this stack made left the state: delete it unless it holds others'
    objects (or is not this stack's); what it says when it keeps one."""
    meta = inputs.get("metadata") or {}
    name, manager = meta.get("name"), (meta.get("annotations") or {}).get(FIELD_MANAGER_ANNOTATION)
    if not isinstance(name, str) or not isinstance(manager, str):
        return None
    live = cluster.get("v1", "Namespace", name, None)
    if live is None:
        return None
    if not (live.get("metadata") or {}).get("deletionTimestamp"):
        if manager_of(live) != manager:
            return f"kept Namespace {name}: it is not this stack's ({owner_found(live)})"
        objects = cluster.namespaced(name)
        held = others(objects, manager, certificates_named(objects))
        if held:
            return kept_message(f"Namespace {name}", held)
        cluster.delete("v1", "Namespace", name, None)
    # Deleted (by us or already): the run ends once it is gone, so that the next `up` can make
    # it again (a namespace being deleted takes no new object).
    if not wait_gone(cluster, "v1", "Namespace", name, None):
        return _still_going("Namespace", name, DELETE_WAIT)
    return None


def keep_release_crds(cluster: Cluster, inputs: Mapping[str, Any]) -> list[str]:
    """Before the release `inputs` describes is uninstalled: mark its CRDs that hold others'
    objects `helm.sh/resource-policy: keep` in its newest record, so Helm leaves them; what it
    says of each (nothing when the release is not this stack's or holds no CRD)."""
    release, namespace = _release(inputs)
    marker = ((inputs.get("values") or {}).get("global") or {}).get(OWNER_VALUE)
    if release is None or not isinstance(marker, str):
        return []
    manager = marker.rsplit("/", 1)[0]
    secrets = cluster.secrets(namespace, RECORD_LABELS.format(release=release))
    if not secrets:
        return []
    newest = max(secrets, key=lambda s: record_of(s).revision)
    if record_of(newest).owner != marker:
        return []  # not the record this resource made: not ours to edit
    body = dict(decode_release((newest.get("data") or {}).get("release", "")))
    manifest = str(body.get("manifest") or "")
    held: dict[str, list[str]] = {}
    for crd in release_crds(manifest):
        live = cluster.get(CRD_API, "CustomResourceDefinition", crd, None)
        found = _crd_others(cluster, live, manager) if live is not None else []
        if found:
            held[crd] = found
    if not held:
        return []
    body["manifest"] = keep_crds(manifest, held)
    cluster.replace_secret_data(
        namespace, str(newest["metadata"]["name"]), {"release": encode_release(body)}
    )
    return [kept_message(f"CustomResourceDefinition {crd}", found) for crd, found in held.items()]


def hand_back_taints(
    cluster: Cluster, old_inputs: Mapping[str, Any], new_inputs: Mapping[str, Any]
) -> bool:
    """Before a node patch is updated: when the pool no longer taints the node (the new patch
    sends no taint list) and the old one did, give the node its own taints back first
    (`restore_taints`), so the apply that drops the list does not take them with it (the list is
    one atomic field; the hand-back moves it to another field manager)."""
    if ((new_inputs.get("spec") or {}).get("taints")) is not None:
        return False
    return restore_taints(cluster, old_inputs)


def restore_taints(cluster: Cluster, inputs: Mapping[str, Any], attempts: int = 3) -> bool:
    """Take our taints (the patch's `gpu-inference.dev/taints` annotation) off the node `inputs`
    patches, keeping the rest; True when the node's taints changed. A JSON patch that first tests
    the node's resourceVersion, so a concurrent change is re-read, never overwritten."""
    meta = inputs.get("metadata") or {}
    name = meta.get("name")
    ours = json.loads((meta.get("annotations") or {}).get(OWN_TAINTS_ANNOTATION) or "[]")
    if not isinstance(name, str) or not ours:
        return False
    for attempt in range(attempts):
        node = cluster.get("v1", "Node", name, None)
        if node is None:
            return False  # the node is gone: nothing to give back
        current = (node.get("spec") or {}).get("taints") or []
        kept = taints_without(current, ours)
        if len(kept) == len(current):
            return False
        version = (node.get("metadata") or {}).get("resourceVersion")
        ops: list[dict[str, Any]] = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": version}
        ]
        if kept:
            ops.append({"op": "replace", "path": "/spec/taints", "value": kept})
        else:
            ops.append({"op": "remove", "path": "/spec/taints"})
        try:
            cluster.patch_node(name, ops, RESTORE_MANAGER)
            return True
        except Exception as e:  # the client's ApiException: retried on a failed test only
            if getattr(e, "status", None) not in (409, 422) or attempt == attempts - 1:
                raise
    return False
