"""GI066: a container whose request is above its limit, as KServe's defaults make one that asks
more than cpu 1 / memory 2Gi and sets no limit: the API server refuses the pod (kubernetes
pkg/apis/core/validation/validation.go ValidateResourceRequirements); the scheduler differential
holds it (the rig's API server refuses exactly those pods)."""

from __future__ import annotations

import pytest
from test_placement_check import TOL_DEDICATED, TOL_GPU, codes, component, gke_pool, isvc, knative

from components.check import POOL_LABEL, check


def graph(resources: dict) -> list[dict]:
    predictor = component(selector={POOL_LABEL: "l4"}, tolerations=[TOL_DEDICATED, TOL_GPU])
    predictor["model"]["resources"] = resources
    return [knative(), gke_pool("l4"), isvc("m", predictor=predictor)]


ASKS_4_CPUS = {"requests": {"cpu": "4", "nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}}
LIMITED = {
    "requests": {"cpu": "4", "nvidia.com/gpu": 1},
    "limits": {"cpu": "4", "nvidia.com/gpu": 1},
}

LIMIT_PAIRS = [
    pytest.param("GI066", graph(ASKS_4_CPUS), graph(LIMITED), {}, id="GI066-kserve-default-limit"),
]


@pytest.mark.parametrize(("code", "bad", "good", "kwargs"), LIMIT_PAIRS)
def test_the_finding_and_its_fix(code, bad, good, kwargs):
    assert code in codes(check(bad, **kwargs))
    fixed = check(good, **kwargs)
    assert code not in codes(fixed) and fixed.errors == [], fixed.findings


def test_the_finding_names_the_container_the_request_and_the_limit_kserve_gave_it():
    (found,) = [f for f in check(graph(ASKS_4_CPUS)).findings if f.code == "GI066"]
    assert (found.severity, found.resource) == ("error", "InferenceService/m/predictor")
    assert found.message.startswith(
        "container kserve-container requests 4 cpu above its limit 1 (a limit KServe gives"
    )
    assert found.fix == "give the container a cpu limit at or above its request"
