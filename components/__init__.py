"""gpu-inference: GPU node pools only inference pods can use, Knative podspec flags, KServe and
Seldon Core 2 workloads wired to those pools, and a static placement check.

Names are imported on first use (PEP 562), so `import components` stays cheap and never imports a
cloud SDK; the GKE and EKS pools import `pulumi_gcp` / `pulumi_aws` only when one is built.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    # scheduling model (pure)
    "Taint": "scheduling",
    "Toleration": "scheduling",
    "NodeSelectorRequirement": "scheduling",
    "NodeSelectorTerm": "scheduling",
    "PreferredSchedulingTerm": "scheduling",
    "NodeAffinity": "scheduling",
    "Placement": "scheduling",
    "InputError": "errors",
    # node pools
    "PoolFacts": "pool",
    "POOL_LABEL": "pool",
    "GPU_TAINT": "pool",
    "GkeGpuNodePool": "gke_pool",
    "GkeGpuNodePoolArgs": "gke_pool",
    "EksGpuNodeGroup": "eks_pool",
    "EksGpuNodeGroupArgs": "eks_pool",
    "ExistingGpuNodes": "existing_nodes",
    "ExistingGpuNodesArgs": "existing_nodes",
    # serving
    "KnativeServing": "knative",
    "KnativeServingArgs": "knative",
    "KServeInstall": "kserve_install",
    "KServeInstallArgs": "kserve_install",
    "SeldonCoreInstall": "seldon_install",
    "SeldonCoreInstallArgs": "seldon_install",
    "NvidiaDevicePlugin": "nvidia_device_plugin",
    "NvidiaDevicePluginArgs": "nvidia_device_plugin",
    "CertManager": "cert_manager",
    "CertManagerArgs": "cert_manager",
    "ContainerArgs": "workload",
    "InferenceService": "inference_service",
    "InferenceServiceArgs": "inference_service",
    "PredictorArgs": "inference_service",
    "TransformerArgs": "inference_service",
    "ExplainerArgs": "inference_service",
    "SeldonServerConfig": "seldon",
    "SeldonServerConfigArgs": "seldon",
    "SeldonServer": "seldon",
    "SeldonServerArgs": "seldon",
    "SeldonModel": "seldon",
    "SeldonModelArgs": "seldon",
    "ModelNamespace": "model_namespace",
    "ModelNamespaceArgs": "model_namespace",
    # platform
    "ClusterAccess": "cluster_access",
    "ClusterAccessArgs": "cluster_access",
    "Spec": "config",
    "load_spec": "config",
    "InferencePlatform": "platform",
    # placement check (pure)
    "check": "placement_check",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'components' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .cert_manager import CertManager, CertManagerArgs
    from .cluster_access import ClusterAccess, ClusterAccessArgs
    from .config import Spec, load_spec
    from .eks_pool import EksGpuNodeGroup, EksGpuNodeGroupArgs
    from .errors import InputError
    from .existing_nodes import ExistingGpuNodes, ExistingGpuNodesArgs
    from .gke_pool import GkeGpuNodePool, GkeGpuNodePoolArgs
    from .inference_service import (
        ExplainerArgs,
        InferenceService,
        InferenceServiceArgs,
        PredictorArgs,
        TransformerArgs,
    )
    from .knative import KnativeServing, KnativeServingArgs
    from .kserve_install import KServeInstall, KServeInstallArgs
    from .model_namespace import ModelNamespace, ModelNamespaceArgs
    from .nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
    from .placement_check import check
    from .platform import InferencePlatform
    from .pool import GPU_TAINT, POOL_LABEL, PoolFacts
    from .scheduling import (
        NodeAffinity,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        Placement,
        PreferredSchedulingTerm,
        Taint,
        Toleration,
    )
    from .seldon import (
        SeldonModel,
        SeldonModelArgs,
        SeldonServer,
        SeldonServerArgs,
        SeldonServerConfig,
        SeldonServerConfigArgs,
    )
    from .seldon_install import SeldonCoreInstall, SeldonCoreInstallArgs
    from .workload import ContainerArgs
