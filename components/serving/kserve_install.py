"""`KServeInstall`: KServe's CRDs chart, then its controller chart, with a default deployment mode."""

from dataclasses import dataclass
from typing import Any, Optional

import pulumi

from ..model import versions
from ..model.errors import InputError
from .helm import chart_release


@dataclass
class KServeInstallArgs:
    """Inputs of `KServeInstall`."""

    version: Optional[str] = None
    """KServe version for both charts; default: the pinned one."""
    default_deployment_mode: Optional[str] = "Serverless"
    """Mode of InferenceServices without the deploymentMode annotation (either spelling)."""
    namespace: Optional[str] = "kserve"
    """Namespace of the controller."""


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
        super().__init__("gpu-inference:index:KServeInstall", name, None, opts)
        namespace = args.namespace or "kserve"
        crds = chart_release(
            f"{name}-crd",
            versions.KSERVE_CRD,
            release="kserve-crd",
            namespace=namespace,
            version=args.version,
            parent=self,
        )
        self.ready = chart_release(
            f"{name}-controller",
            versions.KSERVE_CONTROLLER,
            release="kserve",
            namespace=namespace,
            values=values,
            version=args.version,
            depends_on=[crds],
            parent=self,
        )
        self.register_outputs({})
