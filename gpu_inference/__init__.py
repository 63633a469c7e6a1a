"""gpu-inference's public API: `from gpu_inference import GkeGpuNodePool, InferenceService, ...`.

This folder is the checkout's shim: from a clone (PYTHONPATH, the policy pack, the component
provider) `gpu_inference` gives the very objects of `components` (the library's folder, whose
layout the layers need). The wheel ships no `components`: there `gpu_inference` is that folder
itself (setup.py), since `components` is a name many environments already have. Names are
imported on first use, as there, so `import gpu_inference` imports no cloud SDK.

`python -m gpu_inference` is the `gpu-inference` command line.
"""

from typing import TYPE_CHECKING, Any

import components as _components

__all__ = list(_components.__all__)


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'gpu_inference' has no attribute {name!r}")
    value = getattr(_components, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from components import (
        GPU_TAINT,
        POOL_LABEL,
        AksGpuAgentPool,
        AksGpuAgentPoolArgs,
        AksNapGpuNodePool,
        AksNapGpuNodePoolArgs,
        CertManager,
        CertManagerArgs,
        ClusterAccess,
        ClusterAccessArgs,
        ContainerArgs,
        EksGpuNodeGroup,
        EksGpuNodeGroupArgs,
        ExistingGpuNodes,
        ExistingGpuNodesArgs,
        ExplainerArgs,
        GkeAutopilotGpuPool,
        GkeAutopilotGpuPoolArgs,
        GkeGpuComputeClass,
        GkeGpuComputeClassArgs,
        GkeGpuNodePool,
        GkeGpuNodePoolArgs,
        InferencePlatform,
        InferenceService,
        InferenceServiceArgs,
        InputError,
        KarpenterGpuNodePool,
        KarpenterGpuNodePoolArgs,
        KarpenterInstall,
        KarpenterInstallArgs,
        KnativeServing,
        KnativeServingArgs,
        KServeInstall,
        KServeInstallArgs,
        LLMInferenceService,
        LLMInferenceServiceArgs,
        LLMRouterArgs,
        LLMServingInstall,
        LLMServingInstallArgs,
        LLMWorkerArgs,
        LLMWorkloadArgs,
        LoRAAdapterArgs,
        ModelNamespace,
        ModelNamespaceArgs,
        NodeAffinity,
        NodeSelectorRequirement,
        NodeSelectorTerm,
        NvidiaDevicePlugin,
        NvidiaDevicePluginArgs,
        Placement,
        PoolFacts,
        PredictorArgs,
        PreferredSchedulingTerm,
        SeldonCoreInstall,
        SeldonCoreInstallArgs,
        SeldonModel,
        SeldonModelArgs,
        SeldonServer,
        SeldonServerArgs,
        SeldonServerConfig,
        SeldonServerConfigArgs,
        Spec,
        Taint,
        Toleration,
        TransformerArgs,
        check,
        load_spec,
        load_stack_spec,
    )
