"""The placement check: which pod template can land on which pool, and what is wrong. Pure Python.
Imports only `components.model`. The rules are the registry's (`registry.RULES`); what the check
reads is in docs/findings.md."""

from .contract import (
    CODES,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    GPU_COUNT_KEYS,
    INFERENCE_SERVICE,
    ISVC_COMPONENTS,
    KNATIVE_SERVING,
    NODE_PATCH,
    POOL_LABEL,
    WIRED_POOL_ANNOTATION,
    wired_annotation,
)
from .readers.seldon import merge_seldon_pod_specs
from .report import render_markdown
from .results import Finding, PoolFacts, Report, WorkloadFacts
from .rules import check

__all__ = [
    "CODES",
    "EKS_NODE_GROUP",
    "GKE_NODE_POOL",
    "GPU_COUNT_KEYS",
    "INFERENCE_SERVICE",
    "ISVC_COMPONENTS",
    "KNATIVE_SERVING",
    "NODE_PATCH",
    "POOL_LABEL",
    "WIRED_POOL_ANNOTATION",
    "Finding",
    "PoolFacts",
    "Report",
    "WorkloadFacts",
    "check",
    "merge_seldon_pod_specs",
    "render_markdown",
    "wired_annotation",
]
