"""Cloud quotas a pool's nodes count against: which quota, how much of it one node takes, and the
quota names a stack may declare (`quotas` in the stack config, `pools.quota.CloudQuota`).

Pure logic (imports no Pulumi). An autoscaler cannot make a node past a quota: GCE refuses the
instance with QUOTA_EXCEEDED, EC2 with VcpuLimitExceeded (spot: MaxSpotInstanceCountExceeded), and
the node group stays short. Offline the quota is what the user declares (docs/capacity.md says
how to read it from the cloud); what the pools may take of it is judged by the placement check
(GI045, GI046).

- GCE (GKE): per region and GPU family, in GPUs; Spot and preemptible VMs count against the
  `PREEMPTIBLE_` quota of the family instead (Compute Engine "GPU quota"; `gcloud compute regions
  describe REGION` lists the metrics with their limits). Each accelerator type's metric is in its
  GPU record (`gpus.GkeGpu.quota`, with its source); one without is not judged.
- EC2 (EKS): per region, in vCPUs, per instance-family group, On-Demand and Spot apart (EC2 User
  Guide, "On-Demand Instance quotas" and "Spot Instance quotas"; `aws service-quotas
  list-service-quotas --service-code ec2` lists them with their codes). The Spot quota of P
  instances is split into "All P4, P3 and P2 Spot Instance Requests" and "All P5 Spot Instance
  Requests" in the current guide; the older "All P Spot Instance Requests" is taken too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InputError, did_you_mean, show
from .gpus import gke_gpus

PROVIDERS = ("gke", "eks")

GCE_GPU_METRICS: dict[str, str] = {
    offer.accelerator: offer.quota for _, offer in gke_gpus() if offer.quota
}
"""GKE accelerator type -> the GCE regional GPU quota metric its nodes count against."""
PREEMPTIBLE = "PREEMPTIBLE_"


@dataclass(frozen=True)
class Ec2Quota:
    """An EC2 vCPU quota: its name (what the stack declares), code, the instance families it
    covers (by the letters before the generation digit) and whether it is the Spot one."""

    name: str
    code: str | None
    families: tuple[str, ...]
    spot: bool
    generations: tuple[str, ...] = ()  # only these families (`p2`, `p3`, ...): the P Spot split


STANDARD = ("a", "c", "d", "h", "i", "m", "r", "t", "z")
EC2_QUOTAS: tuple[Ec2Quota, ...] = (
    Ec2Quota(
        "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
        "L-1216C47A",
        STANDARD,
        False,
    ),
    Ec2Quota("Running On-Demand G and VT instances", "L-DB2E81BA", ("g", "vt"), False),
    Ec2Quota("Running On-Demand P instances", "L-417A185B", ("p",), False),
    Ec2Quota("Running On-Demand Inf instances", None, ("inf",), False),
    Ec2Quota("Running On-Demand Trn instances", None, ("trn",), False),
    Ec2Quota("Running On-Demand DL instances", None, ("dl",), False),
    Ec2Quota("Running On-Demand F instances", None, ("f",), False),
    Ec2Quota("Running On-Demand X instances", None, ("x",), False),
    Ec2Quota(
        "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests",
        "L-34B43A08",
        STANDARD,
        True,
    ),
    Ec2Quota("All G and VT Spot Instance Requests", "L-3819A6DF", ("g", "vt"), True),
    Ec2Quota(
        "All P4, P3 and P2 Spot Instance Requests", "L-7212CCBC", ("p",), True, ("p2", "p3", "p4")
    ),
    Ec2Quota("All P5 Spot Instance Requests", None, ("p",), True, ("p5",)),
    Ec2Quota("All P Spot Instance Requests", None, ("p",), True),
    Ec2Quota("All Inf Spot Instance Requests", None, ("inf",), True),
    Ec2Quota("All Trn Spot Instance Requests", None, ("trn",), True),
    Ec2Quota("All DL Spot Instance Requests", None, ("dl",), True),
    Ec2Quota("All F Spot Instance Requests", None, ("f",), True),
    Ec2Quota("All X Spot Instance Requests", None, ("x",), True),
)

_FAMILY = re.compile(r"^([a-z]+?)(\d)")
_GCP_REGION = re.compile(r"^[a-z]+-[a-z]+\d+$")
_GCP_ZONE = re.compile(r"^([a-z]+-[a-z]+\d+)-[a-z]$")
_AWS_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")


def quota_names(provider: str) -> list[str]:
    """The quota names a stack may declare for a provider."""
    if provider == "gke":
        metrics = list(GCE_GPU_METRICS.values())
        return metrics + [PREEMPTIBLE + m for m in metrics]
    return [q.name for q in EC2_QUOTAS]


def gce_region(location: str) -> str | None:
    """The region of a GCP location (a region, or a zone `us-central1-a`), None if neither."""
    if _GCP_REGION.match(location):
        return location
    found = _GCP_ZONE.match(location)
    return found.group(1) if found else None


def gce_quota(accelerator: str | None, preemptible: bool) -> str | None:
    """The GPU quota metric a GKE node of this accelerator counts against (None: not known)."""
    metric = GCE_GPU_METRICS.get(accelerator or "")
    if metric is None:
        return None
    return PREEMPTIBLE + metric if preemptible else metric


def ec2_quotas(instance_type: str, spot: bool) -> list[str]:
    """The vCPU quota names an EC2 instance type counts against, most specific first (a P5 Spot
    instance: "All P5 Spot Instance Requests", then the older "All P Spot Instance Requests")."""
    found = _FAMILY.match(instance_type)
    if not found:
        return []
    letters = found.group(1)
    family = instance_type.split(".", 1)[0]
    out = []
    for q in EC2_QUOTAS:
        if q.spot != spot or letters not in q.families:
            continue
        if q.generations and not family.startswith(q.generations):
            continue
        out.append(q)
    return [q.name for q in sorted(out, key=lambda q: not q.generations)]


def validate_region(provider: str, region: str) -> None:
    pattern, example = (
        (_GCP_REGION, "us-central1") if provider == "gke" else (_AWS_REGION, "us-east-1")
    )
    if not pattern.match(region):
        raise InputError(
            f"{show(region)} is not a{' GCP' if provider == 'gke' else 'n AWS'} region",
            f"a region such as {example!r} (quotas are per region)",
            "region",
        )


def _limit_path(name: str) -> str:
    return (
        f"limits.{name}" if re.match(r"^[A-Za-z0-9_-]+$", name) else f"limits[{json.dumps(name)}]"
    )


def validate_limits(provider: str, limits: Mapping[str, int]) -> None:
    """Each quota name known for the provider, each limit a whole number of GPUs (gke) or vCPUs
    (eks), 0 or more."""
    known = quota_names(provider)
    if not limits:
        raise InputError("limits is empty", "one quota name or more, with its limit", "limits")
    for name, value in limits.items():
        if name not in known:
            hint = did_you_mean(name, known)
            unit = "GCE GPU quota metrics" if provider == "gke" else "EC2 vCPU quota names"
            raise InputError(
                f"{show(name)} is not a quota {provider} pools count against{hint}",
                f"{unit}: " + ", ".join(known),
                _limit_path(name),
            )
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            unit = "GPUs" if provider == "gke" else "vCPUs"
            raise InputError(
                f"the limit of {name} is {show(value)}",
                f"a whole number of {unit}, 0 or more",
                _limit_path(name),
            )
