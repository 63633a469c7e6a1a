"""The LLM rules: the model a vLLM pod of an LLMInferenceService serves (`read.LLMPod`), against
its parallelism and the GPUs of the pools the pod can land on (`model.serving.llm` has vLLM's rules and
their sources).

- GI019, LLM-grade: `llm_fit`: the weights split over tensor x pipeline GPUs and the KV cache of
  one max-model-len sequence within gpu_memory_utilization x one GPU's memory, on each GPU the
  pod can get (`model_fit` judges every pool kind and says when it cannot). The shape is
  the `MODEL_ANNOTATION` row of `llm.MODELS`, else the row whose Hugging Face repo the `hf://`
  URI names; stated weights (`MODEL_SIZE_ANNOTATION`, or parameters x dtype) win over the shape's
  parameters (a quantized checkpoint); with no shape, the weights alone (`llm.fit_weights`). Not
  judged: a pod requesting no GPU, a mixture-of-experts model with expert parallelism (its
  experts are spread over data x tensor GPUs: not modelled).
- GI030 tensor-parallel-heads: tensor parallelism does not divide the attention heads (said on
  the part's first pod: decode, leader, prefill, prefill leader).
- GI031 parallelism-gpus: vLLM's world size (tensor x pipeline on one pod or over a pipeline
  group; data x tensor over a data-parallel group) against the GPUs the pod / group requests.
- GI032 data-parallel-pod-gpus: a data-parallel pod's GPUs against dataLocal x tensor.
GI031 / GI032 are errors when the GPUs are fewer than vLLM's ranks (it cannot start them) and
warnings when more (GPUs sit idle). A pod asking more GPUs than a node has is GI004's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.errors import InputError
from ..model.serving.llm import (
    GB,
    KV_BLOCK_SIZE,
    MODELS,
    Fit,
    ModelShape,
    fit,
    fit_weights,
    kv_bytes_per_token,
    model_shape,
    parallelism_issues,
    tensor_sizes,
)
from .contract import MODEL_ANNOTATION, MODEL_SIZE_ANNOTATION
from .read import LLMPod
from .results import WorkloadFacts

if TYPE_CHECKING:
    from .rules import PodContext

FIRST_ROLES = ("decode", "leader", "prefill", "prefill-leader")
"""The pod of each part that carries the part's own findings (not repeated on its workers)."""


def llm_shape(p: LLMPod) -> tuple[ModelShape | None, str | None]:
    """(the model's shape, or None; why the annotation could not be read, or None)."""
    if p.model:
        try:
            return model_shape(p.model), None
        except InputError as e:
            return None, f"{MODEL_ANNOTATION}: {e}"
    if p.uri.startswith("hf://"):
        repo = p.uri.removeprefix("hf://").strip("/").lower()
        for shape in MODELS.values():
            if shape.hf_repo.lower() == repo:
                return shape, None
    return None, None


def parallelism(ctx: PodContext) -> None:
    """GI030-GI032 of one vLLM pod template (see the module docstring), and GI013 for what of
    its model cannot be read."""
    p, w, out = ctx.template.llm, ctx.facts, ctx.out
    if p is None:
        return
    for text in p.unreadable:
        out.add("GI013", w.resource, text, "write it as a number")
    shape, problem = llm_shape(p)
    if problem:
        out.add(
            "GI013",
            p.cr,
            problem,
            f"name a row of the table in {MODEL_ANNOTATION}, or state {MODEL_SIZE_ANNOTATION}",
        )
    issues = parallelism_issues(
        shape,
        tensor=p.tensor,
        pipeline=p.pipeline,
        data=p.data,
        data_local=p.data_local,
        gpus_per_pod=w.gpu_devices or None,
        pods_per_group=p.pods_per_group,
    )
    kinds = {i.kind for i in issues}
    for issue in issues:
        if issue.kind == "heads" and shape is not None and p.role in FIRST_ROLES:
            out.add(
                "GI030",
                w.resource,
                f"{issue.message}: vLLM refuses to start",
                f"set parallelism.tensor to one vLLM accepts for {shape.name} "
                f"({', '.join(map(str, tensor_sizes(shape)))}) and request that many GPUs per pod",
            )
        elif issue.kind == "pod" or (issue.kind == "group" and "pod" not in kinds):
            code = "GI032" if issue.kind == "pod" else "GI031"
            where = "pod" if p.mode == "single" or issue.kind == "pod" else "worker group"
            if issue.short:
                what = f"the {where} has fewer GPUs than vLLM's ranks: it cannot start them"
            else:
                what = f"the {where} has more GPUs than vLLM uses: they sit idle"
            expected = _expected_gpus(p)
            out.add(
                code,
                w.resource,
                f"{issue.message}: {what}",
                f"request {expected} nvidia.com/gpu per pod (or change parallelism to match)",
                severity=None if issue.short else "warning",
            )


def _expected_gpus(p: LLMPod) -> int:
    """GPUs one pod of this part should request."""
    if p.mode == "data":
        return p.tensor * (p.data_local or 1)
    if p.mode == "pipeline":
        return p.tensor
    return p.tensor * p.pipeline


def stated_weights(p: LLMPod, stated_gb: float | None, shape: ModelShape | None) -> float | None:
    """The weights in GB: stated, else the shape's parameters x dtype."""
    if stated_gb is not None:
        return stated_gb
    if shape is None:
        return None
    try:
        return round(fit(shape, 1, dtype=p.dtype).weights / GB, 3)
    except InputError:
        return None


def llm_fit(
    p: LLMPod, w: WorkloadFacts, shape: ModelShape | None, gpu: str, memory: float
) -> Fit | None:
    """The model as vLLM loads it on GPUs of `memory` GB (`gpu` names them); None: neither its
    shape nor its weights are known."""
    util = (
        {}
        if p.gpu_memory_utilization is None
        else {"gpu_memory_utilization": p.gpu_memory_utilization}
    )
    weights = None if w.model_size_gb is None else round(w.model_size_gb * GB)
    if shape is not None:
        return fit(
            shape,
            memory,
            gpu_name=gpu,
            tensor=p.tensor,
            pipeline=p.pipeline,
            max_model_len=p.max_model_len,
            dtype=p.dtype,
            kv_dtype=p.kv_dtype,
            weights=weights,
            **util,
        )
    if weights is None:
        return None
    name = p.uri.rsplit("/", 1)[-1] or "the model"
    return fit_weights(
        name, weights, memory, gpu_name=gpu, tensor=p.tensor, pipeline=p.pipeline, **util
    )


def llm_fit_fix(p: LLMPod, shape: ModelShape | None, best: Fit) -> str:
    """What would make it fit: more tensor parallelism, a shorter max-model-len, larger GPUs."""
    fixes = []
    if best.weights_per_gpu <= best.budget_per_gpu and shape is not None:
        per_token = kv_bytes_per_token(
            shape.layers,
            shape.kv_heads,
            shape.head_dim,
            p.kv_dtype or p.dtype or shape.dtype,
            p.tensor,
            p.pipeline,
        )
        room = best.budget_per_gpu - best.weights_per_gpu
        tokens = int(room // per_token) // KV_BLOCK_SIZE * KV_BLOCK_SIZE
        if tokens >= KV_BLOCK_SIZE:
            fixes.append(f"lower max-model-len to {tokens} or less (vLLM --max-model-len)")
    need = -(-best.weights // max(best.budget_per_gpu, 1))
    tensor = next(
        (
            t
            for t in (2, 4, 8, 16)
            if t * p.pipeline >= need
            and t > p.tensor
            and (shape is None or shape.attention_heads % t == 0)
        ),
        None,
    )
    if tensor is not None:
        fixes.append(
            f"use tensor parallelism {tensor} ({tensor * p.pipeline} GPUs, on nodes that have them)"
        )
    fixes.append("use a pool with larger GPUs, or fp8 / int4 weights")
    return "; ".join(fixes)
