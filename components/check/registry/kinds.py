"""Which pool kind (`rule.POOL_KINDS`) a pool is, told from what the check already has: the type
tokens of its resources (`PoolFacts.keys`) and, for a Karpenter NodePool, the node class its
template names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..contract import (
    ASG_GROUP,
    AUTOPILOT_CLUSTER,
    AUTOPILOT_POOL,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    NODE_PATCH,
)
from ..read import as_map, is_type
from ..readers.aks import AGENT_POOL
from ..readers.karpenter import nodepool_head
from ..readers.nap import is_nap_nodepool
from ..results import PoolFacts
from .rule import POOL_KIND_NAMES

_BY_TYPE = {
    GKE_NODE_POOL: "gke",
    AUTOPILOT_POOL: "autopilot",
    AUTOPILOT_CLUSTER: "autopilot",  # read as a pool only with enableAutopilot
    EKS_NODE_GROUP: "eks",
    ASG_GROUP: "asg",  # read as a pool only when self-managed
    AGENT_POOL: "aks",
    NODE_PATCH: "existing",
}


def resource_kind(entry: Mapping[str, Any]) -> str | None:
    """The pool kind of a graph entry the readers read as (part of) a pool; None: another type."""
    typ = str(entry.get("type", ""))
    if typ in _BY_TYPE:
        return _BY_TYPE[typ]
    if is_type(typ, "cloud.google.com", "ComputeClass"):
        return "compute_class"
    if not is_type(typ, "karpenter.sh", "NodePool"):
        return None
    if is_nap_nodepool(entry):
        return "nap"
    ref = as_map(as_map(nodepool_head(entry).tspec).get("nodeClassRef"))
    return "auto_mode" if ref.get("group") == "eks.amazonaws.com" else "karpenter"


def pool_kinds(pool: PoolFacts, entries: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """The kinds of the pool's resources, in `POOL_KINDS` order (one, but for a pool whose
    resources share its pool label across kinds); `entries`: the graph by `type::name`."""
    found = set()
    for key in pool.keys:
        entry = entries.get(key) or {"type": key.rsplit("::", 1)[0]}
        kind = resource_kind(entry)
        if kind is not None:
            found.add(kind)
    return tuple(k for k in POOL_KIND_NAMES if k in found)
