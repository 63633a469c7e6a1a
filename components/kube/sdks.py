"""The cloud SDKs, each installed by the extra of its cloud: `pip install 'gpu-inference[gke]'`.

The core installs none of them (together some 920 MB installed); a stack, a pool or a lookup that
needs one imports it through `cloud_sdk`, which names the extra to install when it is missing.
The extras' names are the providers' (`cluster.provider`); pyproject.toml's
`[project.optional-dependencies]` lists the same distributions (tests/test_requirements.py).
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

from ..model.errors import InputError

CLOUD_SDKS: dict[str, tuple[str, str]] = {
    "gke": ("pulumi_gcp", "pulumi-gcp"),
    "eks": ("pulumi_aws", "pulumi-aws"),
    "aks": ("pulumi_azure_native", "pulumi-azure-native"),
}
"""extra (= the provider it serves) -> (the SDK's import name, its distribution)."""


def missing_sdk(package: str) -> InputError | None:
    """The error for the cloud SDK `package` (an import name) not being installed: what to
    install; None when `package` is no cloud SDK of ours."""
    for extra, (name, dist) in CLOUD_SDKS.items():
        if name == package:
            return InputError(
                f"the {extra} components need the Pulumi SDK {dist}, which is not installed: "
                f"pip install 'gpu-inference[{extra}]'"
            )
    return None


def require_sdk(package: str) -> None:
    """Raise the InputError of `missing_sdk` when the cloud SDK `package` is not installed;
    found, not imported (the import of pulumi_gcp alone takes a second)."""
    missing = missing_sdk(package)
    if missing is not None and find_spec(package) is None:
        raise missing


def cloud_sdk(module: str) -> ModuleType:
    """The cloud SDK's `module` (`pulumi_gcp`, `pulumi_azure_native.containerservice`),
    imported; when the SDK is not installed, the InputError that names its extra."""
    require_sdk(module.partition(".")[0])
    return import_module(module)


__all__ = ["CLOUD_SDKS", "cloud_sdk", "missing_sdk", "require_sdk"]
