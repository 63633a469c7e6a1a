"""GI019 model-too-large and GI059 model-fit-unknown: the model a pod loads against the memory of
the GPUs it can get, on every pool kind.

Where a pool's nodes differ, the pod gets any of them, so each is judged: a Karpenter (or AKS
node auto-provisioning, EKS Auto Mode) NodePool on every instance type Karpenter's launch
decision lists for the pod (`scaleup.ScaleUp.launches`: it hands the cloud all of them, and spot
is picked by capacity as well as price), a GKE ComputeClass on each priority the pod can land on
(GKE falls back through them), an Autopilot cluster on the accelerator the pod selects. A pool
holds the model when every node it may give the pod does; GI019 is reported when no pool the pod
lands on holds it, naming the nodes that do not. GI059 says when it is not judged: the model's
size is not given (a pod that loads one: a `storageUri` or an LLMInferenceService's vLLM), the
memory of a GPU it may get is unknown, or a mixture-of-experts model spreads its experts.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..model.autoscalers.karpenter import GPU_NAME, INSTANCE_TYPE_LABEL, auto_mode_key
from ..model.autoscalers.karpenter_azure import SKU_GPU_NAME
from ..model.errors import InputError
from ..model.serving.llm import Fit
from .contract import (
    GKE_ACCELERATOR_LABEL,
    MODEL_ANNOTATION,
    MODEL_DTYPE_ANNOTATION,
    MODEL_MEMORY_OVERHEAD,
    MODEL_PARAMETERS_ANNOTATION,
    MODEL_SIZE_ANNOTATION,
)
from .llm import llm_fit, llm_fit_fix, llm_shape
from .results import NodeTemplate, PoolFacts

if TYPE_CHECKING:
    from .rules import PodContext


class GpuChoice(NamedTuple):
    """One kind of node a pool may give the pod, and one of its GPUs."""

    pool: PoolFacts
    origin: str | None  # `instance type g6.xlarge`, `priority 2 (g2-standard-8)`; None: the pool
    gpu: str | None  # the GPU's name (accelerator, model), when known
    memory: float | None  # GB of one GPU; None: unknown

    @property
    def where(self) -> str:
        return places([self])[0]


_GPU_NAME_LABELS = (GPU_NAME, auto_mode_key(GPU_NAME), SKU_GPU_NAME, GKE_ACCELERATOR_LABEL)
"""The node labels that name its GPU: Karpenter's (AWS, Auto Mode, Azure), GKE's."""


def _gpu_node(pool: PoolFacts, node: NodeTemplate) -> bool:
    count = node.gpus if node.gpus is not None else pool.gpus_per_node
    return count != 0 or node.dra_devices is not None


def _choice(pool: PoolFacts, node: NodeTemplate) -> GpuChoice:
    memory = node.gpu_memory_gib if node.gpu_memory_gib is not None else pool.gpu_memory_gib
    gpu = next((node.labels[k] for k in _GPU_NAME_LABELS if k in node.labels), pool.accelerator)
    return GpuChoice(pool, node.origin, gpu, memory if memory else None)


def gpu_choices(ctx: PodContext, pool: PoolFacts) -> list[GpuChoice]:
    """The kinds of node (and their GPUs) `pool` may give the pod: on a Karpenter pool the
    instance types Karpenter would list for it, elsewhere the nodes that let it in and have its
    GPUs; one each."""
    nodes: list[NodeTemplate] = []
    if any(not kp.spec.static for kp in ctx.check.scale.karpenter_pools(pool)):
        try:
            launches = ctx.check.scale.launches(ctx.template, ctx.placement, pool)
        except (InputError, TypeError, ValueError):
            launches = []  # GI013 names the quantity
        types = {name for launch in launches for name in launch.instance_types}
        nodes = [n for n in pool.nodes if n.labels.get(INSTANCE_TYPE_LABEL) in types]
    if not nodes:
        gpus = ctx.facts.gpus
        nodes = [
            n
            for n in pool.nodes
            if ctx.placement.admits(n.labels, n.taints, n.name) and pool.node_fits(n, gpus)
        ]
    found: dict[tuple[str | None, float | None], GpuChoice] = {}
    for n in nodes:
        if _gpu_node(pool, n):
            c = _choice(pool, n)
            found.setdefault((c.origin, c.memory), c)
    return list(found.values())


Said = list[tuple[str, str, str]]
"""(code, message, fix) of the findings of one pod template, its resource apart."""


def model_too_large(ctx: PodContext) -> None:
    """GI019 / GI059 for the pod (see the module docstring), decided once for the pods that
    share what decides it (`_key`: the pods of a stack repeat a few shapes)."""
    w, t = ctx.facts, ctx.template
    if w.gpu_devices == 0 or t.daemonset:
        return
    key = _key(ctx)
    said = ctx.check.model_fits.get(key) if key is not None else None
    if said is None:
        said = []
        _judge(ctx, said)
        if key is not None:
            ctx.check.model_fits[key] = said
    for code, message, fix in said:
        ctx.out.add(code, w.resource, message, fix)


def _key(ctx: PodContext) -> Hashable | None:
    """What decides a pod's GI019 / GI059 (None: decided alone): its shape (its pod spec, which
    decides its placement, GPUs and requests; no LLM pod has one), weights and the pools it
    lands on."""
    if ctx.shape is None:
        return None
    return (ctx.shape, ctx.facts.model_size_gb, ctx.facts.pools)


def _judge(ctx: PodContext, said: Said) -> None:
    w, t = ctx.facts, ctx.template
    llm = t.llm
    shape, unreadable = llm_shape(llm) if llm is not None else (None, None)
    if llm is not None and llm.expert and shape is not None and shape.experts:
        _not_judged(
            said,
            f"{shape.name} is a mixture-of-experts model with expert parallelism, whose experts "
            "are spread over data x tensor GPUs (not modelled)",
            "check its memory by hand (vLLM's log states the KV cache it could allocate)",
        )
        return
    if w.model_size_gb is None and shape is None:
        if (llm is not None or t.storage_uri is not None) and not unreadable:  # else GI013
            _not_judged(
                said,
                "its model's size is not given",
                f"state it on the workload: {MODEL_SIZE_ANNOTATION} (GB of weights), or "
                f"{MODEL_PARAMETERS_ANNOTATION} and {MODEL_DTYPE_ANNOTATION}"
                + (f"; or {MODEL_ANNOTATION} naming a row of the model table" if llm else ""),
            )
        return
    choices = [(p, gpu_choices(ctx, p)) for p in ctx.admitted]
    choices = [(p, cs) for p, cs in choices if cs]
    if not choices:
        return
    try:
        verdicts = [
            (p, [(c, _verdict(ctx, c)) for c in cs if c.memory is not None], cs)
            for p, cs in choices
        ]
    except InputError as e:
        said.append(("GI013", f"its model cannot be judged: {e}", "fix the value named"))
        return
    holding = [
        p
        for p, vs, cs in verdicts
        if len(vs) == len(cs) and all(v is None or v.fits for _, v in vs)
    ]
    if holding:
        return
    unknown = [c for _, _, cs in verdicts for c in cs if c.memory is None]
    if unknown:
        names = ", ".join(dict.fromkeys(f"{c.gpu or 'the GPU'} on {c.where}" for c in unknown))
        _not_judged(
            said,
            f"the memory of {names} is unknown",
            "use a GPU the catalog knows (components/model/nodes/gpus.py), or on existing nodes "
            "label them with GPU feature discovery's nvidia.com/gpu.memory (MiB)",
            pool=unknown[0].pool.name if len({c.pool.name for c in unknown}) == 1 else None,
        )
        return
    failing = [(c, v) for _, vs, _ in verdicts for c, v in vs if v is not None and not v.fits]
    if not failing:
        return
    kinds = {p.name: len(cs) for p, cs in choices}
    if llm is None:
        _report_weights(ctx, said, [c for c, _ in failing], [p for p, _ in choices], kinds)
    else:
        _report_llm(ctx, said, failing, kinds)


def _verdict(ctx: PodContext, c: GpuChoice) -> Fit | None:
    """The model on one GPU kind: vLLM's (an LLM pod), else weights + 20% against the GPUs the
    pod requests (`Fit.fits` only); None: nothing to judge."""
    memory = c.memory or 0.0
    w, llm = ctx.facts, ctx.template.llm
    if llm is not None:
        return llm_fit(llm, w, llm_shape(llm)[0], c.gpu or f"GPU of pool {c.pool.name}", memory)
    assert w.model_size_gb is not None
    need = w.model_size_gb * (1 + MODEL_MEMORY_OVERHEAD)
    have = w.gpu_devices * memory
    return Fit(
        fits=have >= need,
        weights=round(w.model_size_gb * 1e9),
        weights_per_gpu=0,
        kv_per_gpu=0,
        budget_per_gpu=round(memory * 1e9),
        message="",
    )


def _also(places: Sequence[str]) -> str:
    return f" (nor on {', '.join(places)})" if places else ""


_PLURALS = {
    "instance type ": "instance types ",
    "VM size ": "VM sizes ",
    "priority ": "priorities ",
    "accelerator ": "accelerators ",
}


def _origins(origins: Sequence[str]) -> str:
    """`instance types g6.xlarge, g6.2xlarge` for `instance type g6.xlarge`, `instance type
    g6.2xlarge`."""
    if len(origins) > 1:
        for one, many in _PLURALS.items():
            if all(o.startswith(one) for o in origins):
                return many + ", ".join(o.removeprefix(one) for o in origins)
    return ", ".join(origins)


def places(choices: Sequence[GpuChoice]) -> list[str]:
    """Each pool of `choices` once, with the node kinds of it they name: `g6 (instance types
    g6.xlarge, g6.2xlarge)`."""
    by_pool: dict[str, list[str]] = {}
    for c in choices:
        found = by_pool.setdefault(c.pool.name, [])
        if c.origin and c.origin not in found:
            found.append(c.origin)
    return [f"{p} ({_origins(o)})" if o else p for p, o in by_pool.items()]


def _narrow_fix(failing: Sequence[GpuChoice], kinds: Mapping[str, int]) -> str:
    """Where a pool's autoscaler picks among node kinds (`kinds`: pool -> how many) and some hold
    the model, keep it to those."""
    fixes = []
    for pool in dict.fromkeys(c.pool.name for c in failing):
        bad = list(dict.fromkeys(c.origin for c in failing if c.pool.name == pool and c.origin))
        if not bad or len(bad) >= kinds.get(pool, 0):
            continue
        if all(o.startswith(("instance type ", "VM size ")) for o in bad):
            names = ", ".join(o.split(" ")[-1] for o in bad)
            fixes.append(
                f"keep pool {pool}'s NodePool off {names} (a NotIn requirement on "
                f"{INSTANCE_TYPE_LABEL}, in the NodePool or the pod's node affinity)"
            )
        elif all(o.startswith("priority ") for o in bad):
            fixes.append(
                f"drop {', '.join(bad)} from pool {pool}'s ComputeClass or give it larger GPUs"
            )
    return "; ".join(fixes)


def _report_weights(
    ctx: PodContext,
    said: Said,
    failing: Sequence[GpuChoice],
    landing: Sequence[PoolFacts],
    kinds: Mapping[str, int],
) -> None:
    w = ctx.facts
    assert w.model_size_gb is not None
    gpus = w.gpu_devices
    need = w.model_size_gb * (1 + MODEL_MEMORY_OVERHEAD)
    most = max(c.memory or 0 for c in failing)
    count = math.ceil(need / most)
    per_node = max(p.gpus_per_node or 0 for p in landing)
    more = (
        f"request {count} GPU(s)"
        if count <= per_node
        else f"request {count} GPU(s) on a pool with {count}+ GPUs per node"
    )
    by_memory: dict[float, list[GpuChoice]] = {}
    for c in failing:
        by_memory.setdefault(c.memory or 0.0, []).append(c)
    have = "; ".join(
        f"{', '.join(places(cs))}: {gpus} x {memory:g} GB" for memory, cs in by_memory.items()
    )
    fix = f"{more}, use a pool with larger GPUs, or a smaller dtype (fp8 / int4)"
    narrow = _narrow_fix(failing, kinds)
    said.append(
        (
            "GI019",
            f"its model needs {need:.1f} GB of GPU memory ({w.model_size_gb:g} GB of weights + "
            f"{MODEL_MEMORY_OVERHEAD:.0%}) but the GPUs it requests have less ({have}): it fails to "
            "load",
            f"{narrow}; or {fix}" if narrow else fix,
        )
    )


def _report_llm(
    ctx: PodContext, said: Said, failing: Sequence[tuple[GpuChoice, Fit]], kinds: Mapping[str, int]
) -> None:
    llm = ctx.template.llm
    assert llm is not None
    best = max((f for _, f in failing), key=lambda f: f.budget_per_gpu)
    alike = [c for c, f in failing if f.budget_per_gpu == best.budget_per_gpu]
    others = places([c for c, f in failing if f.budget_per_gpu != best.budget_per_gpu])
    fix = llm_fit_fix(llm, llm_shape(llm)[0], best)
    narrow = _narrow_fix([c for c, _ in failing], kinds)
    said.append(
        (
            "GI019",
            f"its model does not fit its GPUs on pool {', '.join(places(alike))}{_also(others)}: "
            f"{best.message}",
            f"{narrow}; or {fix}" if narrow else fix,
        )
    )


def _not_judged(said: Said, why: str, fix: str, pool: str | None = None) -> None:
    where = f" on pool {pool}" if pool else ""
    said.append(
        ("GI059", f"whether its model fits its GPUs (GI019) is not judged{where}: {why}", fix)
    )
