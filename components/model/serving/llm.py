"""Does a language model fit its GPUs under vLLM? Popular open models' shapes and vLLM's memory
and parallelism rules, with the numbers a finding states.

Pure: imports nothing but `components.model`.

vLLM's rules, read in vLLM 0.19.1 (the PyPI wheel's source; KServe v0.20.0's scheduler preset pairs
its tokenizer image `llm-d-uds-tokenizer:vllm-v0.19.1` with the runtime image
`ghcr.io/llm-d/llm-d-cuda:v0.8.0`, whose own vLLM version was NOT verified):

- Memory budget: `gpu_memory_utilization` defaults to 0.9 (`vllm/config/cache.py`, CacheConfig);
  each worker asks for `ceil(total GPU memory x gpu_memory_utilization)`
  (`vllm/v1/worker/utils.py`, `request_memory`), and the KV cache gets what is left after the
  weights, the activation peak and non-torch memory (`vllm/v1/worker/gpu_worker.py`,
  `determine_available_memory`). Nothing left: "No available memory for the cache blocks".
- One sequence of `max_model_len` tokens must fit, else (`vllm/v1/core/kv_cache_utils.py`,
  `_check_enough_kv_cache_memory`): "To serve at least one request with the models's max seq len
  (N), (X GiB KV cache is needed, which is larger than the available KV cache memory (Y GiB)."
  A layer's page is `2 x block_size x kv_heads x head_size x dtype bytes`
  (`vllm/v1/kv_cache_interface.py`, AttentionSpec.real_page_size_bytes), block_size 16 by default
  (CacheConfig.DEFAULT_BLOCK_SIZE); a sequence takes `ceil(max_model_len / block_size)` pages
  per layer (FullAttentionSpec.max_memory_usage_bytes).
- Tensor parallelism: "Total number of attention heads (H) must be divisible by tensor parallel
  size (T)." (`vllm/config/model.py`, ModelConfig.verify_with_parallel_config). The KV heads must
  split too: `QKVParallelLinear` (`vllm/model_executor/layers/linear.py`) takes
  `divide(total_num_kv_heads, tp_size)` when T is below them and `divide(tp_size,
  total_num_kv_heads)` (replicas) when T is at or above them, and `divide` asserts exact division
  (`vllm/distributed/utils.py` ensure_divisibility: "{n} is not divisible by {d}"); Qwen2's
  attention asserts the same (`vllm/model_executor/models/qwen2.py` Qwen2Attention). A GPU holds
  `max(1, kv_heads // T)` of them (ModelConfig.get_num_kv_heads).
- Pipeline parallelism splits the layers as evenly as it can (`vllm/distributed/utils.py`,
  get_pp_indices: the remainder goes to the stages before the last); a worker group is
  `pipeline x tensor` GPUs (`vllm/config/parallel.py`, ParallelConfig.world_size).

What is approximated here, and says so: weights per GPU are the weights / (tensor x pipeline)
(vLLM keeps norms whole on every GPU and the embeddings on the first and last stage, so the real
figure is slightly higher); the activation peak and CUDA/NCCL memory are not known before the
engine runs, so "fits" means the weights and one full-length sequence fit the budget, a necessary
condition, not a sufficient one. Sliding-window layers (Gemma 2) are counted as full attention,
an upper bound on their KV cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, show

GB = 1_000_000_000
"""Decimal gigabyte: GPU memory is stated so (an L4 is '24 GB'), and so are the findings."""
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
"""vLLM 0.19.1 `CacheConfig.gpu_memory_utilization` default."""
KV_BLOCK_SIZE = 16
"""vLLM 0.19.1 `CacheConfig.DEFAULT_BLOCK_SIZE`: tokens per KV cache page."""
MAX_MODEL_SIZE_GB = 1_000_000
"""The most `modelSizeGb` may be (1 PB): no API takes it, so this bounds the arithmetic the check
does with it, five hundred times the largest open-weight checkpoints (about 2 TB in bf16 at 1T
parameters)."""
MAX_MODEL_PARAMETERS = 10**15
"""The most `modelParameters` may be: the 1 PB of `MAX_MODEL_SIZE_GB` at one byte a parameter.
Not an int32: Llama 3.1 8B alone has 8.03e9."""

DTYPE_BYTES: dict[str, float] = {
    "float32": 4.0,
    "fp32": 4.0,
    "bfloat16": 2.0,
    "bf16": 2.0,
    "float16": 2.0,
    "fp16": 2.0,
    "half": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}


def dtype_bytes(dtype: str) -> float:
    """Bytes per parameter (or KV element) of a dtype name; InputError if unknown."""
    if not isinstance(dtype, str) or dtype.lower() not in DTYPE_BYTES:
        raise InputError(f"dtype {show(dtype)} is not known", ", ".join(DTYPE_BYTES))
    return DTYPE_BYTES[dtype.lower()]


# ---------------------------------------------------------------------------------------------
# Model shapes
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelShape:
    """What vLLM's memory depends on, as a model's Hugging Face `config.json` states it.

    `parameters` is computed from the shape (a Llama-style decoder: q/k/v/o projections, a gated
    MLP of three matrices, or `experts` of them plus a router, RMS norms, embeddings and an LM head
    unless tied); the tests hold it against the sizes the model pages publish.
    """

    name: str
    hf_repo: str
    layers: int
    hidden: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    max_position_embeddings: int
    dtype: str = "bfloat16"
    tied_embeddings: bool = False
    qkv_bias: bool = False
    experts: int = 0
    norms_per_layer: int = 2
    source: str = ""

    @property
    def parameters(self) -> int:
        q_out = self.attention_heads * self.head_dim
        kv_out = self.kv_heads * self.head_dim
        attn = self.hidden * q_out + 2 * self.hidden * kv_out + q_out * self.hidden
        if self.qkv_bias:
            attn += q_out + 2 * kv_out
        mlp = 3 * self.hidden * self.intermediate
        if self.experts:
            mlp = self.experts * mlp + self.hidden * self.experts
        per_layer = attn + mlp + self.norms_per_layer * self.hidden
        embeddings = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        return embeddings + self.layers * per_layer + self.hidden


_HF = "config.json of the Hugging Face repo {repo}"
_LLAMA_PRIMARY = (
    "; layers / dim / heads / KV heads also in Meta's meta-llama/llama-models models/sku_list.py "
    "(commit 084b88e939e954d2851ee28f96398ca54aa8f8f9)"
)
_SECONDARY = (
    " [S]: transcribed from copies of that config.json found by code search; huggingface.co is "
    "not reachable from the build machine, so not read at the source"
)


def _shape(name: str, repo: str, note: str = "", **kw: Any) -> ModelShape:
    return ModelShape(name, repo, source=_HF.format(repo=repo) + note + _SECONDARY, **kw)


_LLAMA3_8B: dict[str, Any] = dict(
    layers=32,
    hidden=4096,
    attention_heads=32,
    kv_heads=8,
    head_dim=128,
    intermediate=14336,
    vocab=128256,
    max_position_embeddings=131072,
)
_LLAMA3_70B: dict[str, Any] = dict(
    layers=80,
    hidden=8192,
    attention_heads=64,
    kv_heads=8,
    head_dim=128,
    intermediate=28672,
    vocab=128256,
    max_position_embeddings=131072,
)

MODELS: dict[str, ModelShape] = {
    m.name: m
    for m in (
        _shape("llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", _LLAMA_PRIMARY, **_LLAMA3_8B),
        _shape("llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct", _LLAMA_PRIMARY, **_LLAMA3_70B),
        _shape(
            "llama-3.1-405b",
            "meta-llama/Llama-3.1-405B-Instruct",
            _LLAMA_PRIMARY,
            layers=126,
            hidden=16384,
            attention_heads=128,
            kv_heads=8,
            head_dim=128,
            intermediate=53248,
            vocab=128256,
            max_position_embeddings=131072,
        ),
        _shape("llama-3.3-70b", "meta-llama/Llama-3.3-70B-Instruct", **_LLAMA3_70B),
        _shape(
            "deepseek-r1-distill-llama-70b",
            "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
            **_LLAMA3_70B,
        ),
        _shape(
            "qwen2.5-7b",
            "Qwen/Qwen2.5-7B-Instruct",
            layers=28,
            hidden=3584,
            attention_heads=28,
            kv_heads=4,
            head_dim=128,
            intermediate=18944,
            vocab=152064,
            max_position_embeddings=32768,
            qkv_bias=True,
        ),
        _shape(
            "qwen2.5-72b",
            "Qwen/Qwen2.5-72B-Instruct",
            layers=80,
            hidden=8192,
            attention_heads=64,
            kv_heads=8,
            head_dim=128,
            intermediate=29568,
            vocab=152064,
            max_position_embeddings=32768,
            qkv_bias=True,
        ),
        _shape(
            "mistral-7b",
            "mistralai/Mistral-7B-Instruct-v0.3",
            layers=32,
            hidden=4096,
            attention_heads=32,
            kv_heads=8,
            head_dim=128,
            intermediate=14336,
            vocab=32768,
            max_position_embeddings=32768,
        ),
        _shape(
            "mixtral-8x7b",
            "mistralai/Mixtral-8x7B-Instruct-v0.1",
            layers=32,
            hidden=4096,
            attention_heads=32,
            kv_heads=8,
            head_dim=128,
            intermediate=14336,
            vocab=32000,
            max_position_embeddings=32768,
            experts=8,
        ),
        _shape(
            "gemma-2-27b",
            "google/gemma-2-27b-it",
            "; sliding-window layers counted as full attention",
            layers=46,
            hidden=4608,
            attention_heads=32,
            kv_heads=16,
            head_dim=128,
            intermediate=36864,
            vocab=256000,
            max_position_embeddings=8192,
            tied_embeddings=True,
            norms_per_layer=4,
        ),
    )
}


def model_shape(name: str) -> ModelShape:
    """The table row named `name` (InputError listing the names otherwise)."""
    if name not in MODELS:
        raise InputError(f"model {show(name)} is not in the table", ", ".join(sorted(MODELS)))
    return MODELS[name]


# ---------------------------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------------------------


def weights_bytes(parameters: int, dtype: str) -> int:
    """Bytes of the weights: parameters x bytes of the dtype."""
    return math.ceil(parameters * dtype_bytes(dtype))


def layers_per_stage(layers: int, pipeline: int) -> int:
    """Layers of the largest pipeline stage (vLLM get_pp_indices: an uneven split adds the
    remainder one layer each to stages before the last)."""
    return layers // pipeline + (1 if layers % pipeline else 0)


def kv_heads_split(kv_heads: int, tensor: int) -> bool:
    """vLLM QKVParallelLinear: the KV heads split evenly over `tensor` GPUs (T divides them), or
    each is replicated on a whole number of GPUs (T a multiple of them)."""
    return kv_heads % tensor == 0 if tensor < kv_heads else tensor % kv_heads == 0


def tensor_sizes(shape: ModelShape, most: int = 64) -> list[int]:
    """The tensor parallel sizes up to `most` vLLM accepts for the model: dividing its attention
    heads, and dividing its KV heads or a multiple of them. None is past the heads, so the search
    stops there whatever `most` is (a stack's `tensor: 2147483647` asks for no longer a list)."""
    return [
        t
        for t in range(1, min(most, shape.attention_heads) + 1)
        if shape.attention_heads % t == 0 and kv_heads_split(shape.kv_heads, t)
    ]


def kv_heads_per_gpu(kv_heads: int, tensor: int) -> int:
    """vLLM ModelConfig.get_num_kv_heads: split by tensor parallelism, at least one."""
    return max(1, kv_heads // tensor)


def kv_bytes_per_token(
    layers: int, kv_heads: int, head_dim: int, dtype: str, tensor: int = 1, pipeline: int = 1
) -> float:
    """KV cache bytes one token takes on one GPU: 2 (K and V) x layers of the stage x KV heads
    of the GPU x head dim x dtype bytes. With tensor = pipeline = 1: the whole model's."""
    return (
        2
        * layers_per_stage(layers, pipeline)
        * kv_heads_per_gpu(kv_heads, tensor)
        * head_dim
        * dtype_bytes(dtype)
    )


def kv_bytes_for_sequence(
    max_model_len: int,
    layers: int,
    kv_heads: int,
    head_dim: int,
    dtype: str,
    tensor: int = 1,
    pipeline: int = 1,
) -> int:
    """KV cache one GPU needs for one sequence of `max_model_len` tokens, in whole pages of
    KV_BLOCK_SIZE tokens (vLLM FullAttentionSpec.max_memory_usage_bytes)."""
    pages = math.ceil(max_model_len / KV_BLOCK_SIZE)
    per_token = kv_bytes_per_token(layers, kv_heads, head_dim, dtype, tensor, pipeline)
    return math.ceil(pages * KV_BLOCK_SIZE * per_token)


@dataclass(frozen=True)
class Fit:
    """The verdict with its numbers (bytes), and the sentence a finding says."""

    fits: bool
    weights: int
    weights_per_gpu: int
    kv_per_gpu: int
    budget_per_gpu: int
    message: str

    @property
    def need_per_gpu(self) -> int:
        return self.weights_per_gpu + self.kv_per_gpu


def _gb(n: float) -> str:
    text = f"{n / GB:.1f}"
    return text[:-2] if text.endswith(".0") else text


def fit(
    shape: ModelShape,
    gpu_memory_gb: float,
    *,
    gpu_name: str = "GPU",
    tensor: int = 1,
    pipeline: int = 1,
    max_model_len: int | None = None,
    dtype: str | None = None,
    kv_dtype: str | None = None,
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
    weights: int | None = None,
) -> Fit:
    """Whether the weights (split over tensor x pipeline GPUs) and the KV cache of one sequence
    of `max_model_len` tokens (default: the model's max_position_embeddings, as vLLM defaults it)
    fit `gpu_memory_utilization` x one GPU's memory. `weights`: their bytes when stated (a
    quantized checkpoint), else parameters x dtype."""
    for value, what in ((tensor, "tensor"), (pipeline, "pipeline")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{what} parallelism {show(value)} is not a size", "an integer >= 1")
    if not 0 < gpu_memory_utilization <= 1:
        raise InputError(
            f"gpu_memory_utilization {show(gpu_memory_utilization)} is out of range", "0 < u <= 1"
        )
    dtype = dtype or shape.dtype
    length = max_model_len or shape.max_position_embeddings
    if weights is None:
        weights = weights_bytes(shape.parameters, dtype)
    gpus = tensor * pipeline
    per_gpu = math.ceil(weights / gpus)
    kv = kv_bytes_for_sequence(
        length, shape.layers, shape.kv_heads, shape.head_dim, kv_dtype or dtype, tensor, pipeline
    )
    budget = math.floor(gpu_memory_gb * GB * gpu_memory_utilization)
    ok = per_gpu + kv <= budget
    split = f"{_gb(per_gpu)} GB per GPU over tensor {tensor} x pipeline {pipeline}"
    holds = (
        f"{gpus} x {gpu_name} ({gpu_memory_gb:g} GB) at {gpu_memory_utilization:g} utilization "
        f"hold{'s' if gpus == 1 else ''} {_gb(budget)} GB per GPU"
    )
    message = (
        f"{shape.name} in {dtype} needs {_gb(weights)} GB of weights ({split}) and "
        f"{_gb(kv)} GB of KV cache per GPU for one {length}-token sequence; {holds}"
    )
    if not ok and per_gpu > budget:
        message += ": the weights alone do not fit"
    elif not ok:
        message += ": vLLM stops with 'To serve at least one request with the models's max seq len'"
    return Fit(ok, weights, per_gpu, kv, budget, message)


def fit_weights(
    name: str,
    weights: int,
    gpu_memory_gb: float,
    *,
    gpu_name: str = "GPU",
    tensor: int = 1,
    pipeline: int = 1,
    gpu_memory_utilization: float = DEFAULT_GPU_MEMORY_UTILIZATION,
) -> Fit:
    """`fit` for a model whose shape is not known, only its weights' bytes: the KV cache is not
    counted, so "fits" is weaker still (the weights alone fit the budget)."""
    if not 0 < gpu_memory_utilization <= 1:
        raise InputError(
            f"gpu_memory_utilization {show(gpu_memory_utilization)} is out of range", "0 < u <= 1"
        )
    gpus = tensor * pipeline
    per_gpu = math.ceil(weights / gpus)
    budget = math.floor(gpu_memory_gb * GB * gpu_memory_utilization)
    ok = per_gpu <= budget
    message = (
        f"{name} needs {_gb(weights)} GB of weights ({_gb(per_gpu)} GB per GPU over tensor "
        f"{tensor} x pipeline {pipeline}; its KV cache is not known: its shape is not in the "
        f"table); {gpus} x {gpu_name} ({gpu_memory_gb:g} GB) at {gpu_memory_utilization:g} "
        f"utilization hold{'s' if gpus == 1 else ''} {_gb(budget)} GB per GPU"
    )
    if not ok:
        message += ": the weights alone do not fit"
    return Fit(ok, weights, per_gpu, 0, budget, message)


# ---------------------------------------------------------------------------------------------
# Parallelism
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParallelismIssue:
    """One thing `parallelism_issues` finds, with what kind it is: `heads` (tensor does not divide
    the attention heads), `node` (a pod asks more GPUs than a node has), `pod` (a data-parallel
    pod's GPUs are not dataLocal x tensor), `group` (the worker group's GPUs are not vLLM's world
    size); `short`: fewer GPUs than vLLM needs (it cannot start), else more (some sit idle)."""

    kind: str
    message: str
    short: bool = True


def parallelism_messages(shape: ModelShape | None, **sizes: Any) -> list[str]:
    """`parallelism_issues`' sentences alone (the stack config words its refusals with them)."""
    return [i.message for i in parallelism_issues(shape, **sizes)]


def parallelism_issues(
    shape: ModelShape | None,
    *,
    tensor: int = 1,
    pipeline: int = 1,
    data: int | None = None,
    data_local: int | None = None,
    gpus_per_pod: int | None = None,
    pods_per_group: int = 1,
    gpus_per_node: int | None = None,
) -> list[ParallelismIssue]:
    """What vLLM (and KServe's launch of it) would refuse or cannot place.

    - tensor must divide the attention heads (vLLM verify_with_parallel_config);
    - a pod's GPUs sit on one node, so the GPUs a pod requests must not exceed the node's;
    - one pod serves tensor x dataLocal GPUs in data-parallel mode (KServe's
      kserve-config-llm-worker-data-parallel starts `--data-parallel-size-local dataLocal` engines
      of `--tensor-parallel-size tensor` GPUs each), else tensor GPUs;
    - a worker group (the pods of one LeaderWorkerSet replica) holds pipeline x tensor GPUs
      (vLLM world size), or data x tensor in data-parallel mode.
    """
    problems = head_issues(shape, tensor)
    if gpus_per_pod is not None:
        problems += gpu_count_issues(
            tensor, pipeline, data, data_local, gpus_per_pod, pods_per_group, gpus_per_node
        )
    return problems


def head_issues(shape: ModelShape | None, tensor: int) -> list[ParallelismIssue]:
    """Tensor parallelism must split the attention heads and the KV heads (vLLM's checks)."""
    if shape is not None and shape.attention_heads % tensor:
        return [
            ParallelismIssue(
                "heads",
                f"tensor parallelism {tensor} does not divide {shape.name}'s "
                f"{shape.attention_heads} attention heads (vLLM: 'Total number of attention heads "
                f"({shape.attention_heads}) must be divisible by tensor parallel size ({tensor})')",
            )
        ]
    if shape is not None and not kv_heads_split(shape.kv_heads, tensor):
        if tensor < shape.kv_heads:
            n, d = shape.kv_heads, tensor
        else:
            n, d = tensor, shape.kv_heads
        return [
            ParallelismIssue(
                "heads",
                f"tensor parallelism {tensor} neither divides {shape.name}'s {shape.kv_heads} KV "
                f"heads nor is a multiple of them (vLLM's QKVParallelLinear: '{n} is not "
                f"divisible by {d}')",
            )
        ]
    return []


def gpu_count_issues(
    tensor: int,
    pipeline: int,
    data: int | None,
    data_local: int | None,
    gpus_per_pod: int,
    pods_per_group: int,
    gpus_per_node: int | None,
) -> list[ParallelismIssue]:
    """The GPUs a pod and a worker group request against what the parallelism runs on."""
    problems: list[ParallelismIssue] = []
    dp = data is not None or data_local is not None
    if gpus_per_node is not None and gpus_per_pod > gpus_per_node:
        problems.append(
            ParallelismIssue(
                "node",
                f"a pod requests {gpus_per_pod} GPUs but a node has {gpus_per_node}: the pod "
                "cannot be scheduled (tensor parallelism stays inside one pod's node)",
            )
        )
    per_pod_expected = tensor * (data_local or 1) if dp else None
    if per_pod_expected is not None and gpus_per_pod != per_pod_expected:
        problems.append(
            ParallelismIssue(
                "pod",
                f"a data-parallel pod runs dataLocal {data_local or 1} x tensor {tensor} = "
                f"{per_pod_expected} GPUs but requests {gpus_per_pod}",
                gpus_per_pod < per_pod_expected,
            )
        )
    group = gpus_per_pod * pods_per_group
    world = tensor * (data or 1) if dp else tensor * pipeline
    what = f"data {data or 1} x tensor {tensor}" if dp else f"pipeline {pipeline} x tensor {tensor}"
    if group != world:
        problems.append(
            ParallelismIssue(
                "group",
                f"{what} = {world} GPUs, but the worker group has {pods_per_group} pod(s) x "
                f"{gpus_per_pod} GPUs = {group}",
                group < world,
            )
        )
    return problems
