"""The package's public names, as the issues and the README promise them."""

import components


def test_every_exported_name_imports():
    for name in components.__all__:
        assert getattr(components, name) is not None, name


def test_the_promised_imports():
    from components import (  # noqa: F401
        EksGpuNodeGroup,
        ExistingGpuNodes,
        GkeGpuNodePool,
        InferenceService,
        KnativeServing,
        LLMInferenceService,
        LLMServingInstall,
        Placement,
        SeldonModel,
        SeldonServer,
        SeldonServerConfig,
        Taint,
        Toleration,
    )
