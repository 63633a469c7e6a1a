"""`KServeInstall`: KServe's CRDs chart, then its controller chart, with a default deployment mode."""

from dataclasses import dataclass
from typing import Any, Optional

import pulumi

from ..model import versions
from ..model.errors import InputError
from .helm import chart_release, check_local_charts


@dataclass
class KServeInstallArgs:
    """Inputs of `KServeInstall`."""

    version: Optional[str] = None
    """KServe version for both charts; default: the pinned one."""
    default_deployment_mode: Optional[str] = "Serverless"
    """Mode of InferenceServices without the deploymentMode annotation (either spelling)."""
    namespace: Optional[str] = "kserve"
    """Namespace of the controller."""
    crd_chart: Optional[str] = None
    """A local kserve-crd chart directory or `.tgz` instead of the registry's (air-gapped)."""
    controller_chart: Optional[str] = None
    """A local controller chart (kserve-resources) directory or `.tgz` instead of the registry's."""


def kserve_values(args: KServeInstallArgs) -> dict[str, Any]:
    """Controller chart values: the default deployment mode, spelled for the pinned version."""
    version = args.version or versions.KSERVE_VERSION
    mode = versions.kserve_deployment_mode(args.default_deployment_mode or "Serverless", version)
    return {"kserve": {"controller": {"deploymentMode": mode}}}


class KServeInstall(pulumi.ComponentResource):
    """KServe; `ready` is the controller release (after the CRDs release)."""

    def __init__(
        self, name: str, args: KServeInstallArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            values = kserve_values(args)
        except InputError as e:
            raise e.at(f"KServeInstall({name!r})") from None
        check_local_charts(
            f"KServeInstall({name!r})",
            {"crd_chart": args.crd_chart, "controller_chart": args.controller_chart},
        )
        super().__init__("gpu-inference:index:KServeInstall", name, None, opts)
        namespace = args.namespace or "kserve"
        crds = chart_release(
            f"{name}-crd",
            versions.KSERVE_CRD,
            release="kserve-crd",
            namespace=namespace,
            version=args.version,
            local_chart=args.crd_chart,
            parent=self,
        )
        self.ready = chart_release(
            f"{name}-controller",
            versions.KSERVE_CONTROLLER,
            release="kserve",
            namespace=namespace,
            values=values,
            version=args.version,
            local_chart=args.controller_chart,
            depends_on=[crds],
            parent=self,
        )
        self.register_outputs({})
