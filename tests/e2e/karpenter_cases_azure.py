"""Generated cases for the Karpenter differential on Azure: AKS node auto-provisioning graphs
(AKSNodeClasses, karpenter.sh/v1 NodePools that select VM sizes by Karpenter on Azure's labels,
DaemonSets, pods) for the `azure` build of the judge (`karpenter_judge.run(...,
provider="azure")`), judged by the check through the same `karpenter_cases.pairs_from_graph`.

What is drawn: AKSNodeClasses (image family, OS disk size, maxPods: what changes the sizes'
allocatable and their `kubernetes.azure.com/os-sku`), NodePools shaped like ours (GPU count,
manufacturer) plus requirements (In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte) on
`karpenter.azure.com/sku-{gpu-count,gpu-name,family,series,version,name,cpu}`, the instance type,
`kubernetes.azure.com/mode`, capacity type (`reserved` now and then: Karpenter on Azure's
NodePools refuse it) and a key of their own; limits, taints (AKS's `sku=gpu`), weights; pods with
requests at and around a size's allocatable, selectors and affinity on those keys, tolerations.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from generated_cases import draw_distinct
from hypothesis import strategies as st
from karpenter_cases import AZURE_ZONE, NODEPOOL, POOL_LABEL, daemonset, graph

from components.check.readers.nap import aks_node_class_info
from components.model.nodes.azure_vms import AZURE_GPU_VMS, parse_vm_size
from components.model.nodes.shapes import Resources

NODECLASS = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
GPU_COUNT = "karpenter.azure.com/sku-gpu-count"
GPU_NAME = "karpenter.azure.com/sku-gpu-name"
GPU_MAKER = "karpenter.azure.com/sku-gpu-manufacturer"
FAMILY = "karpenter.azure.com/sku-family"
SERIES = "karpenter.azure.com/sku-series"
VERSION = "karpenter.azure.com/sku-version"
SKU_NAME = "karpenter.azure.com/sku-name"
SKU_CPU = "karpenter.azure.com/sku-cpu"
MODE = "kubernetes.azure.com/mode"
TYPE = "node.kubernetes.io/instance-type"
CAPACITY = "karpenter.sh/capacity-type"
SKU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
SIZES = sorted(AZURE_GPU_VMS)
_PARSED = {n: parse_vm_size(n) for n in SIZES}
_VALUES: dict[str, tuple[str, ...]] = {
    GPU_COUNT: ("0", "1", "2", "4", "8"),
    GPU_NAME: ("T4", "A10", "A100", "H100", "H200", "V100"),
    GPU_MAKER: ("nvidia", "amd"),
    FAMILY: ("N", "D"),
    SERIES: (*sorted({p.series for p in _PARSED.values() if p}), "Ds_v5"),
    VERSION: ("3", "4", "5"),
    SKU_NAME: (*SIZES[::3], "Standard_D4s_v5"),
    SKU_CPU: ("4", "8", "24", "40", "96"),
    TYPE: (*SIZES[1::4], "Standard_D4s_v5"),
    MODE: ("user", "system"),
    CAPACITY: ("on-demand", "spot", "spot", "reserved"),
    "example.com/team": ("a", "b", "c"),
}
_NUMERIC = (GPU_COUNT, SKU_CPU)
_KEYS = tuple(_VALUES)


def _requirement(rnd: random.Random, keys: Sequence[str] = _KEYS) -> dict[str, Any]:
    key = rnd.choice(keys)
    ops = (
        ("In", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Gt", "Lt", "Gte", "Lte")
        if key in _NUMERIC
        else ("In", "In", "In", "NotIn", "Exists", "DoesNotExist")
    )
    op = rnd.choice(ops)
    if op in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": op}
    if op in ("Gt", "Lt", "Gte", "Lte"):
        return {"key": key, "operator": op, "values": [str(rnd.choice((0, 0, 1, 2, 4, 7, 8, 40)))]}
    values = rnd.sample(_VALUES[key], min(len(_VALUES[key]), rnd.choice((1, 1, 2, 3))))
    return {"key": key, "operator": op, "values": sorted(set(values))}


def _node_class(rnd: random.Random, name: str) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rnd.random() < 0.5:
        spec["imageFamily"] = rnd.choice(("Ubuntu", "Ubuntu2204", "AzureLinux"))
    if rnd.random() < 0.6:
        spec["osDiskSizeGB"] = rnd.choice((64, 128, 256, 1024))
    if rnd.random() < 0.4:
        spec["maxPods"] = rnd.choice((30, 110, 250))
    return {"type": NODECLASS, "name": name, "inputs": {"metadata": {"name": name}, "spec": spec}}


_OURS = (
    [],
    [{"key": GPU_COUNT, "operator": "Gt", "values": ["0"]}],
    [
        {"key": GPU_MAKER, "operator": "In", "values": ["nvidia"]},
        {"key": GPU_COUNT, "operator": "Gt", "values": ["0"]},
    ],
)
_TAINTS = (
    [SKU_TAINT],
    [SKU_TAINT],
    [SKU_TAINT],
    [],
    [SKU_TAINT, {"key": "dedicated", "value": "llm", "effect": "NoSchedule"}],
    [{"key": "example.com/soft", "effect": "PreferNoSchedule"}],
)


def _node_pool(rnd: random.Random, name: str, node_class: str) -> dict[str, Any]:
    reqs = [*rnd.choice(_OURS)]
    reqs += [_requirement(rnd) for _ in range(rnd.choice((0, 1, 1, 1, 2, 2, 3)))]
    if rnd.random() < 0.06:  # a value Karpenter on Azure does not accept: never Ready
        reqs.append({"key": CAPACITY, "operator": "In", "values": ["reserved"]})
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {POOL_LABEL: name}},
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.azure.com",
                    "kind": "AKSNodeClass",
                    "name": node_class,
                },
                "requirements": reqs,
                "taints": rnd.choice(_TAINTS),
            },
        }
    }
    limits = {}
    if rnd.random() < 0.3:
        limits["nvidia.com/gpu"] = rnd.choice(("0", "1", "2", "4", "8", "16"))
    if rnd.random() < 0.15:
        limits["cpu"] = rnd.choice(("4", "8", "40", "96", "192"))
    if rnd.random() < 0.15:
        limits["memory"] = rnd.choice(("16Gi", "64Gi", "440Gi", "2000Gi"))
    if rnd.random() < 0.1:
        limits["nodes"] = rnd.choice(("0", "1", "3"))
    if limits:
        spec["limits"] = limits
    if rnd.random() < 0.25:
        spec["weight"] = rnd.randint(1, 100)
    return {"type": NODEPOOL, "name": name, "inputs": {"metadata": {"name": name}, "spec": spec}}


def _boundary(size: str, node_class: Mapping[str, Any]) -> Resources:
    """The allocatable Karpenter on Azure computes for this size under this AKSNodeClass."""
    info = aks_node_class_info(node_class["name"], node_class["inputs"]["spec"])
    (found,) = [it for it in info.instance_types() if it.name == size]
    assert found.allocatable is not None
    return found.allocatable


_TOLERATIONS = (
    [],
    [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
    [{"key": "sku", "operator": "Exists", "effect": "NoSchedule"}],
    [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    [
        {"key": "sku", "operator": "Exists"},
        {"key": "dedicated", "operator": "Equal", "value": "llm"},
    ],
    [{"operator": "Exists"}],
)


def _pod(rnd: random.Random, pools: Sequence[str], node_class: Mapping[str, Any]) -> dict[str, Any]:
    """Requests at or one unit around the allocatable of a catalog size (one resource at a time),
    selectors and affinity on the size keys, tolerations."""
    edge = _boundary(rnd.choice(SIZES), node_class)
    nudge = rnd.choice((-1, 0, 1))
    at_edge = rnd.choice(("cpu", "memory", "ephemeral-storage", None, None, None))
    requests: dict[str, Any] = {
        "cpu": f"{edge.cpu + nudge * 10}m"
        if at_edge == "cpu"
        else rnd.choice(("100m", "1", "4", "8", "30")),
        "memory": str(edge.memory + nudge * 2**20)
        if at_edge == "memory"
        else rnd.choice(("1Gi", "8Gi", "50Gi", "200Gi")),
    }
    if at_edge == "ephemeral-storage":
        requests["ephemeral-storage"] = str(edge.ephemeral_storage + nudge * 2**20)
    container: dict[str, Any] = {"name": "main", "resources": {"requests": requests}}
    gpus = rnd.choice((0, 1, 1, 1, 1, 2, 4, 8))
    if gpus:
        if rnd.random() < 0.5:
            requests["nvidia.com/gpu"] = gpus
        container["resources"]["limits"] = {"nvidia.com/gpu": gpus}
    spec: dict[str, Any] = {"containers": [container]}
    selector: dict[str, str] = {}
    if rnd.random() < 0.75:
        selector[POOL_LABEL] = rnd.choice((*pools, *pools, "elsewhere"))
    if rnd.random() < 0.3:
        key = rnd.choice((GPU_COUNT, GPU_NAME, CAPACITY, TYPE, SERIES, MODE, "example.com/team"))
        selector[key] = rnd.choice(_VALUES[key])
    if rnd.random() < 0.05:
        selector["topology.kubernetes.io/zone"] = AZURE_ZONE
    if selector:
        spec["nodeSelector"] = selector
    affinity: dict[str, Any] = {}
    if rnd.random() < 0.3:
        terms = [
            [_requirement(rnd) for _ in range(rnd.randint(1, 2))] for _ in range(rnd.randint(1, 2))
        ]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
        }
    if rnd.random() < 0.2:
        weights = rnd.sample(range(1, 101), rnd.randint(1, 2))
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "preference": {"matchExpressions": [_requirement(rnd)]}} for w in weights
        ]
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    tolerations = rnd.choice(_TOLERATIONS)
    if tolerations:
        spec["tolerations"] = tolerations
    return spec


def _daemonset(rnd: random.Random, index: int, pools: Sequence[str]) -> dict[str, Any]:
    return daemonset(
        rnd,
        index,
        pools,
        cpus=("10m", "100m", "500m", "2"),
        memories=("64Mi", "512Mi", "2Gi"),
        tolerations=_TOLERATIONS,
        selectors=(GPU_NAME, GPU_COUNT),
        values=_VALUES,
    )


@st.composite
def case(draw: Any) -> list[dict[str, Any]]:
    """One graph (`karpenter_cases.graph`): one or two AKSNodeClasses, one or two NodePools, one
    to three pods."""
    return graph(draw(st.randoms(use_true_random=True)), _node_class, _node_pool, _pod, _daemonset)


def draw_cases(count: int, seed: int) -> list[list[dict[str, Any]]]:
    """`count` distinct NAP cases, the same ones for the same seed."""
    return draw_distinct(case(), count, seed)
