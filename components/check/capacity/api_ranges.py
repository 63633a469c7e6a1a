"""GI065: a count in the graph outside what its API takes (the rule reads the graph's entries).

A workload's replica and parallelism counts are int32 fields of their APIs, some with a least
value; a graph may hold any number (a program's own resources, a hand-written resources.json).
Past the int32 maximum the API server refuses the object (its Go type cannot hold it) or the
controller that reads it cannot decode it; below the least value the API server's validation
refuses it. Either way nothing of it runs, and the check says so instead of working on the
number (the capacity proof is bounded anyway: `capacity.model.bounded_view`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ...model.inputs import INT32_MAX
from ..read import as_map, group_of, is_type, kind_of, resource_id

if TYPE_CHECKING:
    from ..rules import CheckContext

INT32_MIN = -(2**31)


class Count(NamedTuple):
    """An integer field of a kind and the range its API takes."""

    path: str
    least: int = INT32_MIN
    most: int = INT32_MAX


_REPLICAS = ("minReplicas", "maxReplicas", "scaleTarget")
_PARALLELISM = ("tensor", "pipeline", "data", "dataLocal")

COUNTS: Mapping[tuple[str, str], tuple[Count, ...]] = {
    # k8s.io/api v0.36.3 apps/v1 `Replicas *int32`; kubernetes v1.36.3
    # pkg/apis/apps/validation ValidateDeploymentSpec / ValidateStatefulSetSpec:
    # ValidateNonnegativeField(spec.Replicas).
    ("apps", "Deployment"): (Count("spec.replicas", 0),),
    ("apps", "StatefulSet"): (Count("spec.replicas", 0),),
    # The CRDs (../shared/crds, their `format: int32`, `minimum` and `maximum`): KServe v0.20.0,
    # Seldon Core 2.6.0, LeaderWorkerSet v0.8.0.
    ("serving.kserve.io", "InferenceService"): tuple(
        Count(f"spec.{part}.{f}")
        for part in ("predictor", "transformer", "explainer")
        for f in _REPLICAS
    ),
    ("serving.kserve.io", "LLMInferenceService"): (
        Count("spec.replicas", 0),
        *(Count(f"spec.parallelism.{f}", 1) for f in _PARALLELISM),
        Count("spec.prefill.replicas", 0),
        *(Count(f"spec.prefill.parallelism.{f}", 1) for f in _PARALLELISM),
    ),
    ("mlops.seldon.io", "Server"): tuple(
        Count(f"spec.{f}") for f in ("replicas", "minReplicas", "maxReplicas")
    ),
    ("mlops.seldon.io", "Model"): tuple(
        Count(f"spec.{f}") for f in ("replicas", "minReplicas", "maxReplicas")
    ),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (
        Count("spec.replicas", 0, 1_000_000),
        Count("spec.leaderWorkerTemplate.size"),
    ),
}


def _value(inputs: Mapping[str, Any], path: str) -> Any:
    node: Any = inputs
    for step in path.split("."):
        node = as_map(node).get(step)
        if node is None:
            return None
    return node


def out_of_range(entries: list[Mapping[str, Any]]) -> Iterator[tuple[str, str, int, Count]]:
    """(resource, field, value, its range) for each count outside it."""
    for entry in entries:
        typ = str(entry.get("type", ""))
        counts = COUNTS.get((group_of(typ), kind_of(typ)))
        if not counts or not is_type(typ, group_of(typ), kind_of(typ)):
            continue
        inputs = as_map(entry.get("inputs"))
        name = str(entry.get("name", ""))
        for c in counts:
            value = _value(inputs, c.path)
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            if not c.least <= value <= c.most:
                yield resource_id(typ, name), c.path, value, c


def api_ranges(ctx: CheckContext) -> None:
    """GI065 for each count of the graph outside its API's range."""
    for resource, path, value, c in out_of_range(ctx.entries):
        took = "an int32" if (c.least, c.most) == (INT32_MIN, INT32_MAX) else f"{c.least}..{c.most}"
        ctx.out.add(
            "GI065",
            resource,
            f"{path} is {value}, outside what its API takes ({took}): the API server refuses "
            "the object, or its controller cannot read it, so none of its pods run",
            f"set {path} to at most {c.most}"
            if value > c.most
            else f"set {path} to at least {c.least}",
        )
