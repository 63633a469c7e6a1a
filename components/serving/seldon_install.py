"""`SeldonCoreInstall`: Seldon Core 2's CRDs, setup (controller) and runtime charts.

Pinned to 2.6.0, the last Apache-2.0 release: from 2.7.0 on Seldon Core 2 is under the Business
Source License 1.1 and production use needs a licence from Seldon.
"""

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from ..model import versions
from .helm import chart_release, check_local_charts


@dataclass
class SeldonCoreInstallArgs:
    """Inputs of `SeldonCoreInstall`."""

    version: Optional[str] = None
    """Version of the three charts; default: 2.6.0 (see the licence note)."""
    namespace: Optional[str] = "seldon-mesh"
    """Namespace of the runtime (where Servers and Models live)."""
    system_namespace: Optional[str] = "seldon-system"
    """Namespace of the operator (setup chart)."""
    pod_security: Optional[str] = "baseline"
    """Pod Security Admission level enforced on the runtime namespace."""
    crds_chart: Optional[str] = None
    """A local seldon-core-v2-crds chart directory or `.tgz` instead of the repository's."""
    setup_chart: Optional[str] = None
    """A local seldon-core-v2-setup chart directory or `.tgz` instead of the repository's."""
    runtime_chart: Optional[str] = None
    """A local seldon-core-v2-runtime chart directory or `.tgz` instead of the repository's."""


class SeldonCoreInstall(pulumi.ComponentResource):
    """Seldon Core 2; `ready` is the runtime release (after CRDs and controller)."""

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
        super().__init__("gpu-inference:index:SeldonCoreInstall", name, None, opts)
        runtime_ns = args.namespace or "seldon-mesh"
        system_ns = args.system_namespace or "seldon-system"
        level = args.pod_security or "baseline"
        crds = chart_release(
            f"{name}-crds",
            versions.SELDON_CRDS,
            release="seldon-core-v2-crds",
            namespace="default",
            create_namespace=False,
            version=args.version,
            local_chart=args.crds_chart,
            parent=self,
        )
        setup = chart_release(
            f"{name}-setup",
            versions.SELDON_SETUP,
            release="seldon-core-v2-setup",
            namespace=system_ns,
            # The controller watches only its own namespace by default; the runtime lives in
            # another one, so it must watch cluster-wide to see the Servers and Models there.
            values={"controller": {"clusterwide": runtime_ns != system_ns}},
            version=args.version,
            local_chart=args.setup_chart,
            depends_on=[crds],
            parent=self,
        )
        namespace = k8s.core.v1.Namespace(
            f"{name}-runtime-ns",
            metadata={
                "name": runtime_ns,
                "labels": {
                    "pod-security.kubernetes.io/enforce": level,
                    "pod-security.kubernetes.io/warn": level,
                    "pod-security.kubernetes.io/audit": level,
                },
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.ready = chart_release(
            f"{name}-runtime",
            versions.SELDON_RUNTIME,
            release="seldon-core-v2-runtime",
            namespace=runtime_ns,
            create_namespace=False,
            version=args.version,
            local_chart=args.runtime_chart,
            depends_on=[setup, namespace],
            parent=self,
        )
        self.register_outputs({"namespace": runtime_ns})
