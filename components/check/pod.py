"""What a pod template asks for: GPUs, extended resources, the model size it states."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.serving.requests import pod_requests
from .contract import (
    DTYPE_BYTES,
    MODEL_DTYPE_ANNOTATION,
    MODEL_PARAMETERS_ANNOTATION,
    MODEL_SIZE_ANNOTATION,
)
from .read import (
    Template,
    as_map,
)

_SCALE = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}


def stated_model_size(annotations: Mapping[str, Any]) -> float | None:
    """Weights in GB a workload states: `MODEL_SIZE_ANNOTATION`, or `MODEL_PARAMETERS_ANNOTATION`
    (`8e9`, `8B`, `70B`, `1.5B`) x the bytes of `MODEL_DTYPE_ANNOTATION` (fp16 when absent).
    Raises ValueError for text that is neither (reported as GI013)."""
    size = annotations.get(MODEL_SIZE_ANNOTATION)
    if size is not None:
        value = float(str(size))
        if value <= 0:
            raise ValueError(f"{MODEL_SIZE_ANNOTATION} must be above 0, got {size!r}")
        return value
    params = annotations.get(MODEL_PARAMETERS_ANNOTATION)
    if params is None:
        return None
    text = str(params).strip().upper()
    unit = text[-1] if text[-1:] in _SCALE and not text[-1:].isdigit() else ""
    count = float(text[: len(text) - len(unit)]) * _SCALE[unit]
    dtype = str(annotations.get(MODEL_DTYPE_ANNOTATION, "fp16")).strip().lower()
    if dtype not in DTYPE_BYTES:
        raise ValueError(
            f"{MODEL_DTYPE_ANNOTATION} {dtype!r} is not known (allowed: {', '.join(DTYPE_BYTES)})"
        )
    return round(count * DTYPE_BYTES[dtype] / 1e9, 3)


def resource_quantity(container: Mapping[str, Any], resource: str) -> Any:
    res = as_map(container.get("resources"))
    requests, limits = as_map(res.get("requests")), as_map(res.get("limits"))
    return requests.get(resource, limits.get(resource))


def pod_gpus(template: Template) -> int:
    """GPUs the pod needs, as the scheduler counts them (`model.serving.requests.pod_requests`): the
    containers and the sidecar init containers (`restartPolicy: Always`, they run beside them)
    summed, or an init container with the sidecars started before it, whichever is more.
    Raises InputError for a quantity Kubernetes would refuse."""
    return pod_requests(template.containers, template.init_containers).gpus


def extended_resources(template: Template) -> list[str]:
    names: set[str] = set()
    for c in [*template.containers, *template.init_containers]:
        res = as_map(c.get("resources"))
        for part in ("requests", "limits"):
            names.update(str(k) for k in as_map(res.get(part)))
    return sorted(names)
