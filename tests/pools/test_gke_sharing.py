"""Shared GPUs on GKE node pools: time-sharing / MPS (`gpu_sharing_config`) and MIG
(`gpu_partition_size`). The NodePool gets exactly those inputs, the pool's `nvidia.com/gpu` per
node follows (GPUs x clients x MIG instances), GKE's labels are modelled, and the placement check
reads the same from any graph."""

import pytest

from components.check import check
from components.model.errors import InputError
from components.pools.gke import GkeGpuNodePool, GkeGpuNodePoolArgs, validate_gke_pool_args
from components.preview.mockrun import run_program

NP = "gcp:container/nodePool:NodePool"


def args(**kw) -> GkeGpuNodePoolArgs:
    base: dict = dict(
        cluster="c", machine_type="g2-standard-8", accelerator="nvidia-l4", max_nodes=2
    )
    base.update(kw)
    return GkeGpuNodePoolArgs(**base)


@pytest.fixture(scope="module")
def world():
    pools = {}

    def program():
        pools["ts"] = GkeGpuNodePool(
            "ts", args(gpu_sharing_strategy="TIME_SHARING", max_shared_clients_per_gpu=4)
        )
        pools["mig"] = GkeGpuNodePool(
            "mig",
            args(
                machine_type="a2-highgpu-2g",
                accelerator="nvidia-tesla-a100",
                gpu_partition_size="1g.5gb",
            ),
        )
        pools["mps"] = GkeGpuNodePool(
            "mps", args(gpu_sharing_strategy="MPS", max_shared_clients_per_gpu=2)
        )

    return pools, run_program(program)


def test_node_pool_inputs(world):
    _, g = world
    ts = g.one(NP, "ts").inputs["nodeConfig"]["guestAccelerators"]
    assert ts == [
        {
            "type": "nvidia-l4",
            "count": 1,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
            "gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
        }
    ]
    mig = g.one(NP, "mig").inputs["nodeConfig"]["guestAccelerators"]
    assert mig == [
        {
            "type": "nvidia-tesla-a100",
            "count": 2,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
            "gpuPartitionSize": "1g.5gb",
        }
    ]
    # GKE sets the sharing labels itself: they are not declared on the pool
    assert g.one(NP, "ts").inputs["nodeConfig"]["labels"] == {"gpu-inference.dev/pool": "ts"}


def test_allocatable_and_labels_follow(world):
    pools, _ = world
    assert pools["ts"].gpus_per_node == 4
    assert pools["ts"].labels["cloud.google.com/gke-gpu-sharing-strategy"] == "time-sharing"
    assert pools["ts"].labels["cloud.google.com/gke-max-shared-clients-per-gpu"] == "4"
    assert pools["ts"].labels["cloud.google.com/gke-accelerator-count"] == "1"
    assert pools["mps"].labels["cloud.google.com/gke-gpu-sharing-strategy"] == "mps"
    assert pools["mig"].gpus_per_node == 14  # 2 A100 40GB x 7 instances of 1g.5gb
    assert pools["mig"].labels["cloud.google.com/gke-gpu-partition-size"] == "1g.5gb"


def test_the_check_reads_the_same(world):
    pools, g = world
    by_name = {p.name: p for p in check(g.as_graph()).pools}
    for name in ("ts", "mig", "mps"):
        assert by_name[name].gpus_per_node == pools[name].gpus_per_node, name
        assert (
            by_name[name].labels
            == {k: v for k, v in pools[name].labels.items()} | by_name[name].labels
        )  # the check knows every label the pool does


def _deployment(name, fragment, gpus, wired):
    container = {"name": "c", "resources": {"limits": {"nvidia.com/gpu": gpus}}}
    return {
        "type": "kubernetes:apps/v1:Deployment",
        "name": name,
        "inputs": {
            "metadata": {"name": name, "annotations": {"gpu-inference.dev/pool": wired}},
            "spec": {"replicas": 0, "template": {"spec": {**fragment, "containers": [container]}}},
        },
    }


def test_more_than_the_shared_allocatable_is_a_finding(world):
    pools, g = world
    ok = check([*g.as_graph(), _deployment("w", pools["ts"].placement.to_pod_spec(), 1, "ts")])
    assert [f.code for f in ok.errors] == []
    too_many = check(
        [*g.as_graph(), _deployment("w", pools["ts"].placement.to_pod_spec(), 5, "ts")]
    )
    assert [f.code for f in too_many.errors] == ["GI004"]


@pytest.mark.parametrize(("gpus", "codes"), [(1, []), (2, ["GI023"]), (4, ["GI023"])])
def test_a_time_shared_pool_takes_one_gpu_per_container(world, gpus, codes):
    """GKE refuses a container asking more than one shared GPU at admission ("at most 1
    nvidia.com/gpu can be requested on GPU nodes"), though the node advertises 4."""
    pools, g = world
    report = check(
        [*g.as_graph(), _deployment("w", pools["ts"].placement.to_pod_spec(), gpus, "ts")]
    )
    assert [f.code for f in report.errors] == codes
    assert {w.resource: w.pools for w in report.workloads}["Deployment/w"] == ("ts",)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (
            dict(gpu_partition_size="1g.5gb"),
            "args.gpu_partition_size: nvidia-l4 does not support MIG partitions (allowed: "
            "nvidia-a100-80gb, nvidia-h100-80gb, nvidia-h100-mega-80gb, nvidia-h200-141gb, "
            "nvidia-rtx-pro-6000, nvidia-tesla-a100)",
        ),
        (
            dict(
                machine_type="a3-highgpu-1g",
                accelerator="nvidia-h100-80gb",
                gpu_partition_size="1g.5gb",
            ),
            "args.gpu_partition_size: MIG profile '1g.5gb' is not one nvidia-h100-80gb offers "
            "(allowed: 1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)",
        ),
        (
            dict(gpu_sharing_strategy="TIME_SHARING", max_shared_clients_per_gpu=64),
            "args.max_shared_clients_per_gpu: 64 is out of range (allowed: a number <= 48)",
        ),
        (
            dict(max_shared_clients_per_gpu=4),
            "args.max_shared_clients_per_gpu: max_shared_clients_per_gpu is given without a "
            "gpu_sharing_strategy (allowed: gpu_sharing_strategy TIME_SHARING or MPS with it, "
            "or neither)",
        ),
        (
            dict(gpu_sharing_strategy="SLICES", max_shared_clients_per_gpu=4),
            "args.gpu_sharing_strategy: 'SLICES' is not a valid value (allowed: TIME_SHARING, MPS)",
        ),
        (
            dict(machine_type="e2-standard-8", accelerator=None, gpu_partition_size="1g.5gb"),
            "args.gpu_partition_size: gpu_partition_size is given on a CPU pool (no accelerator) "
            "(allowed: an accelerator to share or partition, or leave it out)",
        ),
    ],
    ids=["l4-mig", "h100-profile", "clients", "no-strategy", "strategy", "cpu"],
)
def test_bad_arguments(kw, message):
    with pytest.raises(InputError) as e:
        validate_gke_pool_args("p", args(**kw))
    assert str(e.value) == message
