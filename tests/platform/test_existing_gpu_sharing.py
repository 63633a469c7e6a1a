"""`pools[i].gpuSharing` on existing nodes: the NodePatches carry the NVIDIA device plugin's config
label, the device plugin release this stack installs gets the config map entry, the placement
check counts GPUs x replicas (and the physical count when no device plugin config is in the
graph), and the refusals name the key. EKS time-slicing is refused where the device plugin this
stack installs does not run (disabled, Bottlerocket's own plugin)."""

import copy

import pytest
from config_bases import DEL, NS, mutated

from components.check import check
from components.model.errors import InputError
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform

PATCH = "kubernetes:core/v1:NodePatch"
RELEASE = "kubernetes:helm.sh/v3:Release"
LABEL = "nvidia.com/device-plugin.config"
PREDICTOR = "InferenceService/gi-isvc-models-torch-transformer/predictor"


def _sharing(**more):
    """The existing base with its a100 pool (2 GPUs per node) time-sliced into 4."""
    return mutated(
        "existing",
        {"pools[0].gpuSharing": {"strategy": "TIME_SHARING", "maxClientsPerGpu": 4}, **more},
    )


@pytest.fixture(scope="module")
def graph():
    from components.preview.mockrun import run_program

    config = _sharing(**{"inferenceServices[0].predictor.gpus": 1})
    return run_program(lambda: InferencePlatform("gi", load_spec(config))).as_graph()


def _isvc_gpus(graph, gpus):
    """The graph with the predictor asking for `gpus` (the config check refuses more than 8)."""
    out = copy.deepcopy(graph)
    for e in out:
        if e["type"].endswith(":InferenceService") and "spec" in e["inputs"]:
            quantity = {"nvidia.com/gpu": gpus}
            e["inputs"]["spec"]["predictor"]["triton"]["resources"] = {
                "requests": quantity,
                "limits": quantity,
            }
    return out


def test_node_patches_carry_the_config_label(graph):
    patches = {e["name"]: e["inputs"]["metadata"] for e in graph if e["type"] == PATCH}
    for node in ("gpu-node-1", "gpu-node-2"):
        assert patches[f"node-{node}"]["labels"] == {
            "gpu-inference.dev/pool": "a100",
            "pool": "infer-srv",
            LABEL: "time-sliced-4",
        }
        assert patches[f"node-{node}"]["annotations"]["gpu-inference.dev/gpus-per-node"] == "2"
    # The CPU pool is not time-sliced.
    assert patches["node-cpu-node-1"]["labels"] == {"gpu-inference.dev/pool": "cpu"}


def test_device_plugin_release_gets_the_config_map(graph):
    (plugin,) = [e for e in graph if e["type"] == RELEASE and "nvidia-device-plugin" in e["name"]]
    assert plugin["inputs"]["values"]["config"] == {
        "map": {
            "default": "version: v1\n",
            "time-sliced-4": "version: v1\nsharing:\n  timeSlicing:\n"
            "    failRequestsGreaterThanOne: true\n    resources:\n"
            "    - name: nvidia.com/gpu\n      replicas: 4\n",
        },
        "default": "default",
    }
    # It runs on the time-sliced pool (found by its pool label).
    terms = plugin["inputs"]["values"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "gpu-inference.dev/pool", "operator": "In", "values": ["a100"]}
            ]
        }
    ]


def test_check_counts_gpus_times_replicas(graph):
    report = check(graph)
    pools = {p.name: (p.gpus_per_node, [n.gpus for n in p.nodes]) for p in report.pools}
    assert pools == {"a100": (8, [8, 8]), "cpu": (0, [0])}
    lands = {w.resource: w.pools for w in report.workloads}
    assert lands[PREDICTOR] == ("a100",)
    assert report.errors == []
    # Up to 8 shares fit a node, but the plugin (failRequestsGreaterThanOne) refuses a container
    # more than one: the check says so (GI023).
    more = check(_isvc_gpus(graph, 3))
    assert {w.resource: w.pools for w in more.workloads}[PREDICTOR] == ("a100",)
    assert [(f.code, f.message) for f in more.errors] == [
        (
            "GI023",
            "container kserve-container asks 3 nvidia.com/gpu on pool a100, whose GPUs are "
            "shared (the NVIDIA device plugin time-slicing): at most 1 per container, else it "
            "fails at admission (UnexpectedAdmissionError)",
        )
    ]


def test_check_refuses_more_than_gpus_times_replicas(graph):
    report = check(_isvc_gpus(graph, 9))
    assert {w.resource: w.pools for w in report.workloads}[PREDICTOR] == ()
    assert [(f.code, f.resource, f.message) for f in report.errors] == [
        (
            "GI004",
            PREDICTOR,
            "requests 9 GPU(s) per pod but the nodes it can land on have fewer (a100: 8): it "
            "stays Pending",
        )
    ]


def test_the_label_without_the_plugin_config_is_the_physical_count(graph):
    # The node label alone does nothing: with no device plugin config in the graph each node
    # has its 2 GPUs.
    without = [
        e for e in _isvc_gpus(graph, 8) if not (e["type"] == RELEASE and "nvidia" in e["name"])
    ]
    report = check(without)
    assert {p.name: p.gpus_per_node for p in report.pools} == {"a100": 2, "cpu": 0}
    assert [(f.code, f.message) for f in report.errors] == [
        (
            "GI004",
            "requests 8 GPU(s) per pod but the nodes it can land on have fewer (a100: 2): it "
            "stays Pending",
        )
    ]


def test_config_check_uses_the_shared_count():
    spec = load_spec(_sharing())
    assert spec.pools[0].gpus == 8
    with pytest.raises(InputError) as e:
        load_spec(_sharing(**{"inferenceServices[0].predictor.gpus": 9}))
    assert str(e.value) == (
        f"{NS}:inferenceServices[0].predictor.gpus: 9 GPU(s) asked for but a node of pool "
        "'a100' has 8 (allowed: gpus at most 8)"
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"pools[0].gpuSharing.strategy": "MPS"},
            "pools[0].gpuSharing.strategy: strategy MPS on existing nodes: gpu-inference shares "
            "GPUs there with the NVIDIA device plugin's time-slicing (its MPS is experimental and "
            "needs GPU feature discovery) (allowed: TIME_SHARING)",
        ),
        (
            {"pools[1].gpuSharing": {"strategy": "TIME_SHARING", "maxClientsPerGpu": 2}},
            "pools[1].gpuSharing.maxClientsPerGpu: gpuSharing.maxClientsPerGpu is given for "
            "nodes with 0 GPUs (allowed: gpusPerNode above 0 to time-slice, or leave it out)",
        ),
        (
            {"addons": {"nvidiaDevicePlugin": {"enabled": False}}},
            "pools[0].gpuSharing: gpuSharing on existing nodes needs the NVIDIA device plugin "
            "this stack installs (the node label picks a config from its config map; without it "
            "the label does nothing) (allowed: addons.nvidiaDevicePlugin.enabled: true (the "
            "default), or leave gpuSharing out)",
        ),
        (
            {"pools[0].labels": {LABEL: "mine"}},
            f"pools[0].labels[\"{LABEL}\"]: label {LABEL}='mine' contradicts time-slicing, which "
            "sets it to 'time-sliced-4' (allowed: leave the label out "
            "(gpuSharing.maxClientsPerGpu sets it))",
        ),
        (
            {"pools[0].presentLabels": {LABEL: "t4-config"}},
            f"pools[0].presentLabels[\"{LABEL}\"]: label {LABEL}='t4-config' contradicts "
            "time-slicing, which sets it to 'time-sliced-4' (allowed: leave the label out "
            "(gpuSharing.maxClientsPerGpu sets it))",
        ),
    ],
    ids=["mps", "cpu-pool", "no-device-plugin", "label", "present-label"],
)
def test_refusals(changes, message):
    with pytest.raises(InputError) as e:
        load_spec(_sharing(**changes))
    assert str(e.value) == f"{NS}:{message}"


# EKS time-slicing rests on the same device plugin install.
KARPENTER_POOL = {
    "pools[0].instanceTypes": DEL,
    "pools[0].amiType": DEL,
    "pools[0].capacityType": DEL,
    "pools[0].gpusPerNode": DEL,
}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"addons": {"nvidiaDevicePlugin": {"enabled": False}}},
            "gpuSharing on EKS needs the NVIDIA device plugin this stack installs (the node label "
            "picks a config from its config map; without it the label does nothing) (allowed: "
            "addons.nvidiaDevicePlugin.enabled: true (the default), or leave gpuSharing out)",
        ),
        (
            {"pools[0].amiType": "BOTTLEROCKET_x86_64_NVIDIA"},
            "gpuSharing on Bottlerocket nodes, which run Bottlerocket's own NVIDIA device plugin: "
            "the time-slicing config of the plugin this stack installs does not reach them "
            "(allowed: an AL2023 NVIDIA AMI (the default), or leave gpuSharing out)",
        ),
        (
            {
                **KARPENTER_POOL,
                "pools[0].karpenter": {
                    "gpuNames": ["a10g"],
                    "nodeRole": "r",
                    "amiAlias": "bottlerocket@latest",
                },
            },
            "gpuSharing on Bottlerocket nodes, which run Bottlerocket's own NVIDIA device plugin: "
            "the time-slicing config of the plugin this stack installs does not reach them "
            "(allowed: an AL2023 NVIDIA AMI (the default), or leave gpuSharing out)",
        ),
    ],
    ids=["no-device-plugin", "bottlerocket-node-group", "bottlerocket-karpenter"],
)
def test_eks_refusals(changes, message):
    sharing = {"pools[0].gpuSharing": {"strategy": "TIME_SHARING", "maxClientsPerGpu": 2}}
    with pytest.raises(InputError) as e:
        load_spec(mutated("eks", {**sharing, **changes}))
    assert str(e.value) == f"{NS}:pools[0].gpuSharing: {message}"
    # Twin: the default device plugin and AMI (g5.xlarge: 1 A10G; Karpenter: up to 8).
    fine = {
        k: v
        for k, v in changes.items()
        if k.startswith("pools[0]") and (k != "pools[0].amiType" or v is DEL)
    }
    if "pools[0].karpenter" in fine:
        fine["pools[0].karpenter"] = {**fine["pools[0].karpenter"], "amiAlias": "al2023@latest"}
    assert load_spec(mutated("eks", {**sharing, **fine})).pools[0].gpus == (16 if fine else 2)
