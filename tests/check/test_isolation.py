"""GI061: a GPU pool isolated only by a taint ExtendedResourceToleration makes every GPU pod
tolerate (kubernetes v1.34.0 plugin/pkg/admission/extendedresourcetoleration/admission.go adds
`{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}` to a pod requesting it)."""

from __future__ import annotations

import pytest
from test_placement_check import TOL_GPU, codes, component, gke_pool, isvc, knative

from components.check import POOL_LABEL, check


def own_taint(pool: str) -> dict:
    return {"key": "dedicated", "value": pool, "effect": "NO_SCHEDULE"}


def tol_own(pool: str) -> dict:
    return {"key": "dedicated", "operator": "Equal", "value": pool, "effect": "NoSchedule"}


def two_pools(taints: bool) -> list[dict]:
    """Two GKE GPU pools, a model wired to each; with `taints`, each pool has its own."""
    graph = [knative()]
    for pool, machine, acc in (
        ("l4", "g2-standard-8", "nvidia-l4"),
        ("a100", "a2-highgpu-1g", "nvidia-tesla-a100"),
    ):
        graph.append(
            gke_pool(
                pool, machine=machine, accelerator=acc, taints=[own_taint(pool)] if taints else []
            )
        )
        tolerations = [tol_own(pool), TOL_GPU] if taints else [TOL_GPU]
        graph.append(
            isvc(
                f"m-{pool}",
                predictor=component(selector={POOL_LABEL: pool}, tolerations=tolerations),
                wired=pool,
            )
        )
    return graph


ISOLATION_PAIRS = [
    pytest.param("GI061", two_pools(taints=False), two_pools(taints=True), {}, id="GI061-ert-only"),
]


@pytest.mark.parametrize(("code", "bad", "good", "kwargs"), ISOLATION_PAIRS)
def test_the_finding_and_its_fix(code, bad, good, kwargs):
    assert code in codes(check(bad, **kwargs))
    fixed = check(good, **kwargs)
    assert code not in codes(fixed) and fixed.errors == [], fixed.findings


def test_the_finding_names_the_pool_the_other_gpu_workloads_and_the_fix():
    found = sorted(
        (f.severity, f.resource, f.message, f.fix)
        for f in check(two_pools(taints=False)).findings
        if f.code == "GI061"
    )
    assert found[0] == (
        "warning",
        "NodePool/a100",
        "GPU pool a100's only taint nvidia.com/gpu=present:NoSchedule is tolerated by every pod "
        "asking nvidia.com/gpu (ExtendedResourceToleration is on): only labels keep the graph's "
        "other GPU workloads (InferenceService/m-l4/predictor) and any GPU pod of the cluster off it",
        "give the pool a taint of its own that only the pods wired to it tolerate, e.g. "
        "dedicated=a100:NoSchedule",
    )
    assert [f[1] for f in found] == ["NodePool/a100", "NodePool/l4"]


def test_no_finding_without_the_plugin_or_without_other_gpu_workloads():
    """Without ExtendedResourceToleration a pod must tolerate nvidia.com/gpu itself; a pool the
    graph's every GPU workload is wired to has no other to keep off."""
    assert "GI061" not in codes(check(two_pools(taints=False), extended_resource_toleration=False))
    one = [
        knative(),
        gke_pool("l4", taints=[]),
        isvc(predictor=component(selector={POOL_LABEL: "l4"}, tolerations=[TOL_GPU])),
    ]
    assert "GI061" not in codes(check(one))


def test_a_gpu_taint_of_another_effect_isolates():
    """The plugin adds NoSchedule only: a NoExecute taint of nvidia.com/gpu keeps GPU pods off
    unless they tolerate it themselves."""
    graph = two_pools(taints=False)
    for e in graph:
        if e["type"] == "gcp:container/nodePool:NodePool":
            e["inputs"]["nodeConfig"]["taints"] = [
                {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_EXECUTE"}
            ]
    assert "GI061" not in codes(check(graph))
