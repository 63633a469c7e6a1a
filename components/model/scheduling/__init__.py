"""Kubernetes' own rules for where a pod may run, one module per concern: `names` (label and
name syntax), `quantities`, `taints` (taints and tolerations), `affinity` (node selector
requirements and node affinity), `placement` (`Placement`). This module re-exports their public
names for callers that take the scheduling model as a whole."""

from .affinity import (
    SELECTOR_OPERATORS,
    NodeAffinity,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from .names import (
    DNS1035_LABEL_RULE,
    DNS1123_LABEL_RULE,
    DNS1123_SUBDOMAIN_RULE,
    LABEL_KEY_RULE,
    LABEL_VALUE_RULE,
    label_key_problem,
    label_value_problem,
    validate_dns1035_label,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_label_key,
    validate_label_value,
    validate_labels,
)
from .placement import (
    POOL_LABEL,
    SCHEDULING_STYLES,
    WIRED_POOL_ANNOTATION,
    Placement,
)
from .quantities import (
    QUANTITY_RULE,
    parse_int64,
    parse_quantity,
    validate_quantity,
    whole_number,
)
from .taints import (
    CLOUD_EFFECTS,
    EFFECTS_FROM_CLOUD,
    FILTERING_EFFECTS,
    GPU_RESOURCE,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    Taint,
    Toleration,
    extended_resource_tolerations,
    tolerating,
    untolerated,
)

__all__ = [
    "CLOUD_EFFECTS",
    "DNS1035_LABEL_RULE",
    "DNS1123_LABEL_RULE",
    "DNS1123_SUBDOMAIN_RULE",
    "EFFECTS_FROM_CLOUD",
    "FILTERING_EFFECTS",
    "GPU_RESOURCE",
    "LABEL_KEY_RULE",
    "LABEL_VALUE_RULE",
    "POOL_LABEL",
    "QUANTITY_RULE",
    "SCHEDULING_STYLES",
    "SELECTOR_OPERATORS",
    "TAINT_EFFECTS",
    "TOLERATION_OPERATORS",
    "WIRED_POOL_ANNOTATION",
    "NodeAffinity",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "Placement",
    "PreferredSchedulingTerm",
    "Taint",
    "Toleration",
    "extended_resource_tolerations",
    "label_key_problem",
    "label_value_problem",
    "parse_int64",
    "parse_quantity",
    "tolerating",
    "untolerated",
    "validate_dns1035_label",
    "validate_dns1123_label",
    "validate_dns1123_subdomain",
    "validate_label_key",
    "validate_label_value",
    "validate_labels",
    "validate_quantity",
    "whole_number",
]
