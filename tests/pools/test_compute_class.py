"""GkeGpuComputeClass under Pulumi mocks: the exact ComputeClass it emits (valid against the fields
of GKE's ComputeClass reference), the placement it hands out (lands on its nodes and nowhere else
in the placement check), refusals, and the check reading ComputeClasses written by hand."""

import copy

import pytest

from components.check import check
from components.model.errors import InputError
from components.pools.compute_class import (
    GkeGpuComputeClass,
    GkeGpuComputeClassArgs,
    validate_compute_class_args,
)
from components.preview.mockrun import run_program
from tests.computeclass_schema import validate_compute_class
from tests.conftest import owned

CC = "kubernetes:cloud.google.com/v1:ComputeClass"
GPU = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


def args(**kw) -> GkeGpuComputeClassArgs:
    base: dict = dict(accelerator="nvidia-l4", machine_type="g2-standard-12")
    base.update(kw)
    return GkeGpuComputeClassArgs(**base)


@pytest.fixture(scope="module")
def world():
    pools: dict[str, GkeGpuComputeClass] = {}

    def program():
        pools["l4"] = GkeGpuComputeClass(
            "l4",
            args(
                priorities=["reservation", "on-demand", "flex-start", "spot"],
                driver_version="latest",
                consolidation_delay_minutes=10,
            ),
        )
        pools["h100"] = GkeGpuComputeClass(
            "h100",
            args(
                accelerator="nvidia-h100-80gb",
                machine_type="a3-highgpu-8g",
                priorities=["reservation", "on-demand"],
                reservations=["h100-block"],
                labels={"team": "llm"},
                taints=[{"key": "team", "value": "llm", "effect": "NoSchedule"}],
            ),
        )

    return pools, run_program(program)


def test_compute_class_inputs_exact(world):
    _, g = world
    cr = g.one(CC, "l4")
    gpu = {"type": "nvidia-l4", "count": 1, "driverVersion": "latest"}
    shape = {"gpu": gpu, "machineType": "g2-standard-12"}
    assert cr.inputs["metadata"] == owned({"name": "l4"})
    assert cr.inputs["spec"] == {
        "priorities": [
            {**shape, "reservations": {"affinity": "AnyBestEffort"}, "spot": False},
            {**shape, "spot": False},
            {**shape, "flexStart": {"enabled": True}},
            {**shape, "spot": True},
        ],
        "nodePoolAutoCreation": {"enabled": True},
        "whenUnsatisfiable": "DoNotScaleUp",
        "activeMigration": {"optimizeRulePriority": False},
        "nodePoolConfig": {"nodeLabels": {"gpu-inference.dev/pool": "l4"}},
        "autoscalingPolicy": {"consolidationDelayMinutes": 10},
    }
    h100 = g.one(CC, "h100").inputs["spec"]
    assert h100["priorities"][0]["reservations"] == {
        "affinity": "Specific",
        "specific": [{"name": "h100-block"}],
    }
    assert h100["priorities"][0]["gpu"] == {"type": "nvidia-h100-80gb", "count": 8}
    assert h100["nodePoolConfig"] == {
        "nodeLabels": {"gpu-inference.dev/pool": "h100", "team": "llm"},
        "taints": [{"key": "team", "value": "llm", "effect": "NoSchedule"}],
    }


def test_emitted_compute_classes_validate_against_the_reference_fields(world):
    _, g = world
    for cr in g.of_type(CC):
        validate_compute_class(cr.inputs)


def test_the_field_schema_catches_a_misspelled_field(world):
    _, g = world
    bad = copy.deepcopy(g.one(CC, "l4").inputs)
    bad["spec"]["priorities"][2]["flexstart"] = bad["spec"]["priorities"][2].pop("flexStart")
    with pytest.raises(AssertionError, match="flexstart"):
        validate_compute_class(bad)


def test_placement_selects_the_class_and_tolerates_gke_taints(world):
    pools, _ = world
    assert pools["l4"].placement.to_pod_spec() == {
        "nodeSelector": {"cloud.google.com/compute-class": "l4"},
        "tolerations": [
            GPU,
            {
                "key": "cloud.google.com/compute-class",
                "operator": "Equal",
                "value": "l4",
                "effect": "NoSchedule",
            },
        ],
    }
    assert pools["h100"].gpus_per_node == 8
    assert pools["h100"].facts.gpu_model == "H100 80GB"


def _deployment(name, fragment, gpus, wired):
    container = (
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}} if gpus else {"name": "c"}
    )
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "annotations": {"gpu-inference.dev/pool": wired}},
            "spec": {"replicas": 0, "template": {"spec": {**fragment, "containers": [container]}}},
        },
    }


def test_placement_lands_on_the_class_and_nowhere_else(world):
    pools, g = world
    report = check(
        [*g.as_graph(), _deployment("llm", pools["l4"].placement.to_pod_spec(), 1, "l4")]
    )
    assert next(w for w in report.workloads if w.name == "llm").pools == ("l4",)
    assert report.errors == []
    h100 = check(
        [*g.as_graph(), _deployment("big", pools["h100"].placement.to_pod_spec(), 8, "h100")]
    )
    assert next(w for w in h100.workloads if w.name == "big").pools == ("h100",)
    assert h100.errors == []


def test_a_gpu_the_class_cannot_provide_is_a_finding(world):
    pools, g = world
    fragment = copy.deepcopy(pools["l4"].placement.to_pod_spec())
    fragment["nodeSelector"]["cloud.google.com/gke-accelerator"] = "nvidia-h100-80gb"
    report = check([*g.as_graph(), _deployment("llm", fragment, 1, "l4")])
    assert [(f.code, f.resource) for f in report.errors] == [("GI001", "Deployment/llm")]


def test_spot_priority_nodes_carry_the_spot_label(world):
    _, g = world
    (pool,) = [p for p in check(g.as_graph()).pools if p.name == "l4"]
    assert [n.labels.get("cloud.google.com/gke-spot") for n in pool.nodes] == [
        None,
        None,
        None,
        "true",
    ]
    assert pool.spot is False and pool.min_nodes == 0 and pool.max_nodes is None


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            dict(machine_type="a2-highgpu-1g"),
            "args.machine_type: a2-highgpu-1g comes with nvidia-tesla-a100 GPUs, not nvidia-l4; "
            "nvidia-l4 attaches to g2-standard-* machines (allowed: accelerator "
            "nvidia-tesla-a100 on a2-highgpu-1g, or nvidia-l4 on g2-standard-* machines)",
        ),
        (
            dict(priorities=["spot", "spot"]),
            "args.priorities[1]: priority 'spot' is listed twice (allowed: "
            "reservation, on-demand, flex-start, spot, each once)",
        ),
        (
            dict(priorities=["dws"]),
            "args.priorities[0]: 'dws' is not a valid value (allowed: "
            "reservation, on-demand, flex-start, spot)",
        ),
        (
            dict(reservations=["r1"]),
            "args.reservations: reservations are named but no priority is `reservation` "
            "(allowed: add reservation to priorities, or leave reservations out)",
        ),
        (
            dict(driver_version="LATEST"),
            "args.driver_version: 'LATEST' is not a valid value (did you mean 'latest'?) "
            "(allowed: default, latest)",
        ),
        (
            dict(consolidation_delay_minutes=0),
            "args.consolidation_delay_minutes: 0 is out of range (allowed: a number >= 1)",
        ),
        (
            dict(boot_disk_size_gb=5),
            "args.boot_disk_size_gb: 5 is out of range (allowed: a number >= 10)",
        ),
        (
            dict(class_name="gke-l4"),
            "args.class_name: ComputeClass name 'gke-l4' starts with gke or autopilot, which GKE "
            "reserves (allowed: a name that does not start with gke or autopilot)",
        ),
        (
            dict(taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]),
            "args.taints[0]: taint nvidia.com/gpu=true:NoSchedule contradicts "
            "nvidia.com/gpu=present:NoSchedule, which GKE sets on this pool itself (allowed: "
            "nvidia.com/gpu=present:NoSchedule (or leave it out: it is declared for you), or "
            "another key)",
        ),
    ],
    ids=[
        "machine",
        "twice",
        "unknown",
        "reservations",
        "driver",
        "delay",
        "disk",
        "reserved-name",
        "gpu-taint",
    ],
)
def test_bad_arguments(kw, message):
    with pytest.raises(InputError) as e:
        validate_compute_class_args("l4", args(**kw))
    assert str(e.value) == message


def test_error_names_the_component():
    with pytest.raises(InputError, match=r"^GkeGpuComputeClass\('x'\)\.args\.accelerator: "):
        run_program(lambda: GkeGpuComputeClass("x", args(accelerator="nvidia-l5")))


def test_check_reads_a_hand_written_compute_class():
    cc = {
        "type": CC,
        "name": "mixed",
        "inputs": {
            "metadata": {"name": "a100"},
            "spec": {
                "priorities": [
                    {"machineType": "a2-highgpu-2g", "spot": True},
                    {
                        "gpu": {"type": "nvidia-tesla-a100", "count": 1},
                        "machineType": "a2-highgpu-1g",
                    },
                ],
                "whenUnsatisfiable": "DoNotScaleUp",
            },
        },
    }
    (pool,) = check([cc]).pools
    assert (pool.name, pool.provider, pool.gpu, pool.gpus_per_node) == ("a100", "gke", True, 2)
    assert pool.accelerator == "nvidia-tesla-a100"
    assert pool.nodes[0].labels == {
        "cloud.google.com/compute-class": "a100",
        "cloud.google.com/gke-accelerator": "nvidia-tesla-a100",
        "cloud.google.com/gke-accelerator-count": "2",
        "cloud.google.com/gke-spot": "true",
        "kubernetes.io/os": "linux",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/arch": "amd64",
    }
    # a pod selecting the class without tolerating its taint lands nowhere
    report = check(
        [
            cc,
            _deployment(
                "cpu", {"nodeSelector": {"cloud.google.com/compute-class": "a100"}}, 0, "a100"
            ),
        ]
    )
    assert next(w for w in report.workloads if w.name == "cpu").pools == ()


def test_boot_disk_size_is_every_prioritys_storage():
    plan = validate_compute_class_args("l4", args(boot_disk_size_gb=500))
    rules = plan.compute_class["spec"]["priorities"]
    assert [r["storage"] for r in rules] == [{"bootDiskSize": 500}] * len(rules)
    validate_compute_class(
        {"apiVersion": "cloud.google.com/v1", "kind": "ComputeClass", **plan.compute_class}
    )
