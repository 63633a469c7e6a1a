"""`KubeProvider`: the kubernetes provider of the platform, which knows its cluster.

It applies server-side and upserts (`upsertExistingObjects`: since pulumi-kubernetes v4.29 a
create of an object that exists fails with AlreadyExists, which leaves an `up` killed after the
API server made an object unable to converge), and it registers the hooks that talk to its
cluster (`hooks.py`), named after it so that `pulumi destroy --run-program` and an `up` that
drops a pool find them registered: the program always makes the provider. Components find the
hooks through the provider they were given (`hooks_of`); under another provider (a plain
`k8s.Provider`, a provider passed in from another language) there are none, and each component
says what it does instead.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..model.deploy.ownership import (
    SYSTEM_NAMESPACES,
    NamespacePlan,
    Ownership,
    field_manager,
    with_manager,
)
from . import hooks as bodies
from .cluster import Cluster, LiveCluster, Target
from .objects import NAMESPACE, CoreObject
from .runs import record_this_run

MIN_PULUMI = "3.244.0"
"""The Pulumi CLI that runs these hooks: resource hooks since v3.182.0, error hooks since
v3.217.0, every provider error passed to them since v3.244.0 (pulumi CHANGELOG)."""


def stack_manager() -> str:
    """This stack's field manager (`components.model.deploy.ownership`)."""
    return field_manager(pulumi.get_project(), pulumi.get_stack())


def owned(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """`metadata` of an object we create or patch, with this stack's field manager annotation."""
    return with_manager(metadata, stack_manager())


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


class ClusterHooks:
    """The hooks bound to one provider's cluster, named after the provider (and, for an install's
    own refusals, after its scope: each names its own ways out)."""

    def __init__(self, name: str, target: pulumi.Output[Target]) -> None:
        self.name = name
        self._target = target
        self._clusters: dict[Target, Cluster] = {}
        self._creates: dict[Optional[Ownership], pulumi.ResourceHook] = {}
        self._releases: dict[Optional[Ownership], pulumi.ResourceHook] = {}
        self.restore_taints = pulumi.ResourceHook(f"{name}-restore-taints", self._restore_taints)
        self.hand_back_taints = pulumi.ResourceHook(
            f"{name}-hand-back-taints", self._hand_back_taints
        )
        self.recover_release = pulumi.ErrorHook(f"{name}-recover-release", self._recover_release)
        # Delete hooks: named, and made with the provider, so that `destroy --run-program` and an
        # `up` that drops a resource find them.
        self.drop_crd = pulumi.ResourceHook(f"{name}-drop-crd", self._after(bodies.drop_crd))
        self.drop_namespace = pulumi.ResourceHook(
            f"{name}-drop-namespace", self._after(bodies.drop_namespace)
        )
        self.keep_release_crds = pulumi.ResourceHook(
            f"{name}-keep-release-crds", self._keep_release_crds
        )

    async def _cluster(self) -> Cluster:
        where = await self._target.future()
        where = where if isinstance(where, Target) else Target()
        if where not in self._clusters:
            self._clusters[where] = await asyncio.to_thread(LiveCluster, where)
        return self._clusters[where]

    def _hook_name(self, kind: str, ownership: Optional[Ownership]) -> str:
        return f"{self.name}-{kind}" + (f"-{_slug(ownership.scope)}" if ownership else "")

    def create(self, ownership: Optional[Ownership] = None) -> pulumi.ResourceHookBinding:
        """For an object we create: refuse one of that name that is not this stack's, naming the
        install's ways out (`ownership`); none when the install adopts on purpose."""
        if ownership is not None and ownership.adopt:
            return pulumi.ResourceHookBinding()
        if ownership not in self._creates:

            async def refuse(args: pulumi.ResourceHookArgs) -> None:
                live = await self._cluster()
                await asyncio.to_thread(
                    bodies.refuse_foreign, live, args.new_inputs or {}, ownership
                )

            self._creates[ownership] = pulumi.ResourceHook(
                self._hook_name("refuse-foreign", ownership), refuse
            )
        return pulumi.ResourceHookBinding(before_create=[self._creates[ownership]])

    def namespace(self, ownership: Optional[Ownership] = None) -> pulumi.ResourceHookBinding:
        """For a namespace we make (`retainOnDelete`): refused like any object, and deleted after
        it leaves the state only when it holds nothing of others (adopted: neither)."""
        if ownership is not None and ownership.adopt:
            return pulumi.ResourceHookBinding()
        return pulumi.ResourceHookBinding(
            before_create=list(self.create(ownership).before_create or []),
            after_delete=[self.drop_namespace],
        )

    def crd(self, ownership: Optional[Ownership] = None) -> pulumi.ResourceHookBinding:
        """For a CRD we apply (`retainOnDelete`): refused like any object, and deleted after it
        leaves the state only when it holds no object of others (adopted: neither)."""
        if ownership is not None and ownership.adopt:
            return pulumi.ResourceHookBinding()
        return pulumi.ResourceHookBinding(
            before_create=list(self.create(ownership).before_create or []),
            after_delete=[self.drop_crd],
        )

    def release(self, ownership: Optional[Ownership] = None) -> pulumi.ResourceHookBinding:
        """For a Helm release: refuse (or, adopted on purpose, move aside) one of that name
        another installed; recover one this resource's interrupted operation left half made;
        before uninstalling, keep its CRDs that hold others' objects."""
        if ownership not in self._releases:

            async def guard(args: pulumi.ResourceHookArgs) -> None:
                live = await self._cluster()
                inputs = args.new_inputs or {}
                moved = await asyncio.to_thread(
                    bodies.guard_release, live, inputs, args.urn, ownership
                )
                if moved:
                    pulumi.log.warn(
                        f"Helm release {inputs.get('namespace')}/{inputs.get('name')} adopted: "
                        f"its records are kept as {bodies.ASIDE_PREFIX}<name> "
                        f"({', '.join(moved)}); this stack's install takes its objects over"
                    )

            kind = "adopt-release" if ownership is not None and ownership.adopt else "guard-release"
            self._releases[ownership] = pulumi.ResourceHook(self._hook_name(kind, ownership), guard)
        adopt = ownership is not None and ownership.adopt
        return pulumi.ResourceHookBinding(
            before_create=[self._releases[ownership]],
            on_error=[self.recover_release],
            before_delete=[] if adopt else [self.keep_release_crds],
        )

    def ownership(self, hook: str) -> Optional[Ownership]:
        """The ownership a refusal hook of this provider carries, by the hook's name."""
        for found in (self._creates, self._releases):
            for ownership, bound in found.items():
                if bound.name == hook:
                    return ownership
        return None

    def node_taints(self) -> pulumi.ResourceHookBinding:
        """For a node patch: before it goes, or before an update that drops its taints, give the
        node its own taints back."""
        return pulumi.ResourceHookBinding(
            before_delete=[self.restore_taints], before_update=[self.hand_back_taints]
        )

    def _after(self, body: Any) -> Any:
        """An after-delete hook running `body(cluster, old inputs)`, which deletes what it may and
        says what it keeps (a warning: the deletion itself went through)."""

        async def hook(args: pulumi.ResourceHookArgs) -> None:
            try:
                live = await self._cluster()
                said = await asyncio.to_thread(body, live, args.old_inputs or {})
            except Exception as e:  # undecided: it stays (an error here would fail the run)
                said = f"kept {args.name}: what it holds could not be read ({e})"
            if said:
                pulumi.log.warn(said)

        return hook

    async def _keep_release_crds(self, args: pulumi.ResourceHookArgs) -> None:
        # A before-delete hook: its error stops the uninstall, so a release whose CRDs cannot be
        # judged is not uninstalled (its CRDs would go with everything of their kinds).
        live = await self._cluster()
        for said in await asyncio.to_thread(bodies.keep_release_crds, live, args.old_inputs or {}):
            pulumi.log.warn(said)

    async def _hand_back_taints(self, args: pulumi.ResourceHookArgs) -> None:
        live = await self._cluster()
        await asyncio.to_thread(
            bodies.hand_back_taints, live, args.old_inputs or {}, args.new_inputs or {}
        )

    async def _restore_taints(self, args: pulumi.ResourceHookArgs) -> None:
        live = await self._cluster()
        await asyncio.to_thread(bodies.restore_taints, live, args.old_inputs or {})

    async def _recover_release(self, args: pulumi.ErrorHookArgs) -> bool:
        live = await self._cluster()
        cleared = await asyncio.to_thread(
            bodies.recover_release,
            live,
            args.failed_operation,
            args.errors,
            args.new_inputs or {},
            args.urn,
        )
        if cleared:
            pulumi.log.warn(
                f"Helm release {(args.new_inputs or {}).get('name')}: cleared the records an "
                f"interrupted run left ({', '.join(cleared)}); retrying the {args.failed_operation}"
            )
        return bool(cleared)


class KubeProvider(k8s.Provider):
    """A kubernetes provider (server-side apply, upsert) with hooks on its cluster. Making one
    records this run for `gpu-inference recover` (`runs.py`)."""

    def __init__(
        self,
        resource_name: str,
        kubeconfig: Optional[pulumi.Input[str]] = None,
        context: Optional[pulumi.Input[str]] = None,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        super().__init__(
            resource_name,
            kubeconfig=kubeconfig,
            context=context,
            enable_server_side_apply=True,
            upsert_existing_objects=True,
            opts=opts,
        )
        self.target: pulumi.Output[Target] = pulumi.Output.all(kubeconfig, context).apply(
            lambda v: Target(v[0], v[1])
        )
        self.cluster_hooks = ClusterHooks(resource_name, self.target)
        record_this_run()


def hooks_of(resource: pulumi.Resource) -> Optional[ClusterHooks]:
    """The hooks of the kubernetes provider `resource`'s children use, if it is a `KubeProvider`."""
    provider = resource.get_provider("kubernetes:core/v1:Namespace")
    return provider.cluster_hooks if isinstance(provider, KubeProvider) else None


def create_opts(
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
    ownership: Optional[Ownership] = None,
    **more: Any,
) -> pulumi.ResourceOptions:
    """Options for an object we create under `parent` (with `provider=`, or the one `parent`
    passes on): the refuse-foreign hook when that provider has it (a create never takes over
    another's object; `ownership`: the install's ways out). Adopted on purpose: no refusal, and
    `destroy` leaves the object (it was not made here)."""
    provider = more.get("provider")
    found = provider.cluster_hooks if isinstance(provider, KubeProvider) else hooks_of(parent)
    adopt = ownership is not None and ownership.adopt
    return pulumi.ResourceOptions(
        parent=parent,
        depends_on=list(depends_on),
        hooks=found.create(ownership) if found and not adopt else None,
        retain_on_delete=True if adopt else more.pop("retain_on_delete", None),
        **more,
    )


def owned_namespace(
    resource_name: str,
    name: pulumi.Input[str],
    parent: pulumi.Resource,
    labels: Optional[Mapping[str, str]] = None,
    depends_on: Sequence[pulumi.Resource] = (),
    aliases: Sequence[pulumi.Alias] = (),
    provider: Optional[pulumi.ProviderResource] = None,
    ownership: Optional[Ownership] = None,
) -> CoreObject:
    """A namespace this stack makes (and `destroy` deletes); one of that name that exists and is
    not this stack's is refused, not taken. `aliases`: the resources it was made as before;
    `provider`: when `parent` does not pass the kubernetes one on."""
    if isinstance(name, str) and name in SYSTEM_NAMESPACES:
        raise ValueError(f"{name} is a namespace every cluster has: use it, do not make it")
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    found = provider.cluster_hooks if isinstance(provider, KubeProvider) else hooks_of(parent)
    # Never deleted by the engine: deleting a namespace deletes everything in it. The hook
    # deletes it when it holds nothing of others; without hooks (a plain provider) it stays.
    return CoreObject(
        NAMESPACE,
        resource_name,
        metadata=owned(metadata),
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=list(depends_on),
            hooks=found.namespace(ownership) if found else None,
            retain_on_delete=True,
            aliases=list(aliases) or None,
            provider=provider,
        ),
    )


def make_namespaces(
    plans: Mapping[str, NamespacePlan],
    parent: pulumi.Resource,
    made: Optional[bool],
    ownership: Optional[Ownership] = None,
) -> dict[str, list[pulumi.Resource]]:
    """What each of an install's namespaces waits for: the namespace it makes itself (used alone),
    or nothing when the caller made them (`made`: a platform makes every namespace of a stack once,
    so that no config change moves one from one install to another; the caller's `depends_on`
    then carries them)."""
    if made:
        return {ns: [] for ns in plans}
    return {
        ns: [
            owned_namespace(
                plan.resource, ns, parent, labels=plan.labels or None, ownership=ownership
            )
        ]
        for ns, plan in plans.items()
    }


def owned_children(
    parent: pulumi.Resource, ownership: Optional[Ownership] = None
) -> pulumi.ResourceTransform:
    """A transform for a component that applies upstream objects whole (`yaml/v2.ConfigFile`, a
    `helm/v4.Chart` rendered client side): each object it makes gets what ours get
    (`mark_child`). New-style transforms reach the objects a packaged component registers (the
    engine calls them back for every child); they are not run under mocks."""
    hooks = hooks_of(parent)
    manager = stack_manager()

    def transform(args: pulumi.ResourceTransformArgs) -> Optional[pulumi.ResourceTransformResult]:
        return mark_child(args, manager, hooks, ownership)

    return transform


def mark_child(
    args: pulumi.ResourceTransformArgs,
    manager: str,
    hooks: Optional[ClusterHooks],
    ownership: Optional[Ownership] = None,
) -> Optional[pulumi.ResourceTransformResult]:
    """One upstream object made ours: the stack's field manager annotation (its owner marker,
    and the field manager the provider applies it with), the refusal of an object of that name
    another made (named after the install's ways out), and for a CRD or namespace
    `retainOnDelete` with the hook that deletes it only while it holds nothing of others.
    Adopted on purpose: marked and retained, never refused nor deleted."""
    if not args.custom or not args.type_.startswith("kubernetes:"):
        return None
    props: dict[str, Any] = dict(args.props)
    metadata: Any = props.get("metadata") or {}
    props["metadata"] = with_manager(dict(metadata), manager)
    kind = args.type_.rsplit(":", 1)[-1]
    adopt = ownership is not None and ownership.adopt
    binding: Optional[pulumi.ResourceHookBinding] = None
    if hooks is not None and not adopt:
        if kind == "CustomResourceDefinition":
            binding = hooks.crd(ownership)
        elif kind == "Namespace":
            binding = hooks.namespace(ownership)
        else:
            binding = hooks.create(ownership)
    kept = adopt or kind in ("CustomResourceDefinition", "Namespace")
    opts = pulumi.ResourceOptions.merge(
        args.opts,
        pulumi.ResourceOptions(hooks=binding, retain_on_delete=True if kept else None),
    )
    return pulumi.ResourceTransformResult(props, opts)
