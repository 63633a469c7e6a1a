"""Container pieces shared by the KServe and Seldon workloads: resources, env, containers, and the
placement a workload component ends up with. Pure (imports no Pulumi).

Resource rules (Kubernetes pod validation, `k8s.io/kubernetes/pkg/apis/core/validation`):
- GPUs (`nvidia.com/gpu`, an extended resource) cannot be overcommitted: a request needs a limit,
  and the API server rejects a request different from the limit ("must be equal to nvidia.com/gpu
  limit"). `gpus` therefore goes into both requests and limits, as the KServe seeds write it.
  `gpu_limit` may differ only to reproduce Seldon's documentation (seed 004); that is reported
  by `resource_warnings`, because such a pod is refused when it is created.
- cpu and memory: the request, and by default the same limit (seed 004 writes both); a request
  above its limit is an error. `ephemeral_storage` is a request only unless a limit is given.
- Quantities are checked with `scheduling.parse_quantity`; integers stay integers (seed 004 writes
  `cpu: 40`), everything else is emitted as the string given (`"500m"`, `"360Gi"`).
"""

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ..model.errors import InputError, show

# No `from __future__ import annotations`: ContainerArgs is a component input and Pulumi's analyzer
# reads its annotations at run time.
from ..model.inputs import stack
from ..model.scheduling import (
    GPU_RESOURCE,
    NodeSelectorRequirement,
    Placement,
    parse_quantity,
    validate_dns1123_label,
    validate_labels,
)
from ..model.serving.env import SECRET_KEY_REF, value_from

_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
ENV_NAME_RULE = (
    "a C identifier-like name: letters, digits, '_', '-' or '.', not starting with a digit "
    "(e.g. OMP_NUM_THREADS)"
)

Quantity = Union[int, str]
EnvValue = Any
"""An env value: a string, or `{valueFrom: ...}` (`components.model.serving.env` checks it);
`Any`, since Pulumi's component analyzer takes no Union."""


@dataclass
class ContainerArgs:
    """One container of a custom predictor, a transformer, an explainer or a Seldon podSpec."""

    name: str = field(metadata=stack(syntax="dns1123"))
    """Container name (DNS-1123 label). On a Seldon Server, the name of the ServerConfig container
    to override (e.g. `mlserver`, `agent`)."""
    image: Optional[str] = None
    """Container image; may be left out only when overriding a ServerConfig container."""
    command: Optional[Sequence[str]] = None
    """Entrypoint override."""
    args: Optional[Sequence[str]] = None
    """Arguments to the entrypoint."""
    env: Optional[Mapping[str, EnvValue]] = field(default=None, metadata=stack(syntax="env"))
    """Environment variables, name -> value, in this order: a string, or
    `{valueFrom: {secretKeyRef: {name, key}}}` for a value read from a Secret (a list of
    `{name, value}` or `{name, valueFrom}` dicts is accepted too)."""
    gpus: Optional[int] = field(default=None, metadata=stack(ge=0))
    """NVIDIA GPUs: requested and limited (`nvidia.com/gpu`)."""
    cpu: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """CPU request (quantity such as `"500m"` or `4`); also the limit unless `cpu_limit`."""
    memory: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Memory request (`"16Gi"`); also the limit unless `memory_limit`."""
    ephemeral_storage: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Ephemeral storage request (`"290Gi"`); no limit unless `ephemeral_storage_limit`."""
    gpu_limit: Optional[int] = field(default=None, metadata=stack(ge=0))
    """GPU limit when it must differ from `gpus` (Kubernetes refuses that; seed 004 only)."""
    cpu_limit: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """CPU limit when it differs from the request."""
    memory_limit: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Memory limit when it differs from the request."""
    ephemeral_storage_limit: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Ephemeral storage limit."""


def quantity(value: object) -> Quantity:
    """A quantity as it is emitted: integers stay integers, strings are kept as written.
    Raises InputError for floats, negative numbers and anything that is not a quantity."""
    parse_quantity(value)
    if isinstance(value, int):
        return value
    return str(value)


def _gpu_count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(
            f"GPU count {show(value)} is not a whole number of GPUs", "an integer 0 or more"
        )
    return value


def container_resources(
    gpus: Optional[int] = None,
    cpu: object = None,
    memory: object = None,
    ephemeral_storage: object = None,
    gpu_limit: Optional[int] = None,
    cpu_limit: object = None,
    memory_limit: object = None,
    ephemeral_storage_limit: object = None,
) -> dict[str, Any]:
    """`resources: {requests, limits}` for a container; `{}` when nothing is asked.

    Keys are in the order the seeds write them: nvidia.com/gpu, cpu, memory, ephemeral-storage.
    """
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    if gpus is not None:
        try:
            count = _gpu_count(gpus)
        except InputError as e:
            raise e.at("gpus") from None
        if count:
            requests[GPU_RESOURCE] = count
            limits[GPU_RESOURCE] = count
    if gpu_limit is not None:
        try:
            limits[GPU_RESOURCE] = _gpu_count(gpu_limit)
        except InputError as e:
            raise e.at("gpuLimit") from None
        if GPU_RESOURCE not in requests:
            raise InputError(
                f"gpuLimit {gpu_limit} is set without gpus",
                "gpus (the request), and gpuLimit only when it must differ",
                "gpuLimit",
            )
    for key, req, lim, path, default_limit in (
        ("cpu", cpu, cpu_limit, "cpu", True),
        ("memory", memory, memory_limit, "memory", True),
        (
            "ephemeral-storage",
            ephemeral_storage,
            ephemeral_storage_limit,
            "ephemeralStorage",
            False,
        ),
    ):
        if req is not None:
            try:
                requests[key] = quantity(req)
            except InputError as e:
                raise e.at(path) from None
        if lim is not None:
            try:
                limits[key] = quantity(lim)
            except InputError as e:
                raise e.at(f"{path}Limit") from None
        elif req is not None and default_limit:
            limits[key] = requests[key]
        if req is not None and lim is not None and parse_quantity(req) > parse_quantity(lim):
            raise InputError(
                f"the {key} request {show(req)} is above its limit {show(lim)}",
                "a request at most its limit",
                path,
            )
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def resources_of(c: ContainerArgs) -> dict[str, Any]:
    return container_resources(
        c.gpus,
        c.cpu,
        c.memory,
        c.ephemeral_storage,
        c.gpu_limit,
        c.cpu_limit,
        c.memory_limit,
        c.ephemeral_storage_limit,
    )


def resource_warnings(resources: Mapping[str, Any]) -> list[str]:
    """Things Kubernetes will refuse later that we still emit on request (seed 004's GPU limit)."""
    req = (resources.get("requests") or {}).get(GPU_RESOURCE)
    lim = (resources.get("limits") or {}).get(GPU_RESOURCE)
    if req is not None and lim is not None and req != lim:
        return [
            f"{GPU_RESOURCE} request {req} differs from its limit {lim}: Kubernetes refuses such "
            f"a pod ('must be equal to {GPU_RESOURCE} limit'); set gpus only"
        ]
    return []


def requested_resources(resources: Mapping[str, Any]) -> set[str]:
    """Resource names a container asks for (requests or limits)."""
    return set(resources.get("requests") or {}) | set(resources.get("limits") or {})


def env_list(env: object) -> list[dict[str, Any]]:
    """`env` as Kubernetes takes it: a mapping (name -> a string, or `{valueFrom: ...}`) or a
    list of `{name, value}` / `{name, valueFrom}` dicts. Names are checked, and each `valueFrom`
    (`components.model.serving.env`: one source, a Secret's name and key); duplicates are
    errors."""
    if env is None:
        return []
    out: list[dict[str, Any]] = []
    if isinstance(env, Mapping):
        items: Iterable[Any] = [
            {"name": k, **v} if isinstance(v, Mapping) else {"name": k, "value": v}
            for k, v in env.items()
        ]
    elif isinstance(env, Sequence) and not isinstance(env, str):
        items = env
    else:
        raise InputError(
            f"env {show(env)} is neither a mapping nor a list",
            "a mapping NAME -> value, or a list of {name, value}",
        )
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or "name" not in item:
            raise InputError(
                f"env entry {show(item)} has no name",
                "{name, value} or {name, valueFrom}",
                f"[{i}]",
            )
        name = item["name"]
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise InputError(f"env name {show(name)} is not valid", ENV_NAME_RULE, f"[{i}]")
        if name in seen:
            raise InputError(f"env {name} is set twice", "each name once", f"[{i}]")
        seen.add(name)
        unknown = set(item) - {"name", "value", "valueFrom"}
        if unknown:
            raise InputError(
                f"env {name} has unknown keys {sorted(unknown)}", "name, value, valueFrom", f"[{i}]"
            )
        if "value" in item and "valueFrom" in item:
            raise InputError(f"env {name} has both value and valueFrom", "one of them", f"[{i}]")
        if set(item) == {"name"} and isinstance(env, Mapping):
            raise InputError(f"env {name} is a mapping without valueFrom", SECRET_KEY_REF, f"[{i}]")
        entry: dict[str, Any] = {"name": name}
        if "valueFrom" in item:
            try:
                entry["valueFrom"] = value_from(item["valueFrom"])
            except InputError as e:
                raise e.at(f"[{i}].valueFrom") from None
        else:
            value = item.get("value", "")
            if isinstance(value, bool) or not isinstance(value, (str, int)):
                raise InputError(
                    f"env {name} value {show(value)} is not a string",
                    "a string (quote numbers and booleans in YAML)",
                    f"[{i}]",
                )
            entry["value"] = str(value)
        out.append(entry)
    return out


def _strings(values: object, what: str) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InputError(f"{what} {show(values)} is not a list of strings", "a list of strings")
    out = []
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise InputError(
                f"{what} entry {show(v)} is not a string", "strings only (quote numbers)", f"[{i}]"
            )
        out.append(v)
    return out


def container_body(c: ContainerArgs, require_image: bool = True) -> dict[str, Any]:
    """A container dict (name, image, command, args, env, resources; keys left out when unset)."""
    try:
        validate_dns1123_label(c.name)
    except InputError as e:
        raise e.at("name") from None
    out: dict[str, Any] = {"name": c.name}
    if c.image is not None:
        if not isinstance(c.image, str) or not c.image.strip() or c.image != c.image.strip():
            raise InputError(
                f"image {show(c.image)} is not an image reference",
                "e.g. 'kserve/image-transformer:v1'",
                "image",
            )
        out["image"] = c.image
    elif require_image:
        raise InputError(f"container {c.name!r} has no image", "an image reference", "image")
    if c.command is not None:
        try:
            out["command"] = _strings(c.command, "command")
        except InputError as e:
            raise e.at("command") from None
    if c.args is not None:
        try:
            out["args"] = _strings(c.args, "args")
        except InputError as e:
            raise e.at("args") from None
    if c.env is not None:
        try:
            out["env"] = env_list(c.env)
        except InputError as e:
            raise e.at("env") from None
    res = resources_of(c)
    if res:
        out["resources"] = res
    return out


def containers_body(
    containers: Sequence[ContainerArgs], require_image: bool = True
) -> list[dict[str, Any]]:
    """Every container, located errors (`containers[1].cpu`), names unique."""
    out = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        try:
            body = container_body(c, require_image)
        except InputError as e:
            raise e.at(f"containers[{i}]") from None
        if body["name"] in seen:
            raise InputError(
                f"container name {body['name']!r} is used twice",
                "unique container names",
                f"containers[{i}].name",
            )
        seen.add(body["name"])
        out.append(body)
    return out


def effective_placement(
    placement: Optional[Placement],
    extra_expressions: Optional[Sequence[NodeSelectorRequirement]] = None,
    omit_gpu_toleration: Optional[bool] = False,
    requests_gpus: bool = False,
) -> Optional[Placement]:
    """The placement a component's pods get: the pool's, plus its own node-affinity expressions
    (ANDed into every term), minus the `nvidia.com/gpu` toleration when the caller relies on
    ExtendedResourceToleration to add it (only for GPU-requesting pods: others never get it)."""
    if omit_gpu_toleration and not requests_gpus:
        raise InputError(
            "omitGpuToleration is set but the component requests no GPU; "
            "ExtendedResourceToleration adds the nvidia.com/gpu toleration only to pods that "
            "request GPUs, so this pod could not land on the GPU pool",
            "omitGpuToleration only together with gpus",
            "omitGpuToleration",
        )
    if placement is not None and not isinstance(placement, Placement):
        raise InputError(
            f"placement {show(placement)} is not a Placement",
            "a pool's `placement` (scheduling.Placement)",
            "placement",
        )
    exprs = list(extra_expressions or ())
    for i, e in enumerate(exprs):
        if not isinstance(e, NodeSelectorRequirement):
            raise InputError(
                f"extra expression {show(e)} is not a NodeSelectorRequirement",
                "scheduling.NodeSelectorRequirement(key, operator, values)",
                f"extraExpressions[{i}]",
            )
    if placement is None and not exprs:
        return None
    result = (placement or Placement()).with_expressions(exprs)
    if omit_gpu_toleration:
        result = result.without_tolerations([GPU_RESOURCE])
    return result


def placement_fields(placement: Optional[Placement]) -> dict[str, Any]:
    """`{nodeSelector, affinity, tolerations}` to merge into a pod spec (empty when None)."""
    return placement.to_pod_spec() if placement is not None else {}


def cr_metadata(
    name: str, namespace: str, labels: Optional[Mapping[str, str]], annotations: Mapping[str, str]
) -> dict[str, Any]:
    """A custom resource's metadata: its name and namespace, the labels validated (an error at
    `labels`), the annotations when there are any."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        try:
            metadata["labels"] = validate_labels(dict(labels))
        except InputError as e:
            raise e.at("labels") from None
    if annotations:
        metadata["annotations"] = dict(annotations)
    return metadata
