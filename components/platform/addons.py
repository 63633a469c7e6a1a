"""The add-ons a stack installs (`addons.<key>`), one entry each: its config section, its component
and Args, the namespaces it makes, what else its Args take from the stack, and what it waits for.
A new add-on is one entry here and its config section (`config.Addons`).

Karpenter (`addons.karpenter`) is installed before the pools it is pinned to, not from the list:
its Args and the rules that need the rest of the stack (provider, pools) are here too, shared by
the config checks (refusals before anything is registered) and the platform (which builds the
install), so both read the add-on the same way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from ..model.deploy.ownership import NamespacePlan
from ..model.errors import InputError
from ..model.scheduling import POOL_LABEL
from ..serving.cert_manager import CertManagerArgs
from ..serving.cert_manager import namespaces as cert_manager_namespaces
from ..serving.karpenter_install import KarpenterInstallArgs, validate_karpenter_install_args
from ..serving.kserve_install import KServeInstallArgs
from ..serving.kserve_install import namespaces as kserve_namespaces
from ..serving.llm_install import LLMServingInstallArgs
from ..serving.llm_install import namespaces as llm_namespaces
from ..serving.nvidia_device_plugin import NvidiaDevicePluginArgs
from ..serving.nvidia_device_plugin import namespaces as device_plugin_namespaces
from ..serving.nvidia_dra_driver import (
    GKE_DRIVER_ROOT,
    GkeGpuDriverInstallerArgs,
    NvidiaDraDriverArgs,
)
from ..serving.nvidia_dra_driver import namespaces as dra_driver_namespaces
from ..serving.seldon_install import SeldonCoreInstallArgs
from ..serving.seldon_install import namespaces as seldon_namespaces
from . import config as cfg
from .config import Spec
from .derive import args_from, relocate, value_of
from .pool_kinds import PoolConfig

if TYPE_CHECKING:
    from .platform import InferencePlatform


def _made(_: InferencePlatform) -> dict[str, Any]:
    return {"namespaces_made": True}


def _nothing(_: InferencePlatform, __: Mapping[str, Any]) -> list[pulumi.Resource]:
    return []


def _ready(out: Mapping[str, Any], *keys: str) -> list[pulumi.Resource]:
    return [out[k].ready for k in keys if k in out]


def _kserve_after(p: InferencePlatform, out: Mapping[str, Any]) -> list[pulumi.Resource]:
    return _ready(out, "certManager") + ([p.knative.ready] if p.knative is not None else [])


def _llm_inputs(_: InferencePlatform) -> dict[str, Any]:
    # The stack's one cert-manager is `addons.certManager`, never a second.
    return {"cert_manager": False, "namespaces_made": True}


def _driver_installer_inputs(p: InferencePlatform) -> dict[str, Any]:
    # Only on the DRA pools (GKE installs the driver on the others).
    return {
        "pool_label": POOL_LABEL,
        "pool_label_values": [p.pools[n].facts.name for n in p.dra_pools()] or None,
    }


def _dra_driver_inputs(p: InferencePlatform) -> dict[str, Any]:
    dra_pools = p.dra_pools()
    return {
        "pool_taints": sorted({t for n in dra_pools for t in p.pools[n].taints}) or None,
        # Only on the DRA pools: a DRA driver must never publish GPUs a device plugin hands out
        # too (nodeadm labels every EKS NVIDIA node nvidia.com/gpu.present).
        "pool_label": POOL_LABEL,
        "pool_label_values": [p.pools[n].facts.name for n in dra_pools] or None,
        "driver_root": GKE_DRIVER_ROOT if p.spec.provider == "gke" else None,
        "namespaces_made": True,
    }


def _device_plugin_inputs(p: InferencePlatform) -> dict[str, Any]:
    plugin_pools = p.plugin_pools()
    return {
        "pool_taints": sorted({t for pool in plugin_pools for t in pool.taints}) or None,
        # Time-sliced EKS, AKS and existing pools: one config per replica count.
        "time_slicing_replicas": sorted(
            {
                pool.sharing_clients
                for pool in p.spec.pools
                if pool.sharing_clients and p.spec.provider in ("eks", "aks", "existing")
            }
        )
        or None,
        # Run on the GPU pools, found by their own label (the chart's default affinity wants
        # node-feature-discovery labels a plain GPU node lacks).
        "pool_label": POOL_LABEL,
        "pool_label_values": sorted(pool.facts.name for pool in plugin_pools) or None,
        "dra_pool_label_values": sorted(p.pools[n].facts.name for n in p.dra_pools()) or None,
        "avoid_auto_mode": p.spec.provider == "eks",
        "namespaces_made": True,
    }


@dataclass(frozen=True)
class AddOn:
    """One `addons.<key>` the platform installs: its config section, its component and Args,
    the namespaces it makes, what else its Args take from the stack, and what it waits for."""

    key: str
    """Its key in the platform's `addons` output."""
    path: str
    """Its config section, named in errors about its inputs."""
    section: Callable[[cfg.Addons], Any]
    args: type
    component: str
    """The component class, `..module.Class` relative to this package (the wheel ships it as
    `gpu_inference`), imported when the add-on is on."""
    suffix: str
    """Its child's name: `<platform>-<suffix>`."""
    namespaces: Optional[Callable[[str, Any], Mapping[str, NamespacePlan]]] = None
    inputs: Callable[[InferencePlatform], dict[str, Any]] = _made
    after: Callable[[InferencePlatform, Mapping[str, Any]], list[pulumi.Resource]] = _nothing


ADDONS: tuple[AddOn, ...] = (
    AddOn(
        "certManager",
        "addons.certManager",
        lambda a: a.cert_manager,
        CertManagerArgs,
        "..serving.cert_manager.CertManager",
        "cert-manager",
        cert_manager_namespaces,
    ),
    AddOn(
        "kserve",
        "addons.kserve",
        lambda a: a.kserve,
        KServeInstallArgs,
        "..serving.kserve_install.KServeInstall",
        "kserve",
        kserve_namespaces,
        after=_kserve_after,
    ),
    # After KServe, whose namespace and shared resources it uses.
    AddOn(
        "kserveLlm",
        "addons.kserve.llm",
        lambda a: a.kserve.llm,
        LLMServingInstallArgs,
        "..serving.llm_install.LLMServingInstall",
        "kserve-llm",
        llm_namespaces,
        inputs=_llm_inputs,
        after=lambda _, out: _ready(out, "certManager", "kserve"),
    ),
    AddOn(
        "seldon",
        "addons.seldon",
        lambda a: a.seldon,
        SeldonCoreInstallArgs,
        "..serving.seldon_install.SeldonCoreInstall",
        "seldon",
        seldon_namespaces,
    ),
    AddOn(
        "gpuDriverInstaller",
        "addons.gpuDriverInstaller",
        lambda a: a.gpu_driver_installer,
        GkeGpuDriverInstallerArgs,
        "..serving.nvidia_dra_driver.GkeGpuDriverInstaller",
        "gpu-driver-installer",
        inputs=_driver_installer_inputs,
    ),
    # After the GPU driver, which its kubelet plugin reads GPUs through.
    AddOn(
        "draDriver",
        "addons.draDriver",
        lambda a: a.dra_driver,
        NvidiaDraDriverArgs,
        "..serving.nvidia_dra_driver.NvidiaDraDriver",
        "dra-driver",
        dra_driver_namespaces,
        inputs=_dra_driver_inputs,
        after=lambda _, out: _ready(out, "gpuDriverInstaller"),
    ),
    AddOn(
        "nvidiaDevicePlugin",
        "addons.nvidiaDevicePlugin",
        lambda a: a.nvidia_device_plugin,
        NvidiaDevicePluginArgs,
        "..serving.nvidia_device_plugin.NvidiaDevicePlugin",
        "nvidia-device-plugin",
        device_plugin_namespaces,
        inputs=_device_plugin_inputs,
    ),
)


# -- Karpenter ---------------------------------------------------------------------------------


def node_overlay_needed(spec: Spec) -> bool:
    """A Karpenter pool with time-sliced GPUs emits NodeOverlays, which Karpenter reads only with
    its (alpha) NodeOverlay feature gate on."""
    return any(p.kind.name == "karpenter" and p.sharing_clients for p in spec.pools)


def karpenter_install_args(spec: Spec) -> KarpenterInstallArgs:
    """The component arguments `addons.karpenter` stands for."""
    return args_from(
        spec.addons.karpenter,
        KarpenterInstallArgs,
        sources={"cluster.name": spec.cluster.name},
        node_overlay=node_overlay_needed(spec),
    )


# The chart's only toleration (charts/karpenter/values.yaml v1.15.0: `tolerations:
# [{key: CriticalAddonsOnly, operator: Exists}]`, any value and effect).
CONTROLLER_TOLERATED = "CriticalAddonsOnly"


def _hard_taints(pool: PoolConfig) -> list[str]:
    """The pool's taints that keep the controller off (NoSchedule / NoExecute, not the one key it
    tolerates), as `key:effect`."""
    return [
        f"{t.key}:{t.effect}"
        for t in pool.node_taints
        if t.effect in ("NoSchedule", "NoExecute") and t.key != CONTROLLER_TOLERATED
    ]


def check_karpenter_addon(spec: Spec, base: str) -> None:
    """Refuse an `addons.karpenter` (at `base`, e.g. `gpu-inference:addons.karpenter`) that could not
    work on this stack, naming the key."""
    k = spec.addons.karpenter
    if not k.enabled:
        given = sorted(k.model_fields_set - {"enabled"})
        if given:
            key = type(k).model_fields[given[0]].alias or given[0]
            raise InputError(
                f"{key} is set but the add-on is not enabled",
                "leave it out, or enabled: true",
                f"{base}.{key}",
            )
        return
    if spec.provider != "eks":
        raise InputError(
            f"the Karpenter controller (Karpenter's AWS provider) launches EC2 instances for EKS; "
            f"this cluster's provider is {spec.provider!r}",
            "enabled: true only with cluster.provider eks",
            f"{base}.enabled",
        )
    auto = [i for i, p in enumerate(spec.pools) if value_of(p, "auto_mode")]
    if auto:
        raise InputError(
            f"pools[{auto[0]}].karpenter.autoMode says the cluster runs EKS Auto Mode, whose "
            "managed Karpenter provisions the nodes; this chart would install a second controller "
            "and replace the nodepools / nodeclaims CRDs Auto Mode shares",
            "leave the add-on out on Auto Mode",
            f"{base}.enabled",
        )
    fit = [
        p.name
        for p in spec.pools
        if p.kind.name == "eks" and p.facts.min_nodes and not _hard_taints(p)
    ]
    for i, name in enumerate(k.system_pools or ()):
        _check_system_pool(spec, base, i, name, fit)
    try:
        validate_karpenter_install_args(karpenter_install_args(spec))
    except InputError as e:
        raise relocate(e, base, KarpenterInstallArgs, namespace=base.split(":", 1)[0]) from None
    if not k.system_pools and not k.node_groups and not fit:
        raise InputError(
            "the Karpenter controller needs a node to run on before Karpenter can launch any, and "
            "none is known: no node-group pool of this stack keeps an untainted node up "
            "(minNodes >= 1) and nodeGroups names none of the cluster's own node groups",
            "nodeGroups: the EKS managed node groups the cluster already runs "
            "(eks.amazonaws.com/nodegroup), or a node-group pool with minNodes >= 1 (systemPools)",
            f"{base}.nodeGroups",
        )


def _check_system_pool(spec: Spec, base: str, i: int, name: str, fit: list[str]) -> None:
    """`systemPools[i]`: a node-group pool of this stack that keeps an untainted node up, where
    the controller runs before Karpenter can launch anything."""
    k = spec.addons.karpenter
    path = f"{base}.systemPools[{i}]"
    pool = {p.name: p for p in spec.pools}.get(name)
    allowed = ", ".join(fit) or "none: no untainted node-group pool with minNodes >= 1 here"
    if pool is None:
        raise InputError(f"pool {name!r} does not exist", allowed, path)
    if pool.kind.name == "karpenter":
        raise InputError(
            f"pool {name!r} is a Karpenter pool: the controller must not run on nodes it "
            "manages (it could remove its own node)",
            allowed,
            path,
        )
    if pool.kind.name != "eks":
        raise InputError(f"pool {name!r} is existing nodes, not an EKS node group", allowed, path)
    hard = _hard_taints(pool)
    if hard:
        raise InputError(
            f"pool {name!r} is tainted {', '.join(hard)}, which the controller does not "
            "tolerate (the chart's tolerations: CriticalAddonsOnly only)",
            allowed,
            path,
        )
    if pool.facts.min_nodes == 0:
        raise InputError(
            f"pool {name!r} can be at 0 nodes (minNodes 0): the controller's pods would wait "
            "for a node, and Karpenter launches none for itself",
            f"a pool with minNodes >= 1 (set pools[{spec.pools.index(pool)}].minNodes), or "
            "leave systemPools out (the chart keeps the controller off Karpenter's nodes)",
            path,
        )
    if name in (k.system_pools or [])[:i]:
        raise InputError(f"pool {name!r} is listed twice", "each pool once", path)
