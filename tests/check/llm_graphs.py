"""Hand-written graphs for the LLM rules: GKE pools (H100, L4, CPU) and KServe
LLMInferenceServices / LeaderWorkerSets as a plain Pulumi program registers them (a
`CustomResource` of that apiVersion and kind), with no gpu-inference component involved."""

from __future__ import annotations

from typing import Any

LLMISVC = "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService"
LWS = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
INFERENCE_POOL = "kubernetes:inference.networking.k8s.io/v1:InferencePool"
POOL = "gpu-inference.dev/pool"
DEDICATED = {"key": "dedicated", "value": "llm", "effect": "NO_SCHEDULE"}
TOL_DEDICATED = {"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}
TOL_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def gke(
    name: str,
    machine: str,
    accelerator: str | None = None,
    count: int = 0,
    *,
    tainted: bool = True,
    disk: int | None = None,
) -> dict[str, Any]:
    """A GKE node pool with its four nodes up (no never-scales-to-zero or cold-capacity
    warnings), labeled
    `gpu-inference.dev/pool=<name>` and (GPU pools) tainted `dedicated=llm`."""
    node_config: dict[str, Any] = {
        "machineType": machine,
        "labels": {POOL: name},
        "taints": [DEDICATED] if tainted else [],
    }
    if accelerator:
        node_config["guestAccelerators"] = [{"type": accelerator, "count": count}]
    if disk:
        node_config["diskSizeGb"] = disk
    return {
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {
            "name": name,
            "nodeConfig": node_config,
            "autoscaling": {"minNodeCount": 4, "maxNodeCount": 4},
        },
    }


H100 = gke("h100", "a3-highgpu-8g", "nvidia-h100-80gb", 8, disk=500)
L4 = gke("l4", "g2-standard-8", "nvidia-l4", 1)
CPU = gke("cpu", "e2-standard-8", tainted=False)
POOLS = [H100, L4, CPU]


def vllm(
    pool: str,
    gpus: int,
    *,
    tolerate: bool = True,
    cpu: str = "4",
    memory: str = "24Gi",
    args: list[str] | None = None,
) -> dict[str, Any]:
    """A vLLM pod spec (`template` / `worker`): the `main` container with its GPUs, on `pool`."""
    main: dict[str, Any] = {
        "name": "main",
        "resources": {
            "requests": {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpus},
            "limits": {"nvidia.com/gpu": gpus},
        },
    }
    if args:
        main["args"] = args
    spec: dict[str, Any] = {"nodeSelector": {POOL: pool}, "containers": [main]}
    if tolerate:
        spec["tolerations"] = [TOL_DEDICATED, TOL_GPU]
    return spec


def on_cpu() -> dict[str, Any]:
    return {"nodeSelector": {POOL: "cpu"}}


def llmisvc(
    name: str = "llama",
    *,
    model: str | None = "llama-3.1-70b",
    uri: str = "pvc://models/llama",
    template: dict[str, Any] | None = None,
    parallelism: dict[str, Any] | None = None,
    worker: dict[str, Any] | None = None,
    prefill: dict[str, Any] | None = None,
    scheduler: dict[str, Any] | None = None,
    wiring: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An LLMInferenceService; decode on H100 (4 GPUs, tensor 4) and the router's scheduler on
    the CPU pool unless told otherwise, wired by `gpu-inference.dev/pool.<component>`."""
    spec: dict[str, Any] = {
        "model": {"uri": uri, "name": name},
        "parallelism": {"tensor": 4} if parallelism is None else parallelism,
        "template": vllm("h100", 4) if template is None else template,
        "router": {
            "gateway": {},
            "route": {},
            "scheduler": {"template": on_cpu() if scheduler is None else scheduler},
        },
    }
    if not spec["parallelism"]:
        del spec["parallelism"]
    if worker is not None:
        spec["worker"] = worker
    if prefill is not None:
        spec["prefill"] = prefill
    ann = {f"{POOL}.{k}": v for k, v in (wiring or {"decode": "h100", "scheduler": "cpu"}).items()}
    if model:
        ann["gpu-inference.dev/model"] = model
    ann |= annotations or {}
    return {
        "type": LLMISVC,
        "name": name,
        "inputs": {
            "apiVersion": "serving.kserve.io/v1alpha2",
            "kind": "LLMInferenceService",
            "metadata": {"name": name, "namespace": "llm", "annotations": ann},
            "spec": spec,
        },
    }


def prefill_decode() -> dict[str, Any]:
    """Prefill and decode on H100 (tensor 4 each), the scheduler on the CPU pool."""
    return llmisvc(
        uri="hf://meta-llama/Llama-3.1-70B-Instruct",
        prefill={"parallelism": {"tensor": 4}, "template": vllm("h100", 4)},
        wiring={"decode": "h100", "prefill": "h100", "scheduler": "cpu"},
    )


def multi_node(*, worker_tolerates: bool = True, gpus: int = 8) -> dict[str, Any]:
    """Decode over LeaderWorkerSet groups of two pods (data 2, dataLocal 1, tensor 8)."""
    return llmisvc(
        parallelism={"data": 2, "dataLocal": 1, "tensor": 8},
        template=vllm("h100", gpus),
        worker=vllm("h100", gpus, tolerate=worker_tolerates),
        wiring={"decode": "h100", "worker": "h100", "scheduler": "cpu"},
    )


def leader_worker_set(
    name: str = "lws",
    *,
    size: int = 2,
    replicas: int | None = 2,
    leader: dict[str, Any] | None = None,
    worker: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A LeaderWorkerSet written by hand (no LLMInferenceService)."""
    lwt: dict[str, Any] = {
        "size": size,
        "workerTemplate": {"spec": vllm("h100", 8) if worker is None else worker},
    }
    if leader is not None:
        lwt["leaderTemplate"] = {"spec": leader}
    spec: dict[str, Any] = {"leaderWorkerTemplate": lwt}
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "type": LWS,
        "name": name,
        "inputs": {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": name, "namespace": "llm", "annotations": {POOL: "h100"}},
            "spec": spec,
        },
    }


def inference_pool(name: str = "llama-pool") -> dict[str, Any]:
    return {
        "type": INFERENCE_POOL,
        "name": name,
        "inputs": {
            "apiVersion": "inference.networking.k8s.io/v1",
            "kind": "InferencePool",
            "metadata": {"name": name, "namespace": "llm"},
            "spec": {
                "selector": {"matchLabels": {"app": "llama"}},
                "targetPorts": [{"number": 8000}],
                "endpointPickerRef": {"name": "llama-epp", "port": {"number": 9002}},
            },
        },
    }


def llm_config(name: str, spec: dict[str, Any], namespace: str = "llm") -> dict[str, Any]:
    """An LLMInferenceServiceConfig a service names in `baseRefs`."""
    return {
        "type": "kubernetes:serving.kserve.io/v1alpha2:LLMInferenceServiceConfig",
        "name": f"{namespace}-{name}",
        "inputs": {
            "apiVersion": "serving.kserve.io/v1alpha2",
            "kind": "LLMInferenceServiceConfig",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        },
    }
