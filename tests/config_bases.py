"""Small valid stack configs, one per provider, and `mutated(base, changes)` for bad-input rows.

Each base is a stack config as `load_spec` receives it: full keys (`gpu-inference:pools`) mapped to
parsed values. Together they exercise every section: spot + on-demand pool lists, CPU pools for
transformers, Seldon ServerConfig / Server / Models by capability and by pinning.
"""

from __future__ import annotations

import copy
import re
from typing import Any

NS = "gpu-inference"
DEL = object()  # a mutation value that removes the key

GKE: dict[str, Any] = {
    f"{NS}:cluster": {"provider": "gke", "name": "dev", "location": "us-central1"},
    f"{NS}:pools": [
        {
            "name": "l4-spot",
            "accelerator": "nvidia-l4",
            "machineType": "g2-standard-8",
            "maxNodes": 3,
            "spot": True,
            "labels": {"pool": "l4-spot"},
            "taints": [{"key": "inference", "value": "true", "effect": "NoSchedule"}],
        },
        {"name": "l4", "accelerator": "nvidia-l4", "machineType": "g2-standard-8", "maxNodes": 2},
        {"name": "cpu", "machineType": "n2-standard-4", "maxNodes": 3},
    ],
    f"{NS}:inferenceServices": [
        {
            "name": "llm",
            "predictor": {
                "pool": ["l4-spot", "l4"],
                "gpus": 1,
                "model": {"format": "huggingface", "storageUri": "hf://meta-llama/Llama-3.2-1B"},
            },
            "transformer": {
                "pool": "cpu",
                "cpu": "500m",
                "containers": [
                    {"name": "kserve-container", "image": "kfserving/image-transformer-v2:latest"}
                ],
            },
        },
        {
            "name": "sklearn-iris",
            "predictor": {
                "pool": "cpu",
                "model": {
                    "format": "sklearn",
                    "storageUri": "gs://kfserving-examples/models/sklearn/1.0/model",
                },
            },
        },
    ],
    f"{NS}:seldon": {
        "serverConfigs": [
            {
                "name": "mlserver-llm",
                "pool": "l4",
                # A ServerConfig is the whole server pod: Seldon's agent and rclone too.
                "containers": [
                    {"name": "rclone", "image": "seldonio/seldon-rclone:2.6.0"},
                    {"name": "agent", "image": "seldonio/seldon-agent:2.6.0"},
                    {"name": "mlserver", "image": "seldonio/mlserver:1.6.1"},
                ],
            }
        ],
        "servers": [
            {"name": "gpu-server", "pool": "l4", "gpus": 1, "capabilities": ["model-on-gpu"]},
            {"name": "cpu-server", "pool": "cpu"},
        ],
        "models": [
            {
                "name": "llama3",
                "storageUri": "gs://models/llama3",
                "requirements": ["model-on-gpu"],
            },
            {"name": "iris", "storageUri": "gs://models/iris", "server": "cpu-server"},
        ],
    },
    "gcp:project": "my-project",
}

EKS: dict[str, Any] = {
    f"{NS}:cluster": {
        "provider": "eks",
        "name": "prod",
        "region": "us-east-1",
        "workloadIdentity": {"awsRoleArn": "arn:aws:iam::123456789012:role/model-reader"},
    },
    f"{NS}:pools": [
        {
            "name": "g5",
            "instanceTypes": ["g5.xlarge"],
            "gpusPerNode": 1,
            "capacityType": "ON_DEMAND",
            "amiType": "AL2023_x86_64_NVIDIA",
            "maxNodes": 4,
            "taints": [{"key": "nvidia.com/gpu", "value": "true"}],
        },
        {"name": "cpu", "instanceTypes": ["m6i.large"], "maxNodes": 3},
    ],
    f"{NS}:addons": {"kserve": {"defaultDeploymentMode": "RawDeployment"}},
    f"{NS}:inferenceServices": [
        {
            "name": "torchscript-cifar",
            "predictor": {
                "pool": "g5",
                "gpus": 1,
                "framework": {
                    "name": "triton",
                    "storageUri": "gs://kfserving-examples/models/torchscript",
                    "runtimeVersion": "21.08-py3",
                },
                "env": {"OMP_NUM_THREADS": "1"},
            },
        }
    ],
    f"{NS}:seldon": {
        "servers": [{"name": "mlserver-llm-local-gpu", "pool": "g5", "gpus": 1, "gpuLimit": 1}],
        "models": [
            {
                "name": "llama3",
                "storageUri": "s3://models/llama3",
                "server": "mlserver-llm-local-gpu",
            }
        ],
    },
    "aws:region": "us-east-1",
}

EXISTING: dict[str, Any] = {
    f"{NS}:cluster": {"provider": "existing", "context": "onprem"},
    f"{NS}:pools": [
        {
            "name": "a100",
            "nodes": ["gpu-node-1", "gpu-node-2"],
            "accelerator": "nvidia-a100-80gb",
            "gpusPerNode": 2,
            "labels": {"pool": "infer-srv"},
            "taints": [{"key": "seldon-gpu-srv", "value": "true", "effect": "NoSchedule"}],
        },
        {"name": "cpu", "nodes": ["cpu-node-1"]},
    ],
    f"{NS}:knative": {"mode": "patch"},
    f"{NS}:inferenceServices": [
        {
            "name": "torch-transformer",
            "predictor": {
                "pool": "a100",
                "gpus": 1,
                "framework": {
                    "name": "triton",
                    "storageUri": "gs://kfserving-examples/models/torchscript",
                },
                "args": ["--log-verbose=1"],
            },
            "transformer": {
                "pool": "cpu",
                "containers": [
                    {
                        "name": "kfserving-container",
                        "image": "kfserving/image-transformer-v2:latest",
                    }
                ],
            },
        }
    ],
}

# KServe LLMInferenceServices on GKE H100s: prefill/decode on one pool, a multi-node
# (data-parallel) model, the schedulers on a CPU pool.
LLM: dict[str, Any] = {
    f"{NS}:cluster": {"provider": "gke", "name": "llm", "location": "us-central1"},
    f"{NS}:pools": [
        {
            "name": "h100",
            "accelerator": "nvidia-h100-80gb",
            "machineType": "a3-highgpu-8g",
            "gpusPerNode": 8,
            "maxNodes": 4,
        },
        {"name": "router", "machineType": "n2-standard-8", "maxNodes": 2},
    ],
    f"{NS}:knative": {"mode": "none"},
    f"{NS}:addons": {"kserve": {"defaultDeploymentMode": "Standard"}},
    f"{NS}:llmInferenceServices": [
        {
            "name": "llama-70b",
            "modelUri": "hf://meta-llama/Llama-3.1-70B-Instruct",
            "model": "llama-3.1-70b",
            "decode": {"pool": "h100", "gpus": 4, "tensor": 4},
            "prefill": {"pool": "h100", "gpus": 4, "tensor": 4},
            "router": {"scheduler": {"pool": "router"}},
        },
        {
            "name": "qwen-72b",
            "modelUri": "hf://Qwen/Qwen2.5-72B-Instruct",
            "model": "qwen2.5-72b",
            "decode": {
                "pool": "h100",
                "gpus": 8,
                "tensor": 4,
                "data": 4,
                "dataLocal": 2,
                "worker": {},
            },
        },
    ],
}

# AKS: an A100 agent pool, a spot T4 agent pool and a node auto-provisioning H100 pool.
AKS: dict[str, Any] = {
    f"{NS}:cluster": {"provider": "aks", "name": "dev", "resourceGroup": "rg-dev"},
    f"{NS}:pools": [
        {"name": "a100", "vmSize": "Standard_NC24ads_A100_v4", "maxNodes": 2, "maxPods": 30},
        {"name": "t4-spot", "vmSize": "Standard_NC4as_T4_v3", "spot": True, "maxNodes": 3},
        {
            "name": "h100",
            "nap": {"gpuNames": ["H100"], "capacityTypes": ["on-demand"]},
            "maxNodes": 2,
        },
    ],
    f"{NS}:inferenceServices": [
        {
            "name": "llm",
            "predictor": {
                "pool": ["t4-spot", "a100"],
                "gpus": 1,
                "model": {"format": "huggingface", "storageUri": "hf://meta-llama/Llama-3.2-1B"},
            },
        },
        {
            "name": "big",
            "predictor": {
                "pool": "h100",
                "gpus": 1,
                "model": {"format": "huggingface", "storageUri": "hf://meta-llama/Llama-3.1-8B"},
            },
        },
    ],
}

BASES = {"gke": GKE, "eks": EKS, "existing": EXISTING, "llm": LLM, "aks": AKS}

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def mutated(base: str, changes: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of base config `base` with `changes` applied: each key a path from the section
    (`pools[0].maxNodes`) or a full config key (`other:key`), each value the new value or DEL."""
    config = copy.deepcopy(BASES[base])
    for path, value in changes.items():
        if ":" in path:
            config[path] = value
            continue
        tokens = [int(i) if i else name for name, i in _TOKEN.findall(path)]
        section, *rest = tokens
        key = f"{NS}:{section}"
        if not rest:
            if value is DEL:
                del config[key]
            else:
                config[key] = value
            continue
        node: Any = config.setdefault(key, {})
        for t in rest[:-1]:
            node = node[t] if isinstance(t, int) else node.setdefault(t, {})
        if value is DEL:
            del node[rest[-1]]
        else:
            node[rest[-1]] = value
    return config
