"""Issue 13: placements of a workload's own, Servers on Seldon's built-in ServerConfigs, GPU
instance types that make a GPU pool, and component errors relocated to the stack key that fed
them."""

from __future__ import annotations

import pytest
from config_bases import DEL, mutated

from components.model.errors import InputError
from components.platform import workloads as wl
from components.platform.config_errors import relocate
from components.platform.derive import relocate as relocate_arg
from components.platform.load import load_spec
from components.pools.eks import EksGpuNodeGroupArgs
from components.pools.gke import GkeGpuNodePoolArgs
from components.pools.karpenter import KarpenterGpuNodePoolArgs

NS = "gpu-inference"


def test_a_placement_of_its_own_is_exactly_what_it_lists():
    spec = load_spec(
        mutated(
            "gke",
            {
                "inferenceServices[1].predictor.pool": DEL,
                "inferenceServices[1].predictor.placement": {
                    "nodeSelector": {"myLabelName": "myLabelValue"},
                    "tolerations": [{"key": "t", "value": "v", "effect": "NoSchedule"}],
                },
            },
        )
    )
    comp = spec.inference_services[1].predictor
    assert comp.pool_names == ()
    assert comp.placement is not None
    assert comp.placement.node_selector == {"myLabelName": "myLabelValue"}
    assert [t.toleration.to_dict() for t in comp.placement.tolerations] == [
        {"key": "t", "operator": "Equal", "value": "v", "effect": "NoSchedule"}
    ]


def test_an_empty_placement_runs_anywhere_and_names_no_pool():
    spec = load_spec(
        mutated(
            "gke",
            {
                "inferenceServices[1].predictor.pool": DEL,
                "inferenceServices[1].predictor.placement": {},
            },
        )
    )
    paths = [path for path, _, _, names in spec.workloads() if not names]
    assert paths == [f"{NS}:inferenceServices[1].predictor"]


def test_knative_flags_are_checked_for_an_own_placement():
    with pytest.raises(InputError) as caught:
        load_spec(
            mutated(
                "gke",
                {
                    "inferenceServices[1].predictor.pool": DEL,
                    "inferenceServices[1].predictor.placement": {
                        "tolerations": [{"key": "t", "operator": "Exists"}]
                    },
                    "knative.features": {"kubernetes.podspec-tolerations": "disabled"},
                    "knative.allowDisablingPodspecFlags": True,
                    # the other services would trip the same flag first
                    "inferenceServices[0].deploymentMode": "RawDeployment",
                    "inferenceServices[0].predictor.minReplicas": 1,
                    "inferenceServices[0].transformer.minReplicas": 1,
                },
            )
        )
    assert caught.value.path == f'{NS}:knative.features["kubernetes.podspec-tolerations"]'
    assert "InferenceService 'sklearn-iris'" in str(caught.value)


def test_a_server_on_a_built_in_server_config_with_capabilities_and_no_pool():
    spec = load_spec(
        mutated(
            "gke",
            {
                "seldon.servers[1]": {
                    "name": "cap-server",
                    "serverConfig": "triton",
                    "capabilities": ["model-on-gpu"],
                    "placement": {},
                },
                "seldon.models[1].server": "cap-server",
            },
        )
    )
    server = spec.seldon.servers[1]
    assert (server.server_config, server.extra_capabilities, server.pool_names) == (
        "triton",
        ["model-on-gpu"],
        (),
    )


def test_replacing_a_built_in_server_config_on_purpose():
    spec = load_spec(
        mutated(
            "gke",
            {
                "seldon.serverConfigs[0].name": "mlserver",
                "seldon.serverConfigs[0].replacesBuiltin": True,
            },
        )
    )
    assert spec.seldon.server_configs[0].name == "mlserver"


@pytest.mark.parametrize(
    ("instance", "accelerator", "gpus"),
    [("g4dn.xlarge", "nvidia-tesla-t4", 1), ("g5.12xlarge", "nvidia-a10g", 4)],
)
def test_eks_gpu_instance_types_make_a_gpu_pool(instance, accelerator, gpus):
    """No accelerator / gpusPerNode given: both come from the catalog (a GPU pool, tainted)."""
    spec = load_spec(
        mutated(
            "eks",
            {
                "pools[0].instanceTypes": [instance],
                "pools[0].gpusPerNode": DEL,
            },
        )
    )
    pool = spec.pools[0]
    assert (pool.is_gpu, pool.gpu_name, pool.node_gpus) == (True, accelerator, gpus)


def test_the_gke_gpu_taint_as_gke_sets_it_is_accepted():
    spec = load_spec(
        mutated(
            "gke",
            {"pools[1].taints": [{"key": "nvidia.com/gpu", "value": "present"}]},
        )
    )
    assert [t.to_dict() for t in spec.pools[1].node_taints] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]


# A pool component's error path -> the stack key it is relocated to (derived from its Args).
POOL_RELOCATED = [
    (
        "GkeGpuNodePool('l4').args.labels.cloud.google.com/gke-accelerator",
        GkeGpuNodePoolArgs,
        None,
        'gpu-inference:pools[0].labels["cloud.google.com/gke-accelerator"]',
    ),
    (
        "GkeGpuNodePool('l4').args.gpu_count",
        GkeGpuNodePoolArgs,
        None,
        "gpu-inference:pools[0].gpusPerNode",
    ),
    (
        "GkeGpuNodePool('l4').args.taints[1]",
        GkeGpuNodePoolArgs,
        None,
        "gpu-inference:pools[0].taints[1]",
    ),
    ("GkeGpuNodePool('l4').name", GkeGpuNodePoolArgs, None, "gpu-inference:pools[0].name"),
    (
        "GkeGpuNodePool('l4').args.location",
        GkeGpuNodePoolArgs,
        None,
        "gpu-inference:cluster.location",
    ),
    (
        "GkeGpuNodePool('l4').args.max_shared_clients_per_gpu",
        GkeGpuNodePoolArgs,
        None,
        "gpu-inference:pools[0].gpuSharing.maxClientsPerGpu",
    ),
    (
        "EksGpuNodeGroup('t4').args.scheduling_style",
        EksGpuNodeGroupArgs,
        None,
        "gpu-inference:pools[0]",
    ),
    (
        "KarpenterGpuNodePool('h100').args.capacity_types[1]",
        KarpenterGpuNodePoolArgs,
        "karpenter",
        "gpu-inference:pools[0].karpenter.capacityTypes[1]",
    ),
    (
        "KarpenterGpuNodePool('h100').args.max_nodes",
        KarpenterGpuNodePoolArgs,
        "karpenter",
        "gpu-inference:pools[0].maxNodes",
    ),
]


@pytest.mark.parametrize(
    ("given", "args", "block", "want"), POOL_RELOCATED, ids=[r[0] for r in POOL_RELOCATED]
)
def test_pool_component_errors_are_relocated_to_the_stack_key(given, args, block, want):
    err = relocate_arg(InputError("bad", "good", given), f"{NS}:pools[0]", args, block, NS)
    assert (err.path, err.problem, err.allowed) == (want, "bad", "good")


# A workload component's error path -> the stack key it is relocated to.
RELOCATED = [
    (
        "InferenceService('llm').predictor.containers[0].image",
        "inferenceServices[0]",
        wl.InferenceService,
        "gpu-inference:inferenceServices[0].predictor.containers[0].image",
    ),
    (
        "InferenceService('llm').predictor.serviceAccountName",
        "inferenceServices[0]",
        wl.InferenceService,
        "gpu-inference:inferenceServices[0].predictor",
    ),
    (
        "InferenceService('llm').predictor.env.A.B",
        "inferenceServices[0]",
        wl.InferenceService,
        'gpu-inference:inferenceServices[0].predictor.env["A.B"]',
    ),
    (
        "SeldonServer('s').containers[0].image",
        "seldon.servers[0]",
        wl.Server,
        "gpu-inference:seldon.servers[0]",
    ),
    (
        "SeldonServerConfig('c').containers[2].image",
        "seldon.serverConfigs[0]",
        wl.ServerConfig,
        "gpu-inference:seldon.serverConfigs[0].containers[2].image",
    ),
]


@pytest.mark.parametrize(
    ("given", "key", "model", "want"), RELOCATED, ids=[r[0] for r in RELOCATED]
)
def test_component_errors_are_relocated_to_the_stack_key(given, key, model, want):
    err = relocate(InputError("bad", "good", given), f"{NS}:{key}", model)
    assert (err.path, err.problem, err.allowed) == (want, "bad", "good")
    assert str(err) == f"{want}: bad (allowed: good)"


def test_add_on_component_errors_are_relocated_to_the_add_on_key():
    from components.serving.kserve_install import KServeInstallArgs

    base = f"{NS}:addons.kserve"
    for given, want in (
        ("KServeInstall('k').args.crd_chart", f"{base}.chart.crd"),
        ("KServeInstall('k').args.version", f"{base}.version"),
        ("KServeInstall('k').args.ingress", f"{NS}:knative.ingress"),
    ):
        err = relocate_arg(InputError("bad", "good", given), base, KServeInstallArgs, None, NS)
        assert err.path == want
