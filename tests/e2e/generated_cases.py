"""Generated graphs for the scheduler differential: random pools (labels, taints of all three
effects, GPUs per node, and mostly a declared allocatable: cpu, memory, ephemeral-storage, pods)
and random pods (nodeSelector, required affinity with every operator, `matchFields` on the node
name and empty terms, preferred affinity, tolerations, GPU requests in containers and init
containers, an explicit zero among them; cpu, memory and ephemeral-storage requests drawn from
values on both sides of the nodes' allocatable, summed over containers, init containers and
native sidecars; now and then a KServe predictor, which gets Knative's queue-proxy (Serverless)
and KServe's storage-initializer (a downloaded storageUri)); in half the cases DaemonSets, whose
pods the rig places on every node first (`differential._daemon_body`).

Pools are existing nodes (`NodePatch`), pods are Deployments or InferenceServices: plain graph
entries, so the check reads them exactly as it reads any graph. Label keys, values and taint keys come from small
alphabets so that selectors, tolerations and taints often meet; none of them is the slot label
the rig adds (`differential.SLOT_LABEL`), nor a label or taint Kubernetes adds by itself
(`kubernetes.io/*`, `node.kubernetes.io/*`).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from components.check import GPU_COUNT_KEYS, NODE_PATCH, POOL_LABEL
from components.model.nodes.aks_shapes import aks_node_shape

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
ALLOCATABLE_ANNOTATION = "gpu-inference.dev/allocatable"
# Node allocatable and container requests: values at, just below and just above each other, so
# that the sums of a pod's containers fall on both sides of a node's allocatable.
NODE_CPU = ("2", "4")
NODE_MEMORY = ("4Gi", "8Gi")
NODE_DISK = ("10Gi", "20Gi")
NODE_PODS = ("110", "110", "110", "1", "0")
CPU = ("100m", "1", "1900m", "2", "2001m", "3", "4", "4001m")
MEMORY = ("128Mi", "2Gi", "4Gi", "4097Mi", "8Gi", "9Gi")
DISK = (None, None, None, "1Gi", "10Gi", "10241Mi", "20Gi", "21Gi")
STORAGE_URIS = ("gs://bucket/model", "pvc://claim/model", "oci://registry/model:1")
LABEL_KEYS = ("tier", "example.com/gpu", "example.com/mem", POOL_LABEL)
LABEL_VALUES = ("a", "b", "true", "0", "1", "2", "10", "007", "")
NUMBERS = ("0", "1", "2", "5", "10", "7")
TAINT_KEYS = ("nvidia.com/gpu", "dedicated", "example.com/spot")
TAINT_VALUES = ("", "present", "true")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
NODE_NAMES = ("node-0-0", "node-0-1", "node-1-0", "node-1-1", "node-2-0")


# Strategies are built once, at import: building one per draw costs more than the draw.
_KEY = st.sampled_from(LABEL_KEYS)
_VALUES = {k: st.sampled_from(LABEL_VALUES) for k in LABEL_KEYS}
_VALUES[POOL_LABEL] = st.sampled_from(("p0", "p1", "p2"))
_VALUE_LISTS = {k: st.lists(v, min_size=1, max_size=2, unique=True) for k, v in _VALUES.items()}
_NUMBER = st.sampled_from(NUMBERS)
_OPERATOR = st.sampled_from(OPERATORS)
_TAINT_VALUE = st.sampled_from(TAINT_VALUES)
_TAINT_KEY_EFFECTS = st.lists(
    st.tuples(st.sampled_from(TAINT_KEYS), st.sampled_from(EFFECTS)), unique=True, max_size=3
)
_TOLERATION_KEY = st.sampled_from(("", *TAINT_KEYS))
_TOLERATION_EFFECT = st.sampled_from(("", *EFFECTS))
_TOLERATION_OPERATOR = st.sampled_from(("Equal", "Exists", None))  # None: left out, means Equal
# 0: an explicit zero, which still names the resource (ExtendedResourceToleration reacts to it).
_GPUS = st.sampled_from((None, None, 0, 1, 1, 2, 3))  # None: names no GPU
# A GPU count written as a plain integer, in milli-units or with an exponent (all mean the same).
_GPU_TEXT = st.sampled_from(("{n}", "{n}", "{m}m", "{n}e0"))
_BOOL = st.booleans()
_POOL_GPUS = st.integers(0, 4)
_ONE_IN_4 = st.integers(0, 3)
_ONE_IN_5 = st.integers(0, 4)
_WEIGHT = st.integers(1, 100)
_ONE_TO_TWO = st.integers(1, 2)
_ONE_TO_THREE = st.integers(1, 3)
_KEYS = {n: st.lists(_KEY, unique=True, max_size=n) for n in (2, 3)}
_ALLOCATABLE = st.fixed_dictionaries(
    {
        "cpu": st.sampled_from(NODE_CPU),
        "memory": st.sampled_from(NODE_MEMORY),
        "ephemeral-storage": st.sampled_from(NODE_DISK),
        "pods": st.sampled_from(NODE_PODS),
    }
)
_CPU = st.sampled_from(CPU)
_MEMORY = st.sampled_from(MEMORY)
_DISK = st.sampled_from(DISK)


@st.composite
def _labels(draw: Any, max_size: int) -> dict[str, str]:
    return {k: draw(_VALUES[k]) for k in draw(_KEYS[max_size])}


NODE_LABELS = _labels(3)
SELECTOR = _labels(2)


@st.composite
def _taints(draw: Any) -> list[dict[str, str]]:
    # Node taints are unique by (key, effect).
    out = []
    for key, effect in draw(_TAINT_KEY_EFFECTS):
        taint = {"key": key, "effect": effect}
        value = draw(_TAINT_VALUE)
        if value:
            taint["value"] = value
        out.append(taint)
    return out


TAINTS = _taints()


@st.composite
def _pool(draw: Any) -> list[tuple[dict[str, str], list[dict[str, str]], int, dict | None]]:
    """One or two nodes (labels, taints, GPUs, allocatable): an existing-nodes pool. Now and
    then its nodes have different GPU counts or allocatable (machines bought at different times),
    or declare no allocatable (fit not judged: the rig gives them room for anything)."""
    gpus = draw(_POOL_GPUS)
    held = draw(_ALLOCATABLE) if draw(_ONE_IN_4) else None
    nodes = []
    for _ in range(draw(_ONE_TO_TWO)):
        own = draw(_POOL_GPUS) if draw(_ONE_IN_4) == 0 else gpus
        own_held = (draw(_ALLOCATABLE) if draw(_BOOL) else None) if draw(_ONE_IN_4) == 0 else held
        nodes.append((draw(NODE_LABELS), draw(TAINTS), own, own_held))
    return nodes


POOL = _pool()


def pool_entries(
    index: int, nodes: list[tuple[dict, list, int, dict | None]]
) -> list[dict[str, Any]]:
    """NodePatches sharing the pool label (one pool), each node's GPU count and allocatable in
    annotations."""
    entries = []
    for j, (node_labels, node_taints, gpus, held) in enumerate(nodes):
        node_labels = {k: v for k, v in node_labels.items() if k != POOL_LABEL}
        node_labels[POOL_LABEL] = f"p{index}"
        annotations = {GPU_COUNT_KEYS[0]: str(gpus)}
        if held is not None:
            annotations[ALLOCATABLE_ANNOTATION] = json.dumps(held, sort_keys=True)
        entries.append(
            {
                "type": NODE_PATCH,
                "name": f"p{index}-n{j}",
                "inputs": {
                    "metadata": {
                        "name": f"node-{index}-{j}",
                        "labels": node_labels,
                        "annotations": annotations,
                    },
                    "spec": {"taints": node_taints},
                },
            }
        )
    return entries


@st.composite
def _requirement(draw: Any) -> dict[str, Any]:
    key = draw(_KEY)
    op = draw(_OPERATOR)
    req: dict[str, Any] = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        req["values"] = draw(_VALUE_LISTS[key])
    elif op in ("Gt", "Lt"):
        req["values"] = [draw(_NUMBER)]
    return req


REQUIREMENT = _requirement()
_EXPRESSIONS = st.lists(REQUIREMENT, min_size=0, max_size=3)
_PREFERENCE = st.lists(REQUIREMENT, min_size=1, max_size=2)
# matchFields: `metadata.name`, In or NotIn, one node name (of the graph: node-<pool>-<node>).
_FIELD = st.fixed_dictionaries(
    {
        "key": st.just("metadata.name"),
        "operator": st.sampled_from(("In", "NotIn")),
        "values": st.tuples(st.sampled_from(NODE_NAMES)).map(list),
    }
)
_FIELDS = st.lists(_FIELD, max_size=1)


@st.composite
def _term(draw: Any) -> dict[str, Any]:
    # An empty term is allowed by the API and matches nothing: generated now and then.
    term: dict[str, Any] = {}
    exprs = draw(_EXPRESSIONS)
    if exprs:
        term["matchExpressions"] = exprs
    if draw(_ONE_IN_4) == 0:
        fields = draw(_FIELDS)
        if fields:
            term["matchFields"] = fields
    return term


_TERMS = st.lists(_term(), min_size=1, max_size=2)


@st.composite
def _affinity(draw: Any) -> dict[str, Any] | None:
    node_affinity: dict[str, Any] = {}
    if draw(_BOOL):
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": draw(_TERMS)
        }
    if draw(_ONE_IN_4) == 0:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": draw(_WEIGHT), "preference": {"matchExpressions": draw(_PREFERENCE)}}
        ]
    return {"nodeAffinity": node_affinity} if node_affinity else None


AFFINITY = _affinity()


@st.composite
def _toleration(draw: Any) -> dict[str, Any]:
    key = draw(_TOLERATION_KEY)
    effect = draw(_TOLERATION_EFFECT)
    tol: dict[str, Any] = {}
    if key:
        tol["key"] = key
        op = draw(_TOLERATION_OPERATOR)
        if op:
            tol["operator"] = op
        if op != "Exists":
            value = draw(_TAINT_VALUE)
            if value:
                tol["value"] = value
    else:
        tol["operator"] = "Exists"  # an empty key tolerates every key; it needs Exists
    if effect:
        tol["effect"] = effect
    return tol


_TOLERATIONS = st.lists(_toleration(), max_size=3)


@st.composite
def _container(draw: Any) -> dict[str, Any]:
    gpus = draw(_GPUS)
    res: dict[str, Any] = {"requests": {"cpu": draw(_CPU), "memory": draw(_MEMORY)}}
    disk = draw(_DISK)
    if disk:
        res["requests"]["ephemeral-storage"] = disk
    if gpus is not None:
        quantity = draw(_GPU_TEXT).format(n=gpus, m=gpus * 1000)
        res["limits"] = {"nvidia.com/gpu": quantity}
        if draw(_BOOL):  # requests, when given, must equal limits for an extended resource
            res["requests"]["nvidia.com/gpu"] = quantity
    return {"name": "c", "image": "example.invalid/c:1", "resources": res}


CONTAINER = _container()
_CONTAINERS = st.lists(CONTAINER, min_size=1, max_size=2)


@st.composite
def _pod(draw: Any) -> dict[str, Any]:
    """A pod spec: containers (and now and then an init container), selector, affinity,
    tolerations."""
    spec: dict[str, Any] = {"containers": draw(_CONTAINERS)}
    if draw(_ONE_IN_5) == 0:
        init = draw(CONTAINER)
        if draw(_ONE_IN_4) == 0:
            init["restartPolicy"] = "Always"  # a native sidecar: it runs beside the containers
        spec["initContainers"] = [init]
    selector = draw(SELECTOR)
    if selector:
        spec["nodeSelector"] = selector
    aff = draw(AFFINITY)
    if aff:
        spec["affinity"] = aff
    tols = draw(_TOLERATIONS)
    if tols:
        spec["tolerations"] = tols
    return spec


POD = _pod()


# DaemonSet pods (no GPUs: the DaemonSet controller decides on the template's tolerations, before
# the ExtendedResourceToleration admission a GPU pod would get): requests from nothing to most of a
# node, so that they land, stay Pending, or leave a workload too little.
DAEMON_CPU = (None, "100m", "500m", "1", "1900m")
DAEMON_MEMORY = (None, "128Mi", "1Gi", "3Gi")
DAEMON_DISK = (None, None, "1Gi", "9Gi")
_DAEMON_CPU = st.sampled_from(DAEMON_CPU)
_DAEMON_MEMORY = st.sampled_from(DAEMON_MEMORY)
_DAEMON_DISK = st.sampled_from(DAEMON_DISK)


@st.composite
def _daemon(draw: Any) -> dict[str, Any]:
    """A DaemonSet's pod spec: one container (requests, some none at all), tolerations, and now
    and then a nodeSelector or required affinity."""
    requests = {
        k: v
        for k, v in (
            ("cpu", draw(_DAEMON_CPU)),
            ("memory", draw(_DAEMON_MEMORY)),
            ("ephemeral-storage", draw(_DAEMON_DISK)),
        )
        if v
    }
    container: dict[str, Any] = {"name": "d", "image": "example.invalid/d:1"}
    if requests:
        container["resources"] = {"requests": requests}
    spec: dict[str, Any] = {"containers": [container]}
    # Half of them tolerate every taint, as node agents do (kube-proxy, the CNI): they land on
    # most nodes and take their share there.
    tols = [{"operator": "Exists"}] if draw(_BOOL) else draw(_TOLERATIONS)
    if tols:
        spec["tolerations"] = tols
    if draw(_ONE_IN_4) == 0:
        selector = draw(SELECTOR)
        if selector:
            spec["nodeSelector"] = selector
    if draw(_ONE_IN_4) == 0:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": draw(_PREFERENCE)}]
                }
            }
        }
    return spec


DAEMON = _daemon()


def daemonset_entry(index: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": DAEMONSET,
        "name": f"ds{index}",
        "inputs": {
            "metadata": {"name": f"ds{index}", "namespace": "default"},
            "spec": {"template": {"spec": spec}},
        },
    }


def deployment_entry(index: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": DEPLOYMENT,
        "name": f"w{index}",
        "inputs": {
            "metadata": {"name": f"w{index}", "namespace": "default"},
            "spec": {"replicas": 1, "template": {"spec": spec}},
        },
    }


def predictor_entry(index: int, spec: dict[str, Any], mode: str, uri: str) -> dict[str, Any]:
    """A KServe InferenceService whose predictor is the pod's scheduling fields and a model with
    its first container's resources (its other containers and init containers are dropped)."""
    predictor = {k: v for k, v in spec.items() if k in ("nodeSelector", "affinity", "tolerations")}
    model = {"modelFormat": {"name": "sklearn"}, "storageUri": uri}
    model["resources"] = spec["containers"][0]["resources"]
    predictor["model"] = model
    return {
        "type": ISVC,
        "name": f"m{index}",
        "inputs": {
            "metadata": {
                "name": f"m{index}",
                "namespace": "default",
                "annotations": {"serving.kserve.io/deploymentMode": mode},
            },
            "spec": {"predictor": predictor},
        },
    }


_MODE = st.sampled_from(("Serverless", "RawDeployment"))
_URI = st.sampled_from(STORAGE_URIS)


@st.composite
def _case(draw: Any) -> dict[str, Any]:
    """{"ert": bool, "graph": [...]}: 1-3 pools, in half the cases 1-2 DaemonSets (their pods
    take their share of the nodes first), 1-3 pods (one in four a KServe predictor)."""
    graph: list[dict[str, Any]] = []
    pools = [draw(POOL) for _ in range(draw(_ONE_TO_THREE))]
    for i, nodes in enumerate(pools):
        graph += pool_entries(i, nodes)
    daemons = draw(_BOOL)
    if daemons:
        for i in range(draw(_ONE_TO_TWO)):
            graph.append(daemonset_entry(i, draw(DAEMON)))
    for i in range(draw(_ONE_TO_THREE)):
        spec = draw(POD)
        if draw(_ONE_IN_4) == 0:
            graph.append(predictor_entry(i, spec, draw(_MODE), draw(_URI)))
        else:
            graph.append(deployment_entry(i, spec))
    held = pools[0][0][3]
    if daemons and held is not None and draw(_BOOL):
        # A pod asking exactly what pool p0's first node holds, or a step below: only the
        # DaemonSet pods that land there decide whether it still fits.
        graph.append(deployment_entry(9, _tight_pod(held, draw(_TIGHT_STEP))))
    return {"ert": draw(_BOOL), "graph": graph}


_TIGHT_STEP = st.sampled_from((0, 0, 100, 500))  # millicores below the node's cpu


def _tight_pod(held: dict[str, str], step: int) -> dict[str, Any]:
    cpu = int(float(held["cpu"]) * 1000) - step
    return {
        "nodeSelector": {POOL_LABEL: "p0"},
        "tolerations": [{"operator": "Exists"}],
        "containers": [
            {
                "name": "c",
                "image": "example.invalid/c:1",
                "resources": {"requests": {"cpu": f"{cpu}m", "memory": "1Gi"}},
            }
        ],
    }


CASE = _case()


def draw_distinct(strategy: st.SearchStrategy[Any], count: int, seed: int) -> list[Any]:
    """`count` distinct values of `strategy`, the same ones for the same seed (and Hypothesis
    version): Hypothesis drawn as a generator, not a test."""
    found: dict[str, Any] = {}
    attempt = 0
    while len(found) < count:

        @hypothesis_seed(seed + attempt)
        @settings(
            max_examples=count,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(strategy)
        def collect(c: Any) -> None:
            found.setdefault(json.dumps(c, sort_keys=True), c)

        collect()
        attempt += 1
    return list(found.values())[:count]


def draw_cases(count: int, seed: int) -> list[dict[str, Any]]:
    """`count` distinct cases, the same ones for the same seed (and Hypothesis version)."""
    return draw_distinct(CASE, count, seed)


# ---------------------------------------------------------------------------------------------
# AKS agent pools: what the check reads of one (the labels and taints AKS adds, the spot taint,
# the VM size's node shape) held against the scheduler with the same pods. Drawn apart from the
# cases above, so that a seed gives the same generic cases as before.
# ---------------------------------------------------------------------------------------------

AGENT_POOL = "azure-native:containerservice:AgentPool"
# Small sizes, whose allocatable CPU (3860m, 5850m, 7820m) the pods' requests fall on both sides of.
AKS_VM_SIZES = (
    "Standard_NC4as_T4_v3",
    "Standard_NV6ads_A10_v5",
    "Standard_NC8as_T4_v3",
    "Standard_NC64as_T4_v3",
)
SKU_TAINT = "sku=gpu:NoSchedule"
AKS_TOLERATIONS = (
    {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Exists"},
)
# Requests on both sides of those sizes' allocatable (CPU; memory of the NC4as_T4_v3 and the
# NV6ads_A10_v5: 20.87Gi and 45.85Gi at 30 pods), asked by the first container now and then.
AKS_CPU = ("3860m", "3861m", "5840m", "5841m", "7820m", "7821m")
AKS_MEMORY = ("128Mi", "20Gi", "21Gi", "45Gi", "46Gi")
_AKS_CPU = st.sampled_from(AKS_CPU)
_AKS_MEMORY = st.sampled_from(AKS_MEMORY)
_VM_SIZE = st.sampled_from(AKS_VM_SIZES)
_SKU, _SPOT = AKS_TOLERATIONS
_AKS_TOLERATIONS = st.sampled_from(([_SKU, _SPOT], [], [_SKU], [_SPOT], [_SKU, _SPOT]))
_MAX_PODS = st.sampled_from((None, 30, 10, 250))


def agent_pool_entry(
    index: int,
    vm_size: str,
    labels: dict[str, str],
    taints: list[dict[str, str]],
    spot: bool,
    max_pods: int | None,
) -> dict[str, Any]:
    """An AKS agent pool as a program registers it (nodeTaints as `key=value:Effect`)."""
    node_labels = {k: v for k, v in labels.items() if k != POOL_LABEL}
    node_labels[POOL_LABEL] = f"p{index}"
    inputs: dict[str, Any] = {
        "resourceGroupName": "rg",
        "resourceName": "aks",
        "agentPoolName": f"p{index}",
        "mode": "User",
        "vmSize": vm_size,
        "enableAutoScaling": True,
        "minCount": 0,
        "maxCount": 2,
        "nodeLabels": node_labels,
        "nodeTaints": [f"{t['key']}={t.get('value', '')}:{t['effect']}" for t in taints],
    }
    if spot:
        inputs["scaleSetPriority"] = "Spot"
    if max_pods is not None:
        inputs["maxPods"] = max_pods
    return {"type": AGENT_POOL, "name": f"p{index}", "inputs": inputs}


@st.composite
def _aks_case(draw: Any) -> dict[str, Any]:
    """{"ert": False, "graph": [...]}: 1-3 agent pools (half of them tainted sku=gpu, a third
    spot, a third with other taints), 1-3 pods, two thirds of them aimed at one pool by its label, some tolerating the AKS
    taints, half asking CPU and memory at the small sizes' allocatable."""
    graph: list[dict[str, Any]] = []
    for i in range(draw(_ONE_TO_THREE)):
        taints = [t for t in draw(TAINTS) if t["key"] != "sku"] if draw(_ONE_TO_THREE) == 1 else []
        if draw(_BOOL):
            taints.append({"key": "sku", "value": "gpu", "effect": "NoSchedule"})
        spot = draw(_ONE_TO_THREE) == 1
        graph.append(
            agent_pool_entry(i, draw(_VM_SIZE), draw(NODE_LABELS), taints, spot, draw(_MAX_PODS))
        )
    for i in range(draw(_ONE_TO_THREE)):
        spec = draw(POD)
        if draw(_ONE_TO_THREE) != 1:  # aimed at one pool, as a served model is
            spec["nodeSelector"] = {POOL_LABEL: f"p{draw(_ONE_TO_THREE) - 1}"}
            if draw(_BOOL):
                spec.pop("affinity", None)
                spec.pop("tolerations", None)
        if draw(_BOOL):
            requests = spec["containers"][0]["resources"]["requests"]
            requests["cpu"], requests["memory"] = draw(_AKS_CPU), draw(_AKS_MEMORY)
        extra = draw(_AKS_TOLERATIONS)
        if extra:
            spec["tolerations"] = [*spec.get("tolerations", []), *extra]
        graph.append(deployment_entry(i, spec))
    return {"ert": False, "graph": graph}


AKS_CASE = _aks_case()


def draw_aks_cases(count: int, seed: int) -> list[dict[str, Any]]:
    """`count` distinct AKS cases, the same ones for the same seed."""
    return draw_distinct(AKS_CASE, count, seed)


def aks_boundary_cases() -> list[dict[str, Any]]:
    """Fixed cases that go with the drawn ones, so that every run holds the CPU boundary of each
    small size: an untainted pool of the size (30 pods per node), a pod it admits asking exactly
    the allocatable CPU our shape gives the node, and one asking 1m more. A drawn set may miss the
    boundary's landing side (seed 80129635 did); these never do, and were our allocatable off,
    the scheduler would disagree on them."""
    cases = []
    for size in AKS_VM_SIZES[:3]:
        cpu = aks_node_shape(size, max_pods=30).allocatable.cpu
        pods = [
            deployment_entry(
                i,
                {
                    "containers": [
                        {
                            "name": "c",
                            "image": "example.invalid/c:1",
                            "resources": {"requests": {"cpu": f"{m}m", "memory": "128Mi"}},
                        }
                    ],
                    "nodeSelector": {POOL_LABEL: "p0"},
                },
            )
            for i, m in enumerate((cpu, cpu + 1))
        ]
        cases.append({"ert": False, "graph": [agent_pool_entry(0, size, {}, [], False, 30), *pods]})
    return cases
