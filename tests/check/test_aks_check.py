"""The placement check on hand-written AKS graphs: agent pools (`azure-native:containerservice:
AgentPool`) and node auto-provisioning NodePools (Karpenter on Azure), as a plain Pulumi program
registers them. Each mistake is caught, and its corrected twin is clean."""

from __future__ import annotations

from typing import Any

import pytest

from components.check import check
from tests.check.scale_graphs import deployment, pod, req

AGENT_POOL = "azure-native:containerservice:AgentPool"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
AKSNODECLASS = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"
POOL = "gpu-inference.dev/pool"
CA = "k8s.io_cluster-autoscaler_node-template_"
TOL_SKU = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
TOL_SPOT = {
    "key": "kubernetes.azure.com/scalesetpriority",
    "operator": "Equal",
    "value": "spot",
    "effect": "NoSchedule",
}
PLUGIN_TOLERATIONS = [
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "sku", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Exists", "effect": "NoSchedule"},
]


def agent_pool(
    name: str,
    vm_size: str = "Standard_NC24ads_A100_v4",
    *,
    spot: bool = False,
    min_count: int = 0,
    taints: list[str] | None = None,
    tags: bool = True,
    driver: str = "Install",
    max_pods: int | None = 30,
    os_disk: int = 128,
) -> dict[str, Any]:
    labels = {POOL: name}
    node_taints = ["sku=gpu:NoSchedule"] if taints is None else taints
    inputs: dict[str, Any] = {
        "resourceGroupName": "rg",
        "resourceName": "aks",
        "agentPoolName": name.replace("-", ""),
        "mode": "User",
        "vmSize": vm_size,
        "enableAutoScaling": True,
        "minCount": min_count,
        "maxCount": 3,
        "nodeLabels": labels,
        "nodeTaints": node_taints,
        "gpuProfile": {"driver": driver},
        "osDiskSizeGB": os_disk,
    }
    if max_pods is not None:
        inputs["maxPods"] = max_pods
    if spot:
        inputs["scaleSetPriority"] = "Spot"
    if tags:
        inputs["tags"] = {f"{CA}label_gpu-inference.dev_pool": name} | {
            f"{CA}taint_{t.split('=')[0].replace('/', '_')}": t.split("=", 1)[1]
            for t in [
                *node_taints,
                *(["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"] if spot else []),
            ]
        }
    return {"type": AGENT_POOL, "name": name, "inputs": inputs}


def plugin(tolerations: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "nvidia-device-plugin",
        "inputs": {
            "chart": "nvidia-device-plugin",
            "namespace": "kube-system",
            "values": {"tolerations": PLUGIN_TOLERATIONS if tolerations is None else tolerations},
        },
    }


def nap_nodepool(name: str, requirements: list[dict], *, limits: dict | None = None) -> dict:
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {POOL: name}},
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.azure.com",
                    "kind": "AKSNodeClass",
                    "name": name,
                },
                "requirements": requirements,
                "taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
            },
        },
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
        "limits": limits or {"nodes": "2"},
    }
    return {"type": NODEPOOL, "name": name, "inputs": {"metadata": {"name": name}, "spec": spec}}


def aks_node_class(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "type": AKSNODECLASS,
        "name": f"{name}-nodeclass",
        "inputs": {"metadata": {"name": name}, "spec": {"osDiskSizeGB": 128, **spec}},
    }


def findings(graph: list[dict]) -> set[tuple[str, str]]:
    return {(f.code, f.resource) for f in check(graph).findings}


WEB = "Deployment/model"
GPU = "nvidia.com/gpu"
NVIDIA = req("karpenter.azure.com/sku-gpu-manufacturer", "In", "nvidia")

PAIRS = [
    pytest.param(
        # the AKS GPU taint is not nvidia.com/gpu: a pod tolerating only that stays off the pool
        [agent_pool("a100"), plugin(), deployment("model", pod("a100"))],
        [agent_pool("a100"), plugin(), deployment("model", pod("a100", tolerations=[TOL_SKU]))],
        {("GI001", WEB)},
        id="untolerated-sku-gpu-taint",
    ),
    pytest.param(
        [
            agent_pool("a100"),
            plugin(),
            deployment("model", pod("a100", gpus=2, tolerations=[TOL_SKU])),
        ],
        [
            agent_pool("a100"),
            plugin(),
            deployment("model", pod("a100", gpus=1, tolerations=[TOL_SKU])),
        ],
        {("GI004", WEB)},
        id="gpus-beyond-the-vm-size",
    ),
    pytest.param(
        [
            agent_pool("t4-spot", "Standard_NC8as_T4_v3", spot=True),
            plugin(),
            deployment("model", pod("t4-spot", tolerations=[TOL_SKU])),
        ],
        [
            agent_pool("t4-spot", "Standard_NC8as_T4_v3", spot=True),
            plugin(),
            deployment("model", pod("t4-spot", tolerations=[TOL_SKU, TOL_SPOT])),
        ],
        {("GI001", WEB)},
        id="spot-taint-not-tolerated",
    ),
    pytest.param(
        # AKS adds the spot taint even when the pool's nodeTaints leave it out
        [
            agent_pool("t4-spot", "Standard_NC8as_T4_v3", spot=True, taints=["sku=gpu:NoSchedule"]),
            plugin(),
            deployment("model", pod("t4-spot", tolerations=[TOL_SKU])),
        ],
        [
            agent_pool("t4-spot", "Standard_NC8as_T4_v3", spot=True, taints=["sku=gpu:NoSchedule"]),
            plugin(),
            deployment("model", pod("t4-spot", tolerations=[TOL_SKU, TOL_SPOT])),
        ],
        {("GI001", WEB)},
        id="spot-taint-aks-adds",
    ),
    pytest.param(
        [
            agent_pool("a100"),
            plugin(PLUGIN_TOLERATIONS[:2]),
            deployment("model", pod("a100", tolerations=[TOL_SKU])),
        ],
        [agent_pool("a100"), plugin(), deployment("model", pod("a100", tolerations=[TOL_SKU]))],
        {("GI007", "AgentPool/a100")},
        id="device-plugin-does-not-tolerate-sku-gpu",
    ),
    pytest.param(
        [
            agent_pool("a100", tags=False),
            plugin(),
            deployment("model", pod("a100", tolerations=[TOL_SKU])),
        ],
        [agent_pool("a100"), plugin(), deployment("model", pod("a100", tolerations=[TOL_SKU]))],
        {("GI016", "AgentPool/a100")},
        id="no-node-template-tags-at-zero",
    ),
    pytest.param(
        # 219 GiB on a 220 GiB VM: more than AKS's reservations leave allocatable
        [
            agent_pool("a100"),
            plugin(),
            deployment("model", pod("a100", memory="219Gi", tolerations=[TOL_SKU])),
        ],
        [
            agent_pool("a100"),
            plugin(),
            deployment("model", pod("a100", memory="150Gi", tolerations=[TOL_SKU])),
        ],
        {("GI021", WEB)},
        id="memory-beyond-allocatable",
    ),
    pytest.param(
        # NAP: only 2-GPU sizes are admitted, and the pool may hold 1 GPU in all
        [
            nap_nodepool(
                "h100",
                [NVIDIA, req("karpenter.azure.com/sku-gpu-count", "Gt", "1")],
                limits={"nodes": "2", GPU: "1"},
            ),
            aks_node_class("h100"),
            plugin(),
            deployment("model", pod("h100", tolerations=[TOL_SKU])),
        ],
        [
            nap_nodepool(
                "h100",
                [NVIDIA, req("karpenter.azure.com/sku-gpu-count", "Gt", "1")],
                limits={"nodes": "2", GPU: "16"},
            ),
            aks_node_class("h100"),
            plugin(),
            deployment("model", pod("h100", tolerations=[TOL_SKU])),
        ],
        {("GI026", WEB)},
        id="nap-limits-below-every-size",
    ),
    pytest.param(
        # Karpenter on Azure takes no reserved capacity: the NodePool is never Ready
        [
            nap_nodepool("a100", [NVIDIA, req("karpenter.sh/capacity-type", "In", "reserved")]),
            aks_node_class("a100"),
            plugin(),
            deployment("model", pod("a100", tolerations=[TOL_SKU])),
        ],
        [
            nap_nodepool("a100", [NVIDIA, req("karpenter.sh/capacity-type", "In", "on-demand")]),
            aks_node_class("a100"),
            plugin(),
            deployment("model", pod("a100", tolerations=[TOL_SKU])),
        ],
        {("GI026", WEB)},
        id="nap-reserved-capacity",
    ),
    pytest.param(
        # a restricted label (karpenter.azure.com, not well-known) keeps Karpenter off the pod
        [
            nap_nodepool("a100", [NVIDIA]),
            aks_node_class("a100"),
            plugin(),
            deployment(
                "model",
                pod(
                    "a100",
                    selector={"karpenter.azure.com/sku-gpu-model": "A100"},
                    tolerations=[TOL_SKU],
                ),
            ),
        ],
        [
            nap_nodepool("a100", [NVIDIA]),
            aks_node_class("a100"),
            plugin(),
            deployment(
                "model",
                pod(
                    "a100",
                    selector={"karpenter.azure.com/sku-gpu-name": "A100"},
                    tolerations=[TOL_SKU],
                ),
            ),
        ],
        {("GI001", WEB)},
        id="nap-unknown-azure-label",
    ),
]


def pinned(operator: str) -> dict[str, Any]:
    """A pod for the a100 pool that also pins a node by name (`matchFields` metadata.name)."""
    spec = pod("a100", tolerations=[TOL_SKU])
    term = {"matchFields": [{"key": "metadata.name", "operator": operator, "values": ["node-0-0"]}]}
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }
    return spec


PAIRS.append(
    # The scheduler differential's AKS cases (seed 715608022): an agent pool's nodes are named by
    # AKS when they boot, so no pod pinned to a name the graph does not hold lands on one.
    pytest.param(
        [agent_pool("a100"), plugin(), deployment("model", pinned("In"))],
        [agent_pool("a100"), plugin(), deployment("model", pinned("NotIn"))],
        {("GI001", WEB)},
        id="pinned-to-a-node-name-the-pool-never-has",
    )
)


@pytest.mark.parametrize("bad,good,expected", PAIRS)
def test_each_mistake_is_caught_and_its_twin_is_clean(bad, good, expected):
    got = findings(bad)
    assert expected <= got, got
    assert not {(c, r) for c, r in findings(good) if c in {e[0] for e in expected}}
    assert check(good).ok, [str(f) for f in check(good).findings]


def test_agent_pool_as_the_check_sees_it():
    report = check([agent_pool("t4-spot", "Standard_NC8as_T4_v3", spot=True, max_pods=None)])
    pool = report.pools[0]
    assert pool.provider == "aks"
    assert (pool.gpus_per_node, pool.accelerator, pool.spot) == (1, "T4", True)
    assert pool.labels == {
        POOL: "t4-spot",
        "kubernetes.azure.com/agentpool": "t4spot",
        "agentpool": "t4spot",
        "kubernetes.azure.com/mode": "user",
        "kubernetes.azure.com/role": "agent",
        "kubernetes.azure.com/os-sku": "Ubuntu",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "Standard_NC8as_T4_v3",
        "kubernetes.azure.com/accelerator": "nvidia",
        "accelerator": "nvidia",
        "kubernetes.azure.com/scalesetpriority": "spot",
    }
    assert [str(t) for t in pool.taints] == [
        "kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
        "sku=gpu:NoSchedule",
    ]
    shape = pool.nodes[0].shape
    assert shape is not None and shape.kind == "aks" and shape.allocatable.pods == 30
    assert report.extended_resource_toleration  # AKS runs the plugin (AKS FAQ, faq.yml)


def test_driver_none_leaves_the_device_plugin_to_the_gpu_operator():
    """AKS brings no plugin there; the device plugin rules stay off the pool (GI062 judges it:
    test_aks_facts), so no GI012 for the graph's lack of an nvidia-device-plugin release."""
    operator = {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "gpu-operator",
        "inputs": {"chart": "gpu-operator", "namespace": "gpu-operator", "values": {}},
    }
    report = check(
        [
            agent_pool("a100", driver="None"),
            operator,
            deployment("model", pod("a100", tolerations=[TOL_SKU])),
        ]
    )
    assert not report.pools[0].builtin_device_plugin
    assert report.ok
    assert [f.code for f in report.findings if f.code in ("GI007", "GI012", "GI062")] == ["GI062"]


def test_an_h100_pool_at_zero_selected_by_the_accelerator_label_is_flagged():
    """cluster-autoscaler-1.36.1 predicts `kubernetes.azure.com/accelerator` only for the NVIDIA
    sizes of its list, which lacks the H100 ones: a pod selecting it on a pool at zero never
    scales it up (unless the pool tags the label)."""
    selector = {"kubernetes.azure.com/accelerator": "nvidia"}
    graph = [
        agent_pool("h100", "Standard_NC40ads_H100_v5"),
        plugin(),
        deployment("model", pod(None, selector=selector, tolerations=[TOL_SKU])),
    ]
    got = [f for f in check(graph).findings if f.code == "GI016"]
    assert got and "label kubernetes.azure.com/accelerator=nvidia" in got[0].message
    a100 = [
        agent_pool("a100"),
        plugin(),
        deployment("model", pod(None, selector=selector, tolerations=[TOL_SKU])),
    ]
    assert not [f for f in check(a100).findings if f.code == "GI016"]


def test_nap_pool_as_the_check_sees_it():
    graph = [
        nap_nodepool(
            "a100",
            [
                NVIDIA,
                req("karpenter.azure.com/sku-gpu-name", "In", "A100"),
                req("karpenter.sh/capacity-type", "In", "spot"),
            ],
        ),
        aks_node_class("a100", imageFamily="AzureLinux"),
    ]
    pool = check(graph).pools[0]
    assert (pool.provider, pool.gpus_per_node, pool.accelerator, pool.spot) == (
        "aks",
        8,
        "A100",
        True,
    )
    types = sorted({n.labels["node.kubernetes.io/instance-type"] for n in pool.nodes})
    # ND96asr_v4 has A100s, but its name names none: Karpenter gives it no sku-gpu-name label.
    assert types == [
        "Standard_NC24ads_A100_v4",
        "Standard_NC48ads_A100_v4",
        "Standard_NC96ads_A100_v4",
        "Standard_ND96amsr_A100_v4",
    ]
    assert all(n.labels["kubernetes.azure.com/scalesetpriority"] == "spot" for n in pool.nodes)
    assert all(n.labels["kubernetes.azure.com/os-sku"] == "AzureLinux" for n in pool.nodes)
    assert {n.shape.kind for n in pool.nodes if n.shape} == {"nap"}


def test_a_time_sliced_agent_pool_at_zero_needs_the_gpu_resources_tag():
    """cluster-autoscaler-1.36.1 `buildNodeFromTemplate` gives the template node the VM size's
    GPUs unless a `..._resources_nvidia.com_gpu` tag says otherwise
    (`extractAllocatableResourcesFromScaleSet`): a pool whose device plugin time-slices (GPUs x
    replicas) needs it, one that does not is clean without it."""
    sliced_plugin = plugin()
    sliced_plugin["inputs"]["values"]["config"] = {
        "default": "sliced",
        "map": {
            "sliced": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
            "    - name: nvidia.com/gpu\n      replicas: 4\n"
        },
    }
    workload = deployment("model", pod("a100", tolerations=[TOL_SKU]))
    assert "GI016" not in {f.code for f in check([agent_pool("a100"), plugin(), workload]).findings}
    (found,) = [
        f
        for f in check([agent_pool("a100"), sliced_plugin, workload]).findings
        if f.code == "GI016"
    ]
    assert "resource nvidia.com/gpu=4" in found.message
    tagged = agent_pool("a100")
    tagged["inputs"]["tags"][f"{CA}resources_nvidia.com_gpu"] = "4"
    assert "GI016" not in {f.code for f in check([tagged, sliced_plugin, workload]).findings}


@pytest.mark.parametrize(("team", "lands"), [("a", True), ("d", False)])
def test_a_pod_lands_on_the_size_karpenter_launches_for_its_other_term(team: str, lands: bool):
    """Found by the Karpenter differential (seed 713913125, AKS case 163): the pod's first
    required term (`sku-gpu-count In [0, 4]`) lets it onto the NodePool's 4-GPU templates, too
    small for its 8 GPUs; its second (`example.com/team In [a, b, c]`, and an 8-GPU size) only
    a launched node meets, Karpenter giving it a team the NodePool allows. Karpenter on Azure
    launches Standard_ND96isr_H200_v5 for it, and it runs there: no GI004. A team the NodePool
    does not allow keeps it off: GI004 stands."""
    graph = [
        aks_node_class("np0", imageFamily="Ubuntu2204"),
        nap_nodepool(
            "np0",
            [
                req("karpenter.azure.com/sku-gpu-count", "Gt", "0"),
                req("example.com/team", "In", "a", "b", "c"),
            ],
        ),
    ]
    spec = pod("np0", gpus=8, memory="50Gi", tolerations=[TOL_SKU])
    terms = [
        {"matchExpressions": [req("karpenter.azure.com/sku-gpu-count", "In", "0", "4")]},
        {
            "matchExpressions": [
                req("example.com/team", "In", team),
                req("karpenter.azure.com/sku-name", "In", "Standard_ND96isr_H200_v5"),
            ]
        },
    ]
    spec["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }
    report = check([*graph, deployment("w0", spec)])
    (w,) = report.workloads
    assert w.pools == (("np0",) if lands else ())
    assert [(f.code, f.resource) for f in report.errors] == (
        [] if lands else [("GI004", "Deployment/w0")]
    )
