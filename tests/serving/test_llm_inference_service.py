"""KServe LLMInferenceService: the CR body, every pod template's placement, what the controller
will make of it, strict validation against the upstream v1alpha2 CRD, and bad inputs."""

from __future__ import annotations

import copy

import pulumi
import pytest

from components.model.errors import InputError
from components.model.scheduling import NodeSelectorRequirement, Placement, Taint
from components.model.serving.llmisvc import child_name, generated_pods
from components.preview.mockrun import FakeCloud, run_program
from components.serving.llm_inference_service import (
    LLMInferenceService,
    LLMInferenceServiceArgs,
    LLMRouterArgs,
    LLMWorkerArgs,
    LLMWorkloadArgs,
    LoRAAdapterArgs,
    llm_inference_service_body,
    llm_inference_service_placements,
)
from tests.conftest import CRDS

CR_TYPE = "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService"
H100 = Placement.for_pool(
    {"gpu-inference.dev/pool": "h100"},
    [Taint("gpu-inference.dev/pool", "h100"), Taint("nvidia.com/gpu", "present")],
)
H100_B = Placement.for_pool(
    {"gpu-inference.dev/pool": "h100-b"}, [Taint("nvidia.com/gpu", "present")], "nodeAffinity"
)
CPU = Placement.for_pool(
    {"gpu-inference.dev/pool": "cpu"}, [Taint("gpu-inference.dev/pool", "cpu")]
)
GPU_TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}
H100_FIELDS = {
    "nodeSelector": {"gpu-inference.dev/pool": "h100"},
    "tolerations": [
        {
            "key": "gpu-inference.dev/pool",
            "operator": "Equal",
            "value": "h100",
            "effect": "NoSchedule",
        },
        GPU_TOLERATION,
    ],
}
CPU_FIELDS = {
    "nodeSelector": {"gpu-inference.dev/pool": "cpu"},
    "tolerations": [
        {
            "key": "gpu-inference.dev/pool",
            "operator": "Equal",
            "value": "cpu",
            "effect": "NoSchedule",
        }
    ],
}


def gpu_main(n: int, *extra: str) -> dict:
    main: dict = {"name": "main"}
    if extra:
        main["args"] = list(extra)
    main["resources"] = {"requests": {"nvidia.com/gpu": n}, "limits": {"nvidia.com/gpu": n}}
    return main


def pd_args(**kw) -> LLMInferenceServiceArgs:
    """Prefill/decode Llama 3.1 70B on H100 nodes, the scheduler on a CPU pool."""
    base = dict(
        model_uri="hf://meta-llama/Llama-3.1-70B-Instruct",
        model="llama-3.1-70b",
        model_name="llama-70b",
        max_model_len=32768,
        decode=LLMWorkloadArgs(gpus=4, tensor=4, replicas=2, placement=H100, pools=["h100"]),
        prefill=LLMWorkloadArgs(
            gpus=4, tensor=4, min_replicas=1, max_replicas=4, placement=H100, pools=["h100"]
        ),
        router=LLMRouterArgs(scheduler_placement=CPU, scheduler_pools=["cpu"]),
    )
    base.update(kw)
    return LLMInferenceServiceArgs(**base)


def multi_node_args(**kw) -> LLMInferenceServiceArgs:
    """Llama 3.1 405B across two 8-GPU nodes: data 2 / dataLocal 1 engines of tensor 8."""
    decode = dict(
        gpus=8,
        tensor=8,
        data=2,
        data_local=1,
        placement=H100,
        pools=["h100"],
        worker=LLMWorkerArgs(),
    )
    decode.update(kw.pop("decode", {}))
    return LLMInferenceServiceArgs(
        model_uri="hf://meta-llama/Llama-3.1-405B-Instruct",
        model="llama-3.1-405b",
        max_model_len=8192,
        decode=LLMWorkloadArgs(**decode),
        router=LLMRouterArgs(scheduler_placement=CPU),
        **kw,
    )


def cel_rules_hold(body: dict) -> None:
    """The CRD's CEL rules we can check by hand."""
    spec = body["spec"]
    for part in (spec, spec.get("prefill") or {}):
        assert not ("replicas" in part and "scaling" in part)
        scaling = part.get("scaling")
        if scaling:
            assert "wva" in scaling and len(scaling["wva"]) == 1
            assert scaling.get("minReplicas", 1) <= scaling["maxReplicas"]


def test_prefill_decode_body():
    body = llm_inference_service_body(pd_args(), "llama")
    assert body["metadata"] == {
        "name": "llama",
        "namespace": "default",
        "annotations": {
            "gpu-inference.dev/model": "llama-3.1-70b",
            "gpu-inference.dev/max-model-len": "32768",
            "gpu-inference.dev/pool.decode": "h100",
            "gpu-inference.dev/pool.prefill": "h100",
            "gpu-inference.dev/pool.scheduler": "cpu",
        },
    }
    assert body["spec"] == {
        "model": {"uri": "hf://meta-llama/Llama-3.1-70B-Instruct", "name": "llama-70b"},
        "replicas": 2,
        "parallelism": {"tensor": 4},
        "template": {**H100_FIELDS, "containers": [gpu_main(4, "--max-model-len=32768")]},
        "prefill": {
            "scaling": {"maxReplicas": 4, "minReplicas": 1, "wva": {"keda": {}}},
            "parallelism": {"tensor": 4},
            "template": {**H100_FIELDS, "containers": [gpu_main(4, "--max-model-len=32768")]},
        },
        "router": {"gateway": {}, "route": {}, "scheduler": {"template": CPU_FIELDS}},
    }
    cel_rules_hold(body)


def test_every_pod_template_has_its_pools_placement():
    placements = llm_inference_service_placements(pd_args(), "llama")
    assert placements == {"decode": H100, "prefill": H100, "scheduler": CPU}
    pods = {p.role: p for p in generated_pods(llm_inference_service_body(pd_args(), "llama"))}
    assert {(p.workload, p.kind, p.spec_path) for p in pods.values()} == {
        ("llama-kserve", "Deployment", "spec.template"),
        ("llama-kserve-prefill", "Deployment", "spec.prefill.template"),
        ("llama-kserve-router-scheduler", "Deployment", "spec.router.scheduler.template"),
    }
    for role, placement in (("decode", H100), ("prefill", H100), ("scheduler", CPU)):
        assert Placement.from_pod_spec(pods[role].pod_spec) == placement
    # The decode pods get the routing sidecar (prefill is set) and the hf:// download.
    assert [c["name"] for c in pods["decode"].added_init_containers] == [
        "llm-d-routing-sidecar",
        "storage-initializer",
    ]
    assert pods["scheduler"].added_containers[0]["resources"]["requests"] == {
        "cpu": "1",
        "memory": "2Gi",
    }


def test_multi_node_worker_inherits_the_leaders_pool_and_gpus():
    body = llm_inference_service_body(multi_node_args(), "big")
    spec = body["spec"]
    assert spec["parallelism"] == {"tensor": 8, "data": 2, "dataLocal": 1}
    # KServe builds the workers from spec.worker alone (workload_multi_node.go): the leader's
    # vLLM options are on them too, or the headless engines run at the model's full length.
    (leader,) = spec["template"]["containers"]
    assert spec["worker"] == {
        **H100_FIELDS,
        "containers": [{**gpu_main(8), "args": leader["args"]}],
    }
    assert leader["args"] == ["--max-model-len=8192"]
    assert body["metadata"]["annotations"]["gpu-inference.dev/pool.worker"] == "h100"
    pods = generated_pods(body)
    assert [(p.workload, p.role, p.group_size) for p in pods] == [
        ("big-kserve-mn", "leader", 2),
        ("big-kserve-mn", "worker", 2),
        ("big-kserve-router-scheduler", "scheduler", None),
    ]


def test_worker_on_its_own_pool_with_extra_expressions():
    gt = NodeSelectorRequirement("cloud.google.com/gke-accelerator-count", "Gt", ("7",))
    args = multi_node_args(
        decode=dict(worker=LLMWorkerArgs(placement=H100_B, extra_expressions=[gt], pools=["b"]))
    )
    placements = llm_inference_service_placements(args, "big")
    assert placements["decode-worker"] == H100_B.with_expressions([gt])
    body = llm_inference_service_body(args, "big")
    terms = body["spec"]["worker"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][-1] == {
        "key": "cloud.google.com/gke-accelerator-count",
        "operator": "Gt",
        "values": ["7"],
    }
    assert body["metadata"]["annotations"]["gpu-inference.dev/pool.worker"] == "b"


def test_lora_scheduler_replicas_gateway_refs_and_no_download():
    args = pd_args(
        prefill=None,
        lora_adapters=[LoRAAdapterArgs("sql", "hf://org/sql-lora")],
        router=LLMRouterArgs(
            gateway_refs=["infra/public"], scheduler_replicas=2, scheduler_cpu="500m"
        ),
        storage_initializer=False,
        gpu_memory_utilization=0.85,
    )
    spec = llm_inference_service_body(args, "llama")["spec"]
    assert spec["model"]["lora"] == {"adapters": [{"name": "sql", "uri": "hf://org/sql-lora"}]}
    assert spec["storageInitializer"] == {"enabled": False}
    assert spec["template"]["containers"][0]["args"] == [
        "--max-model-len=32768",
        "--gpu-memory-utilization=0.85",
    ]
    assert spec["router"] == {
        "gateway": {"refs": [{"name": "public", "namespace": "infra"}]},
        "route": {},
        "scheduler": {
            "replicas": 2,
            "template": {
                "containers": [{"name": "main", "resources": {"requests": {"cpu": "500m"}}}]
            },
        },
    }
    assert "prefill" not in spec


def test_router_off_and_scheduler_off():
    assert (
        "router"
        not in llm_inference_service_body(pd_args(router=LLMRouterArgs(enabled=False)), "x")["spec"]
    )
    spec = llm_inference_service_body(pd_args(router=LLMRouterArgs(scheduler=False)), "x")["spec"]
    assert spec["router"] == {"gateway": {}, "route": {}}


def test_generated_names_are_hashed_as_kmeta_childname_does():
    name = "a-very-long-llm-inference-service-name-for-tests"  # 48 characters
    assert child_name(name, "-kserve") == name + "-kserve"
    assert (
        child_name(name, "-kserve-router-scheduler")
        == "a-very-7b64419d33092af38f2d727be3b20f13-kserve-router-scheduler"
    )


@pytest.mark.parametrize(
    ("args", "path", "piece"),
    [
        (pd_args(model_uri="gs://bucket/llama"), "model_uri", "unsupported schema in model URI"),
        (
            # The heads are what is wrong, not the GPUs that match the tensor parallelism.
            pd_args(decode=LLMWorkloadArgs(gpus=3, tensor=3)),
            "decode.tensor",
            "tensor parallelism 3 does not divide llama-3.1-70b's 64 attention heads",
        ),
        (
            pd_args(decode=LLMWorkloadArgs(tensor=3)),
            "decode.tensor",
            "must be divisible by tensor parallel size (3)",
        ),
        (
            # 7 divides Qwen2.5 7B's 28 attention heads but not its 4 KV heads (vLLM
            # QKVParallelLinear): refused, and 7 / 14 are not offered.
            pd_args(
                model="qwen2.5-7b",
                model_uri="hf://Qwen/Qwen2.5-7B-Instruct",
                decode=LLMWorkloadArgs(gpus=7, tensor=7, placement=H100, pools=["h100"]),
                prefill=None,
            ),
            "decode.tensor",
            "neither divides qwen2.5-7b's 4 KV heads nor is a multiple of them",
        ),
        (
            pd_args(decode=LLMWorkloadArgs(gpus=8, tensor=4)),
            "decode.gpus",
            "pipeline 1 x tensor 4 = 4 GPUs, but the worker group has 1 pod(s) x 8 GPUs = 8",
        ),
        (
            pd_args(decode=LLMWorkloadArgs(gpus=8, tensor=8, worker=LLMWorkerArgs())),
            "decode.worker",
            "needs data / data_local parallelism",
        ),
        (
            pd_args(decode=LLMWorkloadArgs(tensor=8, pipeline=2, worker=LLMWorkerArgs())),
            "decode.worker",
            "kserve-config-llm-worker-pipeline-parallel, are not installed",
        ),
        (
            # KServe v0.20.0's single-node presets pass only --tensor-parallel-size.
            pd_args(decode=LLMWorkloadArgs(gpus=8, tensor=4, pipeline=2)),
            "decode.pipeline",
            "pipeline parallelism 2 never reaches vLLM",
        ),
        (pd_args(decode=LLMWorkloadArgs(data=2)), "decode.data_local", "set together"),
        (
            pd_args(decode=LLMWorkloadArgs(data=2, data_local=1, pipeline=2)),
            "decode.pipeline",
            "cannot set both pipeline parallelism and data parallelism",
        ),
        (
            pd_args(decode=LLMWorkloadArgs(replicas=1, max_replicas=2)),
            "decode.replicas",
            "'replicas and scaling are mutually exclusive'",
        ),
        (
            pd_args(prefill=LLMWorkloadArgs(min_replicas=3, max_replicas=2)),
            "prefill.min_replicas",
            "min_replicas 3 is above max_replicas 2",
        ),
        (pd_args(decode=LLMWorkloadArgs(replicas=-1)), "decode.replicas", "-1"),
        (
            pd_args(decode=LLMWorkloadArgs(max_replicas=2, autoscaler="kpa")),
            "decode.autoscaler",
            "'kpa' is not a valid value (did you mean 'hpa'?) (allowed: keda, hpa)",
        ),
        (
            pd_args(lora_adapters=[LoRAAdapterArgs("llama-70b", "hf://o/a")]),
            "lora_adapters[0].name",
            "the base model's name",
        ),
        (
            pd_args(lora_adapters=[LoRAAdapterArgs("a", "gs://o/a")]),
            "lora_adapters[0].uri",
            "hf://, s3://, pvc://",
        ),
        (
            pd_args(max_model_len=200_000),
            "max_model_len",
            "above llama-3.1-70b's max_position_embeddings 131072",
        ),
        (pd_args(model="llama-9"), "model", "'llama-9' is not a valid value"),
        (
            pd_args(router=LLMRouterArgs(gateway_refs=["public"])),
            "router.gateway_refs",
            "not namespace/name",
        ),
        (pd_args(router=LLMRouterArgs(scheduler_replicas=0)), "router.scheduler_replicas", "0"),
        (
            pd_args(decode=LLMWorkloadArgs(omit_gpu_toleration=True, placement=H100)),
            "decode.omitGpuToleration",
            "requests no GPU",
        ),
        (pd_args(name="Llama_70B"), "name", "Llama_70B"),
        (pd_args(gpu_memory_utilization=1.2), "gpu_memory_utilization", "out of range"),
    ],
)
def test_bad_inputs_name_the_field(args, path, piece):
    with pytest.raises(InputError) as err:
        llm_inference_service_body(args, "llama")
    assert err.value.path == path
    assert piece in str(err.value)


# ---------------------------------------------------------------------------------------------
# Upstream CRD, strictly
# ---------------------------------------------------------------------------------------------

needs_crds = pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")

VALID = {
    "prefill-decode": lambda: pd_args(),
    "multi-node": lambda: multi_node_args(),
    "lora-gateway-refs": lambda: pd_args(
        lora_adapters=[LoRAAdapterArgs("sql", "s3://b/sql")],
        router=LLMRouterArgs(gateway_refs=["infra/public"], scheduler_replicas=2),
        storage_initializer=False,
    ),
    "multi-node-prefill-hpa": lambda: multi_node_args(
        prefill=LLMWorkloadArgs(
            gpus=8,
            tensor=8,
            data=2,
            data_local=1,
            max_replicas=3,
            autoscaler="hpa",
            placement=H100,
            worker=LLMWorkerArgs(placement=H100_B),
        )
    ),
    "cpu-only-router-off": lambda: LLMInferenceServiceArgs(
        model_uri="pvc://models/qwen",
        decode=LLMWorkloadArgs(cpu="4", memory="16Gi"),
        router=LLMRouterArgs(enabled=False),
    ),
}


@needs_crds
@pytest.mark.parametrize("case", sorted(VALID))
def test_bodies_validate_against_the_upstream_crd(case):
    from tests.crdschema import validate_cr

    body = llm_inference_service_body(VALID[case](), "llama")
    validate_cr(body)
    cel_rules_hold(body)


@needs_crds
def test_the_validator_catches_what_the_api_server_would_prune():
    from tests.crdschema import validate_cr

    body = llm_inference_service_body(pd_args(), "llama")
    wrong = copy.deepcopy(body)
    wrong["spec"]["template"]["toleration"] = wrong["spec"]["template"].pop("tolerations")
    with pytest.raises(AssertionError, match="toleration"):
        validate_cr(wrong)
    wrong = copy.deepcopy(body)
    wrong["spec"]["parallelism"]["tensor"] = 0
    with pytest.raises(AssertionError, match=r"parallelism\.tensor"):
        validate_cr(wrong)


# ---------------------------------------------------------------------------------------------
# Component under mocks
# ---------------------------------------------------------------------------------------------


def test_component_registers_the_cr_after_its_dependency():
    def program():
        dep = pulumi.CustomResource("test:index:Dep", "install")
        svc = LLMInferenceService(
            "llama", pd_args(namespace="models"), pulumi.ResourceOptions(depends_on=[dep])
        )
        assert [p.workload for p in svc.generated] == [
            "llama-kserve",
            "llama-kserve-prefill",
            "llama-kserve-router-scheduler",
        ]
        pulumi.export("name", svc.name)
        pulumi.export("namespace", svc.namespace)

    g = run_program(program)
    comp = g.one("gpu-inference:index:LLMInferenceService", "llama")
    (cr,) = g.children(comp)
    assert cr.type == CR_TYPE
    assert cr.inputs["metadata"]["namespace"] == "models"
    assert cr.inputs["spec"]["template"]["containers"][0]["resources"]["limits"] == {
        "nvidia.com/gpu": 4
    }
    assert cr.inputs["spec"]["router"]["scheduler"]["template"] == CPU_FIELDS
    assert g.depends_on(cr, g.one("test:index:Dep", "install"))
    assert g.outputs == {"name": "llama", "namespace": "models"}
    if CRDS.exists():
        from tests.crdschema import validate_cr

        validate_cr(cr.inputs)


def test_component_refuses_before_registering_anything():
    seen: list[str] = []

    class Recording(FakeCloud):
        def new_resource(self, args):
            seen.append(args.typ)
            return super().new_resource(args)

    def program():
        LLMInferenceService("llama", pd_args(decode=LLMWorkloadArgs(gpus=3, tensor=3)))

    with pytest.raises(InputError) as err:
        run_program(program, mocks=Recording())
    assert err.value.path == "LLMInferenceService('llama').args.decode.tensor"
    assert seen == []
