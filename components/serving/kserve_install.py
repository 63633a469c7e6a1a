"""`KServeInstall`: KServe's CRDs chart, then its controller chart, with a default deployment mode,
then (v0.17 on) the chart of its ClusterServingRuntimes: without them every `modelFormat`
predictor ends in `NoSupportingRuntime`."""

from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.provider import make_namespaces
from ..model.deploy import versions
from ..model.deploy.ownership import NamespacePlan, install_ownership, namespace_plans
from ..model.errors import InputError
from ..model.inputs import stack
from .helm import chart_release, check_local_charts
from .inference_service import DEPLOYMENT_MODES


@dataclass
class KServeInstallArgs:
    """Inputs of `KServeInstall`."""

    version: Optional[str] = field(default=None, metadata=stack(syntax="version"))
    """KServe version for both charts; default: the pinned one."""
    default_deployment_mode: Optional[str] = field(
        default="Serverless", metadata=stack(choices=DEPLOYMENT_MODES)
    )
    """Mode of InferenceServices without the deploymentMode annotation (either spelling)."""
    namespace: Optional[str] = field(default="kserve", metadata=stack(syntax="dns1123"))
    """Namespace of the controller."""
    ingress: Optional[str] = field(default="kourier", metadata=stack(source="knative.ingress"))
    """Knative's ingress, `kourier` or `istio`: without Istio, KServe must not make Istio
    VirtualServices (`kserve.controller.gateway.disableIstioVirtualHost: true`), else
    `status.url` and the cluster-local address do not route."""
    crd_chart: Optional[str] = field(default=None, metadata=stack("chart.crd"))
    """A local kserve-crd chart directory or `.tgz` instead of the registry's (air-gapped)."""
    controller_chart: Optional[str] = field(default=None, metadata=stack("chart.controller"))
    """A local controller chart (kserve-resources) directory or `.tgz` instead of the registry's."""
    runtime_chart: Optional[str] = field(default=None, metadata=stack("chart.runtimes"))
    """A local kserve-runtime-configs chart directory or `.tgz` (v0.17 on) instead of the
    registry's."""
    adopt: Optional[bool] = False
    """Take over what this install makes that already exists and is not this stack's (a Helm
    release of the same name that plain Helm, another tool or stack installed, a namespace, an
    object): this stack then keeps it up to date, and `destroy` leaves it in place. Off (the
    default), such a thing is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespaces `namespaces()` lists (a platform makes each namespace of a
    stack once, so that no config change moves one to another resource)."""


INGRESSES = ("kourier", "istio")

# The runtime chart renders its ClusterServingRuntimes only with this on (v0.17 to v0.20.0).
RUNTIME_VALUES = {"kserve": {"servingruntime": {"enabled": True}}}


def namespaces(name: str, args: KServeInstallArgs) -> dict[str, NamespacePlan]:
    """The controller's namespace."""
    return namespace_plans([(args.namespace or "kserve", NamespacePlan(f"{name}-namespace"))])


def kserve_values(args: KServeInstallArgs) -> dict[str, Any]:
    """Controller chart values: the default deployment mode, spelled for the pinned version, and
    no Istio VirtualServices unless the ingress is Istio."""
    version = args.version or versions.KSERVE_VERSION
    mode = versions.kserve_deployment_mode(args.default_deployment_mode or "Serverless", version)
    ingress = args.ingress or "kourier"
    if ingress not in INGRESSES:
        raise InputError(
            f"ingress {ingress!r} is not known", " or ".join(INGRESSES), "args.ingress"
        )
    controller: dict[str, Any] = {"deploymentMode": mode}
    if ingress != "istio":
        # Key checked in kserve/kserve charts/kserve-resources/values.yaml (v0.13.0 to v0.20.0).
        controller["gateway"] = {"disableIstioVirtualHost": True}
    return {"kserve": {"controller": controller}}


class KServeInstall(pulumi.ComponentResource):
    """KServe; `ready` is the runtimes release (v0.17 on; else the controller's), after the
    controller, after the CRDs."""

    def __init__(
        self, name: str, args: KServeInstallArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            values = kserve_values(args)
        except InputError as e:
            raise e.at(f"KServeInstall({name!r})") from None
        check_local_charts(
            f"KServeInstall({name!r})",
            {
                "crd_chart": args.crd_chart,
                "controller_chart": args.controller_chart,
                "runtime_chart": args.runtime_chart,
            },
        )
        super().__init__("gpu-inference:index:KServeInstall", name, None, opts)
        namespace = args.namespace or "kserve"
        ownership = install_ownership(f"KServeInstall({name!r})", args.adopt)
        crds = chart_release(
            f"{name}-crd",
            versions.KSERVE_CRD,
            release="kserve-crd",
            namespace=namespace,
            version=args.version,
            local_chart=args.crd_chart,
            create_namespace=False,
            depends_on=make_namespaces(
                namespaces(name, args), self, args.namespaces_made, ownership
            ).get(namespace, []),
            parent=self,
            ownership=ownership,
        )
        controller = chart_release(
            f"{name}-controller",
            versions.kserve_controller_chart(args.version or versions.KSERVE_VERSION),
            release="kserve",
            namespace=namespace,
            values=values,
            version=args.version,
            local_chart=args.controller_chart,
            create_namespace=False,
            depends_on=[crds],
            parent=self,
            ownership=ownership,
        )
        self.ready = controller
        runtimes = versions.kserve_runtime_chart(args.version or versions.KSERVE_VERSION)
        if runtimes is not None:
            # Last, after the controller; `ready` waits for it, so no InferenceService is made
            # before its runtime exists.
            self.ready = chart_release(
                f"{name}-runtimes",
                runtimes,
                release="kserve-runtime-configs",
                namespace=namespace,
                values=RUNTIME_VALUES,
                version=args.version,
                local_chart=args.runtime_chart,
                create_namespace=False,
                depends_on=[controller],
                parent=self,
                ownership=ownership,
            )
        self.register_outputs({})
