"""The model table and vLLM's memory and parallelism rules, against figures computed by hand."""

from __future__ import annotations

import pytest

from components.model.errors import InputError
from components.model.serving import llm
from components.model.serving.llm import GB, MODELS, fit, parallelism_messages

# Parameters as the models' pages publish them (rounded), and the exact count the shape gives,
# computed by hand, e.g. Llama 3.1 8B: embeddings 128256 x 4096 x 2 (untied) = 1,050,673,152;
# per layer q 4096^2 + k, v 4096 x 1024 x 2 + o 4096^2 = 41,943,040, MLP 3 x 4096 x 14336 =
# 176,160,768, two norms 8,192: 218,112,000 x 32 layers = 6,979,584,000; + final norm 4,096.
PARAMETERS = [
    ("llama-3.1-8b", 8_030_261_248, 8.03),
    ("llama-3.1-70b", 70_553_706_496, 70.6),
    ("llama-3.1-405b", 405_853_388_800, 406),
    ("llama-3.3-70b", 70_553_706_496, 70.6),
    ("deepseek-r1-distill-llama-70b", 70_553_706_496, 70.6),
    # + q/k/v biases 3584 + 512 + 512 per layer.
    ("qwen2.5-7b", 7_615_616_512, 7.62),
    ("qwen2.5-72b", 72_706_203_648, 72.7),
    ("mistral-7b", 7_248_023_552, 7.25),
    # 8 experts x 3 x 4096 x 14336 + router 4096 x 8 per layer.
    ("mixtral-8x7b", 46_702_792_704, 46.7),
    # Tied embeddings 256000 x 4608 once; q 4608 x 4096, k/v 4608 x 2048; four norms per layer.
    ("gemma-2-27b", 27_227_128_320, 27.2),
]


@pytest.mark.parametrize(("name", "exact", "published_billions"), PARAMETERS)
def test_parameters_from_the_shape(name, exact, published_billions):
    params = MODELS[name].parameters
    assert params == exact
    digits = 0 if published_billions >= 100 else 1 if published_billions >= 10 else 2
    assert round(params / 1e9, digits) == published_billions


def test_every_row_names_its_source_and_divides_its_heads():
    for m in MODELS.values():
        assert m.hf_repo in m.source and "[S]" in m.source
        assert m.attention_heads % m.kv_heads == 0
        assert m.hidden == m.attention_heads * m.head_dim or m.name == "gemma-2-27b"


def test_unknown_model_and_dtype_are_refused():
    with pytest.raises(InputError, match="model 'llama-9' is not in the table"):
        llm.model_shape("llama-9")
    with pytest.raises(InputError, match="dtype 'fp12' is not known"):
        llm.dtype_bytes("fp12")


@pytest.mark.parametrize(
    ("model", "tensor", "pipeline", "expected"),
    [
        # 2 x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes per token.
        ("llama-3.1-8b", 1, 1, 131_072),
        # 80 layers: 327,680; tensor 8 leaves one KV head per GPU: 40,960.
        ("llama-3.1-70b", 1, 1, 327_680),
        ("llama-3.1-70b", 8, 1, 40_960),
        # Tensor 16 > 8 KV heads: replicated, still one per GPU.
        ("llama-3.1-70b", 16, 1, 40_960),
        # 126 layers over pipeline 4: stages of 32, 32, 31, 31 -> 32 layers x 1 head (tensor 8).
        ("llama-3.1-405b", 8, 4, 2 * 32 * 1 * 128 * 2),
        # Qwen2.5 7B: 28 layers x 4 KV heads.
        ("qwen2.5-7b", 1, 1, 2 * 28 * 4 * 128 * 2),
    ],
)
def test_kv_bytes_per_token(model, tensor, pipeline, expected):
    m = MODELS[model]
    got = llm.kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, m.dtype, tensor, pipeline)
    assert got == expected


def test_a_sequence_takes_whole_pages_of_16_tokens():
    m = MODELS["llama-3.1-8b"]
    # 8192 tokens = 512 pages; 8193 tokens = 513 pages = 8208 tokens.
    assert llm.kv_bytes_for_sequence(8192, m.layers, m.kv_heads, m.head_dim, "bf16") == (
        8192 * 131_072
    )
    assert llm.kv_bytes_for_sequence(8193, m.layers, m.kv_heads, m.head_dim, "bf16") == (
        8208 * 131_072
    )


def test_layers_per_stage_follows_vllm_uneven_split():
    assert [llm.layers_per_stage(126, p) for p in (1, 2, 4, 7)] == [126, 63, 32, 18]


def test_llama_70b_in_fp16_on_one_l4_names_the_numbers():
    f = fit(MODELS["llama-3.1-70b"], 24, gpu_name="L4", dtype="float16", max_model_len=8192)
    assert not f.fits
    assert f.weights == 141_107_412_992
    assert f.budget_per_gpu == 21_600_000_000
    # 8192 tokens x 327,680 bytes.
    assert f.kv_per_gpu == 2_684_354_560
    assert f.message == (
        "llama-3.1-70b in float16 needs 141.1 GB of weights (141.1 GB per GPU over tensor 1 x "
        "pipeline 1) and 2.7 GB of KV cache per GPU for one 8192-token sequence; 1 x L4 (24 GB) "
        "at 0.9 utilization holds 21.6 GB per GPU: the weights alone do not fit"
    )


def test_llama_70b_on_four_h100_fits_and_on_two_the_kv_cache_does_not():
    m = MODELS["llama-3.1-70b"]
    four = fit(m, 80, gpu_name="H100", tensor=4, max_model_len=32768)
    # 141.1 GB / 4 = 35.3 GB; KV 32768 x 2 x 80 x 2 x 128 x 2 = 10.7 GB; budget 72 GB.
    assert four.fits and four.weights_per_gpu == 35_276_853_248
    assert four.kv_per_gpu == 32768 * 2 * 80 * 2 * 128 * 2
    two = fit(m, 80, gpu_name="H100", tensor=2)
    # 70.6 GB of weights + 131072 tokens x 2 x 80 x 4 x 128 x 2 = 21.5 GB > 72 GB.
    assert not two.fits and two.weights_per_gpu < two.budget_per_gpu
    assert two.message.endswith(
        "vLLM stops with 'To serve at least one request with the models's max seq len'"
    )
    assert "2 x H100 (80 GB) at 0.9 utilization hold 72 GB per GPU" in two.message


def test_default_length_is_the_models_and_utilization_is_respected():
    m = MODELS["llama-3.1-8b"]
    f = fit(m, 24, gpu_memory_utilization=0.5)
    assert f.budget_per_gpu == 12 * GB
    assert f.kv_per_gpu == 131072 * 131_072
    with pytest.raises(InputError, match=r"gpu_memory_utilization 1\.5 is out of range"):
        fit(m, 24, gpu_memory_utilization=1.5)
    with pytest.raises(InputError, match="tensor parallelism 0 is not a size"):
        fit(m, 24, tensor=0)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        (dict(tensor=4, gpus_per_pod=4, gpus_per_node=8), []),
        (
            dict(tensor=3, gpus_per_pod=3, gpus_per_node=8),
            [
                "tensor parallelism 3 does not divide llama-3.1-8b's 32 attention heads (vLLM: "
                "'Total number of attention heads (32) must be divisible by tensor parallel "
                "size (3)')"
            ],
        ),
        (
            dict(tensor=16, gpus_per_pod=16, gpus_per_node=8),
            [
                "a pod requests 16 GPUs but a node has 8: the pod cannot be scheduled (tensor "
                "parallelism stays inside one pod's node)"
            ],
        ),
        (
            dict(tensor=8, pipeline=2, gpus_per_pod=8, pods_per_group=1),
            ["pipeline 2 x tensor 8 = 16 GPUs, but the worker group has 1 pod(s) x 8 GPUs = 8"],
        ),
        (dict(tensor=8, data=16, data_local=8, gpus_per_pod=64, pods_per_group=2), []),
        (
            dict(tensor=8, data=16, data_local=8, gpus_per_pod=8, pods_per_group=2),
            [
                "a data-parallel pod runs dataLocal 8 x tensor 8 = 64 GPUs but requests 8",
                "data 16 x tensor 8 = 128 GPUs, but the worker group has 2 pod(s) x 8 GPUs = 16",
            ],
        ),
    ],
)
def test_parallelism_messages(kwargs, expected):
    assert parallelism_messages(MODELS["llama-3.1-8b"], **kwargs) == expected


def test_stated_weights_replace_parameters_times_dtype():
    shape = MODELS["llama-3.1-70b"]
    quantized = fit(shape, 80, max_model_len=8192, weights=40 * GB)
    assert (quantized.fits, quantized.weights, quantized.weights_per_gpu) == (
        True,
        40 * GB,
        40 * GB,
    )
    assert quantized.message.startswith("llama-3.1-70b in bfloat16 needs 40 GB of weights")
    assert fit(shape, 80, max_model_len=8192).weights == llm.weights_bytes(shape.parameters, "bf16")


def test_weights_alone_when_the_shape_is_not_known():
    verdict = llm.fit_weights("my-model", 40 * GB, 24, gpu_name="nvidia-l4", tensor=2)
    assert (verdict.fits, verdict.weights_per_gpu, verdict.kv_per_gpu) == (True, 20 * GB, 0)
    assert verdict.message == (
        "my-model needs 40 GB of weights (20 GB per GPU over tensor 2 x pipeline 1; its KV cache "
        "is not known: its shape is not in the table); 2 x nvidia-l4 (24 GB) at 0.9 utilization "
        "hold 21.6 GB per GPU"
    )
    short = llm.fit_weights("my-model", 40 * GB, 24, gpu_name="nvidia-l4")
    assert not short.fits and short.message.endswith(": the weights alone do not fit")
    with pytest.raises(InputError, match="out of range"):
        llm.fit_weights("m", GB, 24, gpu_memory_utilization=1.5)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        (dict(tensor=3), [("heads", True)]),
        (dict(tensor=4, gpus_per_pod=2), [("group", True)]),
        (dict(tensor=4, gpus_per_pod=8), [("group", False)]),
        (dict(tensor=2, pipeline=2, gpus_per_pod=2, pods_per_group=2), []),
        (
            dict(tensor=4, data=4, data_local=2, gpus_per_pod=4, pods_per_group=2),
            [
                ("pod", True),
                ("group", True),
            ],
        ),
        (
            dict(tensor=4, data=4, data_local=2, gpus_per_pod=16, pods_per_group=2),
            [
                ("pod", False),
                ("group", False),
            ],
        ),
        (dict(tensor=8, gpus_per_pod=8, gpus_per_node=4), [("node", True)]),
    ],
)
def test_parallelism_issues_say_their_kind_and_whether_gpus_are_short(kwargs, expected):
    shape = MODELS["llama-3.1-8b"]
    issues = llm.parallelism_issues(shape, **kwargs)
    assert [(i.kind, i.short) for i in issues] == expected


@pytest.mark.parametrize(
    ("kv_heads", "tensor", "splits"),
    [
        (8, 1, True),
        (8, 4, True),  # divide(8, 4)
        (8, 8, True),
        (8, 16, True),  # divide(16, 8): each KV head replicated on 2 GPUs
        (8, 3, False),  # neither
        (8, 12, False),  # 12 is not a multiple of 8
        (4, 7, False),  # qwen2.5-7b at 7: '7 is not divisible by 4'
        (4, 28, True),
    ],
)
def test_kv_heads_split_as_qkv_parallel_linear_divides_them(kv_heads, tensor, splits):
    """vllm/model_executor/layers/linear.py QKVParallelLinear: divide(kv, tp) below, divide(tp,
    kv) at or above, each asserting exact division."""
    assert llm.kv_heads_split(kv_heads, tensor) is splits


@pytest.mark.parametrize(
    ("model", "sizes"),
    [
        ("qwen2.5-7b", [1, 2, 4, 28]),
        ("llama-3.1-8b", [1, 2, 4, 8, 16, 32]),
        ("llama-3.1-70b", [1, 2, 4, 8, 16, 32, 64]),
    ],
)
def test_tensor_sizes_divide_the_heads_and_fit_the_kv_heads(model, sizes):
    assert llm.tensor_sizes(llm.model_shape(model)) == sizes
