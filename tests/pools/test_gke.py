"""GkeGpuNodePool under Pulumi mocks: exact NodePool inputs, the placement it hands out (seed 004),
secure defaults, replacement-safe naming, and the errors for bad arguments."""

import itertools
import re

import pytest

from components.model.errors import InputError
from components.model.scheduling import Taint
from components.pools.gke import GkeGpuNodePool, GkeGpuNodePoolArgs, plan_gke_pool
from components.pools.pool import (
    GPU_TAINT,
    POOL_LABEL,
    gke_node_pool_resource_name,
    replacement_collides,
)
from components.preview.mockrun import run_program

NODE_POOL = "gcp:container/nodePool:NodePool"
SEED_004_TAINT = Taint("seldon-gpu-srv", "true", "NoSchedule")


def seed004_args(**kw) -> GkeGpuNodePoolArgs:
    base = dict(
        cluster="inference",
        location="us-central1",
        machine_type="a2-ultragpu-2g",
        accelerator="nvidia-a100-80gb",
        labels={"pool": "infer-srv"},
        taints=[SEED_004_TAINT],
        select_labels=["pool", "cloud.google.com/gke-accelerator"],
        max_nodes=2,
    )
    base.update(kw)
    return GkeGpuNodePoolArgs(**base)


@pytest.fixture(scope="module")
def world():
    pools: dict[str, GkeGpuNodePool] = {}

    def program():
        pools["srv"] = GkeGpuNodePool(
            "infer-srv",
            seed004_args(service_account="gke-gpu-nodes@proj-1.iam.gserviceaccount.com"),
        )
        pools["l4"] = GkeGpuNodePool(
            "l4-spot",
            GkeGpuNodePoolArgs(
                cluster="inference",
                machine_type="g2-standard-24",
                accelerator="nvidia-l4",
                spot=True,
                min_nodes=1,
                max_nodes=4,
                node_locations=["us-central1-a", "us-central1-b"],
                gpu_driver_version="LATEST",
                image_streaming=True,
                project="proj-1",
                scheduling_style="nodeAffinity",
            ),
        )
        pools["cpu"] = GkeGpuNodePool(
            "pre",
            GkeGpuNodePoolArgs(
                cluster="inference",
                machine_type="e2-standard-8",
                taints=[Taint("pre-processing", "true", "NoSchedule")],
                max_nodes=3,
            ),
        )

    return run_program(program), pools


def test_seed004_node_pool_inputs(world):
    g, _ = world
    np = g.one(NODE_POOL, "infer-srv")
    assert np.inputs["cluster"] == "inference"
    assert np.inputs["location"] == "us-central1"
    # Neither name nor namePrefix: pulumi-gcp auto-names `name` (resource name + 7 hex) and
    # the Terraform schema declares no ConflictsWith, so a namePrefix beside the auto-name fails
    # create in expandNodePool ("Cannot specify both name and name_prefix for a node_pool").
    assert "name" not in np.inputs and "namePrefix" not in np.inputs
    assert np.inputs["autoscaling"] == {
        "totalMinNodeCount": 0,
        "totalMaxNodeCount": 2,
        "locationPolicy": "ANY",
    }
    assert np.inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
    nc = np.inputs["nodeConfig"]
    assert nc["machineType"] == "a2-ultragpu-2g"
    assert nc["guestAccelerators"] == [
        {
            "type": "nvidia-a100-80gb",
            "count": 2,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
        }
    ]
    # GKE's own GPU taint is declared beside the custom one (terraform-provider-google #7928),
    # in the cloud's casing.
    assert nc["taints"] == [
        {"key": "seldon-gpu-srv", "value": "true", "effect": "NO_SCHEDULE"},
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
    ]
    # GKE adds the accelerator labels itself: they are not declared.
    assert nc["labels"] == {POOL_LABEL: "infer-srv", "pool": "infer-srv"}
    assert nc["spot"] is False
    assert nc["diskSizeGb"] == 100
    assert "gcfsConfig" not in nc


def test_secure_defaults(world):
    g, _ = world
    nc = g.one(NODE_POOL, "infer-srv").inputs["nodeConfig"]
    assert nc["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert nc["shieldedInstanceConfig"] == {
        "enableSecureBoot": True,
        "enableIntegrityMonitoring": True,
    }
    assert nc["serviceAccount"] == "gke-gpu-nodes@proj-1.iam.gserviceaccount.com"
    assert nc["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
    cpu = g.one(NODE_POOL, "pre").inputs["nodeConfig"]
    assert "serviceAccount" not in cpu and "oauthScopes" not in cpu
    assert cpu["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_seed004_placement(world):
    _, pools = world
    srv = pools["srv"]
    # Seed 004's Server / ServerConfig podSpec: nodeSelector pool + gke-accelerator, the
    # seldon-gpu-srv toleration ... plus the nvidia.com/gpu toleration: on GKE the pool's nodes
    # also carry GKE's own `nvidia.com/gpu=present:NoSchedule` taint (the seed's node shows only
    # the custom taint, but GKE adds this one to every GPU node), and a pod that does not
    # tolerate it lands only if ExtendedResourceToleration adds it, i.e. only when the pod
    # requests GPUs. Tolerating it explicitly keeps the placement exact either way.
    assert srv.placement.to_pod_spec() == {
        "nodeSelector": {
            "pool": "infer-srv",
            "cloud.google.com/gke-accelerator": "nvidia-a100-80gb",
        },
        "tolerations": [
            {"effect": "NoSchedule", "key": "seldon-gpu-srv", "operator": "Equal", "value": "true"},
            {
                "effect": "NoSchedule",
                "key": "nvidia.com/gpu",
                "operator": "Equal",
                "value": "present",
            },
        ],
    }
    # Without the GPU toleration, the seed's exact fragment: what a GPU-requesting pod relies on.
    assert srv.placement.without_tolerations(["nvidia.com/gpu"]).to_pod_spec() == {
        "nodeSelector": {
            "pool": "infer-srv",
            "cloud.google.com/gke-accelerator": "nvidia-a100-80gb",
        },
        "tolerations": [
            {"effect": "NoSchedule", "key": "seldon-gpu-srv", "operator": "Equal", "value": "true"}
        ],
    }
    assert srv.facts.labels == {
        POOL_LABEL: "infer-srv",
        "pool": "infer-srv",
        "cloud.google.com/gke-accelerator": "nvidia-a100-80gb",
        "cloud.google.com/gke-accelerator-count": "2",
    }
    assert srv.taints == [SEED_004_TAINT, GPU_TAINT]
    assert srv.gpus_per_node == 2
    assert srv.facts.gpu_model and "A100" in srv.facts.gpu_model
    assert srv.facts.custom_gpu_taint is True
    assert srv.placement.admits(srv.labels, srv.taints)


def test_seed004_affinity_style():
    plan = plan_gke_pool("infer-srv", seed004_args(scheduling_style="nodeAffinity"))
    assert plan.facts.placement.to_pod_spec()["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "pool", "operator": "In", "values": ["infer-srv"]},
                            {
                                "key": "cloud.google.com/gke-accelerator",
                                "operator": "In",
                                "values": ["nvidia-a100-80gb"],
                            },
                        ]
                    }
                ]
            }
        }
    }


def test_spot_l4_pool(world):
    g, pools = world
    np = g.one(NODE_POOL, "l4-spot")
    assert np.inputs["nodeLocations"] == ["us-central1-a", "us-central1-b"]
    assert np.inputs["project"] == "proj-1"
    assert np.inputs["autoscaling"] == {
        "totalMinNodeCount": 1,
        "totalMaxNodeCount": 4,
        "locationPolicy": "ANY",
    }
    nc = np.inputs["nodeConfig"]
    assert nc["spot"] is True
    assert nc["gcfsConfig"] == {"enabled": True}
    assert nc["guestAccelerators"] == [
        {
            "type": "nvidia-l4",
            "count": 2,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
        }
    ]
    assert nc["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    l4 = pools["l4"]
    assert l4.labels["cloud.google.com/gke-spot"] == "true"
    assert l4.labels["cloud.google.com/gke-accelerator-count"] == "2"
    assert l4.facts.spot is True and l4.facts.custom_gpu_taint is False
    assert l4.placement.to_pod_spec() == {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": POOL_LABEL, "operator": "In", "values": ["l4-spot"]}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [
            {
                "key": "nvidia.com/gpu",
                "operator": "Equal",
                "value": "present",
                "effect": "NoSchedule",
            }
        ],
    }


def test_cpu_pool(world):
    g, pools = world
    np = g.one(NODE_POOL, "pre")
    nc = np.inputs["nodeConfig"]
    assert "guestAccelerators" not in nc
    assert nc["taints"] == [{"key": "pre-processing", "value": "true", "effect": "NO_SCHEDULE"}]
    assert np.inputs["autoscaling"]["locationPolicy"] == "BALANCED"
    cpu = pools["cpu"]
    assert cpu.gpus_per_node == 0 and cpu.facts.gpu_model is None
    assert cpu.labels == {POOL_LABEL: "pre"}
    # every child is parented to the component
    comp = g.one("gpu-inference:index:GkeGpuNodePool", "pre")
    assert np.parent == comp.urn


def test_cpu_pool_without_taints_declares_none():
    plan = plan_gke_pool("cpu", GkeGpuNodePoolArgs(cluster="c", machine_type="n2-standard-4"))
    assert plan.node_pool["nodeConfig"]["taints"] == []
    assert plan.facts.placement.to_pod_spec() == {"nodeSelector": {POOL_LABEL: "cpu"}}


def test_replacement_forcing_changes_never_collide():
    """Issue 6.3: changing machine type, accelerator, taints or spot replaces the node pool; the
    replacement is created before the old pool is deleted, so it must not ask for the old name."""
    variants = {
        "base": dict(machine_type="g2-standard-8", accelerator="nvidia-l4"),
        "machine": dict(machine_type="g2-standard-12", accelerator="nvidia-l4"),
        "accelerator": dict(
            machine_type="n1-standard-8", accelerator="nvidia-tesla-t4", gpu_count=1
        ),
        "taints": dict(
            machine_type="g2-standard-8",
            accelerator="nvidia-l4",
            taints=[Taint("dedicated", "l4", "NoSchedule")],
        ),
        "spot": dict(machine_type="g2-standard-8", accelerator="nvidia-l4", spot=True),
    }

    def program():
        for key, kw in variants.items():
            GkeGpuNodePool(key, GkeGpuNodePoolArgs(cluster="c", pool_name="l4", **kw))

    g = run_program(program)
    inputs = {r.name: r.inputs for r in g.of_type(NODE_POOL)}
    assert set(inputs) == {gke_node_pool_resource_name(key, "l4") for key in variants}
    assert len(inputs) == len(variants)
    for old, new in itertools.permutations(inputs, 2):
        assert inputs[old]["nodeConfig"] != inputs[new]["nodeConfig"]
        assert not replacement_collides(NODE_POOL, inputs[old], inputs[new]), (old, new)
    assert not any("name" in i or "namePrefix" in i for i in inputs.values())


@pytest.mark.parametrize(
    "component, pool",
    [
        ("l4", "l4"),
        ("infer-srv", "infer-srv"),
        ("x" * 32, "x" * 32),
        ("a" * 40, "a" * 40),
        ("abcdefghijklmnopqrstuvw-xyz", "abcdefghijklmnopqrstuvw-xyz"),
        ("my-l4-pool-component", "l4"),
    ],
)
def test_auto_name_fits_gke_limit(component, pool):
    """pulumi-gcp auto-names `<resource name>-<7 hex>` and checks only its own 255 limit
    (SetAutonaming(255, "-")): the resource name must leave room for GKE's 40."""
    g = run_program(
        lambda: GkeGpuNodePool(
            component,
            GkeGpuNodePoolArgs(
                cluster="c", machine_type="g2-standard-8", accelerator="nvidia-l4", pool_name=pool
            ),
        )
    )
    (np,) = g.of_type(NODE_POOL)
    assert len(np.name) + len("-") + 7 <= 40
    assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", np.name)
    assert np.name.startswith(pool[:24].rstrip("-"))
    if component == pool and len(pool) <= 32:
        assert np.name == pool


BAD = [
    (
        {"accelerator": "nvidia-a100"},
        "args.accelerator",
        ["'nvidia-a100' is not offered by GKE", "nvidia-l4"],
    ),
    ({"machine_type": "g2-standard-8"}, "args.accelerator", ["g2-standard-8", "nvidia-a100-80gb"]),
    ({"gpu_count": 4}, "args.gpu_count", ["a count of 4 does not fit"]),
    (
        {"machine_type": "n1-standard-8", "accelerator": "nvidia-tesla-t4"},
        "args.gpu_count",
        ["no GPU count given"],
    ),
    (
        {"machine_type": "n1-standard-8", "accelerator": "nvidia-tesla-t4", "gpu_count": 3},
        "args.gpu_count",
        ["3 is not one of them"],
    ),
    (
        {
            "accelerator": None,
            "taints": None,
            "select_labels": None,
            "machine_type": "g2-standard-8",
        },
        "args.machine_type",
        ["a CPU pool must not use a GPU machine type"],
    ),
    (
        {
            "accelerator": None,
            "machine_type": "e2-standard-4",
            "gpu_count": 1,
            "taints": None,
            "select_labels": None,
        },
        "args.gpu_count",
        ["without an accelerator"],
    ),
    (
        {"gpu_driver_version": "latest"},
        "args.gpu_driver_version",
        ["'latest' is not a valid value (did you mean 'LATEST'?)", "LATEST"],
    ),
    ({"location_policy": "ROUND_ROBIN"}, "args.location_policy", ["ANY, BALANCED"]),
    ({"disk_size_gb": 5}, "args.disk_size_gb", ["a number >= 10"]),
    ({"node_locations": ["us-central1"]}, "args.node_locations[0]", ["not a zone name"]),
    ({"node_locations": []}, "args.node_locations", ["the list is empty"]),
    (
        {"service_account": "nodes@gmail.com"},
        "args.service_account",
        ["not a service account email"],
    ),
    ({"pool_name": "1pool"}, "args.pool_name", ["'1pool'", "DNS-1035"]),
    (
        {"taints": [Taint("nvidia.com/gpu", "true", "NoSchedule")]},
        "args.taints[0].value",
        ["uses the key GKE taints its GPU nodes with itself (nvidia.com/gpu=present:NoSchedule)"],
    ),
    (
        {"labels": {"cloud.google.com/gke-accelerator": "nvidia-l4"}},
        "args.labels.cloud.google.com/gke-accelerator",
        ["the pool sets it to 'nvidia-a100-80gb' itself"],
    ),
    ({"select_labels": ["cloud.google.com/gke-spot"]}, "args.select_labels[0]", ["do not carry"]),
    ({"min_nodes": 3, "max_nodes": 1}, "args.min_nodes", ["above max_nodes 1"]),
]


@pytest.mark.parametrize("overrides, path, pieces", BAD, ids=[b[1] for b in BAD])
def test_bad_gke_args(overrides, path, pieces):
    with pytest.raises(InputError) as info:
        plan_gke_pool("infer-srv", seed004_args(**overrides))
    assert info.value.path == path
    for piece in pieces:
        assert piece in str(info.value), str(info.value)


def test_error_names_the_component_and_nothing_is_registered():
    registered = []

    def program():
        try:
            GkeGpuNodePool("bad", seed004_args(gpu_count=3))
        except InputError as e:
            registered.append(e)

    g = run_program(program)
    assert g.resources == []
    assert registered[0].path == "GkeGpuNodePool('bad').args.gpu_count"


def test_gke_metadata_can_be_turned_off_for_a_cluster_without_workload_identity():
    args = GkeGpuNodePoolArgs(cluster="c", machine_type="n2-standard-4", gke_metadata=False)
    assert "workloadMetadataConfig" not in plan_gke_pool("cpu", args).node_pool["nodeConfig"]
    args.gke_metadata = True
    assert plan_gke_pool("cpu", args).node_pool["nodeConfig"]["workloadMetadataConfig"] == {
        "mode": "GKE_METADATA"
    }
