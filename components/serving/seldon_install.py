"""`SeldonCoreInstall`: Seldon Core 2's CRDs, setup (controller) and runtime charts.

Pinned to 2.6.0, the last Apache-2.0 release: from 2.7.0 on Seldon Core 2 is under the Business
Source License 1.1 and production use needs a licence from Seldon.
"""

from dataclasses import dataclass, field
from typing import Optional

import pulumi

from ..kube.provider import make_namespaces
from ..model.deploy import versions
from ..model.deploy.ownership import NamespacePlan, install_ownership, namespace_plans
from ..model.errors import InputError
from ..model.inputs import stack
from .helm import chart_release, check_local_charts
from .model_namespace import POD_SECURITY_LEVELS, namespace_labels


@dataclass
class SeldonCoreInstallArgs:
    """Inputs of `SeldonCoreInstall`."""

    version: Optional[str] = field(default=None, metadata=stack(syntax="version"))
    """Version of the three charts; default: 2.6.0, the last Apache-2.0 release (later ones are
    under the Business Source License)."""
    namespace: Optional[str] = field(
        default="seldon-mesh", metadata=stack(source="seldon.namespace")
    )
    """Namespace of the controller and the runtime: Servers, Models and ServerConfigs live there."""
    system_namespace: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Namespace of the operator (setup chart); only `namespace` is allowed: Seldon Core 2.6.0's
    controller reads ServerConfigs from its own namespace only."""
    pod_security: Optional[str] = field(
        default="baseline", metadata=stack(choices=POD_SECURITY_LEVELS)
    )
    """Pod Security Admission level enforced on the runtime namespace."""
    crds_chart: Optional[str] = field(default=None, metadata=stack("chart.crds"))
    """A local seldon-core-v2-crds chart directory or `.tgz` instead of the repository's."""
    setup_chart: Optional[str] = field(default=None, metadata=stack("chart.setup"))
    """A local seldon-core-v2-setup chart directory or `.tgz` instead of the repository's."""
    runtime_chart: Optional[str] = field(default=None, metadata=stack("chart.runtime"))
    """A local seldon-core-v2-runtime chart directory or `.tgz` instead of the repository's."""
    adopt: Optional[bool] = False
    """Take over what this install makes that already exists and is not this stack's (a Helm
    release of the same name that plain Helm, another tool or stack installed, a namespace, an
    object): this stack then keeps it up to date, and `destroy` leaves it in place. Off (the
    default), such a thing is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespaces `namespaces()` lists (a platform makes each namespace of a
    stack once, so that no config change moves one to another resource)."""


def check_one_namespace(args: SeldonCoreInstallArgs) -> str:
    """The one namespace of controller, runtime and ServerConfigs. Seldon Core 2.6.0's controller
    looks a Server's ServerConfig up in its own namespace only (`GetServerConfigForServer` in
    operator/apis/mlops/v1alpha1/serverconfig_types.go: `constants.SeldonNamespace`, the
    controller pod's POD_NAMESPACE), and the setup chart puts the built-in ServerConfigs there."""
    runtime_ns = args.namespace or "seldon-mesh"
    if args.system_namespace is not None and args.system_namespace != runtime_ns:
        raise InputError(
            f"system_namespace {args.system_namespace!r} differs from namespace {runtime_ns!r}: "
            "Seldon's controller reads ServerConfigs only from its own namespace, so Servers "
            "there would never reconcile",
            f"leave system_namespace unset, or set it to {runtime_ns!r}",
            "args.system_namespace",
        )
    return runtime_ns


def namespaces(name: str, args: SeldonCoreInstallArgs) -> dict[str, NamespacePlan]:
    """The runtime namespace, with its Pod Security Admission level."""
    level = args.pod_security or "baseline"
    return namespace_plans(
        [
            (
                args.namespace or "seldon-mesh",
                NamespacePlan(f"{name}-runtime-ns", namespace_labels(level)),
            )
        ]
    )


class SeldonCoreInstall(pulumi.ComponentResource):
    """Seldon Core 2; `ready` is the runtime release (after CRDs and controller), all in one
    namespace (default `seldon-mesh`), as Seldon's own install has it."""

    def __init__(
        self, name: str, args: SeldonCoreInstallArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        check_local_charts(
            f"SeldonCoreInstall({name!r})",
            {
                "crds_chart": args.crds_chart,
                "setup_chart": args.setup_chart,
                "runtime_chart": args.runtime_chart,
            },
        )
        try:
            runtime_ns = check_one_namespace(args)
        except InputError as e:
            raise e.at(f"SeldonCoreInstall({name!r})") from None
        super().__init__("gpu-inference:index:SeldonCoreInstall", name, None, opts)
        ownership = install_ownership(f"SeldonCoreInstall({name!r})", args.adopt)
        crds = chart_release(
            f"{name}-crds",
            versions.SELDON_CRDS,
            release="seldon-core-v2-crds",
            namespace="default",
            create_namespace=False,
            version=args.version,
            local_chart=args.crds_chart,
            parent=self,
            ownership=ownership,
        )
        namespace = make_namespaces(
            namespaces(name, args), self, args.namespaces_made, ownership
        ).get(runtime_ns, [])
        # The controller in the runtime namespace (watching only it, its default): it reads
        # ServerConfigs there, and the chart puts the built-in ones (mlserver, triton) there.
        setup = chart_release(
            f"{name}-setup",
            versions.SELDON_SETUP,
            release="seldon-core-v2-setup",
            namespace=runtime_ns,
            create_namespace=False,
            version=args.version,
            local_chart=args.setup_chart,
            depends_on=[crds, *namespace],
            parent=self,
            ownership=ownership,
        )
        self.ready = chart_release(
            f"{name}-runtime",
            versions.SELDON_RUNTIME,
            release="seldon-core-v2-runtime",
            namespace=runtime_ns,
            create_namespace=False,
            version=args.version,
            local_chart=args.runtime_chart,
            depends_on=[setup, *namespace],
            parent=self,
            ownership=ownership,
        )
        self.register_outputs({"namespace": runtime_ns})
