"""Generated DRA cases for the differential against kube-scheduler's allocator, and the runner that
publishes them on the rig.

A case is a graph: one or two pools of existing nodes, each node publishing the devices NVIDIA's
DRA driver publishes for its GPUs (whole GPUs, or static MIG instances of one profile:
`model.nodes.dra_devices.node_devices`, written on the NodePatch as `DRA_DEVICES_ANNOTATION`), and
one to three pods, each claiming devices through one or two ResourceClaimTemplates (device class
gpu.nvidia.com / mig.nvidia.com or a DeviceClass of the graph, a count or allocationMode All, CEL
selectors on productName, architecture, memory, compute capability, MIG profile, a domain no
device has, ...). Each (pod, pool) is a pair; the check predicts whether the pod lands there.

The rig (`DraControlPlane`: kube-apiserver, kube-scheduler and kube-controller-manager's
resourceclaim and serviceaccount controllers) gets, per pair, the pool's nodes and one
ResourceSlice per node (driver gpu.nvidia.com, the node's devices as the check read them), the
DeviceClasses (the driver chart's two, and the graph's), the pair's ResourceClaimTemplates and the
pod; the resourceclaim controller makes the pod's claims, the scheduler allocates them or not.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import differential as diff
import rig

from components.check import check
from components.check.fit import pod_containers
from components.check.graph import read_templates
from components.check.readers.dra import DRA_DEVICES_ANNOTATION
from components.model.nodes.catalog import MIG_PROFILES
from components.model.nodes.dra_devices import (
    BUILTIN_DEVICE_CLASSES,
    DRA_DRIVER,
    GPUS,
    node_devices,
)

NAMESPACE = "default"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
POOL = "gpu-inference.dev/pool"
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
MODELS = ("L4", "T4", "A10G", "A100 80GB", "H100", "L40S")
A = "device.attributes['gpu.nvidia.com']"
C = "device.capacity['gpu.nvidia.com']"


def _selectors(rng: random.Random) -> list[str]:
    product = GPUS[rng.choice(MODELS)].product_name
    gib = rng.choice((10, 15, 16, 20, 22, 23, 24, 40, 45, 80, 81))
    arch = rng.sample(["Ampere", "Hopper", "Ada Lovelace", "Turing"], rng.randint(1, 2))
    profile = rng.choice(["1g.10gb", "2g.20gb", "3g.40gb", "1g.20gb"])
    word = rng.choice(["l4", "h100", "a100", "tesla", "80gb"])
    return [
        f"{A}.productName == '{product}'",
        f"{A}.architecture in {json.dumps(arch)}",
        f"{C}.memory.compareTo(quantity('{gib}Gi')) >= 0",
        f"{C}.memory.isGreaterThan(quantity('{gib * 1000}Mi'))",
        f"{C}.memory.isLessThan(quantity('{gib}G'))",
        f"{A}.cudaComputeCapability.isGreaterThan(semver('8.0.0'))",
        f"{A}.cudaComputeCapability.major() >= 9",
        f"{A}.cudaComputeCapability.compareTo(semver('8.9.0')) == 0",
        f"{A}.productName.lowerAscii().contains('{word}')",
        f"{A}.productName.matches('^NVIDIA [AH]100')",
        f"{A}.profile == '{profile}'",
        f"'profile' in {A} && {A}.profile == '{profile}'",
        f"{C}.multiprocessors.compareTo(quantity('20')) >= 0",
        "device.driver == 'gpu.nvidia.com'",
        f"cel.bind(g, {A}, g.architecture == 'Ada Lovelace' || g.architecture == 'Turing')",
        "device.attributes['example.com'].foo == 'bar'",
        f"{C}.memory.asApproximateFloat() > 4.0e10",
        f"quantity('1Gi').add({C}.memory).isGreaterThan(quantity('25Gi'))",
        f"{A}.type == 'mig' || {C}.memory.compareTo(quantity('20Gi')) > 0",
    ]


def _node(name: str, pool: str, devices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "type": "kubernetes:core/v1:NodePatch",
        "name": name,
        "inputs": {
            "metadata": {
                "name": name,
                "labels": {POOL: pool, "nvidia.com/gpu.present": "true"},
                "annotations": {
                    "gpu-inference.dev/gpus-per-node": "0",
                    DRA_DEVICES_ANNOTATION: json.dumps(list(devices), sort_keys=True),
                },
            },
            "spec": {
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
            },
        },
    }


def _pool(rng: random.Random, name: str) -> list[dict[str, Any]]:
    model = rng.choice(MODELS)
    count = rng.choice((1, 1, 2, 4, 8))
    mig = None
    instances = 0
    if model in MIG_PROFILES and rng.random() < 0.5:
        mig = rng.choice(sorted(MIG_PROFILES[model]))
        instances = MIG_PROFILES[model][mig]
        count = rng.choice((1, 2))
    nodes = [_node(f"{name}-0", name, node_devices(model, count, mig, instances))]
    if rng.random() < 0.25:  # a second node of another size
        nodes.append(_node(f"{name}-1", name, node_devices(model, rng.choice((1, 2, 4)))))
    return nodes


def _template(rng: random.Random, name: str, classes: Sequence[str]) -> dict[str, Any]:
    weights = [3 if c == "gpu.nvidia.com" else 1 for c in classes]
    exactly: dict[str, Any] = {"deviceClassName": rng.choices(classes, weights)[0]}
    if rng.random() < 0.1:
        exactly["allocationMode"] = "All"
    else:
        count = rng.choice((1, 1, 1, 1, 2, 2, 3, 4, 8))
        if count != 1:
            exactly["count"] = count
    pool = _selectors(rng)
    chosen = rng.sample(pool, rng.choice((0, 0, 0, 1, 1, 2)))
    if chosen:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in chosen]
    request: dict[str, Any] = {"name": "gpu", "exactly": exactly}
    return {
        "type": "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"spec": {"devices": {"requests": [request]}}},
        },
    }


def _deployment(name: str, templates: Sequence[str]) -> dict[str, Any]:
    entries = [{"name": f"c{i}", "resourceClaimTemplateName": t} for i, t in enumerate(templates)]
    spec = {
        "containers": [
            {
                "name": "main",
                "image": "example.invalid/dra:1",
                "resources": {"claims": [{"name": e["name"]} for e in entries]},
            }
        ],
        "tolerations": [TOL_GPU],
        "resourceClaims": entries,
    }
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"replicas": 1, "template": {"spec": spec}},
        },
    }


def draw_case(rng: random.Random, index: int) -> list[dict[str, Any]]:
    graph: list[dict[str, Any]] = []
    for p in range(rng.choice((1, 2))):
        graph += _pool(rng, f"c{index}p{p}")
    classes = list(BUILTIN_DEVICE_CLASSES)
    if rng.random() < 0.2:
        expression = rng.choice(
            [
                f"device.driver == 'gpu.nvidia.com' && {A}.architecture == 'Hopper'",
                f"device.driver == 'gpu.nvidia.com' && {C}.memory.compareTo(quantity('40Gi')) >= 0",
            ]
        )
        graph.append(
            {
                "type": "kubernetes:resource.k8s.io/v1:DeviceClass",
                "name": f"c{index}-class",
                "inputs": {
                    "metadata": {"name": f"c{index}-class"},
                    "spec": {"selectors": [{"cel": {"expression": expression}}]},
                },
            }
        )
        classes.append(f"c{index}-class")
    for w in range(rng.choice((1, 2, 3))):
        names = [f"c{index}w{w}t{k}" for k in range(rng.choice((1, 1, 1, 2)))]
        graph += [_template(rng, n, classes) for n in names]
        graph.append(_deployment(f"c{index}w{w}", names))
    return graph


def draw_cases(count: int, seed: int) -> list[list[dict[str, Any]]]:
    rng = random.Random(seed)
    return [draw_case(rng, i) for i in range(count)]


# ---------------------------------------------------------------------------------------------
# Pairs
# ---------------------------------------------------------------------------------------------


@dataclass
class DraPair:
    source: str
    workload: str
    pool: str
    predicted: bool
    nodes: tuple[tuple[Mapping[str, str], tuple[Mapping[str, Any], ...]], ...]  # labels, devices
    pod_spec: dict[str, Any]
    templates: dict[str, dict[str, Any]]  # name -> ResourceClaimTemplate spec
    classes: dict[str, tuple[str, ...]]
    findings: tuple[str, ...] = ()
    outcome: str = ""
    detail: str = ""
    mig: bool = False
    selectors: bool = False
    count: int = 1
    # An example stack's pools: each node's own taints and allocatable (None: a generated case's
    # nodes, tainted nvidia.com/gpu=present:NoSchedule with the differential's large capacity).
    node_taints: tuple[tuple[Mapping[str, str], ...], ...] | None = None
    node_capacity: tuple[Mapping[str, str] | None, ...] | None = None
    version: str = rig.KUBERNETES_VERSION  # the Kubernetes release whose scheduler judges it

    @property
    def bound(self) -> bool:
        return self.outcome == "bound"

    @property
    def agrees(self) -> bool:
        return self.outcome in ("bound", "unschedulable") and self.bound == self.predicted

    def describe(self) -> str:
        said = "lands" if self.predicted else "stays out"
        return (
            f"{self.source}: {self.workload} on pool {self.pool}: the check says it {said} "
            f"({', '.join(self.findings) or 'no finding'}), the scheduler of Kubernetes "
            f"{self.version}: {self.outcome} "
            f"({self.detail})\n  templates: {json.dumps(self.templates, sort_keys=True)}\n"
            f"  classes: {json.dumps(self.classes)}\n  devices: "
            + json.dumps([[d["name"] for d in devs] for _, devs in self.nodes])
        )


def pairs_of(source: str, graph: Sequence[Mapping[str, Any]]) -> list[DraPair]:
    report = check(graph, extended_resource_toleration=False)
    entries = {str(e["name"]): e for e in graph}
    templates = {
        str(e["name"]): e["inputs"]["spec"]
        for e in graph
        if e["type"].endswith(":ResourceClaimTemplate")
    }
    classes = dict(BUILTIN_DEVICE_CLASSES)
    for e in graph:
        if e["type"].endswith(":DeviceClass"):
            classes[str(e["name"])] = tuple(
                s["cel"]["expression"] for s in e["inputs"]["spec"]["selectors"]
            )
    out = []
    for w in report.workloads:
        name = w.resource.split("/", 1)[1]
        spec = entries[name]["inputs"]["spec"]["template"]["spec"]
        mine = {
            e["resourceClaimTemplateName"]: templates[e["resourceClaimTemplateName"]]
            for e in spec["resourceClaims"]
        }
        requests = [r["exactly"] for t in mine.values() for r in t["spec"]["devices"]["requests"]]
        codes = tuple(sorted({f.code for f in report.findings if f.resource == w.resource}))
        for p in report.pools:
            nodes = tuple((dict(n.labels), tuple(n.dra_devices or ())) for n in p.nodes)
            out.append(
                DraPair(
                    source,
                    w.resource,
                    p.name,
                    p.name in w.pools,
                    nodes,
                    json.loads(json.dumps(spec)),
                    mine,
                    classes,
                    codes,
                    mig=any("mig" in d["name"] for _, devs in nodes for d in devs),
                    selectors=any(r.get("selectors") for r in requests),
                    count=sum(int(r.get("count", 1)) for r in requests),
                )
            )
    return out


def stack_pairs(source: str, graph: Sequence[Mapping[str, Any]]) -> list[DraPair]:
    """The (pod, pool) pairs of an example stack's pods that claim devices: each pod as the
    scheduler differential writes it (the template's placement, one container per container with
    its requests: KServe's and Knative's included) plus its `resourceClaims`, claimed by its first
    container; the graph's ResourceClaimTemplates by name; each pool's nodes with their labels,
    taints, allocatable and devices. The check's prediction: it lands (the DRA allocation and fit
    included)."""
    report = check(graph)
    by_name = {
        str(e["inputs"]["metadata"]["name"]): e["inputs"]["spec"]
        for e in graph
        if str(e["type"]).endswith(":ResourceClaimTemplate")
    }
    classes = dict(BUILTIN_DEVICE_CLASSES)
    for e in graph:
        if str(e["type"]).endswith(":DeviceClass"):
            classes[str(e["inputs"]["metadata"]["name"])] = tuple(
                s["cel"]["expression"] for s in e["inputs"]["spec"]["selectors"]
            )
    templates = {t.resource: t for t in read_templates(list(graph), True)}
    out = []
    for w in report.workloads:
        t = templates[w.resource]
        entries = [dict(e) for e in t.fragment.get("resourceClaims") or ()]
        if not entries:
            continue
        containers, inits, _ = pod_containers(t)
        spec = diff.pod_spec(t.fragment, containers, inits)
        spec["resourceClaims"] = entries
        spec["containers"][0]["resources"]["claims"] = [{"name": e["name"]} for e in entries]
        mine = {
            e["resourceClaimTemplateName"]: by_name[e["resourceClaimTemplateName"]] for e in entries
        }
        requests = [r["exactly"] for m in mine.values() for r in m["spec"]["devices"]["requests"]]
        codes = tuple(sorted({f.code for f in report.findings if f.resource == w.resource}))
        for p in report.pools:
            out.append(
                DraPair(
                    source,
                    w.resource,
                    p.name,
                    p.name in w.pools and p.name not in w.unfit,
                    tuple((dict(n.labels), tuple(n.dra_devices or ())) for n in p.nodes),
                    json.loads(json.dumps(spec)),
                    mine,
                    classes,
                    codes,
                    mig=any("mig" in d["name"] for n in p.nodes for d in n.dra_devices or ()),
                    selectors=any(r.get("selectors") for r in requests),
                    count=sum(int(r.get("count", 1)) for r in requests),
                    node_taints=tuple(tuple(x.to_dict() for x in n.taints) for n in p.nodes),
                    node_capacity=tuple(
                        diff._quantities(diff.allocatable_of(n.shape)) for n in p.nodes
                    ),
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# The rig
# ---------------------------------------------------------------------------------------------


class DraControlPlane(diff.ControlPlane):
    """The differential's control plane plus kube-controller-manager running only the
    resourceclaim controller (it makes each pod's ResourceClaims from its templates) and the
    serviceaccount controller (the namespace's `default` ServiceAccount)."""

    def __init__(self, kubernetes_version: str | None = None) -> None:
        super().__init__(
            extended_resource_toleration=False,
            controller_manager=True,
            kubernetes_version=kubernetes_version,
        )

    def _spawn(self, name: str, args: Sequence[str]) -> Any:
        args = list(args)
        if name == "kube-controller-manager":
            args.append("--controllers=resourceclaim-controller,serviceaccount-controller")
        return super()._spawn(name, args)


def _slice(node: str, devices: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu"},
        "spec": {
            "driver": DRA_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [dict(d) for d in devices],
        },
    }


def _device_class(name: str, expressions: Sequence[str]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def _claims_ready(pod: Mapping[str, Any]) -> bool:
    wanted = {c["name"] for c in pod["spec"].get("resourceClaims") or ()}
    have = {s["name"] for s in pod.get("status", {}).get("resourceClaimStatuses") or ()}
    return wanted <= have


def run_dra_pairs(cp: Any, pairs: Sequence[DraPair], *, workers: int = 4) -> dict[str, float]:
    """Decide every pair on the rig (sets `outcome` and `detail`)."""
    api = diff.Api(cp)
    run = uuid.uuid4().hex[:6]
    seconds: dict[str, float] = {}
    t0 = time.monotonic()
    classes: dict[str, tuple[str, ...]] = {}
    for p in pairs:
        classes.update(p.classes)
    for name, expressions in classes.items():
        try:
            api.request(
                "POST", "/apis/resource.k8s.io/v1/deviceclasses", _device_class(name, expressions)
            )
        except diff.ApiRefused as e:
            if e.status != 409:
                raise
    bodies: list[tuple[str, dict[str, Any]]] = []
    for slot, p in enumerate(pairs):
        for i, (labels, devices) in enumerate(p.nodes):
            node = f"r{run}-{slot}-{i}"
            taints = list(p.node_taints[i]) if p.node_taints is not None else [GPU_TAINT]
            capacity = (p.node_capacity[i] if p.node_capacity is not None else None) or (
                diff.NODE_CAPACITY
            )
            bodies.append(
                (
                    "/api/v1/nodes",
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {
                            "name": node,
                            "labels": {**labels, diff.SLOT_LABEL: str(slot), diff.RUN_LABEL: run},
                        },
                        "spec": {"taints": taints},
                        "status": {"capacity": capacity, "allocatable": capacity},
                    },
                )
            )
            if devices:
                bodies.append(("/apis/resource.k8s.io/v1/resourceslices", _slice(node, devices)))
        for name, spec in p.templates.items():
            bodies.append(
                (
                    f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaimtemplates",
                    {
                        "apiVersion": "resource.k8s.io/v1",
                        "kind": "ResourceClaimTemplate",
                        "metadata": {"name": f"r{run}-{slot}-{name}"},
                        "spec": spec,
                    },
                )
            )
    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(lambda b: api.request("POST", b[0], b[1]), bodies))
    seconds["nodes, slices, templates"] = time.monotonic() - t0
    time.sleep(3)  # the scheduler's informers see every slice before the first pod

    t0 = time.monotonic()

    def pod_body(slot: int, p: DraPair) -> dict[str, Any]:
        spec = json.loads(json.dumps(p.pod_spec))
        for entry in spec["resourceClaims"]:
            entry["resourceClaimTemplateName"] = (
                f"r{run}-{slot}-{entry['resourceClaimTemplateName']}"
            )
        spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), diff.SLOT_LABEL: str(slot)}
        spec["automountServiceAccountToken"] = False
        spec["terminationGracePeriodSeconds"] = 0
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"r{run}-p{slot}",
                "labels": {diff.RUN_LABEL: run, diff.PAIR_LABEL: str(slot)},
            },
            "spec": spec,
        }

    def create(slot: int) -> None:
        try:
            api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", pod_body(slot, pairs[slot]))
        except diff.ApiRefused as e:
            pairs[slot].outcome, pairs[slot].detail = "refused", str(e)

    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(create, range(len(pairs))))
    deadline = time.monotonic() + 180 + 0.5 * len(pairs)
    undecided = {i for i, p in enumerate(pairs) if p.outcome != "refused"}
    settled_at: float | None = None
    while True:
        items = api.request(
            "GET", f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector={diff.RUN_LABEL}%3D{run}"
        )["items"]
        for pod in items:
            slot = int(pod["metadata"]["labels"][diff.PAIR_LABEL])
            p = pairs[slot]
            node = pod["spec"].get("nodeName")
            if node:
                p.outcome, p.detail = "bound", node
                undecided.discard(slot)
                continue
            cond = next(
                (
                    c
                    for c in pod.get("status", {}).get("conditions") or []
                    if c.get("type") == "PodScheduled" and c.get("status") == "False"
                ),
                None,
            )
            if cond is None or not _claims_ready(pod):
                continue
            if cond.get("reason") in ("Unschedulable", "SchedulerError"):
                p.outcome, p.detail = (
                    "unschedulable",
                    f"{cond.get('reason')}: {cond.get('message', '')}",
                )
                undecided.discard(slot)
        if not undecided:
            # Decided once: wait a little and read again (a pod decided before the scheduler saw
            # its node's slice is scheduled again when the slice arrives).
            if settled_at is None:
                settled_at = time.monotonic()
            elif time.monotonic() - settled_at > 10:
                break
        if time.monotonic() > deadline:
            for slot in undecided:
                pairs[slot].outcome, pairs[slot].detail = "undecided", "timed out"
            break
        time.sleep(1)
    seconds["pods decided"] = time.monotonic() - t0
    return seconds


def summary(label: str, pairs: Sequence[DraPair]) -> str:
    agree = sum(p.agrees for p in pairs)
    bound = sum(p.bound for p in pairs)
    return (
        f"{label}: {len(pairs)} DRA (pod, pool) pairs, {agree} agree ({bound} bound, "
        f"{len(pairs) - bound} kept out; {sum(p.mig for p in pairs)} on MIG pools, "
        f"{sum(p.selectors for p in pairs)} with CEL selectors, "
        f"{sum(p.count > 1 for p in pairs)} asking several devices)"
    )
