"""The placement check held against the real kube-scheduler: graphs in, (pod, pool) verdicts out.

A *pair* is one pod template of a graph and one pool of the same graph. The check predicts whether
the pod can land on the pool (`WorkloadFacts.pools`, less the pools whose nodes cannot hold its
requests: `WorkloadFacts.unfit`); the rig answers by creating the pool's nodes (the effective
labels, taints and GPUs the check computed, and the allocatable cpu, memory, ephemeral-storage and
pods of the node's shape) and the pod (exactly the template's nodeSelector, affinity, tolerations
and container resources, with the containers and init containers the controllers add:
`components.check.fit.pod_containers`) and reading whether the scheduler binds it or marks it
Unschedulable.

Every pair runs at once, each in its own *slot*: the slot's nodes carry the extra label
`SLOT_LABEL=<k>` and the slot's pod the extra nodeSelector entry `SLOT_LABEL: <k>`. The scheduler
ANDs nodeSelector with required node affinity (and with everything else it filters on), so the pod
can only land in its own slot, and on its own slot's nodes its feasibility is what it would be with
only that pool in the cluster: its own selectors and affinity never name `SLOT_LABEL`, the slot's
nodes host no other pod (no GPU is taken by a neighbour) and no filter in play looks at other
nodes or pods (no inter-pod affinity or topology spread is written). That is the "one pool at a
time" experiment, done for every pair in one round.
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import rig

from components.check import GPU_COUNT_KEYS, NODE_PATCH, POOL_LABEL, check
from components.check.fit import pod_containers
from components.check.graph import read_templates
from components.check.readers.daemonsets import graph_daemons
from components.model.nodes.daemonsets import DAEMON_TOLERATIONS, DaemonPod, system_daemons
from components.model.nodes.shapes import NodeShape, Resources, existing_node_shape

SLOT_LABEL = "e2e.gpu-inference.dev/slot"
RUN_LABEL = "e2e.gpu-inference.dev/run"
GPU = "nvidia.com/gpu"
NAMESPACE = "default"
# Capacity of a node whose shape is unknown (the check gives it the benefit): large enough that
# only the scheduling rules and GPUs decide.
NODE_CAPACITY = {"cpu": "1k", "memory": "64Ti", "ephemeral-storage": "1Pi", "pods": "110"}
ALLOCATABLE_ANNOTATION = "gpu-inference.dev/allocatable"
FIT_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")
PLACEMENT_KEYS = ("nodeSelector", "affinity", "tolerations")
VERSIONS = rig.run_versions()
"""The Kubernetes releases every differential runs on (all the rig's unless
GPU_INFERENCE_KUBERNETES_VERSIONS names fewer): the example stacks on each, the generated cases
alternating between them (`case_version`)."""


def case_version(index: int) -> str:
    """The release generated case `index` is judged on: the cases alternate, newest first, so that
    a seed replays each case on the same release."""
    return VERSIONS[index % len(VERSIONS)]


def by_version(items: Iterable[Any]) -> dict[str, list[Any]]:
    """Items that name their release (`version`), grouped by it, in the order of VERSIONS."""
    out: dict[str, list[Any]] = {v: [] for v in VERSIONS}
    for item in items:
        out[item.version].append(item)
    return out


def versions_line(items: Iterable[Any]) -> str:
    """`1.37.2 412/412, 1.36.3 398/398`: the items that agree of each release's (the CI summary
    prints it)."""
    return ", ".join(
        f"{v} {sum(x.agrees for x in xs)}/{len(xs)}" for v, xs in by_version(items).items()
    )


# ---------------------------------------------------------------------------------------------
# Pairs: what the check predicts, and the objects the rig creates for it
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RigNode:
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, str], ...]
    gpus: int
    name: str | None = None  # the node's name in the graph (what `matchFields` names)
    allocatable: Resources | None = None  # None: unknown shape, NODE_CAPACITY
    daemons: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    """The DaemonSet pods the rig tries on the node first, in order (`daemon_specs`): the
    scheduler decides which land (labels, taints, what the ones before left)."""
    overhead: Resources = field(default_factory=Resources)
    """What the check says those DaemonSet pods hold on the node (slot packing only)."""

    def holds(self, ask: Resources, bare: bool = False) -> bool:
        """The node holds `ask`'s cpu, memory, ephemeral storage and pods beside its DaemonSets
        (`bare`: on its allocatable alone; unknown: yes)."""
        held = self.allocatable
        if held is None:
            return True
        if not bare:
            held = held - self.overhead
        return all(ask.get(r) <= held.get(r) for r in FIT_RESOURCES)


def allocatable_of(shape: NodeShape | None) -> Resources | None:
    return None if shape is None else shape.allocatable


@dataclass
class Pair:
    """One pod template against one pool: the check's prediction and what the scheduler did."""

    source: str  # the stack or generated case the pair comes from
    workload: str  # Kind/name[/component]
    pool: str
    predicted: bool
    pod_spec: dict[str, Any]
    nodes: tuple[RigNode, ...]
    outcome: str = ""  # "bound" | "unschedulable" | "refused" | "undecided"
    detail: str = ""
    asks: Resources | None = None  # the pod's requests as the check summed them
    placed: bool = False  # labels, taints and GPUs let it onto the pool (before fit)
    daemon: str | None = None  # a DaemonSet's pair: its pods' name (`daemon_name`) on the nodes
    version: str = rig.KUBERNETES_VERSION  # the Kubernetes release whose scheduler judges it
    refused: bool = False  # the check says the API server refuses the pod (GI066)

    @property
    def bound(self) -> bool:
        return self.outcome == "bound"

    @property
    def agrees(self) -> bool:
        if self.refused or self.outcome == "refused":
            # The API server's validation is the judge: the check said it refuses the pod.
            return self.refused and self.outcome == "refused"
        return self.outcome in ("bound", "unschedulable") and self.bound == self.predicted

    def describe(self) -> str:
        said = "lands" if self.predicted else "stays out"
        return (
            f"{self.source}: {self.workload} on pool {self.pool}: the check says it {said}, "
            f"the scheduler of Kubernetes {self.version}: {self.outcome} ({self.detail})\n"
            f"  pod spec: {json.dumps(self.pod_spec, sort_keys=True)}\n"
            f"  nodes: "
            + json.dumps(
                [
                    {
                        "labels": n.labels,
                        "taints": n.taints,
                        "gpus": n.gpus,
                        "allocatable": _quantities(n.allocatable),
                        "daemons": [name for name, _ in n.daemons],
                    }
                    for n in self.nodes
                ],
                sort_keys=True,
            )
        )


def _quantities(held: Resources | None) -> dict[str, str] | None:
    """Node allocatable as the API takes it: millicores, bytes, a pod count."""
    if held is None:
        return None
    return {"cpu": f"{held.cpu}m", **{r: str(held.get(r)) for r in FIT_RESOURCES[1:]}}


def _whole_numbers(value: Any) -> Any:
    """JSON numbers through Pulumi come back as floats (300.0); the API wants integers there."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_whole_numbers(v) for v in value]
    return value


def _resources(container: Mapping[str, Any]) -> dict[str, Any]:
    res = container.get("resources")
    if not isinstance(res, Mapping):
        return {}
    out = {}
    for part in ("requests", "limits"):
        if isinstance(res.get(part), Mapping) and res[part]:
            out[part] = {str(k): v if isinstance(v, str) else str(v) for k, v in res[part].items()}
    return out


def pod_spec(fragment: Mapping[str, Any], containers: Sequence[Any], init: Sequence[Any]) -> dict:
    """A pod spec with exactly the template's nodeSelector, affinity and tolerations, and one
    container (one init container) per template container with exactly its resources."""
    spec: dict[str, Any] = {
        k: _whole_numbers(fragment[k]) for k in PLACEMENT_KEYS if fragment.get(k) is not None
    }
    spec["containers"] = [
        {"name": f"c{i}", "image": "example.invalid/diff:1", "resources": _resources(c)}
        for i, c in enumerate(containers or [{}])
    ]
    if init:
        spec["initContainers"] = [
            {"name": f"i{i}", "image": "example.invalid/diff:1", "resources": _resources(c)}
            | ({"restartPolicy": "Always"} if c.get("restartPolicy") == "Always" else {})
            for i, c in enumerate(init)
        ]
    return spec


def daemon_name(name: str) -> str:
    """A DaemonPod's name as an object name (`DaemonSet/agent` -> `daemonset-agent`)."""
    return re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")


def daemon_specs(
    graph: Sequence[Mapping[str, Any]], daemons: Sequence[DaemonPod]
) -> list[tuple[str, dict[str, Any]]]:
    """Each DaemonSet pod the check counts, as a pod spec for a judge, in the check's order: a
    graph DaemonSet's own template spec (what the check read it from), else (the providers' own,
    a chart's) one container holding its summed requests, with its nodeSelector, affinity and
    tolerations."""
    own = {
        f"DaemonSet/{e['name']}": e["inputs"]["spec"]["template"]["spec"]
        for e in graph
        if str(e.get("type", "")).startswith("kubernetes:apps/")
        and e["type"].endswith(":DaemonSet")
    }
    out = []
    for d in daemons:
        spec = own.get(d.name)
        if spec is None:
            requests = {"cpu": f"{d.requests.cpu}m"} if d.requests.cpu else {}
            for r in ("memory", "ephemeral-storage"):
                if d.requests.get(r):
                    requests[r] = str(d.requests.get(r))
            spec = {
                **d.placement.to_pod_spec(),
                "containers": [
                    {
                        "name": "c",
                        "image": "example.invalid/daemon:1",
                        "resources": {"requests": requests},
                    }
                ],
            }
        out.append((daemon_name(d.name), json.loads(json.dumps(spec))))
    return out


def node_patch_nodes(graph: Sequence[Mapping[str, Any]]) -> dict[str, tuple[RigNode, ...]]:
    """The nodes a graph of existing nodes describes, read from its NodePatches as written (not
    as the check read them): pool (the pool label), labels, taints, GPUs from the annotation,
    and the graph's DaemonSets to try on each (existing nodes run no DaemonSet of a provider)."""
    out: dict[str, tuple[RigNode, ...]] = {}
    daemons = tuple(daemon_specs(graph, graph_daemons(graph)))
    for e in graph:
        if e["type"] != NODE_PATCH:
            continue
        md = e["inputs"]["metadata"]
        labels = dict(md.get("labels") or {})
        annotations = md.get("annotations", {})
        gpus = int(annotations.get(GPU_COUNT_KEYS[0], "0"))
        held = None
        if ALLOCATABLE_ANNOTATION in annotations:
            declared = json.loads(annotations[ALLOCATABLE_ANNOTATION])
            held = existing_node_shape(md["name"], declared).allocatable
        taints = tuple(dict(t) for t in e["inputs"].get("spec", {}).get("taints") or ())
        pool = labels.get(POOL_LABEL, e["name"])
        node = RigNode(labels, taints, gpus, md.get("name"), held, daemons)
        out[pool] = (*out.get(pool, ()), node)
    return out


def pairs_from_graph(
    source: str,
    graph: Sequence[Mapping[str, Any]],
    *,
    extended_resource_toleration: bool | None = None,
    nodes_of: Mapping[str, tuple[RigNode, ...]] | None = None,
) -> tuple[list[Pair], bool]:
    """Every (pod template, pool) pair of the graph with the check's prediction, and whether the
    check assumed ExtendedResourceToleration on. The rig's nodes are the pools' nodes as the check
    computed them (what a cloud adds is only known there), or `nodes_of[pool]` when given."""
    report = check(graph, extended_resource_toleration=extended_resource_toleration)
    templates = {t.resource: t for t in read_templates(list(graph), True)}
    in_graph = graph_daemons(graph)
    specs: dict[str, tuple[tuple[str, Mapping[str, Any]], ...]] = {}

    def daemons_of(kind: str) -> tuple[tuple[str, Mapping[str, Any]], ...]:
        if kind not in specs:
            specs[kind] = tuple(daemon_specs(graph, (*system_daemons(kind), *in_graph)))
        return specs[kind]

    refused = {f.resource for f in report.findings if f.code == "GI066"}
    pairs = []
    for w in report.workloads:
        t = templates[w.resource]
        containers, inits, _ = pod_containers(t)
        spec = pod_spec(t.fragment, containers, inits)
        for p in report.pools:
            gpus = p.gpus_per_node
            if gpus is None:  # unknown: the check gives it the benefit, so does the node
                gpus = max(w.gpus, 1) if p.gpu else 0
            nodes = tuple(
                RigNode(
                    dict(n.labels),
                    tuple(x.to_dict() for x in n.taints),
                    n.gpus if n.gpus is not None else gpus,
                    n.name,
                    allocatable_of(n.shape),
                    daemons_of(n.daemon_kind),
                    n.daemons.total,
                )
                for n in p.nodes
            )
            if nodes_of is not None:
                overhead = {n.name: n.daemons.total for n in p.nodes}
                nodes = tuple(
                    replace(n, overhead=overhead.get(n.name, Resources())) for n in nodes_of[p.name]
                )
            placed = p.name in w.pools
            predicted = placed and p.name not in w.unfit
            pairs.append(
                Pair(
                    source,
                    w.resource,
                    p.name,
                    predicted,
                    spec,
                    nodes,
                    asks=w.requests,
                    placed=placed,
                    daemon=daemon_name(w.resource) if w.daemonset else None,
                    refused=w.resource in refused,
                )
            )
    return pairs, report.extended_resource_toleration


# ---------------------------------------------------------------------------------------------
# Running pairs on the rig
# ---------------------------------------------------------------------------------------------


class ControlPlane(rig.ControlPlane):
    """The rig's control plane (etcd, kube-apiserver, kube-scheduler; ExtendedResourceToleration
    on or off), set up for thousands of nodes that nothing but the scheduler reads.

    - Its nodes are bare Node objects (labels, taints, capacity), not kwok-managed: the
      scheduler's filters read no node condition, and kwok's heartbeats for a thousand nodes
      loaded two cores so much that some fell behind the node lifecycle controller, which then
      tainted them `unreachable` in the middle of a run. So: no controller-manager (nothing marks
      a node unready), no `TaintNodesByCondition` admission (no `not-ready` taint at creation),
      and the `default` ServiceAccount, which the controller-manager would make, made here.
    - The scheduler may make more API calls per second (default 50, burst 100): it writes about
      one per pod it decides. Scheduling itself is unchanged.
    """

    def __init__(self, *, extended_resource_toleration: bool, **kwargs: Any) -> None:
        kwargs.setdefault("controller_manager", False)
        super().__init__(extended_resource_toleration=extended_resource_toleration, **kwargs)

    def _spawn(self, name: str, args: Sequence[str]) -> Any:
        args = list(args)
        if name == "kube-scheduler":
            args += ["--kube-api-qps=1000", "--kube-api-burst=2000"]
        if name == "kube-apiserver":
            flag = "--disable-admission-plugins="
            i = next((i for i, a in enumerate(args) if a.startswith(flag)), None)
            if i is None:
                args.append(flag + "TaintNodesByCondition")
            else:
                args[i] += ",TaintNodesByCondition"
        return super()._spawn(name, args)

    def start(self) -> None:
        super().start()
        if not self.with_cm:
            try:
                self.request(
                    "POST",
                    f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts",
                    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
                )
            except rig.ApiError as e:
                if e.status != 409:
                    raise


class ApiRefused(RuntimeError):
    def __init__(self, status: int, body: str, what: str) -> None:
        super().__init__(f"{what}: HTTP {status}: {body[:2000]}")
        self.status = status
        self.body = body


class Api:
    """Keep-alive HTTPS to the rig's API server, one connection per thread (the rig's own
    `request` opens a connection, and does a TLS handshake, per call)."""

    def __init__(self, cp: Any) -> None:
        port = int(str(cp.server).rsplit(":", 1)[1])
        ctx = ssl.create_default_context(cafile=str(cp.pki / "ca.crt"))
        ctx.load_cert_chain(str(cp.pki / "admin.crt"), str(cp.pki / "admin.key"))
        self._port, self._ctx = port, ctx
        self._local = threading.local()

    def _conn(self) -> http.client.HTTPSConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = http.client.HTTPSConnection(
                "127.0.0.1", self._port, context=self._ctx, timeout=60
            )
            self._local.conn = conn
        return conn

    def request(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body) if body is not None else None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        for attempt in (1, 2):
            conn = self._conn()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                text = resp.read().decode()
                break
            except (http.client.HTTPException, OSError):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
        if resp.status >= 400:
            raise ApiRefused(resp.status, text, f"{method} {path}")
        return json.loads(text) if text else None


@dataclass
class RunStats:
    nodes: int = 0
    pods: int = 0
    recreated: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, what: str, seconds: float) -> None:
        self.seconds[what] = self.seconds.get(what, 0.0) + seconds


_AVAILABLE = re.compile(r"^0/(\d+) nodes are available")


def run_pairs(cp: Any, pairs: Sequence[Pair], *, chunk: int = 5000, workers: int = 4) -> RunStats:
    """Decide every pair on the rig (sets `outcome` and `detail`), `chunk` slots at a time (the
    objects of a chunk are deleted before the next one; the last chunk's are left to the rig's
    teardown)."""
    api = Api(cp)
    stats = RunStats()
    with ThreadPoolExecutor(workers) as pool:
        for start in range(0, len(pairs), chunk):
            last = start + chunk >= len(pairs)
            part = list(pairs[start : start + chunk])
            # The scheduler decides some 20 pods a second on two busy cores, 100+ when idle.
            timeout = 120 + 0.25 * len(part)
            _run_chunk(api, pool, part, stats, timeout, not last)
    return stats


def _node_body(run: str, slot: int, index: int, node: RigNode) -> dict[str, Any]:
    capacity = dict(_quantities(node.allocatable) or NODE_CAPACITY)
    if node.gpus:
        capacity[GPU] = str(node.gpus)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"d{run}-{slot}-{index}",
            "labels": {**node.labels, SLOT_LABEL: str(slot), RUN_LABEL: run},
        },
        "spec": {"taints": [dict(t) for t in node.taints]},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


PAIR_LABEL = "e2e.gpu-inference.dev/pair"


def _asks_gpus(spec: Mapping[str, Any]) -> bool:
    """Whether any container names a non-zero nvidia.com/gpu (read from the pod, not the check)."""
    for c in [*spec.get("containers", ()), *spec.get("initContainers", ())]:
        for part in c.get("resources", {}).values():
            if str(part.get(GPU, "0")).strip() not in ("0", ""):
                return True
    return False


def _sum(pairs: Iterable[Pair]) -> Resources | None:
    """What the pairs' pods ask together (a DaemonSet's pair adds no pod: its pods are the
    nodes' own, counted in their overhead)."""
    total = Resources()
    for p in pairs:
        if p.daemon is not None:
            continue
        if p.asks is None:
            return None
        total = total + p.asks
    return total


def assign_slots(pairs: Sequence[Pair]) -> list[list[Pair]]:
    """Pairs that may share nodes: same graph and pool (so the same nodes), at most one pod
    asking for GPUs, and pods whose requests together fit every node of the slot (so no pod takes
    what another needs: each is decided as if alone; a pod that does not fit alone gets a slot of
    its own)."""
    slots: list[list[Pair]] = []
    open_: dict[tuple[str, str], list[int]] = {}
    for p in pairs:
        mine = open_.setdefault((p.source, p.pool), [])
        gpu = _asks_gpus(p.pod_spec)

        def room(k: int, p: Pair = p) -> bool:
            total = _sum([*slots[k], p])
            return total is not None and all(n.holds(total) for n in p.nodes)

        free = [
            k
            for k in mine
            if not (gpu and any(_asks_gpus(q.pod_spec) for q in slots[k])) and room(k)
        ]
        if free:
            slots[free[0]].append(p)
        else:
            mine.append(len(slots))
            slots.append([p])
    return slots


def _rename_fields(spec: dict[str, Any], names: Mapping[str, str]) -> None:
    """`matchFields` on `metadata.name` naming a node of the graph names its copy in the slot (a
    name of no node in the slot is left as it is: it names no node of the cluster either)."""
    affinity = (spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = list(required.get("nodeSelectorTerms") or [])
    terms += [p.get("preference") or {} for p in affinity.get(_PREFERRED) or []]
    for term in terms:
        for field_req in term.get("matchFields") or []:
            field_req["values"] = [names.get(v, v) for v in field_req.get("values") or []]


_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _pod_body(run: str, slot: int, index: int, attempt: int, pair: Pair) -> dict[str, Any]:
    spec = json.loads(json.dumps(pair.pod_spec))
    names = {n.name: f"d{run}-{slot}-{i}" for i, n in enumerate(pair.nodes) if n.name}
    _rename_fields(spec, names)
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), SLOT_LABEL: str(slot)}
    spec["automountServiceAccountToken"] = False
    spec["terminationGracePeriodSeconds"] = 0
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"d{run}-p{index}-{attempt}",
            "labels": {PAIR_LABEL: str(index), KEY_LABEL: f"p{index}", RUN_LABEL: run},
        },
        "spec": spec,
    }


def _pods_path(run: str) -> str:
    return f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector={RUN_LABEL}%3D{run}"


KEY_LABEL = "e2e.gpu-inference.dev/key"


def _daemon_body(
    run: str, key: str, attempt: int, node: str, slot: int, spec: Mapping[str, Any]
) -> dict[str, Any]:
    """A DaemonSet's pod for one node, as the DaemonSet controller makes it (`NewPod`): its
    template's spec with the controller's tolerations, pinned to the node by a `matchFields`
    term ANDed into each required node affinity term (so the scheduler still checks the labels
    the controller checks: a pod for a node it should not run on stays Pending, taking nothing)."""
    spec = json.loads(json.dumps(spec))
    tolerations = list(spec.get("tolerations") or [])
    tolerations += [t.to_dict() for t in DAEMON_TOLERATIONS]
    spec["tolerations"] = tolerations
    pin = {"key": "metadata.name", "operator": "In", "values": [node]}
    affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = affinity.setdefault(
        "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": [{}]}
    )
    terms = required.get("nodeSelectorTerms") or [{}]
    for term in terms:
        term["matchFields"] = [*(term.get("matchFields") or []), pin]
    required["nodeSelectorTerms"] = terms
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), SLOT_LABEL: str(slot)}
    spec["automountServiceAccountToken"] = False
    spec["terminationGracePeriodSeconds"] = 0
    spec.setdefault("containers", [{"name": "c", "image": "example.invalid/daemon:1"}])
    for c in spec["containers"]:
        c.setdefault("image", "example.invalid/daemon:1")
    for c in spec.get("initContainers") or []:
        c.setdefault("image", "example.invalid/daemon:1")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"d{run}-{key}-{attempt}",
            "labels": {KEY_LABEL: key, RUN_LABEL: run},
        },
        "spec": _whole_numbers(spec),
    }


def _decide(
    api: Api,
    pool: ThreadPoolExecutor,
    run: str,
    bodies: Mapping[str, Callable[[int], dict[str, Any]]],
    expected_nodes: int,
    deadline: float,
    stats: RunStats,
) -> dict[str, tuple[str, str]]:
    """Create one pod per key (`bodies[key](attempt)`, labelled `KEY_LABEL=key`) and wait until
    the scheduler binds each or marks it Unschedulable: key -> (outcome, detail). A pod decided on
    a snapshot missing some node is asked again."""
    attempts = dict.fromkeys(bodies, 0)
    names: dict[str, str] = {}
    out: dict[str, tuple[str, str]] = {}

    def name(key: str) -> str:
        return names[key]

    def create(key: str) -> None:
        body = bodies[key](attempts[key])
        names[key] = str(body["metadata"]["name"])
        try:
            api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", body)
        except ApiRefused as e:
            out[key] = ("refused", str(e))

    list(pool.map(create, bodies))
    stats.pods += len(bodies)
    undecided = {k for k in bodies if k not in out}
    while undecided:
        stale = []
        for pod in api.request("GET", _pods_path(run))["items"]:
            key = pod["metadata"]["labels"].get(KEY_LABEL)
            if key not in undecided or pod["metadata"]["name"] != name(key):
                continue
            node = pod["spec"].get("nodeName")
            if node:
                out[key] = ("bound", node)
                undecided.discard(key)
                continue
            cond = next(
                (
                    c
                    for c in pod.get("status", {}).get("conditions", []) or []
                    if c.get("type") == "PodScheduled" and c.get("status") == "False"
                ),
                None,
            )
            if cond is None or cond.get("reason") != "Unschedulable":
                continue
            message = cond.get("message", "")
            seen = _AVAILABLE.match(message)
            if seen and int(seen.group(1)) < expected_nodes:
                stale.append(key)  # decided on a snapshot missing some node: ask again
                continue
            out[key] = ("unschedulable", message)
            undecided.discard(key)
        for key in stale:
            _delete_pod(api, name(key))
            attempts[key] += 1
            stats.recreated += 1
            create(key)
        if not undecided:
            break
        if time.monotonic() > deadline:
            for key in undecided:
                out[key] = ("undecided", "out of time")
            break
        time.sleep(0.5)
    return out


def _run_chunk(
    api: Api,
    pool: ThreadPoolExecutor,
    pairs: list[Pair],
    stats: RunStats,
    timeout: float,
    cleanup: bool,
) -> None:
    run = uuid.uuid4().hex[:8]
    slots = assign_slots(pairs)
    slot_of = {id(p): k for k, members in enumerate(slots) for p in members}
    node_names = {
        (k, i): f"d{run}-{k}-{i}"
        for k, members in enumerate(slots)
        for i in range(len(members[0].nodes))
    }
    bodies = [
        _node_body(run, k, i, n)
        for k, members in enumerate(slots)
        for i, n in enumerate(members[0].nodes)
    ]

    t0 = time.monotonic()
    list(pool.map(lambda b: api.request("POST", "/api/v1/nodes", b), bodies))
    stats.nodes += len(bodies)
    stats.add("nodes created", time.monotonic() - t0)
    _assert_nodes_as_created(api, run, bodies)
    deadline = time.monotonic() + timeout
    expected_nodes = len(api.request("GET", "/api/v1/nodes")["items"])

    # DaemonSet pods first, one round per position in the nodes' lists: each node's k-th
    # DaemonSet is decided after its (k-1)-th, as the check takes them in order.
    t0 = time.monotonic()
    daemon_outcome: dict[tuple[int, int, str], tuple[str, str]] = {}
    rounds = max((len(n.daemons) for members in slots for n in members[0].nodes), default=0)
    for j in range(rounds):
        batch: dict[str, Callable[[int], dict[str, Any]]] = {}
        where: dict[str, tuple[int, int, str]] = {}
        for k, members in enumerate(slots):
            for i, n in enumerate(members[0].nodes):
                if j >= len(n.daemons):
                    continue
                dname, dspec = n.daemons[j]
                key = f"ds{k}-{i}-{j}"
                batch[key] = lambda attempt, key=key, node=node_names[(k, i)], k=k, dspec=dspec: (
                    _daemon_body(run, key, attempt, node, k, dspec)
                )
                where[key] = (k, i, dname)
        for key, result in _decide(api, pool, run, batch, expected_nodes, deadline, stats).items():
            daemon_outcome[where[key]] = result
    stats.add("daemonset pods decided", time.monotonic() - t0)

    t0 = time.monotonic()
    by_index = dict(enumerate(pairs))
    workloads = {i: p for i, p in by_index.items() if p.daemon is None}
    batch = {
        f"p{i}": (lambda attempt, i=i, p=p: _pod_body(run, slot_of[id(p)], i, attempt, p))
        for i, p in workloads.items()
    }
    decided = _decide(api, pool, run, batch, expected_nodes, deadline, stats)
    for i, p in workloads.items():
        p.outcome, p.detail = decided[f"p{i}"]
        if p.outcome == "bound" and not p.detail.startswith(f"d{run}-{slot_of[id(p)]}-"):
            p.outcome = "bound elsewhere"  # the slot trick failed: never expected
        if p.outcome == "undecided":
            p.detail = f"after {timeout:.0f}s"
    # A DaemonSet's own pair: its pods on the slot's nodes, decided above.
    for p in by_index.values():
        if p.daemon is None:
            continue
        k = slot_of[id(p)]
        mine = [
            daemon_outcome[(k, i, p.daemon)]
            for i in range(len(p.nodes))
            if (k, i, p.daemon) in daemon_outcome
        ]
        bound = [d for o, d in mine if o == "bound"]
        if bound:
            p.outcome, p.detail = "bound", bound[0]
        elif mine and all(o == "unschedulable" for o, _ in mine):
            p.outcome, p.detail = "unschedulable", mine[0][1]
        else:
            p.outcome, p.detail = "undecided", f"its DaemonSet pods: {mine}"
    stats.add("pods decided", time.monotonic() - t0)
    _assert_nodes_as_created(api, run, bodies)  # nothing changed them while pods were decided
    if not cleanup:
        return
    t0 = time.monotonic()
    api.request(
        "DELETE",
        f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector={RUN_LABEL}%3D{run}"
        "&gracePeriodSeconds=0",
    )
    api.request("DELETE", f"/api/v1/nodes?labelSelector={RUN_LABEL}%3D{run}")
    stats.add("cleanup", time.monotonic() - t0)


def _delete_pod(api: Api, name: str) -> None:
    try:
        api.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}?gracePeriodSeconds=0")
    except ApiRefused as e:
        if e.status != 404:
            raise


def _taint_set(taints: Any) -> set[tuple[str, str, str]]:
    return {(t["key"], t.get("value", ""), t["effect"]) for t in taints or ()}


def _assert_nodes_as_created(api: Api, run: str, bodies: Sequence[Mapping[str, Any]]) -> None:
    """Every node of the run is there with exactly the labels and taints it was created with."""
    listed = api.request("GET", f"/api/v1/nodes?labelSelector={RUN_LABEL}%3D{run}")["items"]
    have = {n["metadata"]["name"]: n for n in listed}
    for body in bodies:
        name = body["metadata"]["name"]
        node = have.get(name)
        if node is None:
            raise RuntimeError(f"node {name} is gone")
        labels = dict(node["metadata"].get("labels") or {})
        if _taint_set(node["spec"].get("taints")) != _taint_set(body["spec"]["taints"]) or (
            labels != body["metadata"]["labels"]
        ):
            raise RuntimeError(
                f"node {name} changed: created with {body['metadata']['labels']} "
                f"{body['spec']['taints']}, now {labels} {node['spec'].get('taints')}"
            )


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------


_FIT_REASON = re.compile(r"Insufficient (cpu|memory|ephemeral-storage)|Too many pods")


def decided_by_fit(pairs: Iterable[Pair], margin: float = 0.1) -> tuple[int, int]:
    """(kept out, landed) pairs decided by a resource other than GPUs: labels, taints and GPUs
    let the pod onto the pool, and then either the scheduler kept it out for cpu, memory,
    ephemeral storage or pods, or it landed asking at least (1 - margin) of such a resource of
    every node that holds it (the boundary's other side)."""
    out = landed = 0
    for p in pairs:
        if not p.placed or p.asks is None:
            continue
        if p.outcome == "unschedulable" and _FIT_REASON.search(p.detail):
            out += 1
        elif p.bound:
            near = [
                n
                for n in p.nodes
                if n.allocatable is not None
                and n.holds(p.asks)
                and any(
                    p.asks.get(r) and p.asks.get(r) >= (1 - margin) * n.allocatable.get(r)
                    for r in FIT_RESOURCES
                )
            ]
            holding = [n for n in p.nodes if n.holds(p.asks) and n.allocatable is not None]
            landed += bool(holding) and len(near) == len(holding)
    return out, landed


def decided_by_daemons(pairs: Iterable[Pair], margin: float = 0.1) -> tuple[int, int]:
    """(kept out, landed) workload pairs the nodes' DaemonSet pods decided: kept out for a
    resource although a node would hold the pod on its bare allocatable, or landed asking at
    least (1 - margin) of what a node leaves beside its DaemonSets of a resource they hold."""
    out = landed = 0
    for p in pairs:
        if not p.placed or p.asks is None or p.daemon is not None:
            continue
        known = [n for n in p.nodes if n.allocatable is not None]
        if p.outcome == "unschedulable" and _FIT_REASON.search(p.detail):
            out += any(n.holds(p.asks, bare=True) and not n.holds(p.asks) for n in known)
        elif p.bound:
            landed += any(
                n.holds(p.asks)
                and any(
                    n.overhead.get(r)
                    and p.asks.get(r)
                    and p.asks.get(r) >= (1 - margin) * (n.allocatable.get(r) - n.overhead.get(r))
                    for r in FIT_RESOURCES
                )
                for n in known
                if n.allocatable is not None
            )
    return out, landed


def summary(label: str, pairs: Iterable[Pair]) -> str:
    pairs = list(pairs)
    agree = sum(p.agrees for p in pairs)
    bound = sum(p.bound for p in pairs)
    out, landed = decided_by_fit(pairs)
    d_out, d_landed = decided_by_daemons(pairs)
    daemons = [p for p in pairs if p.daemon is not None]
    return (
        f"{label}: {len(pairs)} (pod, pool) pairs compared, {agree} agree "
        f"({bound} bound, {len(pairs) - bound} kept out); decided by cpu / memory / "
        f"ephemeral-storage / pods: {out} kept out, {landed} landed within 10% of allocatable; "
        f"decided by DaemonSet pods: {d_out} kept out, {d_landed} landed within 10% of what they "
        f"leave; DaemonSets' own pairs: {len(daemons)} ({sum(p.agrees for p in daemons)} agree)"
    )


class TerminalSummary:
    """A pytest plugin printing a differential's lines under `title` at the end of the run, whether
    or not output is captured."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.lines: list[str] = []

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section(self.title)
            for line in self.lines:
                terminalreporter.write_line(line)
