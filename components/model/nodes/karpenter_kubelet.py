"""An EC2NodeClass's kubelet settings and instance-store policy, as Karpenter turns them into an
instance type's capacity and overhead (aws/karpenter-provider-aws v1.14.1
`pkg/providers/instancetype/types.go`).

Pure (imports nothing but `components.model`). `shapes.karpenter_node_shape` takes a
`KarpenterKubelet`; the placement check reads one from any EC2NodeClass
(`check.readers.karpenter.node_class_info`).

- `kubeReserved`: `kubeReservedResources` computes memory `11 x pods + 255` Mi, ephemeral-storage
  1Gi and the CPU table, then `lo.Assign`s the node class's map over them: each key given
  replaces the default of that key, the others stay.
- `systemReserved`: `systemReservedResources`, the map as it is (no default).
- `evictionHard`: `evictionThreshold` starts from memory 100Mi and 10% of the ephemeral storage,
  then `memory.available` / `nodefs.available` replace them: a percentage of the memory / storage
  capacity (`computeEvictionSignal`: ceil(capacity / 100 x p); 100% means 0), else a quantity.
  `evictionSoft` is passed in but "should not impact allocatable capacity as it's only a warning
  threshold" (same function): it changes nothing here.
- `maxPods` (the pod count), `podsPerCore` (`pods`: at most podsPerCore x vCPUs, on AMI families
  with `PodsPerCoreEnabled`: AL2023 yes, Bottlerocket no, `amifamily/bottlerocket.go`).
- `instanceStorePolicy: RAID0`: `ephemeralStorage` is the instance store's `TotalSizeInGB` (decimal
  GB), when the instance type has one; else the root volume as without it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING

from ..errors import InputError, show
from ..scheduling.quantities import parse_quantity

MEMORY_AVAILABLE = "memory.available"
NODEFS_AVAILABLE = "nodefs.available"
RESERVABLE = ("cpu", "memory", "ephemeral-storage")
"""Keys of kubeReserved / systemReserved that change a resource the fit check counts (the CRD
also allows `pid`, which the scheduler does not)."""

Pairs = tuple[tuple[str, str], ...]


def _pairs(value: Mapping[str, object] | None) -> Pairs:
    return tuple(sorted((str(k), str(v)) for k, v in (value or {}).items()))


@dataclass(frozen=True)
class KarpenterKubelet:
    """What of an EC2NodeClass changes its nodes' capacity and overhead (hashable)."""

    kube_reserved: Pairs = ()
    system_reserved: Pairs = ()
    eviction_hard: Pairs = ()
    pods_per_core: int | None = None
    raid0: bool = False  # instanceStorePolicy: RAID0

    @classmethod
    def of(
        cls,
        kube_reserved: Mapping[str, object] | None = None,
        system_reserved: Mapping[str, object] | None = None,
        eviction_hard: Mapping[str, object] | None = None,
        pods_per_core: int | None = None,
        raid0: bool = False,
    ) -> KarpenterKubelet:
        return cls(
            _pairs(kube_reserved),
            _pairs(system_reserved),
            _pairs(eviction_hard),
            pods_per_core,
            raid0,
        )

    @property
    def is_default(self) -> bool:
        return self == KarpenterKubelet()


def _amount(resource: str, value: str, where: str) -> int:
    """A quantity in the units of `shapes.Resources` (cpu millicores, bytes), rounded up as
    `Quantity.MilliValue()` / `Value()` round."""
    try:
        q = parse_quantity(value)
    except InputError as e:
        raise InputError(f"{where} {resource}: {e.problem}", e.allowed) from None
    scale = 1000 if resource == "cpu" else 1
    return int((q * scale).to_integral_value(rounding=ROUND_CEILING))


def reserved(pairs: Pairs, where: str) -> dict[str, int]:
    """kubeReserved / systemReserved as amounts by resource name (`pid` and others left out)."""
    return {k: _amount(k, v, where) for k, v in pairs if k in RESERVABLE}


def eviction_signal(capacity: int, value: str, where: str) -> int:
    """`computeEvictionSignal`: a percentage of the capacity (ceil, float64; 100% means 0), or a
    quantity in bytes."""
    if value.endswith("%"):
        try:
            p = float(value.rstrip("%"))
        except ValueError:
            raise InputError(f"{where} {show(value)} is not a percentage", "e.g. 10%") from None
        if p == 100:
            p = 0
        return math.ceil(float(capacity) / 100 * p)
    return _amount("memory", value, where)


def eviction(memory: int, storage: int, pairs: Pairs, default_memory: int) -> dict[str, int]:
    """`evictionThreshold`: memory and ephemeral storage withheld for hard eviction."""
    out = {"memory": default_memory, "ephemeral-storage": math.ceil(float(storage) / 100 * 10)}
    given = dict(pairs)
    if MEMORY_AVAILABLE in given:
        out["memory"] = eviction_signal(memory, given[MEMORY_AVAILABLE], "evictionHard")
    if NODEFS_AVAILABLE in given:
        out["ephemeral-storage"] = eviction_signal(storage, given[NODEFS_AVAILABLE], "evictionHard")
    return out
