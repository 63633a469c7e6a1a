"""`pools[i]` of the stack config: which kind of pool an entry is, its keys (derived from that kind's
component Args, `components.model.inputs`), and what the stack adds to every pool beyond them.

The kinds are declared by their own modules (`components.pools.<kind>.KIND`); this is the one list
of them. Adding a field to a kind's Args adds its key here without a change to this module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Optional

from pydantic import PrivateAttr

from ..model.errors import InputError
from ..model.inputs import Input, inputs, stack
from ..model.nodes import catalog
from ..model.scheduling import Taint
from ..pools import aks, autopilot, compute_class, eks, existing, gke, karpenter, nap
from ..pools.pool import PoolFacts, PoolKind
from .derive import args_from, relocate, section_model, value_of
from .syntax import ConfigModel

KINDS: tuple[PoolKind, ...] = (
    gke.KIND,
    compute_class.KIND,
    autopilot.KIND,
    eks.KIND,
    karpenter.KIND,
    aks.KIND,
    nap.KIND,
    existing.KIND,
)


@dataclass
class PoolSettings:
    """What the stack config adds to a pool beyond its component's inputs."""

    node_startup_seconds: Optional[int] = field(
        default=None, metadata=stack(ge=1, default="900 (`catalog.node_startup_seconds`)")
    )
    """Seconds a node of this pool takes from scale-up to an allocatable GPU (cluster-autoscaler
    allows a new GPU node up to 15 minutes to report its GPUs). A Serverless InferenceService with a
    GPU component on this pool, when the pool can be at 0 nodes, gets it as
    `serving.knative.dev/progress-deadline` (the longest of its pools'), so Knative does not fail
    the revision while the node boots (placement check GI020)."""
    gpu_sharing_strategy: Optional[str] = field(
        default=None, metadata=stack("gpuSharing.strategy", choices=("TIME_SHARING", "MPS"))
    )
    """How pods share each GPU; required with `gpuSharing.maxClientsPerGpu`. This kind shares GPUs
    with the NVIDIA device plugin's time-slicing (`TIME_SHARING` only; its MPS is experimental in
    v0.17.1 and needs GPU feature discovery, which the chart leaves off): a `time-sliced-<n>`
    config of the plugin this stack installs, picked by the node label
    `nvidia.com/device-plugin.config`; the node then exposes GPUs x `maxClientsPerGpu`
    `nvidia.com/gpu`. The config sets `failRequestsGreaterThanOne: true`, so the plugin
    refuses a container asking more than one shared GPU (its v0.17.1 default hands out several
    replicas, maybe of one GPU); the placement check refuses it too (GI023). Not with `addons.nvidiaDevicePlugin.enabled: false`, nor on nodes that run
    their own plugin (Bottlerocket's NVIDIA AMIs, EKS Auto Mode)."""


class PoolConfig(ConfigModel):
    """A parsed `pools[i]` entry: its kind's keys, and (once planned) the pool's facts."""

    _kind: Any = PrivateAttr(default=None)
    _facts: Any = PrivateAttr(default=None)

    def of_kind(self, kind: PoolKind) -> PoolConfig:
        """This entry read as a pool of `kind`."""
        self._kind = kind
        return self

    @property
    def kind(self) -> PoolKind:
        return self._kind

    @property
    def facts(self) -> PoolFacts:
        if self._facts is None:
            raise RuntimeError("the pool is not planned yet (load_spec plans every pool)")
        return self._facts

    @property
    def name(self) -> str:
        return str(value_of(self, _name_field(self.kind)))

    @property
    def is_gpu(self) -> bool:
        return self.facts.is_gpu

    @property
    def gpus(self) -> int:
        """`nvidia.com/gpu` each node exposes (shared GPUs and MIG instances counted)."""
        return self.facts.gpus_per_node

    @property
    def size_range(self) -> tuple[int, int]:
        return self.facts.min_nodes, self.facts.max_nodes

    @property
    def node_taints(self) -> tuple[Taint, ...]:
        """The nodes' effective taints (what the cloud adds included)."""
        return self.facts.taints

    @property
    def gpu_name(self) -> Optional[str]:
        """The GPU as the cloud names it (`nvidia-l4`), or its model; None for a CPU pool."""
        if not self.facts.is_gpu:
            return None
        labels = self.facts.labels
        return (
            labels.get(gke.GKE_ACCELERATOR_LABEL)
            or labels.get(eks.ACCELERATOR_LABEL)
            or self.facts.gpu_model
        )

    @property
    def sharing_strategy(self) -> Optional[str]:
        return value_of(self, "gpu_sharing_strategy")

    @property
    def sharing_clients(self) -> Optional[int]:
        """Pods per GPU (`gpuSharing.maxClientsPerGpu`), None when GPUs are not shared."""
        for f in ("max_shared_clients_per_gpu", "time_slicing_replicas"):
            found = value_of(self, f)
            if found is not None:
                return int(found)
        return None

    @property
    def node_gpus(self) -> int:
        """Physical GPUs per node (before sharing and MIG)."""
        shared = self.sharing_clients or 1
        partition = value_of(self, "gpu_partition_size")
        mig = catalog.MIG_PROFILES.get(str(self.gpu_name), {}).get(str(partition), 1)
        return self.facts.gpus_per_node // shared // (mig if partition else 1)

    @property
    def is_dra(self) -> bool:
        """A DRA pool: its GPUs are published by NVIDIA's DRA driver and taken by claim
        (`dra: true`); nothing advertises `nvidia.com/gpu` there."""
        return bool(value_of(self, "dra"))

    def dra_devices(self) -> tuple[str, int]:
        """(the DeviceClass of the devices a node of this DRA pool publishes, how many): its whole
        GPUs (`gpu.nvidia.com`), or its MIG instances (`mig.nvidia.com`) when they are split in
        one profile (`draMigProfile`, existing nodes)."""
        profile = value_of(self, "dra_mig_profile")
        if profile:
            per_gpu = catalog.MIG_PROFILES.get(str(self.facts.gpu_model), {}).get(str(profile), 1)
            return "mig.nvidia.com", self.node_gpus * per_gpu
        return "gpu.nvidia.com", self.node_gpus

    def given(self) -> set[str]:
        """The keys the stack file gave at the pool's root."""
        return {
            (f.alias or n) for n, f in type(self).model_fields.items() if n in self.model_fields_set
        }


@cache
def _name_field(kind: PoolKind) -> str:
    return next(i.field for i in kind_inputs(kind) if i.path and i.path.split(".")[-1] == "name")


def kind_inputs(kind: PoolKind) -> list[Input]:
    """A kind's inputs (its Args), with the keys of the block it has."""
    return inputs(kind.args, kind.block)


def settings_inputs(kind: PoolKind) -> list[Input]:
    """The pool settings a kind takes: start-up where nodes are made on demand; the sharing
    strategy where its Args take `gpuSharing` clients but no strategy of their own."""
    own = {i.path for i in kind_inputs(kind)}
    out = []
    for i in inputs(PoolSettings):
        if i.path in own:
            continue
        if i.field == "node_startup_seconds" and not kind.node_startup:
            continue
        if i.field == "gpu_sharing_strategy" and "gpuSharing.maxClientsPerGpu" not in own:
            continue
        out.append(i)
    return out


@cache
def pool_model(kind: PoolKind) -> type[PoolConfig]:
    """The config model of a `pools[i]` entry of this kind."""
    title = "".join(p.title() for p in kind.name.split("_"))
    model = section_model(
        f"{title}Pool",
        [*kind_inputs(kind), *settings_inputs(kind)],
        args=kind.args,
        base=PoolConfig,
    )
    return model  # type: ignore[return-value]


def kind_keys(kind: PoolKind) -> list[str]:
    """The keys a `pools[i]` entry of this kind takes at its root."""
    return list(dict.fromkeys(f.alias or n for n, f in pool_model(kind).model_fields.items()))


def kind_for(raw: Any, provider: str, autopilot_cluster: bool) -> PoolKind:
    """The kind a `pools[i]` entry is on this cluster (see `PoolKind`)."""
    mine = [k for k in KINDS if k.provider == provider]
    if autopilot_cluster:
        return next(k for k in mine if k.autopilot)
    given = raw if isinstance(raw, Mapping) else {}
    for k in mine:
        if k.block and k.block in given:
            return k
    return next(k for k in mine if not k.block and not k.autopilot)


def kinds_with(key: str, kind: PoolKind) -> list[PoolKind]:
    """The other kinds that take `key` at a pool's root."""
    return [k for k in KINDS if k is not kind and key in kind_keys(k)]


def plan_pool(pool: PoolConfig, path: str, sources: Mapping[str, Any], namespace: str) -> PoolFacts:
    """Validate a parsed pool with its component's own rules (nothing registered) and keep its
    facts; an error names the stack key that fed the argument (under `path`)."""
    kind = pool.kind
    try:
        facts = kind.facts(pool.name, pool_args(pool, sources))
    except InputError as e:
        raise relocate(e, path, kind.args, kind.block, namespace) from None
    pool._facts = facts
    return facts


def pool_args(pool: PoolConfig, sources: Mapping[str, Any], **given: Any) -> Any:
    """The component Args a parsed pool stands for."""
    return args_from(pool, pool.kind.args, pool.kind.block, sources, **given)


def check_gpu_request(
    pools: Sequence[PoolConfig], gpus: int, claim: Any, pool: PoolConfig, where: str, path: str
) -> None:
    """A workload part on `pool` (named at `where`): GPUs by claim only on a DRA pool, within
    the devices one of its nodes publishes; `gpus` (`nvidia.com/gpu`) never on a DRA pool, where
    nothing advertises it (NVIDIA's DRA driver publishes ResourceSlices instead, and the device
    plugin is kept off DRA pools: a DRA driver and a device plugin must never manage the same
    GPUs)."""
    name = pool.name
    if claim is None:
        if gpus and pool.is_dra:
            raise InputError(
                f"{gpus} GPU(s) requested as nvidia.com/gpu on DRA pool {name!r}, whose "
                "GPUs are taken by claim: nothing advertises nvidia.com/gpu there, so the pod "
                "stays Pending",
                f"gpuClaim: {{count: {gpus}}} instead of gpus, or a pool without dra",
                f"{path}.gpus",
            )
        return
    if not pool.is_dra:
        dra = ", ".join(p.name for p in pools if p.is_dra) or "none declared"
        raise InputError(
            f"gpuClaim asks for GPUs by claim, but pool {name!r} is not a DRA pool: no NVIDIA DRA "
            "driver publishes its GPUs, so the claim is never allocated",
            f"a DRA pool (dra: true): {dra}; or gpus instead of gpuClaim",
            where,
        )
    device_class, count = pool.dra_devices()
    asked = claim.device_class or "gpu.nvidia.com"
    if asked != device_class:
        what = "MIG instances" if device_class == "mig.nvidia.com" else "whole GPUs"
        raise InputError(
            f"deviceClass {asked} on pool {name!r}, whose nodes publish {what} "
            f"({device_class}): no device of the pool is in that class",
            device_class,
            f"{path}.gpuClaim.deviceClass",
        )
    if (claim.count or 1) > count:
        raise InputError(
            f"{claim.count} device(s) claimed but a node of pool {name!r} publishes {count} "
            f"({device_class}); a pod's claims are allocated from one node",
            f"count at most {count}",
            f"{path}.gpuClaim.count",
        )
