"""DaemonSet overhead: the DaemonSet pods a node runs, each provider's own from
its cited source, the graph's read from their tolerations, selectors and affinity, counted against
cpu, memory and pods for fit (GI021) and for Karpenter's scale-up (GI026)."""

from __future__ import annotations

from typing import Any

import pytest
from scale_graphs import TOL_GPU, deployment, nodeclass, nodepool, pod, req
from test_placement_check import device_plugin, workload

from components.check import check
from components.check.readers.daemonsets import graph_daemons
from components.model.autoscalers.karpenter_launch import (
    NodeClassInfo,
    NodePoolSpec,
    catalog_instance_types,
    daemon_overheads,
)
from components.model.nodes.daemonsets import (
    AWS_NODE,
    GKE_GPU_DEVICE_PLUGIN,
    KUBE_PROXY,
    DaemonPod,
    daemon_overhead,
    system_daemons,
)
from components.model.nodes.shapes import Mi, Resources, karpenter_node_shape
from components.model.scheduling import Placement, Taint, Toleration

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


# ---------------------------------------------------------------------------------------------
# The providers' own DaemonSets, each as its source states it
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("daemon", "requests", "source"),
    [
        # cluster-autoscaler-1.36.1 cloudprovider/utils.go: KubeProxyCpuRequestMillis = 100
        (KUBE_PROXY, Resources(cpu=100, pods=1), "KubeProxyCpuRequestMillis 100"),
        # amazon-vpc-cni-k8s v1.23.0 charts/aws-vpc-cni/values.yaml: resources.requests.cpu 25m
        (AWS_NODE, Resources(cpu=25, pods=1), "resources.requests.cpu 25m"),
        # kubernetes cluster/addons/device-plugins/nvidia-gpu/daemonset.yaml: 50m / 10Mi
        (GKE_GPU_DEVICE_PLUGIN, Resources(cpu=50, memory=10 * Mi, pods=1), "50m / 10Mi"),
    ],
)
def test_system_daemonsets_ask_what_their_source_says(
    daemon: DaemonPod, requests: Resources, source: str
):
    assert daemon.requests == requests
    assert source in daemon.source


@pytest.mark.parametrize(
    ("kind", "names"),
    [
        ("eks", ["kube-proxy", "aws-node"]),
        ("gke", ["kube-proxy"]),
        ("gke-gpu", ["kube-proxy", "nvidia-gpu-device-plugin"]),
        ("none", []),
    ],
)
def test_each_kind_of_node_runs_its_providers_daemonsets(kind: str, names: list[str]):
    assert [d.name for d in system_daemons(kind)] == names


@pytest.mark.parametrize(
    ("labels", "taints", "runs"),
    [
        ({}, (GPU_TAINT, Taint("dedicated", "llm", "NoExecute")), True),  # tolerates every taint
        ({"eks.amazonaws.com/compute-type": "auto"}, (), False),  # NotIn fargate, hybrid, auto
        ({"eks.amazonaws.com/compute-type": "ec2"}, (), True),
    ],
)
def test_aws_node_runs_on_every_eks_node_but_auto_mode_ones(
    labels: dict, taints: tuple, runs: bool
):
    assert AWS_NODE.runs_on(labels, taints) is runs


def test_gke_device_plugin_runs_only_on_gpu_nodes():
    assert GKE_GPU_DEVICE_PLUGIN.runs_on({"cloud.google.com/gke-accelerator": "nvidia-l4"}, ())
    assert not GKE_GPU_DEVICE_PLUGIN.runs_on({}, ())


def test_the_daemonset_controllers_own_tolerations_let_its_pods_onto_a_cordoned_node():
    """`AddOrUpdateDaemonPodTolerations`: unschedulable, not-ready, ... are tolerated."""
    bare = DaemonPod("d", Resources(pods=1), Placement(), "test")
    assert bare.runs_on({}, (Taint("node.kubernetes.io/unschedulable", "", "NoSchedule"),))
    assert not bare.runs_on({}, (GPU_TAINT,))


# ---------------------------------------------------------------------------------------------
# What a node runs: in order, each holding room while it fits
# ---------------------------------------------------------------------------------------------


def test_overhead_sums_the_daemonsets_that_run_and_counts_their_pods():
    over = daemon_overhead((KUBE_PROXY, AWS_NODE), {}, ())
    assert over.total == Resources(cpu=125, pods=2)
    assert over.describe("cpu") == "kube-proxy 100m, aws-node 25m"
    assert [d.source for d in over.pods] == [KUBE_PROXY.source, AWS_NODE.source]


def test_a_daemonset_that_does_not_fit_what_the_ones_before_it_left_is_pending():
    big = DaemonPod("big", Resources(cpu=901, pods=1), Placement(tolerations=()), "test")
    small = DaemonPod("small", Resources(cpu=50, pods=1), Placement(), "test")
    over = daemon_overhead((KUBE_PROXY, big, small), {}, (), Resources(cpu=1000, pods=110))
    assert [d.name for d in over.pods] == ["kube-proxy", "small"]
    assert [d.name for d in over.pending] == ["big"]
    assert over.total == Resources(cpu=150, pods=2)


# ---------------------------------------------------------------------------------------------
# The graph's DaemonSets
# ---------------------------------------------------------------------------------------------


def _ds(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return workload(name, spec, kind="DaemonSet")


def test_a_graph_daemonset_is_read_as_kube_scheduler_sums_its_pod():
    spec = {
        "tolerations": [TOL_GPU],
        "nodeSelector": {"tier": "gpu"},
        "containers": [
            {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
            {"name": "b", "resources": {"limits": {"cpu": "50m"}}},  # the limit is the request
        ],
        "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "1"}}}],
    }
    (d,) = graph_daemons([_ds("agent", spec)])
    assert d.name == "DaemonSet/agent"
    assert d.requests == Resources(cpu=1000, memory=64 * Mi, pods=1)
    assert d.runs_on({"tier": "gpu"}, (GPU_TAINT,))
    assert not d.runs_on({"tier": "cpu"}, ())


def test_the_device_plugin_chart_renders_its_daemonsets_from_values_and_chart_defaults():
    """nvidia-device-plugin 0.17.1: the plugin always, GFD with gfd.enabled, the NFD worker with
    it (condition nfd.enabled,gfd.enabled); no requests (resources: {}), one pod each."""
    plugin = graph_daemons([device_plugin()])
    assert [d.name for d in plugin] == ["Release/nvidia-device-plugin/device-plugin"]
    # The chart's default affinity asks for NFD / GFD labels: not on a node template.
    assert not plugin[0].runs_on({}, (GPU_TAINT,))
    assert plugin[0].runs_on({"nvidia.com/gpu.present": "true"}, (GPU_TAINT,))
    with_gfd = graph_daemons([device_plugin({"gfd": {"enabled": True}})])
    assert [d.name.rsplit("/", 1)[1] for d in with_gfd] == [
        "device-plugin",
        "gpu-feature-discovery",
        "nfd-worker",
    ]
    assert {d.requests for d in with_gfd} == {Resources(pods=1)}
    nfd_off = graph_daemons([device_plugin({"gfd": {"enabled": True}, "nfd": {"enabled": False}})])
    assert len(nfd_off) == 2
    # The NFD worker's default tolerations: nvidia.com/gpu=present only (NVIDIA #1934).
    worker = with_gfd[2]
    assert worker.runs_on({}, (GPU_TAINT,))
    assert not worker.runs_on({}, (Taint("nvidia.com/gpu", "true", "NoSchedule"),))


def test_our_device_plugin_values_pin_it_to_the_pool_label():
    values = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "gpu-inference.dev/pool", "operator": "In", "values": ["a"]}
                            ]
                        }
                    ]
                }
            }
        }
    }
    (d,) = graph_daemons([device_plugin(values)])
    assert d.runs_on({"gpu-inference.dev/pool": "a"}, (GPU_TAINT,))
    assert not d.runs_on({"gpu-inference.dev/pool": "b"}, (GPU_TAINT,))


def test_dcgm_exporter_chart_defaults_ask_100m_128Mi_and_tolerate_no_gpu_taint():
    release = {
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "dcgm",
        "inputs": {"chart": "dcgm-exporter", "values": {}},
    }
    (d,) = graph_daemons([release])
    assert d.requests == Resources(cpu=100, memory=128 * Mi, pods=1)
    assert not d.runs_on({}, (GPU_TAINT,))
    release["inputs"]["values"] = {"tolerations": [TOL_GPU]}
    (d,) = graph_daemons([release])
    assert d.runs_on({}, (GPU_TAINT,))


# ---------------------------------------------------------------------------------------------
# Fit: a node leaves its workloads its allocatable less its DaemonSets
# ---------------------------------------------------------------------------------------------

G6 = karpenter_node_shape("g6.xlarge").allocatable  # AL2023, 20Gi root
EKS_DAEMONS = KUBE_PROXY.requests + AWS_NODE.requests


def _karpenter(*extra: dict, cpu: int, node_class: dict | None = None) -> list[dict]:
    return [
        node_class or nodeclass(volume="20Gi"),
        nodepool("g6", [req("node.kubernetes.io/instance-type", "In", "g6.xlarge")]),
        deployment("w", pod("g6", cpu=f"{cpu}m", memory="1Gi")),
        *extra,
    ]


def _codes(graph: list[dict]) -> set[str]:
    return {f.code for f in check(graph).findings if f.severity == "error"}


def test_a_pod_at_what_the_node_leaves_beside_eks_daemonsets_fits_one_millicore_more_does_not():
    room = G6.cpu - EKS_DAEMONS.cpu
    assert _codes(_karpenter(cpu=room)) == set()
    report = check(_karpenter(cpu=room + 1))
    found = [f for f in report.findings if f.code == "GI021"]
    assert [f.resource for f in found] == ["Deployment/w"]
    assert "kube-proxy 100m, aws-node 25m" in found[0].message


def test_a_graph_daemonset_tolerating_the_pool_takes_its_share_one_that_does_not_takes_none():
    room = G6.cpu - EKS_DAEMONS.cpu
    agent = {"containers": [{"name": "a", "resources": {"requests": {"cpu": "100m"}}}]}
    untolerating = _ds("agent", agent)
    assert _codes(_karpenter(untolerating, cpu=room)) == set()
    tolerating = _ds("agent", {**agent, "tolerations": [TOL_GPU]})
    assert "GI021" in _codes(_karpenter(tolerating, cpu=room))
    assert _codes(_karpenter(tolerating, cpu=room - 100)) == set()


def test_daemonset_pods_count_against_the_nodes_pods():
    """maxPods 3 on the node class: kube-proxy and aws-node hold two, a graph DaemonSet the third,
    so no workload pod fits (GI021 names pods) and Karpenter launches nothing for it either."""
    small = nodeclass(volume="20Gi")
    small["inputs"]["spec"]["kubelet"] = {"maxPods": 3}
    agent = _ds("agent", {"tolerations": [TOL_GPU], "containers": [{"name": "a"}]})
    assert _codes(_karpenter(cpu=100, node_class=small)) == set()
    report = check(_karpenter(agent, cpu=100, node_class=small))
    (found,) = [f for f in report.findings if f.code == "GI021" and f.resource == "Deployment/w"]
    assert "pods" in found.message


# ---------------------------------------------------------------------------------------------
# Karpenter: buildDaemonOverheadGroups adds every compatible DaemonSet to each instance type
# ---------------------------------------------------------------------------------------------


def _types() -> list:
    return [it for it in catalog_instance_types(NodeClassInfo()) if it.name == "g6.xlarge"]


def test_karpenter_counts_daemonsets_that_tolerate_the_nodepools_taints():
    pool = NodePoolSpec("p", taints=(GPU_TAINT,))
    gpu_tolerant = DaemonPod(
        "t",
        Resources(cpu=10, pods=1),
        Placement(tolerations=[Toleration("nvidia.com/gpu", "Exists")]),
        "t",
    )
    intolerant = DaemonPod("i", Resources(cpu=20, pods=1), Placement(), "t")
    overheads = daemon_overheads(pool, _types(), (KUBE_PROXY, gpu_tolerant, intolerant))
    assert overheads == {"g6.xlarge": Resources(cpu=110, pods=2)}


def test_karpenter_ignores_prefer_no_schedule_taints_for_daemonsets():
    pool = NodePoolSpec("p", taints=(Taint("soft", "", "PreferNoSchedule"),))
    plain = DaemonPod("d", Resources(cpu=10, pods=1), Placement(), "t")
    assert daemon_overheads(pool, _types(), (plain,)) == {"g6.xlarge": Resources(cpu=10, pods=1)}


@pytest.mark.parametrize(
    ("selector", "counted"),
    [
        ({"karpenter.k8s.aws/instance-family": "g6"}, True),
        ({"karpenter.k8s.aws/instance-family": "g5"}, False),  # the instance type's own labels
        ({"example.com/team": "a"}, False),  # a key the NodePool does not define
        ({"gpu-inference.dev/pool": "p"}, True),  # the NodePool's template label
    ],
)
def test_karpenter_counts_a_daemonset_whose_selector_the_nodes_meet(selector: dict, counted: bool):
    pool = NodePoolSpec("p", labels={"gpu-inference.dev/pool": "p"})
    d = DaemonPod("d", Resources(cpu=10, pods=1), Placement(selector), "t")
    expected = Resources(cpu=10, pods=1) if counted else Resources()
    assert daemon_overheads(pool, _types(), (d,)) == {"g6.xlarge": expected}


def test_gi026_when_only_the_daemonsets_keep_the_pod_off_every_instance_type():
    """A pod at g6.xlarge's allocatable: Karpenter launches nothing, since kube-proxy and aws-node
    must fit beside it (GI021 says the same for the node template: both)."""
    report = check(_karpenter(cpu=G6.cpu))
    codes = {f.code for f in report.findings if f.resource == "Deployment/w"}
    assert "GI021" in codes
