"""Generated graphs for the capacity differential: one to three pools of several nodes each (GKE
node pools of catalog machine types with a max, or existing nodes declaring what they hold), pods
sized against them so that packing, fragmentation and DaemonSets decide (Deployments of 0 to 4
replicas, LeaderWorkerSets of 1 to 2 groups of 2 to 3 pods, a DaemonSet now and then), selecting a
pool or a label two pools share, tolerating a soft (PreferNoSchedule) taint or not, preferring a
pool now and then. Every graph is judged with ExtendedResourceToleration on.
"""

from __future__ import annotations

import json
from typing import Any

from generated_cases import draw_distinct
from hypothesis import strategies as st

POOL = "gpu-inference.dev/pool"
SHARED = "e2e.gpu-inference.dev/tier"
SOFT = {"key": "soft", "value": "true", "effect": "PreferNoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
ALLOCATABLE = "gpu-inference.dev/allocatable"
GKE_MACHINES = ("g2-standard-8", "g2-standard-24", "n2-standard-8", "n2-standard-4")
CPU = ("250m", "500m", "1", "2", "3", "3500m", "6")
MEMORY = ("512Mi", "1Gi", "2Gi", "6Gi", "10Gi", "14Gi", "20Gi")
GPUS = (0, 1, 1, 2, 2, 4)


def _gke_pool(name: str, machine: str, hi: int, soft: bool, shared: bool) -> dict[str, Any]:
    labels = {POOL: name} | ({SHARED: "x"} if shared else {})
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {
            "name": name,
            "location": "us-central1",
            "nodeConfig": {
                "machineType": machine,
                "diskSizeGb": 100,
                "labels": labels,
                "taints": [SOFT | {"effect": "PREFER_NO_SCHEDULE"}] if soft else [],
            },
            "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": hi},
        },
    }


def _existing_pool(
    name: str, nodes: list[tuple[str, str, str, int]], soft: bool, shared: bool
) -> list[dict[str, Any]]:
    out = []
    for j, (cpu, memory, pods, gpus) in enumerate(nodes):
        labels = {POOL: name} | ({SHARED: "x"} if shared else {})
        taints = [SOFT] if soft else []
        if gpus:
            taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        held = {"cpu": cpu, "memory": memory, "ephemeral-storage": "100Gi", "pods": pods}
        out.append(
            {
                "type": "kubernetes:core/v1:NodePatch",
                "name": f"{name}-n{j}",
                "inputs": {
                    "metadata": {
                        "name": f"{name}-node-{j}",
                        "labels": labels,
                        "annotations": {
                            "gpu-inference.dev/gpus-per-node": str(gpus),
                            ALLOCATABLE: json.dumps(held, sort_keys=True),
                        },
                    },
                    "spec": {"taints": taints},
                },
            }
        )
    return out


_EXISTING_NODE = st.tuples(
    st.sampled_from(("4", "8")),
    st.sampled_from(("16Gi", "32Gi")),
    st.sampled_from(("110", "110", "4")),
    st.sampled_from((0, 4, 4, 8)),
)


@st.composite
def _pools(draw: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 3))):
        name = f"p{i}"
        soft, shared = draw(st.booleans()), draw(st.booleans())
        if draw(st.booleans()):
            machine = draw(st.sampled_from(GKE_MACHINES))
            out.append(_gke_pool(name, machine, draw(st.integers(1, 4)), soft, shared))
        else:
            nodes = draw(st.lists(_EXISTING_NODE, min_size=1, max_size=3))
            out += _existing_pool(name, nodes, soft, shared)
    return out


def _container(cpu: str, memory: str, gpus: int) -> dict[str, Any]:
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory}
    limits: dict[str, Any] = {}
    if gpus:
        requests["nvidia.com/gpu"] = gpus
        limits["nvidia.com/gpu"] = gpus
    return {
        "name": "c",
        "image": "example.invalid/c:1",
        "resources": {"requests": requests} | ({"limits": limits} if limits else {}),
    }


@st.composite
def _pod(draw: Any, pools: int) -> dict[str, Any]:
    target = draw(st.integers(0, pools))  # pools: the label two pools may share
    selector = {SHARED: "x"} if target == pools else {POOL: f"p{target}"}
    spec: dict[str, Any] = {
        "nodeSelector": selector,
        "containers": [
            _container(
                draw(st.sampled_from(CPU)),
                draw(st.sampled_from(MEMORY)),
                draw(st.sampled_from(GPUS)),
            )
        ],
    }
    tolerations = [GPU_TOLERATION]
    if draw(st.booleans()):
        tolerations.append({"key": "soft", "operator": "Exists", "effect": "PreferNoSchedule"})
    spec["tolerations"] = tolerations
    if pools > 1 and draw(st.integers(0, 3)) == 0:
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": draw(st.integers(1, 100)),
                        "preference": {
                            "matchExpressions": [
                                {
                                    "key": POOL,
                                    "operator": "In",
                                    "values": [f"p{draw(st.integers(0, pools - 1))}"],
                                }
                            ]
                        },
                    }
                ]
            }
        }
    return spec


def _workload(
    index: int, kind: str, spec: dict[str, Any], replicas: int, size: int
) -> dict[str, Any]:
    metadata = {"name": f"w{index}", "namespace": "default"}
    if kind == "LeaderWorkerSet":
        body = {
            "replicas": replicas,
            "leaderWorkerTemplate": {"size": size, "workerTemplate": {"spec": spec}},
        }
        typ = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
    elif kind == "DaemonSet":
        body = {"template": {"spec": spec}}
        typ = "kubernetes:apps/v1:DaemonSet"
    else:
        body = {"replicas": replicas, "template": {"spec": spec}}
        typ = "kubernetes:apps/v1:Deployment"
    return {"type": typ, "name": f"w{index}", "inputs": {"metadata": metadata, "spec": body}}


@st.composite
def _case(draw: Any) -> dict[str, Any]:
    pools = draw(_pools())
    count = len({e["name"].split("-n")[0] for e in pools})
    graph = list(pools)
    for i in range(draw(st.integers(1, 4))):
        spec = draw(_pod(count))
        if draw(st.integers(0, 3)) == 0:
            graph.append(
                _workload(
                    i, "LeaderWorkerSet", spec, draw(st.integers(1, 2)), draw(st.integers(2, 3))
                )
            )
        else:
            graph.append(_workload(i, "Deployment", spec, draw(st.integers(0, 4)), 1))
    if draw(st.integers(0, 3)) == 0:
        ds = {
            "tolerations": [{"operator": "Exists"}],
            "containers": [_container(draw(st.sampled_from(("100m", "500m", "1"))), "256Mi", 0)],
        }
        graph.append(_workload(9, "DaemonSet", ds, 0, 1))
    return {"graph": graph}


@st.composite
def _spread_case(draw: Any) -> dict[str, Any]:
    """Alike GPU nodes, `small` pods of half a node's GPUs (a quarter now and then) and pods of a
    whole node's filling the rest exactly: a packing exists, and spreading the small ones over
    more nodes than they fill strands a large one."""
    nodes, gpus = draw(st.integers(2, 4)), draw(st.sampled_from((4, 8)))
    cpu, memory = draw(st.sampled_from((("8", "32Gi"), ("64", "256Gi"), ("200", "1Ti"))))
    graph = _existing_pool("p0", [(cpu, memory, "110", gpus)] * nodes, False, False)
    part = draw(st.sampled_from((2, 2, 4)))
    small = part * draw(st.integers(1, nodes - 1))  # they fill `small / part` nodes
    large = nodes - small // part
    pods = [(gpus // part, small), (gpus, large)]
    if draw(st.booleans()):
        pods.reverse()
    for i, (size, replicas) in enumerate(pods):
        spec = {
            "nodeSelector": {POOL: "p0"},
            "tolerations": [GPU_TOLERATION],
            "containers": [
                _container(
                    draw(st.sampled_from(("100m", "1", "4"))),
                    draw(st.sampled_from(("1Gi", "8Gi"))),
                    size,
                )
            ],
        }
        graph.append(_workload(i, "Deployment", spec, replicas, 1))
    return {"graph": graph}


CASE = st.one_of(_case(), _case(), _case(), _spread_case())


def draw_capacity_cases(count: int, seed: int) -> list[dict[str, Any]]:
    """`count` distinct capacity cases, the same ones for the same seed (and Hypothesis version)."""
    return draw_distinct(CASE, count, seed)
