"""The public components as a Pulumi component package, for TypeScript, Go, C#, Java and YAML.

`provider/__main__.py` hosts them with Pulumi's component provider host, so that
`pulumi package add <this repo>/provider` generates an SDK in the caller's language. The schema is
inferred from the components' typed `...Args` dataclasses. `InferencePlatform` is Python-only (it
takes a pydantic `Spec` built from stack config) and is not in the package.
"""

import dataclasses
import inspect
import json
import sys
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Optional

import pulumi

from .platform.cluster_access import ClusterAccess
from .pools.autopilot import GkeAutopilotGpuPool
from .pools.compute_class import GkeGpuComputeClass
from .pools.eks import EksGpuNodeGroup
from .pools.existing import ExistingGpuNodes
from .pools.gke import GkeGpuNodePool
from .pools.karpenter import KarpenterGpuNodePool
from .serving.cert_manager import CertManager
from .serving.inference_service import InferenceService
from .serving.karpenter_install import KarpenterInstall
from .serving.knative import KnativeServing
from .serving.kserve_install import KServeInstall
from .serving.llm_inference_service import LLMInferenceService
from .serving.llm_install import LLMServingInstall
from .serving.model_namespace import ModelNamespace
from .serving.nvidia_device_plugin import NvidiaDevicePlugin
from .serving.seldon import SeldonModel, SeldonServer, SeldonServerConfig
from .serving.seldon_install import SeldonCoreInstall

PACKAGE = "gpu-inference"
DISTRIBUTION = "gpu-inference"
PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
PUBLIC_COMPONENTS: list[type[pulumi.ComponentResource]] = [
    GkeGpuNodePool,
    EksGpuNodeGroup,
    ExistingGpuNodes,
    KarpenterGpuNodePool,
    GkeGpuComputeClass,
    GkeAutopilotGpuPool,
    KnativeServing,
    KServeInstall,
    SeldonCoreInstall,
    NvidiaDevicePlugin,
    CertManager,
    KarpenterInstall,
    LLMServingInstall,
    InferenceService,
    LLMInferenceService,
    SeldonServerConfig,
    SeldonServer,
    SeldonModel,
    ModelNamespace,
    ClusterAccess,
]


def project_metadata() -> dict[str, Any]:
    """The `[project]` table this package is built from: the repository's pyproject.toml (the
    provider runs from a clone: `pulumi package add <clone>/provider`), else the installed
    distribution's metadata, which the wheel carries from the same table."""
    if PYPROJECT.is_file():
        project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
        if project.get("name") == DISTRIBUTION:
            return dict(project)
    found = metadata.metadata(DISTRIBUTION)
    urls = dict(u.split(", ", 1) for u in found.get_all("Project-URL") or [])
    return {
        "name": found["Name"],
        "version": found["Version"],
        "description": found["Summary"],
        "keywords": [k for k in (found["Keywords"] or "").split(",") if k],
        "license": found["License-Expression"] or found["License"],
        "urls": urls,
    }


REGISTRY_KEYWORDS = ("category/infrastructure", "kind/component")
"""The Pulumi Registry's facets for a component package (its `category/*` and `kind/*` keywords)."""


def registry_metadata(project: Mapping[str, Any]) -> dict[str, Any]:
    """What the Pulumi Registry shows of the package, from the project's one declaration
    (pyproject's `[project]`): its display name, description, keywords, license, version, and
    the repository and homepage when `[project.urls]` names them."""
    urls = project.get("urls") or {}
    license_ = project.get("license")
    out = {
        "displayName": "GPU Inference",
        "description": project["description"],
        "keywords": [*REGISTRY_KEYWORDS, *project.get("keywords", ())],
        "license": license_.get("text") if isinstance(license_, Mapping) else license_,
        "version": project["version"],
        "repository": urls.get("Repository"),
        "homepage": urls.get("Homepage") or urls.get("Repository"),
    }
    return {k: v for k, v in out.items() if v}


def as_args(typ: Any, value: Any) -> Any:
    """`value` (plain dicts and lists with Python field names, as the provider maps a construct
    request's inputs) turned into `typ`: the component's Args dataclass and the dataclasses nested
    in it (Taint, Placement, ContainerArgs, ...). Outputs and values of other types pass as they are.

    The engine carries every number as a double (a protobuf Struct): an `int` field gets back a
    whole float as an int (the TypeScript e2e test's `gpusPerNode: 4` arrived as 4.0 and was
    refused); a fractional one stays as it is, for the component to refuse."""
    if value is None or isinstance(value, pulumi.Output):
        return value
    if typ is int and isinstance(value, float) and value.is_integer():
        return int(value)
    origin = typing.get_origin(typ)
    if origin is typing.Union or origin is types.UnionType:  # Optional[X], X | None
        inner = [t for t in typing.get_args(typ) if t is not type(None)]
        return as_args(inner[0], value) if len(inner) == 1 else value
    if origin is not None and typ is not str:
        params = typing.get_args(typ)
        if issubclass(origin, Mapping) and isinstance(value, Mapping) and len(params) == 2:
            return {k: as_args(params[1], v) for k, v in value.items()}
        if issubclass(origin, Sequence) and isinstance(value, (list, tuple)) and params:
            return [as_args(params[0], v) for v in value]
        return value
    if dataclasses.is_dataclass(typ) and isinstance(typ, type) and isinstance(value, Mapping):
        fields = _field_types(typ)
        return typ(**{k: as_args(fields.get(k, Any), v) for k, v in value.items() if v is not None})
    return value


def as_schema_value(value: Any) -> Any:
    """An output value as the schema has it: dataclasses (a pool's `pod_placement`, a Placement)
    as objects with camelCase property names, None fields left out; map keys (label keys) kept.
    The stock provider maps only dicts, and only their top level."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            _camel(f.name): as_schema_value(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) is not None
        }
    if isinstance(value, Mapping):
        return {k: as_schema_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_schema_value(v) for v in value]
    return value


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def _field_types(typ: type) -> dict[str, Any]:
    """A dataclass's field types, resolved also where its module postpones annotations."""
    try:
        hints = typing.get_type_hints(typ)
    except (NameError, TypeError):
        hints = {}
    return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(typ)}


def _args_type(component: type[pulumi.ComponentResource]) -> Any:
    annotation = inspect.signature(component.__init__).parameters["args"].annotation
    if isinstance(annotation, str):
        annotation = eval(annotation, vars(sys.modules[component.__module__]))
    return annotation


def component_provider() -> Any:
    """The in-process provider (schema and construct), as the host serves it."""
    from pulumi.provider.experimental.component import ComponentProvider

    class GpuInferenceProvider(ComponentProvider):
        """Pulumi's component provider, handing each component its typed Args dataclass (the
        stock one passes a plain dict)."""

        def map_inputs(self, inputs: Any, component_def: Any) -> Any:
            mapped = super().map_inputs(inputs, component_def)
            component = self._components[component_def.name]
            return as_args(_args_type(component), mapped)

        def map_complex_output(self, instance_val: Any, type_def: Any) -> Any:
            if isinstance(instance_val, pulumi.Output):
                return instance_val.apply(lambda v: self.map_complex_output(v, type_def))
            if dataclasses.is_dataclass(instance_val) and not isinstance(instance_val, type):
                return as_schema_value(instance_val)
            return super().map_complex_output(instance_val, type_def)

    project = registry_metadata(project_metadata())
    provider = GpuInferenceProvider(PUBLIC_COMPONENTS, PACKAGE, version=project["version"])
    schema = json.loads(provider.schema or "{}")
    schema.update(project)
    provider.schema = json.dumps(schema)
    return provider


def main(args: Optional[list[str]] = None) -> None:
    """Serve the components to the Pulumi engine (run by provider/__main__.py)."""
    from pulumi.provider import main as serve

    serve(component_provider(), sys.argv[1:] if args is None else args)
