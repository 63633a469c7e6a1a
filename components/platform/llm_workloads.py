"""The `llmInferenceServices[i]` section of the stack config: KServe LLMInferenceServices
(`components.serving.llm_inference_service`) with each part on its pools.

The keys are `LLMInferenceServiceArgs` and its nested Args (`LLMWorkloadArgs` for `decode` and
`prefill`, `LLMWorkerArgs` for their `worker`, `LLMRouterArgs` for `router`), plus where each part
runs: `pool` (a pool name or a preference list) or a `placement` of its own, and `tolerations`
added to the pool's. The rules between the keys and the pools (`check_llm_services`) are checked
when the config is read, and the component's own refusals with them (its body is built then,
with no placement), each at its stack key.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from pydantic import model_validator

from ..model.errors import InputError
from ..model.inputs import camel, class_doc, inputs, locate, stack
from ..model.scheduling import Placement, Toleration
from ..serving.claims import refuse_both
from ..serving.llm_inference_service import (
    LLMInferenceServiceArgs,
    LLMRouterArgs,
    LLMWorkerArgs,
    LLMWorkloadArgs,
    LoRAAdapterArgs,
    llm_inference_service_body,
)
from .derive import args_from, keys_named, section_model, value_of
from .pool_kinds import check_gpu_request
from .syntax import ConfigModel, TolerationSpec
from .workloads import PlacedRules, PlacementSpec, workload_section

LLM_PLACEMENT_HELP = (
    "a GPU pool's name or a list of them; or a placement of its own: placement: {nodeSelector, "
    "tolerations}"
)
# The parts of a service that name pools, with the Args their keys come from.
ARGS_OF: dict[str, type] = {
    "decode": LLMWorkloadArgs,
    "prefill": LLMWorkloadArgs,
    "worker": LLMWorkerArgs,
    "router": LLMRouterArgs,
    "lora_adapters": LoRAAdapterArgs,
}


@dataclass
class LLMWiring:
    """Where a part of an LLMInferenceService runs: what the stack adds to its Args."""

    pool: Optional[Any] = field(
        default=None,
        metadata=stack(syntax="pool-ref", default="required unless `placement`"),
    )
    """The GPU pool its pods run on: a declared pool's name, or a list of names in preference
    order (the pods tolerate each, require one, prefer them in order). The pods get the pool's
    placement; the service the annotation `gpu-inference.dev/pool.<part>`."""
    placement: Optional[PlacementSpec] = None
    """Instead of `pool`: scheduling of its own, exactly `{nodeSelector, tolerations}`; wired to
    no pool, the placement check judges it against every pool."""
    tolerations: Optional[Sequence[Toleration]] = None
    """Tolerations added to the pool's (not with `placement`)."""


@dataclass
class LLMWorkerWiring:
    """Where the worker pods of a multi-node part run."""

    pool: Optional[Any] = field(
        default=None, metadata=stack(syntax="pool-ref", default="the leader's (the part's)")
    )
    """The GPU pool of the worker pods; default: the leader's pool (or its `placement`)."""
    placement: Optional[PlacementSpec] = None
    """Instead of `pool`: scheduling of its own, exactly `{nodeSelector, tolerations}` (the
    workers then get none of the leader's)."""
    tolerations: Optional[Sequence[Toleration]] = None
    """Tolerations added to the pool's (with `pool` only)."""


@dataclass
class SchedulerWiring:
    """Where the router's endpoint-picker scheduler runs."""

    scheduler_pool: Optional[Any] = field(
        default=None,
        metadata=stack("scheduler.pool", syntax="pool-ref", default="— (any untainted node)"),
    )
    """The CPU pool of the scheduler (a GPU pool is refused: it would hold a GPU node up for a
    pod that uses no GPU)."""
    scheduler_own_placement: Optional[PlacementSpec] = field(
        default=None, metadata=stack("scheduler.placement")
    )
    """Instead of `scheduler.pool`: scheduling of its own, `{nodeSelector, tolerations}`."""


class LLMPartRules(PlacedRules):
    """Rules of a decode or prefill part: on a pool, or placed by itself."""

    @model_validator(mode="after")
    def _wired(self) -> LLMPartRules:
        if getattr(self, "pool", None) is None and getattr(self, "placement", None) is None:
            raise InputError("required key is missing", LLM_PLACEMENT_HELP, "pool")
        return self


class LLMServiceRules(ConfigModel):
    """Rules of one LLMInferenceService's keys together."""

    def parts(self) -> list[tuple[str, Any]]:
        """`(key, section)` of each part that runs pods on GPUs: decode, decode.worker, prefill,
        prefill.worker."""
        out: list[tuple[str, Any]] = []
        for key in ("decode", "prefill"):
            part = getattr(self, key, None)
            if part is None:
                continue
            out.append((key, part))
            if part.worker is not None:
                out.append((f"{key}.worker", part.worker))
        return out


# Sections derived from a component's Args are made at import time; type checkers see them as Any.
if TYPE_CHECKING:
    LLMWorker = Any
    LLMWorkload = Any
    LLMRouter = Any
    LLMInferenceService = Any
else:
    LLMWorker = workload_section("LLMWorker", LLMWorkerArgs, (LLMWorkerWiring,), PlacedRules)

    @dataclass
    class _WorkerKey:
        """A decode or prefill part of an LLMInferenceService: its vLLM pods on a GPU pool."""

        worker: Optional[LLMWorker] = None
        """Multi-node: worker pods beside each leader, one LeaderWorkerSet group of data /
        dataLocal pods (KServe v0.20.0 ships data-parallel worker presets only)."""

    LLMWorkload = workload_section(
        "LLMWorkload", LLMWorkloadArgs, (_WorkerKey, LLMWiring), LLMPartRules
    )
    LLMRouter = section_model(
        "LLMRouter",
        [*inputs(LLMRouterArgs), *inputs(SchedulerWiring)],
        args=LLMRouterArgs,
        doc=class_doc(LLMRouterArgs),
    )

    @dataclass
    class _Parts:
        """An LLMInferenceService (`components.serving.llm_inference_service`): vLLM decode pods
        on a GPU pool, optional prefill pods on their own, the router's scheduler on a CPU
        pool."""

        decode: LLMWorkload = field(metadata=stack())
        """The decode part (all of it without `prefill`): `pool`, GPUs, parallelism, replicas;
        `worker` for multi-node."""
        prefill: Optional[LLMWorkload] = None
        """A separate prefill part (disaggregated prefill/decode), on its own pool."""
        router: Optional[LLMRouter] = None
        """The route on KServe's default gateway and the endpoint-picker scheduler; default:
        both, the scheduler on any untainted node."""

    LLMInferenceService = workload_section(
        "LLMInferenceService",
        LLMInferenceServiceArgs,
        (_Parts,),
        LLMServiceRules,
        doc=class_doc(_Parts),
    )


# ---------------------------------------------------------------------------------------------
# The component's arguments from a parsed section
# ---------------------------------------------------------------------------------------------


def pool_names(pool: Any) -> tuple[str, ...]:
    """A `pool` key's names, in preference order."""
    if pool is None:
        return ()
    return (pool,) if isinstance(pool, str) else tuple(pool)


def quantity(value: Any) -> Any:
    """A quantity as the stack wrote it: integers stay integers, the rest is a string."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return str(value)


def own_placement(spec: PlacementSpec) -> Placement:
    """A part's `placement` of its own: exactly the selector and tolerations it lists."""
    tolerations = [t.toleration for t in spec.tolerations]
    return Placement(dict(spec.node_selector), tolerations)


def service_args(
    svc: Any, placement_of: Optional[Callable[[Sequence[str], Sequence[TolerationSpec]], Any]]
) -> LLMInferenceServiceArgs:
    """The `LLMInferenceServiceArgs` a parsed `llmInferenceServices[i]` stands for.

    `placement_of(pool_names, tolerations)`: the placement of a part wired to pools (the
    platform's pools); None while the config is read (the body is then built without one)."""

    def where(part: Any) -> tuple[Optional[Placement], Optional[list[str]]]:
        names = pool_names(part.pool)
        if part.placement is not None:
            return own_placement(part.placement), None
        if names and placement_of is not None:
            return placement_of(names, part.tolerations or ()), list(names)
        return None, list(names) or None

    def workload(w: Any) -> LLMWorkloadArgs:
        worker = None
        if w.worker is not None:
            k = w.worker
            placement, pools = where(k)
            worker = args_from(
                k,
                LLMWorkerArgs,
                cpu=quantity(k.cpu),
                memory=quantity(k.memory),
                placement=placement,
                pools=pools,
            )
        placement, pools = where(w)
        return args_from(
            w,
            LLMWorkloadArgs,
            cpu=quantity(w.cpu),
            memory=quantity(w.memory),
            placement=placement,
            pools=pools,
            worker=worker,
        )

    router = None
    if svc.router is not None:
        r = svc.router
        own = value_of(r, "scheduler_own_placement")
        names = pool_names(value_of(r, "scheduler_pool"))
        placement = None
        if own is not None:
            placement = own_placement(own)
        elif names and placement_of is not None:
            placement = placement_of(names, ())
        router = args_from(
            r,
            LLMRouterArgs,
            scheduler_cpu=quantity(value_of(r, "scheduler_cpu")),
            scheduler_memory=quantity(value_of(r, "scheduler_memory")),
            scheduler_placement=placement,
            scheduler_pools=list(names) or None,
        )
    return args_from(
        svc,
        LLMInferenceServiceArgs,
        decode=workload(svc.decode),
        prefill=workload(svc.prefill) if svc.prefill is not None else None,
        router=router,
    )


# ---------------------------------------------------------------------------------------------
# The component's errors at their stack keys
# ---------------------------------------------------------------------------------------------

_COMPONENT = re.compile(r"^[A-Z]\w*\('(?:[^'\\]|\\.)*'\)\.args\.?")
_STEP = re.compile(r"\[\d+\]|[^.\[]+")


def stack_key(path: str) -> str:
    """A component error's path (`decode.data_local`, `router.scheduler_cpu`,
    `LLMInferenceService('x').args.lora_adapters[0].name`) as the section's keys
    (`decode.dataLocal`, `router.scheduler.cpu`, `loraAdapters[0].name`)."""
    path = _COMPONENT.sub("", path)
    out = ""
    tp: Optional[type] = LLMInferenceServiceArgs
    for step in _STEP.findall(path):
        if step.startswith("["):
            out += step
            continue
        found = locate(tp, None, step) if tp is not None else None
        key = found.path if found is not None and found.path else camel(step)
        out += ("." if out else "") + key
        tp = ARGS_OF.get(step) if found is not None else None
    return out


def relocated(err: InputError, base: str) -> InputError:
    """A component's error at the stack key under `base` (`gpu-inference:llmInferenceServices[0]`)
    that fed it, its argument names said as the keys."""
    key = stack_key(err.path)
    return InputError(
        _keys_named(err.problem), _keys_named(err.allowed), f"{base}.{key}" if key else base
    )


# An upstream message quoted in ours (`(vLLM: '... max_model_len ...')`): kept word for word.
_QUOTE = re.compile(r": '[^']*'\)")


def _keys_named(text: str) -> str:
    """`text` with the Args' names said as the section's keys, but not inside a quotation."""
    out, pos = "", 0
    for m in [*_QUOTE.finditer(text), None]:
        end = m.start() if m else len(text)
        part = text[pos:end]
        for args in (LLMInferenceServiceArgs, LLMWorkloadArgs, LLMWorkerArgs, LLMRouterArgs):
            part = keys_named(part, args)
        out += part + (m.group(0) if m else "")
        pos = m.end() if m else end
    return out


# ---------------------------------------------------------------------------------------------
# Rules between the services and the pools
# ---------------------------------------------------------------------------------------------


def check_llm_services(spec: Any, p: Callable[[str], str]) -> None:
    """Every `llmInferenceServices[i]`: unique per namespace, each part on pools that exist (GPU
    pools for the vLLM parts, a CPU pool for the scheduler), GPUs that fit a node, and the
    component's own rules. `p(key)`: the full key path."""
    pools = spec.pools_by_name
    gpu_pools = ", ".join(n for n, pool in pools.items() if pool.is_gpu) or "none declared"
    cpu_pools = ", ".join(n for n, pool in pools.items() if not pool.is_gpu) or "none declared"
    seen: dict[tuple[str, str], int] = {}
    for i, svc in enumerate(spec.llm_inference_services):
        base = p(f"llmInferenceServices[{i}]")
        key = (svc.namespace, svc.name)
        if key in seen:
            raise InputError(
                f"LLMInferenceService {svc.name!r} in namespace {svc.namespace!r} is declared "
                f"twice (llmInferenceServices[{seen[key]}] and here)",
                "unique names per namespace",
                f"{base}.name",
            )
        seen[key] = i
        leader: tuple[str, ...] = ()
        leader_part: Any = None
        for part_key, part in svc.parts():
            where = f"{base}.{part_key}"
            names = pool_names(part.pool)
            worker = part_key.endswith("worker")
            # GPUs as nvidia.com/gpu or by claim; a worker without either takes the leader's.
            gpus, claim = part.gpus or 0, part.gpu_claim
            if worker and part.gpus is None and claim is None and leader_part is not None:
                gpus, claim = leader_part.gpus or 0, leader_part.gpu_claim
            if not worker:
                leader = names if part.placement is None else ()
                leader_part = part
            elif not names and part.placement is None:
                _check_on_leader_pools(spec, leader, part, gpus, claim, where)
            if claim is not None:
                refuse_both(part.gpus, part.gpu_claim, f"{where}.gpuClaim")
            _check_part_pools(spec, gpu_pools, part_key, part, names, gpus, claim, where)
            _check_part_gpus(spec, part, worker, where)
        if svc.router is not None:
            _check_scheduler(svc.router, pools, cpu_pools, f"{base}.router.scheduler")
        try:
            llm_inference_service_body(service_args(svc, None), svc.name)
        except InputError as e:
            raise relocated(e, base) from None


def _check_on_leader_pools(
    spec: Any, leader: tuple[str, ...], part: Any, gpus: int, claim: Any, where: str
) -> None:
    """Workers without pools of their own run on the leader's: their GPUs must fit those."""
    pools = spec.pools_by_name
    for name in leader:
        if part.gpus is not None and name in pools and part.gpus > pools[name].gpus:
            raise InputError(
                f"{part.gpus} GPU(s) asked for but a node of pool {name!r} (the "
                f"leader's) has {pools[name].gpus}",
                f"gpus at most {pools[name].gpus}",
                f"{where}.gpus",
            )
        if name in pools:
            check_gpu_request(spec.pools, gpus, claim, pools[name], where, where)


def _check_part_pools(
    spec: Any,
    gpu_pools: str,
    part_key: str,
    part: Any,
    names: tuple[str, ...],
    gpus: int,
    claim: Any,
    where: str,
) -> None:
    """Each pool a part names exists, has GPUs, and fits the part's GPUs."""
    pools = spec.pools_by_name
    for j, name in enumerate(names):
        at = f"{where}.pool" + (f"[{j}]" if isinstance(part.pool, list) else "")
        pool = pools.get(name)
        if pool is None:
            raise InputError(f"pool {name!r} does not exist", ", ".join(pools), at)
        if not pool.is_gpu:
            raise InputError(
                f"pool {name!r} has no GPUs, and the {part_key} pods run vLLM on GPUs "
                "(KServe's presets: image ghcr.io/llm-d/llm-d-cuda)",
                f"a GPU pool: {gpu_pools}",
                at,
            )
        check_gpu_request(spec.pools, gpus, claim, pool, at, where)
        if part.gpus is not None and part.gpus > pool.gpus:
            raise InputError(
                f"{part.gpus} GPU(s) asked for but a node of pool {name!r} has {pool.gpus}"
                + (" (every pool in the list must fit)" if len(names) > 1 else ""),
                f"gpus at most {pool.gpus}",
                f"{where}.gpus",
            )


def _check_part_gpus(spec: Any, part: Any, worker: bool, where: str) -> None:
    """A leader gets GPUs; leaving out their toleration needs the admission plugin."""
    if not worker and part.gpus is None and part.gpu_claim is None:
        raise InputError(
            "required key is missing: the vLLM container gets no GPU",
            "GPUs per pod: tensor (x dataLocal with data parallelism), as gpus or "
            "gpuClaim.count on a DRA pool",
            f"{where}.gpus",
        )
    if part.omit_gpu_toleration and not spec.cluster.extended_resource_toleration:
        raise InputError(
            "omitGpuToleration relies on the ExtendedResourceToleration admission "
            "plugin, which this cluster does not have (cluster.extendedResourceToleration "
            "is false)",
            "omitGpuToleration: false, or cluster.extendedResourceToleration: true",
            f"{where}.omitGpuToleration",
        )


def _check_scheduler(router: Any, pools: dict[str, Any], cpu_pools: str, where: str) -> None:
    pool = value_of(router, "scheduler_pool")
    own = value_of(router, "scheduler_own_placement")
    names = pool_names(pool)
    if names and own is not None:
        raise InputError(
            "pool and placement are both given: the scheduler is wired to pools, or places itself",
            "pool, or placement: {nodeSelector, tolerations}",
            f"{where}.placement",
        )
    on = value_of(router, "enabled") is not False and value_of(router, "scheduler") is not False
    if (names or own is not None) and not on:
        raise InputError(
            "the scheduler is placed but it is off (router.enabled or scheduler.enabled false)",
            "leave scheduler.pool and scheduler.placement out, or turn the scheduler on",
            f"{where}.pool" if names else f"{where}.placement",
        )
    for j, name in enumerate(names):
        at = f"{where}.pool" + (f"[{j}]" if isinstance(pool, list) else "")
        found = pools.get(name)
        if found is None:
            raise InputError(f"pool {name!r} does not exist", ", ".join(pools), at)
        if found.is_gpu:
            raise InputError(
                f"pool {name!r} is a GPU pool, and the scheduler (the endpoint picker) uses no "
                "GPU: it would hold a GPU node up",
                f"a CPU pool: {cpu_pools}",
                at,
            )
