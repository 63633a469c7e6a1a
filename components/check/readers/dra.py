"""Dynamic Resource Allocation (`resource.k8s.io`): the ResourceClaims, ResourceClaimTemplates,
DeviceClasses and NVIDIA DRA driver installs of any graph, GKE's NVIDIA GPU driver installers
(what a GKE DRA pool, GKE's driver install off, needs under the DRA driver), and the claims each
pod template makes.

A pod takes devices through DRA when its spec lists `resourceClaims` (or a container lists
`resources.claims`): kubernetes-sigs/karpenter v1.14.1 `pkg/utils/pod/scheduling.go`
`HasDRARequirements` reads exactly that. Each `resourceClaims[]` entry names a ResourceClaim
(`resourceClaimName`, shared) or a ResourceClaimTemplate (`resourceClaimTemplateName`: the
resourceclaim controller makes one claim per pod from it). A claim's `spec.devices.requests[]`
asks, in resource.k8s.io/v1, `exactly` {deviceClassName, count (default 1), allocationMode
ExactCount | All, selectors[].cel.expression} or `firstAvailable[]` of such subrequests (v1beta1:
the same fields on the request itself).

KServe v0.20.0's managed DRA (kserve#5352; `pkg/controller/v1alpha2/llmisvc/managed_dra.go`): an
LLMInferenceService annotated `serving.kserve.io/exp-dra-device-class` gets a
ResourceClaimTemplate `<name>-managed-dra` with one request `device` of that class, `count` from
`exp-dra-device-count` (default 1) and the newline-separated CEL selectors of
`exp-dra-cel-selector`, claimed as `managed-device` by every workload pod (decode, worker,
prefill), not the router's scheduler. kserve#5828 (ServingRuntime `resourceClaims`) is not in
v0.20.0.

A claim asks for a GPU when a request names a GPU device class: `gpu.nvidia.com` or
`mig.nvidia.com` (`model.nodes.dra_devices.BUILTIN_DEVICE_CLASSES`), or a DeviceClass of the
graph whose CEL selectors name an NVIDIA driver (`nvidia.com`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...model.errors import InputError
from ...model.nodes.catalog import GKE_ACCELERATORS, MIG_PROFILES, aws_instance_or_none
from ...model.nodes.daemonsets import DAEMON_TOLERATIONS, GKE_DRIVER_INSTALLERS, DaemonPod
from ...model.nodes.dra_devices import (
    BUILTIN_DEVICE_CLASSES,
    DRA_DEVICES_ANNOTATION,
    DRA_MIG_LABEL,
    DRA_NODE_LABEL,
    node_devices,
)
from ...model.scheduling import Placement, Taint, Toleration
from ..read import (
    Template,
    as_list,
    as_map,
    group_of,
    helm_releases,
    is_type,
    metadata,
    namespace_of,
    resource_id,
)

DRA_GROUP = "resource.k8s.io"
GKE_DRA_LABELS = {
    "gke-no-default-nvidia-gpu-device-plugin": "true",
    "nvidia.com/gpu.present": "true",
}
"""Node labels a GKE GPU node pool needs for DRA: GKE's own device plugin off
(`gke-no-default-nvidia-gpu-device-plugin=true`: GKE docs "Prepare GKE infrastructure for DRA
workloads", how-to/set-up-dra, "Create a GKE node pool with GPUs"), and the label on which NVIDIA's
DRA driver runs its kubelet plugin (`nvidia.com/gpu.present=true`: the chart's default
`kubeletPlugin.affinity`, kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
deployments/helm/dra-driver-nvidia-gpu/values.yaml). `cloud.google.com/gke-nvidia-gpu-dra-driver=true`
(GKE's managed DRA driver, seen in GKE AI Labs tutorials, unverified in GKE's docs) stands in for
the second."""
GKE_MANAGED_DRA_LABEL = ("cloud.google.com/gke-nvidia-gpu-dra-driver", "true")
NVIDIA_DEVICE_CLASSES = frozenset(BUILTIN_DEVICE_CLASSES)
DRA_DRIVER_CHART = "dra-driver-nvidia-gpu"
KPLUGIN_DEFAULT_TOLERATIONS = (Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),)
"""The chart's `kubeletPlugin.tolerations` default (values.yaml, v0.4.1)."""
KPLUGIN_AFFINITY: Mapping[str, Any] = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
                for key, value in (
                    ("feature.node.kubernetes.io/pci-10de.present", "true"),
                    ("feature.node.kubernetes.io/pci-0302_10de.present", "true"),
                    ("feature.node.kubernetes.io/pci-0300_10de.present", "true"),
                    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
                    ("nvidia.com/gpu.present", "true"),
                )
            ]
        }
    }
}
"""The chart's `kubeletPlugin.affinity` default (values.yaml, v0.4.1): node-feature-discovery's
NVIDIA PCI / CPU labels, or `nvidia.com/gpu.present=true`."""

MANAGED_CLASS = "serving.kserve.io/exp-dra-device-class"
MANAGED_SELECTORS = "serving.kserve.io/exp-dra-cel-selector"
MANAGED_COUNT = "serving.kserve.io/exp-dra-device-count"


@dataclass(frozen=True)
class DeviceRequest:
    """One request of a claim (or one `firstAvailable` alternative)."""

    name: str
    device_class: str
    count: int = 1
    all_devices: bool = False  # allocationMode: All
    selectors: tuple[str, ...] = ()
    alternatives: tuple[DeviceRequest, ...] = ()  # firstAvailable: the first that allocates


@dataclass(frozen=True)
class Claim:
    """A ResourceClaim (or the claim a template makes), as the allocator reads it."""

    kind: str  # "ResourceClaim" | "ResourceClaimTemplate" | "KServe managed DRA"
    name: str
    requests: tuple[DeviceRequest, ...]

    @property
    def classes(self) -> set[str]:
        out: set[str] = set()
        for r in self.requests:
            out.update(a.device_class for a in (r.alternatives or (r,)))
        return out


@dataclass(frozen=True)
class DraUse:
    """The DRA claims of one pod template."""

    claims: tuple[str, ...]  # the pod's claim entries, as `name` (template or claim name)
    gpu: bool | None  # True: a claim asks for a GPU; False: none does; None: not known
    resolved: tuple[Claim, ...] = ()  # the claims the graph holds, in the pod's order
    missing: tuple[str, ...] = ()  # entries naming a claim / template the graph lacks

    @property
    def any(self) -> bool:
        return bool(self.claims)

    @property
    def whole_gpus(self) -> int:
        """Whole GPUs (`gpu.nvidia.com`) the claims ask for by count (0 when they ask none, or
        all of a class, or other devices)."""
        return sum(
            r.count
            for c in self.resolved
            for r in c.requests
            if r.device_class == "gpu.nvidia.com" and not r.all_devices and not r.alternatives
        )


@dataclass
class DraIndex:
    """The graph's claims, templates and DeviceClasses (by (namespace, name) / name)."""

    claims: dict[tuple[str, str], Claim] = field(default_factory=dict)
    templates: dict[tuple[str, str], Claim] = field(default_factory=dict)
    classes: dict[str, tuple[str, ...]] = field(
        default_factory=lambda: dict(BUILTIN_DEVICE_CLASSES)
    )
    gpu_classes: set[str] = field(default_factory=lambda: set(NVIDIA_DEVICE_CLASSES))
    drivers: list[DraDriver] = field(default_factory=list)
    installers: list[GpuDriverInstaller] = field(default_factory=list)

    def use(self, t: Template) -> DraUse:
        spec = t.fragment
        entries = [as_map(c) for c in as_list(spec.get("resourceClaims"))]
        managed = _managed_claim(t)
        in_containers = any(
            as_list(as_map(c.get("resources")).get("claims"))
            for c in [*t.containers, *t.init_containers]
        )
        if not entries and not in_containers and managed is None:
            return DraUse((), False)
        names: list[str] = []
        resolved: list[Claim] = []
        missing: list[str] = []
        for e in entries:
            source = as_map(e.get("source"))  # the alpha API's shape
            claim = e.get("resourceClaimName") or source.get("resourceClaimName")
            template = e.get("resourceClaimTemplateName") or source.get("resourceClaimTemplateName")
            key = (t.namespace, str(claim or template or ""))
            found = self.claims.get(key) if claim else self.templates.get(key)
            names.append(str(claim or template or e.get("name") or ""))
            if found is None:
                missing.append(names[-1])
            else:
                resolved.append(found)
        if managed is not None:
            names.append(managed.name)
            resolved.append(managed)
        gpu = any(c.classes & self.gpu_classes for c in resolved)
        known = bool(names) and not missing
        use_gpu: bool | None = True if gpu else (False if known else None)
        return DraUse(
            tuple(names) or ("(container resources.claims)",),
            use_gpu,
            tuple(resolved),
            tuple(missing),
        )


@dataclass(frozen=True)
class DraDriver:
    """An install of NVIDIA's DRA driver: where its kubelet plugin may run (its nodeSelector,
    required node affinity and tolerations)."""

    resource: str
    placement: Placement

    def serves(self, labels: Mapping[str, str], taints: Sequence[Taint]) -> bool:
        return self.placement.admits(labels, taints)


def _request(r: Mapping[str, Any]) -> DeviceRequest:
    exactly = as_map(r.get("exactly")) or r  # v1: `exactly`; v1beta1: on the request
    alternatives = tuple(_request(a) for a in map(as_map, as_list(r.get("firstAvailable"))))
    count = exactly.get("count")
    return DeviceRequest(
        name=str(r.get("name") or ""),
        device_class=str(exactly.get("deviceClassName") or ""),
        count=int(count) if isinstance(count, int | float) and count >= 1 else 1,
        all_devices=exactly.get("allocationMode") == "All",
        selectors=tuple(
            str(as_map(as_map(s).get("cel")).get("expression") or "")
            for s in as_list(exactly.get("selectors"))
            if as_map(as_map(s).get("cel")).get("expression")
        ),
        alternatives=alternatives,
    )


def claim_requests(devices: Mapping[str, Any]) -> tuple[DeviceRequest, ...]:
    return tuple(_request(as_map(r)) for r in as_list(devices.get("requests")))


def managed_template_name(name: str) -> str:
    """knative.dev/pkg `kmeta.ChildName(name, "-managed-dra")`: the concatenation when it is at
    most 63 characters (longer names are hashed there; not modelled: the claim is then read
    under the concatenated name, which only names it here)."""
    return f"{name}-managed-dra"


def _managed_claim(t: Template) -> Claim | None:
    annotations = t.annotations
    if MANAGED_CLASS not in annotations:
        return None
    if not is_type(t.type, "serving.kserve.io", "LLMInferenceService") or str(
        t.component or ""
    ).endswith("router-scheduler"):
        return None
    raw = str(annotations.get(MANAGED_COUNT) or "").strip()
    count = int(raw) if raw.isdigit() and int(raw) >= 1 else 1
    selectors = tuple(
        s.strip() for s in str(annotations.get(MANAGED_SELECTORS) or "").split("\n") if s.strip()
    )
    request = DeviceRequest(
        "device", str(annotations[MANAGED_CLASS]).strip(), count, False, selectors
    )
    return Claim("KServe managed DRA", managed_template_name(t.name), (request,))


def _tolerations(values: Any) -> tuple[Toleration, ...]:
    out = []
    for v in map(as_map, as_list(values)):
        try:
            out.append(Toleration.from_dict(v))
        except (KeyError, TypeError, ValueError):
            continue
    return tuple(out)


def read_drivers(graph: Sequence[Mapping[str, Any]]) -> list[DraDriver]:
    """The Helm releases of chart `dra-driver-nvidia-gpu` (its kubelet plugin's tolerations,
    nodeSelector and affinity from `values.kubeletPlugin`, else the chart's defaults)."""
    out = []
    for entry in helm_releases(graph, DRA_DRIVER_CHART):
        values = as_map(as_map(entry.get("inputs")).get("values"))
        plugin = as_map(values.get("kubeletPlugin"))
        tolerations = (
            _tolerations(plugin["tolerations"])
            if "tolerations" in plugin
            else KPLUGIN_DEFAULT_TOLERATIONS
        )
        selector = {str(k): str(v) for k, v in as_map(plugin.get("nodeSelector")).items()}
        affinity = as_map(plugin.get("affinity")) if "affinity" in plugin else KPLUGIN_AFFINITY
        try:
            node_affinity = Placement.from_pod_spec({"affinity": affinity}).node_affinity
        except (InputError, KeyError, TypeError, ValueError):
            node_affinity = None
        placement = Placement(selector, list(tolerations), node_affinity)
        out.append(DraDriver(f"{entry.get('type')}::{entry.get('name')}", placement))
    return out


MANIFEST_TYPES = ("kubernetes:yaml/v2:ConfigFile", "kubernetes:yaml:ConfigFile")
INSTALLER_MANIFEST = re.compile(
    r"nvidia-driver-installer/(cos|ubuntu)/daemonset-preloaded(-latest|-R[0-9]+)?\.yaml$"
)
"""GKE's driver installer manifests applied whole (GoogleCloudPlatform/container-engine-accelerators
at `versions.GKE_DRIVER_INSTALLER_COMMIT`: the `-latest` and `-R<branch>` variants have the same
tolerations, affinity and requests as the plain one of their image)."""
INSTALLER_IMAGES = {"cos-nvidia-installer": "cos", "gke-nvidia-installer": "ubuntu"}
"""The installer image each manifest runs, preloaded by GKE on nodes of that image
(`imagePullPolicy: Never` on COS): a DaemonSet running it is an installer for that image."""


@dataclass(frozen=True)
class GpuDriverInstaller:
    """GKE's NVIDIA GPU driver installer DaemonSet: the node image it installs for, where its
    pod may run, and that pod as a node's overhead when the graph does not hold the DaemonSet
    itself (a manifest applied whole: `pod`)."""

    resource: str
    image: str  # cos | ubuntu
    placement: Placement
    pod: DaemonPod | None = None

    def serves(self, labels: Mapping[str, str], taints: Sequence[Taint], image: str | None) -> bool:
        """Its pod runs on a node of these labels and taints (the DaemonSet controller's
        decision) and installs for the node's image."""
        runs = self.placement.with_tolerations(DAEMON_TOLERATIONS).admits(labels, taints)
        return image == self.image and runs


def _installer_image(pod: Mapping[str, Any]) -> str | None:
    for c in map(as_map, [*as_list(pod.get("initContainers")), *as_list(pod.get("containers"))]):
        name = str(c.get("image") or "").rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
        if name in INSTALLER_IMAGES:
            return INSTALLER_IMAGES[name]
    return None


def read_driver_installers(graph: Sequence[Mapping[str, Any]]) -> list[GpuDriverInstaller]:
    """GKE's GPU driver installers of the graph: its manifests applied whole (`ConfigFile`: the
    pinned manifest's pod, `GKE_DRIVER_INSTALLERS`), and DaemonSets running its installer image
    (their own pod spec)."""
    out = []
    for entry in graph:
        typ, inputs = str(entry.get("type", "")), as_map(entry.get("inputs"))
        rid = resource_id(typ, str(entry.get("name")))
        if typ in MANIFEST_TYPES:
            found = INSTALLER_MANIFEST.search(str(inputs.get("file") or ""))
            if found:
                pod = GKE_DRIVER_INSTALLERS[found.group(1)]
                out.append(GpuDriverInstaller(rid, found.group(1), pod.placement, pod))
        elif typ.startswith("kubernetes:apps/") and typ.endswith(":DaemonSet"):
            spec = as_map(as_map(as_map(inputs.get("spec")).get("template")).get("spec"))
            image = _installer_image(spec)
            if image is not None:
                try:
                    placement = Placement.from_pod_spec(spec)
                except (InputError, KeyError, TypeError, ValueError):
                    continue
                out.append(GpuDriverInstaller(rid, image, placement))
    return out


def read_dra(graph: Sequence[Mapping[str, Any]]) -> DraIndex:
    index = DraIndex()
    for entry in graph:
        typ = str(entry.get("type", ""))
        if group_of(typ) != DRA_GROUP:  # most of a graph: read nothing more of it
            continue
        inputs = as_map(entry.get("inputs"))
        name = str(metadata(inputs).get("name") or entry.get("name"))
        key = (namespace_of(inputs), name)
        spec = as_map(inputs.get("spec"))
        if is_type(typ, DRA_GROUP, "ResourceClaim"):
            index.claims[key] = Claim(
                "ResourceClaim", name, claim_requests(as_map(spec.get("devices")))
            )
        elif is_type(typ, DRA_GROUP, "ResourceClaimTemplate"):
            devices = as_map(as_map(spec.get("spec")).get("devices"))
            index.templates[key] = Claim("ResourceClaimTemplate", name, claim_requests(devices))
        elif is_type(typ, DRA_GROUP, "DeviceClass"):
            expressions = tuple(
                str(as_map(as_map(s).get("cel")).get("expression") or "")
                for s in as_list(spec.get("selectors"))
            )
            index.classes[name] = expressions
            if "nvidia.com" in " ".join(expressions):
                index.gpu_classes.add(name)
    index.drivers = read_drivers(graph)
    index.installers = read_driver_installers(graph)
    return index


def missing_dra_labels(labels: Mapping[str, str]) -> list[str]:
    """The `GKE_DRA_LABELS` a GKE node pool's nodes lack, as `key=value`."""
    managed = labels.get(GKE_MANAGED_DRA_LABEL[0]) == GKE_MANAGED_DRA_LABEL[1]
    return [
        f"{k}={v}"
        for k, v in GKE_DRA_LABELS.items()
        if labels.get(k) != v and not (managed and k == "nvidia.com/gpu.present")
    ]


def is_dra_node(labels: Mapping[str, str]) -> bool:
    """The node is set up for NVIDIA's DRA driver (`DRA_NODE_LABEL`, or GKE's managed driver)."""
    return (
        labels.get(DRA_NODE_LABEL[0]) == DRA_NODE_LABEL[1]
        or labels.get(GKE_MANAGED_DRA_LABEL[0]) == GKE_MANAGED_DRA_LABEL[1]
    )


def _parse_devices(text: str) -> tuple[Mapping[str, Any], ...]:
    try:
        found = json.loads(text)
    except json.JSONDecodeError:
        return ()
    return tuple(as_map(d) for d in as_list(found) if isinstance(d, Mapping) and d.get("name"))


def node_dra_devices(md: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...] | None:
    """Existing nodes: the devices `DRA_DEVICES_ANNOTATION` lists (None: no annotation)."""
    text = as_map(md.get("annotations")).get(DRA_DEVICES_ANNOTATION)
    return None if text is None else _parse_devices(str(text))


def gke_dra_devices(
    accelerator: str | None, gpus: int, labels: Mapping[str, str]
) -> tuple[Mapping[str, Any], ...] | None:
    """A GKE DRA node's devices: `gpus` whole GPUs of the accelerator (GKE supports no MIG, MPS
    or time-sharing with DRA: its DRA setup page, "Limitations")."""
    if not is_dra_node(labels):
        return None
    acc = GKE_ACCELERATORS.get(accelerator or "")
    return node_devices(acc.gpu_model, gpus) if acc else ()


def eks_dra_devices(
    inputs: Mapping[str, Any], labels: Mapping[str, str]
) -> tuple[Mapping[str, Any], ...] | None:
    """An EKS DRA node's devices: the GPUs of its (first) instance type, whole or in the static
    MIG profile its nodes are labelled with (`DRA_MIG_LABEL`)."""
    if not is_dra_node(labels):
        return None
    types = [str(t) for t in as_list(inputs.get("instanceTypes"))]
    inst = aws_instance_or_none(types[0]) if types else None
    if inst is None:
        return ()
    profile = labels.get(DRA_MIG_LABEL)
    per_gpu = MIG_PROFILES.get(inst.gpu_model, {}).get(profile or "", 0)
    return node_devices(inst.gpu_model, inst.gpus, profile if per_gpu else None, per_gpu)
