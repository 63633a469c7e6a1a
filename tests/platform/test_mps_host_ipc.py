"""Workloads on a GKE MPS pool get `hostIPC: true` (GI025), and a Serverless one gets the Knative
flag that lets it carry it, or is refused where nothing can enable the flag."""

from __future__ import annotations

import pytest
from config_bases import NS, mutated

from components.check import check
from components.model.errors import InputError
from components.platform.load import load_spec
from components.platform.platform import InferencePlatform

ISVC = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
SERVER = "kubernetes:mlops.seldon.io/v1alpha1:Server"
KSVC = "kubernetes:operator.knative.dev/v1beta1:KnativeServing"
MPS = {"pools[1].gpuSharing": {"strategy": "MPS", "maxClientsPerGpu": 4}}  # pool l4


def graph(run, config):
    return run(lambda: InferencePlatform("gi", load_spec(config)))


def test_workloads_on_an_mps_pool_run_in_the_host_ipc_namespace(run):
    g = graph(run, mutated("gke", MPS))
    isvcs = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in g.of_type(ISVC)}
    assert isvcs["llm"]["predictor"]["hostIPC"] is True  # wired to l4-spot and l4
    assert "hostIPC" not in isvcs["llm"]["transformer"]  # on the CPU pool
    assert "hostIPC" not in isvcs["sklearn-iris"]["predictor"]
    servers = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in g.of_type(SERVER)}
    assert servers["gpu-server"]["podSpec"]["hostIPC"] is True
    assert "hostIPC" not in servers["cpu-server"]["podSpec"]
    (ksvc,) = g.of_type(KSVC)
    assert ksvc.inputs["spec"]["config"]["features"]["kubernetes.podspec-hostipc"] == "enabled"
    assert [f.code for f in check(g.as_graph()).errors] == []


def test_no_host_ipc_flag_without_an_mps_pool(run):
    (ksvc,) = graph(run, mutated("gke", {})).of_type(KSVC)
    assert "kubernetes.podspec-hostipc" not in ksvc.inputs["spec"]["config"]["features"]


def test_without_host_ipc_the_check_says_gi025(run):
    g = graph(run, mutated("gke", MPS)).as_graph()
    for e in g:
        if e["type"] == ISVC and e["inputs"]["metadata"]["name"] == "llm":
            del e["inputs"]["spec"]["predictor"]["hostIPC"]
    found = [(f.code, f.resource) for f in check(g).errors]
    assert found == [("GI025", "InferenceService/gi-isvc-models-llm/predictor")]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"knative.features": {"kubernetes.podspec-hostipc": "disabled"}},
            f'{NS}:knative.features["kubernetes.podspec-hostipc"]: knative.features sets '
            "kubernetes.podspec-hostipc to 'disabled', but InferenceService 'llm' (Serverless) "
            "runs its predictor on a GKE MPS pool, whose pods need hostIPC; Knative's webhook "
            "would refuse it (allowed: kubernetes.podspec-hostipc: enabled (or leave it out), "
            "or deploymentMode RawDeployment)",
        ),
        (
            {"knative.mode": "none", "knative.assumeFlagsEnabled": False},
            f"{NS}:inferenceServices[0].deploymentMode: InferenceService 'llm' is Serverless and "
            "its predictor runs on a GKE MPS pool, whose pods need hostIPC, but knative.mode is "
            "'none', so nothing enables kubernetes.podspec-hostipc; Knative's webhook would "
            "refuse it (allowed: knative.mode operator or patch; or knative.assumeFlagsEnabled: "
            "true if the cluster's Knative has the flag; or deploymentMode RawDeployment)",
        ),
    ],
)
def test_serverless_on_mps_refused_where_the_flag_cannot_be_on(changes, message):
    config = mutated("gke", {**MPS, "inferenceServices[0].deploymentMode": "Serverless", **changes})
    with pytest.raises(InputError) as e:
        load_spec(config)
    assert str(e.value) == message
