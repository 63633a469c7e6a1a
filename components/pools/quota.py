"""`CloudQuota`: the cloud quotas a stack's pools count against, as the user declares them (the
`quotas` stack config section). It makes nothing in the cloud: it registers the quotas, so that
the placement check (GI045, GI046) reads them from the graph like anything else, and the policy
pack from its own config. How to read a quota from the cloud: docs/capacity.md.

The registered inputs (`provider`, `region`, `limits`) are what `components.check` reads for
type `gpu-inference:index:CloudQuota`.

No postponed annotations here: the component-provider analyzer needs the real types."""

from dataclasses import dataclass, field
from typing import Optional

import pulumi

from ..model.errors import InputError
from ..model.inputs import stack
from ..model.nodes.quotas import PROVIDERS, validate_limits, validate_region

TYPE = "gpu-inference:index:CloudQuota"


@dataclass
class CloudQuotaArgs:
    """Inputs of a `CloudQuota`: one provider's quotas in one region."""

    provider: str = field(metadata=stack(required=True, choices=PROVIDERS))
    """`gke`: GCE GPU quotas, in GPUs; `eks`: EC2 vCPU quotas, in vCPUs."""
    region: str = field(metadata=stack(required=True))
    """The region the quotas are for: the cluster's (its pools count against them)."""
    limits: dict[str, int] = field(metadata=stack(required=True))
    """Quota name -> what it leaves for this stack's pools (its limit less what else uses it):
    GCE GPU quota metrics (`NVIDIA_H100_GPUS`; Spot and preemptible nodes count against
    `PREEMPTIBLE_NVIDIA_H100_GPUS`), or EC2 quota names (`Running On-Demand P instances`, `All
    P5 Spot Instance Requests`, ...)."""


def quota_inputs(args: CloudQuotaArgs) -> dict[str, object]:
    """What the component registers (validated: `InputError` naming the key)."""
    if args.provider not in PROVIDERS:
        raise InputError(
            f"provider {args.provider!r} has no quotas here", ", ".join(PROVIDERS), "provider"
        )
    validate_region(args.provider, args.region)
    validate_limits(args.provider, args.limits)
    return {
        "provider": args.provider,
        "region": args.region,
        "limits": dict(sorted(args.limits.items())),
    }


class CloudQuota(pulumi.ComponentResource):
    """One provider's quotas in one region, for the placement check to read."""

    def __init__(
        self, name: str, args: CloudQuotaArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            props = quota_inputs(args)
        except InputError as e:
            raise e.at(f"CloudQuota({name!r})") from None
        super().__init__(TYPE, name, props, opts)
        self.register_outputs({})
