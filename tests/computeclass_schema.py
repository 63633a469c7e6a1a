"""A strict JSON schema for the GKE ComputeClass fields gpu-inference emits.

GKE installs the ComputeClass CRD itself and Google does not publish it, so this is written from:
- a CRD dumped from a GKE cluster: tommy351/kubernetes-models-ts,
  `third-party/gke/crd/computeclasses.yaml` (priorities[].{gpu.{type,count}, machineType, spot},
  nodePoolAutoCreation.enabled, activeMigration.optimizeRulePriority,
  autoscalingPolicy.consolidationDelayMinutes 1..1440, whenUnsatisfiable enum ScaleUpAnyway |
  DoNotScaleUp, required);
- GKE's ComputeClass reference, https://docs.cloud.google.com/kubernetes-engine/docs/reference/
  crds/computeclass (newer fields: `priorities[].reservations.{affinity, specific[].name}`,
  `nodePoolConfig.{nodeLabels, taints[{key, value, effect}]}`);
- Google's GPU ComputeClasses in GoogleCloudPlatform/accelerated-platforms,
  `platforms/gke/base/core/custom_compute_class/templates/manifests/gpu/` (`gpu.driverVersion:
  latest`, `flexStart.enabled`, `reservations.affinity: AnyBestEffort | Specific`).
Only the fields we emit are listed, and unknown keys are refused, as for the upstream CRDs.
"""

from __future__ import annotations

from typing import Any

import jsonschema

_TAINT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["key", "effect"],
    "properties": {
        "key": {"type": "string"},
        "value": {"type": "string"},
        "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
    },
}

_PRIORITY = {
    "type": "object",
    "additionalProperties": False,
    "minProperties": 1,
    "properties": {
        "gpu": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "type": {"type": "string"},
                "count": {"type": "integer", "minimum": 1},
                "driverVersion": {"enum": ["default", "latest"]},
            },
        },
        "machineType": {"type": "string"},
        "spot": {"type": "boolean"},
        # tommy351/kubernetes-models-ts computeclasses.yaml: priorities[].storage
        "storage": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "bootDiskSize": {"type": "integer", "minimum": 10},
                "bootDiskType": {
                    "enum": ["pd-balanced", "pd-standard", "pd-ssd", "hyperdisk-balanced"]
                },
                "localSSDCount": {"type": "integer", "minimum": 1},
            },
        },
        "flexStart": {
            "type": "object",
            "additionalProperties": False,
            "required": ["enabled"],
            "properties": {"enabled": {"type": "boolean"}},
        },
        "reservations": {
            "type": "object",
            "additionalProperties": False,
            "required": ["affinity"],
            "properties": {
                "affinity": {"enum": ["AnyBestEffort", "Specific", "None"]},
                "specific": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["name"],
                        "properties": {"name": {"type": "string"}, "project": {"type": "string"}},
                    },
                },
            },
        },
    },
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "cloud.google.com/v1"},
        "kind": {"const": "ComputeClass"},
        "metadata": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "pattern": "^(?!gke)(?!autopilot)[a-z0-9-]+$"},
                # ObjectMeta's maps (the API server's, not the CRD's): the stack's field manager.
                "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["whenUnsatisfiable"],
            "properties": {
                "priorities": {"type": "array", "items": _PRIORITY},
                "nodePoolAutoCreation": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["enabled"],
                    "properties": {"enabled": {"type": "boolean"}},
                },
                "whenUnsatisfiable": {"enum": ["ScaleUpAnyway", "DoNotScaleUp"]},
                "activeMigration": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["optimizeRulePriority"],
                    "properties": {"optimizeRulePriority": {"type": "boolean"}},
                },
                "autoscalingPolicy": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "consolidationDelayMinutes": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 1440,
                        }
                    },
                },
                "nodePoolConfig": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "nodeLabels": {
                            "type": "object",
                            "additionalProperties": {"type": "string"},
                        },
                        "taints": {"type": "array", "items": _TAINT},
                    },
                },
            },
        },
    },
}


def validate_compute_class(obj: dict[str, Any]) -> None:
    """Raise AssertionError listing every violation of `obj` against `SCHEMA`."""
    errors = [
        f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
        for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(obj)
    ]
    if errors:
        raise AssertionError("ComputeClass does not validate:\n  " + "\n  ".join(sorted(errors)))
