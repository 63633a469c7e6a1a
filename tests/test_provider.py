"""The components as a Pulumi component package: the schema other languages get, and that a
component constructed through the provider registers exactly what the Python class registers."""

import json

import pytest

from components.model.scheduling import Placement, Taint, Toleration
from components.pools.eks import EksGpuNodeGroup, EksGpuNodeGroupArgs
from components.pools.gke import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.provider import PUBLIC_COMPONENTS, component_provider
from components.serving.inference_service import (
    InferenceService,
    InferenceServiceArgs,
    PredictorArgs,
)
from components.serving.knative import KnativeServing, KnativeServingArgs
from components.serving.llm_inference_service import (
    LLMInferenceService,
    LLMInferenceServiceArgs,
    LLMRouterArgs,
    LLMWorkerArgs,
    LLMWorkloadArgs,
)
from components.serving.seldon import SeldonServer, SeldonServerArgs
from components.serving.workload import ContainerArgs


@pytest.fixture(scope="module")
def provider():
    return component_provider()


@pytest.fixture(scope="module")
def schema(provider):
    return json.loads(provider.schema)


def test_schema_lists_every_public_component(schema):
    assert sorted(schema["resources"]) == sorted(
        f"gpu-inference:index:{c.__name__}" for c in PUBLIC_COMPONENTS
    )
    for resource in schema["resources"].values():
        assert resource["isComponent"] is True


@pytest.mark.parametrize(
    ("component", "inputs", "required"),
    [
        (
            "GkeGpuNodePool",
            {
                "cluster",
                "machineType",
                "accelerator",
                "minNodes",
                "maxNodes",
                "spot",
                "taints",
                "labels",
                "selectLabels",
            },
            {"cluster", "machineType"},
        ),
        (
            "EksGpuNodeGroup",
            {"clusterName", "subnetIds", "instanceTypes", "amiType", "capacityType", "taints"},
            {"clusterName", "subnetIds", "instanceTypes"},
        ),
        (
            "ExistingGpuNodes",
            {"nodes", "gpusPerNode", "labels", "presentLabels", "taints"},
            {"nodes"},
        ),
        ("KnativeServing", {"mode", "ingress", "features", "allowDisablingPodspecFlags"}, set()),
        (
            "KarpenterInstall",
            {
                "clusterName",
                "version",
                "roleArn",
                "podIdentity",
                "interruptionQueue",
                "systemPools",
            },
            set(),
        ),
        (
            "InferenceService",
            {
                "name",
                "namespace",
                "deploymentMode",
                "predictor",
                "transformer",
                "explainer",
                "knativeFeatures",
            },
            {"predictor"},
        ),
        (
            "SeldonServer",
            {"name", "serverConfig", "replicas", "extraCapabilities", "containers", "placement"},
            set(),
        ),
        ("SeldonModel", {"name", "storageUri", "requirements", "server"}, set()),
        (
            "LLMInferenceService",
            {
                "name",
                "namespace",
                "modelUri",
                "decode",
                "prefill",
                "router",
                "model",
                "maxModelLen",
            },
            {"modelUri", "decode"},
        ),
        ("LLMServingInstall", {"gatewayApiCrds", "envoyGateway", "leaderWorkerSet"}, set()),
        ("NvidiaDevicePlugin", {"poolTaints", "version"}, set()),
    ],
)
def test_component_inputs(schema, component, inputs, required):
    resource = schema["resources"][f"gpu-inference:index:{component}"]
    assert inputs <= set(resource["inputProperties"])
    assert set(resource.get("requiredInputs", [])) == required


def test_placement_and_its_parts_are_schema_types(schema):
    types = schema["types"]
    assert set(types["gpu-inference:index:Placement"]["properties"]) == {
        "nodeSelector",
        "tolerations",
        "nodeAffinity",
    }
    tolerations = types["gpu-inference:index:Placement"]["properties"]["tolerations"]
    assert tolerations["items"]["$ref"].endswith("gpu-inference:index:Toleration")
    assert set(types["gpu-inference:index:Taint"]["properties"]) == {"key", "value", "effect"}
    predictor = types["gpu-inference:index:PredictorArgs"]["properties"]
    assert predictor["placement"]["$ref"].endswith("gpu-inference:index:Placement")


def test_pool_outputs(schema):
    assert "cloudName" in schema["resources"]["gpu-inference:index:GkeGpuNodePool"]["properties"]
    assert {"name", "namespace", "url"} <= set(
        schema["resources"]["gpu-inference:index:InferenceService"]["properties"]
    )


def children(graph):
    return sorted(
        (r.type, r.name, json.dumps(r.inputs, sort_keys=True)) for r in graph.resources if r.custom
    )


PLACEMENT_INPUT = {
    "nodeSelector": {"pool": "infer-srv"},
    "tolerations": [
        {"key": "seldon-gpu-srv", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ],
}
PLACEMENT = Placement(
    {"pool": "infer-srv"}, [Toleration("seldon-gpu-srv", "Equal", "true", "NoSchedule")]
)

CASES = [
    (
        "GkeGpuNodePool",
        {
            "cluster": "dev",
            "machineType": "g2-standard-8",
            "accelerator": "nvidia-l4",
            "maxNodes": 3,
            "spot": True,
            "taints": [{"key": "team", "value": "ml", "effect": "NoSchedule"}],
        },
        lambda: GkeGpuNodePool(
            "x",
            GkeGpuNodePoolArgs(
                cluster="dev",
                machine_type="g2-standard-8",
                accelerator="nvidia-l4",
                max_nodes=3,
                spot=True,
                taints=[Taint("team", "ml", "NoSchedule")],
            ),
        ),
    ),
    (
        "EksGpuNodeGroup",
        {
            "clusterName": "prod",
            "subnetIds": ["subnet-a"],
            "instanceTypes": ["g5.xlarge"],
            "maxNodes": 4,
        },
        lambda: EksGpuNodeGroup(
            "x",
            EksGpuNodeGroupArgs(
                cluster_name="prod",
                subnet_ids=["subnet-a"],
                instance_types=["g5.xlarge"],
                max_nodes=4,
            ),
        ),
    ),
    (
        "KnativeServing",
        {"mode": "patch", "features": {"multi-container": "enabled"}},
        lambda: KnativeServing(
            "x", KnativeServingArgs(mode="patch", features={"multi-container": "enabled"})
        ),
    ),
    (
        "InferenceService",
        {
            "name": "llm",
            "namespace": "models",
            "predictor": {
                "modelFormat": "huggingface",
                "storageUri": "gs://m/llm",
                "gpus": 1,
                "placement": PLACEMENT_INPUT,
            },
        },
        lambda: InferenceService(
            "x",
            InferenceServiceArgs(
                name="llm",
                namespace="models",
                predictor=PredictorArgs(
                    model_format="huggingface",
                    storage_uri="gs://m/llm",
                    gpus=1,
                    placement=PLACEMENT,
                ),
            ),
        ),
    ),
    (
        "SeldonServer",
        {
            "name": "gpu",
            "serverConfig": "mlserver",
            "extraCapabilities": ["model-on-gpu"],
            "placement": PLACEMENT_INPUT,
            "containers": [{"name": "mlserver", "gpus": 1, "memory": "16Gi"}],
        },
        lambda: SeldonServer(
            "x",
            SeldonServerArgs(
                name="gpu",
                server_config="mlserver",
                extra_capabilities=["model-on-gpu"],
                placement=PLACEMENT,
                containers=[ContainerArgs(name="mlserver", gpus=1, memory="16Gi")],
            ),
        ),
    ),
]


CASES.append(
    (
        "LLMInferenceService",
        {
            "name": "qwen",
            "namespace": "models",
            "modelUri": "hf://Qwen/Qwen2.5-72B-Instruct",
            "model": "qwen2.5-72b",
            "decode": {
                "gpus": 8,
                "tensor": 4,
                "data": 4,
                "dataLocal": 2,
                "placement": PLACEMENT_INPUT,
                "worker": {},
            },
            "router": {"schedulerPlacement": {"nodeSelector": {"role": "router"}}},
        },
        lambda: LLMInferenceService(
            "x",
            LLMInferenceServiceArgs(
                name="qwen",
                namespace="models",
                model_uri="hf://Qwen/Qwen2.5-72B-Instruct",
                model="qwen2.5-72b",
                decode=LLMWorkloadArgs(
                    gpus=8,
                    tensor=4,
                    data=4,
                    data_local=2,
                    placement=PLACEMENT,
                    worker=LLMWorkerArgs(),
                ),
                router=LLMRouterArgs(scheduler_placement=Placement({"role": "router"})),
            ),
        ),
    )
)


@pytest.mark.parametrize(("component", "inputs", "direct"), CASES, ids=[c[0] for c in CASES])
def test_construct_through_the_provider_matches_python(run, provider, component, inputs, direct):
    via_provider = run(
        lambda: provider.construct("x", f"gpu-inference:index:{component}", inputs, None)
    )
    via_python = run(direct)
    assert children(via_provider) == children(via_python)
    assert children(via_python)


def test_numbers_arrive_as_doubles_and_whole_ones_are_ints(run, provider):
    """The engine carries every number as a double: `gpusPerNode: 4` from TypeScript reaches the
    provider as 4.0 (found by tests/e2e/test_other_language.py). Whole doubles become the ints the
    Args ask for, also in nested dataclasses whose module postpones annotations (Toleration)."""
    via_provider = run(
        lambda: provider.construct(
            "x",
            "gpu-inference:index:InferenceService",
            {
                "name": "llm",
                "namespace": "models",
                "predictor": {
                    "modelFormat": "huggingface",
                    "storageUri": "gs://m/llm",
                    "gpus": 1.0,
                    "minReplicas": 2.0,
                    "placement": {
                        "nodeSelector": {"pool": "infer-srv"},
                        "tolerations": [
                            {
                                "key": "spot",
                                "operator": "Exists",
                                "effect": "NoExecute",
                                "tolerationSeconds": 300.0,
                            }
                        ],
                    },
                },
            },
            None,
        )
    )
    via_python = run(
        lambda: InferenceService(
            "x",
            InferenceServiceArgs(
                name="llm",
                namespace="models",
                predictor=PredictorArgs(
                    model_format="huggingface",
                    storage_uri="gs://m/llm",
                    gpus=1,
                    min_replicas=2,
                    placement=Placement(
                        {"pool": "infer-srv"},
                        [Toleration("spot", "Exists", None, "NoExecute", toleration_seconds=300)],
                    ),
                ),
            ),
        )
    )
    assert children(via_provider) == children(via_python)
    assert '"minReplicas": 2,' in children(via_provider)[0][2]


def test_a_fractional_number_is_still_refused(run, provider):
    with pytest.raises(Exception, match=r"gpus_per_node: expected an integer, got 1\.5"):
        run(
            lambda: provider.construct(
                "x",
                "gpu-inference:index:ExistingGpuNodes",
                {"nodes": ["gpu-node-1"], "gpusPerNode": 1.5},
                None,
            )
        )


POOLS = [
    "GkeGpuNodePool",
    "EksGpuNodeGroup",
    "ExistingGpuNodes",
    "KarpenterGpuNodePool",
    "GkeGpuComputeClass",
    "GkeAutopilotGpuPool",
]


@pytest.mark.parametrize("component", POOLS)
def test_every_pool_outputs_its_placement(schema, component):
    """A program in another language wires a workload to a pool with `pool.podPlacement`."""
    props = schema["resources"][f"gpu-inference:index:{component}"]["properties"]
    assert props["podPlacement"]["$ref"] == "#/types/gpu-inference:index:Placement"


def test_the_placement_output_is_the_pools_placement_under_schema_names(run, provider):
    """Through the provider: camelCase names at every depth (the stock provider maps only a dict's
    top level), label keys as they are, None fields left out."""
    states = []

    def program():
        result = provider.construct(
            "gpu",
            "gpu-inference:index:ExistingGpuNodes",
            {
                "nodes": ["gpu-node-1"],
                "gpusPerNode": 4,
                "schedulingStyle": "nodeAffinity",
                "labels": {"site.example/team": "ml"},
            },
            None,
        )
        result.state["podPlacement"].apply(states.append)

    run(program)
    (state,) = states
    assert state == {
        "nodeSelector": {},
        "tolerations": [
            {
                "key": "nvidia.com/gpu",
                "operator": "Equal",
                "value": "present",
                "effect": "NoSchedule",
            }
        ],
        "nodeAffinity": {
            "required": [
                {
                    "matchExpressions": [
                        {"key": "gpu-inference.dev/pool", "operator": "In", "values": ["gpu"]}
                    ],
                    "matchFields": [],
                }
            ],
            "preferred": [],
        },
    }


def test_a_workload_takes_the_placement_output_as_its_placement(run, provider):
    """The round trip a TypeScript program makes: pool.podPlacement into predictor.placement
    registers what the Python program registers with pool.placement."""
    from components.pools.existing import ExistingGpuNodes, ExistingGpuNodesArgs

    pool_inputs = {"nodes": ["gpu-node-1"], "gpusPerNode": 4, "schedulingStyle": "nodeAffinity"}
    placed: list = []
    run(
        lambda: (
            provider.construct("gpu", "gpu-inference:index:ExistingGpuNodes", pool_inputs, None)
            .state["podPlacement"]
            .apply(placed.append)
        )
    )
    predictor = {"modelFormat": "huggingface", "storageUri": "gs://m/llm", "gpus": 1}

    def via_provider():
        provider.construct(
            "x",
            "gpu-inference:index:InferenceService",
            {
                "name": "llm",
                "namespace": "models",
                "predictor": {**predictor, "placement": placed[0]},
            },
            None,
        )

    def via_python():
        pool = ExistingGpuNodes(
            "gpu",
            ExistingGpuNodesArgs(["gpu-node-1"], 4, scheduling_style="nodeAffinity"),
        )
        InferenceService(
            "x",
            InferenceServiceArgs(
                name="llm",
                namespace="models",
                predictor=PredictorArgs(
                    model_format="huggingface",
                    storage_uri="gs://m/llm",
                    gpus=1,
                    placement=pool.placement,
                ),
            ),
        )

    isvc = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
    got = [c for c in children(run(via_provider)) if c[0] == isvc]
    want = [c for c in children(run(via_python)) if c[0] == isvc]
    assert got == want and "nodeAffinity" in got[0][2]


def test_the_schema_carries_what_the_registry_shows(schema):
    import tomllib

    from tests.conftest import ROOT

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert schema["name"] == "gpu-inference"
    assert schema["displayName"] == "GPU Inference"
    assert schema["version"] == project["version"]
    assert schema["description"] == project["description"]
    assert schema["license"] == project["license"] == "Apache-2.0"
    assert schema["keywords"] == ["category/infrastructure", "kind/component", *project["keywords"]]
    assert set(schema) >= {"resources", "types", "language"}


def test_registry_metadata_takes_the_repository_from_the_project_urls():
    from components.provider import registry_metadata

    project = {"version": "1.2.3", "description": "d", "license": {"text": "MIT"}}
    assert registry_metadata(project) == {
        "displayName": "GPU Inference",
        "description": "d",
        "keywords": ["category/infrastructure", "kind/component"],
        "license": "MIT",
        "version": "1.2.3",
    }
    urls = {"Repository": "https://example.org/acme/gpu-inference"}
    got = registry_metadata({**project, "urls": urls})
    assert got["repository"] == got["homepage"] == urls["Repository"]
    got = registry_metadata({**project, "urls": {**urls, "Homepage": "https://acme.example"}})
    assert (got["repository"], got["homepage"]) == (urls["Repository"], "https://acme.example")


def test_the_installed_metadata_is_read_where_there_is_no_pyproject(monkeypatch, tmp_path):
    from components import provider as module

    monkeypatch.setattr(module, "PYPROJECT", tmp_path / "pyproject.toml")
    got = module.project_metadata()
    assert (got["name"], got["version"]) == ("gpu-inference", schema_version())
    assert "kserve" in got["keywords"]


def schema_version() -> str:
    import tomllib

    from tests.conftest import ROOT

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_package_page_names_every_component():
    from tests.conftest import ROOT

    page = (ROOT / "provider" / "README.md").read_text()
    assert [c.__name__ for c in PUBLIC_COMPONENTS if f"`{c.__name__}`" not in page] == []
