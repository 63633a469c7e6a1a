"""`serverConfigs[].base`: a ServerConfig that starts from Seldon's built-in mlserver / triton
ServerConfig (transcribed in `components.model.serving.seldon_servers` from the pinned setup chart) with
the user's containers, capabilities and placement on top."""

from __future__ import annotations

import pytest
from config_bases import DEL, NS, mutated

from components.check import check
from components.model.errors import InputError
from components.model.nodes.shapes import Gi, Mi, Resources
from components.model.serving.requests import pod_requests
from components.model.serving.seldon_servers import builtin_server_config
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform
from components.serving.seldon import SeldonServerConfigArgs, server_config_body
from components.serving.workload import ContainerArgs
from tests.conftest import CRDS

SERVER_CONFIG = "kubernetes:mlops.seldon.io/v1alpha1:ServerConfig"


def based(**kw) -> dict:
    args = dict(
        name="llm",
        base="mlserver",
        containers=[ContainerArgs("mlserver", gpus=1, cpu="8", memory="64Gi")],
        capabilities=["model-on-gpu"],
    )
    args.update(kw)
    return server_config_body("llm", SeldonServerConfigArgs(**args))


def test_the_builtin_pods_as_the_chart_makes_them():
    """Requests and images of seldon-core-v2-setup 2.6.0's values.yaml; the agent reports the
    server's memory request and capabilities; the model store is the `<server>-models` claim."""
    for server, image in (
        ("mlserver", "docker.io/seldonio/mlserver:1.3.5"),
        ("triton", "nvcr.io/nvidia/tritonserver:23.03-py3"),
    ):
        config = builtin_server_config(server)
        pod = config["podSpec"]
        assert [c["name"] for c in pod["containers"]] == ["rclone", "agent", server]
        assert pod_requests(pod["containers"]) == Resources(
            cpu=350, memory=2 * Gi + 128 * Mi, pods=1
        )
        rclone, agent, main = pod["containers"]
        assert rclone["image"] == "docker.io/seldonio/seldon-rclone:2.6.0"
        assert agent["image"] == "docker.io/seldonio/seldon-agent:2.6.0"
        assert main["image"] == image
        env = {e["name"]: e for e in agent["env"]}
        assert env["SELDON_SERVER_TYPE"]["value"] == server
        assert env["MEMORY_REQUEST"]["valueFrom"]["resourceFieldRef"]["containerName"] == server
        assert pod["serviceAccountName"] == "seldon-server"
        assert config["volumeClaimTemplates"][0]["name"] == f"{server}-models"
        assert {m["name"] for c in pod["containers"] for m in c["volumeMounts"]} >= {
            f"{server}-models"
        }


def test_a_based_server_config_is_seldons_pod_with_the_users_containers_on_top():
    body = based()
    pod = body["spec"]["podSpec"]
    assert [c["name"] for c in pod["containers"]] == ["rclone", "agent", "mlserver"]
    mlserver = pod["containers"][2]
    assert mlserver["image"] == "docker.io/seldonio/mlserver:1.3.5"  # the base's
    assert mlserver["resources"] == {
        "limits": {"memory": "64Gi", "nvidia.com/gpu": 1, "cpu": "8"},
        "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 1},
    }
    caps = {e["name"]: e.get("value") for e in pod["containers"][1]["env"]}
    assert caps["SELDON_SERVER_CAPABILITIES"] == (
        "mlserver,alibi-detect,alibi-explain,huggingface,lightgbm,mlflow,python,sklearn,"
        "spark-mlib,xgboost,model-on-gpu"
    )
    assert (
        body["spec"]["volumeClaimTemplates"]
        == builtin_server_config("mlserver")["volumeClaimTemplates"]
    )


def test_a_new_container_needs_an_image():
    with pytest.raises(InputError) as e:
        based(containers=[ContainerArgs("sidecar", cpu="1")])
    assert str(e.value) == (
        "containers[0].image: container 'sidecar' is not one of the mlserver ServerConfig's, so "
        "it is a new container and needs an image (allowed: an image, or the name of one of its "
        "containers: rclone, agent, mlserver)"
    )
    body = based(containers=[ContainerArgs("sidecar", image="x:1")])
    assert [c["name"] for c in body["spec"]["podSpec"]["containers"]] == [
        "rclone",
        "agent",
        "mlserver",
        "sidecar",
    ]


def test_based_server_config_validates_against_the_crd():
    if not CRDS.exists():
        pytest.skip("../shared/crds is absent")
    from tests.crdschema import validate_cr

    validate_cr(based(model_repository_storage="200Gi"))
    validate_cr(based(base="triton", containers=[ContainerArgs("triton", gpus=1)]))


def test_stack_server_config_with_base(run):
    """The stack's fix for a ServerConfig without agent and rclone: `base: mlserver`."""
    config = mutated(
        "gke",
        {
            "seldon.serverConfigs[0].containers": [{"name": "mlserver", "image": "mine:1"}],
            "seldon.serverConfigs[0].base": "mlserver",
            "seldon.serverConfigs[0].gpus": 1,
            "seldon.serverConfigs[0].cpu": "4",
            "seldon.serverConfigs[0].memory": "16Gi",
        },
    )
    g = run(lambda: InferencePlatform("gi", load_spec(config)))
    (sc,) = g.of_type(SERVER_CONFIG)
    pod = sc.inputs["spec"]["podSpec"]
    assert [c["name"] for c in pod["containers"]] == ["rclone", "agent", "mlserver"]
    assert pod["containers"][2]["image"] == "mine:1"
    assert pod["containers"][2]["resources"]["requests"] == {
        "nvidia.com/gpu": 1,
        "cpu": "4",
        "memory": "16Gi",
    }
    assert sc.inputs["spec"]["volumeClaimTemplates"][0]["name"] == "mlserver-models"
    assert [f.code for f in check(g.as_graph()).errors] == []


def test_stack_base_without_containers(run):
    config = mutated(
        "gke",
        {
            "seldon.serverConfigs[0].containers": DEL,
            "seldon.serverConfigs[0].base": "triton",
            "seldon.serverConfigs[0].container": "triton",
            "seldon.serverConfigs[0].gpus": 1,
        },
    )
    g = run(lambda: InferencePlatform("gi", load_spec(config)))
    (sc,) = g.of_type(SERVER_CONFIG)
    names = [c["name"] for c in sc.inputs["spec"]["podSpec"]["containers"]]
    assert names == ["rclone", "agent", "triton"]


def test_stack_server_config_without_containers_or_base_is_refused():
    with pytest.raises(InputError) as e:
        load_spec(mutated("gke", {"seldon.serverConfigs[0].containers": DEL}))
    assert str(e.value).startswith(
        f"{NS}:seldon.serverConfigs[0].containers: required key is missing (allowed: containers "
        "(the whole server pod), or base: mlserver or triton)"
    )
