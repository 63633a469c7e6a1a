"""Valid stack configs parse into a Spec with the documented defaults (one base per provider)."""

from __future__ import annotations

import json

import pytest
from config_bases import EKS, EXISTING, GKE, NS, mutated

from components.model.errors import InputError
from components.platform.load import load_spec
from components.platform.workloads import Predictor, Server


@pytest.fixture(scope="module")
def gke():
    return load_spec(GKE)


@pytest.fixture(scope="module")
def eks():
    return load_spec(EKS)


@pytest.fixture(scope="module")
def existing():
    return load_spec(EXISTING)


def test_gke_defaults(gke):
    c = gke.cluster
    assert (c.provider, c.name, c.location, c.create, c.extended_resource_toleration) == (
        "gke",
        "dev",
        "us-central1",
        False,
        True,
    )
    spot, ondemand, cpu = gke.pools
    assert (spot.gpu_name, spot.gpus, spot.is_gpu, spot.facts.spot) == ("nvidia-l4", 1, True, True)
    assert (ondemand.gpus, ondemand.facts.spot, ondemand.size_range) == (1, False, (0, 2))
    assert (cpu.is_gpu, cpu.gpus, cpu.min_nodes, cpu.taints, cpu.labels) == (
        False,
        0,
        0,
        None,
        None,
    )
    assert [str(t) for t in spot.node_taints] == [
        "inference=true:NoSchedule",
        "nvidia.com/gpu=present:NoSchedule",
    ]
    # defaults of the pool component's Args
    assert (spot.disk_size_gb, spot.gpu_driver_version, cpu.secure_boot) == (100, "DEFAULT", True)
    assert gke.knative.mode == "operator" and gke.knative.ingress == "kourier"
    assert not gke.knative.features and not gke.knative.assume_flags_enabled
    a = gke.addons
    assert (
        a.kserve.enabled,
        a.nvidia_device_plugin.enabled,
        a.seldon.enabled,
        a.cert_manager.enabled,
    ) == (True, False, True, True)
    llm = gke.inference_services[0]
    assert (llm.namespace, llm.deployment_mode, llm.is_knative) == ("models", "Serverless", True)
    p = llm.predictor
    assert (p.pool, p.pool_names, p.scheduling_style, p.min_replicas, p.max_replicas) == (
        ["l4-spot", "l4"],
        ("l4-spot", "l4"),
        "nodeSelector",
        0,
        None,
    )
    assert llm.transformer is not None and llm.transformer.gpu_count == 0
    assert gke.seldon.namespace == "seldon-mesh"
    assert gke.seldon.servers[0].server_config == "mlserver" and gke.seldon.servers[0].replicas == 1
    assert gke.seldon.servers[0].container == "mlserver"
    ns = gke.namespaces
    assert (ns.pod_security, ns.service_account, ns.static_credentials) == (
        "baseline",
        "model-reader",
        None,
    )
    assert gke.model_namespaces() == ["models", "seldon-mesh"]


def test_eks_defaults(eks):
    g5, cpu = eks.pools
    # the accelerator label and GPU count come from the catalog's instance type
    assert (g5.gpu_name, g5.gpus, g5.capacity_type, g5.facts.spot) == (
        "nvidia-a10g",
        1,
        "ON_DEMAND",
        False,
    )
    assert (cpu.is_gpu, cpu.instance_types) == (False, ["m6i.large"])
    assert eks.cluster.extended_resource_toleration is True and eks.cluster.create is None
    assert eks.addons.nvidia_device_plugin.enabled is True
    isvc = eks.inference_services[0]
    assert (isvc.deployment_mode, isvc.is_knative, isvc.predictor.min_replicas) == (
        "RawDeployment",
        False,
        1,
    )
    assert isvc.predictor.framework is not None and isvc.predictor.framework.name == "triton"
    assert isvc.predictor.env == {"OMP_NUM_THREADS": "1"}
    assert eks.cluster.workload_identity is not None
    assert eks.cluster.workload_identity.aws_role_arn.endswith(":role/model-reader")


def test_existing_defaults(existing):
    a100, cpu = existing.pools
    assert (a100.gpus, a100.size_range, cpu.size_range) == (2, (2, 2), (1, 1))
    assert existing.cluster.extended_resource_toleration is False
    assert existing.addons.nvidia_device_plugin.enabled is True
    assert existing.addons.seldon.enabled is False
    assert existing.knative.mode == "patch"


def test_workloads_iterate_every_placed_workload(gke):
    rows = [(path, kind, names) for path, kind, _, names in gke.workloads()]
    assert rows == [
        (f"{NS}:inferenceServices[0].predictor", "predictor", ("l4-spot", "l4")),
        (f"{NS}:inferenceServices[0].transformer", "transformer", ("cpu",)),
        (f"{NS}:inferenceServices[1].predictor", "predictor", ("cpu",)),
        (f"{NS}:seldon.serverConfigs[0]", "serverConfig", ("l4",)),
        (f"{NS}:seldon.servers[0]", "server", ("l4",)),
        (f"{NS}:seldon.servers[1]", "server", ("cpu",)),
    ]
    kinds = {kind: type(w) for _, kind, w, _ in gke.workloads()}
    assert kinds["predictor"] is Predictor and kinds["server"] is Server


def test_server_takes_its_server_configs_pool():
    spec = load_spec(
        mutated(
            "gke",
            {"seldon.servers[0].pool": None, "seldon.servers[0].serverConfig": "mlserver-llm"},
        )
    )
    server_rows = [(p, names) for p, kind, _, names in spec.workloads() if kind == "server"]
    assert server_rows[0] == (f"{NS}:seldon.servers[0]", ("l4",))


def test_pool_lookup(gke):
    assert gke.pool("cpu") is gke.pools_by_name["cpu"]
    with pytest.raises(KeyError, match="pools: l4-spot, l4, cpu"):
        gke.pool("nope")


@pytest.mark.parametrize("base", [GKE, EKS, EXISTING], ids=["gke", "eks", "existing"])
def test_round_trip(base):
    """to_config gives a config that loads into the same Spec; pool lists stay lists in order."""
    spec = load_spec(base)
    again = load_spec(spec.to_config())
    assert again == spec
    assert again.to_config() == spec.to_config()


def test_pool_list_round_trip_keeps_shape(gke):
    predictor = gke.to_config()[f"{NS}:inferenceServices"][0]["predictor"]
    assert predictor["pool"] == ["l4-spot", "l4"]
    assert gke.to_config()[f"{NS}:inferenceServices"][0]["transformer"]["pool"] == "cpu"


def test_sections_as_json_text_and_provider_keys_ignored():
    config = {k: json.dumps(v) if k.startswith(NS) else v for k, v in GKE.items()}
    config["kubernetes:context"] = "kind-dev"
    assert load_spec(config) == load_spec(GKE)


def test_seed_004_server_and_model():
    """Seed 004: a Server with extraCapabilities, a GPU request 1 / limit 2, Gt expressions, and
    a Model pinned to the server with requirements."""
    spec = load_spec(
        mutated(
            "existing",
            {
                "seldon": {
                    "servers": [
                        {
                            "name": "mlserver-llm-local-gpu",
                            "serverConfig": "mlserver",
                            "pool": "a100",
                            "schedulingStyle": "nodeAffinity",
                            "capabilities": ["model-on-gpu"],
                            "gpus": 1,
                            "gpuLimit": 2,
                            "cpu": 40,
                            "memory": "360Gi",
                            "ephemeralStorage": "290Gi",
                            "extraExpressions": [
                                {
                                    "key": "cloud.google.com/gke-accelerator-count",
                                    "operator": "Gt",
                                    "values": ["1"],
                                }
                            ],
                        }
                    ],
                    "models": [
                        {
                            "name": "llama3",
                            "storageUri": "gs://models/llama3",
                            "server": "mlserver-llm-local-gpu",
                            "requirements": ["model-on-gpu"],
                        }
                    ],
                }
            },
        )
    )
    server = spec.seldon.servers[0]
    assert (server.gpus, server.gpu_limit, server.cpu, server.ephemeral_storage) == (
        1,
        2,
        40,
        "290Gi",
    )
    assert server.extra_expressions[0].requirement.operator == "Gt"
    assert spec.addons.seldon.enabled is True


def test_static_credentials_must_be_secret():
    creds = {
        "namespaces.staticCredentials": {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "key"}
    }
    config = mutated("eks", creds)
    with pytest.raises(InputError, match="AWS_ACCESS_KEY_ID' is in plain text"):
        load_spec(config)
    spec = load_spec(config, secret_keys=frozenset({f"{NS}:namespaces"}))
    assert spec.namespaces.static_credentials == {
        "AWS_ACCESS_KEY_ID": "id",
        "AWS_SECRET_ACCESS_KEY": "key",
    }
    # a stack file read directly: `{secure: ciphertext}` counts as secret
    raw = mutated(
        "eks", {"namespaces.staticCredentials": {"AWS_SECRET_ACCESS_KEY": {"secure": "v1:abc"}}}
    )
    assert load_spec(raw).namespaces.static_credentials == {"AWS_SECRET_ACCESS_KEY": "v1:abc"}


def test_serverless_with_mode_none_needs_assumption():
    config = mutated("gke", {"knative.mode": "none", "knative.assumeFlagsEnabled": True})
    assert load_spec(config).knative.assume_flags_enabled is True


def test_disabling_an_unused_podspec_flag_is_allowed_when_asked():
    config = mutated(
        "eks",
        {
            "knative.features": {"kubernetes.podspec-affinity": "disabled"},
            "knative.allowDisablingPodspecFlags": True,
        },
    )
    assert load_spec(config).knative.features == {"kubernetes.podspec-affinity": "disabled"}


def test_error_names_what_is_allowed_for_unknown_keys():
    with pytest.raises(InputError) as caught:
        load_spec(mutated("gke", {"pools[0].toleration": []}))
    assert caught.value.allowed.startswith("name, machineType, accelerator, gpusPerNode")
