"""`llmInferenceServices` and `addons.kserve.llm` in the stack config: the keys derived from
LLMInferenceServiceArgs, the main refusals word for word, the defaults resolved from other
sections, and what the stack program makes of them: exactly one cert-manager, KServe's namespace
shared, every part of every service on its pools, in dependency order."""

from __future__ import annotations

import dataclasses
import json

import pytest
from config_bases import DEL, mutated

from components.model.errors import InputError
from components.model.inputs import inputs
from components.model.scheduling import Placement
from components.platform.llm_workloads import (
    LLMInferenceService,
    LLMRouter,
    LLMWorker,
    LLMWorkload,
    service_args,
    stack_key,
)
from components.platform.load import load_spec
from components.preview.preview import load_project, load_stack_config, run_stack
from components.serving.llm_inference_service import (
    LLMInferenceServiceArgs,
    LLMRouterArgs,
    LLMWorkerArgs,
    LLMWorkloadArgs,
)
from components.serving.llm_install import LLMServingInstallArgs
from tests.conftest import ROOT, values_of

NS = "gpu-inference"
L = "llmInferenceServices"
RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
LLMISVC = "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
GPU_TOLERATION = {
    "key": "nvidia.com/gpu",
    "operator": "Equal",
    "value": "present",
    "effect": "NoSchedule",
}
# The h100 pool's own taint (only LLM pods there), then GKE's GPU taint.
H100_TOLERATIONS = [
    {"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"},
    GPU_TOLERATION,
]

# fmt: off
REFUSALS = [
    (
        "pool-missing",
        {f"{L}[0].decode.pool": "h200"},
        "gpu-inference:llmInferenceServices[0].decode.pool: pool 'h200' does not exist "
        "(allowed: h100, router)",
    ),
    (
        "vllm-on-a-cpu-pool",
        {f"{L}[0].prefill.pool": "router"},
        "gpu-inference:llmInferenceServices[0].prefill.pool: pool 'router' has no GPUs, and the "
        "prefill pods run vLLM on GPUs (KServe's presets: image ghcr.io/llm-d/llm-d-cuda) "
        "(allowed: a GPU pool: h100)",
    ),
    (
        "worker-on-a-cpu-pool",
        {f"{L}[1].decode.worker": {"pool": "router"}},
        "gpu-inference:llmInferenceServices[1].decode.worker.pool: pool 'router' has no GPUs, and "
        "the decode.worker pods run vLLM on GPUs (KServe's presets: image "
        "ghcr.io/llm-d/llm-d-cuda) (allowed: a GPU pool: h100)",
    ),
    (
        "scheduler-on-a-gpu-pool",
        {f"{L}[0].router.scheduler.pool": ["router", "h100"]},
        "gpu-inference:llmInferenceServices[0].router.scheduler.pool[1]: pool 'h100' is a GPU "
        "pool, and the scheduler (the endpoint picker) uses no GPU: it would hold a GPU node up "
        "(allowed: a CPU pool: router)",
    ),
    (
        "gpus-above-a-node",
        {f"{L}[1].decode.worker": {"gpus": 16}},
        "gpu-inference:llmInferenceServices[1].decode.worker.gpus: 16 GPU(s) asked for but a node "
        "of pool 'h100' (the leader's) has 8 (allowed: gpus at most 8)",
    ),
    (
        "tensor-3-on-64-heads",
        {f"{L}[0].decode.gpus": 3, f"{L}[0].decode.tensor": 3},
        "gpu-inference:llmInferenceServices[0].decode.tensor: tensor parallelism 3 does not "
        "divide llama-3.1-70b's 64 attention heads (vLLM: 'Total number of attention heads (64) "
        "must be divisible by tensor parallel size (3)') (allowed: a size vLLM accepts for "
        "llama-3.1-70b (64 attention heads, 8 KV heads): 1, 2, 4, 8, 16, 32, 64)",
    ),
    (
        "pipeline-parallel-worker",
        {f"{L}[1].decode.data": DEL, f"{L}[1].decode.dataLocal": DEL, f"{L}[1].decode.pipeline": 2},
        "gpu-inference:llmInferenceServices[1].decode.worker: a worker (multi-node) needs data / "
        "dataLocal parallelism: KServe v0.20.0 ships presets only for data-parallel workers (the "
        "pipeline-parallel ones it looks for, kserve-config-llm-worker-pipeline-parallel, are not "
        "installed: ConfigNotFound) (allowed: data and dataLocal with worker, or no worker)",
    ),
    (
        "gpus-not-tensor-x-data-local",
        {f"{L}[1].decode.gpus": 4},
        "gpu-inference:llmInferenceServices[1].decode.gpus: a data-parallel pod runs dataLocal 2 "
        "x tensor 4 = 8 GPUs but requests 4 (allowed: tensor x dataLocal (or tensor) GPUs per "
        "pod)",
    ),
    (
        "cert-manager-below-the-llm-minimum",
        {"addons.certManager": {"version": "v1.17.0"}},
        "gpu-inference:addons.certManager.version: cert-manager v1.17.0 is below the v1.18.0 "
        "KServe v0.20.0's LLMInferenceService guide asks for (addons.kserve.llm uses the stack's "
        "one cert-manager) (allowed: v1.18.0 or later, or leave version out (the pinned "
        "v1.18.2))",
    ),
    (
        "kserve-elsewhere",
        {"addons.kserve.namespace": "kserve-system"},
        "gpu-inference:addons.kserve.namespace: addons.kserve.llm installs KServe's LLM charts "
        "into namespace 'kserve', where they share what KServe's charts make (the "
        "inferenceservice-config ConfigMap, the Gateway kserve/kserve-ingress-gateway KServe "
        "routes to by default), but KServe is installed in 'kserve-system' (allowed: namespace: "
        "kserve (the default), or addons.kserve.llm off)",
    ),
]
# fmt: on


@pytest.mark.parametrize(
    ("changes", "message"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_refusals_word_for_word(changes, message):
    with pytest.raises(InputError) as caught:
        load_spec(mutated("llm", changes))
    assert str(caught.value) == message


def _keys(model) -> set[str]:
    return {f.alias or n for n, f in model.model_fields.items()}


def _arg_keys(args: type) -> set[str]:
    return {i.path.split(".")[0] for i in inputs(args) if i.path is not None}


def test_the_keys_are_the_args_and_where_each_part_runs():
    wiring = {"pool", "placement", "tolerations"}
    assert _keys(LLMInferenceService) == _arg_keys(LLMInferenceServiceArgs) | {
        "decode",
        "prefill",
        "router",
    }
    assert _keys(LLMWorkload) == _arg_keys(LLMWorkloadArgs) | wiring | {"worker"}
    assert _keys(LLMWorker) == _arg_keys(LLMWorkerArgs) | wiring
    assert _keys(LLMRouter) == _arg_keys(LLMRouterArgs) == {"enabled", "gatewayRefs", "scheduler"}
    scheduler = LLMRouter.model_fields["scheduler"].annotation.__args__[0]
    assert _keys(scheduler) == {"enabled", "replicas", "cpu", "memory", "pool", "placement"}
    # Defaults are the dataclasses' own.
    spec = load_spec(mutated("llm", {}))
    decode = spec.llm_inference_services[0].decode
    assert decode.autoscaler == LLMWorkloadArgs.autoscaler == "keda"
    assert decode.omit_gpu_toleration is False
    assert spec.llm_inference_services[0].namespace == "models"


def test_llm_install_resolves_on_with_llm_services_and_cert_manager_with_it():
    spec = load_spec(mutated("llm", {}))
    assert spec.addons.kserve.llm.enabled is True
    assert spec.addons.cert_manager.enabled is True
    off = load_spec(mutated("gke", {}))
    assert off.addons.kserve.llm.enabled is False
    alone = load_spec(mutated("llm", {"addons.kserve.enabled": False}))
    assert alone.addons.cert_manager.enabled is True  # for the LLM install alone
    kept = load_spec(mutated("llm", {"addons.kserve.llm": {"enabled": False}}))
    assert kept.addons.kserve.llm.enabled is False  # the cluster runs the controller


def test_the_install_keys_are_its_args_but_cert_manager_and_kserve_installed():
    hidden = {"cert_manager", "cert_manager_chart", "kserve_installed", "namespaces_made"}
    fields = {f.name for f in dataclasses.fields(LLMServingInstallArgs)}
    keyed = {i.field for i in inputs(LLMServingInstallArgs) if i.path is not None}
    assert keyed == fields - hidden


def test_service_args_from_the_config():
    spec = load_spec(mutated("llm", {f"{L}[1].decode.worker": {"pool": "h100", "cpu": 16}}))
    placed: list[tuple[tuple[str, ...], int]] = []

    def placement_of(names, tolerations):
        placed.append((tuple(names), len(tolerations)))
        return Placement({"gpu-inference.dev/pool": names[0]})

    llama = service_args(spec.llm_inference_services[0], placement_of)
    assert llama.name == "llama-70b" and llama.namespace == "models"
    assert llama.decode.gpus == 4 and llama.decode.tensor == 4 and llama.decode.pools == ["h100"]
    assert llama.prefill is not None and llama.prefill.pools == ["h100"]
    assert llama.router is not None and llama.router.scheduler_pools == ["router"]
    assert llama.router.scheduler is True
    qwen = service_args(spec.llm_inference_services[1], placement_of)
    worker = qwen.decode.worker
    assert isinstance(worker, LLMWorkerArgs)
    assert (worker.pools, worker.cpu, worker.gpus) == (["h100"], 16, None)
    assert (qwen.decode.data, qwen.decode.data_local) == (4, 2)
    # llama: router, decode, prefill; qwen: its worker's own pool, then decode.
    assert placed == [
        (("router",), 0),
        (("h100",), 0),
        (("h100",), 0),
        (("h100",), 0),
        (("h100",), 0),
    ]
    # While the config is read the body is built without placements.
    assert service_args(spec.llm_inference_services[0], None).decode.placement is None


@pytest.mark.parametrize(
    ("component_path", "key"),
    [
        ("LLMInferenceService('x').args.decode.data_local", "decode.dataLocal"),
        ("router.scheduler_cpu", "router.scheduler.cpu"),
        ("router.scheduler_replicas", "router.scheduler.replicas"),
        ("lora_adapters[0].name", "loraAdapters[0].name"),
        ("prefill.worker.gpus", "prefill.worker.gpus"),
        ("max_model_len", "maxModelLen"),
        ("decode.env.A", "decode.env.A"),
    ],
)
def test_a_component_error_points_at_the_key_that_fed_it(component_path, key):
    assert stack_key(component_path) == key


# -- what the stack program makes ------------------------------------------------------------


def graph(changes: dict | None = None):
    project = load_project(ROOT)
    config = load_stack_config(project, "gke-llm")
    for key, value in (changes or {}).items():
        config.values[key] = value
    return run_stack(project, config)


@pytest.fixture(scope="module")
def gke_llm():
    return graph()


def releases(g):
    return {r.inputs["name"]: r for r in g.of_type(RELEASE)}


def test_exactly_one_cert_manager_and_one_kserve_namespace(gke_llm):
    rel = releases(gke_llm)
    cert = [r for r in rel.values() if r.inputs["chart"] == "cert-manager"]
    assert [(r.name, r.inputs["version"]) for r in cert] == [
        ("gpu-inference-cert-manager-release", "v1.18.2")
    ]
    names = sorted(r.inputs["metadata"]["name"] for r in gke_llm.of_type(NAMESPACE))
    assert names == [
        "cert-manager",
        "envoy-ai-gateway-system",
        "envoy-gateway-system",
        "kserve",
        "models",
    ]
    # Beside KServe's charts, the LLM chart leaves the shared resources to them.
    assert values_of(rel["kserve-llmisvc-resources"], "gke-llm") == {
        "kserve": {"llmisvc": {"createGIECRDs": False}, "createSharedResources": False}
    }


def test_the_llm_install_comes_after_cert_manager_and_kserve(gke_llm):
    rel = releases(gke_llm)
    for name in ("eg", "kserve-llmisvc-crd", "kserve-llmisvc-resources"):
        assert gke_llm.depends_on(rel[name], rel["cert-manager"]), name
        assert gke_llm.depends_on(rel[name], rel["kserve-runtime-configs"]), name


def test_every_service_waits_for_the_install_its_gateway_and_its_namespace(gke_llm):
    rel = releases(gke_llm)
    # The model namespace's ServiceAccount, made after the namespace.
    models = gke_llm.one("kubernetes:core/v1:ServiceAccount", "gpu-inference-ns-models-sa")
    services = gke_llm.of_type(LLMISVC)
    assert sorted(s.inputs["metadata"]["name"] for s in services) == ["llama-70b", "qwen-72b"]
    for s in services:
        assert gke_llm.depends_on(s, rel["kserve-llmisvc-configs"]), s.name
        assert gke_llm.depends_on(s, gke_llm.one(GATEWAY)), s.name
        assert gke_llm.depends_on(s, models), s.name


def test_every_part_is_on_its_pool(gke_llm):
    by_name = {s.inputs["metadata"]["name"]: s.inputs for s in gke_llm.of_type(LLMISVC)}
    h100 = {"nodeSelector": {"gpu-inference.dev/pool": "h100"}, "tolerations": H100_TOLERATIONS}
    router = {
        "nodeSelector": {"role": "llm-router"},
        "tolerations": [
            {"key": "role", "operator": "Equal", "value": "llm-router", "effect": "NoSchedule"}
        ],
    }

    def placement(pod):
        return {k: pod[k] for k in ("nodeSelector", "tolerations", "affinity") if k in pod}

    llama, qwen = by_name["llama-70b"]["spec"], by_name["qwen-72b"]["spec"]
    assert placement(llama["template"]) == h100
    assert placement(llama["prefill"]["template"]) == h100
    assert placement(llama["router"]["scheduler"]["template"]) == router
    assert placement(qwen["template"]) == h100
    assert placement(qwen["worker"]) == h100
    assert placement(qwen["router"]["scheduler"]["template"]) == router
    assert qwen["parallelism"] == {"data": 4, "dataLocal": 2, "tensor": 4}
    annotations = by_name["qwen-72b"]["metadata"]["annotations"]
    assert {k: v for k, v in annotations.items() if "/pool." in k} == {
        "gpu-inference.dev/pool.decode": "h100",
        "gpu-inference.dev/pool.worker": "h100",
        "gpu-inference.dev/pool.scheduler": "router",
    }


def test_a_worker_with_its_own_placement_gets_exactly_it():
    """The broken copy the placement check catches (GI001 on `<name>-kserve-mn`): a worker
    placed by itself without the pool's GPU toleration is the user's to write."""
    project = load_project(ROOT)
    config = load_stack_config(project, "gke-llm")
    services = json.loads(json.dumps(config.values[f"{NS}:{L}"]))
    services[1]["decode"]["worker"] = {
        "placement": {"nodeSelector": {"gpu-inference.dev/pool": "h100"}}
    }
    g = graph({f"{NS}:{L}": services})
    (qwen,) = [s for s in g.of_type(LLMISVC) if s.inputs["metadata"]["name"] == "qwen-72b"]
    worker = qwen.inputs["spec"]["worker"]
    assert worker["nodeSelector"] == {"gpu-inference.dev/pool": "h100"}
    assert "tolerations" not in worker
    assert "gpu-inference.dev/pool.worker" not in qwen.inputs["metadata"]["annotations"]


def test_without_kserve_the_llm_install_makes_its_namespace_and_shared_resources():
    addons = {
        "kserve": {"enabled": False},
        "certManager": {"enabled": True},
        "nvidiaDevicePlugin": {"enabled": False},
    }
    g = graph({f"{NS}:addons": addons})
    rel = releases(g)
    assert "kserve" not in rel and "kserve-llmisvc-resources" in rel
    assert values_of(rel["kserve-llmisvc-resources"], "gke-llm") == {
        "kserve": {"llmisvc": {"createGIECRDs": False}}
    }
    (kserve_ns,) = [r for r in g.of_type(NAMESPACE) if r.inputs["metadata"]["name"] == "kserve"]
    # The platform makes it, as it does beside KServe (one resource whatever the switch).
    assert kserve_ns.name == "gpu-inference-namespace-kserve"
    assert [r.inputs["chart"] for r in rel.values()].count("cert-manager") == 1


# -- broken copies of gke-llm the config layer can judge --------------------------------------


def test_tensor_3_on_a_32_head_model_named_in_the_stack_exits_2(tmp_path, capsys):
    """With its `model` row named, the config knows the heads: `preview` exits 2 with the key,
    its line in the stack file, and vLLM's own words."""
    from llm_broken_stacks import project, tensor_3_on_32_heads

    from components.preview import cli

    d = project(tmp_path, tensor_3_on_32_heads)
    out = tmp_path / "out"
    code = cli.main(["preview", "gke-llm", "--project-dir", str(d), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    text = (d / "stacks" / "Pulumi.gke-llm.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if t == "        tensor: 3")
    assert (
        "error: gpu-inference:llmInferenceServices[0].decode.tensor: tensor parallelism 3 does "
        "not divide llama-3.1-8b's 32 attention heads (vLLM: 'Total number of attention heads "
        "(32) must be divisible by tensor parallel size (3)') (allowed: a size vLLM accepts for "
        "llama-3.1-8b (32 attention heads, 8 KV heads): 1, 2, 4, 8, 16, 32)"
    ) in err
    assert f"Pulumi.gke-llm.yaml:{line})" in err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize(
    "edit", ["worker_without_toleration", "tensor_3_on_32_heads_unnamed", "llama_70b_on_one_l4"]
)
def test_the_broken_copies_the_check_judges_pass_the_config(tmp_path, edit):
    """These three are the placement check's to find (tests/check/_pending_test_llm_stacks.py):
    the config takes them, and the stack program makes them."""
    import llm_broken_stacks

    from components.preview.preview import load_project

    d = llm_broken_stacks.project(tmp_path, getattr(llm_broken_stacks, edit))
    project = load_project(d)
    g = run_stack(project, load_stack_config(project, "gke-llm"))
    assert len(g.of_type(LLMISVC)) == (3 if edit == "llama_70b_on_one_l4" else 2)


def test_the_spec_goes_back_to_the_same_config():
    spec = load_spec(mutated("llm", {}))
    again = load_spec(spec.to_config())
    assert again.to_config() == spec.to_config()
    assert again.llm_inference_services[1].decode.worker is not None


def test_prefill_workers_own_scheduler_placement_and_added_tolerations():
    """A prefill part with data-parallel workers, a decode part with a toleration added to its
    pool's, and a scheduler placed by itself: each template gets exactly its own."""
    services = [
        {
            "name": "llama-8b",
            "modelUri": "hf://meta-llama/Llama-3.1-8B-Instruct",
            "model": "llama-3.1-8b",
            "decode": {
                "pool": "h100",
                "gpus": 1,
                "tolerations": [{"key": "team", "operator": "Exists"}],
            },
            "prefill": {
                "pool": "h100",
                "gpus": 8,
                "tensor": 4,
                "data": 4,
                "dataLocal": 2,
                "worker": {},
            },
            "router": {
                "scheduler": {
                    "placement": {
                        "nodeSelector": {"role": "llm-router"},
                        "tolerations": [{"key": "role", "value": "llm-router"}],
                    },
                    "replicas": 2,
                }
            },
        }
    ]
    g = graph({f"{NS}:{L}": services})
    (svc,) = g.of_type(LLMISVC)
    spec, annotations = svc.inputs["spec"], svc.inputs["metadata"]["annotations"]
    h100 = {"gpu-inference.dev/pool": "h100"}
    assert spec["template"]["nodeSelector"] == h100
    assert spec["template"]["tolerations"] == [
        *H100_TOLERATIONS,
        {"key": "team", "operator": "Exists"},
    ]
    assert spec["prefill"]["parallelism"] == {"data": 4, "dataLocal": 2, "tensor": 4}
    for pod in (spec["prefill"]["template"], spec["prefill"]["worker"]):
        assert (pod["nodeSelector"], pod["tolerations"]) == (h100, H100_TOLERATIONS)
    assert spec["router"]["scheduler"] == {
        "replicas": 2,
        "template": {
            "nodeSelector": {"role": "llm-router"},
            "tolerations": [
                {"key": "role", "operator": "Equal", "value": "llm-router"},
            ],
        },
    }
    assert {k: v for k, v in annotations.items() if "/pool." in k} == {
        "gpu-inference.dev/pool.decode": "h100",
        "gpu-inference.dev/pool.prefill": "h100",
        "gpu-inference.dev/pool.prefill-worker": "h100",
    }


def test_a_scheduler_wired_to_a_pool_and_placed_by_itself_is_refused():
    changes = {f"{L}[0].router.scheduler.placement": {"nodeSelector": {"role": "x"}}}
    with pytest.raises(InputError) as caught:
        load_spec(mutated("llm", changes))
    assert str(caught.value) == (
        "gpu-inference:llmInferenceServices[0].router.scheduler.placement: pool and placement "
        "are both given: the scheduler is wired to pools, or places itself (allowed: pool, or "
        "placement: {nodeSelector, tolerations})"
    )
