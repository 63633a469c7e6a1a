"""Seldon Core 2 ServerConfig / Server / Model: bodies, capability matching, placement on a GPU
pool, warnings for what the API server would refuse, and bad input."""

from __future__ import annotations

import pytest

from components.model.errors import InputError
from components.model.scheduling import Placement, Taint
from components.preview.mockrun import run_program
from components.serving.seldon import (
    BUILTIN_CAPABILITIES,
    SeldonModel,
    SeldonModelArgs,
    SeldonServer,
    SeldonServerArgs,
    SeldonServerConfig,
    SeldonServerConfigArgs,
    body_warnings,
    model_body,
    model_fits_server,
    server_body,
    server_capabilities,
    server_config_body,
)
from components.serving.workload import ContainerArgs
from tests.conftest import CRDS, owned

GPU_LABELS = {"gpu-inference/pool": "a100", "cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}
GPU_TAINTS = [Taint("gpu-inference/pool", "a100"), Taint("nvidia.com/gpu", "present")]
CPU_LABELS = {"gpu-inference/pool": "cpu"}
CPU_TAINTS: list[Taint] = []


def gpu_pool(style: str = "nodeSelector") -> Placement:
    return Placement.for_pool(GPU_LABELS, GPU_TAINTS, style)


def gpu_server_args(**kw) -> SeldonServerArgs:
    base = dict(
        name="mlserver-gpu",
        server_config="mlserver",
        replicas=1,
        extra_capabilities=["model-on-gpu"],
        containers=[ContainerArgs("mlserver", gpus=1, cpu="8", memory="64Gi")],
        placement=gpu_pool(),
    )
    base.update(kw)
    return SeldonServerArgs(**base)


# ---------------------------------------------------------------------------------------------
# Bodies
# ---------------------------------------------------------------------------------------------


def test_server_body_on_gpu_pool() -> None:
    body = server_body("gpu", gpu_server_args(min_replicas=1, max_replicas=3))
    assert body == {
        "apiVersion": "mlops.seldon.io/v1alpha1",
        "kind": "Server",
        "metadata": {"name": "mlserver-gpu", "namespace": "seldon-mesh"},
        "spec": {
            "replicas": 1,
            "minReplicas": 1,
            "maxReplicas": 3,
            "serverConfig": "mlserver",
            "extraCapabilities": ["model-on-gpu"],
            "podSpec": {
                "nodeSelector": GPU_LABELS,
                "tolerations": [
                    {
                        "key": "gpu-inference/pool",
                        "operator": "Equal",
                        "value": "a100",
                        "effect": "NoSchedule",
                    },
                    {
                        "key": "nvidia.com/gpu",
                        "operator": "Equal",
                        "value": "present",
                        "effect": "NoSchedule",
                    },
                ],
                "containers": [
                    {
                        "name": "mlserver",
                        "resources": {
                            "requests": {"nvidia.com/gpu": 1, "cpu": "8", "memory": "64Gi"},
                            "limits": {"nvidia.com/gpu": 1, "cpu": "8", "memory": "64Gi"},
                        },
                    }
                ],
            },
        },
    }
    assert body_warnings(body) == []


def test_server_config_capabilities_join_an_existing_agent_container() -> None:
    body = server_config_body(
        "cfg",
        SeldonServerConfigArgs(
            containers=[
                ContainerArgs("agent", image="seldonio/seldon-agent:2.6.0", env={"A": "1"}),
                ContainerArgs("mlserver", image="seldonio/mlserver:1.3.5"),
            ],
            capabilities=["model-on-gpu"],
            model_repository_storage="10Gi",
            placement=gpu_pool("nodeAffinity"),
        ),
    )
    spec = body["spec"]
    # Added to mlserver's own list (seed 004: "add capability to the list"), not replacing it.
    assert spec["podSpec"]["containers"][0]["env"] == [
        {"name": "A", "value": "1"},
        {
            "name": "SELDON_SERVER_CAPABILITIES",
            "value": "mlserver,alibi-detect,alibi-explain,huggingface,lightgbm,mlflow,python,"
            "sklearn,spark-mlib,xgboost,model-on-gpu",
        },
    ]
    assert spec["volumeClaimTemplates"] == [
        {
            "name": "model-repository",
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "10Gi"}},
            },
        }
    ]
    assert "affinity" in spec["podSpec"] and "nodeSelector" not in spec["podSpec"]
    assert body_warnings(body) == []


def test_server_config_capabilities_replace_only_when_asked() -> None:
    args = SeldonServerConfigArgs(
        containers=[
            ContainerArgs("agent", image="seldonio/seldon-agent:2.6.0"),
            ContainerArgs("triton", image="nvcr.io/nvidia/tritonserver:24.04-py3"),
        ],
        capabilities=["onnx", "model-on-gpu"],
    )
    env = server_config_body("t", args)["spec"]["podSpec"]["containers"][0]["env"]
    assert env == [
        {
            "name": "SELDON_SERVER_CAPABILITIES",
            "value": "triton,dali,fil,onnx,openvino,python,pytorch,tensorflow,tensorrt,model-on-gpu",
        }
    ]
    args.replace_capabilities = True
    env = server_config_body("t", args)["spec"]["podSpec"]["containers"][0]["env"]
    assert env == [{"name": "SELDON_SERVER_CAPABILITIES", "value": "onnx,model-on-gpu"}]


def test_model_body() -> None:
    body = model_body(
        "m",
        SeldonModelArgs(
            name="llama3",
            namespace="models",
            storage_uri="gs://models/llama3",
            requirements=["model-on-gpu", "vllm"],
            replicas=2,
            min_replicas=1,
            max_replicas=4,
            memory="20Gi",
        ),
    )
    assert body["metadata"] == {"name": "llama3", "namespace": "models"}
    assert body["spec"] == {
        "storageUri": "gs://models/llama3",
        "requirements": ["model-on-gpu", "vllm"],
        "replicas": 2,
        "minReplicas": 1,
        "maxReplicas": 4,
        "memory": "20Gi",
    }


def test_warnings_for_what_kubernetes_refuses_later() -> None:
    server = server_body(
        "s",
        SeldonServerArgs(containers=[ContainerArgs("mlserver", gpus=1, gpu_limit=2)], replicas=0),
    )
    warnings = body_warnings(server)
    assert any("spec.serverConfig is left out" in w for w in warnings)
    assert any("nvidia.com/gpu request 1 differs from its limit 2" in w for w in warnings)
    assert any("replicas 0" in w for w in warnings)
    assert any("spec.storageUri" in w for w in body_warnings(model_body("m", SeldonModelArgs())))


# ---------------------------------------------------------------------------------------------
# A Server on a GPU pool, a Model reaching it by capability
# ---------------------------------------------------------------------------------------------


def test_model_reaches_gpu_server_by_capability() -> None:
    config = server_config_body(
        "mlserver",
        SeldonServerConfigArgs(
            name="mlserver",
            containers=[ContainerArgs("mlserver", image="seldonio/mlserver:1.3.5")],
            capabilities=["mlserver", "sklearn"],
            agent_image="seldonio/seldon-agent:2.6.0",
        ),
    )
    gpu = server_body("gpu", gpu_server_args())
    cpu = server_body("cpu", SeldonServerArgs(name="mlserver-cpu", server_config="mlserver"))
    assert server_capabilities(gpu, config) == [*BUILTIN_CAPABILITIES["mlserver"], "model-on-gpu"]
    llm = model_body(
        "llm", SeldonModelArgs(storage_uri="gs://m/llm", requirements=["model-on-gpu"])
    )
    iris = model_body("iris", SeldonModelArgs(storage_uri="gs://m/iris", requirements=["sklearn"]))
    pinned = model_body("p", SeldonModelArgs(storage_uri="gs://m/p", server="mlserver-cpu"))
    assert model_fits_server(llm, gpu, config)
    assert not model_fits_server(llm, cpu, config)
    assert model_fits_server(iris, gpu, config) and model_fits_server(iris, cpu, config)
    assert model_fits_server(pinned, cpu, config) and not model_fits_server(pinned, gpu, config)
    # The GPU server's pods land on the GPU pool and nowhere else.
    placement = Placement.from_pod_spec(gpu["spec"]["podSpec"])
    assert placement.admits(GPU_LABELS, GPU_TAINTS)
    assert not placement.admits(CPU_LABELS, CPU_TAINTS)


def test_components_under_mocks() -> None:
    def program() -> None:
        cfg = SeldonServerConfig(
            "gpu-config",
            SeldonServerConfigArgs(
                containers=[ContainerArgs("mlserver", image="seldonio/mlserver:1.3.5", gpus=1)],
                capabilities=["mlserver", "model-on-gpu"],
                agent_image="seldonio/seldon-agent:2.6.0",
                model_repository_storage="1Gi",
                placement=gpu_pool(),
            ),
        )
        assert cfg.container_names == ["mlserver", "agent"]
        assert cfg.capabilities == [*BUILTIN_CAPABILITIES["mlserver"], "model-on-gpu"]
        server = SeldonServer(
            "gpu-server",
            gpu_server_args(
                server_config=cfg.config_name, server_config_containers=cfg.container_names
            ),
        )
        assert server.placement.admits(GPU_LABELS, GPU_TAINTS)
        SeldonModel(
            "llm",
            SeldonModelArgs(storage_uri="gs://m/llm", requirements=["model-on-gpu"]),
        )

    graph = run_program(program)
    cfg = graph.one("kubernetes:mlops.seldon.io/v1alpha1:ServerConfig", "gpu-config")
    server = graph.one("kubernetes:mlops.seldon.io/v1alpha1:Server", "gpu-server")
    model = graph.one("kubernetes:mlops.seldon.io/v1alpha1:Model", "llm")
    assert graph.by_urn(cfg.parent).type == "gpu-inference:index:SeldonServerConfig"
    assert server.inputs["spec"]["serverConfig"] == "gpu-config"
    assert server.inputs["metadata"] == owned({"name": "mlserver-gpu", "namespace": "seldon-mesh"})
    assert model.inputs["metadata"] == owned({"name": "llm", "namespace": "seldon-mesh"})
    assert model_fits_server(model.inputs, server.inputs, cfg.inputs)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build, args, pieces",
    [
        (server_body, SeldonServerArgs(name="GPU"), ["name:", "'GPU'"]),
        (server_body, SeldonServerArgs(namespace="Seldon"), ["namespace:"]),
        (
            server_body,
            SeldonServerArgs(extra_capabilities=["model,gpu"]),
            ["capabilities[0]:", "no commas"],
        ),
        (
            server_body,
            SeldonServerArgs(extra_capabilities=["gpu", "gpu"]),
            ["capabilities[1]:", "twice"],
        ),
        (server_body, SeldonServerArgs(extra_capabilities="gpu"), ["capabilities:", "list"]),
        (
            server_body,
            SeldonServerArgs(replicas=5, min_replicas=1, max_replicas=3),
            ["replicas:", "outside"],
        ),
        (server_body, SeldonServerArgs(min_replicas=3, max_replicas=1), ["minReplicas:"]),
        (server_body, SeldonServerArgs(replicas=-1), ["replicas:", "-1"]),
        (
            server_body,
            SeldonServerArgs(
                server_config="mlserver", containers=[ContainerArgs("mlsever", gpus=1)]
            ),
            ["containers[0].name:", "'mlsever'", "rclone, agent, mlserver"],
        ),
        (
            server_body,
            SeldonServerArgs(
                server_config="custom",
                server_config_containers=["main"],
                containers=[ContainerArgs("mlserver", gpus=1)],
            ),
            ["containers[0].name:", "main"],
        ),
        (
            server_body,
            SeldonServerArgs(containers=[ContainerArgs("mlserver", cpu="8", cpu_limit="4")]),
            ["containers[0].cpu:", "above its limit"],
        ),
        (
            server_body,
            SeldonServerArgs(containers=[ContainerArgs("mlserver", gpu_limit=2)]),
            ["containers[0].gpuLimit:", "without gpus"],
        ),
        (
            server_body,
            SeldonServerArgs(
                containers=[ContainerArgs("mlserver")],
                placement=gpu_pool(),
                omit_gpu_toleration=True,
            ),
            ["omitGpuToleration:", "requests no GPU"],
        ),
        (server_config_body, SeldonServerConfigArgs(), ["containers:", "no containers"]),
        (
            server_config_body,
            SeldonServerConfigArgs(capabilities=["mlserver"], replace_capabilities=True),
            ["agentImage:", "no agent container"],
        ),
        (
            server_config_body,
            SeldonServerConfigArgs(
                containers=[ContainerArgs("agent", image="a:1")], capabilities=["model-on-gpu"]
            ),
            [
                "capabilities:",
                "added to the server's own list, known only for an mlserver or triton container",
                "replace_capabilities with the whole list",
            ],
        ),
        (
            server_config_body,
            SeldonServerConfigArgs(
                containers=[ContainerArgs("mlserver", image="x:1")], agent_image="a:1"
            ),
            ["agentImage:", "without capabilities"],
        ),
        (
            server_config_body,
            SeldonServerConfigArgs(
                containers=[
                    ContainerArgs("agent", image="a:1", env={"SELDON_SERVER_CAPABILITIES": "x"})
                ],
                capabilities=["y"],
                replace_capabilities=True,
            ),
            ["capabilities:", "one of them"],
        ),
        (
            server_config_body,
            SeldonServerConfigArgs(containers=[ContainerArgs("mlserver")]),
            ["containers[0].image:", "no image"],
        ),
        (
            server_config_body,
            SeldonServerConfigArgs(
                containers=[ContainerArgs("mlserver", image="x:1")], model_repository_storage="1GB"
            ),
            ["modelRepositoryStorage:", "'1GB'"],
        ),
        (model_body, SeldonModelArgs(memory="20GB"), ["memory:", "'20GB'"]),
        (model_body, SeldonModelArgs(memory=0.5), ["memory:", "'500m'"]),
        (
            model_body,
            SeldonModelArgs(storage_uri="models/x"),
            ["storageUri:", "is not a storage URI"],
        ),
        (model_body, SeldonModelArgs(server="Mlserver"), ["server:", "'Mlserver'"]),
        (model_body, SeldonModelArgs(requirements=["on gpu"]), ["requirements[0]:", "'on gpu'"]),
    ],
)
def test_bad_input(build, args, pieces) -> None:
    with pytest.raises(InputError) as err:
        build("ok-name", args)
    for piece in pieces:
        assert piece in str(err.value)


@pytest.mark.parametrize(
    "cls, args, prefix",
    [
        (SeldonServer, SeldonServerArgs(replicas=-1), "SeldonServer('x').replicas:"),
        (SeldonServerConfig, SeldonServerConfigArgs(), "SeldonServerConfig('x').containers:"),
        (SeldonModel, SeldonModelArgs(memory="1GB"), "SeldonModel('x').memory:"),
    ],
)
def test_component_errors_name_the_component(cls, args, prefix) -> None:
    with pytest.raises(InputError) as err:
        cls("x", args)
    assert str(err.value).startswith(prefix)


# ---------------------------------------------------------------------------------------------
# Upstream CRDs
# ---------------------------------------------------------------------------------------------


def test_complete_bodies_validate_against_crds() -> None:
    if not CRDS.exists():
        pytest.skip("../shared/crds is absent")
    try:
        from tests.crdschema import validate_cr
    except ImportError:
        pytest.skip("tests/crdschema.py (validate_cr) has not landed yet")
    validate_cr(
        server_config_body(
            "cfg",
            SeldonServerConfigArgs(
                containers=[ContainerArgs("mlserver", image="x:1", gpus=1, cpu="4", memory="16Gi")],
                capabilities=["mlserver"],
                agent_image="a:1",
                model_repository_storage="1Gi",
                placement=gpu_pool("nodeAffinity"),
            ),
        )
    )
    validate_cr(server_body("s", gpu_server_args(min_replicas=1, max_replicas=2)))
    validate_cr(
        model_body(
            "m",
            SeldonModelArgs(
                storage_uri="gs://m", requirements=["a"], server="s", replicas=1, memory="1Gi"
            ),
        )
    )


def test_metadata_labels_and_annotations() -> None:
    body = server_body(
        "s",
        SeldonServerArgs(
            server_config="mlserver",
            labels={"team": "ml"},
            annotations={"gpu-inference.dev/pool": "a100"},
        ),
    )
    assert body["metadata"] == {
        "name": "s",
        "namespace": "seldon-mesh",
        "labels": {"team": "ml"},
        "annotations": {"gpu-inference.dev/pool": "a100"},
    }
    with pytest.raises(InputError, match=r"^annotations\.bad key:"):
        model_body("m", SeldonModelArgs(annotations={"bad key": "x"}))
    with pytest.raises(InputError, match=r"^labels\.team:"):
        model_body("m", SeldonModelArgs(labels={"team": "m l"}))
