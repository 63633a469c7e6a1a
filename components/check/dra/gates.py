"""GI067: objects and pod fields that need a feature gate the cluster's release leaves off.

The defaults are each release's own (`defaultVersionedKubernetesFeatureGates` in
`pkg/features/kube_features.go` of k8s.io/kubernetes v1.36.3 and v1.37.2; docs/dra.md's gate
table, which tests/e2e/test_upstream_copies.py holds to both files, and test_gates holds this
table to that one). A managed cluster's gates are its provider's: the check cannot see them, so
it warns, naming the gate and the releases that leave it off.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..read import as_map, group_of, kind_of, resource_id
from ..readers.apps import is_apps_workload

if TYPE_CHECKING:
    from ..rules import CheckContext

RELEASES = ("1.36", "1.37")
"""The Kubernetes releases the clouds' channels offer and the rig runs (`rig.KUBERNETES_VERSIONS`)."""
GATE_DEFAULTS: Mapping[str, tuple[bool, ...]] = {
    "GenericWorkload": (False, False),  # alpha on 1.36, beta (off) on 1.37
    "DRADeviceTaintRules": (False, True),  # beta (off) on 1.36, GA on 1.37
}
"""Gate -> its default on each of `RELEASES`."""
GATED_KINDS = {
    ("scheduling.k8s.io", "Workload"): "GenericWorkload",
    ("scheduling.k8s.io", "PodGroup"): "GenericWorkload",
    ("resource.k8s.io", "DeviceTaintRule"): "DRADeviceTaintRules",
}
"""The API objects served only with their gate on (k8s.io/api v0.37.2 scheduling/v1alpha3 and
v1beta1 Workload, PodGroup; resource/v1 DeviceTaintRule)."""
GATED_POD_FIELDS = {"schedulingGroup": "GenericWorkload"}
"""Pod spec fields the API server drops when their gate is off (k8s.io/api v0.37.2 core/v1
`PodSpec.SchedulingGroup`, `+featureGate=GenericWorkload`)."""


def off_on(gate: str) -> str:
    """`off by default on Kubernetes 1.36 (on from 1.37)`."""
    defaults = GATE_DEFAULTS[gate]
    off = [r for r, on in zip(RELEASES, defaults, strict=True) if not on]
    on = [r for r, on in zip(RELEASES, defaults, strict=True) if on]
    text = f"off by default on Kubernetes {' and '.join(off)}"
    return text + (f" (on from {on[0]})" if on else "")


def gated(entries: list[Mapping[str, Any]]) -> Iterator[tuple[str, str, str]]:
    """(resource, what needs the gate, gate) for each gated object and pod field of the graph."""
    for entry in entries:
        typ, name = str(entry.get("type", "")), str(entry.get("name", ""))
        if typ.startswith("kubernetes:"):
            gate = GATED_KINDS.get((group_of(typ), kind_of(typ)))
            if gate is not None:
                yield resource_id(typ, name), f"a {kind_of(typ)}", gate
        if is_apps_workload(typ):
            spec = as_map(as_map(entry.get("inputs")).get("spec"))
            pod = as_map(as_map(spec.get("template")).get("spec"))
            for field, gate in GATED_POD_FIELDS.items():
                if pod.get(field) is not None:
                    yield resource_id(typ, name), f"its pods' `{field}`", gate


def gated_features(ctx: CheckContext) -> None:
    """GI067 for each object or pod field of the graph whose feature gate the releases leave off."""
    for resource, what, gate in gated(ctx.entries):
        pod_field = what.startswith("its pods'")
        effect = (
            "the API server drops the field, so the pods are scheduled one by one, not as a group"
            if pod_field
            else "the API server does not serve its API and refuses it"
        )
        ctx.out.add(
            "GI067",
            resource,
            f"{what} needs the {gate} feature gate, {off_on(gate)}: on a cluster without it "
            f"{effect}",
            f"enable {gate} on the cluster's control plane (on GKE, EKS and AKS the provider "
            "sets the gates), or leave it out",
        )
