"""Dynamic Resource Allocation (`resource.k8s.io`): the ResourceClaims, ResourceClaimTemplates and
DeviceClasses of any graph, and which pod templates take devices (GPUs) through them.

A pod takes devices through DRA when its spec lists `resourceClaims` (or a container lists
`resources.claims`): kubernetes-sigs/karpenter v1.14.1 `pkg/utils/pod/scheduling.go`
`HasDRARequirements` reads exactly that. A claim asks for a GPU when one of its device requests
(`spec.devices.requests[]`: `exactly.deviceClassName` in resource.k8s.io/v1,
`deviceClassName` in v1beta1, or one of `firstAvailable[].deviceClassName`) names a GPU device
class: `gpu.nvidia.com` or `mig.nvidia.com` (the DeviceClasses NVIDIA's DRA driver chart makes,
NVIDIA/k8s-dra-driver-gpu v25.8.1 `deployments/helm/nvidia-dra-driver-gpu/templates/
deviceclass-{gpu,mig}.yaml`), or a DeviceClass of the graph whose CEL selectors name an NVIDIA
driver (`nvidia.com`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..read import Template, as_list, as_map, is_type, metadata, namespace_of

DRA_GROUP = "resource.k8s.io"
GKE_DRA_LABELS = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "nvidia.com/gpu.present": "true",
}
"""Node labels a GKE GPU node pool needs for DRA: GKE's own device plugin off
(`gke-no-default-nvidia-gpu-device-plugin=true`: GKE docs "Prepare GKE infrastructure for DRA
workloads", how-to/set-up-dra, "Create a GKE node pool with GPUs"), and the label on which NVIDIA's
DRA driver runs its kubelet plugin (`nvidia.com/gpu.present=true`: the chart's default
`kubeletPlugin.affinity`, NVIDIA/k8s-dra-driver-gpu v25.8.1
deployments/helm/nvidia-dra-driver-gpu/values.yaml; GKE's DRA guides label the pool with it, the
docs' own bullet could not be read in full here). `cloud.google.com/gke-nvidia-gpu-dra-driver=true`
(GKE's managed DRA driver, seen in GKE AI Labs tutorials, unverified in GKE's docs) stands in for
the second."""
GKE_MANAGED_DRA_LABEL = ("cloud.google.com/gke-nvidia-gpu-dra-driver", "true")
NVIDIA_DEVICE_CLASSES = frozenset({"gpu.nvidia.com", "mig.nvidia.com"})


@dataclass(frozen=True)
class DraUse:
    """The DRA claims of one pod template."""

    claims: tuple[str, ...]  # the pod's claim entries, as `name` (template or claim name)
    gpu: bool | None  # True: a claim asks for a GPU; False: none does; None: not known
    # (a claim or template the graph does not hold)

    @property
    def any(self) -> bool:
        return bool(self.claims)


@dataclass
class DraIndex:
    """Device classes each ResourceClaim / ResourceClaimTemplate asks for, by (namespace, name)."""

    claims: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    templates: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    gpu_classes: set[str] = field(default_factory=lambda: set(NVIDIA_DEVICE_CLASSES))

    def use(self, t: Template) -> DraUse:
        spec = t.fragment
        entries = [as_map(c) for c in as_list(spec.get("resourceClaims"))]
        in_containers = any(
            as_list(as_map(c.get("resources")).get("claims"))
            for c in [*t.containers, *t.init_containers]
        )
        if not entries and not in_containers:
            return DraUse((), False)
        gpu, known, names = False, bool(entries), []
        for e in entries:
            source = as_map(e.get("source"))  # the alpha API's shape
            claim = e.get("resourceClaimName") or source.get("resourceClaimName")
            template = e.get("resourceClaimTemplateName") or source.get("resourceClaimTemplateName")
            key = (t.namespace, str(claim or template or ""))
            found = self.claims.get(key) if claim else self.templates.get(key)
            names.append(str(claim or template or e.get("name") or ""))
            if found is None:
                known = False
            elif found & self.gpu_classes:
                gpu = True
        use_gpu: bool | None = True if gpu else (False if known else None)
        return DraUse(tuple(names) or ("(container resources.claims)",), use_gpu)


def _device_classes(devices: Mapping[str, Any]) -> set[str]:
    found = set()
    for r in map(as_map, as_list(devices.get("requests"))):
        exactly = as_map(r.get("exactly"))
        for name in (exactly.get("deviceClassName"), r.get("deviceClassName")):
            if name:
                found.add(str(name))
        for alt in map(as_map, as_list(r.get("firstAvailable"))):
            if alt.get("deviceClassName"):
                found.add(str(alt["deviceClassName"]))
    return found


def read_dra(graph: Sequence[Mapping[str, Any]]) -> DraIndex:
    index = DraIndex()
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        name = str(metadata(inputs).get("name") or entry.get("name"))
        key = (namespace_of(inputs), name)
        spec = as_map(inputs.get("spec"))
        if is_type(typ, DRA_GROUP, "ResourceClaim"):
            index.claims[key] = _device_classes(as_map(spec.get("devices")))
        elif is_type(typ, DRA_GROUP, "ResourceClaimTemplate"):
            index.templates[key] = _device_classes(as_map(as_map(spec.get("spec")).get("devices")))
        elif is_type(typ, DRA_GROUP, "DeviceClass"):
            expressions = " ".join(
                str(as_map(as_map(s).get("cel")).get("expression") or "")
                for s in as_list(spec.get("selectors"))
            )
            if "nvidia.com" in expressions:
                index.gpu_classes.add(name)
    return index


def missing_dra_labels(labels: Mapping[str, str]) -> list[str]:
    """The `GKE_DRA_LABELS` a GKE node pool's nodes lack, as `key=value`."""
    managed = labels.get(GKE_MANAGED_DRA_LABEL[0]) == GKE_MANAGED_DRA_LABEL[1]
    return [
        f"{k}={v}"
        for k, v in GKE_DRA_LABELS.items()
        if labels.get(k) != v and not (managed and k == "nvidia.com/gpu.present")
    ]
