"""gpu-inference: GPU node pools only inference pods can use, Knative podspec flags, KServe and
Seldon Core 2 workloads and KServe LLMInferenceServices wired to those pools, and a static
placement check.

Names are imported on first use (PEP 562), so importing the package stays cheap and never imports
a cloud SDK; the GKE and EKS pools import `pulumi_gcp` / `pulumi_aws` only when one is built. The
wheel ships this folder as `gpu_inference` (setup.py), the one import name users see.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    # scheduling model (pure)
    "Taint": "model.scheduling",
    "Toleration": "model.scheduling",
    "NodeSelectorRequirement": "model.scheduling",
    "NodeSelectorTerm": "model.scheduling",
    "PreferredSchedulingTerm": "model.scheduling",
    "NodeAffinity": "model.scheduling",
    "Placement": "model.scheduling",
    "InputError": "model.errors",
    # node pools
    "PoolFacts": "pools.pool",
    "POOL_LABEL": "pools.pool",
    "GPU_TAINT": "pools.pool",
    "GkeGpuNodePool": "pools.gke",
    "GkeGpuNodePoolArgs": "pools.gke",
    "EksGpuNodeGroup": "pools.eks",
    "EksGpuNodeGroupArgs": "pools.eks",
    "ExistingGpuNodes": "pools.existing",
    "ExistingGpuNodesArgs": "pools.existing",
    "KarpenterGpuNodePool": "pools.karpenter",
    "KarpenterGpuNodePoolArgs": "pools.karpenter",
    "GkeGpuComputeClass": "pools.compute_class",
    "GkeGpuComputeClassArgs": "pools.compute_class",
    "GkeAutopilotGpuPool": "pools.autopilot",
    "GkeAutopilotGpuPoolArgs": "pools.autopilot",
    "AksGpuAgentPool": "pools.aks",
    "AksGpuAgentPoolArgs": "pools.aks",
    "AksNapGpuNodePool": "pools.nap",
    "AksNapGpuNodePoolArgs": "pools.nap",
    # serving
    "KnativeServing": "serving.knative",
    "KnativeServingArgs": "serving.knative",
    "KServeInstall": "serving.kserve_install",
    "KServeInstallArgs": "serving.kserve_install",
    "SeldonCoreInstall": "serving.seldon_install",
    "SeldonCoreInstallArgs": "serving.seldon_install",
    "NvidiaDevicePlugin": "serving.nvidia_device_plugin",
    "NvidiaDevicePluginArgs": "serving.nvidia_device_plugin",
    "CertManager": "serving.cert_manager",
    "CertManagerArgs": "serving.cert_manager",
    "KarpenterInstall": "serving.karpenter_install",
    "KarpenterInstallArgs": "serving.karpenter_install",
    "ContainerArgs": "serving.workload",
    "InferenceService": "serving.inference_service",
    "InferenceServiceArgs": "serving.inference_service",
    "PredictorArgs": "serving.inference_service",
    "TransformerArgs": "serving.inference_service",
    "ExplainerArgs": "serving.inference_service",
    "LLMInferenceService": "serving.llm_inference_service",
    "LLMInferenceServiceArgs": "serving.llm_inference_service",
    "LLMWorkloadArgs": "serving.llm_inference_service",
    "LLMWorkerArgs": "serving.llm_inference_service",
    "LLMRouterArgs": "serving.llm_inference_service",
    "LoRAAdapterArgs": "serving.llm_inference_service",
    "LLMServingInstall": "serving.llm_install",
    "LLMServingInstallArgs": "serving.llm_install",
    "SeldonServerConfig": "serving.seldon",
    "SeldonServerConfigArgs": "serving.seldon",
    "SeldonServer": "serving.seldon",
    "SeldonServerArgs": "serving.seldon",
    "SeldonModel": "serving.seldon",
    "SeldonModelArgs": "serving.seldon",
    "ModelNamespace": "serving.model_namespace",
    "ModelNamespaceArgs": "serving.model_namespace",
    # platform
    "ClusterAccess": "platform.cluster_access",
    "ClusterAccessArgs": "platform.cluster_access",
    "Spec": "platform.config",
    "load_spec": "platform.load",
    "load_stack_spec": "platform.platform",
    "InferencePlatform": "platform.platform",
    # placement check (pure)
    "check": "check",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .check import check
    from .model.errors import InputError
    from .model.scheduling import (
        NodeAffinity,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        Placement,
        PreferredSchedulingTerm,
        Taint,
        Toleration,
    )
    from .platform.cluster_access import ClusterAccess, ClusterAccessArgs
    from .platform.config import Spec
    from .platform.load import load_spec
    from .platform.platform import InferencePlatform, load_stack_spec
    from .pools.aks import AksGpuAgentPool, AksGpuAgentPoolArgs
    from .pools.autopilot import GkeAutopilotGpuPool, GkeAutopilotGpuPoolArgs
    from .pools.compute_class import GkeGpuComputeClass, GkeGpuComputeClassArgs
    from .pools.eks import EksGpuNodeGroup, EksGpuNodeGroupArgs
    from .pools.existing import ExistingGpuNodes, ExistingGpuNodesArgs
    from .pools.gke import GkeGpuNodePool, GkeGpuNodePoolArgs
    from .pools.karpenter import KarpenterGpuNodePool, KarpenterGpuNodePoolArgs
    from .pools.nap import AksNapGpuNodePool, AksNapGpuNodePoolArgs
    from .pools.pool import GPU_TAINT, POOL_LABEL, PoolFacts
    from .serving.cert_manager import CertManager, CertManagerArgs
    from .serving.inference_service import (
        ExplainerArgs,
        InferenceService,
        InferenceServiceArgs,
        PredictorArgs,
        TransformerArgs,
    )
    from .serving.karpenter_install import KarpenterInstall, KarpenterInstallArgs
    from .serving.knative import KnativeServing, KnativeServingArgs
    from .serving.kserve_install import KServeInstall, KServeInstallArgs
    from .serving.llm_inference_service import (
        LLMInferenceService,
        LLMInferenceServiceArgs,
        LLMRouterArgs,
        LLMWorkerArgs,
        LLMWorkloadArgs,
        LoRAAdapterArgs,
    )
    from .serving.llm_install import LLMServingInstall, LLMServingInstallArgs
    from .serving.model_namespace import ModelNamespace, ModelNamespaceArgs
    from .serving.nvidia_device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
    from .serving.seldon import (
        SeldonModel,
        SeldonModelArgs,
        SeldonServer,
        SeldonServerArgs,
        SeldonServerConfig,
        SeldonServerConfigArgs,
    )
    from .serving.seldon_install import SeldonCoreInstall, SeldonCoreInstallArgs
    from .serving.workload import ContainerArgs
