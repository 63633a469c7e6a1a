"""The shared pool model (components.pools.pool): validation, effective labels/taints, placement,
replacement-safe naming. Pure: no Pulumi engine."""

import pytest

from components.model.errors import InputError
from components.model.scheduling import Placement, Taint, Toleration
from components.pools.pool import (
    GKE_RESOURCE_NAME_MAX,
    GPU_TAINT,
    POOL_LABEL,
    build_facts,
    cloud_name_prefix,
    eks_name_prefix,
    gke_node_pool_resource_name,
    normalize_taints,
    pool_placement,
    replacement_collides,
)


def facts(**kw):
    base = dict(
        cloud="eks",
        user_labels=None,
        cloud_labels={},
        taints=None,
        gpus_per_node=1,
        gpu_model="T4",
        min_nodes=0,
        max_nodes=2,
        spot=False,
    )
    base.update(kw)
    name = base.pop("name", "gpu-a")
    return build_facts(name, **base)


def test_default_gpu_pool_is_tainted_and_selected_by_its_pool_label():
    f = facts()
    assert f.labels == {POOL_LABEL: "gpu-a"}
    assert f.taints == (GPU_TAINT,)
    assert (GPU_TAINT.key, GPU_TAINT.value, GPU_TAINT.effect) == (
        "nvidia.com/gpu",
        "present",
        "NoSchedule",
    )
    assert f.placement.to_pod_spec() == {
        "nodeSelector": {POOL_LABEL: "gpu-a"},
        "tolerations": [
            {
                "key": "nvidia.com/gpu",
                "operator": "Equal",
                "value": "present",
                "effect": "NoSchedule",
            }
        ],
    }
    assert f.custom_gpu_taint is False
    # lands on its own nodes, not on another pool's GPU nodes nor on untainted CPU nodes' labels
    assert f.placement.admits(f.labels, f.taints)
    other = facts(name="gpu-b")
    assert not f.placement.admits(other.labels, other.taints)


def test_cpu_pool_has_no_taint_by_default_and_may_have_a_custom_one():
    f = facts(gpus_per_node=0, gpu_model=None)
    assert f.taints == ()
    assert f.placement.to_pod_spec() == {"nodeSelector": {POOL_LABEL: "gpu-a"}}
    g = facts(gpus_per_node=0, gpu_model=None, taints=[Taint("pre", "true", "NoSchedule")])
    assert g.taints == (Taint("pre", "true", "NoSchedule"),)
    assert g.custom_gpu_taint is False  # a CPU pool's taint is not a GPU taint


def test_custom_gpu_taint_is_recorded():
    f = facts(taints=[Taint("seldon-gpu-srv", "true", "NoSchedule")])
    assert f.custom_gpu_taint is True
    assert f.taints == (Taint("seldon-gpu-srv", "true", "NoSchedule"),)


def test_forced_cloud_taint_is_added_beside_custom_ones():
    f = facts(taints=[Taint("a", "1", "NoSchedule")], forced_taints=[GPU_TAINT])
    assert f.taints == (Taint("a", "1", "NoSchedule"), GPU_TAINT)
    same = facts(taints=[GPU_TAINT], forced_taints=[GPU_TAINT])
    assert same.taints == (GPU_TAINT,)


def test_select_labels_take_values_from_the_effective_labels_in_order():
    f = facts(
        user_labels={"pool": "infer-srv"},
        cloud_labels={"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"},
        select_labels=["pool", "cloud.google.com/gke-accelerator"],
    )
    assert list(f.placement.to_pod_spec()["nodeSelector"].items()) == [
        ("pool", "infer-srv"),
        ("cloud.google.com/gke-accelerator", "nvidia-a100-80gb"),
    ]
    assert f.selected == ("pool", "cloud.google.com/gke-accelerator")


def test_node_affinity_style():
    p = pool_placement({POOL_LABEL: "x", "pool": "p"}, [GPU_TAINT], ["pool"], "nodeAffinity")
    assert p.to_pod_spec()["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["p"]}]}
                ]
            }
        }
    }
    assert Placement.from_pod_spec(p.to_pod_spec()) == p


def test_prefer_no_schedule_taint_needs_no_toleration():
    f = facts(taints=[GPU_TAINT, Taint("soft", "x", "PreferNoSchedule")])
    assert f.placement.tolerations == (Toleration.for_taint(GPU_TAINT),)


def test_taints_accept_strings_and_dicts():
    assert normalize_taints(
        ["a=b:NoSchedule", {"key": "c", "value": "d", "effect": "NO_EXECUTE"}]
    ) == [
        Taint("a", "b", "NoSchedule"),
        Taint("c", "d", "NoExecute"),
    ]


BAD = [
    # (overrides, path, pieces of the message)
    ({"name": "GPU_A"}, "name", ["'GPU_A'", "DNS-1123"]),
    ({"name": "a" * 41}, "name", ["41 characters", "at most 40"]),
    (
        {"min_nodes": 3, "max_nodes": 2},
        "args.min_nodes",
        ["min_nodes 3 is above max_nodes 2", "min_nodes <= max_nodes"],
    ),
    ({"max_nodes": 0, "min_nodes": 0}, "args.max_nodes", ["max_nodes 0", "1 or more"]),
    ({"min_nodes": -1}, "args.min_nodes", ["-1 is negative", "0 (scale to zero)"]),
    ({"max_nodes": 2.5}, "args.max_nodes", ["2.5 is not a whole number"]),
    (
        {"user_labels": {POOL_LABEL: "x"}},
        f"args.labels.{POOL_LABEL}",
        ["reserved", "any other label key"],
    ),
    (
        {"user_labels": {"cloud.google.com/gke-accelerator": "nvidia-l4"}},
        "args.labels.cloud.google.com/gke-accelerator",
        ["'cloud.google.com'", "this pool does not set it"],
    ),
    (
        {
            "user_labels": {"k8s.amazonaws.com/accelerator": "nvidia-a10g"},
            "cloud_labels": {"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"},
        },
        "args.labels.k8s.amazonaws.com/accelerator",
        ["the pool sets it to 'nvidia-tesla-t4' itself"],
    ),
    (
        {"user_labels": {"node-role.kubernetes.io/gpu": ""}},
        "args.labels.node-role.kubernetes.io/gpu",
        ["'kubernetes.io'"],
    ),
    (
        {"taints": [Taint("a", "1", "NoSchedule"), Taint("a", "2", "NoSchedule")]},
        "args.taints[1]",
        ["repeats key 'a' with effect NoSchedule", "one taint per key and effect"],
    ),
    (
        {"taints": ["a=b:NoScheduled"]},
        "args.taints[0]",
        ["'NoScheduled' is not a Kubernetes effect"],
    ),
    ({"taints": [42]}, "args.taints[0]", ["42 is not a taint"]),
    ({"taints": "a=b:NoSchedule"}, "args.taints", ["is not a list of taints"]),
    (
        {"taints": []},
        "args.taints",
        ["GPU pool without a NoSchedule or NoExecute taint", "nvidia.com/gpu=present:NoSchedule"],
    ),
    (
        {"taints": [Taint("soft", "", "PreferNoSchedule")]},
        "args.taints",
        ["keeps them from scaling down"],
    ),
    (
        {
            "taints": [Taint("nvidia.com/gpu", "true", "NoSchedule")],
            "forced_taints": [GPU_TAINT],
            "forced_by": "GKE",
        },
        "args.taints[0]",
        ["contradicts nvidia.com/gpu=present:NoSchedule, which GKE sets on this pool itself"],
    ),
    (
        {"select_labels": ["pool"]},
        "args.select_labels[0]",
        ["'pool', which the pool's nodes do not carry", POOL_LABEL],
    ),
    ({"select_labels": []}, "args.select_labels", ["select no node label"]),
    ({"select_labels": "pool"}, "args.select_labels", ["not a list of label keys"]),
    (
        {"scheduling_style": "affinity"},
        "args.scheduling_style",
        ["'affinity' is not known", "nodeSelector or nodeAffinity"],
    ),
]


@pytest.mark.parametrize("overrides, path, pieces", BAD, ids=[b[1] + ":" + b[2][0] for b in BAD])
def test_bad_pool_inputs(overrides, path, pieces):
    with pytest.raises(InputError) as info:
        facts(**overrides)
    assert info.value.path == path
    for piece in pieces:
        assert piece in str(info.value)
    assert "allowed:" in str(info.value)


def test_reserved_prefix_allowed_with_the_value_the_pool_sets():
    f = facts(
        user_labels={"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"},
        cloud_labels={"k8s.amazonaws.com/accelerator": "nvidia-tesla-t4"},
    )
    assert f.labels["k8s.amazonaws.com/accelerator"] == "nvidia-tesla-t4"


# -- replacement-safe naming (issue 6.3) ---------------------------------------------------------


@pytest.mark.parametrize(
    "pool, gke, eks",
    [
        ("l4", "l4", "l4-"),
        ("infer-srv", "infer-srv", "infer-srv-"),
        (
            "a-very-long-pool-name-for-gpus",
            "a-very-long-pool-name-for-gpus",
            "a-very-long-pool-name-for-gpus-",
        ),
        ("abcdefghijkl-m", "abcdefghijkl-m", "abcdefghijkl-m-"),  # no '--'
        ("x" * 40, "x" * 24 + "-", "x" * 36 + "-"),
    ],
)
def test_cloud_names_fit_the_provider_limits(pool, gke, eks):
    got = gke_node_pool_resource_name(pool, pool)
    assert got.startswith(gke)
    assert len(got) <= GKE_RESOURCE_NAME_MAX  # Pulumi adds '-' and 7 hex: GKE's 40 at most
    assert len(got) + 8 <= 40
    assert eks_name_prefix(pool) == eks
    assert len(eks_name_prefix(pool)) + 26 <= 63  # EKS node group names: at most 63
    assert cloud_name_prefix(pool, 99).startswith(pool)


def test_gke_resource_names_are_distinct_per_component():
    """Two components on one pool name, or two long pool names with one head, still register
    distinct NodePool resources (a Pulumi URN is unique per name)."""
    assert gke_node_pool_resource_name("a", "l4") != gke_node_pool_resource_name("b", "l4")
    long_a, long_b = "p" * 30 + "-aaaaaaaa", "p" * 30 + "-bbbbbbbb"
    assert gke_node_pool_resource_name(long_a, long_a) != gke_node_pool_resource_name(
        long_b, long_b
    )


def test_replacement_collides_only_on_a_fixed_name():
    t = "gcp:container/nodePool:NodePool"
    fixed_old = {"name": "l4", "nodeConfig": {"machineType": "g2-standard-8"}}
    fixed_new = {"name": "l4", "nodeConfig": {"machineType": "g2-standard-12"}}
    assert replacement_collides(t, fixed_old, fixed_new)  # the negative control
    prefixed_old = {"namePrefix": "l4-", "nodeConfig": {"machineType": "g2-standard-8"}}
    prefixed_new = {"namePrefix": "l4-", "nodeConfig": {"machineType": "g2-standard-12"}}
    assert not replacement_collides(t, prefixed_old, prefixed_new)
    eks = "aws:eks/nodeGroup:NodeGroup"
    assert replacement_collides(eks, {"nodeGroupName": "g"}, {"nodeGroupName": "g"})
    assert not replacement_collides(
        eks, {"nodeGroupNamePrefix": "g-"}, {"nodeGroupNamePrefix": "g-"}
    )


def test_pool_components_have_a_component_provider_schema():
    """Other languages will use these classes: the analyzer must accept their args, and only
    Outputs may be annotated at class level (plain attributes are set in __init__)."""
    from pulumi.provider.experimental.component import ComponentProvider

    from components.pools.eks import EksGpuNodeGroup
    from components.pools.existing import ExistingGpuNodes
    from components.pools.gke import GkeGpuNodePool

    provider = ComponentProvider(
        [GkeGpuNodePool, EksGpuNodeGroup, ExistingGpuNodes], "gpu-inference", version="0.0.0"
    )
    defs = provider._component_defs
    assert sorted(defs) == ["EksGpuNodeGroup", "ExistingGpuNodes", "GkeGpuNodePool"]
    assert "selectLabels" in defs["GkeGpuNodePool"].inputs
    assert sorted(defs["EksGpuNodeGroup"].outputs) == ["cloudName", "podPlacement"]
