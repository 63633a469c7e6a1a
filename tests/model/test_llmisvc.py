"""What KServe's presets put in an LLMInferenceService pod: containers merged by name, and the
vLLM options the `main` container adds to the preset's command line."""

from __future__ import annotations

import pytest

from components.model.serving import llmisvc


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({"name": "main"}, {}),
        (
            {"args": ["--max-model-len=8192", "--tensor-parallel-size", "4"]},
            {
                "max-model-len": "8192",
                "tensor-parallel-size": "4",
            },
        ),
        (
            {"args": ["-tp", "2", "-pp=2", "--enforce-eager"]},
            {
                "tensor-parallel-size": "2",
                "pipeline-parallel-size": "2",
                "enforce-eager": "",
            },
        ),
        (  # the env var comes before the args on the command line: the args win
            {
                "env": [{"name": "VLLM_ADDITIONAL_ARGS", "value": "--max-model-len 4096 -tp 8"}],
                "args": ["--max-model-len", "16384"],
            },
            {"max-model-len": "16384", "tensor-parallel-size": "8"},
        ),
        ({"args": ["--max-model-len", "--dtype", "fp8"]}, {"max-model-len": "", "dtype": "fp8"}),
    ],
)
def test_vllm_flags(container, expected):
    assert llmisvc.vllm_flags(container) == expected


def test_containers_merge_by_name_the_service_winning_field_by_field():
    added = [dict(llmisvc.SCHEDULER_MAIN), dict(llmisvc.STORAGE_INITIALIZER)]
    own = [
        {"name": "main", "image": "epp:mine", "resources": {"requests": {"cpu": "2"}}},
        {"name": "extra", "image": "x"},
    ]
    assert llmisvc.merge_containers(added, own) == [
        {
            "name": "main",
            "image": "epp:mine",
            "resources": {
                "requests": {"cpu": "2", "memory": "2Gi"},
                "limits": {"cpu": "6", "memory": "16Gi"},
            },
        },
        llmisvc.STORAGE_INITIALIZER,
        {"name": "extra", "image": "x"},
    ]
    assert llmisvc.SCHEDULER_MAIN["resources"]["requests"] == {"cpu": "1", "memory": "2Gi"}


def test_every_role_is_wired_by_a_component_the_serving_side_writes():
    roles = {"decode", "leader", "worker", "prefill", "prefill-leader", "prefill-worker"}
    assert set(llmisvc.ROLE_WIRING) == roles | {"scheduler"}
    assert set(llmisvc.MODEL_ROLES) == roles
    assert {c for chain in llmisvc.ROLE_WIRING.values() for c in chain} == set(
        llmisvc.WIRING_COMPONENTS
    )


def test_strategic_merge_as_the_controller_merges_specs():
    base = {
        "replicas": 2,
        "template": {
            "nodeSelector": {"a": "1", "b": "2"},
            "tolerations": [{"key": "x", "operator": "Exists"}],
            "containers": [
                {"name": "main", "image": "vllm", "env": [{"name": "A", "value": "1"}]},
                {"name": "side", "image": "s"},
            ],
        },
    }
    over = {
        "replicas": None,
        "template": {
            "nodeSelector": {"b": "3"},
            "tolerations": [{"key": "y", "operator": "Exists"}],
            "containers": [{"name": "main", "env": [{"name": "B", "value": "2"}]}],
        },
    }
    assert llmisvc.merge_specs(base, over) == {
        "template": {
            "nodeSelector": {"a": "1", "b": "3"},
            "tolerations": [{"key": "y", "operator": "Exists"}],
            "containers": [
                {
                    "name": "main",
                    "image": "vllm",
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                },
                {"name": "side", "image": "s"},
            ],
        },
    }
    assert base["replicas"] == 2 and len(base["template"]["containers"][0]["env"]) == 1


def _main(pods: list, role: str) -> dict:
    (g,) = [g for g in pods if g.role == role]
    containers, _ = llmisvc.pod_containers(g)
    return next(c for c in containers if c["name"] == "main")


def test_kv_cache_emptydir_tiers_add_to_mains_ephemeral_storage_request():
    """kserve v0.20.0 workload_kvcache.go attachFileSystemKVCacheTier: each emptyDir tier's size
    is added to `main`'s ephemeral-storage request (the check read none), on the decode pods from
    `spec.kvCacheOffloading` and on the prefill pods from `spec.prefill.kvCacheOffloading`; a PVC
    tier adds nothing."""
    kv = {
        "cpu": "10Gi",
        "secondary": [
            {"fileSystem": {"emptyDir": {"size": "20Gi"}}},
            {"fileSystem": {"emptyDir": {"size": "1Gi"}}},
            {"fileSystem": {"pvc": {"ref": {"name": "c"}}}},
        ],
    }
    main = {"name": "main", "resources": {"requests": {"ephemeral-storage": "1Gi"}}}
    cr = {
        "metadata": {"name": "m"},
        "spec": {
            "model": {"uri": "pvc://c/m"},
            "kvCacheOffloading": kv,
            "template": {"containers": [main]},
            "prefill": {"template": {"containers": [{"name": "main"}]}},
        },
    }
    pods = llmisvc.generated_pods(cr)
    assert _main(pods, "decode")["resources"] == {
        "requests": {"ephemeral-storage": str(22 * 2**30)}
    }
    assert "resources" not in _main(pods, "prefill")


def test_kv_cache_tiers_go_to_the_leader_and_the_workers():
    """workload_multi_node.go: both the LeaderWorkerSet's leader and worker templates."""
    kv = {"cpu": "1Gi", "secondary": [{"fileSystem": {"emptyDir": {"size": "500M"}}}]}
    cr = {
        "metadata": {"name": "m"},
        "spec": {
            "model": {"uri": "pvc://c/m"},
            "kvCacheOffloading": kv,
            "parallelism": {"data": 4, "dataLocal": 2},
            "template": {"containers": [{"name": "main"}]},
            "worker": {"containers": [{"name": "main"}]},
        },
    }
    pods = llmisvc.generated_pods(cr)
    for role in ("leader", "worker"):
        assert _main(pods, role)["resources"] == {"requests": {"ephemeral-storage": "500000000"}}


@pytest.mark.parametrize("own", [10**12, "x", [1, "c", None], {"name": "main"}])
def test_own_containers_not_of_their_shape_read_as_none(own):
    """Found by the deep fuzz run: an LLMInferenceService whose `template.containers` was a number
    made the check raise. The API server refuses such a service; its pods are the presets' own."""
    added = [{"name": "main", "image": "vllm"}]
    g = llmisvc.GeneratedPods(
        "m-kserve",
        "Deployment",
        "decode",
        "spec.template",
        {
            "containers": own,
            "initContainers": own,
        },
        added_containers=added,
    )
    containers, inits = llmisvc.pod_containers(g)
    assert containers == added and inits == []
