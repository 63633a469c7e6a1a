"""`NvidiaDevicePlugin`: the upstream NVIDIA device plugin, tolerating every taint of the GPU pools.

Needed on EKS and on-prem (GKE installs and manages its own). A DaemonSet that does not tolerate a
GPU pool's taint sits at desired=0 there and the node exposes no GPUs (seed 001). The chart's
defaults tolerate only `nvidia.com/gpu` and `CriticalAddonsOnly`, and its node-feature-discovery
worker only `nvidia.com/gpu=present` with `Equal` (NVIDIA/k8s-device-plugin #1934), so both get an
`Exists` toleration for every taint key of the pools it serves. The chart's default affinity needs
NFD / GFD labels that a plain GPU node does not have; when the pools are known the plugin is pinned
to them by their pool label instead; with no such pool it is kept off the DRA pools (their GPUs
are NVIDIA's DRA driver's: a DRA driver and a device plugin must never manage the same GPUs).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.provider import make_namespaces
from ..model.deploy import versions
from ..model.deploy.ownership import NamespacePlan, install_ownership, namespace_plans
from ..model.inputs import stack
from ..model.nodes.sharing import plugin_config
from ..model.scheduling import Taint, tolerating
from .helm import chart_release, check_local_charts

AUTO_MODE_COMPUTE_TYPE_LABEL = "eks.amazonaws.com/compute-type"
CHART_DEFAULT_TOLERATIONS = (
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
)


@dataclass
class NvidiaDevicePluginArgs:
    """Inputs of `NvidiaDevicePlugin`."""

    version: Optional[str] = field(default=None, metadata=stack(syntax="version"))
    """Chart version; default: the pinned one."""
    pool_taints: Optional[Sequence[Taint]] = field(default=None, metadata=stack(hidden=True))
    """Taints of the GPU pools it serves: each key gets an `Exists` toleration."""
    pool_label: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """A node label key that marks the GPU pools (e.g. `gpu-inference.dev/pool`)."""
    pool_label_values: Optional[Sequence[str]] = field(default=None, metadata=stack(hidden=True))
    """The values of `pool_label` on GPU pools: the plugin runs only there."""
    dra_pool_label_values: Optional[Sequence[str]] = field(
        default=None, metadata=stack(hidden=True)
    )
    """The values of `pool_label` on DRA pools, which the plugin must never run on (their GPUs
    are NVIDIA's DRA driver's): kept off them when no `pool_label_values` pin the plugin."""
    avoid_auto_mode: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """EKS: keep off EKS Auto Mode nodes (`eks.amazonaws.com/compute-type: auto`), which run
    Auto Mode's own NVIDIA device plugin (awsdocs/amazon-eks-user-guide
    latest/ug/automode/auto-accelerated.adoc), when no pool label pins the plugin."""
    time_slicing_replicas: Optional[Sequence[int]] = field(
        default=None, metadata=stack(hidden=True)
    )
    """Replica counts of time-sliced pools: one named config each (`time-sliced-<n>`, picked by
    the node label `nvidia.com/device-plugin.config`), beside a `default` without sharing."""
    namespace: Optional[str] = field(
        default="nvidia-device-plugin", metadata=stack(syntax="dns1123")
    )
    """Namespace of the release."""
    chart: Optional[str] = None
    """A local chart directory or `.tgz` installed instead of the repository's (air-gapped)."""
    adopt: Optional[bool] = False
    """Take over what this install makes that already exists and is not this stack's (a Helm
    release of the same name that plain Helm, another tool or stack installed, a namespace, an
    object): this stack then keeps it up to date, and `destroy` leaves it in place. Off (the
    default), such a thing is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespaces `namespaces()` lists (a platform makes each namespace of a
    stack once, so that no config change moves one to another resource)."""


def namespaces(name: str, args: NvidiaDevicePluginArgs) -> dict[str, NamespacePlan]:
    """The namespace of the release."""
    return namespace_plans(
        [(args.namespace or "nvidia-device-plugin", NamespacePlan(f"{name}-namespace"))]
    )


def device_plugin_values(args: NvidiaDevicePluginArgs) -> dict[str, Any]:
    tolerations = tolerating(CHART_DEFAULT_TOLERATIONS, args.pool_taints or ())
    values: dict[str, Any] = {
        "tolerations": tolerations,
        # The NFD worker (when GFD/NFD is turned on) must reach the same nodes.
        "nfd": {"worker": {"tolerations": tolerations}},
    }
    if args.time_slicing_replicas:
        values["config"] = plugin_config(args.time_slicing_replicas)
    expressions: list[dict[str, Any]] = []
    if args.pool_label and args.pool_label_values:
        expressions.append(
            {"key": args.pool_label, "operator": "In", "values": sorted(args.pool_label_values)}
        )
    else:
        if args.pool_label and args.dra_pool_label_values:
            expressions.append(
                {
                    "key": args.pool_label,
                    "operator": "NotIn",
                    "values": sorted(args.dra_pool_label_values),
                }
            )
        if args.avoid_auto_mode:
            expressions.append(
                {"key": AUTO_MODE_COMPUTE_TYPE_LABEL, "operator": "NotIn", "values": ["auto"]}
            )
    if expressions:
        values["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": expressions}]
                }
            }
        }
    return values


class NvidiaDevicePlugin(pulumi.ComponentResource):
    """The NVIDIA device plugin DaemonSet (Helm); `ready` is the release."""

    def __init__(
        self, name: str, args: NvidiaDevicePluginArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        check_local_charts(f"NvidiaDevicePlugin({name!r})", {"chart": args.chart})
        super().__init__("gpu-inference:index:NvidiaDevicePlugin", name, None, opts)
        self.tolerations = tolerating(CHART_DEFAULT_TOLERATIONS, args.pool_taints or ())
        namespace = args.namespace or "nvidia-device-plugin"
        ownership = install_ownership(f"NvidiaDevicePlugin({name!r})", args.adopt)
        self.ready = chart_release(
            f"{name}-release",
            versions.NVIDIA_DEVICE_PLUGIN,
            release="nvidia-device-plugin",
            namespace=namespace,
            values=device_plugin_values(args),
            version=args.version,
            local_chart=args.chart,
            create_namespace=False,
            depends_on=make_namespaces(
                namespaces(name, args), self, args.namespaces_made, ownership
            ).get(namespace, []),
            parent=self,
            ownership=ownership,
        )
        self.register_outputs({})
