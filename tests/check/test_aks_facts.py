"""The AKS facts a source audit found wrong, each held to its upstream source: a pool without
driver (GI062), ExtendedResourceToleration, AKS's reserved node labels, node memory from the
measured nodes (GI063), and NAP's spot taint. The config-time refusals (ephemeral OS disk,
spot price decimals, immutable fields) are in tests/pools/test_aks.py."""

from __future__ import annotations

from typing import Any

import pytest

from components.check import check
from components.model.nodes.aks_shapes import (
    AKS_MEASURED_MEMTOTAL,
    MEMTOTAL_RANGE,
    aks_memory_capacity,
    aks_memory_uncertainty,
    aks_node_shape,
)
from components.model.nodes.azure_vms import azure_vm
from components.model.nodes.shapes import Gi, Ki, Mi
from tests.check.scale_graphs import deployment, pod, req
from tests.check.test_aks_check import (
    NVIDIA,
    PLUGIN_TOLERATIONS,
    TOL_SKU,
    agent_pool,
    aks_node_class,
    nap_nodepool,
    plugin,
)

WEB = "Deployment/model"
GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"


def gpu_operator() -> dict[str, Any]:
    return {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "gpu-operator",
        "inputs": {"chart": "gpu-operator", "namespace": "gpu-operator", "values": {}},
    }


def codes(graph: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(f.code, f.severity, f.resource) for f in check(graph).findings]


def nap_a100(mode: str) -> list[dict[str, Any]]:
    size = req("karpenter.azure.com/sku-name", "In", "Standard_NC24ads_A100_v4")
    return [
        nap_nodepool("a100", [NVIDIA, size]),
        aks_node_class("a100", gpu={"mode": mode}),
    ]


AKS_PAIRS = [
    # use-nvidia-gpu.md "Skip GPU driver installation": driver None installs no driver and no
    # device plugin, so nothing advertises nvidia.com/gpu on the pool's nodes.
    pytest.param(
        "GI062",
        [
            agent_pool("a100", driver="None"),
            deployment("model", pod("a100", tolerations=[TOL_SKU])),
        ],
        [
            agent_pool("a100", driver="Install"),
            plugin(),
            deployment("model", pod("a100", tolerations=[TOL_SKU])),
        ],
        id="GI062-agent-pool-driver-none",
    ),
    # 214 GiB fits a 220 GiB A100 node only if its MemTotal is at the top of the measured range.
    pytest.param(
        "GI063",
        [
            agent_pool("a100"),
            plugin(),
            deployment("model", pod("a100", memory="214Gi", tolerations=[TOL_SKU])),
        ],
        [
            agent_pool("a100"),
            plugin(),
            deployment("model", pod("a100", memory="208Gi", tolerations=[TOL_SKU])),
        ],
        id="GI063-memory-fits-only-the-top-of-the-range",
    ),
]


@pytest.mark.parametrize("code,bad,good", AKS_PAIRS)
def test_each_mistake_is_caught_and_its_twin_is_clean(code, bad, good):
    assert code in {c for c, *_ in codes(bad)}
    assert code not in {c for c, *_ in codes(good)}
    assert check(good).ok, [str(f) for f in check(good).findings]


# -- 1. No driver ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "graph,expected",
    [
        # agent pool, nothing installs a driver: the pod stays Pending
        (
            [
                agent_pool("a100", driver="None"),
                deployment("model", pod("a100", tolerations=[TOL_SKU])),
            ],
            [("GI062", "error", "AgentPool/a100")],
        ),
        # the graph's GPU Operator may serve it: its DaemonSets' tolerations are not read
        (
            [
                agent_pool("a100", driver="None"),
                gpu_operator(),
                deployment("model", pod("a100", tolerations=[TOL_SKU])),
            ],
            [("GI062", "warning", "AgentPool/a100")],
        ),
        # NAP: the AKSNodeClass's gpu.mode None is the same (aksbootstrap.go enables no plugin)
        (
            [*nap_a100("None"), deployment("model", pod("a100", tolerations=[TOL_SKU]))],
            [("GI062", "error", "NodePool/a100")],
        ),
        (
            [
                *nap_a100("Driver"),
                plugin(),
                deployment("model", pod("a100", tolerations=[TOL_SKU])),
            ],
            [],
        ),
        # a pod without GPUs on such a pool needs no driver
        (
            [
                agent_pool("a100", driver="None"),
                deployment("model", pod("a100", gpus=0, tolerations=[TOL_SKU])),
            ],
            [],
        ),
    ],
)
def test_a_pool_without_driver_is_judged_by_gi062(graph, expected):
    assert [c for c in codes(graph) if c[0] in ("GI062", "GI007", "GI012")] == expected


def test_gi062_says_why_and_how():
    found = check(
        [agent_pool("a100", driver="None"), deployment("model", pod("a100", tolerations=[TOL_SKU]))]
    ).findings
    (f,) = [f for f in found if f.code == "GI062"]
    assert f.message == (
        "GPU pool a100 gets no NVIDIA driver or device plugin from AKS (gpuProfile.driver None) "
        "and the graph installs none: its nodes never advertise nvidia.com/gpu, so "
        "Deployment/model stay Pending"
    )
    assert f.fix == (
        "gpuDriver: Install (AKS installs the driver, the stack's NVIDIA device plugin serves "
        "the pool), or install the NVIDIA GPU Operator (chart gpu-operator)"
    )


def test_an_unset_gpu_profile_is_aks_default_install():
    """pulumi-azure-native 3.29.0 GPUProfileArgs.driver: "When it's not specified, default is
    Install": such a pool needs the graph's device plugin, not GI062."""
    pool = agent_pool("a100")
    del pool["inputs"]["gpuProfile"]
    gpu_pod = pod("a100", tolerations=[TOL_SKU])
    report = check([pool, plugin(PLUGIN_TOLERATIONS[:2]), deployment("model", gpu_pod)])
    # judged by the device plugin rules: the graph's plugin does not tolerate sku=gpu
    assert [f.code for f in report.findings if f.code in ("GI007", "GI062")] == ["GI007"]


# -- 2. ExtendedResourceToleration ---------------------------------------------------------


def test_aks_runs_extended_resource_toleration():
    """AKS FAQ (faq.yml @61a5e579): ExtendedResourceToleration is among AKS's admission
    controllers, which cannot be changed. A GPU pod lands on a pool tainted nvidia.com/gpu
    without tolerating it itself: no GI001."""
    graph = [
        agent_pool("a100", taints=[GPU_TAINT]),
        plugin(),
        deployment("model", pod("a100", tolerations=[])),
    ]
    report = check(graph)
    assert report.extended_resource_toleration
    assert report.ok and "GI001" not in {f.code for f in report.findings}
    assert report.workloads[0].pools == ("a100",)


# -- 4. Node labels ------------------------------------------------------------------------

# use-labels.md @07fd2900, reserved system labels; cluster-autoscaler-1.36.1 azure_template.go
# buildGenericLabels (arch cloudprovider.DefaultArch, os the scale set's).
RESERVED = [
    ("kubernetes.io/os", "linux"),
    ("kubernetes.io/arch", "amd64"),
    ("kubernetes.azure.com/role", "agent"),
    ("kubernetes.azure.com/os-sku", "Ubuntu"),
    ("kubernetes.azure.com/mode", "user"),
]


@pytest.mark.parametrize("key,value", RESERVED)
def test_a_pod_selecting_an_aks_system_label_lands(key, value):
    graph = [
        agent_pool("a100"),
        plugin(),
        deployment("model", pod("a100", selector={key: value}, tolerations=[TOL_SKU])),
    ]
    report = check(graph)
    assert report.ok and "GI001" not in {f.code for f in report.findings}
    assert report.workloads[0].pools == ("a100",)
    assert report.pools[0].labels[key] == value


def test_the_os_sku_label_is_the_pools():
    pool = agent_pool("a100")
    pool["inputs"]["osSku"] = "AzureLinux"
    assert check([pool]).pools[0].labels["kubernetes.azure.com/os-sku"] == "AzureLinux"


def test_only_a_spot_pool_has_the_spot_priority_label():
    """spot-node-pool.md: a spot pool has `kubernetes.azure.com/scalesetpriority: spot`; a regular
    pool has none ("regular" is never written by AKS as a label: karpenter-provider-azure
    v1.14.2 `pkg/apis/v1beta1/labels.go`)."""
    spot = check([agent_pool("t4", "Standard_NC8as_T4_v3", spot=True)]).pools[0].labels
    regular = check([agent_pool("t4", "Standard_NC8as_T4_v3")]).pools[0].labels
    assert spot["kubernetes.azure.com/scalesetpriority"] == "spot"
    assert "kubernetes.azure.com/scalesetpriority" not in regular


# -- 5. Node memory ----------------------------------------------------------------------------


def test_the_memory_range_is_the_measured_nodes():
    """Each measured node's MemTotal against its VM size's memory: the range is their least and
    most (1.69% and 3.29% below), and the A100 node, the top, is reproduced to the KiB."""
    ratios = [ki / (gib * 1024 * 1024) for _, gib, ki in AKS_MEASURED_MEMTOTAL]
    assert (round(1 - max(ratios), 4), round(1 - min(ratios), 4)) == (0.0169, 0.0329)
    assert [float(r) for r in MEMTOTAL_RANGE] == [min(ratios), max(ratios)]
    a100 = azure_vm("Standard_NC24ads_A100_v4")
    assert aks_memory_capacity(a100) == 226783616 * Ki


def test_the_a100_node_allocatable_is_the_1_29_rule_on_its_memtotal():
    """226783616Ki less min(20 MiB x 30 + 50 MiB, 25%) and the 100 Mi eviction threshold."""
    shape = aks_node_shape("Standard_NC24ads_A100_v4", max_pods=30)
    assert shape.allocatable.memory == 226783616 * Ki - 650 * Mi - 100 * Mi
    assert round(shape.allocatable.memory / Gi, 2) == 215.55
    low = shape.allocatable.memory - aks_memory_uncertainty(azure_vm("Standard_NC24ads_A100_v4"))
    assert round(low / Gi, 2) == 212.02


@pytest.mark.parametrize(
    "memory,expected",
    [
        ("208Gi", []),  # fits the whole range (was a false GI021 at Karpenter's 7.5% estimate)
        ("214Gi", [("GI063", "warning", WEB)]),  # fits the top only: not judged
        ("216Gi", [("GI021", "error", WEB)]),  # fits nowhere in the range
    ],
)
def test_memory_is_judged_on_the_measured_range(memory, expected):
    graph = [
        agent_pool("a100"),
        plugin(),
        deployment("model", pod("a100", memory=memory, tolerations=[TOL_SKU])),
    ]
    assert [c for c in codes(graph) if c[0] in ("GI021", "GI063")] == expected


def test_gi063_names_the_range():
    graph = [
        agent_pool("a100"),
        plugin(),
        deployment("model", pod("a100", memory="214Gi", tolerations=[TOL_SKU])),
    ]
    (f,) = [f for f in check(graph).findings if f.code == "GI063"]
    assert f.message == (
        "its pods ask 214.00 GiB of memory; a node of pool a100 holds them only if its memory "
        "is near the top of what AKS nodes report: Standard_NC24ads_A100_v4 leaves "
        "212.02-215.55 GiB of memory (MemTotal 1.69-3.29% below the VM size's 220 GiB on "
        "measured AKS nodes, 216.28 GiB at best). Not judged"
    )
    assert (
        f.fix
        == "ask at most 212.02 GiB of memory (the bottom of the range), or use a larger VM size"
    )


def test_nap_keeps_karpenters_estimate():
    """Karpenter on Azure decides by its own 7.5% estimate: a pod it holds too large is GI021
    on NAP, whatever the measured range, and GI063 never judges NAP."""
    graph = [
        *nap_a100("Driver"),
        plugin(),
        deployment("model", pod("a100", memory="208Gi", tolerations=[TOL_SKU])),
    ]
    (f,) = [f for f in check(graph).findings if f.code in ("GI021", "GI063")]
    assert (f.code, f.severity) == ("GI021", "error")
    assert "the largest allocatable is 191.61Gi (Standard_NC24ads_A100_v4, pool a100)" in f.message
