"""Existing nodes (`kubernetes:core/v1:NodePatch`) as the check sees them: the labels, taints and
annotations the patch gives, and what it records the nodes already carry."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...model.errors import InputError
from ...model.nodes.labels import kubelet_labels
from ...model.nodes.shapes import NodeShape, existing_node_shape
from ...model.scheduling import (
    GPU_RESOURCE,
)
from ..contract import (
    ALLOCATABLE_ANNOTATION,
    GKE_ACCELERATOR_LABEL,
    GPU_COUNT_KEYS,
    POOL_LABEL,
    PRESENT_LABELS_ANNOTATION,
)
from ..read import (
    Findings,
    PoolDraft,
    as_int,
    as_map,
    metadata,
    read_taints,
    resource_id,
    str_map,
)
from ..results import (
    NodeTemplate,
)
from .dra import node_dra_devices
from .gke import gke_memory


def _present_labels(annotations: Mapping[str, str]) -> dict[str, str]:
    """Labels a NodePatch records as already on the node (NFD / GFD labels it does not patch)."""
    try:
        found = json.loads(annotations.get(PRESENT_LABELS_ANNOTATION, "{}"))
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def node_shape(
    name: str, annotations: Mapping[str, str], rid: str, out: Findings
) -> tuple[NodeShape | None, str | None]:
    """The node's shape from `ALLOCATABLE_ANNOTATION`; without it fit is not judged (None and
    why); a value Kubernetes would not take is GI013."""
    text = annotations.get(ALLOCATABLE_ANNOTATION)
    if text is None:
        return None, f"the nodes do not declare what they hold ({ALLOCATABLE_ANNOTATION})"
    try:
        declared = json.loads(text)
        return existing_node_shape(name, declared, source=ALLOCATABLE_ANNOTATION), None
    except (InputError, json.JSONDecodeError, TypeError, ValueError) as e:
        out.add(
            "GI013",
            rid,
            f"its {ALLOCATABLE_ANNOTATION} annotation is not readable: {e}",
            'give JSON quantities, e.g. {"cpu": "32", "memory": "250Gi", '
            '"ephemeral-storage": "400Gi"}',
        )
        return None, f"its {ALLOCATABLE_ANNOTATION} annotation is not readable"


def node_pool(entry: Mapping[str, Any], out: Findings) -> PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    rid = resource_id(typ, name)
    md = metadata(inputs)
    annotations = str_map(md.get("annotations"))
    labels = {**_present_labels(annotations), **str_map(md.get("labels"))}
    taints = read_taints(as_map(inputs.get("spec")).get("taints"), rid, out)
    gpus: int | None = None
    for key in GPU_COUNT_KEYS:
        found = as_int(annotations.get(key, labels.get(key)))
        if found is not None:
            gpus = found
            break
    evidence = (
        any(k.startswith("nvidia.com/gpu") for k in labels)
        or GKE_ACCELERATOR_LABEL in labels
        or "k8s.amazonaws.com/accelerator" in labels
        or any(t.key == GPU_RESOURCE for t in taints)
    )
    node_name = str(md["name"]) if md.get("name") else None
    # The kubelet's labels are on the node whatever the patch says (its arch is not known here).
    labels = {**kubelet_labels(None, node_name), **labels}
    shape, note = node_shape(node_name or name, annotations, rid, out)
    return PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="existing",
        resource=rid,
        node=NodeTemplate(
            node_name, labels, tuple(taints), gpus, shape=shape, dra_devices=node_dra_devices(md)
        ),
        shape_note=note,
        gpus=gpus,
        gpu=(gpus or 0) > 0 or (gpus is None and evidence),
        accelerator=labels.get("nvidia.com/gpu.product") or labels.get(GKE_ACCELERATOR_LABEL),
        gpu_memory_gib=_node_gpu_memory(annotations, labels),
    )


def _node_gpu_memory(annotations: Mapping[str, str], labels: Mapping[str, str]) -> float | None:
    """GPU memory of an existing node: GFD's `nvidia.com/gpu.memory` (MiB), else the catalog's for
    a GKE accelerator label."""
    mib = as_int(annotations.get("nvidia.com/gpu.memory", labels.get("nvidia.com/gpu.memory")))
    return mib / 1024 if mib else gke_memory(labels.get(GKE_ACCELERATOR_LABEL))
