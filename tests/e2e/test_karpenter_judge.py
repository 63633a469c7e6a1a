"""Karpenter's own provisioning scheduler, through our harness, on hand-made cases.

Each expected answer is reasoned from sigs.k8s.io/karpenter v1.15.0 (the version
aws/karpenter-provider-aws v1.15.0 pins; the Azure cases below link v1.14.0, see there); paths
below are under its pkg/, "scheduler.go" being controllers/provisioning/scheduling/scheduler.go. The instance shapes are hand-written
round numbers, not our catalog: only their relations (which fits, which exceeds) matter here.
"""

from __future__ import annotations

from typing import Any

import karpenter_judge as kj
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.tier("Karpenter judge")]

ZONE = "us-east-1a"
GPU = "nvidia.com/gpu"
GPU_TAINT = {"key": GPU, "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
# Allocatable = capacity - (kubeReserved + systemReserved + evictionThreshold)
# (cloudprovider/types.go:331-340): 993Mi of memory below capacity for every shape here.
KUBE_RESERVED = {"cpu": "80m", "memory": "893Mi", "ephemeral-storage": "1Gi"}
EVICTION = {"memory": "100Mi"}


def _shape(
    name: str,
    *,
    cpu: int,
    memory_mi: int,
    gpus: int,
    gpu_name: str,
    price: float,
    reserved: int = 0,
) -> dict[str, Any]:
    family, size = name.split(".")
    offerings = [
        kj.offering("on-demand", ZONE, price=price),
        kj.offering("spot", ZONE, price=round(price / 3, 4)),
    ]
    if reserved:
        offerings.append(
            kj.offering("reserved", ZONE, reservation_id="cr-0123", reservation_capacity=reserved)
        )
    return kj.instance_type(
        name,
        capacity={
            "cpu": cpu,
            "memory": f"{memory_mi}Mi",
            "ephemeral-storage": "18Gi",
            "pods": 58,
            GPU: gpus,
        },
        kube_reserved=KUBE_RESERVED,
        eviction_threshold=EVICTION,
        labels={
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux",
            "karpenter.k8s.aws/instance-category": family[0],
            "karpenter.k8s.aws/instance-family": family,
            "karpenter.k8s.aws/instance-size": size,
            "karpenter.k8s.aws/instance-gpu-name": gpu_name,
            "karpenter.k8s.aws/instance-gpu-count": str(gpus),
            "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia",
        },
        offerings=offerings,
    )


G6 = [
    _shape("g6.xlarge", cpu=4, memory_mi=14336, gpus=1, gpu_name="l4", price=0.8),
    _shape("g6.2xlarge", cpu=8, memory_mi=29696, gpus=1, gpu_name="l4", price=0.98),
    _shape("g6.4xlarge", cpu=16, memory_mi=60416, gpus=1, gpu_name="l4", price=1.32),
    _shape("g6.12xlarge", cpu=48, memory_mi=181248, gpus=4, gpu_name="l4", price=4.6),
]
G5 = [_shape("g5.xlarge", cpu=4, memory_mi=14336, gpus=1, gpu_name="a10g", price=1.0)]
P5 = _shape("p5.48xlarge", cpu=192, memory_mi=1894400, gpus=8, gpu_name="h100", price=98.3)
P5_RESERVED = _shape(
    "p5.48xlarge", cpu=192, memory_mi=1894400, gpus=8, gpu_name="h100", price=98.3, reserved=1
)


def _req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def node_pool(
    name: str,
    requirements: list[dict[str, Any]],
    *,
    limits: dict[str, str] | None = None,
    taints: tuple[dict[str, str], ...] = (GPU_TAINT,),
    weight: int | None = None,
    node_class: str = "default",
) -> dict[str, Any]:
    """A NodePool shaped like the ones components/pools/karpenter.py emits."""
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {"gpu-inference.dev/pool": name}},
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.k8s.aws",
                    "kind": "EC2NodeClass",
                    "name": node_class,
                },
                "requirements": requirements,
                "taints": list(taints),
            },
        },
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
    }
    if limits is not None:
        spec["limits"] = limits
    if weight is not None:
        spec["weight"] = weight
    return {"metadata": {"name": name}, "spec": spec}


def gpu_pod(name: str = "model", gpus: int = 1, memory: str = "8Gi", **kw: Any) -> dict[str, Any]:
    kw.setdefault("tolerations", [GPU_TOLERATION])
    return kj.pod(name, requests={"cpu": 1, "memory": memory, GPU: gpus}, limits={GPU: gpus}, **kw)


ONE_GPU_G6 = [
    _req("karpenter.k8s.aws/instance-family", "In", "g6"),
    _req("karpenter.k8s.aws/instance-gpu-count", "In", "1"),
    _req("karpenter.sh/capacity-type", "In", "on-demand"),
]
ONLY_P5 = [_req("node.kubernetes.io/instance-type", "In", "p5.48xlarge")]


@pytest.fixture(scope="module")
def judge() -> Any:
    reason = kj.unavailable_reason()
    if reason:
        pytest.skip(reason)
    try:
        kj.build()
    except kj.SourceUnavailable as e:
        pytest.skip(str(e))
    return kj.run


def one(judge: Any, **req: Any) -> kj.Verdict:
    answer = judge(kj.request(**req))
    (case,) = answer.cases
    (verdict,) = case.verdicts
    return verdict


def test_the_harness_links_the_pinned_karpenter(judge: Any) -> None:
    answer = judge(
        kj.request(instance_types=G6, node_pools=[node_pool("g6", ONE_GPU_G6)], pods=[gpu_pod()])
    )
    pinned = kj.module_versions()
    assert answer.modules["sigs.k8s.io/karpenter"] == pinned[kj.CORE_MODULE] == "v1.15.0"
    assert answer.modules[kj.AWS_MODULE] == pinned[kj.AWS_MODULE] == "v1.15.0"
    assert kj.AZURE_MODULE not in answer.modules


def test_a_one_gpu_pod_gets_a_nodeclaim_with_every_one_gpu_g6_size(judge: Any) -> None:
    # The pool's requirements pre-filter the instance types (scheduler.go:178-193: g5 and the
    # 4-GPU g6.12xlarge go); the NodeClaim lists every remaining type the pod fits
    # (nodeclaim.go:598-675), with the capacity types of their compatible offerings
    # (nodeclaimtemplate.go:114-129): the pool admits on-demand only.
    v = one(
        judge, instance_types=G6 + G5, node_pools=[node_pool("g6", ONE_GPU_G6)], pods=[gpu_pod()]
    )
    assert v == kj.Verdict(
        pod="model",
        scheduled=True,
        node_pool="g6",
        instance_types=("g6.2xlarge", "g6.4xlarge", "g6.xlarge"),
        capacity_types=("on-demand",),
        error="",
    )


def test_a_family_pool_offers_the_multi_gpu_sizes_too(judge: Any) -> None:
    # Without a GPU-count requirement, nothing stops a 1-GPU pod from landing on g6.12xlarge:
    # Karpenter keeps every type that fits (nodeclaim.go:681-695) and lets the cloud pick by price.
    reqs = [_req("karpenter.k8s.aws/instance-family", "In", "g6")]
    v = one(judge, instance_types=G6 + G5, node_pools=[node_pool("g6", reqs)], pods=[gpu_pod()])
    assert v.instance_types == ("g6.12xlarge", "g6.2xlarge", "g6.4xlarge", "g6.xlarge")
    assert v.capacity_types == ("on-demand", "spot")


def test_gpu_limit_below_the_only_instance_types_gpus_stops_the_launch(judge: Any) -> None:
    # Limits are compared with instance *capacity* before any NodeClaim is made
    # (scheduler.go:735-749, filterByRemainingResources :1069-1085): 8 GPUs > 4 left.
    pods = [gpu_pod()]
    low = node_pool("p5", ONLY_P5, limits={GPU: "4"})
    v = one(judge, instance_types=[P5], node_pools=[low], pods=pods)
    assert v == kj.Verdict(
        pod="model",
        scheduled=False,
        node_pool="",
        instance_types=(),
        capacity_types=(),
        error="all available instance types exceed limits for nodepool (NodePool=p5)",
    )
    # The twin: a limit of 8 equals the capacity (only `>` excludes, :1076).
    fixed = node_pool("p5", ONLY_P5, limits={GPU: "8"})
    assert one(judge, instance_types=[P5], node_pools=[fixed], pods=pods).instance_types == (
        "p5.48xlarge",
    )


def test_a_node_limit_of_zero_is_exhausted(judge: Any) -> None:
    # scheduler.go:738-743: `nodes` is checked before the instance types.
    pool = node_pool("p5", ONLY_P5, limits={"nodes": "0"})
    v = one(judge, instance_types=[P5], node_pools=[pool], pods=[gpu_pod()])
    assert v.error == "node limits have been exhausted for nodepool (NodePool=p5)"


def test_reserved_only_pool_without_a_reservation_launches_nothing(judge: Any) -> None:
    # With no reserved offering the instance type's capacity-type requirement is
    # In [on-demand, spot] (aws v1.15.0 types.go:331-355); the pool's In [reserved] filters out every
    # type, so the pool's template is dropped (scheduler.go:178-193) and no template is left
    # (scheduler.go:637-639).
    reserved = [*ONLY_P5, _req("karpenter.sh/capacity-type", "In", "reserved")]
    pools = [node_pool("p5", reserved)]
    v = one(judge, instance_types=[P5], node_pools=pools, pods=[gpu_pod()])
    assert not v.scheduled
    assert v.error == "nodepool requirements filtered out all available instance types"
    # The twin: the pool's node class selects a reservation, so its p5 has a reserved offering.
    pools = [node_pool("p5", reserved, node_class="reserved")]
    v = one(
        judge,
        instance_types=[P5],
        node_class_instance_types={"reserved": [P5_RESERVED]},
        node_pools=pools,
        pods=[gpu_pod()],
    )
    assert (v.scheduled, v.instance_types, v.capacity_types) == (
        True,
        ("p5.48xlarge",),
        ("reserved",),
    )


def test_a_full_reservation_holds_the_pod_back_from_lower_weight_pools(judge: Any) -> None:
    """New in v1.15.0: a full reservation stays available with no capacity (aws v1.15.0
    offering/reserved_capacity_resolver.go:99-106; v1.14.1 made it unavailable), and a pod whose
    only compatible offerings are full reservations gets a ReservedOfferingError
    (nodeclaim.go:385-393), which also keeps the lower-weight pools from taking it
    (scheduler.go:765-778): no NodeClaim this round, where v1.14.1 launched from the on-demand
    pool. With room left, or on-demand allowed beside reserved, the reserved pool launches it."""
    full = _shape("p5.48xlarge", cpu=192, memory_mi=1894400, gpus=8, gpu_name="h100", price=98.3)
    full["offerings"].append(
        kj.offering("reserved", ZONE, reservation_id="cr-0123", reservation_capacity=0)
    )
    only_reserved = [*ONLY_P5, _req("karpenter.sh/capacity-type", "In", "reserved")]
    on_demand = [*ONLY_P5, _req("karpenter.sh/capacity-type", "In", "on-demand")]

    def first(reserved_pool: list[dict[str, Any]], p5: dict[str, Any]) -> kj.Verdict:
        return one(
            judge,
            instance_types=[P5],
            node_class_instance_types={"reserved": [p5]},
            node_pools=[
                node_pool("reserved", reserved_pool, weight=10, node_class="reserved"),
                node_pool("on-demand", on_demand),
            ],
            pods=[gpu_pod()],
        )

    v = first(only_reserved, full)
    assert not v.scheduled
    assert "all compatible reserved offerings are full" in v.error
    v = first(only_reserved, P5_RESERVED)
    assert (v.scheduled, v.node_pool, v.capacity_types) == (True, "reserved", ("reserved",))
    mixed = [*ONLY_P5, _req("karpenter.sh/capacity-type", "In", "reserved", "on-demand")]
    v = first(mixed, full)
    # The full reservation adds no `reserved` to the NodeClaim (nodeclaimtemplate.go:119-129).
    assert (v.scheduled, v.node_pool, v.capacity_types) == (True, "reserved", ("on-demand",))


def test_reserved_or_on_demand_without_a_reservation_quietly_launches_on_demand(judge: Any) -> None:
    mixed = [*ONLY_P5, _req("karpenter.sh/capacity-type", "In", "reserved", "on-demand")]
    v = one(judge, instance_types=[P5], node_pools=[node_pool("p5", mixed)], pods=[gpu_pod()])
    assert (v.scheduled, v.capacity_types) == (True, ("on-demand",))


def test_a_pod_that_does_not_tolerate_the_pool_taint_is_refused(judge: Any) -> None:
    # nodeclaim.go:132-135, the error of scheduling/taints.go:78-91.
    pod = gpu_pod(tolerations=[{"key": "other", "operator": "Exists", "effect": "NoSchedule"}])
    v = one(judge, instance_types=G6, node_pools=[node_pool("g6", ONE_GPU_G6)], pods=[pod])
    assert v.error == "did not tolerate taint (taint=nvidia.com/gpu=present:NoSchedule)"


def test_memory_is_judged_against_allocatable_to_the_mebibyte(judge: Any) -> None:
    # fits() compares requests (plus `pods: 1`, utils/resources RequestsForPods) with
    # capacity - overhead (nodeclaim.go:681-695, cloudprovider/types.go:331-340).
    biggest = 60416 - 993  # g6.4xlarge, the largest 1-GPU g6 here
    pools = [node_pool("g6", ONE_GPU_G6)]
    at = one(judge, instance_types=G6, node_pools=pools, pods=[gpu_pod(memory=f"{biggest}Mi")])
    assert at.instance_types == ("g6.4xlarge",)
    over = one(
        judge, instance_types=G6, node_pools=pools, pods=[gpu_pod(memory=f"{biggest + 1}Mi")]
    )
    assert over.error == (
        "no instance type has enough resources, requirements="
        "gpu-inference.dev/pool In [g6], karpenter.k8s.aws/ec2nodeclass In [default], "
        "karpenter.k8s.aws/instance-family In [g6], karpenter.k8s.aws/instance-gpu-count In [1], "
        "karpenter.sh/capacity-type In [on-demand], karpenter.sh/initialized In [true], "
        "karpenter.sh/nodepool In [g6], karpenter.sh/registered In [true], "
        f'resources={{"cpu":"1","memory":"{biggest + 1}Mi","nvidia.com/gpu":"1","pods":"1"}}'
    )


def test_a_dra_only_gpu_pod_gets_no_node(judge: Any) -> None:
    # IGNORE_DRA_REQUESTS defaults to true (operator/options/options.go:235); such a pod is
    # refused before any pool is tried (scheduler.go:612-615).
    pod = {
        "name": "dra",
        "spec": {
            "containers": [
                {"name": "main", "image": "judge", "resources": {"claims": [{"name": "gpu"}]}}
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            "tolerations": [GPU_TOLERATION],
        },
    }
    v = one(judge, instance_types=G6, node_pools=[node_pool("g6", ONE_GPU_G6)], pods=[pod])
    assert v.error == (
        "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter"
    )


def test_the_heaviest_pool_wins_and_equal_weights_go_by_name_descending(judge: Any) -> None:
    # utils/nodepool/nodepool.go:161-171 orders the templates; the first that fits wins.
    pools = [node_pool(n, ONLY_P5, weight=w) for n, w in (("a", None), ("b", None), ("c", 10))]
    assert one(judge, instance_types=[P5], node_pools=pools, pods=[gpu_pod()]).node_pool == "c"
    pools = [node_pool(n, ONLY_P5) for n in ("a", "b")]
    assert one(judge, instance_types=[P5], node_pools=pools, pods=[gpu_pod()]).node_pool == "b"


def test_each_pool_alone_and_a_pool_karpenter_would_not_ready(judge: Any) -> None:
    # A NodePool whose runtime validation fails never becomes Ready (apis/v1/
    # nodepool_validation.go:28-31) and the provisioner leaves it out (provisioner.go:282-291).
    bad = node_pool("bad", [*ONLY_P5, _req("karpenter.sh/nodepool", "In", "x")])
    answer = judge(
        kj.request(
            instance_types=[P5],
            node_pools=[
                node_pool("low", ONLY_P5, limits={GPU: "4"}),
                node_pool("ok", ONLY_P5),
                bad,
            ],
            pods=[gpu_pod()],
            per_node_pool=True,
        )
    )
    (case,) = answer.cases
    assert [(p.name, p.considered) for p in case.node_pools] == [
        ("low", True),
        ("ok", True),
        ("bad", False),
    ]
    assert case.node_pools[2].reason == (
        'not Ready: validation failed: invalid key: "karpenter.sh/nodepool" in requirements, '
        "restricted"
    )
    assert case.verdict("model", "low").error.startswith("all available instance types exceed")
    assert case.verdict("model", "ok").node_pool == "ok"
    assert case.verdict("model", "bad").error == "no dynamic nodepools found"


def test_a_bad_request_is_refused_with_the_reason(judge: Any) -> None:
    req = kj.request(instance_types=G6, node_pools=[node_pool("g6", ONE_GPU_G6)], pods=[gpu_pod()])
    req["pods"][0]["spec"]["nodeSelectr"] = {}
    with pytest.raises(kj.JudgeError, match='unknown field "nodeSelectr"'):
        judge(req)


def test_daemonset_overhead_moves_the_pod_to_a_larger_instance_type(judge: Any) -> None:
    """scheduler.go buildDaemonOverheadGroups: every DaemonSet pod compatible with the NodePool
    (tolerating its taints, requirements compatible) adds its requests and one pod to what an
    instance type must hold. A pod asking g6.xlarge's whole allocatable CPU (3920m) fits it
    alone; beside a 100m DaemonSet that tolerates the GPU taint it needs g6.2xlarge, and a
    DaemonSet that does not tolerate it changes nothing."""
    pool = node_pool("g6", [_req("karpenter.k8s.aws/instance-family", "In", "g6")])
    pod = kj.pod(
        "model",
        requests={"cpu": "3920m", "memory": "1Gi", GPU: 1},
        limits={GPU: 1},
        tolerations=[GPU_TOLERATION],
    )
    agent = {
        "containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]
    }
    tolerating = kj.daemon_set("agent", {**agent, "tolerations": [GPU_TOLERATION]})
    intolerant = kj.daemon_set("other", agent)

    def cheapest(daemon_sets: list[dict[str, Any]]) -> tuple[str, ...]:
        v = one(judge, instance_types=G6, node_pools=[pool], pods=[pod], daemon_sets=daemon_sets)
        assert v.scheduled, v.error
        return v.instance_types

    assert "g6.xlarge" in cheapest([])
    assert "g6.xlarge" in cheapest([intolerant])
    assert "g6.xlarge" not in cheapest([tolerating])


# ---------------------------------------------------------------------------------------------
# The `azure` build: Karpenter on Azure v1.14.2 (AKS node auto-provisioning) on core v1.14.0
# ---------------------------------------------------------------------------------------------
# Reasoned from Azure/karpenter-provider-azure v1.14.2 pkg/providers/instancetype/instancetype.go
# (computeRequirements, setRequirementsGPU, gpuTotalCount), instancetypes.go (createOfferings),
# pkg/apis/v1beta1/labels.go (init: capacity types on-demand and spot only), skewer v0.0.24's
# name parse and pkg/utils/supported-gpus.yaml. Shapes are round numbers; the names are real.

AZURE_ZONE = "eastus2-1"
SKU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
SKU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def _vm(name: str, *, cpu: int, memory_gib: int, gpus: int) -> dict[str, Any]:
    mib = str(memory_gib * 1024)
    return kj.instance_type(
        name,
        capacity={
            "cpu": cpu,
            "memory": f"{memory_gib}Gi",
            "ephemeral-storage": "128G",
            "pods": 30,
            GPU: gpus,
        },
        kube_reserved={"cpu": "100m", "memory": "1Gi"},
        eviction_threshold={"memory": "750Mi"},
        labels={
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux",
            "karpenter.azure.com/sku-cpu": str(cpu),
            "karpenter.azure.com/sku-memory": mib,
            "kubernetes.azure.com/sku-cpu": str(cpu),
            "kubernetes.azure.com/sku-memory": mib,
            "karpenter.azure.com/sku-gpu-count": str(gpus),
            "kubernetes.azure.com/os-sku": "Ubuntu",
        },
        offerings=[
            kj.offering("on-demand", AZURE_ZONE, price=float(cpu)),
            kj.offering("spot", AZURE_ZONE, price=cpu / 3),
        ],
    )


AZURE_SIZES = [
    _vm("Standard_NC24ads_A100_v4", cpu=24, memory_gib=220, gpus=1),
    _vm("Standard_ND96asr_v4", cpu=96, memory_gib=900, gpus=8),
    _vm("Standard_NC8as_T4_v3", cpu=8, memory_gib=56, gpus=1),
    _vm("Standard_D4s_v5", cpu=4, memory_gib=16, gpus=0),
]


def aks_node_pool(name: str, requirements: list[dict[str, Any]]) -> dict[str, Any]:
    """A NodePool shaped like the ones components/pools/nap.py emits."""
    pool = node_pool(name, requirements, taints=(SKU_TAINT,))
    pool["spec"]["template"]["spec"]["nodeClassRef"] = {
        "group": "karpenter.azure.com",
        "kind": "AKSNodeClass",
        "name": name,
    }
    return pool


@pytest.fixture(scope="module")
def azure_judge() -> Any:
    reason = kj.unavailable_reason("azure")
    if reason:
        pytest.skip(reason)
    try:
        kj.build(provider="azure")
    except kj.SourceUnavailable as e:
        pytest.skip(str(e))
    return lambda req: kj.run(req, provider="azure")


def _azure(judge: Any, requirements: list[dict[str, Any]], **pod: Any) -> kj.Verdict:
    pod.setdefault("tolerations", [SKU_TOLERATION])
    return one(
        judge,
        instance_types=AZURE_SIZES,
        node_pools=[aks_node_pool("nap", requirements)],
        pods=[gpu_pod(**pod)],
    )


def test_the_azure_build_links_karpenter_on_azure(azure_judge: Any) -> None:
    answer = azure_judge(
        kj.request(
            instance_types=AZURE_SIZES,
            node_pools=[aks_node_pool("nap", [])],
            pods=[gpu_pod(tolerations=[SKU_TOLERATION])],
        )
    )
    assert answer.modules[kj.AZURE_MODULE] == "v1.14.2"
    assert answer.modules["sigs.k8s.io/karpenter"] == "v1.14.0"  # what Azure v1.14.2 pins
    assert kj.AWS_MODULE not in answer.modules


def test_the_gpu_name_comes_from_the_size_name_so_nd96asr_v4_has_none(azure_judge: Any) -> None:
    """setRequirementsGPU inserts the name skewer parses as the accelerator: A100 for
    NC24ads_A100_v4, nothing for ND96asr_v4 (its name names no GPU), so a NodePool selecting
    A100 by name never gets the ND96asr_v4 although it has eight."""
    v = _azure(azure_judge, [_req("karpenter.azure.com/sku-gpu-name", "In", "A100")])
    assert v.instance_types == ("Standard_NC24ads_A100_v4",)
    v = _azure(azure_judge, [_req("karpenter.azure.com/sku-gpu-count", "Gt", "0")], gpus=8)
    assert v.instance_types == ("Standard_ND96asr_v4",)


def test_series_family_and_version_are_skewers_parse(azure_judge: Any) -> None:
    v = _azure(azure_judge, [_req("karpenter.azure.com/sku-series", "In", "NCas_v3")])
    assert v.instance_types == ("Standard_NC8as_T4_v3",)
    v = _azure(
        azure_judge,
        [
            _req("karpenter.azure.com/sku-family", "In", "N"),
            _req("karpenter.azure.com/sku-version", "In", "4"),
        ],
    )
    assert v.instance_types == ("Standard_NC24ads_A100_v4", "Standard_ND96asr_v4")


def test_spot_is_the_scale_set_priority_and_reserved_is_refused(azure_judge: Any) -> None:
    """createOfferings: a spot offering has kubernetes.azure.com/scalesetpriority=spot; the
    NodePool's `reserved` is no value Karpenter on Azure accepts (labels.go init), so a pool
    asking only for it is never Ready."""
    v = _azure(
        azure_judge,
        [_req("karpenter.azure.com/sku-gpu-name", "In", "T4")],
        node_selector={"kubernetes.azure.com/scalesetpriority": "spot"},
    )
    assert v.instance_types == ("Standard_NC8as_T4_v3",) and v.capacity_types == ("spot",)
    v = _azure(azure_judge, [_req("karpenter.sh/capacity-type", "In", "reserved")])
    assert not v.scheduled and v.error == "no dynamic nodepools found"


def test_the_untolerated_sku_taint_and_a_cpu_size_give_no_gpu_node(azure_judge: Any) -> None:
    v = _azure(
        azure_judge, [_req("karpenter.azure.com/sku-gpu-name", "In", "A100")], tolerations=[]
    )
    assert not v.scheduled and "did not tolerate" in v.error
    v = _azure(azure_judge, [_req("node.kubernetes.io/instance-type", "In", "Standard_D4s_v5")])
    assert not v.scheduled


def test_the_azure_build_refuses_what_karpenter_on_azure_computes(azure_judge: Any) -> None:
    size = _vm("Standard_NC8as_T4_v3", cpu=8, memory_gib=56, gpus=1)
    size["labels"]["karpenter.azure.com/sku-gpu-name"] = "T4"
    req = kj.request(instance_types=[size], node_pools=[aks_node_pool("nap", [])], pods=[gpu_pod()])
    with pytest.raises(kj.JudgeError, match="computed by the judge"):
        azure_judge(req)
    reserved = _vm("Standard_NC8as_T4_v3", cpu=8, memory_gib=56, gpus=1)
    reserved["offerings"] = [
        kj.offering("reserved", AZURE_ZONE, reservation_id="cr-1", reservation_capacity=1)
    ]
    req = kj.request(
        instance_types=[reserved], node_pools=[aks_node_pool("nap", [])], pods=[gpu_pod()]
    )
    with pytest.raises(kj.JudgeError, match="no reservation"):
        azure_judge(req)
