"""`InferencePlatform`: one stack's config, validated, becomes pools, Knative, add-ons and workloads.

Data flows one way: Spec -> pools -> placements -> workloads. The order `pulumi up` needs is made
explicit with `depends_on`: CRDs (KServe, Seldon installs) and the Knative podspec flags come before
any custom resource that needs them; model namespaces before what runs in them.

Every workload CR carries the wiring annotations the placement check reads
(`gpu-inference.dev/pool.<component>` on InferenceServices, `gpu-inference.dev/pool` on Seldon
Servers and ServerConfigs): the pool names the stack config wired it to, in preference order.
"""

import importlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import cached_property
from typing import Any, Optional

import pulumi
from pydantic import BaseModel

from ..kube.provider import owned_namespace
from ..model.deploy import versions
from ..model.deploy.ownership import NamespacePlan, config_section
from ..model.errors import InputError
from ..model.nodes.catalog import node_startup_seconds
from ..model.scheduling import (
    WIRED_POOL_ANNOTATION,
    NodeSelectorRequirement,
    Placement,
    Toleration,
)
from ..model.serving.annotations import NODE_STARTUP_ANNOTATION
from ..model.serving.knative_features import HOST_IPC_FLAG
from ..pools.quota import CloudQuota, CloudQuotaArgs
from ..serving.karpenter_install import KarpenterInstallArgs
from ..serving.karpenter_install import namespaces as karpenter_namespaces
from ..serving.knative import KnativeServingArgs
from ..serving.knative import namespaces as knative_namespaces
from ..serving.model_namespace import ModelNamespace, ModelNamespaceArgs
from ..serving.model_namespace import namespaces as model_namespaces
from ..serving.workload import ContainerArgs
from . import config as cfg
from . import llm_workloads as llm
from . import workloads as wl
from .addons import ADDONS, karpenter_install_args
from .cluster_access import ClusterAccess, ClusterAccessArgs
from .config_checks import stack_sources, uses_mps
from .config_errors import relocate
from .derive import args_from, to_arg, value_of
from .derive import relocate as relocate_arg
from .load import load_spec
from .namespaces import model_namespace_names, namespace_uses, stack_namespaces
from .pool_kinds import PoolConfig, pool_args
from .syntax import ExpressionSpec, TolerationSpec
from .workload_files import WorkloadSources, expand_workload_files, project_dir

# Read by the placement check (components.check.contract): the pool start-up an InferenceService's
# progress deadline covers, and the size of the predictor's model.
NAMESPACE = "gpu-inference"

PoolComponent = Any  # GkeGpuNodePool | EksGpuNodeGroup | ExistingGpuNodes (imported lazily)


def read_stack_config() -> tuple[dict[str, Any], frozenset[str]]:
    """Every key of the running stack's config, parsed, and which were secret."""
    from pulumi.runtime import config as runtime_config

    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    out: dict[str, Any] = {}
    for key in sorted(keys):
        # Every namespace: load_spec ignores other packages' settings and catches a misspelled
        # project namespace (`gpu-inferenc:pools`).
        raw = runtime_config.get_config(key)
        if isinstance(raw, str):
            try:
                out[key] = json.loads(raw) if raw[:1] in "[{" else raw
            except json.JSONDecodeError:
                out[key] = raw
        else:
            out[key] = raw
    secret = frozenset(k for k in out if runtime_config.is_config_secret(k))
    return out, secret


def load_stack_spec() -> cfg.Spec:
    """The running stack's Spec, with the workloads of the files `gpu-inference:workloadFiles`
    names (relative to the project directory); a bad config stops the program with one message,
    no traceback, pointing into the file when the fault is in one."""
    config, secret = read_stack_config()
    sources = WorkloadSources()
    try:
        config, sources = expand_workload_files(config, project_dir())
        spec = load_spec(config, secret)
    except InputError as e:
        located = sources.locate(e)
        raise pulumi.RunError(str(located)) from located
    spec.keep_sources(sources)
    return spec


def _tolerations(specs: Optional[Sequence[TolerationSpec]]) -> list[Toleration]:
    specs = specs or ()
    return [
        Toleration(t.key, t.operator, t.value, t.effect or "", t.toleration_seconds) for t in specs
    ]


def _expressions(specs: Optional[Sequence[ExpressionSpec]]) -> list[NodeSelectorRequirement]:
    specs = specs or ()
    return [NodeSelectorRequirement(e.key, e.operator, tuple(e.values)) for e in specs]


def workload_placement(
    pools: Mapping[str, PoolComponent], names: Sequence[str], style: str
) -> Optional[Placement]:
    """The placement for a workload wired to `names` (one pool, or several in preference order:
    required affinity over all of them, preferred in order, their taints tolerated)."""
    if not names:
        return None
    if len(names) == 1:
        return pools[names[0]].placement.with_style(style)
    return Placement.any_of([pools[n].placement for n in names])


class InferencePlatform(pulumi.ComponentResource):
    """Everything one stack declares. Outputs: `placements` (pool -> pod-spec fragment) and
    `workloads` (kind -> names)."""

    def __init__(
        self, name: str, spec: cfg.Spec, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        super().__init__("gpu-inference:index:InferencePlatform", name, None, opts)
        self.spec = spec
        c = spec.cluster
        with from_args("cluster", ClusterAccessArgs):
            self.access = ClusterAccess(
                f"{name}-cluster",
                args_from(
                    c,
                    ClusterAccessArgs,
                    name=c.name or "cluster",
                    create=bool(c.create),
                    release_channel=c.release_channel or "REGULAR",
                    node_auto_provisioning=any(p.kind.name == "nap" for p in spec.pools),
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
        k8s_opts = pulumi.ResourceOptions(
            parent=self, providers={"kubernetes": self.access.provider}
        )
        self.stack_namespaces = self._make_namespaces(name)
        self.pools: dict[str, PoolComponent] = {}
        self.karpenter: Optional[Any] = None
        # With the Karpenter add-on, its pools come after the controller (the NodePool CRD must
        # exist), which comes after the node-group pools it may be pinned to.
        karpenter_pools = [
            n
            for n, p in enumerate(spec.pools)
            if p.kind.name == "karpenter" and spec.addons.karpenter.enabled
        ]
        for n, p in enumerate(spec.pools):
            if n not in karpenter_pools:
                with from_args(f"pools[{n}]", p.kind.args, p.kind.block):
                    self.pools[p.name] = self._pool(p)
        with from_args("addons.karpenter", KarpenterInstallArgs):
            self.karpenter = self._karpenter(name, k8s_opts)
        for n in karpenter_pools:
            p = spec.pools[n]
            with from_args(f"pools[{n}]", p.kind.args, p.kind.block):
                self.pools[p.name] = self._pool(p)
        self.pools = {p.name: self.pools[p.name] for p in spec.pools}  # config order
        with from_args("knative", KnativeServingArgs):
            self.knative = self._knative(name, k8s_opts)
        self.addons = self._addons(name, k8s_opts)
        with from_args("namespaces", ModelNamespaceArgs):
            self.namespaces = self._namespaces(name, k8s_opts)
        self.inference_services = []
        for n, isvc in enumerate(spec.inference_services):
            with from_config(f"inferenceServices[{n}]", wl.InferenceService, spec=spec):
                self.inference_services.append(self._isvc(name, isvc))
        self.llm_inference_services = []
        for n, svc in enumerate(spec.llm_inference_services):
            with from_llm_config(f"llmInferenceServices[{n}]", spec):
                self.llm_inference_services.append(self._llm(name, svc))
        self.seldon = self._seldon(name, k8s_opts)
        self.quotas = []
        for n, q in enumerate(spec.quotas):
            with from_args(f"quotas[{n}]", CloudQuotaArgs):
                self.quotas.append(
                    CloudQuota(
                        f"{name}-quota-{q.provider}-{q.region}",
                        args_from(q, CloudQuotaArgs),
                        opts=pulumi.ResourceOptions(parent=self),
                    )
                )

        self.placements = {n: p.placement.to_pod_spec() for n, p in self.pools.items()}
        self.workloads = {
            "inferenceServices": [f"{i.namespace}/{i.name}" for i in spec.inference_services],
            "llmInferenceServices": [
                f"{s.namespace}/{s.name}" for s in spec.llm_inference_services
            ],
            "seldonServers": [f"{spec.seldon.namespace}/{s.name}" for s in spec.seldon.servers],
            "seldonModels": [f"{spec.seldon.namespace}/{m.name}" for m in spec.seldon.models],
        }
        self.register_outputs({"placements": self.placements, "workloads": self.workloads})

    # -- namespaces -------------------------------------------------------------------------

    def _make_namespaces(self, name: str) -> dict[str, pulumi.Resource]:
        """Each namespace of the stack, once, named after the namespace alone; aliased to every
        resource a part of the stack made it as before (`components.platform.namespaces`)."""
        out: dict[str, pulumi.Resource] = {}
        uses = namespace_uses(name, self.spec, self.sources)
        for ns, want in stack_namespaces(uses).items():
            aliases = [
                pulumi.Alias(name=resource, parent=pulumi.create_urn(comp, typ, parent=self))
                for typ, comp, resource in want.previous
            ]
            out[ns] = owned_namespace(
                f"{name}-namespace-{ns}",
                ns,
                self,
                labels=want.labels or None,
                aliases=aliases,
                provider=self.access.provider,
                ownership=want.ownership,
            )
        return out

    def _in_namespaces(
        self,
        opts: pulumi.ResourceOptions,
        plans: Mapping[str, NamespacePlan],
        after: Sequence[pulumi.Resource] = (),
    ) -> pulumi.ResourceOptions:
        """`opts` for a part whose namespaces (`plans`) the platform made: it waits for them."""
        made = [self.stack_namespaces[ns] for ns in plans if ns in self.stack_namespaces]
        return pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(depends_on=[*after, *made])
        )

    # -- pools ------------------------------------------------------------------------------

    def _pool(self, p: PoolConfig) -> PoolComponent:
        """The pool's component, from the Args its config stands for."""
        kind = p.kind
        opts = pulumi.ResourceOptions(parent=self)
        if kind.kubernetes:
            k = self.karpenter if kind.name == "karpenter" else None
            opts = pulumi.ResourceOptions(
                parent=self,
                providers={"kubernetes": self.access.provider},
                depends_on=[k.crds, k.ready] if k is not None else [],
            )
        return kind.component(p.name, pool_args(p, self.sources), opts=opts)

    # -- Knative and add-ons ----------------------------------------------------------------

    @cached_property
    def sources(self) -> dict[str, Any]:
        """The values of stack keys that components' arguments are fed from (`source`): one
        stack-wide mapping, made once the cluster is (every pool and workload is fed from it)."""
        c, identity = self.spec.cluster, self.spec.cluster.workload_identity
        return {
            **stack_sources(c),
            # The deployed cluster: GKE's may be made by this stack (`cluster.create`).
            "cluster.name": self.access.cluster_name if c.provider in ("gke", "aks") else c.name,
            "cluster.subnetIds": c.subnet_ids or self.access.subnet_ids,
            "cluster.workloadIdentity.gcpServiceAccount": identity.gcp_service_account
            if identity
            else None,
            "cluster.workloadIdentity.awsRoleArn": identity.aws_role_arn if identity else None,
            "knative.ingress": self.spec.knative.ingress,
            "addons.kserve.enabled": bool(self.spec.addons.kserve.enabled),
            "seldon.namespace": self.spec.seldon.namespace,
        }

    def _knative(self, name: str, opts: pulumi.ResourceOptions) -> Optional[Any]:
        k = self.spec.knative
        if k.mode == "none":
            return None
        from ..serving.knative import KnativeServing

        features = dict(k.features or {})
        if any(
            isvc.is_knative and uses_mps(self.spec, comp)
            for isvc in self.spec.inference_services
            for _, comp in isvc.components()
        ):
            # Serverless pods on a GKE MPS pool carry hostIPC: Knative must allow it.
            features.setdefault(HOST_IPC_FLAG, "enabled")
        args = args_from(
            k,
            KnativeServingArgs,
            sources=self.sources,
            features=features or None,
            namespaces_made=True,
        )
        return KnativeServing(
            f"{name}-knative",
            args,
            opts=self._in_namespaces(opts, knative_namespaces(f"{name}-knative", args)),
        )

    def _karpenter(self, name: str, opts: pulumi.ResourceOptions) -> Optional[Any]:
        """The Karpenter controller (`addons.karpenter`), after the pools it is pinned to."""
        if not self.spec.addons.karpenter.enabled:
            return None
        from ..serving.karpenter_install import KarpenterInstall

        hosts = [self.pools[n] for n in self.spec.addons.karpenter.system_pools or ()]
        args = replace(karpenter_install_args(self.spec), namespaces_made=True)
        return KarpenterInstall(
            f"{name}-karpenter",
            args,
            opts=self._in_namespaces(opts, karpenter_namespaces(f"{name}-karpenter", args), hosts),
        )

    def _addons(self, name: str, opts: pulumi.ResourceOptions) -> dict[str, Any]:
        """Each enabled add-on of `ADDONS`, in its order, after what it waits for."""
        out: dict[str, Any] = {"karpenter": self.karpenter} if self.karpenter is not None else {}
        for addon in ADDONS:
            section = addon.section(self.spec.addons)
            if not section.enabled:
                continue
            args = args_from(section, addon.args, sources=self.sources, **addon.inputs(self))
            module, _, cls = addon.component.rpartition(".")
            component = getattr(importlib.import_module(module, __package__), cls)
            child = f"{name}-{addon.suffix}"
            plans = addon.namespaces(child, args) if addon.namespaces is not None else {}
            with from_args(addon.path, addon.args):
                out[addon.key] = component(
                    child, args, opts=self._in_namespaces(opts, plans, addon.after(self, out))
                )
        return out

    def plugin_pools(self) -> list[Any]:
        """The pools NVIDIA's device plugin runs on: those that need it, DRA pools never."""
        dra = set(self.dra_pools())
        return [p for n, p in self.pools.items() if _needs_plugin(p) and n not in dra]

    def dra_pools(self) -> list[str]:
        """The DRA pools (`dra: true`), by name: NVIDIA's DRA driver runs there, the device
        plugin never."""
        return [n for n in self.pools if self.spec.pools_by_name[n].is_dra]

    def _namespaces(self, name: str, opts: pulumi.ResourceOptions) -> dict[str, ModelNamespace]:
        n = self.spec.namespaces
        out: dict[str, ModelNamespace] = {}
        for ns in model_namespace_names(self.spec):
            args = args_from(
                n,
                ModelNamespaceArgs,
                sources=self.sources,
                namespace=ns,
                workload_pool=self.access.workload_pool,
                static_credentials_secret=bool(n.static_credentials),
                namespaces_made=True,
            )
            out[ns] = ModelNamespace(
                f"{name}-ns-{ns}",
                args,
                opts=self._in_namespaces(opts, model_namespaces(f"{name}-ns-{ns}", args)),
            )
        return out

    def _after(self, namespace: str, *installs: str) -> list[pulumi.Resource]:
        deps: list[pulumi.Resource] = []
        for i in installs:
            if i in self.addons:
                ready = self.addons[i].ready
                deps += ready if isinstance(ready, list) else [ready]
        if namespace in self.namespaces:
            deps.append(self.namespaces[namespace].ready)
        return deps

    # -- workloads --------------------------------------------------------------------------

    def _host_ipc(self, w: Any) -> Optional[bool]:
        """True for a workload wired to a GKE MPS pool: its pods need `hostIPC: true` to reach
        the node's MPS control daemon (`components.check.fit.check_mps_host_ipc`)."""
        return True if uses_mps(self.spec, w) else None

    def _placement(self, w: Any) -> Optional[Placement]:
        if w.placement is not None:
            # Its own scheduling, not a pool's: exactly the fields the config lists.
            own = Placement(w.placement.node_selector, _tolerations(w.placement.tolerations))
            return own.with_style(w.scheduling_style)
        placement = workload_placement(self.pools, w.pool_names, w.scheduling_style)
        if placement is not None and w.tolerations:
            placement = placement.with_tolerations(_tolerations(w.tolerations))
        return placement

    def _isvc(self, name: str, i: wl.InferenceService) -> Any:
        from ..serving.inference_service import (
            ExplainerArgs,
            InferenceService,
            InferenceServiceArgs,
            PredictorArgs,
            TransformerArgs,
        )

        annotations: dict[str, str] = {}
        components: dict[str, Any] = {}
        sa = self._service_account(i.namespace)
        for kind, comp in i.components():
            if comp.pool_names:  # a component with a placement of its own is wired to no pool
                annotations[f"{WIRED_POOL_ANNOTATION}.{kind}"] = ",".join(comp.pool_names)
            common: dict[str, Any] = dict(
                service_account_name=sa,
                host_ipc=self._host_ipc(comp),
                placement=self._placement(comp),
                extra_expressions=_expressions(comp.extra_expressions) or None,
                containers=_containers(comp),
            )
            if kind == "predictor":
                components[kind] = args_from(
                    comp,
                    PredictorArgs,
                    **_model_source(comp),
                    **common,
                    gpus=comp.gpu_count or None,
                    cpu=_q(comp.cpu),
                    memory=_q(comp.memory),
                    env=comp.env if not comp.containers else None,
                    args=comp.args if not comp.containers else None,
                )
            else:
                cls = TransformerArgs if kind == "transformer" else ExplainerArgs
                components[kind] = args_from(
                    comp, cls, **{**common, "containers": common["containers"] or []}
                )

        knative_features = None
        if self.knative is not None:
            knative_features = self.knative.features
        deployment_mode = i.deployment_mode or self.spec.addons.kserve.default_deployment_mode
        startup = self._node_startup(i) if deployment_mode in wl.KNATIVE_MODES else None
        if startup:  # the check (GI020) compares the progress deadline with it
            annotations[NODE_STARTUP_ANNOTATION] = str(startup)
        after = self._after(i.namespace, "kserve")
        if self.knative is not None and deployment_mode in wl.KNATIVE_MODES:
            after.append(self.knative.ready)
        return InferenceService(
            f"{name}-isvc-{i.namespace}-{i.name}",
            args_from(
                i,
                InferenceServiceArgs,
                sources=self.sources,
                deployment_mode=deployment_mode,
                kserve_version=i.kserve_version or self.spec.addons.kserve.version,
                predictor=components["predictor"],
                transformer=components.get("transformer"),
                explainer=components.get("explainer"),
                knative_features=knative_features,
                annotations=annotations,
                progress_deadline_seconds=startup,
            ),
            opts=self._workload_opts(after),
        )

    def _workload_opts(self, after: Sequence[pulumi.Resource]) -> pulumi.ResourceOptions:
        """A model's options: under the platform, with its kubernetes provider (`k8s_opts`),
        after `after`. Made whole: `ResourceOptions.merge` to the same copies every option, 30 µs
        for each of a large stack's models."""
        return pulumi.ResourceOptions(
            parent=self, providers={"kubernetes": self.access.provider}, depends_on=list(after)
        )

    def _node_startup(self, i: wl.InferenceService) -> Optional[int]:
        """The longest GPU node start-up of the pools its GPU components are wired to that can be
        at zero nodes (`pools[].nodeStartupSeconds`, else the catalog's default): its progress
        deadline, so Knative waits for the node."""
        if self.spec.cluster.provider == "existing":
            return None
        startup = self.node_startups
        found = [
            startup[n]
            for _, comp in i.components()
            if comp.gpu_count
            for n in comp.pool_names
            if n in startup
        ]
        return max(found) if found else None

    @cached_property
    def node_startups(self) -> dict[str, int]:
        """Each pool that can be at zero nodes -> the seconds a node takes to start (its
        `nodeStartupSeconds`, else the catalog's default): one stack-wide table."""
        provider = self.spec.cluster.provider
        return {
            p.name: value_of(p, "node_startup_seconds")
            or node_startup_seconds(provider, p.gpu_name)
            for p in self.spec.pools
            if p.facts.min_nodes == 0
        }

    def _service_account(self, namespace: str) -> Optional[str]:
        if namespace in self.namespaces:
            return self.namespaces[namespace].service_account_name
        return None

    def _llm(self, name: str, svc: llm.LLMInferenceService) -> Any:
        """One LLMInferenceService, each part on its pools, after the LLM install and its
        namespace."""
        from ..serving.llm_inference_service import LLMInferenceService

        def placement_of(names: Sequence[str], tolerations: Sequence[TolerationSpec]) -> Any:
            placement = workload_placement(self.pools, names, "nodeSelector")
            if placement is not None and tolerations:
                placement = placement.with_tolerations(_tolerations(tolerations))
            return placement

        after = self._after(svc.namespace, "kserveLlm")
        args = llm.service_args(svc, placement_of)
        if self.spec.namespaces.static_credentials:
            # The storage initializer reads its credentials from the pods' ServiceAccount.
            args.service_account_name = self._service_account(svc.namespace)
        return LLMInferenceService(
            f"{name}-llmisvc-{svc.namespace}-{svc.name}",
            args,
            opts=self._workload_opts(after),
        )

    def _seldon(self, name: str, opts: pulumi.ResourceOptions) -> list[Any]:
        s = self.spec.seldon
        ns = s.namespace
        after = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(depends_on=self._after(ns, "seldon"))
        )
        out: list[Any] = []
        configs: dict[str, Any] = {}
        for n, sc in enumerate(s.server_configs):
            with from_config(f"seldon.serverConfigs[{n}]", wl.ServerConfig, spec=self.spec):
                configs[sc.name] = self._server_config(name, sc, after)
            out.append(configs[sc.name])
        servers: dict[str, Any] = {}
        for n, srv in enumerate(s.servers):
            with from_config(f"seldon.servers[{n}]", wl.Server, spec=self.spec):
                servers[srv.name] = self._server(name, srv, configs, after)
            out.append(servers[srv.name])
        for n, m in enumerate(s.models):
            with from_config(f"seldon.models[{n}]", wl.SeldonModel, spec=self.spec):
                out.append(self._model(name, m, servers, after))
        return out

    def _server_config(self, name: str, sc: wl.ServerConfig, after: Any) -> Any:
        from ..serving.seldon import SeldonServerConfig, SeldonServerConfigArgs

        return SeldonServerConfig(
            f"{name}-serverconfig-{sc.name}",
            args_from(
                sc,
                SeldonServerConfigArgs,
                sources=self.sources,
                containers=_seldon_containers(sc, sc.containers),
                capabilities=sc.capabilities or None,
                agent_image=(
                    versions.SELDON_AGENT_IMAGE
                    if sc.capabilities
                    and not sc.base
                    and not any(c.name == "agent" for c in sc.containers or ())
                    else None
                ),
                placement=self._placement(sc),
                host_ipc=self._host_ipc(sc),
                extra_expressions=_expressions(sc.extra_expressions) or None,
                annotations=_wired(sc.pool_names),
            ),
            opts=after,
        )

    def _server(self, name: str, srv: wl.Server, configs: dict[str, Any], after: Any) -> Any:
        from ..serving.seldon import SeldonServer, SeldonServerArgs

        deps = [configs[srv.server_config]] if srv.server_config in configs else []
        return SeldonServer(
            f"{name}-server-{srv.name}",
            args_from(
                srv,
                SeldonServerArgs,
                sources=self.sources,
                extra_capabilities=srv.extra_capabilities or None,
                containers=_seldon_containers(srv, None),
                placement=self._placement(srv),
                host_ipc=self._host_ipc(srv),
                extra_expressions=_expressions(srv.extra_expressions) or None,
                annotations=_wired(srv.pool_names),
            ),
            opts=pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(depends_on=deps)),
        )

    def _model(self, name: str, m: wl.SeldonModel, servers: dict[str, Any], after: Any) -> Any:
        from ..serving.seldon import SeldonModel, SeldonModelArgs

        deps = [servers[m.server]] if m.server in servers else list(servers.values())
        return SeldonModel(
            f"{name}-model-{m.name}",
            args_from(m, SeldonModelArgs, sources=self.sources, memory=_q(m.memory)),
            opts=pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(depends_on=deps)),
        )


@contextmanager
def from_args(
    key: str, args: type, block: Optional[str] = None, *, spec: Optional[cfg.Spec] = None
) -> Iterator[None]:
    """A component's InputError raised inside, located at the stack key that fed the argument
    (`gpu-inference:<key>` is the section of the component's Args, see `derive.relocate`); its
    refusals at deploy time name keys of that section (`ownership.CONFIG_SECTION`)."""
    try:
        with config_section(f"{NAMESPACE}:{key}"):
            yield
    except InputError as e:
        located = relocate_arg(e, f"{NAMESPACE}:{key}", args, block, NAMESPACE)
        if spec is not None:
            located = spec.locate(located)
        # RunError: `pulumi up` prints the message without a traceback, as for load_spec's.
        raise pulumi.RunError(str(located)) from located


@contextmanager
def from_config(
    key: str,
    model: type[BaseModel],
    renames: Optional[dict[str, str]] = None,
    *,
    spec: Optional[cfg.Spec] = None,
) -> Iterator[None]:
    """A component's InputError raised inside, located at the stack config key that fed it
    (`gpu-inference:<key>`, a `model` of the config) instead of the component's own argument;
    for a workload, in the workload file it came from (`spec`: the Spec that knows where)."""
    try:
        yield
    except InputError as e:
        located = relocate(e, f"{NAMESPACE}:{key}", model, renames)
        if spec is not None:
            located = spec.locate(located)
        # RunError: `pulumi up` prints the message without a traceback, as for load_spec's.
        raise pulumi.RunError(str(located)) from located


@contextmanager
def from_llm_config(key: str, spec: cfg.Spec) -> Iterator[None]:
    """An LLMInferenceService's InputError at the stack key that fed it (`llm_workloads`)."""
    try:
        yield
    except InputError as e:
        located = spec.locate(llm.relocated(e, f"{NAMESPACE}:{key}"))
        raise pulumi.RunError(str(located)) from located


def _q(value: Any) -> Any:
    """A quantity as the stack wrote it: integers stay integers (seed 004's `cpu: 40`), the rest
    is a string (`"500m"`, `"360Gi"`)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return str(value)


def _needs_plugin(pool: PoolComponent) -> bool:
    """A GPU pool whose nodes need the NVIDIA device plugin DaemonSet (EKS Auto Mode runs its
    own: awsdocs/amazon-eks-user-guide `latest/ug/automode/auto-accelerated.adoc`)."""
    return bool(pool.gpus_per_node) and not getattr(pool, "builtin_device_plugin", False)


def _wired(pool_names: Sequence[str]) -> Optional[dict[str, str]]:
    return {WIRED_POOL_ANNOTATION: ",".join(pool_names)} if pool_names else None


def _model_source(comp: Any) -> dict[str, Any]:
    if comp.model is not None:
        m = comp.model
        return dict(
            model_format=m.format,
            storage_uri=m.storage_uri,
            runtime=m.runtime,
            runtime_version=m.runtime_version,
            protocol_version=m.protocol_version,
        )
    if comp.framework is not None:
        f = comp.framework
        return dict(
            framework=f.name,
            storage_uri=f.storage_uri,
            runtime_version=f.runtime_version,
            protocol_version=f.protocol_version,
        )
    return {}


def _containers(comp: Any) -> Optional[list[ContainerArgs]]:
    """Custom containers; the component's GPUs / CPU / memory go to the first one."""
    if not comp.containers:
        return None
    out: list[ContainerArgs] = [to_arg(c) for c in comp.containers]
    out[0] = replace(
        out[0],
        gpus=comp.gpu_count or out[0].gpus,
        cpu=_q(comp.cpu) if comp.cpu is not None else _q(out[0].cpu),
        memory=_q(comp.memory) if comp.memory is not None else _q(out[0].memory),
    )
    return out


def _seldon_containers(w: Any, declared: Optional[Sequence[Any]]) -> Optional[list[ContainerArgs]]:
    """The Seldon podSpec containers: declared ones, with `w.container` (default `mlserver`)
    carrying the GPUs / CPU / memory / ephemeral storage (requests; `gpuLimit` for the limit)."""
    resources: dict[str, Any] = dict(
        gpus=w.gpu_count or None,
        gpu_limit=w.gpu_limit,
        cpu=_q(w.cpu),
        memory=_q(w.memory),
        ephemeral_storage=_q(w.ephemeral_storage),
    )
    has_resources = any(v is not None for v in resources.values())
    out: list[ContainerArgs] = []
    seen = False
    for c in declared or ():
        container = to_arg(c)
        if c.name == w.container:
            seen = True
            container = replace(container, **resources)
        out.append(container)
    if not seen and (has_resources or getattr(w, "image", None) or getattr(w, "env", None)):
        out.append(
            ContainerArgs(
                name=w.container,
                image=getattr(w, "image", None),
                env=getattr(w, "env", None),
                **resources,
            )
        )
    return out or None
