"""The capacity proof held against the real kube-scheduler: a graph's capacity cases in, pods
bound per workload out.

A *run* is one capacity case of a graph (`components.check.capacity.model.CapacityCase`: a set of
pools workloads share) and one order of pod creation. The rig gets each pool's max nodes (the
labels, taints, GPUs and allocatable the check computed, existing nodes as the graph declares
them), then the DaemonSet pods the check counts on each node (placed by the scheduler on that node,
as the DaemonSet controller asks: `matchFields` on the node's name), then the pods of the order
one at a time: each is created once the one before is bound or Unschedulable. The check's claim is
the set of ways the default scheduler may place them (`scheduler.outcomes`: one, unless a tie
between unlike nodes is taken); the scheduler's answer, the pods bound per workload, must be one
of them. Orders: the workloads' pods in graph order (each LeaderWorkerSet's leaders, then its
workers), and for a fragmentation warning (GI043) the order it names, whose last pod must stay
Pending. For a case with no packing (GI040) every order leaves a pod Pending: the first does.

Every run has its own slot (`differential.SLOT_LABEL`, on its nodes and in its pods' nodeSelector),
so runs go side by side: round k creates the k-th pod of every run still going.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import rig
from differential import (
    NAMESPACE,
    RUN_LABEL,
    SLOT_LABEL,
    Api,
    ApiRefused,
    RigNode,
    _node_body,
    _rename_fields,
    pod_spec,
)

from components.check import check
from components.check.capacity.model import CapacityCase
from components.check.capacity.scheduler import TooManyStates, outcomes
from components.check.fit import pod_containers

RUN_POD_LABEL = "e2e.gpu-inference.dev/capacity-run"


@dataclass
class CapacityRun:
    """One capacity case and one order of creation: what the check claims, what the rig did."""

    source: str
    pools: tuple[str, ...]
    kinds: tuple[str, ...]  # workload resource of each kind
    order: tuple[int, ...]  # kinds, in creation order
    predicted: frozenset[tuple[int, ...]]  # bound pods per kind, each way the scheduler may go
    nodes: tuple[RigNode, ...]
    daemonsets: tuple[tuple[int, dict[str, Any]], ...]  # (node index, pod spec)
    specs: tuple[dict[str, Any], ...]  # pod spec per kind
    why: str  # "controller order" | "fragmentation" (GI043's order)
    fits: bool  # the check: a packing of every pod exists
    tie: bool  # a tie between unlike nodes may be taken
    bound: tuple[int, ...] = ()  # the scheduler: bound pods per kind
    placed: list[str] = field(default_factory=list)  # node (or "Pending") per pod, in order
    detail: str = ""
    version: str = rig.KUBERNETES_VERSION  # the Kubernetes release whose scheduler judges it

    def on(self, version: str) -> CapacityRun:
        """This run, not yet run, on `version`'s scheduler."""
        return replace(self, version=version, bound=(), placed=[], detail="")

    @property
    def decided(self) -> bool:
        return len(self.placed) == len(self.order)

    @property
    def agrees(self) -> bool:
        return self.decided and self.bound in self.predicted

    @property
    def stranded(self) -> bool:
        return "Pending" in self.placed

    def describe(self) -> str:
        steps = "; ".join(
            f"{self.kinds[k]} -> {where}" for k, where in zip(self.order, self.placed, strict=False)
        )
        return (
            f"{self.source} pools {', '.join(self.pools)} ({self.why}): the check says bound per "
            f"workload one of {sorted(self.predicted)}, the scheduler of Kubernetes "
            f"{self.version} {self.bound}; {steps} "
            f"{self.detail}\n  kinds: {list(self.kinds)}\n  nodes: "
            + json.dumps(
                [
                    {
                        "labels": n.labels,
                        "taints": n.taints,
                        "gpus": n.gpus,
                        "allocatable": None
                        if n.allocatable is None
                        else list(n.allocatable.items()),
                    }
                    for n in self.nodes
                ],
                sort_keys=True,
            )
            + f"\n  daemonsets: {json.dumps(self.daemonsets, sort_keys=True)}"
            + f"\n  pods: {json.dumps(self.specs, sort_keys=True)}"
        )


def _nodes(case: CapacityCase) -> tuple[RigNode, ...]:
    out = []
    for c in case.nodes("most"):
        cls = case.classes[c]
        out.append(
            RigNode(
                dict(cls.node.labels),
                tuple(t.to_dict() for t in cls.node.taints),
                cls.allocatable.gpus,
                cls.node.name,
                cls.allocatable,
            )
        )
    return tuple(out)


def _predicted(case: CapacityCase, order: Sequence[int]) -> tuple[frozenset, bool]:
    runs = outcomes(case.scheduler("most"), order)
    return frozenset(r.bound(len(case.kinds)) for r in runs), any(r.tie for r in runs)


def _daemon_spec(daemon: Any, entry: Mapping[str, Any] | None) -> dict[str, Any]:
    """The pod a DaemonSet puts on a node: the graph's DaemonSet's own containers, else (a
    provider's, a chart's) one container asking what the check counts for it."""
    if entry is not None and str(entry.get("type", "")).endswith(":DaemonSet"):
        template = entry["inputs"]["spec"]["template"]["spec"]
        return pod_spec({}, template.get("containers") or [], template.get("initContainers") or [])
    asked = {
        name: value
        for name, value in (
            ("cpu", f"{daemon.requests.cpu}m"),
            ("memory", str(daemon.requests.memory)),
            ("ephemeral-storage", str(daemon.requests.ephemeral_storage)),
        )
        if not value.startswith("0")
    }
    return pod_spec({}, [{"resources": {"requests": asked}}] if asked else [{}], [])


def runs_from_graph(
    source: str,
    graph: Sequence[Mapping[str, Any]],
    *,
    extended_resource_toleration: bool | None = None,
) -> tuple[list[CapacityRun], bool]:
    """The runs of every capacity case the check judged in `graph`, and whether it judged the
    graph with ExtendedResourceToleration on."""
    report = check(graph, extended_resource_toleration=extended_resource_toleration)
    runs = []
    for case in report.capacity:
        if case.fits is None:
            continue  # not judged (GI044)
        nodes = _nodes(case)
        specs = []
        for kind in case.kinds:
            containers, inits, _ = pod_containers(kind.demand.template)
            specs.append(pod_spec(kind.demand.template.fragment, containers, inits))
        ds = []
        by_resource = {}
        for e in graph:
            by_resource.setdefault(f"{str(e['type']).rsplit(':', 1)[-1]}/{e['name']}", e)
        for i, c in enumerate(case.nodes("most")):
            for daemon in case.classes[c].node.daemons.pods:
                ds.append((i, _daemon_spec(daemon, by_resource.get(daemon.name))))
        orders = [("controller order", case.controller_order())]
        if case.strand is not None:
            orders.append(("fragmentation", list(case.strand.order)))
        for why, order in orders:
            if not order:
                continue  # nothing runs all the time there
            try:
                predicted, tie = _predicted(case, order)
            except TooManyStates:
                continue
            runs.append(
                CapacityRun(
                    source,
                    tuple(p.name for p in case.pools),
                    tuple(k.resource for k in case.kinds),
                    tuple(order),
                    predicted,
                    nodes,
                    tuple(ds),
                    tuple(specs),
                    why,
                    bool(case.fits),
                    tie,
                )
            )
    return runs, report.extended_resource_toleration


# ---------------------------------------------------------------------------------------------
# Running on the rig
# ---------------------------------------------------------------------------------------------


def _pod(
    run_id: str, slot: int, index: int, spec: Mapping[str, Any], names: Mapping[str, str]
) -> dict:
    body = json.loads(json.dumps(spec))
    _rename_fields(body, names)
    body["nodeSelector"] = {**(body.get("nodeSelector") or {}), SLOT_LABEL: str(slot)}
    body["automountServiceAccountToken"] = False
    body["terminationGracePeriodSeconds"] = 0
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"c{run_id}-{slot}-{index}",
            "labels": {RUN_LABEL: run_id, RUN_POD_LABEL: f"{slot}-{index}"},
        },
        "spec": body,
    }


def _on_node(node: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A DaemonSet pod as its controller makes it: required to its node by name, tolerating all."""
    body = json.loads(json.dumps(spec))
    body["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            }
        }
    }
    body["tolerations"] = [{"operator": "Exists"}]
    return body


def _decision(pod: Mapping[str, Any]) -> str | None:
    """The node the pod is bound to, "Pending" when the scheduler marked it Unschedulable, None
    while undecided."""
    node = pod["spec"].get("nodeName")
    if node:
        return str(node)
    for c in pod.get("status", {}).get("conditions", []) or []:
        scheduled = c.get("type") == "PodScheduled" and c.get("status") == "False"
        if scheduled and c.get("reason") == "Unschedulable":
            return "Pending"
    return None


def _wait(api: Api, run_id: str, names: Sequence[str], timeout: float) -> dict[str, str]:
    """Each named pod's decision (bound node or Pending), waiting until all are decided."""
    left = set(names)
    found: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while left and time.monotonic() < deadline:
        listed = api.request(
            "GET", f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector={RUN_LABEL}%3D{run_id}"
        )["items"]
        for pod in listed:
            name = pod["metadata"]["name"]
            if name in left and (where := _decision(pod)) is not None:
                found[name] = where
                left.discard(name)
        if left:
            time.sleep(0.2)
    return found


def run_capacity(cp: Any, runs: Sequence[CapacityRun], *, workers: int = 4) -> dict[str, float]:
    """Place every run's pods on the rig (sets `bound`, `placed`); the seconds each phase took."""
    api = Api(cp)
    run_id = uuid.uuid4().hex[:8]
    seconds: dict[str, float] = {}
    node_names: list[list[str]] = []
    bodies = []
    for slot, run in enumerate(runs):
        names = []
        for i, node in enumerate(run.nodes):
            body = _node_body(run_id, slot, i, node)
            names.append(body["metadata"]["name"])
            bodies.append(body)
        node_names.append(names)
    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda b: api.request("POST", "/api/v1/nodes", b), bodies))
        _wait_for_nodes(api, run_id, len(api.request("GET", "/api/v1/nodes")["items"]))
        seconds["nodes"] = time.monotonic() - t0

        t0 = time.monotonic()
        ds_pods = []
        for slot, run in enumerate(runs):
            for j, (i, spec) in enumerate(run.daemonsets):
                node = node_names[slot][i]
                ds_pods.append(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": f"c{run_id}-{slot}-ds{j}",
                            "labels": {RUN_LABEL: run_id},
                        },
                        "spec": _on_node(node, spec)
                        | {
                            "automountServiceAccountToken": False,
                            "terminationGracePeriodSeconds": 0,
                        },
                    }
                )
        list(
            pool.map(
                lambda b: api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", b), ds_pods
            )
        )
        placed = _wait(
            api, run_id, [b["metadata"]["name"] for b in ds_pods], 120 + 0.2 * len(ds_pods)
        )
        pending = [n for n, where in placed.items() if where == "Pending"]
        if len(placed) < len(ds_pods) or pending:
            raise RuntimeError(
                f"DaemonSet pods not all placed: {len(placed)} of {len(ds_pods)}, Pending {pending[:5]}"
            )
        seconds["daemonsets"] = time.monotonic() - t0

        t0 = time.monotonic()
        rounds = max((len(r.order) for r in runs), default=0)
        renames = [
            {n.name: node_names[slot][i] for i, n in enumerate(run.nodes) if n.name}
            for slot, run in enumerate(runs)
        ]
        for k in range(rounds):
            going = [s for s, r in enumerate(runs) if k < len(r.order) and len(r.placed) == k]

            def create(slot: int, k: int = k) -> str:
                run = runs[slot]
                body = _pod(run_id, slot, k, run.specs[run.order[k]], renames[slot])
                try:
                    api.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", body)
                except ApiRefused as e:
                    run.detail = f"pod {k} refused: {e}"
                return str(body["metadata"]["name"])

            names = list(pool.map(create, going))
            decided = _wait(api, run_id, names, 60 + 0.1 * len(names))
            for slot, name in zip(going, names, strict=True):
                where = decided.get(name)
                if where is None:
                    runs[slot].detail = runs[slot].detail or f"pod {k} undecided"
                    continue
                runs[slot].placed.append(where)
        seconds["pods"] = time.monotonic() - t0
    for run in runs:
        counts = [0] * len(run.kinds)
        for kind, where in zip(run.order, run.placed, strict=False):
            if where != "Pending":
                counts[kind] += 1
        run.bound = tuple(counts)
    return seconds


def _wait_for_nodes(api: Api, run_id: str, expected: int, timeout: float = 90) -> None:
    """Until the scheduler's snapshot holds every node: a pod no node takes is refused by all
    `expected` of them ("0/N nodes are available")."""
    name = f"c{run_id}-probe"
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {RUN_LABEL: run_id}},
        "spec": {
            "nodeSelector": {"e2e.gpu-inference.dev/nowhere": "x"},
            "containers": [{"name": "c", "image": "example.invalid/c:1"}],
            "terminationGracePeriodSeconds": 0,
        },
    }
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        api.request("POST", path, body)
        decided = _wait(api, run_id, [name], 30)
        pod = api.request("GET", f"{path}/{name}")
        messages = [
            c.get("message", "")
            for c in pod.get("status", {}).get("conditions", []) or []
            if c.get("reason") == "Unschedulable"
        ]
        api.request("DELETE", f"{path}/{name}?gracePeriodSeconds=0")
        while True:  # gone before it is made again
            try:
                api.request("GET", f"{path}/{name}")
            except ApiRefused as e:
                if e.status == 404:
                    break
                raise
            time.sleep(0.1)
        if decided and any(m.startswith(f"0/{expected} ") for m in messages):
            return
        time.sleep(0.5)
    raise RuntimeError(f"the scheduler never saw all {expected} nodes")


def summary(label: str, runs: Sequence[CapacityRun]) -> str:
    agree = sum(r.agrees for r in runs)
    short = [r for r in runs if not r.fits]
    frag = [r for r in runs if r.why == "fragmentation" and not r.tie]
    tied = [r for r in runs if r.why == "fragmentation" and r.tie]
    tie = sum(r.tie for r in runs)
    return (
        f"{label}: {len(runs)} runs, {agree} agree; {sum(len(r.order) for r in runs)} pods; "
        f"no packing: {len(short)} ({sum(r.stranded for r in short)} left a pod Pending); "
        f"fragmentation orders: {len(frag)} without a tie ({sum(r.stranded for r in frag)} "
        f"stranded), {len(tied)} through a tie ({sum(r.stranded for r in tied)} stranded); "
        f"{tie} runs may take a tie between unlike nodes"
    )
