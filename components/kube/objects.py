"""The core Kubernetes objects we make (Namespace, ServiceAccount, Secret, ConfigMapPatch,
NodePatch, and a Node read), registered without importing `pulumi_kubernetes.core.v1`.

That module loads all of core/v1's 78,000 lines of input and output types on its import, 0.2-0.3 s
of every preview and every `pulumi up`, for a handful of objects of a fixed shape. Each is
registered here as the SDK's own class registers it: the same type token (so the same URN), the
same camelCase inputs, its output-only properties (`status`), the SDK's version for the
kubernetes plugin, and a Secret's `data` and `stringData` as secrets. The provider cannot tell
the two apart; tests/kube/test_objects.py holds every request equal to the SDK class's.
`sdk_options` (an SDK's plugin version, read from its package without importing it) serves the
GKE NodePool, the GKE cluster lookup and the Helm Release, registered the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Optional

import pulumi

from .sdks import missing_sdk


@dataclass(frozen=True)
class CoreKind:
    """One core/v1 kind as its SDK class registers it."""

    kind: str
    inputs: tuple[str, ...]
    """Its inputs besides `apiVersion`, `kind` and `metadata`, camelCase."""
    outputs: tuple[str, ...] = ()
    """The output-only properties it reads back (`status`)."""
    secret: tuple[str, ...] = ()
    """Inputs sent as secrets, and the outputs kept secret."""
    patch: bool = False
    """A server-side-apply patch of the kind (`ConfigMapPatch`): its object is still a `kind`."""

    @property
    def token(self) -> str:
        return f"kubernetes:core/v1:{self.kind}{'Patch' if self.patch else ''}"


NAMESPACE = CoreKind("Namespace", ("spec",), ("status",))
SERVICE_ACCOUNT = CoreKind(
    "ServiceAccount", ("automountServiceAccountToken", "imagePullSecrets", "secrets")
)
SECRET = CoreKind("Secret", ("data", "immutable", "stringData", "type"), (), ("data", "stringData"))
CONFIG_MAP_PATCH = CoreKind("ConfigMap", ("binaryData", "data", "immutable"), patch=True)
NODE_PATCH = CoreKind("Node", ("spec",), ("status",), patch=True)
NODE = CoreKind("Node", ("spec",), ("status",))


def sdk_options(package: str) -> pulumi.ResourceOptions:
    """The options every resource class of the SDK `package` merges under the caller's: the
    version of the provider plugin the SDK was built for, no download URL."""
    return pulumi.ResourceOptions(version=plugin_version(package), plugin_download_url=None)


@cache
def plugin_version(package: str) -> str:
    """The version in the SDK `package`'s `pulumi-plugin.json` (found, not imported)."""
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise missing_sdk(package) or ModuleNotFoundError(
            f"the Pulumi SDK {package} is not installed"
        )
    plugin = Path(spec.submodule_search_locations[0]) / "pulumi-plugin.json"
    return str(json.loads(plugin.read_text())["version"])


class CoreObject(pulumi.CustomResource):
    """A core/v1 object. Its inputs and outputs are its attributes, by their camelCase names."""

    metadata: pulumi.Output[Any]
    spec: pulumi.Output[Any]

    def __init__(
        self,
        kind: CoreKind,
        resource_name: str,
        metadata: Optional[pulumi.Input[Mapping[str, Any]]] = None,
        opts: Optional[pulumi.ResourceOptions] = None,
        **inputs: Any,
    ) -> None:
        unknown = set(inputs) - set(kind.inputs)
        if unknown:
            raise TypeError(f"{kind.token} has no input {', '.join(sorted(unknown))}")
        opts = pulumi.ResourceOptions.merge(sdk_options("pulumi_kubernetes"), opts)
        props: dict[str, Any] = dict.fromkeys(("apiVersion", "kind", "metadata", *kind.inputs))
        if opts.id is None:  # a read sends no inputs: the provider fills them from the object
            props.update(apiVersion="v1", kind=kind.kind, metadata=metadata)
            for name, value in inputs.items():
                secret = name in kind.secret and value is not None
                props[name] = pulumi.Output.secret(value) if secret else value
        props.update(dict.fromkeys(kind.outputs))
        if kind.secret:
            opts = pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=list(kind.secret))
            )
        super().__init__(kind.token, resource_name, props, opts)


def read_node(
    resource_name: str, node: str, opts: Optional[pulumi.ResourceOptions] = None
) -> CoreObject:
    """The live Node `node`, read (not managed), as `k8s.core.v1.Node.get` reads it."""
    return CoreObject(
        NODE,
        resource_name,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(id=node)),
    )
