"""The second pass over a parsed Spec: every rule that needs more than one object (wiring to pools
that exist, names that collide, options that contradict), each refusal naming the key path."""

from __future__ import annotations

from typing import Any

from ..model.deploy import versions
from ..model.deploy.charts import check_local_chart
from ..model.errors import InputError
from ..model.inputs import inputs
from ..model.nodes.autopilot import autopilot_gpu_problem
from ..model.nodes.quotas import gce_region
from ..model.scheduling import ERT_PROVIDERS
from ..model.serving.knative_features import HOST_IPC_FLAG
from ..model.serving.seldon_servers import builtin_server_config
from ..model.syntax import key_path
from ..pools.aks import default_agent_pool_name
from ..pools.autopilot import GKE_ACCELERATOR_COUNT_LABEL, GKE_ACCELERATOR_LABEL
from ..pools.pool import GPU_TAINT
from ..serving.claims import KNATIVE_REFUSES_CLAIMS, check_claim, refuse_both
from ..serving.llm_install import (
    KSERVE_NAMESPACE,
    LOCAL_CHARTS,
    LOCAL_MANIFESTS,
    LLMServingInstallArgs,
    check_local_manifest,
)
from .addons import check_karpenter_addon
from .config import (
    HOST_LABEL_MAX,
    KNATIVE_PODSPEC_FLAGS,
    SELDON_BUILTIN_SERVER_CONFIGS,
    Cluster,
    LLMServingAddon,
    Spec,
)
from .derive import value_of
from .llm_workloads import check_llm_services
from .pool_kinds import PoolConfig, check_gpu_request, kind_inputs, plan_pool
from .workloads import PLACEMENT_HELP

# "When you add a GPU node pool to an existing cluster that already runs a non-GPU node pool, GKE
# automatically taints the GPU nodes" with nvidia.com/gpu NoSchedule (KServe docs,
# docs/samples/accelerators; FIELD_NOTES): on a GKE GPU pool the key is GKE's.
GKE_GPU_TAINT = GPU_TAINT

# The containers every Seldon server pod has besides the server (seldon-core-v2-setup 2.6.0,
# templates/seldon-v2-components.yaml, ServerConfigs mlserver and triton).
SELDON_SERVER_POD_CONTAINERS = ("agent", "rclone")

# ---------------------------------------------------------------------------------------------
# second pass: everything that needs more than one object
# ---------------------------------------------------------------------------------------------


class Checker:
    def __init__(self, spec: Spec, namespace: str, secret_keys: set[str]) -> None:
        self.spec = spec
        self.ns = namespace
        self.secret_keys = secret_keys

    def p(self, path: str) -> str:
        return f"{self.ns}:{path}"

    def run(self) -> None:
        self.resolve_cluster()
        self.check_pools()
        self.resolve_addons()
        self.check_charts()
        self.check_karpenter_addon()
        self.check_inference_services()
        self.check_llm()
        self.check_seldon()
        self.check_placements()
        self.check_knative()
        self.check_namespaces()
        self.check_quotas()

    # -- defaults that depend on other sections (their ONE place) --------------------------

    def resolve_cluster(self) -> None:
        c = self.spec.cluster
        if c.create is None:
            c.create = False if c.provider in ("gke", "aks") else None
        if c.extended_resource_toleration is None:
            c.extended_resource_toleration = c.provider in ERT_PROVIDERS

    def resolve_addons(self) -> None:
        s, a = self.spec, self.spec.addons
        if a.nvidia_device_plugin.enabled is None:
            # GKE installs the NVIDIA driver and device plugin itself.
            a.nvidia_device_plugin.enabled = s.provider != "gke"
        if a.dra_driver.enabled is None:
            a.dra_driver.enabled = any(getattr(p, "dra", False) for p in s.pools)
        if a.gpu_driver_installer.enabled is None:
            # GKE's DRA pools have GKE's driver install off: the driver is the installer's.
            a.gpu_driver_installer.enabled = s.provider == "gke" and any(
                getattr(p, "dra", False) for p in s.pools
            )
        elif a.gpu_driver_installer.enabled and s.provider != "gke":
            raise InputError(
                f"GKE's NVIDIA driver installer runs on GKE nodes only; the provider is "
                f"{s.provider!r}",
                "leave it unset or false (its installer images are preloaded on GKE nodes only)",
                self.p("addons.gpuDriverInstaller.enabled"),
            )
        if a.seldon.enabled is None:
            a.seldon.enabled = bool(s.seldon.servers or s.seldon.models or s.seldon.server_configs)
        if a.kserve.llm is None:
            a.kserve.llm = LLMServingAddon()
        if a.kserve.llm.enabled is None:
            a.kserve.llm.enabled = bool(s.llm_inference_services)
        if a.cert_manager.enabled is None:
            # KServe's webhooks need certificates (the LLM install's too).
            a.cert_manager.enabled = bool(a.kserve.enabled or a.kserve.llm.enabled)
        for isvc in s.inference_services:
            if isvc.deployment_mode is None:
                isvc.deployment_mode = a.kserve.default_deployment_mode
            if isvc.kserve_version is None:
                isvc.kserve_version = a.kserve.version
            for _, comp in isvc.components():
                if comp.min_replicas is None:
                    # Knative scales to zero; RawDeployment cannot (kserve/kserve#3514).
                    comp.min_replicas = 0 if isvc.is_knative else 1

    # -- local charts (air-gapped installs) --------------------------------------------------

    def check_charts(self) -> None:
        """Every `chart` key: a local chart directory or .tgz, on an add-on that installs."""
        s, a = self.spec, self.spec.addons
        charts: list[tuple[str, bool, object]] = [
            ("knative.chart", s.knative.mode == "operator", s.knative.operator_chart),
            ("addons.kserve.chart", bool(a.kserve.enabled), a.kserve.chart),
            ("addons.seldon.chart", bool(a.seldon.enabled), a.seldon.chart),
            (
                "addons.nvidiaDevicePlugin.chart",
                bool(a.nvidia_device_plugin.enabled),
                a.nvidia_device_plugin.chart,
            ),
            ("addons.certManager.chart", bool(a.cert_manager.enabled), a.cert_manager.chart),
            ("addons.karpenter.chart", bool(a.karpenter.enabled), a.karpenter.chart),
        ]
        for path, installs, chart in charts:
            if chart is None:
                continue
            if not installs:
                if path.startswith("knative"):
                    what = f"knative.mode is {s.knative.mode!r}, which installs no chart"
                    allowed = "leave chart out, or knative.mode: operator"
                else:
                    what, allowed = "the add-on is not enabled", "leave chart out, or enabled: true"
                raise InputError(f"a local chart is given but {what}", allowed, self.p(path))
            paths = chart.model_dump(by_alias=True) if hasattr(chart, "model_dump") else {"": chart}
            for part, value in paths.items():
                key = f"{path}.{part}" if part else path
                if value is None:
                    raise InputError(
                        "required key is missing",
                        "local charts are given together: " + ", ".join(paths),
                        self.p(key),
                    )
                try:
                    check_local_chart(str(value))
                except InputError as e:
                    raise e.at(self.p(key)) from None
        self.check_llm_charts()
        versioned = (
            ("karpenter", a.karpenter),
            ("seldon", a.seldon),
            ("nvidiaDevicePlugin", a.nvidia_device_plugin),
            ("draDriver", a.dra_driver),
            ("certManager", a.cert_manager),
        )
        for name, addon in versioned:
            if addon.chart is not None and addon.version is not None:
                raise InputError(
                    f"version {addon.version!r} picks a chart from the repository, and a local "
                    "chart is given too; a local chart carries its own version",
                    "chart or version, not both",
                    self.p(f"addons.{name}.version"),
                )

    def check_llm_charts(self) -> None:
        """`addons.kserve.llm`'s local charts and manifests (air-gapped installs)."""
        llm = self.spec.addons.kserve.llm
        for inp in inputs(LLMServingInstallArgs):
            if inp.path is None or inp.field not in (*LOCAL_CHARTS, *LOCAL_MANIFESTS):
                continue
            value = value_of(llm, inp.field)
            if value is None:
                continue
            key = self.p(f"addons.kserve.llm.{inp.path}")
            if not llm.enabled:
                raise InputError(
                    "a local copy is given but the add-on is not enabled",
                    "leave it out, or enabled: true",
                    key,
                )
            try:
                if inp.field in LOCAL_CHARTS:
                    check_local_chart(str(value))
                else:
                    check_local_manifest(value)
            except InputError as e:
                raise e.at(key) from None

    def check_karpenter_addon(self) -> None:
        """`addons.karpenter`: EKS only, not beside EKS Auto Mode, on pools it may run on."""
        check_karpenter_addon(self.spec, self.p("addons.karpenter"))

    # -- pools ------------------------------------------------------------------------------

    def check_pools(self) -> None:
        """Each pool validated by its component (its facts kept), then what the pool's keys mean
        together with the rest of the stack."""
        seen: dict[str, int] = {}
        sources = stack_sources(self.spec.cluster)
        for i, pool in enumerate(self.spec.pools):
            path = self.p(f"pools[{i}]")
            if pool.name in seen:
                raise InputError(
                    f"pool name {pool.name!r} is used twice (pools[{seen[pool.name]}] and here)",
                    "unique pool names",
                    f"{path}.name",
                )
            seen[pool.name] = i
            if pool.kind.autopilot and self.spec.cluster.create:
                raise InputError(
                    "cluster.autopilot with create: true; gpu-inference creates Standard clusters "
                    "only",
                    "create: false and the name of an existing Autopilot cluster",
                    self.p("cluster.create"),
                )
            self._gpu_sharing(pool, path)
            plan_pool(pool, path, sources, self.ns)
        self._agent_pool_names()

    def _agent_pool_names(self) -> None:
        """AKS names an agent pool once per cluster: two pools must not derive the same name."""
        seen: dict[str, int] = {}
        for i, pool in enumerate(self.spec.pools):
            if pool.kind.name != "aks":
                continue
            name = value_of(pool, "agent_pool_name") or default_agent_pool_name(pool.name)
            if name in seen:
                key = "agentPoolName" if value_of(pool, "agent_pool_name") else "name"
                raise InputError(
                    f"agent pool name {name!r} is also pools[{seen[name]}]'s (AKS names agent "
                    "pools with 1-12 lowercase letters and digits, from the pool name by default)",
                    "agentPoolName: a name of its own for one of them",
                    self.p(f"pools[{i}].{key}"),
                )
            seen[name] = i

    def _gpu_sharing(self, pool: PoolConfig, path: str) -> None:
        """`gpuSharing` where the NVIDIA device plugin this stack installs does the sharing
        (time-slicing: EKS node groups, Karpenter pools, AKS agent pools, existing nodes): TIME_SHARING only, with
        its clients, and only where that plugin runs. The node label picks a config from the
        plugin's `config.map`, and the plugin skips a label naming a config it lacks
        (NVIDIA/k8s-device-plugin v0.17.1 README, "Updating Per-Node Configuration With a Node
        Label"). Its MPS is experimental in v0.17.1, and its control daemon only runs on nodes
        labeled `nvidia.com/mps.capable=true`, which GPU feature discovery sets (off in the
        chart: `gfd.enabled: false`; `templates/daemonset-mps-control-daemon.yml`)."""
        own = {i.field for i in kind_inputs(pool.kind)}
        if "gpu_sharing_strategy" in own or "gpuSharing" not in pool.given():
            return
        strategy, clients = pool.sharing_strategy, pool.sharing_clients
        where = {"existing": "existing nodes", "aks": "AKS"}.get(pool.kind.provider, "EKS")
        if strategy is None:
            raise InputError(
                "required key is missing", "TIME_SHARING", f"{path}.gpuSharing.strategy"
            )
        if strategy != "TIME_SHARING":
            raise InputError(
                f"strategy {strategy} on {where}: gpu-inference shares GPUs there with the NVIDIA "
                "device plugin's time-slicing"
                + (
                    " (its MPS is experimental and needs GPU feature discovery)"
                    if pool.kind.provider == "existing"
                    else ""
                ),
                "TIME_SHARING",
                f"{path}.gpuSharing.strategy",
            )
        if clients is None:
            raise InputError(
                "required key is missing",
                "pods per GPU, 2..48",
                f"{path}.gpuSharing.maxClientsPerGpu",
            )
        if value_of(pool, "auto_mode"):
            raise InputError(
                "gpuSharing on an EKS Auto Mode pool, which runs its own device plugin",
                "leave gpuSharing out on Auto Mode",
                f"{path}.gpuSharing",
            )
        # The config label only picks a config of the device plugin this stack installs, which
        # does not run on Bottlerocket's NVIDIA variants (they bring their own plugin).
        ami = str(value_of(pool, "ami_type") or value_of(pool, "ami_alias") or "")
        if ami.lower().startswith("bottlerocket"):
            raise InputError(
                "gpuSharing on Bottlerocket nodes, which run Bottlerocket's own NVIDIA device "
                "plugin: the time-slicing config of the plugin this stack installs does not reach "
                "them",
                "an AL2023 NVIDIA AMI (the default), or leave gpuSharing out",
                f"{path}.gpuSharing",
            )
        # None is resolved to on for eks and existing clusters (resolve_addons).
        if self.spec.addons.nvidia_device_plugin.enabled is False:
            raise InputError(
                f"gpuSharing on {where} needs the NVIDIA device plugin this stack installs (the "
                "node label picks a config from its config map; without it the label does "
                "nothing)",
                "addons.nvidiaDevicePlugin.enabled: true (the default), or leave gpuSharing out",
                f"{path}.gpuSharing",
            )

    # -- InferenceServices --------------------------------------------------------------------

    def check_inference_services(self) -> None:
        seen: dict[tuple[str, str], int] = {}
        for i, isvc in enumerate(self.spec.inference_services):
            path = self.p(f"inferenceServices[{i}]")
            key = (isvc.namespace, isvc.name)
            if key in seen:
                raise InputError(
                    f"InferenceService {isvc.name!r} in namespace {isvc.namespace!r} is declared "
                    f"twice (inferenceServices[{seen[key]}] and here)",
                    "unique names per namespace",
                    f"{path}.name",
                )
            seen[key] = i
            for kind, _ in isvc.components():
                host = f"{isvc.name}-{kind}-{isvc.namespace}"
                if len(host) > HOST_LABEL_MAX:
                    room = HOST_LABEL_MAX - len(f"--{kind}")
                    raise InputError(
                        f"name {isvc.name!r} with namespace {isvc.namespace!r} gives the {kind} "
                        f"host label {host!r} of {len(host)} characters; KServe builds "
                        "'<name>-<component>-<namespace>' and it must fit a DNS label "
                        "(kserve/kserve#4807)",
                        f"name and namespace together at most {room} characters",
                        f"{path}.name",
                    )
            for kind, comp in isvc.components():
                if isvc.is_knative and comp.gpu_claim is not None:
                    raise InputError(
                        f"the {kind} claims its GPUs (gpuClaim) but deploymentMode is "
                        f"{isvc.deployment_mode}: {KNATIVE_REFUSES_CLAIMS}",
                        "deploymentMode RawDeployment (Standard) for a service that claims GPUs, "
                        "or gpus on a device-plugin pool",
                        f"{path}.{kind}.gpuClaim",
                    )
            if isvc.deployment_mode in ("RawDeployment", "Standard"):
                for kind, comp in isvc.components():
                    if comp.min_replicas == 0:
                        raise InputError(
                            f"minReplicas 0 with deploymentMode {isvc.deployment_mode}: a raw "
                            "Deployment does not scale to zero (kserve/kserve#3514)",
                            "minReplicas >= 1, or deploymentMode Serverless to scale to zero",
                            f"{path}.{kind}.minReplicas",
                        )

    # -- LLMInferenceServices ------------------------------------------------------------------

    def check_llm(self) -> None:
        """`addons.kserve.llm` beside the stack's KServe and cert-manager, then each
        `llmInferenceServices[i]` (`llm_workloads.check_llm_services`)."""
        a = self.spec.addons
        if a.kserve.llm.enabled:
            if a.kserve.enabled and a.kserve.namespace != KSERVE_NAMESPACE:
                raise InputError(
                    f"addons.kserve.llm installs KServe's LLM charts into namespace "
                    f"{KSERVE_NAMESPACE!r}, where they share what KServe's charts make (the "
                    "inferenceservice-config ConfigMap, the Gateway kserve/kserve-ingress-gateway "
                    f"KServe routes to by default), but KServe is installed in "
                    f"{a.kserve.namespace!r}",
                    f"namespace: {KSERVE_NAMESPACE} (the default), or addons.kserve.llm off",
                    self.p("addons.kserve.namespace"),
                )
            version = a.cert_manager.version
            if (
                a.cert_manager.enabled
                and version is not None
                and _release(version) < _release(versions.CERT_MANAGER_LLM_MINIMUM)
            ):
                raise InputError(
                    f"cert-manager {version} is below the "
                    f"{versions.CERT_MANAGER_LLM_MINIMUM} KServe v0.20.0's LLMInferenceService "
                    "guide asks for (addons.kserve.llm uses the stack's one cert-manager)",
                    f"{versions.CERT_MANAGER_LLM_MINIMUM} or later, or leave version out (the "
                    f"pinned {versions.CERT_MANAGER.version})",
                    self.p("addons.certManager.version"),
                )
        check_llm_services(self.spec, self.p)

    # -- Seldon ------------------------------------------------------------------------------

    def check_seldon(self) -> None:
        self._seldon_unique_names()
        for i, sc in enumerate(self.spec.seldon.server_configs):
            self._seldon_server_config(i, sc)
        self._seldon_servers()
        self._seldon_models()

    def _seldon_unique_names(self) -> None:
        sel = self.spec.seldon
        for section, names in (
            ("serverConfigs", [c.name for c in sel.server_configs]),
            ("servers", [s.name for s in sel.servers]),
            ("models", [m.name for m in sel.models]),
        ):
            seen: dict[str, int] = {}
            for i, name in enumerate(names):
                if name in seen:
                    raise InputError(
                        f"name {name!r} is used twice ({section}[{seen[name]}] and here)",
                        "unique names",
                        self.p(f"seldon.{section}[{i}].name"),
                    )
                seen[name] = i

    def _seldon_server_config(self, i: int, sc: Any) -> None:
        """A ServerConfig is the server pod's whole template: its name, its base, its containers."""
        if sc.name in SELDON_BUILTIN_SERVER_CONFIGS and not sc.replaces_builtin:
            raise InputError(
                f"ServerConfig {sc.name!r} has the name of Seldon's own {sc.name!r} "
                "ServerConfig and would replace it for every Server that uses it",
                "another name (Servers name it in serverConfig), or replacesBuiltin: true "
                "to replace Seldon's on purpose",
                self.p(f"seldon.serverConfigs[{i}].name"),
            )
        if sc.replaces_builtin and sc.name not in SELDON_BUILTIN_SERVER_CONFIGS:
            raise InputError(
                f"replacesBuiltin: true, but {sc.name!r} is not one of Seldon's own ServerConfigs",
                "replacesBuiltin only on a ServerConfig named "
                + " or ".join(SELDON_BUILTIN_SERVER_CONFIGS),
                self.p(f"seldon.serverConfigs[{i}].replacesBuiltin"),
            )
        base = getattr(sc, "base", None)
        base_names = (
            [c["name"] for c in builtin_server_config(base)["podSpec"]["containers"]]
            if base
            else []
        )
        own = list(sc.containers or ())
        if not own and not base:
            raise InputError(
                "required key is missing",
                "containers (the whole server pod), or base: mlserver or triton",
                self.p(f"seldon.serverConfigs[{i}].containers"),
            )
        names = [*base_names, *(c.name for c in own if c.name not in base_names)]
        for j, c in enumerate(own):
            if not c.image and c.name not in base_names:
                # a ServerConfig is the whole pod: no image to fall back to (but its base's)
                raise InputError(
                    f"container {c.name!r} has no image",
                    "an image reference" + (f", or the name of a {base} container" if base else ""),
                    self.p(f"seldon.serverConfigs[{i}].containers[{j}].image"),
                )
        missing = [c for c in SELDON_SERVER_POD_CONTAINERS if c not in names]
        if missing:
            # A ServerConfig is the server pod's whole template: without the agent (scheduler
            # connection, capabilities) and rclone (model download) containers of the
            # setup chart's own ServerConfigs no model ever loads.
            raise InputError(
                f"ServerConfig {sc.name!r} has no {' and no '.join(missing)} container: a "
                "ServerConfig is the whole server pod, and Seldon's agent and rclone "
                "containers (their env, ports and volume mounts, as in the "
                "seldon-core-v2-setup chart's mlserver ServerConfig) are not made for you",
                "base: mlserver or triton (Seldon's pod as its chart makes it, with your "
                "containers, capabilities and placement on top), or base the Server on a "
                "built-in ServerConfig (servers[].serverConfig: mlserver or triton), or give "
                "all of agent, rclone and the server container",
                self.p(f"seldon.serverConfigs[{i}].containers"),
            )
        if (sc.gpus or sc.cpu or sc.memory or sc.ephemeral_storage) and sc.container not in names:
            raise InputError(
                f"container {sc.container!r} (which gets the resources) is not among the "
                "containers",
                ", ".join(names),
                self.p(f"seldon.serverConfigs[{i}].container"),
            )

    def _seldon_servers(self) -> None:
        sel = self.spec.seldon
        configs = {c.name: c for c in sel.server_configs}
        for i, srv in enumerate(sel.servers):
            path = self.p(f"seldon.servers[{i}]")
            if (
                srv.server_config not in configs
                and srv.server_config not in SELDON_BUILTIN_SERVER_CONFIGS
            ):
                known = sorted({*configs, *SELDON_BUILTIN_SERVER_CONFIGS})
                raise InputError(
                    f"serverConfig {srv.server_config!r} is not declared and is not built into Seldon",
                    ", ".join(known),
                    f"{path}.serverConfig",
                )
            if (
                srv.pool is None
                and srv.placement is None
                and not (srv.server_config in configs and configs[srv.server_config].pool_names)
            ):
                raise InputError(
                    "required key is missing: the server has no pool, and its serverConfig names "
                    "none",
                    PLACEMENT_HELP,
                    f"{path}.pool",
                )

    def _seldon_models(self) -> None:
        sel = self.spec.seldon
        servers = [s.name for s in sel.servers]
        for i, m in enumerate(sel.models):
            if m.server is not None and m.server not in servers:
                also = " (and has requirements)" if m.requirements else ""
                raise InputError(
                    f"model pins server {m.server!r}{also}, but no server has that name; a "
                    "pinned model fails to load instead of trying another server",
                    (", ".join(servers) or "no servers declared")
                    + (
                        " (or leave server out and match by requirements)" if m.requirements else ""
                    ),
                    self.p(f"seldon.models[{i}].server"),
                )
            for j, r in enumerate(m.requirements or ()):
                if not r:
                    raise InputError(
                        "empty requirement",
                        "a capability name",
                        self.p(f"seldon.models[{i}].requirements[{j}]"),
                    )

    # -- placements: pool references and GPU fit --------------------------------------------

    def check_placements(self) -> None:
        pools = self.spec.pools_by_name
        for path, _kind, w, names in self.spec.workloads():
            own = w.pool is not None
            if getattr(w, "gpu_claim", None) is not None:
                check_claim(w.gpu_claim, f"{path}.gpuClaim")
                refuse_both(w.gpu_count, w.gpu_claim, f"{path}.gpuClaim")
            for j, name in enumerate(names):
                where = f"{path}.pool" + (f"[{j}]" if isinstance(w.pool, list) else "")
                if not own:
                    where = f"{path}.serverConfig"
                pool = pools.get(name)
                if pool is None:
                    raise InputError(
                        f"pool {name!r} does not exist",
                        ", ".join(pools),
                        where,
                    )
                need = max(w.gpu_count, getattr(w, "gpu_limit", None) or 0)
                check_gpu_request(
                    self.spec.pools, w.gpu_count, getattr(w, "gpu_claim", None), pool, where, path
                )
                if w.gpu_count and not pool.is_gpu:
                    raise InputError(
                        f"{w.gpu_count} GPU(s) requested on pool {name!r}, which has no GPUs",
                        "gpus: 0 on a CPU pool, or a GPU pool: "
                        + (
                            ", ".join(p.name for p in self.spec.pools if p.is_gpu)
                            or "none declared"
                        ),
                        f"{path}.gpus",
                    )
                if pool.kind.autopilot and w.gpu_count:
                    accelerator = pool.facts.labels.get(GKE_ACCELERATOR_LABEL)
                    count = pool.facts.labels.get(GKE_ACCELERATOR_COUNT_LABEL)
                    problem = autopilot_gpu_problem(accelerator, count, w.gpu_count)
                    if problem:
                        raise InputError(
                            f"on Autopilot pool {name!r}: {problem[0]} (Autopilot rejects the Pod)",
                            problem[1],
                            f"{path}.gpus",
                        )
                if pool.is_gpu and need > pool.gpus:
                    what = "gpuLimit" if need > w.gpu_count else "gpus"
                    raise InputError(
                        f"{need} GPU(s) asked for but a node of pool {name!r} has {pool.gpus}"
                        + (" (every pool in the list must fit)" if len(names) > 1 else ""),
                        f"{what} at most {pool.gpus}",
                        f"{path}.{what}",
                    )
            if (
                getattr(w, "omit_gpu_toleration", False)
                and not self.spec.cluster.extended_resource_toleration
            ):
                raise InputError(
                    "omitGpuToleration relies on the ExtendedResourceToleration admission plugin, "
                    "which this cluster does not have (cluster.extendedResourceToleration is false)",
                    "omitGpuToleration: false, or cluster.extendedResourceToleration: true",
                    f"{path}.omitGpuToleration",
                )

    # -- Knative -----------------------------------------------------------------------------

    def uses(self, comp: Any) -> list[str]:
        """The pod spec fields a component's placement sets (close to Placement.uses; the
        placement check has the exact answer)."""
        pools = self.spec.pools_by_name
        if comp.placement is not None:
            own = comp.placement
            used = []
            if own.node_selector and comp.scheduling_style == "nodeSelector":
                used.append("nodeSelector")
            if comp.extra_expressions or (
                own.node_selector and comp.scheduling_style == "nodeAffinity"
            ):
                used.append("affinity")
            if own.tolerations:
                used.append("tolerations")
            return used
        listed = [pools[n] for n in comp.pool_names if n in pools]
        used = []
        if (
            comp.scheduling_style == "nodeSelector"
            and len(listed) == 1
            and not comp.extra_expressions
        ):
            used.append("nodeSelector")
        else:
            used.append("affinity")
        tolerations = bool(comp.tolerations) or any(
            [t for t in p.node_taints if t.effect != "PreferNoSchedule"] for p in listed
        )
        if any(p.is_gpu for p in listed) and not (comp.omit_gpu_toleration and comp.gpus):
            tolerations = True
        if tolerations:
            used.append("tolerations")
        return used

    def check_knative(self) -> None:
        kn = self.spec.knative
        features = kn.features or {}
        # Only a flag set to other than "enabled", or no Knative install to enable any, can
        # refuse a pod field: without either, no component's fields need reading.
        fields_can_fail = (kn.mode == "none" and not kn.assume_flags_enabled) or any(
            features.get(flag, "enabled") != "enabled" for flag in KNATIVE_PODSPEC_FLAGS.values()
        )
        for i, isvc in enumerate(self.spec.inference_services):
            if not isvc.is_knative:
                continue
            path = self.p(f"inferenceServices[{i}]")
            for kind, comp in isvc.components():
                if uses_mps(self.spec, comp):
                    self._knative_host_ipc(isvc, kind, path)
                if not fields_can_fail:
                    continue
                for field in self.uses(comp):
                    flag = KNATIVE_PODSPEC_FLAGS[field]
                    value = (kn.features or {}).get(flag)
                    if value is not None and value != "enabled":
                        raise InputError(
                            f"knative.features sets {flag} to {value!r}, but InferenceService "
                            f"{isvc.name!r} ({isvc.deployment_mode}) sets {field} on its {kind}; "
                            "Knative's webhook would refuse it",
                            f"{flag}: enabled (or leave it out), or deploymentMode RawDeployment",
                            self.p(f"knative.features{key_path(flag)}"),
                        )
                    if kn.mode == "none" and not kn.assume_flags_enabled:
                        raise InputError(
                            f"InferenceService {isvc.name!r} is {isvc.deployment_mode} and its "
                            f"{kind} sets {field}, but knative.mode is 'none', so nothing enables "
                            f"{flag}; Knative's webhook would refuse it",
                            "knative.mode operator or patch; or knative.assumeFlagsEnabled: true "
                            "if the cluster's Knative has the flags; or deploymentMode RawDeployment",
                            f"{path}.deploymentMode",
                        )

    def _knative_host_ipc(self, isvc: Any, kind: str, path: str) -> None:
        """A Serverless component on a GKE MPS pool carries hostIPC: the Knative install enables
        `kubernetes.podspec-hostipc` for it, unless the config says otherwise or installs none."""
        kn = self.spec.knative
        value = (kn.features or {}).get(HOST_IPC_FLAG)
        if value is not None and value != "enabled":
            raise InputError(
                f"knative.features sets {HOST_IPC_FLAG} to {value!r}, but InferenceService "
                f"{isvc.name!r} ({isvc.deployment_mode}) runs its {kind} on a GKE MPS pool, "
                "whose pods need hostIPC; Knative's webhook would refuse it",
                f"{HOST_IPC_FLAG}: enabled (or leave it out), or deploymentMode RawDeployment",
                self.p(f"knative.features{key_path(HOST_IPC_FLAG)}"),
            )
        if kn.mode == "none" and not kn.assume_flags_enabled:
            raise InputError(
                f"InferenceService {isvc.name!r} is {isvc.deployment_mode} and its {kind} runs on "
                f"a GKE MPS pool, whose pods need hostIPC, but knative.mode is 'none', so nothing "
                f"enables {HOST_IPC_FLAG}; Knative's webhook would refuse it",
                "knative.mode operator or patch; or knative.assumeFlagsEnabled: true if the "
                "cluster's Knative has the flag; or deploymentMode RawDeployment",
                f"{path}.deploymentMode",
            )

    # -- namespaces and secrets --------------------------------------------------------------

    def check_namespaces(self) -> None:
        creds = self.spec.namespaces.static_credentials or {}
        base = self.p("namespaces")
        for key in creds:
            path = f"{base}.staticCredentials{key_path(key)}"
            prefixes = (self.p("namespaces"), f"{base}.staticCredentials", path)
            if not any(p in self.secret_keys for p in prefixes):
                raise InputError(
                    f"static credential {key!r} is in plain text; it would be stored unencrypted "
                    "in the stack file and the state",
                    "a workload identity (cluster.workloadIdentity, no keys), or the value set "
                    f"with `pulumi config set --secret --path '{base}.staticCredentials.{key}'`",
                    path,
                )

    def check_quotas(self) -> None:
        """A quota is the cluster's provider's, in the cluster's region (when known), once."""
        c = self.spec.cluster
        region = gce_region(c.location or "") if c.provider == "gke" else c.region
        seen: dict[tuple[str, str], int] = {}
        for i, q in enumerate(self.spec.quotas):
            path = f"quotas[{i}]"
            if q.provider != c.provider:
                raise InputError(
                    f"provider {q.provider!r}, but the cluster is {c.provider!r}: its pools count "
                    f"against {c.provider} quotas",
                    repr(c.provider)
                    if c.provider in ("gke", "eks")
                    else f"no quotas (the {c.provider} provider has none here)",
                    self.p(f"{path}.provider"),
                )
            if region and q.region != region:
                raise InputError(
                    f"region {q.region!r}, but the cluster's pools are in {region!r}",
                    repr(region),
                    self.p(f"{path}.region"),
                )
            key = (q.provider, q.region)
            if key in seen:
                raise InputError(
                    f"a second entry for {q.provider} in {q.region} (the first: "
                    f"quotas[{seen[key]}])",
                    "one entry per provider and region, holding every limit",
                    self.p(path),
                )
            seen[key] = i


def _release(version: str) -> tuple[int, ...]:
    """`v1.18.2` -> (1, 18, 2) (the syntax was checked when the config was read)."""
    return tuple(int(x) for x in version.lstrip("v").split("-")[0].split("."))


def uses_mps(spec: Spec, w: Any) -> bool:
    """Whether a workload is wired to a pool whose GPUs GKE shares with MPS (its pods need
    `hostIPC: true`; see `components.check.fit.check_mps_host_ipc`)."""
    return not spec.mps_pools.isdisjoint(getattr(w, "pool_names", ()))


def stack_sources(cluster: Cluster) -> dict[str, Any]:
    """The values of other sections' keys that pools' arguments are fed from (`source`), as the
    config knows them (the platform gives the deployed cluster's name and subnets instead)."""
    return {
        "cluster.name": cluster.name or "cluster",
        "cluster.location": cluster.location,
        "cluster.project": cluster.project,
        "cluster.nodeServiceAccount": cluster.node_service_account,
        "cluster.gkeMetadata": cluster.gke_metadata,
        "cluster.subnetIds": cluster.subnet_ids or ["(the cluster's subnets)"],
        "cluster.extendedResourceToleration": bool(cluster.extended_resource_toleration),
        "cluster.resourceGroup": cluster.resource_group,
    }
