"""The bodies of the deploy-time hooks, on a `Cluster` (no Pulumi here: `provider.py` binds them).

- `refuse_foreign` (before a create): the object may already exist, made by this stack's `up` that
  was killed before recording it (adopted: the provider upserts it) or by someone else (refused,
  with the way out).
- `recover_release` (on a Helm release's failed create or update): clears the records a killed
  `up` left (`components.model.deploy.helm_records`) and asks the engine to retry.
- `restore_taints` (before a tainting node patch is deleted): puts the node's taints back as they
  are less ours, before the provider releases the patch's fields; the taint list is one atomic
  field under server-side apply, so releasing it would take the node's own taints too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..model.deploy.helm_records import RECORD_LABELS, chart_name, record_of, records_to_clear
from ..model.deploy.ownership import FIELD_MANAGER_ANNOTATION, adoption_problem
from ..model.scheduling.taints import OWN_TAINTS_ANNOTATION, taints_without
from .cluster import Cluster

RESTORE_MANAGER = "gpu-inference-restore"
"""The field manager of the taint list a pool leaves behind (the node's own taints)."""
RETRIES = 2
"""How many times a Helm release is cleared and retried before its error stands."""


class AdoptionRefused(Exception):
    """An object of our name exists and is not this stack's."""


def refuse_foreign(cluster: Cluster, inputs: Mapping[str, Any]) -> None:
    """Raise `AdoptionRefused` when the object `inputs` would create exists and is another's."""
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
    problem = adoption_problem(live, manager)
    if problem:
        raise AdoptionRefused(problem)


def recover_release(
    cluster: Cluster, operation: str, errors: Sequence[str], inputs: Mapping[str, Any]
) -> list[str]:
    """Clear what blocks the release `inputs` describes after `operation` failed with `errors`
    (newest first); the Secrets deleted ([] when the error is not one a killed `up` leaves, or
    after `RETRIES` tries)."""
    if not errors or len(errors) > RETRIES:
        return []
    release = inputs.get("name")
    if not isinstance(release, str) or not release:
        return []
    namespace = str(inputs.get("namespace") or "default")
    chart = inputs.get("chart")
    records = [
        record_of(s) for s in cluster.secrets(namespace, RECORD_LABELS.format(release=release))
    ]
    doomed = records_to_clear(
        records, operation, errors[0], chart_name(chart) if isinstance(chart, str) else None
    )
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
