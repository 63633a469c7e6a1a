"""Knative Serving's settings in a graph: its feature flags and whether it scales to zero."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..read import (
    as_map,
    is_type,
    kind_of,
    metadata,
    str_map,
)


def knative_settings(
    graph: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, str] | None, str, bool]:
    """(features or None when the graph has no Knative config, where they are set, scale-to-zero
    allowed). The KnativeServing CR wins over a ConfigMap: the operator reverts ConfigMap edits."""
    operator: tuple[dict[str, str], str] | None = None
    configmap: tuple[dict[str, str], str] | None = None
    scale_to_zero = True
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        if is_type(typ, "operator.knative.dev", "KnativeServing"):
            config = as_map(as_map(inputs.get("spec")).get("config"))
            features = str_map(config.get("features"))
            operator = (
                {**(operator[0] if operator else {}), **features},
                f"spec.config.features of KnativeServing {entry.get('name')}",
            )
            autoscaler = str_map(config.get("autoscaler"))
            if autoscaler.get("enable-scale-to-zero", "").lower() == "false":
                scale_to_zero = False
        elif typ in ("kubernetes:core/v1:ConfigMapPatch", "kubernetes:core/v1:ConfigMap"):
            md = metadata(inputs)
            if md.get("namespace") not in (None, "knative-serving"):
                continue
            data = str_map(inputs.get("data"))
            if md.get("name") == "config-features":
                configmap = (
                    {**(configmap[0] if configmap else {}), **data},
                    f"data of {kind_of(typ)} knative-serving/config-features",
                )
            elif (
                md.get("name") == "config-autoscaler"
                and data.get("enable-scale-to-zero", "").lower() == "false"
            ):
                scale_to_zero = False
    chosen = operator or configmap
    if chosen is None:
        return None, "", scale_to_zero
    return chosen[0], chosen[1], scale_to_zero
