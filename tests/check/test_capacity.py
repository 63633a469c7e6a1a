"""The capacity proof (GI040-GI044 and GI015): every replica the stack keeps fits its
pools at once, LeaderWorkerSet groups whole, and the default scheduler's one-at-a-time placement
strands none. Graphs written by hand, each finding triggered and silenced by its fix; the scoring
held against kube-scheduler v1.36.3's own test tables."""

from __future__ import annotations

from typing import Any

import pytest

from components.check import CODES, check
from components.check.capacity.model import DEFAULT_MEMORY, DEFAULT_MILLI_CPU, nonzero_requests
from components.check.capacity.scheduler import (
    Scheduler,
    SimKind,
    SimNode,
    _balanced_allocation,
    _least_allocated,
    find_strand,
    outcomes,
)
from components.check.read import Template
from tests.check.headroom import without_headroom

POOL = "gpu-inference.dev/pool"
GPU_TAINT = {"key": "dedicated", "value": "llm", "effect": "NO_SCHEDULE"}


def nodepool(
    name: str,
    lo: int,
    hi: int,
    machine: str = "a3-highgpu-8g",
    accelerator: str | None = "nvidia-h100-80gb",
    count: int = 8,
) -> dict:
    config: dict[str, Any] = {
        "machineType": machine,
        "diskSizeGb": 200,
        "labels": {POOL: name},
        "taints": [GPU_TAINT] if accelerator else [],
    }
    if accelerator:
        config["guestAccelerators"] = [{"type": accelerator, "count": count}]
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {
            "name": name,
            "location": "us-central1",
            "nodeConfig": config,
            "autoscaling": {"totalMinNodeCount": lo, "totalMaxNodeCount": hi},
        },
    }


def container(gpus: int = 0, cpu: str | None = "4", memory: str | None = "16Gi") -> dict:
    requests: dict[str, Any] = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    if gpus:
        requests["nvidia.com/gpu"] = gpus
    limits = {"nvidia.com/gpu": gpus} if gpus else {}
    return {"name": "main", "image": "x", "resources": {"requests": requests, "limits": limits}}


def pod_spec(pool: str, gpus: int, **asks: Any) -> dict:
    return {
        "nodeSelector": {POOL: pool},
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}
        ],
        "containers": [container(gpus, **asks)],
    }


def deployment(name: str, pool: str, gpus: int, replicas: int = 1, **asks: Any) -> dict:
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": "models"},
            "spec": {"replicas": replicas, "template": {"spec": pod_spec(pool, gpus, **asks)}},
        },
    }


def leader_worker_set(name: str, pool: str, gpus: int, size: int, replicas: int = 1) -> dict:
    template = {"spec": pod_spec(pool, gpus)}
    return {
        "type": "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": "models"},
            "spec": {
                "replicas": replicas,
                "leaderWorkerTemplate": {"size": size, "workerTemplate": template},
            },
        },
    }


def daemonset(name: str, cpu: str, memory: str) -> dict:
    return {
        "type": "kubernetes:apps/v1:DaemonSet",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {
                "template": {
                    "spec": {
                        "tolerations": [{"operator": "Exists"}],
                        "containers": [container(0, cpu, memory)],
                    }
                }
            },
        },
    }


def karpenter(name: str, types: list[str], nodes: int) -> list[dict]:
    return [
        {
            "type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
            "name": f"{name}-class",
            "inputs": {
                "metadata": {"name": name},
                "spec": {
                    "amiSelectorTerms": [{"alias": "al2023@latest"}],
                    "blockDeviceMappings": [
                        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi"}}
                    ],
                },
            },
        },
        {
            "type": "kubernetes:karpenter.sh/v1:NodePool",
            "name": name,
            "inputs": {
                "metadata": {"name": name},
                "spec": {
                    "limits": {"nodes": nodes},
                    "template": {
                        "metadata": {"labels": {POOL: name}},
                        "spec": {
                            "nodeClassRef": {"name": name},
                            "requirements": [
                                {
                                    "key": "node.kubernetes.io/instance-type",
                                    "operator": "In",
                                    "values": types,
                                }
                            ],
                            "taints": [
                                {"key": "dedicated", "value": "llm", "effect": "NoSchedule"}
                            ],
                        },
                    },
                },
            },
        },
    ]


def llm_like(lo: int, hi: int) -> list[dict]:
    """gke-llm's H100 pods: a decode and a prefill of 4 GPUs, a LeaderWorkerSet group of two
    8-GPU pods."""
    return [
        nodepool("h100", lo, hi),
        deployment("decode", "h100", 4, cpu="32", memory="256Gi"),
        deployment("prefill", "h100", 4, cpu="32", memory="256Gi"),
        leader_worker_set("qwen", "h100", 8, size=2),
    ]


def codes(graph: list[dict]) -> list[str]:
    return sorted(f.code for f in check(graph).findings)


def only(graph: list[dict], code: str) -> Any:
    (found,) = [f for f in check(graph).findings if f.code == code]
    return found


CAPACITY_PAIRS = [
    pytest.param("GI040", llm_like(2, 2), llm_like(3, 4), id="GI040-no-packing"),
    pytest.param(
        "GI041",
        [nodepool("h100", 1, 2), deployment("a", "h100", 8)],
        [nodepool("h100", 0, 2), deployment("a", "h100", 8, replicas=0)],
        id="GI041-headroom",
    ),
    pytest.param(
        "GI042",
        [nodepool("h100", 1, 3), deployment("a", "h100", 8, replicas=2)],
        [nodepool("h100", 2, 3), deployment("a", "h100", 8, replicas=2)],
        id="GI042-min-nodes-too-few",
    ),
    pytest.param("GI043", llm_like(3, 3), llm_like(4, 4), id="GI043-spreading-strands"),
    pytest.param(
        "GI044",
        [
            *karpenter("gpu", ["g6.xlarge", "g6.2xlarge"], 2),
            deployment("a", "gpu", 1, cpu="2", memory="8Gi"),
        ],
        [
            nodepool("gpu", 1, 2, "g2-standard-8", "nvidia-l4", 1),
            deployment("a", "gpu", 1, cpu="2", memory="8Gi"),
        ],
        id="GI044-several-shapes",
    ),
]


@pytest.mark.parametrize(("code", "bad", "good"), CAPACITY_PAIRS)
def test_capacity_finding_triggered_and_silenced_by_its_fix(code: str, bad: list, good: list):
    bad_report, good_report = check(bad), check(good)
    found = [f for f in bad_report.findings if f.code == code]
    assert found, bad_report.findings
    assert found[0].severity == CODES[code][0] and found[0].message and found[0].fix
    assert code not in {f.code for f in good_report.findings}, good_report.findings
    assert good_report.errors == [], good_report.errors


def test_no_packing_names_the_pods_that_cannot_run_and_the_nodes_that_would_hold_them():
    found = only(llm_like(2, 2), "GI040")
    assert found.resource == "NodePool/h100"
    assert found.message == (
        "the pods that run all the time cannot run at once on pool(s) h100 at their max (h100: 2 "
        "x a3-highgpu-8g, 8 GPU(s) each): they ask 24 nvidia.com/gpu, the nodes hold 16; at most "
        "2 of 4 pods together (LeaderWorkerSet groups whole), leaving Pending: Deployment/decode "
        "x1, 4 GPU(s); Deployment/prefill x1, 4 GPU(s)"
    )
    assert found.fix == (
        "raise maxNodes of h100 to 3 (the fewest nodes that hold them), or lower their replicas"
    )


def test_a_leader_worker_set_group_is_placed_whole_or_not_at_all():
    """Two groups of two 8-GPU pods and a 4-GPU pod on three nodes: the sums fit (36 of 24?
    no: 36 > 24); with one group left out the rest (20 GPUs) fits: 3 of 5 pods, the group's two
    pods named together, never one pod of a group alone."""
    graph = [
        nodepool("h100", 3, 3),
        deployment("small", "h100", 4),
        leader_worker_set("qwen", "h100", 8, size=2, replicas=2),
    ]
    found = only(graph, "GI040")
    assert "at most 3 of 5 pods together" in found.message
    assert found.message.endswith(
        "leaving Pending: LeaderWorkerSet/qwen/leader x1, 8 GPU(s); LeaderWorkerSet/qwen/worker "
        "x1, 8 GPU(s)"
    )


def test_every_resource_counts_not_only_gpus():
    """Two pods of 1 GPU and 200 CPUs on a3-highgpu-8g nodes (about 207 CPUs allocatable): the
    GPUs fit one node, the CPUs need two."""
    one = [nodepool("h100", 1, 1), deployment("cpu-heavy", "h100", 1, replicas=2, cpu="200")]
    found = only(one, "GI040")
    assert "they ask 400 cpu" in found.message
    assert "GI040" not in codes([nodepool("h100", 2, 2), *one[1:]])


def test_daemonsets_take_their_share_of_every_node():
    """Two pods of 100 CPUs fit an a3-highgpu-8g node together (207.26 CPUs beside GKE's own
    DaemonSets), not beside a DaemonSet of 8 more; each still fits alone (no GI021)."""
    graph = [nodepool("h100", 1, 1), deployment("big", "h100", 1, replicas=2, cpu="100")]
    assert "GI040" not in codes(graph)
    report = check([*graph, daemonset("agent", "8", "1Gi")])
    assert [f.code for f in report.errors] == ["GI040"]
    assert (
        "they ask 200 cpu, the nodes hold 199260m after their DaemonSets"
        in report.errors[0].message
    )


def test_headroom_per_pool_counts_the_fewest_nodes_and_the_free_gpus():
    found = only([nodepool("h100", 3, 4), *llm_like(3, 4)[1:]], "GI041")
    assert found.message == (
        "pool h100 at its max (4 node(s)): the pods that run all the time take 3 node(s) (the "
        "fewest that hold them): headroom 1 node(s), 8 of 32 GPU(s) free"
    )


def test_cold_capacity_names_the_min_the_pods_need_and_the_start_up():
    found = only([nodepool("h100", 1, 3), deployment("a", "h100", 8, replicas=2)], "GI042")
    assert found.message == (
        "pool(s) h100 keep 1 node(s) at their min (h100: 1 x a3-highgpu-8g, 8 GPU(s) each) but "
        "the pods that run all the time need 2 node(s): the rest wait for a node to start (about "
        "900s) every time they are created, and every scale-up from min is a cold start"
    )
    assert found.fix == "raise minNodes of h100 to 2"


def test_a_pool_that_can_be_at_zero_is_gi008s_not_cold_capacity():
    assert codes([nodepool("h100", 0, 3), deployment("a", "h100", 8, replicas=2)]) == [
        "GI008",
        "GI041",
    ]


def test_fragmentation_names_an_order_that_strands_and_the_nodes_that_stop_it():
    found = only(llm_like(3, 3), "GI043")
    assert found.message == (
        "the pods that run all the time fit pool(s) h100 (h100: 3 x a3-highgpu-8g, 8 GPU(s) "
        "each), but kube-scheduler places them one at a time and spreads them (LeastAllocated), "
        "so LeaderWorkerSet/qwen/worker (8 GPU(s)) can be left Pending when they are created in "
        "this order: Deployment/decode -> h100 node 1; Deployment/prefill -> h100 node 2; "
        "LeaderWorkerSet/qwen/leader -> h100 node 3; LeaderWorkerSet/qwen/worker -> Pending"
    )
    assert found.fix == "raise maxNodes of h100 to 4 (then no order strands a pod)"
    assert without_headroom(check(llm_like(3, 3)).findings) == [found]


def max_scale(most: int) -> list[dict]:
    """A raw InferenceService of 1 to `most` one-GPU replicas on two L4 nodes (its container's cpu
    and memory limited to its ask: KServe's default limits, cpu 1 and 2Gi, below it would be
    refused, GI066)."""
    predictor = pod_spec("l4", 1, cpu="2")
    limits = predictor["containers"][0]["resources"].setdefault("limits", {})
    limits.update(cpu="2", memory="16Gi")
    return [
        nodepool("l4", 2, 2, "g2-standard-8", "nvidia-l4", 1),
        {
            "type": "kubernetes:serving.kserve.io/v1beta1:InferenceService",
            "name": "a",
            "inputs": {
                "metadata": {
                    "name": "a",
                    "namespace": "models",
                    "annotations": {"serving.kserve.io/deploymentMode": "RawDeployment"},
                },
                "spec": {"predictor": predictor | {"minReplicas": 1, "maxReplicas": most}},
            },
        },
    ]


def test_max_scale_that_does_not_fit_is_a_warning_beside_min_replicas_that_do():
    assert codes(max_scale(3)) == ["GI015", "GI041"]
    assert codes(max_scale(2)) == ["GI041"]


# ---------------------------------------------------------------------------------------------
# The scoring, against kube-scheduler v1.36.3's own test tables
# ---------------------------------------------------------------------------------------------

# pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go: "nothing scheduled,
# resources requested, differently sized nodes" (a pod of cpu 3000, memory 5000).
LEAST_ALLOCATED = [
    ((4000, 10000, 0, 110, 0), (3000, 5000), 37),
    ((6000, 10000, 0, 110, 0), (3000, 5000), 50),
    ((4000, 10000, 0, 110, 0), (0, 0), 100),
    ((4000, 10000, 0, 110, 0), (5000, 5000), 25),  # past its cpu: 0 for cpu
]


@pytest.mark.parametrize(("alloc", "requested", "score"), LEAST_ALLOCATED)
def test_least_allocated_is_upstreams(alloc: tuple, requested: tuple, score: int):
    assert _least_allocated(alloc, requested) == score


# balanced_allocation_test.go, TestNodeResourcesBalancedAllocation: (node cpu, memory), what is
# on it (cpu, memory), the pod (cpu, memory), the score.
BALANCED = [
    ((4000, 10000), (0, 0), (3000, 5000), 68),
    ((6000, 10000), (0, 0), (3000, 5000), 75),
    ((10000, 20000), (3000, 0), (3000, 5000), 73),
    ((10000, 20000), (3000, 5000), (3000, 5000), 74),
    ((10000, 50000), (3000, 5000), (3000, 5000), 70),
    ((3000, 5000), (3000, 0), (0, 5000), 100),
    ((3000, 5000), (0, 0), (0, 5000), 50),
    ((6000, 10000), (3000, 0), (3000, 0), 62),
    ((6000, 10000), (3000, 5000), (3000, 0), 62),
]


@pytest.mark.parametrize(("node", "used", "ask", "score"), BALANCED)
def test_balanced_allocation_is_upstreams(node: tuple, used: tuple, ask: tuple, score: int):
    alloc = (*node, 0, 110, 0)
    assert _balanced_allocation(alloc, (*used, 0, 0, 0), (*ask, 0, 1, 0)) == score


def test_a_container_without_requests_counts_100m_and_200mi_for_spreading():
    t = Template(
        type="kubernetes:apps/v1:Deployment",
        name="x",
        component=None,
        namespace="default",
        fragment={},
        containers=[{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "0"}}}],
        init_containers=[],
        wired=(),
        scales_to_zero=False,
    )
    assert nonzero_requests(t) == (DEFAULT_MILLI_CPU, 2 * DEFAULT_MEMORY)


def _two_nodes(cpu: int, memory: int) -> Scheduler:
    node = SimNode(0, (cpu, memory, 0, 110, 8), (0, 0, 0, 0, 0), (0, 0))
    small = SimKind((100, 10**9, 0, 1, 4), (100, 10**9), frozenset({0}))
    large = SimKind((100, 10**9, 0, 1, 8), (100, 10**9), frozenset({0}))
    return Scheduler([node, node], [small, large])


def test_spreading_strands_a_large_pod_only_where_the_scores_spread_the_small_ones():
    """Two 4-GPU pods (100m, 1 GB) then an 8-GPU pod on two 8-GPU nodes.
    - 8 CPUs, 16 GB: the second small pod scores 468 on the empty node against 466 (LeastAllocated
      95 against 92) and the large pod has no node left.
    - 200 CPUs, 1 TB: LeastAllocated cannot tell the nodes apart (99 each), BalancedAllocation
      scores the empty node's balance lost, not kept (74 against 75): the small pods share a node
      and the large one lands.
    - 8 CPUs, 1 TB: the totals tie (472) between unlike nodes: either may be chosen."""
    (run,) = outcomes(_two_nodes(8000, 16 * 10**9), [0, 0, 1])
    assert run.nodes == (0, 1, -1) and not run.tie
    (run,) = outcomes(_two_nodes(200_000, 10**12), [0, 0, 1])
    assert run.nodes == (0, 0, 1) and not run.tie
    tied = outcomes(_two_nodes(8000, 10**12), [0, 0, 1])
    assert sorted(r.nodes for r in tied) == [(0, 0, 1), (0, 1, -1)] and all(r.tie for r in tied)
    strand = find_strand(_two_nodes(8000, 16 * 10**9), [2, 1], {})
    assert strand is not None and strand.order == (0, 0, 1) and not strand.run.tie
    assert find_strand(_two_nodes(200_000, 10**12), [2, 1], {}) is None


# ---------------------------------------------------------------------------------------------
# Cloud quotas (GI045, GI046)
# ---------------------------------------------------------------------------------------------


def cloud_quota(provider: str, region: str, **limits: int) -> dict:
    return {
        "type": "gpu-inference:index:CloudQuota",
        "name": f"quota-{provider}-{region}",
        "inputs": {"provider": provider, "region": region, "limits": limits},
    }


def eks_group(name: str, instance: str, hi: int, spot: bool = False) -> dict:
    return {
        "type": "aws:eks/nodeGroup:NodeGroup",
        "name": name,
        "inputs": {
            "nodeGroupName": name,
            "instanceTypes": [instance],
            "amiType": "AL2023_x86_64_NVIDIA",
            "capacityType": "SPOT" if spot else "ON_DEMAND",
            "labels": {POOL: name},
            "taints": [GPU_TAINT],
            "scalingConfig": {"minSize": 1, "maxSize": hi, "desiredSize": 1},
        },
    }


QUOTA_PAIRS = [
    pytest.param(
        "GI045",
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=24)],
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=32)],
        id="GI045-max-nodes-past-the-quota",
    ),
    pytest.param(
        "GI046",
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=16)],
        [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=32)],
        id="GI046-quota-too-small-for-what-always-runs",
    ),
]
CAPACITY_PAIRS += QUOTA_PAIRS  # the parametrized test above takes them too (the same list)


def test_max_nodes_past_the_quota_name_the_numbers_and_the_way_out():
    found = only([*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=24)], "GI045")
    assert found.message == (
        "pool(s) h100 can grow to 32 GPU(s) of quota NVIDIA_H100_GPUS in us-central1 (h100 4 "
        "node(s) x 8), but it allows 24: scale-up past it fails (GCE QUOTA_EXCEEDED) and the pods "
        "that wait for those nodes stay Pending"
    )
    assert found.fix.startswith(
        "raise the quota to 32 (gcloud compute regions describe us-central1"
    )
    assert found.fix.endswith("or lower maxNodes of h100 to 3")


def test_a_quota_too_small_for_what_always_runs_names_what_stays_pending():
    report = check([*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=16)])
    assert [f.code for f in report.errors] == ["GI046"]
    (found,) = report.errors
    assert found.message.startswith(
        "quota NVIDIA_H100_GPUS in us-central1 allows 16 GPU(s): 2 node(s) of pool h100 (8 "
        "each), too few for the pods that run all the time (they need 3): 2 of 4 pods run"
    )
    assert found.fix.startswith("raise the quota to 24 (")


def test_spot_nodes_count_against_the_preemptible_quota():
    spot = llm_like(3, 4)
    spot[0]["inputs"]["nodeConfig"]["spot"] = True
    on_demand_only = cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=0)
    assert "GI045" not in codes([*spot, on_demand_only])
    found = only(
        [*spot, cloud_quota("gke", "us-central1", PREEMPTIBLE_NVIDIA_H100_GPUS=8)], "GI046"
    )
    assert "quota PREEMPTIBLE_NVIDIA_H100_GPUS" in found.message


def test_ec2_quotas_count_vcpus_of_the_instance_family_spot_apart():
    group = eks_group("g5", "g5.2xlarge", 6)  # 8 vCPUs each
    deploy = deployment("a", "g5", 1, cpu="2", memory="8Gi")
    found = only(
        [
            group,
            deploy,
            cloud_quota("eks", "us-east-1", **{"Running On-Demand G and VT instances": 32}),
        ],
        "GI045",
    )
    assert (
        "can grow to 48 vCPU(s) of quota Running On-Demand G and VT instances in us-east-1"
        in found.message
    )
    assert "(EC2 VcpuLimitExceeded)" in found.message
    spot = eks_group("g5", "g5.2xlarge", 6, spot=True)
    assert "GI045" not in codes(
        [
            spot,
            deploy,
            cloud_quota("eks", "us-east-1", **{"Running On-Demand G and VT instances": 32}),
        ]
    )
    assert "GI045" in codes(
        [
            spot,
            deploy,
            cloud_quota("eks", "us-east-1", **{"All G and VT Spot Instance Requests": 32}),
        ]
    )


def test_quotas_given_to_the_check_replace_the_graphs_for_their_region():
    graph = [*llm_like(3, 4), cloud_quota("gke", "us-central1", NVIDIA_H100_GPUS=16)]
    given = [{"provider": "gke", "region": "us-central1", "limits": {"NVIDIA_H100_GPUS": 64}}]
    assert check(graph, quotas=given).errors == []
    assert [
        f.code
        for f in check(
            llm_like(3, 4), quotas=[given[0] | {"limits": {"NVIDIA_H100_GPUS": 8}}]
        ).errors
    ] == ["GI046"]


@pytest.mark.parametrize(
    ("instance", "spot", "names"),
    [
        ("g5.2xlarge", False, ["Running On-Demand G and VT instances"]),
        ("g6e.xlarge", True, ["All G and VT Spot Instance Requests"]),
        (
            "p4d.24xlarge",
            True,
            ["All P4, P3 and P2 Spot Instance Requests", "All P Spot Instance Requests"],
        ),
        ("p5.48xlarge", True, ["All P5 Spot Instance Requests", "All P Spot Instance Requests"]),
        ("p5.48xlarge", False, ["Running On-Demand P instances"]),
        ("inf2.xlarge", False, ["Running On-Demand Inf instances"]),
        ("m6i.large", False, ["Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances"]),
        ("trn1.32xlarge", True, ["All Trn Spot Instance Requests"]),
    ],
)
def test_ec2_instance_families_map_to_their_quota_names(instance: str, spot: bool, names: list):
    from components.model.nodes.quotas import ec2_quotas

    assert ec2_quotas(instance, spot) == names


def test_gce_gpu_quotas_are_per_family_preemptible_apart():
    from components.model.nodes.quotas import gce_quota, gce_region

    assert gce_quota("nvidia-l4", False) == "NVIDIA_L4_GPUS"
    assert gce_quota("nvidia-a100-80gb", True) == "PREEMPTIBLE_NVIDIA_A100_80GB_GPUS"
    assert gce_quota("nvidia-rtx-pro-6000", False) is None
    assert (
        gce_region("us-central1-a") == "us-central1"
        and gce_region("europe-west4") == "europe-west4"
    )


def per_zone(lo: int, hi: int, **where: Any) -> dict:
    """The H100 pool with per-zone counts (`minNodeCount` / `maxNodeCount`) at `where`."""
    pool = nodepool("h100", lo, hi)
    pool["inputs"]["autoscaling"] = {"minNodeCount": lo, "maxNodeCount": hi}
    pool["inputs"].pop("location")
    pool["inputs"].update(where)
    return pool


def test_per_zone_node_counts_count_once_per_zone():
    """1..1 per zone over three zones holds what 3..3 holds; in one zone it is short; in a region
    whose zones the pool does not name the max is not known, and nothing is said."""
    pods = llm_like(3, 3)[1:]
    three = per_zone(
        1,
        1,
        location="us-central1",
        nodeLocations=["us-central1-a", "us-central1-b", "us-central1-c"],
    )
    (pool,) = check([three, *pods]).pools
    assert (pool.min_nodes, pool.max_nodes) == (3, 3)
    assert "GI040" not in codes([three, *pods])
    assert "GI040" in codes([per_zone(1, 1, location="us-central1-a"), *pods])
    regional = check([per_zone(1, 1, location="us-central1"), *pods])
    assert (regional.pools[0].min_nodes, regional.pools[0].max_nodes) == (None, None)
    assert not {"GI040", "GI041", "GI043"} & {f.code for f in regional.findings}
