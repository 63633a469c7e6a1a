"""KServe LLMInferenceServices and LeaderWorkerSets in any graph: every pod the
controller makes is judged by every rule under the controller's name, and the model is held
against its GPUs the way vLLM holds it (GI019 LLM-grade, GI030-GI032)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from llm_graphs import (
    CPU,
    H100,
    POOL,
    POOLS,
    TOL_DEDICATED,
    TOL_GPU,
    gke,
    inference_pool,
    leader_worker_set,
    llm_config,
    llmisvc,
    multi_node,
    prefill_decode,
    vllm,
)
from scale_graphs import nodeclass, nodepool, req
from scale_graphs import pod as spod

from components.check import CODES, check
from components.check.contract import (
    GPU_MEMORY_UTILIZATION_ANNOTATION,
    MAX_MODEL_LEN_ANNOTATION,
    MODEL_ANNOTATION,
    MODEL_DTYPE_ANNOTATION,
    MODEL_PARAMETERS_ANNOTATION,
    MODEL_SIZE_ANNOTATION,
    WIRED_COMPONENT_POOL_ANNOTATION,
)
from components.check.graph import read_templates
from components.model.scheduling import Placement, Taint
from components.serving import llm_inference_service as serving
from tests.check.headroom import without_headroom

RID = "LLMInferenceService/llama"


def findings(graph: list[dict]) -> list[tuple[str, str, str]]:
    """(code, severity, resource) of every finding."""
    return [(f.code, f.severity, f.resource) for f in without_headroom(check(graph).findings)]


def only(graph: list[dict], code: str) -> Any:
    found = [f for f in without_headroom(check(graph).findings) if f.code == code]
    assert len(found) == 1, found
    return found[0]


# ---------------------------------------------------------------------------------------------
# Every pod the controller makes, placed
# ---------------------------------------------------------------------------------------------


def test_prefill_decode_and_scheduler_each_land_on_their_pool_and_nothing_is_found():
    report = check([*POOLS, prefill_decode()])
    assert without_headroom(report.findings) == []
    assert {w.resource: (w.pools, w.gpus, w.max_replicas) for w in report.workloads} == {
        f"{RID}/llama-kserve": (("h100",), 4, 1),
        f"{RID}/llama-kserve-prefill": (("h100",), 4, 1),
        f"{RID}/llama-kserve-router-scheduler": (("cpu",), 0, 1),
    }


def test_each_pod_has_what_the_presets_and_the_controller_add():
    """hf:// adds the storage-initializer to every pod (the scheduler's downloads the tokenizer);
    decode next to a prefill gets the routing sidecar; the scheduler the preset's requests."""
    templates = {t.resource: t for t in read_templates([prefill_decode()], True)}
    decode = templates[f"{RID}/llama-kserve"]
    assert [c["name"] for c in decode.init_containers] == [
        "llm-d-routing-sidecar",
        "storage-initializer",
    ]
    assert [c["name"] for c in decode.containers] == ["main"]
    assert decode.added == ("llm-d-routing-sidecar", "storage-initializer")
    prefill = templates[f"{RID}/llama-kserve-prefill"]
    assert [c["name"] for c in prefill.init_containers] == ["storage-initializer"]
    scheduler = templates[f"{RID}/llama-kserve-router-scheduler"]
    assert scheduler.containers == [
        {
            "name": "main",
            "resources": {
                "requests": {"cpu": "1", "memory": "2Gi"},
                "limits": {"cpu": "6", "memory": "16Gi"},
            },
        }
    ]
    assert scheduler.llm is None and decode.llm is not None
    facts = {w.resource: w for w in check([*POOLS, prefill_decode()]).workloads}
    sched = facts[f"{RID}/llama-kserve-router-scheduler"].requests
    assert sched is not None and (sched.cpu, sched.memory) == (1000, 2 * 2**30)


def test_the_service_own_main_container_wins_over_the_preset_field_by_field():
    entry = llmisvc(
        scheduler={"containers": [{"name": "main", "resources": {"requests": {"cpu": "2"}}}]}
    )
    scheduler = read_templates([entry], True)[-1]
    assert scheduler.containers[0]["resources"] == {
        "requests": {"cpu": "2", "memory": "2Gi"},
        "limits": {"cpu": "6", "memory": "16Gi"},
    }


def test_multi_node_groups_are_a_leader_and_size_minus_one_workers():
    entry = multi_node()
    entry["inputs"]["spec"]["replicas"] = 3
    entry["inputs"]["spec"]["parallelism"] = {"data": 8, "dataLocal": 2, "tensor": 4}
    report = check([*POOLS, entry])
    assert {w.resource: w.max_replicas for w in report.workloads} == {
        f"{RID}/llama-kserve-mn/leader": 3,
        f"{RID}/llama-kserve-mn/worker": 9,  # 3 groups x (8 / 2 - 1)
        f"{RID}/llama-kserve-router-scheduler": 1,
    }
    # 3 groups of 4 pods of 8 GPUs: 12 H100 nodes' worth on a pool of 4.
    assert [f.code for f in report.errors] == ["GI040"]


def test_a_worker_without_its_pool_toleration_lands_nowhere_named_by_the_controller():
    found = only([*POOLS, multi_node(worker_tolerates=False)], "GI001")
    assert found.resource == f"{RID}/llama-kserve-mn/worker"
    assert found.message == (
        "wired to h100 but can land on no pool (pool h100: taint dedicated=llm:NoSchedule not "
        "tolerated)"
    )


def test_a_worker_without_its_own_wiring_is_wired_like_its_leader():
    entry = multi_node(worker_tolerates=False)
    del entry["inputs"]["metadata"]["annotations"][f"{POOL}.worker"]
    templates = {t.resource: t for t in read_templates([entry], True)}
    assert templates[f"{RID}/llama-kserve-mn/worker"].wired == ("h100",)
    assert only([*POOLS, entry], "GI001").resource == f"{RID}/llama-kserve-mn/worker"


def test_long_names_are_hashed_as_the_controller_hashes_them():
    """knative kmeta.ChildName: over 63 characters, `name[:63 - 32 - len(suffix)]` + md5."""
    name = "a" * 60
    digest = hashlib.md5(name.encode()).hexdigest()
    resources = [t.component for t in read_templates([llmisvc(name=name)], True)]
    assert resources == [
        f"{'a' * 24}{digest}-kserve",
        f"{'a' * 7}{digest}-kserve-router-scheduler",
    ]
    assert all(len(r) == 63 for r in resources)


# ---------------------------------------------------------------------------------------------
# The findings, table-driven
# ---------------------------------------------------------------------------------------------

ON_L4 = {
    "template": vllm("l4", 1),
    "parallelism": {},
    "wiring": {"decode": "l4", "scheduler": "cpu"},
}

CASES = [
    pytest.param(
        llmisvc(model="llama-3.1-8b", parallelism={"tensor": 3}, template=vllm("h100", 3)),
        [("GI030", "error", f"{RID}/llama-kserve")],
        "tensor parallelism 3 does not divide llama-3.1-8b's 32 attention heads (vLLM: 'Total "
        "number of attention heads (32) must be divisible by tensor parallel size (3)'): vLLM "
        "refuses to start",
        id="GI030-tp3-on-32-heads",
    ),
    pytest.param(
        llmisvc(
            model=None,
            uri="hf://meta-llama/Llama-3.1-8B-Instruct",
            parallelism={"tensor": 3},
            template=vllm("h100", 3),
        ),
        [("GI030", "error", f"{RID}/llama-kserve")],
        "tensor parallelism 3 does not divide llama-3.1-8b's 32 attention heads",
        id="GI030-shape-from-the-hf-uri",
    ),
    pytest.param(
        llmisvc(model="qwen2.5-7b", parallelism={"tensor": 7}, template=vllm("h100", 7)),
        [("GI030", "error", f"{RID}/llama-kserve")],
        "tensor parallelism 7 neither divides qwen2.5-7b's 4 KV heads nor is a multiple of them "
        "(vLLM's QKVParallelLinear: '7 is not divisible by 4'): vLLM refuses to start",
        id="GI030-tp7-divides-28-heads-not-4-kv-heads",
    ),
    pytest.param(
        llmisvc(model="llama-3.1-8b", template=vllm("h100", 3, args=["--tensor-parallel-size=3"])),
        [("GI030", "error", f"{RID}/llama-kserve")],
        "tensor parallelism 3 does not divide",
        id="GI030-tensor-from-the-vllm-args-wins",
    ),
    pytest.param(
        llmisvc(model="llama-3.1-70b", **ON_L4),
        [("GI019", "error", f"{RID}/llama-kserve")],
        "its model does not fit its GPUs on pool l4: llama-3.1-70b in bfloat16 needs 141.1 GB of "
        "weights (141.1 GB per GPU over tensor 1 x pipeline 1) and 42.9 GB of KV cache per GPU "
        "for one 131072-token sequence; 1 x nvidia-l4 (24 GB) at 0.9 utilization holds 21.6 GB "
        "per GPU: the weights alone do not fit",
        id="GI019-70b-on-one-l4",
    ),
    pytest.param(
        llmisvc(model="llama-3.1-8b", **ON_L4),
        [("GI019", "error", f"{RID}/llama-kserve")],
        "its model does not fit its GPUs on pool l4: llama-3.1-8b in bfloat16 needs 16.1 GB of "
        "weights (16.1 GB per GPU over tensor 1 x pipeline 1) and 17.2 GB of KV cache per GPU for "
        "one 131072-token sequence; 1 x nvidia-l4 (24 GB) at 0.9 utilization holds 21.6 GB per "
        "GPU: vLLM stops with 'To serve at least one request with the models's max seq len'",
        id="GI019-8b-kv-cache-of-the-default-length-on-one-l4",
    ),
    pytest.param(
        llmisvc(
            model="llama-3.1-8b",
            annotations={MAX_MODEL_LEN_ANNOTATION: "8192"},
            **ON_L4,
        ),
        [],
        "",
        id="GI019-8b-fits-one-l4-at-8192-tokens",
    ),
    pytest.param(
        llmisvc(
            model="llama-3.1-8b",
            annotations={MAX_MODEL_LEN_ANNOTATION: "131072"},
            **{**ON_L4, "template": vllm("l4", 1, args=["--max-model-len", "8192"])},
        ),
        [],
        "",
        id="GI019-max-model-len-from-the-vllm-args-wins",
    ),
    pytest.param(
        llmisvc(
            model="llama-3.1-8b",
            annotations={
                MAX_MODEL_LEN_ANNOTATION: "8192",
                GPU_MEMORY_UTILIZATION_ANNOTATION: "0.5",
            },
            **ON_L4,
        ),
        [("GI019", "error", f"{RID}/llama-kserve")],
        "1 x nvidia-l4 (24 GB) at 0.5 utilization holds 12 GB per GPU: the weights alone do not fit",
        id="GI019-gpu-memory-utilization",
    ),
    pytest.param(
        llmisvc(model=None, annotations={MODEL_SIZE_ANNOTATION: "40"}, **ON_L4),
        [("GI019", "error", f"{RID}/llama-kserve")],
        "llama needs 40 GB of weights (40 GB per GPU over tensor 1 x pipeline 1; its KV cache is "
        "not known: its shape is not in the table); 1 x nvidia-l4 (24 GB) at 0.9 utilization "
        "holds 21.6 GB per GPU: the weights alone do not fit",
        id="GI019-stated-size-without-a-shape",
    ),
    pytest.param(
        llmisvc(
            model="llama-3.1-8b",
            annotations={MAX_MODEL_LEN_ANNOTATION: "8192", MODEL_SIZE_ANNOTATION: "30"},
            **ON_L4,
        ),
        [("GI019", "error", f"{RID}/llama-kserve")],
        "llama-3.1-8b in bfloat16 needs 30 GB of weights (30 GB per GPU",
        id="GI019-stated-weights-win-over-the-shape",
    ),
    pytest.param(
        llmisvc(
            scheduler={"nodeSelector": {POOL: "h100"}, "tolerations": [TOL_DEDICATED, TOL_GPU]},
            wiring={"decode": "h100"},
        ),
        [("GI003", "error", f"{RID}/llama-kserve-router-scheduler")],
        "requests no GPU but can land on GPU pool(s) h100, keeping a GPU node up",
        id="GI003-router-scheduler-on-a-gpu-pool",
    ),
    pytest.param(
        llmisvc(template=vllm("h100", 2)),
        [("GI031", "error", f"{RID}/llama-kserve")],
        "pipeline 1 x tensor 4 = 4 GPUs, but the worker group has 1 pod(s) x 2 GPUs = 2: the pod "
        "has fewer GPUs than vLLM's ranks: it cannot start them",
        id="GI031-fewer-gpus-than-tensor",
    ),
    pytest.param(
        llmisvc(template=vllm("h100", 8)),
        [("GI031", "warning", f"{RID}/llama-kserve")],
        "pipeline 1 x tensor 4 = 4 GPUs, but the worker group has 1 pod(s) x 8 GPUs = 8: the pod "
        "has more GPUs than vLLM uses: they sit idle",
        id="GI031-more-gpus-than-tensor-idle",
    ),
    pytest.param(
        llmisvc(parallelism={"tensor": 4, "pipeline": 2}, template=vllm("h100", 8)),
        [("GI031", "warning", f"{RID}/llama-kserve")],
        "pipeline 1 x tensor 4 = 4 GPUs",
        id="GI031-single-node-pipeline-never-reaches-vllm",
    ),
    pytest.param(
        llmisvc(template=vllm("h100", 8, args=["-pp", "2"])),
        [],
        "",
        id="GI031-pipeline-from-the-vllm-args",
    ),
    pytest.param(
        multi_node(gpus=4),
        [
            ("GI032", "error", f"{RID}/llama-kserve-mn/leader"),
            ("GI032", "error", f"{RID}/llama-kserve-mn/worker"),
        ],
        "a data-parallel pod runs dataLocal 1 x tensor 8 = 8 GPUs but requests 4: the pod has "
        "fewer GPUs than vLLM's ranks: it cannot start them",
        id="GI032-data-parallel-pod-short",
    ),
    pytest.param(
        llmisvc(
            parallelism={"data": 3, "dataLocal": 2, "tensor": 4},
            template=vllm("h100", 8),
            worker=vllm("h100", 8),
            wiring={"decode": "h100", "scheduler": "cpu"},
        ),
        [("GI031", "error", f"{RID}/llama-kserve-mn/leader")],
        "data 3 x tensor 4 = 12 GPUs, but the worker group has 1 pod(s) x 8 GPUs = 8: the worker "
        "group has fewer GPUs than vLLM's ranks",
        id="GI031-data-not-a-multiple-of-data-local",
    ),
    pytest.param(
        llmisvc(parallelism={"tensor": 16}, template=vllm("h100", 16)),
        [("GI004", "error", f"{RID}/llama-kserve")],
        "requests 16 GPU(s) per pod but the nodes it can land on have fewer (h100: 8)",
        id="GI004-tensor-16-asks-more-gpus-than-a-node-has",
    ),
    pytest.param(
        llmisvc(
            prefill={
                "parallelism": {"data": 2, "dataLocal": 1, "tensor": 4},
                "template": vllm("h100", 4),
                "worker": vllm("h100", 4, tolerate=False),
            },
            wiring={"decode": "h100", "prefill": "h100", "scheduler": "cpu"},
        ),
        [("GI001", "error", f"{RID}/llama-kserve-mn-prefill/worker")],
        "wired to h100 but can land on no pool (pool h100: taint dedicated=llm:NoSchedule",
        id="GI001-prefill-worker-wired-like-its-leader",
    ),
    pytest.param(
        llmisvc(template=vllm("h100", 4, args=["--gpu-memory-utilization", "most"])),
        [("GI013", "error", f"{RID}/llama-kserve")],
        "the vLLM option --gpu-memory-utilization (vLLM refuses it): 'most' is not a number",
        id="GI013-vllm-option-not-a-number",
    ),
    pytest.param(
        llmisvc(model="llama-3-8b"),
        [("GI013", "error", RID)],
        "gpu-inference.dev/model: model 'llama-3-8b' is not in the table",
        id="GI013-model-not-in-the-table",
    ),
    pytest.param(
        llmisvc(annotations={MAX_MODEL_LEN_ANNOTATION: "long"}),
        [("GI013", "error", f"{RID}/llama-kserve")],
        "the annotation gpu-inference.dev/max-model-len: 'long' is not a number",
        id="GI013-max-model-len-not-a-number",
    ),
]


@pytest.mark.parametrize(("entry", "expected", "message"), CASES)
def test_llm_findings(entry: dict, expected: list, message: str):
    report = check([*POOLS, entry])
    assert [(f.code, f.severity, f.resource) for f in without_headroom(report.findings)] == expected
    for f in without_headroom(report.findings):
        assert message in f.message and f.fix


def test_model_too_large_fix_names_the_tensor_parallelism_that_holds_the_weights():
    found = only([*POOLS, llmisvc(model="llama-3.1-70b", **ON_L4)], "GI019")
    assert found.fix == (
        "use tensor parallelism 8 (8 GPUs, on nodes that have them); use a pool with larger GPUs, "
        "or fp8 / int4 weights"
    )


def test_kv_cache_fix_names_the_longest_max_model_len_that_fits():
    def found(length: str | None) -> list:
        annotations = {MAX_MODEL_LEN_ANNOTATION: length} if length else {}
        entry = llmisvc(model="llama-3.1-8b", annotations=annotations, **ON_L4)
        return [f for f in without_headroom(check([*POOLS, entry]).findings) if f.code == "GI019"]

    fix = found(None)[0].fix
    assert fix.startswith("lower max-model-len to 42256 or less (vLLM --max-model-len); ")
    assert found("42256") == [] and len(found("42257")) == 1  # one more 16-token page


def test_expert_parallel_moe_is_not_judged():
    """With expert parallelism vLLM spreads a mixture-of-experts model's experts over the
    data x tensor GPUs: not modelled, so GI019 says nothing rather than something false."""

    def codes(expert: bool) -> set[str]:
        entry = llmisvc(
            model="mixtral-8x7b",
            parallelism={"data": 2, "dataLocal": 1, "tensor": 1, "expert": expert},
            template=vllm("l4", 1),
            worker=vllm("l4", 1),
            wiring={"decode": "l4", "scheduler": "cpu"},
        )
        return {f.code for f in without_headroom(check([*POOLS, entry]).findings)}

    assert codes(False) == {"GI019"}
    assert codes(True) == {"GI059"}
    entry = llmisvc(
        model="mixtral-8x7b",
        parallelism={"data": 2, "dataLocal": 1, "tensor": 1, "expert": True},
        template=vllm("l4", 1),
        worker=vllm("l4", 1),
        wiring={"decode": "l4", "scheduler": "cpu"},
    )
    found = [f for f in check([*POOLS, entry]).findings if f.code == "GI059"]
    assert {(f.resource, f.severity, f.message, f.fix) for f in found} == {
        (
            f"{RID}/llama-kserve-mn/{role}",
            "info",
            "whether its model fits its GPUs (GI019) is not judged: mixtral-8x7b is a "
            "mixture-of-experts model with expert parallelism, whose experts are spread over "
            "data x tensor GPUs (not modelled)",
            "check its memory by hand (vLLM's log states the KV cache it could allocate)",
        )
        for role in ("leader", "worker")
    }


def test_the_downloaded_model_must_fit_the_node_disk():
    """KServe's storage-initializer downloads hf:// into an emptyDir on every vLLM pod's node."""
    entry = llmisvc(uri="hf://meta-llama/Llama-3.1-70B-Instruct")
    small_disk = gke("h100", "a3-highgpu-8g", "nvidia-h100-80gb", 8)
    found = only([small_disk, CPU, entry], "GI024")
    assert found.resource == f"{RID}/llama-kserve"
    assert found.message.startswith("its model (141.107 GB) is downloaded to the node's ephemeral")
    assert "GI024" not in {f.code for f in without_headroom(check([H100, CPU, entry]).findings)}
    pvc = llmisvc(uri="pvc://models/llama")
    assert "GI024" not in {f.code for f in without_headroom(check([small_disk, CPU, pvc]).findings)}


def test_karpenter_judges_whether_it_launches_a_node_for_the_vllm_pod():
    p5 = [req("node.kubernetes.io/instance-type", "In", "p5.48xlarge")]

    def graph(limit: str) -> list[dict]:
        service = llmisvc(
            parallelism={"tensor": 8}, template=spod("p5", gpus=8), wiring={"decode": "p5"}
        )
        return [nodeclass(), nodepool("p5", p5, limits={"nvidia.com/gpu": limit}), service]

    found = only(graph("4"), "GI026")
    assert found.resource == f"{RID}/llama-kserve"
    assert "GI026" not in {f.code for f in without_headroom(check(graph("8")).findings)}


@pytest.mark.parametrize(
    ("namespace", "lands"),
    [("llm", True), ("kserve", True), ("other", False)],
    ids=["service-namespace", "kserve-namespace", "elsewhere-not-found"],
)
def test_base_refs_in_the_graph_are_merged_under_the_service(namespace: str, lands: bool):
    """The worker's tolerations come from an LLMInferenceServiceConfig it names: found in the
    service's namespace or in `kserve`, as the controller looks it up."""
    entry = multi_node(worker_tolerates=False)
    entry["inputs"]["spec"]["baseRefs"] = [{"name": "h100-workers"}]
    config = llm_config(
        "h100-workers", {"worker": {"tolerations": [TOL_DEDICATED, TOL_GPU]}}, namespace
    )
    codes = [(f.code, f.resource) for f in check([*POOLS, config, entry]).errors]
    assert codes == ([] if lands else [("GI001", f"{RID}/llama-kserve-mn/worker")])


def test_the_service_tolerations_replace_the_configs_and_selectors_merge():
    entry = multi_node()
    entry["inputs"]["spec"]["baseRefs"] = [{"name": "base"}]
    config = llm_config(
        "base",
        {
            "worker": {
                "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
                "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "main", "resources": {"requests": {"cpu": "300"}}}],
            }
        },
    )
    worker = next(
        t for t in read_templates([config, entry], True) if t.resource.endswith("/worker")
    )
    assert worker.fragment["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
        POOL: "h100",
    }
    assert worker.fragment["tolerations"] == [TOL_DEDICATED, TOL_GPU]
    assert worker.containers[0]["resources"]["requests"] == {
        "cpu": "4",
        "memory": "24Gi",
        "nvidia.com/gpu": 8,
    }


# ---------------------------------------------------------------------------------------------
# LeaderWorkerSets and InferencePools written by anyone
# ---------------------------------------------------------------------------------------------


def test_leader_worker_set_from_anyone_is_judged_pod_by_pod():
    lws = leader_worker_set(size=4, replicas=2, worker=vllm("h100", 8, tolerate=False))
    report = check([*POOLS, lws])
    assert {w.resource: (w.pools, w.max_replicas) for w in report.workloads} == {
        "LeaderWorkerSet/lws/leader": ((), 2),  # no leaderTemplate: the worker template
        "LeaderWorkerSet/lws/worker": ((), 6),
    }
    assert [(f.code, f.resource) for f in report.errors] == [
        ("GI001", "LeaderWorkerSet/lws/leader"),
        ("GI001", "LeaderWorkerSet/lws/worker"),
    ]
    fixed = leader_worker_set(
        size=4, leader=vllm("h100", 8), worker=vllm("h100", 8, tolerate=False)
    )
    assert [(f.code, f.resource) for f in check([*POOLS, fixed]).errors] == [
        ("GI001", "LeaderWorkerSet/lws/worker")
    ]


def test_a_leader_worker_set_of_size_one_is_its_leaders():
    lws = leader_worker_set(size=1, replicas=None)
    assert [(t.resource, t.max_replicas) for t in read_templates([lws], True)] == [
        ("LeaderWorkerSet/lws/leader", 1)
    ]


def test_an_inference_pool_makes_no_pod():
    report = check([*POOLS, prefill_decode(), inference_pool()])
    assert without_headroom(report.findings) == []
    assert not any("InferencePool" in w.resource for w in report.workloads)


def test_a_spec_part_that_is_not_an_object_is_skipped_not_a_crash():
    entry = llmisvc()
    entry["inputs"]["spec"]["prefill"] = "yes"
    assert read_templates([entry], True) == []


# ---------------------------------------------------------------------------------------------
# Our own component's CR, read by the check
# ---------------------------------------------------------------------------------------------


def test_the_serving_component_writes_the_annotations_the_check_reads():
    assert serving.WIRED_COMPONENT_POOL_ANNOTATION == WIRED_COMPONENT_POOL_ANNOTATION
    assert serving.MODEL_ANNOTATION == MODEL_ANNOTATION
    assert serving.MODEL_SIZE_ANNOTATION == MODEL_SIZE_ANNOTATION
    assert serving.MODEL_PARAMETERS_ANNOTATION == MODEL_PARAMETERS_ANNOTATION
    assert serving.MODEL_DTYPE_ANNOTATION == MODEL_DTYPE_ANNOTATION
    assert serving.MAX_MODEL_LEN_ANNOTATION == MAX_MODEL_LEN_ANNOTATION
    assert serving.GPU_MEMORY_UTILIZATION_ANNOTATION == GPU_MEMORY_UTILIZATION_ANNOTATION


def _component_cr(**decode: Any) -> dict:
    h100 = Placement.for_pool({POOL: "h100"}, [Taint("dedicated", "llm")])
    args = serving.LLMInferenceServiceArgs(
        model_uri="pvc://models/llama",
        model="llama-3.1-70b",
        max_model_len=32768,
        decode=serving.LLMWorkloadArgs(
            **{"gpus": 4, "tensor": 4, "placement": h100, "pools": ["h100"], **decode}
        ),
        prefill=serving.LLMWorkloadArgs(gpus=4, tensor=4, placement=h100, pools=["h100"]),
        router=serving.LLMRouterArgs(
            scheduler_placement=Placement.for_pool({POOL: "cpu"}, []), scheduler_pools=["cpu"]
        ),
    )
    body = serving.llm_inference_service_body(args, "llama")
    return {
        "type": "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService",
        "name": "llama",
        "inputs": body,
    }


def test_the_serving_components_cr_is_placed_clean():
    report = check([*POOLS, _component_cr()])
    assert without_headroom(report.findings) == []
    assert {w.resource: w.wired for w in report.workloads} == {
        f"{RID}/llama-kserve": ("h100",),
        f"{RID}/llama-kserve-prefill": ("h100",),
        f"{RID}/llama-kserve-router-scheduler": ("cpu",),
    }


def test_the_serving_components_cr_on_one_l4_is_too_small():
    l4 = Placement.for_pool({POOL: "l4"}, [Taint("dedicated", "llm")])
    cr = _component_cr(gpus=1, tensor=None, placement=l4, pools=["l4"])
    found = [f for f in without_headroom(check([*POOLS, cr]).findings) if f.code == "GI019"]
    assert [f.resource for f in found] == [f"{RID}/llama-kserve"]
    assert "for one 32768-token sequence" in found[0].message


# ---------------------------------------------------------------------------------------------
# Each new code: triggered and silenced by its fix (with test_field_failures' pairs)
# ---------------------------------------------------------------------------------------------

LLM_PAIRS = [
    pytest.param(
        "GI030",
        [
            *POOLS,
            llmisvc(model="llama-3.1-8b", parallelism={"tensor": 3}, template=vllm("h100", 3)),
        ],
        [
            *POOLS,
            llmisvc(model="llama-3.1-8b", parallelism={"tensor": 4}, template=vllm("h100", 4)),
        ],
        id="GI030",
    ),
    pytest.param(
        "GI031",
        [*POOLS, llmisvc(template=vllm("h100", 2))],
        [*POOLS, llmisvc(template=vllm("h100", 4))],
        id="GI031",
    ),
    pytest.param("GI032", [*POOLS, multi_node(gpus=4)], [*POOLS, multi_node()], id="GI032"),
]


@pytest.mark.parametrize(("code", "bad", "good"), LLM_PAIRS)
def test_llm_finding_triggered_and_silenced_by_its_fix(code: str, bad: list, good: list):
    bad_report, good_report = check(bad), check(good)
    found = [f for f in without_headroom(bad_report.findings) if f.code == code]
    assert found and found[0].severity == CODES[code][0] and found[0].fix
    assert without_headroom(good_report.findings) == [], without_headroom(good_report.findings)


def test_numbers_that_come_back_from_pulumi_as_floats_read_as_integers():
    entry = multi_node()
    entry["inputs"]["spec"]["replicas"] = 2.0
    entry["inputs"]["spec"]["parallelism"] = {"data": 4.0, "dataLocal": 2.0, "tensor": 4.0}
    report = check([*POOLS, entry])
    assert {w.resource: w.max_replicas for w in report.workloads} == {
        f"{RID}/llama-kserve-mn/leader": 2,
        f"{RID}/llama-kserve-mn/worker": 2,
        f"{RID}/llama-kserve-router-scheduler": 1,
    }
    assert all(isinstance(w.max_replicas, int) for w in report.workloads)
    assert report.errors == []


def test_gi030_hints_only_sizes_vllm_accepts():
    """Qwen2.5 7B: 28 attention heads, 4 KV heads. 7 and 14 divide the heads but not the KV heads
    (nor are multiples of them): the fix must not offer them."""
    graph = [
        *POOLS,
        llmisvc(model="qwen2.5-7b", parallelism={"tensor": 7}, template=vllm("h100", 7)),
    ]
    (found,) = [f for f in check(graph).findings if f.code == "GI030"]
    assert "(1, 2, 4, 28)" in found.fix


def test_a_worker_is_judged_by_its_own_vllm_options_not_the_services_annotations():
    """KServe v0.20.0 builds a LeaderWorkerSet's workers from spec.worker alone
    (workload_multi_node.go) and vLLM's headless workers read their own command line: a worker
    without --max-model-len runs Llama 3.1 8B at its full 131072 tokens, which one L4 cannot hold,
    whatever the annotation and the leader say."""

    def service(worker_args: list[str] | None) -> dict:
        return llmisvc(
            model="llama-3.1-8b",
            parallelism={"data": 2, "dataLocal": 1, "tensor": 1},
            template=vllm("l4", 1, args=["--max-model-len=8192"]),
            worker=vllm("l4", 1, args=worker_args),
            wiring={"decode": "l4", "worker": "l4", "scheduler": "cpu"},
            annotations={"gpu-inference.dev/max-model-len": "8192"},
        )

    found = [(f.code, f.resource) for f in check([*POOLS, service(None)]).errors]
    assert found == [("GI019", f"{RID}/llama-kserve-mn/worker")]
    assert check([*POOLS, service(["--max-model-len=8192"])]).errors == []
