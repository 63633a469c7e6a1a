"""What every pool component hands out, read from the pool's facts (decided before anything is
registered): its placement (also as the package output `podPlacement`), labels, taints, GPUs.

The pool components share their head and tail here: `_start` decides the pool (an input error
names the component, nothing is registered) and registers the component; `_finish` registers the
outputs every pool has (`poolName`, `gpusPerNode`, `placement`) around its own; `_custom_resource`
makes an owned Kubernetes custom resource (a ComputeClass, a Karpenter NodePool).

No postponed annotations here: the component-provider analyzer needs the real types."""

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional, TypeVar

import pulumi

from ..kube.provider import create_opts, owned
from ..model.errors import InputError
from ..model.scheduling import Placement, Taint
from .pool import Planned, PoolFacts, facts_of

A = TypeVar("A")
P = TypeVar("P", bound=Planned)


class PoolComponent(pulumi.ComponentResource):
    """Base of the pool components. Only Outputs are annotated at class level: Pulumi's
    component-provider analyzer reads those as the schema outputs of every subclass."""

    pod_placement: pulumi.Output[Placement]
    """`placement` as an output: what a program in another language hands its workloads."""

    def _start(
        self,
        type_name: str,
        name: str,
        plan: Callable[[str, A], P],
        args: A,
        opts: Optional[pulumi.ResourceOptions],
        props: Optional[Callable[[PoolFacts], Mapping[str, Any]]] = None,
    ) -> P:
        """Decide the pool from its args before anything is registered (a bad input raises one
        `InputError` under `<Component>('name')`), then register the component (with `props` of
        its facts as inputs) and take its facts. Returns what `plan` decided."""
        try:
            planned = plan(name, args)  # each kind's plan starts with `check_declared`
        except InputError as e:
            raise e.at(f"{type_name.rsplit(':', 1)[-1]}({name!r})") from None
        facts = facts_of(planned)
        pulumi.ComponentResource.__init__(
            self, type_name, name, dict(props(facts)) if props else {}, opts
        )
        self._take_facts(facts)
        return planned

    def _take_facts(self, facts: PoolFacts) -> None:
        self.facts: PoolFacts = facts
        self.pod_placement = pulumi.Output.from_input(facts.placement)

    def _finish(self, gpus_per_node: bool = True, **own: Any) -> None:
        """Register the outputs: `poolName`, the component's `own` ones, `gpusPerNode` (unless
        told not to) and `placement`, in that order."""
        outputs: dict[str, Any] = {"poolName": self.facts.name, **own}
        if gpus_per_node:
            outputs["gpusPerNode"] = self.facts.gpus_per_node
        outputs["placement"] = self.facts.placement.to_pod_spec()
        self.register_outputs(outputs)

    def _custom_resource(
        self,
        resource_name: str,
        api_version: str,
        kind: str,
        body: Mapping[str, Any],
        depends_on: Sequence[pulumi.Resource] = (),
    ) -> pulumi.CustomResource:
        """A custom resource this pool makes (`body`: its `metadata` and `spec`), marked as ours
        and refused if another's object of that name exists."""
        import pulumi_kubernetes as k8s

        return k8s.apiextensions.CustomResource(
            resource_name,
            api_version=api_version,
            kind=kind,
            metadata=owned(body["metadata"]),
            spec=body["spec"],
            opts=create_opts(self, depends_on),
        )

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
