"""GPU catalogs: which GKE machine shapes take which accelerators, and what AWS GPU instances carry.

Pure data and lookups (imports no Pulumi). Used to validate pools before anything is created and
by the placement check to know how many GPUs a pool's nodes have. The tables here are derived:
from the GPU records (`gpus.GPU_MODELS`) and the machine rows that name them (`gke_machines`,
`aws_instances`); their sources are cited there. Records are NamedTuples (see `gpus`).

INTERFACE (stable):
- `GKE_ACCELERATORS: dict[str, GkeAccelerator]`, `gke_accelerator(name) -> GkeAccelerator`
- `GkeAccelerator.counts_for(machine_type) -> tuple[int, ...]` (GPU counts that machine type takes;
  empty when the machine family does not take this accelerator)
- `gke_gpus_for_machine(machine_type) -> tuple[str, int] | None` (accelerator and count built into
  machine types that come with GPUs attached, like g2-standard-8 -> ("nvidia-l4", 1))
- `AWS_GPU_INSTANCES: dict[str, AwsGpuInstance]`, `aws_instance(instance_type) -> AwsGpuInstance`
- every lookup raises `InputError` naming what is allowed when the name is unknown.

ADDED (validators and helpers the pools and the placement check use):
- `validate_gke_accelerator(accelerator, machine_type, count) -> int` (GPUs per node)
- `validate_gke_cpu_machine_type(machine_type) -> str` (a CPU pool must not use a GPU machine)
- `is_gke_gpu_machine(machine_type) -> bool`, `gke_machine_series(machine_type) -> str`,
  `gke_machine_families() -> dict[str, str]`, `gke_accelerator_for_family(family) -> str | None`,
  `gke_accelerator_machines(name) -> str` (human list, e.g. "g2-standard-* machines")
- `validate_aws_gpu_instance_types(instance_types) -> AwsGpuNodeShape`
- `validate_aws_cpu_instance_types(instance_types) -> tuple[str, ...]`
- `aws_instance_or_none(instance_type)`, `is_gpu_instance(instance_type) -> bool`,
  `aws_gpu_families() -> list[str]`, `aws_instance_family(instance_type) -> str`
- `MIG_PROFILES`, `mig_instances(gpu, profile)`, `validate_shared_clients(clients)`,
  `node_startup_seconds(provider, accelerator)`, `reference_list(name)` (the config reference's)

Errors are raised without a path; per-item AWS errors carry a `[i]` path so that the caller's
`err.at("args.instance_types")` reads `args.instance_types[1]: ...`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ..errors import InputError, show
from .aws_instances import (
    EC2_INSTANCES,
    EC2_NON_GPU_ACCELERATOR_FAMILIES,
    EC2_UNMODELLED_GPU_FAMILIES,
    Ec2Instance,
)
from .gke_machines import GCE_MACHINES, GCE_UNMODELLED_GPU_PREFIXES
from .gpus import GPU_MODELS, gke_gpus


class GkeAccelerator(NamedTuple):
    """A GKE accelerator type and the machine shapes that take it.

    `machines` maps a machine type (exact, like `g2-standard-8`) or a family prefix ending in `-`
    (like `n1-standard-`) to the GPU counts it accepts. `attached` is True when the GPUs come with
    the machine type (G2, A2, A3, G4): the count is then fixed by the shape. `memory_gib` is the
    memory of one GPU as the vendor states it (nominal GB). `max_vcpus` (attachable accelerators
    only) maps a GPU count to the most vCPUs an N1 machine may have with that many GPUs.
    """

    name: str
    gpu_model: str
    memory_gib: int
    machines: dict[str, tuple[int, ...]]
    attached: bool
    max_vcpus: dict[int, int] | None = None

    def counts_for(self, machine_type: str) -> tuple[int, ...]:
        if machine_type in self.machines:
            return self.machines[machine_type]
        for prefix, counts in self.machines.items():
            if prefix.endswith("-") and machine_type.startswith(prefix):
                return counts
        return ()

    @property
    def families(self) -> list[str]:
        return sorted(
            {m.rsplit("-", 1)[0] if not m.endswith("-") else m[:-1] for m in self.machines}
        )


class AwsGpuInstance(NamedTuple):
    """An EC2 GPU instance type: GPU model, how many, memory per GPU, CPU architecture."""

    instance_type: str
    gpu_model: str
    gpus: int
    gpu_memory_gib: int
    arch: str  # "x86_64" | "arm64"
    accelerator_label: str  # value for the `k8s.amazonaws.com/accelerator` label

    @property
    def family(self) -> str:
        return aws_instance_family(self.instance_type)


class AwsGpuNodeShape(NamedTuple):
    """What every node of an EKS GPU node group has, whichever of its instance types it runs on."""

    instance_types: tuple[str, ...]
    gpu_model: str
    gpus: int  # GPUs per node
    gpu_memory_gib: int  # memory of one GPU
    arch: str  # "x86_64" | "arm64"
    accelerator_label: str  # value for the `k8s.amazonaws.com/accelerator` label


# ---------------------------------------------------------------------------------------------
# GKE / Compute Engine: each accelerator type of `gpus.GPU_MODELS`, with the machine types that
# come with it (`gke_machines`, its GPU rows) or, for N1, the GPU counts an N1 machine takes.
# N1 custom machine types are named `custom-<vCPUs>-<MB>[-ext]` (from memory of the Compute
# Engine naming, not confirmed).
# ---------------------------------------------------------------------------------------------

_N1_PREFIXES = ("n1-standard-", "n1-highmem-", "n1-highcpu-", "custom-")


def _gke_accelerators() -> dict[str, GkeAccelerator]:
    built_in: dict[str, dict[str, tuple[int, ...]]] = {}
    for m in GCE_MACHINES.values():
        if m.accelerator:
            built_in.setdefault(m.accelerator, {})[m.name] = (m.gpus,)
    out = {}
    for gpu, offer in gke_gpus():
        n1 = offer.n1_max_vcpus
        if n1:
            machines, max_vcpus = {prefix: tuple(n1) for prefix in _N1_PREFIXES}, dict(n1)
        elif offer.accelerator in built_in:
            machines, max_vcpus = built_in[offer.accelerator], None
        else:
            continue  # no machine type of it is modelled (nvidia-b200)
        out[offer.accelerator] = GkeAccelerator(
            offer.accelerator, offer.model, gpu.memory_gib or 0, machines, not n1, max_vcpus
        )
    return out


GKE_ACCELERATORS: dict[str, GkeAccelerator] = _gke_accelerators()
"""GKE accelerator type -> its GPU and machines (those with machine rows or N1 counts)."""


def gke_accelerator(name: str) -> GkeAccelerator:
    found = GKE_ACCELERATORS.get(name) if isinstance(name, str) else None
    if found is not None:
        return found
    raise InputError(
        f"accelerator {show(name)} is not offered by GKE", ", ".join(sorted(GKE_ACCELERATORS))
    )


def gke_gpus_for_machine(machine_type: str) -> tuple[str, int] | None:
    machine = GCE_MACHINES.get(machine_type) if isinstance(machine_type, str) else None
    if machine is None or not machine.accelerator:
        return None
    return machine.accelerator, machine.gpus


def gke_machine_series(machine_type: str) -> str:
    """The Compute Engine series a machine type belongs to: `n1-standard-8` -> `N1`."""
    if machine_type.startswith("custom-"):
        return "N1"  # N1 custom machine types have no series prefix
    return machine_type.split("-", 1)[0].upper()


def _family_of(machine: str) -> str:
    return machine[:-1] if machine.endswith("-") else machine.rsplit("-", 1)[0]


def gke_machine_families() -> dict[str, str]:
    """Machine family (like `g2-standard`, `n1-standard`) -> accelerator for families with GPUs
    attached; attachable (N1) families map to "" since they take several accelerators."""
    out: dict[str, str] = {}
    for acc in GKE_ACCELERATORS.values():
        for machine in acc.machines:
            out[_family_of(machine)] = acc.name if acc.attached else ""
    return dict(sorted(out.items()))


def gke_accelerator_for_family(family: str) -> str | None:
    """The accelerator built into a machine family (`a2-ultragpu` -> `nvidia-a100-80gb`), else None."""
    return gke_machine_families().get(family) or None


def gke_accelerator_machines(name: str) -> str:
    """The machines an accelerator goes on, as an error message lists them."""
    acc = gke_accelerator(name)
    by_family: dict[str, list[str]] = {}
    for machine in acc.machines:
        by_family.setdefault(_family_of(machine), []).append(machine)
    parts = []
    for family, machines in by_family.items():
        if machines[0].endswith("-"):
            parts.append(f"{machines[0]}*")
        elif len(machines) == 1:
            parts.append(machines[0])
        else:
            parts.append(f"{family}-*")
    return _join_or(parts) + " machines"


def is_gke_gpu_machine(machine_type: str) -> bool:
    """True for machine types that come with GPUs attached (G2, A2, A3, G4, A4, ...)."""
    if gke_gpus_for_machine(machine_type) is not None:
        return True
    attached_families = [f for f, acc in gke_machine_families().items() if acc]
    return any(
        machine_type.startswith(f + "-") for f in attached_families
    ) or machine_type.startswith(GCE_UNMODELLED_GPU_PREFIXES)


def _n1_vcpus(machine_type: str) -> int | None:
    """vCPUs of an N1 machine type (`n1-standard-8` -> 8, `custom-4-5120` -> 4), None if unknown."""
    m = re.fullmatch(
        r"(?:n1-(?:standard|highmem|highcpu)|custom)-(\d+)(?:-\d+(?:-ext)?)?", machine_type
    )
    return int(m.group(1)) if m else None


def _series_phrase(machine_type: str) -> str:
    series = gke_machine_series(machine_type)
    article = "an" if series[:1] in set("AEFHILMNORSX") else "a"
    return f"{article} {series} machine"


def _check_machine_type(machine_type: object) -> str:
    if not isinstance(machine_type, str) or not machine_type:
        raise InputError(
            f"machine type {show(machine_type)} is not a Compute Engine machine type name",
            "a machine type such as g2-standard-8 or n1-standard-8",
        )
    return machine_type


def validate_gke_accelerator(accelerator: str, machine_type: str, count: int | None = None) -> int:
    """Check that `count` `accelerator` GPUs fit a GKE node of `machine_type`; returns GPUs per node.

    `count` None means "the shape's fixed count" for machine types with GPUs attached; N1 machines
    need an explicit count.
    """
    acc = gke_accelerator(accelerator)
    machine_type = _check_machine_type(machine_type)
    where = gke_accelerator_machines(accelerator)
    counts = acc.counts_for(machine_type)
    if not counts:
        built_in = gke_gpus_for_machine(machine_type)
        if built_in is not None:
            problem = (
                f"{machine_type} comes with {built_in[0]} GPUs, not {accelerator}; "
                f"{accelerator} attaches to {where}"
            )
            allowed = f"accelerator {built_in[0]} on {machine_type}, or {accelerator} on {where}"
        elif acc.attached and any(
            machine_type.startswith(f + "-") for f in {_family_of(m) for m in acc.machines}
        ):
            shapes = ", ".join(acc.machines)
            problem = f"{machine_type} is not a machine type that takes {accelerator}"
            allowed = shapes
        else:
            problem = (
                f"{accelerator} attaches to {where}; "
                f"{machine_type} is {_series_phrase(machine_type)}"
            )
            allowed = where
        raise InputError(problem, allowed)

    if count is None:
        if acc.attached:
            return counts[0]
        raise InputError(
            f"no GPU count given for {accelerator} on {machine_type}: N1 machines take GPUs "
            "attached in a chosen count",
            _join_or([str(c) for c in counts]),
        )
    if isinstance(count, bool) or not isinstance(count, int):
        raise InputError(
            f"GPU count {show(count)} is not a whole number", _join_or([str(c) for c in counts])
        )
    if count not in counts:
        if acc.attached:
            problem = (
                f"{machine_type} comes with {counts[0]} {accelerator} GPU"
                f"{'' if counts[0] == 1 else 's'}; a count of {count} does not fit it"
            )
            allowed = f"{counts[0]} (or no count); for {count} GPUs per node: " + _shapes_with(
                acc, count
            )
        else:
            problem = (
                f"{accelerator} attaches {_join_or([str(c) for c in counts])} GPUs to "
                f"{_series_phrase(machine_type)}; {count} is not one of them"
            )
            allowed = _join_or([str(c) for c in counts])
        raise InputError(problem, allowed)

    if acc.max_vcpus is not None:
        vcpus = _n1_vcpus(machine_type)
        limit = acc.max_vcpus.get(count)
        if vcpus is not None and limit is not None and vcpus > limit:
            fitting = [
                f"{c} GPUs (up to {v} vCPUs)"
                for c, v in sorted(acc.max_vcpus.items())
                if v >= vcpus
            ]
            raise InputError(
                f"{machine_type} has {vcpus} vCPUs; with {count} {accelerator} GPU"
                f"{'' if count == 1 else 's'} an N1 machine may have at most {limit}",
                f"an N1 machine with at most {limit} vCPUs"
                + (", or " + _join_or(fitting) if fitting else ""),
            )
    return count


def _shapes_with(acc: GkeAccelerator, count: int) -> str:
    shapes = [m for m, c in acc.machines.items() if count in c]
    return ", ".join(shapes) if shapes else f"no {acc.name} machine type has {count} GPUs"


def validate_gke_cpu_machine_type(machine_type: str) -> str:
    """A CPU pool's machine type must not come with GPUs (they would idle, untainted)."""
    machine_type = _check_machine_type(machine_type)
    if is_gke_gpu_machine(machine_type):
        built_in = gke_gpus_for_machine(machine_type)
        what = (
            f"{built_in[1]} {built_in[0]} GPU{'' if built_in[1] == 1 else 's'}"
            if built_in
            else "GPUs"
        )
        raise InputError(
            f"{machine_type} comes with {what}; a CPU pool must not use a GPU machine type",
            "a machine type without GPUs (e.g. e2-standard-8, n2-standard-8), or make this a GPU pool",
        )
    return machine_type


# ---------------------------------------------------------------------------------------------
# AWS / EC2: the GPU rows of `aws_instances`, with their GPU model's names (`gpus.GPU_MODELS`).
# ---------------------------------------------------------------------------------------------


def _aws_gpu_instance(inst: Ec2Instance) -> AwsGpuInstance:
    gpu = GPU_MODELS[str(inst.gpu)]
    return AwsGpuInstance(
        inst.name, str(gpu.aws), inst.gpus, gpu.memory_gib or 0, inst.arch, str(gpu.aws_label)
    )


AWS_GPU_INSTANCES: dict[str, AwsGpuInstance] = {
    name: _aws_gpu_instance(inst) for name, inst in EC2_INSTANCES.items() if inst.gpu
}

_EC2_NAME = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+")


def aws_instance_family(instance_type: str) -> str:
    """`g5.12xlarge` -> `g5`."""
    return instance_type.split(".", 1)[0]


def aws_gpu_families() -> list[str]:
    """The EC2 families in the catalog, in table order."""
    return list(dict.fromkeys(i.family for i in AWS_GPU_INSTANCES.values()))


def reference_list(name: str) -> str:
    """A list docs/config-reference.md prints from the catalog, where its template says
    `<!-- catalog: NAME -->` (`components.platform.reference`)."""
    lists = {"eks-gpu-families": _eks_gpu_families}
    if name not in lists:
        raise KeyError(f"unknown catalog list {name!r} (known: {', '.join(lists)})")
    return lists[name]()


def _eks_gpu_families() -> str:
    """`g4dn.*` T4 (`nvidia-tesla-t4`), ...: each GPU family, its GPU model and node label."""
    first: dict[str, AwsGpuInstance] = {}
    for inst in AWS_GPU_INSTANCES.values():
        first.setdefault(inst.family, inst)
    return ", ".join(
        f"`{f}.*` {first[f].gpu_model} (`{first[f].accelerator_label}`)" for f in aws_gpu_families()
    )


def aws_instance_or_none(instance_type: str) -> AwsGpuInstance | None:
    return AWS_GPU_INSTANCES.get(instance_type) if isinstance(instance_type, str) else None


def is_gpu_instance(instance_type: str) -> bool:
    """True for EC2 instance types with NVIDIA/AMD GPUs, including families the table lacks."""
    if not isinstance(instance_type, str):
        return False
    return instance_type in AWS_GPU_INSTANCES or aws_instance_family(instance_type) in (
        *aws_gpu_families(),
        *EC2_UNMODELLED_GPU_FAMILIES,
    )


def _family_sizes(family: str) -> str:
    return ", ".join(t for t in AWS_GPU_INSTANCES if aws_instance_family(t) == family)


def aws_instance(instance_type: str) -> AwsGpuInstance:
    families = ", ".join(f"{f}.*" for f in aws_gpu_families())
    if not isinstance(instance_type, str) or not _EC2_NAME.fullmatch(instance_type):
        raise InputError(
            f"instance type {show(instance_type)} is not an EC2 instance type name",
            f"an EC2 GPU instance type such as g5.xlarge ({families})",
        )
    found = AWS_GPU_INSTANCES.get(instance_type)
    if found is not None:
        return found
    family = aws_instance_family(instance_type)
    if family in aws_gpu_families():
        raise InputError(f"{instance_type} is not a {family} size", _family_sizes(family))
    if family in EC2_UNMODELLED_GPU_FAMILIES:
        raise InputError(
            f"{instance_type} has GPUs, but the {family} family is not in this catalog "
            "(its GPU count/model are not modelled)",
            families,
        )
    if family in EC2_NON_GPU_ACCELERATOR_FAMILIES:
        raise InputError(
            f"{instance_type} is not a GPU instance type: its accelerators are not NVIDIA GPUs "
            "(no nvidia.com/gpu resource)",
            families,
        )
    raise InputError(f"{instance_type} is not a GPU instance type", families)


def _check_list(instance_types: object) -> list[str]:
    if isinstance(instance_types, str) or not isinstance(instance_types, Iterable):
        raise InputError(
            f"instance types {show(instance_types)} is not a list", 'a list such as ["g5.xlarge"]'
        )
    items = list(instance_types)
    if not items:
        raise InputError(
            "no instance types given", "at least one EC2 GPU instance type, e.g. g5.xlarge"
        )
    return items


def validate_aws_gpu_instance_types(instance_types: Sequence[str]) -> AwsGpuNodeShape:
    """Check the instance types of one GPU node group; returns what each of its nodes carries.

    Every type must be a known GPU instance type, listed once, and all of them must have the same
    GPU model, GPU count and CPU architecture (the autoscaler builds one node template per group,
    and one AMI type serves the group).
    """
    items = _check_list(instance_types)
    found: list[AwsGpuInstance] = []
    seen: set[str] = set()
    for i, instance_type in enumerate(items):
        try:
            inst = aws_instance(instance_type)
        except InputError as err:
            raise err.at(f"[{i}]") from None
        if instance_type in seen:
            raise InputError(
                f"{show(instance_type)} is listed twice", "each instance type once", f"[{i}]"
            )
        seen.add(instance_type)
        found.append(inst)
    first = found[0]
    for i, inst in enumerate(found[1:], start=1):
        for what, mine, theirs in (
            ("GPU model", inst.gpu_model, first.gpu_model),
            ("GPU count", inst.gpus, first.gpus),
            ("CPU architecture", inst.arch, first.arch),
        ):
            if mine != theirs:
                matching = [
                    t
                    for t, o in AWS_GPU_INSTANCES.items()
                    if (o.gpu_model, o.gpus, o.arch) == (first.gpu_model, first.gpus, first.arch)
                ]
                raise InputError(
                    f"{inst.instance_type} has {what} {mine} but {first.instance_type} has {theirs}; "
                    "all instance types of one node group must have the same GPU model, GPU count "
                    "and architecture",
                    f"types like {first.instance_type}: " + ", ".join(matching),
                    f"[{i}]",
                )
    return AwsGpuNodeShape(
        instance_types=tuple(i.instance_type for i in found),
        gpu_model=first.gpu_model,
        gpus=first.gpus,
        gpu_memory_gib=first.gpu_memory_gib,
        arch=first.arch,
        accelerator_label=first.accelerator_label,
    )


def validate_aws_cpu_instance_types(instance_types: Sequence[str]) -> tuple[str, ...]:
    """A CPU node group must not list GPU instance types (they would idle, untainted)."""
    items = _check_list(instance_types)
    seen: set[str] = set()
    for i, instance_type in enumerate(items):
        if not isinstance(instance_type, str) or not _EC2_NAME.fullmatch(instance_type):
            raise InputError(
                f"instance type {show(instance_type)} is not an EC2 instance type name",
                "an EC2 instance type such as m5.xlarge",
                f"[{i}]",
            )
        if instance_type in seen:
            raise InputError(
                f"{show(instance_type)} is listed twice", "each instance type once", f"[{i}]"
            )
        seen.add(instance_type)
        if is_gpu_instance(instance_type):
            raise InputError(
                f"{instance_type} is a GPU instance type; a CPU node group must not use it",
                "instance types without GPUs (e.g. m5.xlarge, c6i.2xlarge), or make this a GPU pool",
                f"[{i}]",
            )
    return tuple(items)


def _join_or(parts: Sequence[str]) -> str:
    parts = list(parts)
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " or " + parts[-1]


# ---------------------------------------------------------------------------------------------
# GPU node start-up: how long a pool at zero nodes takes to give a pod a GPU (Knative's progress
# deadline must cover it: placement check GI020, and the progress-deadline annotation an
# InferenceService on such a pool gets).
#
# Source: cluster-autoscaler treats a new GPU node as "GPU being installed" because "when a
# machine with GPU becomes ready it can take up to 15 minutes before it reports that GPU is
# allocatable" (kubernetes/autoscaler, history of cluster-autoscaler/utils/gpu/gpu.go, commit
# "Change the logic to include GPU-being-installed nodes"); GKE installs the driver at boot. That
# 15-minute bound is the only sourced figure found: EKS NVIDIA AMIs carry the driver, but no
# source states a shorter start-up, so EKS takes the same bound, as does AKS (which installs the
# driver at boot unless `gpuProfile.driver` is None). No source gives figures per GPU
# model either, so the accelerator does not change the default today (the parameter is there for
# when one does). Existing nodes are never at zero: no start-up. Override per pool in the stack
# config (`pools[i].nodeStartupSeconds`).
# ---------------------------------------------------------------------------------------------

NODE_STARTUP_SECONDS: dict[str, int] = {"gke": 900, "eks": 900, "aks": 900, "existing": 0}

GKE_MAX_NODES = 15_000
"""The most nodes a GKE Standard node pool can have in all: a cluster holds at most 15,000 nodes
(GKE "Quotas and limits", cloud.google.com/kubernetes-engine/quotas: nodes per cluster 15,000
for GKE 1.18 and later, 1,000 per node pool zone)."""
EKS_MAX_NODES = 100_000
"""The most nodes an EKS node group or Karpenter NodePool can have: an EKS cluster holds at most
100,000 ("Amazon EKS enables ultra scale AI/ML workloads with support for 100K nodes per
cluster", AWS Containers blog, 2025-07-16). "Nodes per managed node group" is an adjustable
quota (450 by default: docs.aws.amazon.com/eks/latest/userguide/service-quotas.html), so the
cluster's limit is the bound."""
AKS_MAX_CLUSTER_NODES = 5_000
"""The most nodes an AKS cluster holds, so the most a node auto-provisioning NodePool can
launch (AKS "Quotas, virtual machine size restrictions, and region availability": 5,000 nodes
per cluster with Virtual Machine Scale Sets; 1,000 per node pool)."""
AWS_MAX_GPUS = max(i.gpus for i in AWS_GPU_INSTANCES.values())
"""The most GPUs an EC2 instance type of the catalog has (8): a Karpenter NodePool's GPUs per
node are at most this."""
MAX_REPLICAS = 1_000_000
"""The most replicas a workload count may ask for: LeaderWorkerSet v0.8.0's CRD caps its
`spec.replicas` there (`maximum: 1000000`), the only cap an upstream workload API of this stack
declares, and it is above the pods any cluster runs (Kubernetes' "Considerations for large
clusters": at most 150,000 pods)."""


def node_startup_seconds(provider: str, accelerator: str | None = None) -> int:
    """Default seconds from scale-up to an allocatable GPU for a pool of this provider / GPU."""
    del accelerator  # no per-GPU figure is sourced (see above)
    return NODE_STARTUP_SECONDS.get(provider, NODE_STARTUP_SECONDS["gke"])


# ---------------------------------------------------------------------------------------------
# Shared GPUs: MIG profiles (`gpus.GPU_MODELS`) and time-sharing
#
# GKE time-sharing / MPS: 2..48 clients per GPU (GKE ComputeClass reference, `gpuSharing.
# maxSharedClientsPerGPU`); a node then exposes GPUs x clients `nvidia.com/gpu`.
# ---------------------------------------------------------------------------------------------


def _mig_profiles() -> dict[str, dict[str, int]]:
    with_mig = [g for g in GPU_MODELS.values() if g.mig]
    out = {offer.accelerator: dict(g.mig or {}) for g in with_mig for offer in g.gke}
    out.update({g.aws: dict(g.mig or {}) for g in with_mig if g.aws})
    return out


MIG_PROFILES: dict[str, dict[str, int]] = _mig_profiles()
"""GPU (GKE accelerator name or AWS GPU model) -> MIG profile -> instances per GPU."""

SHARED_CLIENTS_MIN, SHARED_CLIENTS_MAX = 2, 48


def mig_instances(gpu: str, profile: object) -> int:
    """How many `profile` MIG instances one `gpu` holds; InputError naming the profiles it offers
    (or that it offers none)."""
    offered = MIG_PROFILES.get(gpu)
    if not offered:
        with_mig = sorted(k for k in MIG_PROFILES if k.startswith("nvidia-"))
        raise InputError(f"{gpu} does not support MIG partitions", ", ".join(with_mig))
    if not isinstance(profile, str) or profile not in offered:
        raise InputError(f"MIG profile {show(profile)} is not one {gpu} offers", ", ".join(offered))
    return offered[profile]


def validate_shared_clients(clients: object) -> int:
    """Clients per GPU for time-sharing / MPS: a whole number from 2 to 48."""
    if (
        isinstance(clients, bool)
        or not isinstance(clients, int)
        or not SHARED_CLIENTS_MIN <= clients <= SHARED_CLIENTS_MAX
    ):
        raise InputError(
            f"{show(clients)} clients per GPU is out of range",
            f"a whole number from {SHARED_CLIENTS_MIN} to {SHARED_CLIENTS_MAX}",
        )
    return clients
