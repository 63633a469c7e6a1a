"""The second pass over a parsed Spec: every rule that needs more than one object (wiring to pools
that exist, names that collide, options that contradict), each refusal naming the key path."""

from __future__ import annotations

from pydantic.alias_generators import to_camel

from ..model import catalog
from ..model.charts import check_local_chart
from ..model.errors import InputError, show
from ..model.scheduling import (
    LABEL_VALUE_RULE,
    label_value_problem,
    validate_dns1035_label,
    validate_dns1123_subdomain,
)
from ..model.sharing import CONFIG_LABEL as DEVICE_PLUGIN_CONFIG_LABEL
from ..model.sharing import config_name
from ..pools.pool import GPU_TAINT
from .config import (
    _INSTANCE_TYPE,
    _MACHINE_TYPE,
    EKS_GPU_AMI_TYPES,
    HOST_LABEL_MAX,
    KNATIVE_PODSPEC_FLAGS,
    PLACEMENT_HELP,
    POOL_KEYS_BY_PROVIDER,
    POOL_NAME_MAX,
    POOL_NOT_ON_EXISTING,
    POOL_REQUIRED_BY_PROVIDER,
    SELDON_BUILTIN_SERVER_CONFIGS,
    Component,
    Pool,
    Spec,
    _key_path,
)

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


class _Checker:
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
        self.check_seldon()
        self.check_placements()
        self.check_knative()
        self.check_namespaces()

    # -- defaults that depend on other sections (their ONE place) --------------------------

    def resolve_cluster(self) -> None:
        c = self.spec.cluster
        if c.create is None:
            c.create = False if c.provider == "gke" else None
        if c.extended_resource_toleration is None:
            # GKE enables the ExtendedResourceToleration admission plugin, EKS has since 1.19;
            # upstream Kubernetes (and so most on-prem clusters) does not.
            c.extended_resource_toleration = c.provider in ("gke", "eks")

    def resolve_addons(self) -> None:
        s, a = self.spec, self.spec.addons
        if a.nvidia_device_plugin.enabled is None:
            # GKE installs the NVIDIA driver and device plugin itself.
            a.nvidia_device_plugin.enabled = s.provider != "gke"
        if a.seldon.enabled is None:
            a.seldon.enabled = bool(s.seldon.servers or s.seldon.models or s.seldon.server_configs)
        if a.cert_manager.enabled is None:
            a.cert_manager.enabled = a.kserve.enabled  # KServe's webhooks need certificates
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
            ("knative.chart", s.knative.mode == "operator", s.knative.chart),
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
            paths = chart.model_dump() if hasattr(chart, "model_dump") else {"": chart}
            for part, value in paths.items():
                key = f"{path}.{to_camel(part)}" if part else path
                try:
                    check_local_chart(str(value))
                except InputError as e:
                    raise e.at(self.p(key)) from None
        versioned = (
            ("karpenter", a.karpenter),
            ("seldon", a.seldon),
            ("nvidiaDevicePlugin", a.nvidia_device_plugin),
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

    def check_karpenter_addon(self) -> None:
        """`addons.karpenter`: EKS only, not beside EKS Auto Mode, on pools it may run on."""
        from .karpenter_addon import check_karpenter_addon

        check_karpenter_addon(self.spec, self.p("addons.karpenter"))

    # -- pools ------------------------------------------------------------------------------

    def check_pools(self) -> None:
        provider = self.spec.provider
        seen: dict[str, int] = {}
        for i, pool in enumerate(self.spec.pools):
            path = self.p(f"pools[{i}]")
            if pool.name in seen:
                raise InputError(
                    f"pool name {pool.name!r} is used twice (pools[{seen[pool.name]}] and here)",
                    "unique pool names",
                    f"{path}.name",
                )
            seen[pool.name] = i
            given = {to_camel(f) for f in pool.model_fields_set}
            for other, keys in POOL_KEYS_BY_PROVIDER.items():
                if other == provider:
                    continue
                for key in keys:
                    if key in given:
                        raise InputError(
                            f"key {key!r} is for {other} pools; this cluster's provider is "
                            f"{provider!r}",
                            f"{provider} pools take {POOL_REQUIRED_BY_PROVIDER[provider]!r}",
                            f"{path}.{key}",
                        )
            if provider == "gke" and self.spec.cluster.autopilot:
                self._autopilot_pool(pool, path, given)
                continue
            required = POOL_REQUIRED_BY_PROVIDER[provider]
            if required not in given and pool.karpenter is None:
                raise InputError(
                    f"required key is missing ({provider} pools need it)",
                    _POOL_REQUIRED_HELP[required],
                    f"{path}.{required}",
                )
            if provider == "existing":
                self._existing_pool(pool, path, given)
            else:
                if pool.max_nodes is None and pool.compute_class is None:
                    raise InputError(
                        "required key is missing",
                        "the most nodes the pool may scale to",
                        f"{path}.maxNodes",
                    )
                if provider == "gke":
                    self._gke_pool(pool, path)
                    self._shared_gpus(pool, path)
                    if pool.compute_class is not None:
                        self._compute_class_pool(pool, path, given)
                elif pool.karpenter is not None:
                    self._karpenter_pool(pool, path, given)
                else:
                    self._eks_pool(pool, path)
                if provider == "eks":
                    self._eks_time_slicing(pool, path)

    def _existing_pool(self, pool: Pool, path: str, given: set[str]) -> None:
        if pool.spot:
            raise InputError(
                "spot: true on existing nodes: spot capacity comes from a cloud node pool",
                "spot only on gke or eks pools",
                f"{path}.spot",
            )
        for key in POOL_NOT_ON_EXISTING:
            if key in given:
                raise InputError(
                    f"key {key!r} does not apply to existing nodes (the pool is the listed nodes)",
                    "name, nodes, accelerator, gpusPerNode, labels, presentLabels, taints, "
                    "selectLabels, gpuSharing",
                    f"{path}.{key}",
                )
        for j, node in enumerate(pool.nodes or ()):
            try:
                validate_dns1123_subdomain(node)
            except InputError as e:
                raise e.at(f"{path}.nodes[{j}]") from None
            if node in (pool.nodes or [])[:j]:
                raise InputError(
                    f"node {node!r} is listed twice", "each node once", f"{path}.nodes[{j}]"
                )
        if pool.accelerator is not None:
            problem = label_value_problem(pool.accelerator)
            if problem:
                raise InputError(problem, LABEL_VALUE_RULE, f"{path}.accelerator")
            if pool.gpus_per_node is None:
                raise InputError(
                    "required key is missing: an existing GPU pool must say how many GPUs each "
                    "node has",
                    "gpusPerNode: 1 or more",
                    f"{path}.gpusPerNode",
                )
        self._existing_time_slicing(pool, path)

    def _existing_time_slicing(self, pool: Pool, path: str) -> None:
        """gpuSharing on existing nodes is the NVIDIA device plugin's time-slicing, which only
        this stack's device plugin install makes real: the node label picks a config from the
        plugin's `config.map`, and the plugin skips a label naming a config it lacks
        (NVIDIA/k8s-device-plugin v0.17.1 README, "Updating Per-Node Configuration With a Node
        Label"). MPS is refused: experimental in v0.17.1, and its control daemon only runs on
        nodes labeled `nvidia.com/mps.capable=true`, which GPU feature discovery sets (off in the
        chart: `gfd.enabled: false`; `templates/daemonset-mps-control-daemon.yml`)."""
        sharing = pool.gpu_sharing
        if sharing is None:
            return
        if not pool.is_gpu:
            raise InputError(
                "gpuSharing on a CPU pool (no accelerator or gpusPerNode)",
                "accelerator and gpusPerNode to time-slice, or leave it out",
                f"{path}.gpuSharing",
            )
        if sharing.strategy != "TIME_SHARING":
            raise InputError(
                f"strategy {sharing.strategy} on existing nodes: gpu-inference shares GPUs there "
                "with the NVIDIA device plugin's time-slicing (its MPS is experimental and needs "
                "GPU feature discovery)",
                "TIME_SHARING",
                f"{path}.gpuSharing.strategy",
            )
        # None is resolved to on for existing clusters (resolve_addons).
        if self.spec.addons.nvidia_device_plugin.enabled is False:
            raise InputError(
                "gpuSharing on existing nodes needs the NVIDIA device plugin this stack installs "
                "(the node label picks a config from its config map; without it the label does "
                "nothing)",
                "addons.nvidiaDevicePlugin.enabled: true (the default), or leave gpuSharing out",
                f"{path}.gpuSharing",
            )
        picked = config_name(sharing.max_clients_per_gpu)
        for key, given in (("labels", pool.labels), ("presentLabels", pool.present_labels)):
            if given.get(DEVICE_PLUGIN_CONFIG_LABEL, picked) != picked:
                raise InputError(
                    f"label {DEVICE_PLUGIN_CONFIG_LABEL}={given[DEVICE_PLUGIN_CONFIG_LABEL]!r} "
                    f"contradicts gpuSharing, which sets it to {picked!r}",
                    "leave the label out (gpuSharing sets it)",
                    f"{path}.{key}.{DEVICE_PLUGIN_CONFIG_LABEL}",
                )

    def _eks_time_slicing(self, pool: Pool, path: str) -> None:
        """gpuSharing on EKS is the NVIDIA device plugin's time-slicing: a GPU pool, TIME_SHARING."""
        if pool.gpu_sharing is None:
            return
        if not pool.is_gpu:
            raise InputError(
                "gpuSharing on a CPU pool (no GPU instance types)",
                "GPU instance types to time-slice, or leave it out",
                f"{path}.gpuSharing",
            )
        if pool.gpu_sharing.strategy != "TIME_SHARING":
            raise InputError(
                f"strategy {pool.gpu_sharing.strategy} on EKS: gpu-inference shares GPUs there "
                "with the NVIDIA device plugin's time-slicing",
                "TIME_SHARING",
                f"{path}.gpuSharing.strategy",
            )
        if pool.karpenter is not None and pool.karpenter.auto_mode:
            raise InputError(
                "gpuSharing on an EKS Auto Mode pool, which runs its own device plugin",
                "leave gpuSharing out on Auto Mode",
                f"{path}.gpuSharing",
            )
        # The config label only picks a config of the device plugin this stack installs, which
        # does not run on Bottlerocket's NVIDIA variants (they bring their own plugin).
        alias = (pool.karpenter.ami_alias or "") if pool.karpenter is not None else ""
        if (pool.ami_type or "").startswith("BOTTLEROCKET") or alias.startswith("bottlerocket@"):
            raise InputError(
                "gpuSharing on Bottlerocket nodes, which run Bottlerocket's own NVIDIA device "
                "plugin: the time-slicing config of the plugin this stack installs does not reach "
                "them",
                "an AL2023 NVIDIA AMI (the default), or leave gpuSharing out",
                f"{path}.gpuSharing",
            )
        # None is resolved to on for eks (resolve_addons).
        if self.spec.addons.nvidia_device_plugin.enabled is False:
            raise InputError(
                "gpuSharing on EKS needs the NVIDIA device plugin this stack installs (the node "
                "label picks a config from its config map; without it the label does nothing)",
                "addons.nvidiaDevicePlugin.enabled: true (the default), or leave gpuSharing out",
                f"{path}.gpuSharing",
            )

    def _shared_gpus(self, pool: Pool, path: str) -> None:
        """gpuSharing / gpuPartitionSize: only on a GPU pool, a MIG profile its GPU offers."""
        for key, value in (
            ("gpuSharing", pool.gpu_sharing),
            ("gpuPartitionSize", pool.gpu_partition_size),
        ):
            if value is not None and not pool.is_gpu:
                raise InputError(
                    f"{key} on a CPU pool (no accelerator)",
                    "an accelerator to share or partition, or leave it out",
                    f"{path}.{key}",
                )
        if pool.gpu_partition_size is not None:
            try:
                catalog.mig_instances(pool.accelerator or "", pool.gpu_partition_size)
            except InputError as e:
                raise e.at(f"{path}.gpuPartitionSize") from None

    def _gke_pool(self, pool: Pool, path: str) -> None:
        try:  # the GKE node pool component names the pool's cloud resources after it
            validate_dns1035_label(pool.name, max_length=POOL_NAME_MAX)
        except InputError as e:
            raise e.at(f"{path}.name") from None
        mt = pool.machine_type or ""
        if not _MACHINE_TYPE.match(mt):
            raise InputError(
                f"{show(mt)} is not a GCE machine type",
                "e.g. 'g2-standard-8', 'n1-standard-4'",
                f"{path}.machineType",
            )
        attached = catalog.gke_gpus_for_machine(mt)
        if not pool.is_gpu:
            if attached:
                raise InputError(
                    f"machine type {mt!r} comes with {attached[1]} {attached[0]} GPU(s) but the "
                    "pool declares no accelerator, so it would not be a tainted GPU pool",
                    f"accelerator: {attached[0]} (a GPU pool), or a machine type without GPUs",
                    f"{path}.machineType",
                )
            return
        if pool.accelerator is None:
            if attached is None:
                raise InputError(
                    f"gpusPerNode is set but no accelerator, and {mt!r} has no GPUs attached",
                    ", ".join(sorted(catalog.GKE_ACCELERATORS)),
                    f"{path}.accelerator",
                )
            pool.accelerator = attached[0]
        try:
            acc = catalog.gke_accelerator(pool.accelerator)
        except InputError as e:
            raise e.at(f"{path}.accelerator") from None
        for j, t in enumerate(pool.taints):
            if t.key == GKE_GPU_TAINT.key and (t.value, t.effect) != (
                GKE_GPU_TAINT.value,
                GKE_GPU_TAINT.effect,
            ):
                raise InputError(
                    f"taint {t.key}={t.value}:{t.effect} uses the key GKE taints its GPU nodes "
                    f"with itself ({GKE_GPU_TAINT}); another value or effect would contradict it",
                    f"{GKE_GPU_TAINT} (or leave it out: it is declared for you), or a taint with "
                    "another key",
                    f"{path}.taints[{j}]."
                    + ("value" if t.value != GKE_GPU_TAINT.value else "effect"),
                )
        counts = acc.counts_for(mt)
        if not counts:
            shapes = sorted(m + "*" if m.endswith("-") else m for m in acc.machines)
            raise InputError(
                f"machine type {mt!r} does not take {acc.name} (machine family and accelerator "
                "do not match)",
                f"{acc.name} runs on " + ", ".join(shapes),
                f"{path}.machineType",
            )
        if pool.gpus_per_node is None:
            pool.gpus_per_node = counts[0]
        elif pool.gpus_per_node not in counts:
            raise InputError(
                f"{mt!r} does not take {pool.gpus_per_node} {acc.name} GPU(s)",
                f"gpusPerNode {' or '.join(str(c) for c in counts)} on {mt}",
                f"{path}.gpusPerNode",
            )

    def _autopilot_pool(self, pool: Pool, path: str, given: set[str]) -> None:
        """A pool on GKE Autopilot: GPU nodes Autopilot provisions for the pods that select the
        accelerator; there is no node pool to shape, label or taint."""
        if self.spec.cluster.create:
            raise InputError(
                "cluster.autopilot with create: true; gpu-inference creates Standard clusters only",
                "create: false and the name of an existing Autopilot cluster",
                self.p("cluster.create"),
            )
        if pool.accelerator is None or pool.gpus_per_node is None:
            missing = "accelerator" if pool.accelerator is None else "gpusPerNode"
            raise InputError(
                "required key is missing: an Autopilot pool is the GPU shape its pods select "
                "(Autopilot runs CPU pods on nodes of its own, wire them to no pool)",
                "accelerator (e.g. nvidia-l4) and gpusPerNode",
                f"{path}.{missing}",
            )
        for key in sorted(given):
            if key not in ("name", "accelerator", "gpusPerNode", "spot"):
                raise InputError(
                    f"key {key!r} does not apply on Autopilot: it has no node pools to shape, "
                    "label or taint",
                    "name, accelerator, gpusPerNode, spot",
                    f"{path}.{key}",
                )
        from .pool_kinds import plan_autopilot

        plan_autopilot(pool, path)

    def _compute_class_pool(self, pool: Pool, path: str, given: set[str]) -> None:
        """A ComputeClass pool: GKE creates its node pools, so node-pool keys do not apply."""
        if not pool.is_gpu:
            raise InputError(
                "a computeClass pool needs an accelerator: gpu-inference makes GPU ComputeClasses",
                "accelerator (and machineType) of the GPU shape",
                f"{path}.accelerator",
            )
        for key in (
            "minNodes",
            "maxNodes",
            "spot",
            "nodeLocations",
            "gpuDriverVersion",
            "diskSizeGb",
            "gpuSharing",
            "gpuPartitionSize",
        ):
            if key in given:
                raise InputError(
                    f"key {key!r} is for GKE node pools; GKE creates a ComputeClass's node pools "
                    "itself (no node limits; spot and reservations are priorities)",
                    "computeClass: {priorities, reservations, driverVersion, "
                    "consolidationDelayMinutes, activeMigration}",
                    f"{path}.{key}",
                )
        from .pool_kinds import plan_compute_class

        plan_compute_class(pool, path)

    def _karpenter_pool(self, pool: Pool, path: str, given: set[str]) -> None:
        """A Karpenter pool: its node-group keys do not apply; its requirements must admit a
        catalog GPU instance type. GPUs per node: the most any admitted type has (Karpenter
        launches the type a pod fits)."""
        if pool.min_nodes:
            raise InputError(
                f"minNodes {pool.min_nodes}: a Karpenter pool has no minimum, it launches nodes "
                "for pending pods and removes empty ones",
                "minNodes 0, or leave it out",
                f"{path}.minNodes",
            )
        for key in ("instanceTypes", "amiType", "capacityType", "spot"):
            if key in given:
                raise InputError(
                    f"key {key!r} is for EKS node groups; a Karpenter pool takes its instance "
                    "types, capacity types and AMI from its karpenter block (and has no minimum)",
                    "karpenter: {gpuNames, instanceFamilies, instanceTypes, minGpus, maxGpus, "
                    "capacityTypes, nodeRole, amiAlias, ...}",
                    f"{path}.{key}",
                )
        from .pool_kinds import plan_karpenter

        plan = plan_karpenter(pool, self.spec.cluster, path)
        if pool.gpus_per_node is not None and pool.gpus_per_node != plan.facts.gpus_per_node:
            raise InputError(
                f"gpusPerNode {pool.gpus_per_node} is not what the requirements give: the "
                f"largest instance type they admit has {plan.facts.gpus_per_node}",
                f"gpusPerNode {plan.facts.gpus_per_node}, or leave it out",
                f"{path}.gpusPerNode",
            )
        # GPUs per node before sharing: `Pool.gpus` multiplies by the clients per GPU.
        shared = pool.gpu_sharing.max_clients_per_gpu if pool.gpu_sharing else 1
        pool.gpus_per_node = plan.facts.gpus_per_node // shared
        if pool.accelerator is None:
            pool.accelerator = plan.facts.gpu_model or "nvidia"

    def _eks_pool(self, pool: Pool, path: str) -> None:
        types = pool.instance_types or []
        for j, t in enumerate(types):
            if not _INSTANCE_TYPE.match(t):
                raise InputError(
                    f"{show(t)} is not an EC2 instance type",
                    "e.g. 'g5.xlarge', 'm6i.large'",
                    f"{path}.instanceTypes[{j}]",
                )
            if t in types[:j]:
                raise InputError(
                    f"instance type {t!r} is listed twice",
                    "each once",
                    f"{path}.instanceTypes[{j}]",
                )
        # GPU instance types make a GPU pool: accelerator and gpusPerNode come from the catalog
        # when they are not given (below), so a g4dn.xlarge pool is tainted like any GPU pool.
        if not pool.is_gpu and not any(catalog.is_gpu_instance(t) for t in types):
            if pool.ami_type in EKS_GPU_AMI_TYPES:
                raise InputError(
                    f"amiType {pool.ami_type!r} is a GPU AMI on a CPU pool",
                    "a standard AMI type, or leave amiType out",
                    f"{path}.amiType",
                )
            return
        insts = []
        for j, t in enumerate(types):
            try:
                insts.append(catalog.aws_instance(t))
            except InputError as e:
                raise InputError(
                    f"{e.problem}: a GPU pool (it sets accelerator / gpusPerNode, or lists a "
                    "GPU instance type) needs GPU instance types only",
                    e.allowed,
                    f"{path}.instanceTypes[{j}]",
                ) from None
        for j, inst in enumerate(insts):
            first = insts[0]
            if inst.accelerator_label != first.accelerator_label or inst.gpus != first.gpus:
                raise InputError(
                    f"{inst.instance_type!r} ({inst.gpus} {inst.gpu_model}) differs from "
                    f"{first.instance_type!r} ({first.gpus} {first.gpu_model}); one pool's nodes "
                    "must have the same GPU model and count (labels, taints and the check rely on "
                    "it)",
                    "instance types with the same GPU model and count; make another pool for others",
                    f"{path}.instanceTypes[{j}]",
                )
            if pool.ami_type and pool.ami_type != "CUSTOM":
                arm = "ARM_64" in pool.ami_type
                if (inst.arch == "arm64") != arm:
                    raise InputError(
                        f"amiType {pool.ami_type!r} does not run on {inst.instance_type!r} ({inst.arch})",
                        ", ".join(
                            a
                            for a in EKS_GPU_AMI_TYPES
                            if ("ARM_64" in a) == (inst.arch == "arm64")
                        ),
                        f"{path}.amiType",
                    )
        label, count = insts[0].accelerator_label, insts[0].gpus
        if pool.accelerator is not None and pool.accelerator != label:
            raise InputError(
                f"accelerator {pool.accelerator!r} is not the GPU of {insts[0].instance_type!r} "
                f"({insts[0].gpu_model}, label {label!r})",
                f"{label!r}, or leave accelerator out (it comes from the instance types)",
                f"{path}.accelerator",
            )
        if pool.gpus_per_node is not None and pool.gpus_per_node != count:
            raise InputError(
                f"{insts[0].instance_type!r} has {count} GPU(s), not {pool.gpus_per_node}",
                f"gpusPerNode {count}, or leave it out",
                f"{path}.gpusPerNode",
            )
        if pool.ami_type is not None and pool.ami_type not in (*EKS_GPU_AMI_TYPES, "CUSTOM"):
            raise InputError(
                f"amiType {pool.ami_type!r} has no NVIDIA driver; the GPUs would not show up",
                ", ".join(EKS_GPU_AMI_TYPES),
                f"{path}.amiType",
            )
        pool.accelerator, pool.gpus_per_node = label, count

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
            if isvc.deployment_mode in ("RawDeployment", "Standard"):
                for kind, comp in isvc.components():
                    if comp.min_replicas == 0:
                        raise InputError(
                            f"minReplicas 0 with deploymentMode {isvc.deployment_mode}: a raw "
                            "Deployment does not scale to zero (kserve/kserve#3514)",
                            "minReplicas >= 1, or deploymentMode Serverless to scale to zero",
                            f"{path}.{kind}.minReplicas",
                        )

    # -- Seldon ------------------------------------------------------------------------------

    def check_seldon(self) -> None:
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
        configs = {c.name: c for c in sel.server_configs}
        for i, sc in enumerate(sel.server_configs):
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
                    f"replacesBuiltin: true, but {sc.name!r} is not one of Seldon's own "
                    "ServerConfigs",
                    "replacesBuiltin only on a ServerConfig named "
                    + " or ".join(SELDON_BUILTIN_SERVER_CONFIGS),
                    self.p(f"seldon.serverConfigs[{i}].replacesBuiltin"),
                )
            names = [c.name for c in sc.containers]
            for j, c in enumerate(sc.containers):
                if not c.image:  # a ServerConfig is the whole pod: no image to fall back to
                    raise InputError(
                        f"container {c.name!r} has no image",
                        "an image reference",
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
                    "base the Server on a built-in ServerConfig instead (servers[].serverConfig: "
                    "mlserver or triton, with the pool, capabilities and resources on the "
                    "Server), or give all of agent, rclone and the server container",
                    self.p(f"seldon.serverConfigs[{i}].containers"),
                )
            if (
                sc.gpus or sc.cpu or sc.memory or sc.ephemeral_storage
            ) and sc.container not in names:
                raise InputError(
                    f"container {sc.container!r} (which gets the resources) is not among the "
                    "containers",
                    ", ".join(names),
                    self.p(f"seldon.serverConfigs[{i}].container"),
                )
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
                need = max(w.gpus, getattr(w, "gpu_limit", None) or 0)
                if w.gpus and not pool.is_gpu:
                    raise InputError(
                        f"{w.gpus} GPU(s) requested on pool {name!r}, which has no GPUs",
                        "gpus: 0 on a CPU pool, or a GPU pool: "
                        + (
                            ", ".join(p.name for p in self.spec.pools if p.is_gpu)
                            or "none declared"
                        ),
                        f"{path}.gpus",
                    )
                if pool.is_gpu and need > pool.gpus:
                    what = "gpuLimit" if need > w.gpus else "gpus"
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

    def uses(self, comp: Component) -> list[str]:
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
            [t for t in p.taints if t.effect != "PreferNoSchedule"] for p in listed
        )
        if any(p.is_gpu for p in listed) and not (comp.omit_gpu_toleration and comp.gpus):
            tolerations = True
        if tolerations:
            used.append("tolerations")
        return used

    def check_knative(self) -> None:
        kn = self.spec.knative
        for i, isvc in enumerate(self.spec.inference_services):
            if not isvc.is_knative:
                continue
            path = self.p(f"inferenceServices[{i}]")
            for kind, comp in isvc.components():
                for field in self.uses(comp):
                    flag = KNATIVE_PODSPEC_FLAGS[field]
                    value = kn.features.get(flag)
                    if value is not None and value != "enabled":
                        raise InputError(
                            f"knative.features sets {flag} to {value!r}, but InferenceService "
                            f"{isvc.name!r} ({isvc.deployment_mode}) sets {field} on its {kind}; "
                            "Knative's webhook would refuse it",
                            f"{flag}: enabled (or leave it out), or deploymentMode RawDeployment",
                            self.p(f"knative.features{_key_path(flag)}"),
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

    # -- namespaces and secrets --------------------------------------------------------------

    def check_namespaces(self) -> None:
        creds = self.spec.namespaces.static_credentials or {}
        base = self.p("namespaces")
        for key in creds:
            path = f"{base}.staticCredentials{_key_path(key)}"
            prefixes = (self.p("namespaces"), f"{base}.staticCredentials", path)
            if not any(p in self.secret_keys for p in prefixes):
                raise InputError(
                    f"static credential {key!r} is in plain text; it would be stored unencrypted "
                    "in the stack file and the state",
                    "a workload identity (cluster.workloadIdentity, no keys), or the value set "
                    f"with `pulumi config set --secret --path '{base}.staticCredentials.{key}'`",
                    path,
                )


_POOL_REQUIRED_HELP = {
    "machineType": "a GCE machine type, e.g. 'g2-standard-8'",
    "instanceTypes": "a list of EC2 instance types, e.g. ['g5.xlarge']",
    "nodes": "a list of node names",
}
