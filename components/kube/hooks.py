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
- `restore_taints` (before a tainting node patch is deleted): puts the node's taints back as they
  are less ours, before the provider releases the patch's fields; the taint list is one atomic
  field under server-side apply, so releasing it would take the node's own taints too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from ..model.deploy.helm_records import (
    RECORD_LABELS,
    record_of,
    records_to_clear,
    release_owner,
)
from ..model.deploy.ownership import FIELD_MANAGER_ANNOTATION, Ownership, adoption_problem
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


class AdoptionRefused(Exception):
    """An object of our name exists and is not this stack's."""


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
