"""What every pool component hands out, read from the pool's facts (decided before anything is
registered): its placement (also as the package output `podPlacement`), labels, taints, GPUs.

No postponed annotations here: the component-provider analyzer needs the real types."""

import pulumi

from ..model.scheduling import Placement, Taint
from .pool import PoolFacts


class PoolComponent(pulumi.ComponentResource):
    """Base of the pool components. Only Outputs are annotated at class level: Pulumi's
    component-provider analyzer reads those as the schema outputs of every subclass."""

    pod_placement: pulumi.Output[Placement]
    """`placement` as an output: what a program in another language hands its workloads."""

    def _take_facts(self, facts: PoolFacts) -> None:
        self.facts: PoolFacts = facts
        self.pod_placement = pulumi.Output.from_input(facts.placement)

    @property
    def placement(self) -> Placement:
        """Lands a pod on this pool and nowhere else."""
        return self.facts.placement

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.facts.labels)

    @property
    def taints(self) -> list[Taint]:
        return list(self.facts.taints)

    @property
    def gpus_per_node(self) -> int:
        return self.facts.gpus_per_node
