"""`CertManager`: cert-manager from its upstream chart, with its CRDs (KServe's webhooks need it)."""

from dataclasses import dataclass, field
from typing import Optional

import pulumi

from ..kube.provider import make_namespaces
from ..model.deploy import versions
from ..model.deploy.ownership import NamespacePlan, install_ownership, namespace_plans
from ..model.inputs import stack
from .helm import chart_release, check_local_charts


@dataclass
class CertManagerArgs:
    """Inputs of `CertManager`."""

    version: Optional[str] = field(default=None, metadata=stack(syntax="version"))
    """Chart version; default: the pinned one (components/model/deploy/versions.py)."""
    namespace: Optional[str] = field(default="cert-manager", metadata=stack(syntax="dns1123"))
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


def namespaces(name: str, args: CertManagerArgs) -> dict[str, NamespacePlan]:
    """The namespace of the release (none when it is one every cluster has)."""
    return namespace_plans([(args.namespace or "cert-manager", NamespacePlan(f"{name}-namespace"))])


def cert_manager_values() -> dict[str, object]:
    # cert-manager >= v1.15 installs its CRDs with `crds.enabled` (formerly `installCRDs`).
    return {"crds": {"enabled": True, "keep": True}}


class CertManager(pulumi.ComponentResource):
    """cert-manager; `ready` is the release."""

    def __init__(
        self, name: str, args: CertManagerArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        check_local_charts(f"CertManager({name!r})", {"chart": args.chart})
        super().__init__("gpu-inference:index:CertManager", name, None, opts)
        namespace = args.namespace or "cert-manager"
        ownership = install_ownership(f"CertManager({name!r})", args.adopt)
        self.ready = chart_release(
            f"{name}-release",
            versions.CERT_MANAGER,
            release="cert-manager",
            namespace=namespace,
            values=cert_manager_values(),
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
