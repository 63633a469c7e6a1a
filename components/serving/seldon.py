"""Seldon Core 2 `ServerConfig`, `Server` and `Model` (mlops.seldon.io/v1alpha1), placed on pools.

Seed 004 is the reference: a Server (or a ServerConfig, for every Server using it) carries the
pool's placement in `podSpec` (nodeSelector or required node affinity, plus tolerations), and
overrides the container named as in its ServerConfig (e.g. `mlserver`) with GPU resources. Models
reach GPU servers by capability (`requirements` matching a Server's `extraCapabilities`, or the
ServerConfig agent's `SELDON_SERVER_CAPABILITIES`; recommended) or by explicit `server` pinning.

The CR bodies are pure functions (`server_config_body`, `server_body`, `model_body`); the
components are thin shells. Seed 004 shows some resources only in part (a Server without
`serverConfig`, Models without `storageUri`): those are produced as written, and the component
logs a warning naming the field the upstream CRD requires (`missing_required_fields`).

Seldon Core 2 is under the Business Source License 1.1 from v2.7.0 on; the CRDs this targets are
v2.6.0's (Apache-2.0).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..kube.provider import create_opts, owned
from ..model.deploy.versions import SELDON_BUILTIN_CAPABILITIES
from ..model.errors import InputError, show
from ..model.inputs import check_declared, stack
from ..model.nodes.catalog import MAX_REPLICAS
from ..model.scheduling import (
    NodeSelectorRequirement,
    Placement,
    validate_dns1123_label,
    validate_label_key,
    validate_labels,
)
from ..model.serving.annotations import SELDON_CAPABILITIES_ENV
from ..model.serving.seldon_servers import BUILTIN_SERVER_CONFIGS, builtin_server_config
from .workload import (
    ContainerArgs,
    containers_body,
    effective_placement,
    placement_fields,
    quantity,
    requested_resources,
    resource_warnings,
)

API_VERSION = "mlops.seldon.io/v1alpha1"
DEFAULT_NAMESPACE = "seldon-mesh"
AGENT_CONTAINER = "agent"
# The containers of the ServerConfigs the seldon-core-v2-runtime chart installs.
UPSTREAM_SERVER_CONFIG_CONTAINERS: dict[str, tuple[str, ...]] = {
    "mlserver": ("rclone", "agent", "mlserver"),
    "triton": ("rclone", "agent", "triton"),
}
# Fields the v2.6.0 CRDs require (spec.required).
REQUIRED_SPEC_FIELDS: dict[str, tuple[str, ...]] = {
    "ServerConfig": ("podSpec", "volumeClaimTemplates"),
    "Server": ("serverConfig",),
    "Model": ("storageUri",),
}
BUILTIN_CAPABILITIES = SELDON_BUILTIN_CAPABILITIES
_CAPABILITY = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")
CAPABILITY_RULE = "letters, digits, '-', '_' or '.', no commas or spaces (e.g. 'model-on-gpu')"


@dataclass
class SeldonServerConfigArgs:
    """Inputs of a `SeldonServerConfig` (a pod template every Server referencing it uses)."""

    name: Optional[str] = field(
        default=None,
        metadata=stack(
            required=True,
            syntax="dns1123",
            doc="metadata.name, unique among the serverConfigs, what Servers name in "
            "`serverConfig`; Seldon's own `mlserver` or `triton` only with `replacesBuiltin`.",
        ),
    )
    """metadata.name; default: the component's name."""
    namespace: Optional[str] = field(
        default=DEFAULT_NAMESPACE, metadata=stack(source="seldon.namespace")
    )
    """The Seldon runtime namespace."""
    annotations: Optional[Mapping[str, str]] = field(default=None, metadata=stack(hidden=True))
    """metadata.annotations."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """metadata.labels."""
    base: Optional[str] = field(default=None, metadata=stack(choices=BUILTIN_SERVER_CONFIGS))
    """Start from Seldon's built-in ServerConfig (`mlserver` or `triton`) as the pinned chart
    installs it (its rclone, agent and server containers, volumes, security context and model
    volume claim); `containers` then override its containers by name (an image only for a new
    one) and `capabilities` add to its server's."""
    containers: Optional[Sequence[ContainerArgs]] = field(
        default=None,
        metadata=stack(
            min_items=1,
            default="required without `base`",
            doc="The server pod's containers, each with an image: Seldon's `agent` and `rclone` "
            "and the server's (with `base`, overrides of its containers by name).",
        ),
    )
    """The pod's containers (name, image, env, GPU/CPU/memory); with `base`, overrides of its
    containers by name."""
    capabilities: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="capabilities")
    )
    """Capabilities added to the server's own list (`BUILTIN_CAPABILITIES` of its mlserver or
    triton container) in the agent container's SELDON_SERVER_CAPABILITIES (seed 004)."""
    replace_capabilities: Optional[bool] = False
    """`capabilities` is the whole list instead (the server's own are dropped)."""
    agent_image: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """Image of the `agent` container added for `capabilities` when `containers` has none."""
    model_repository_storage: Optional[str] = field(
        default=None, metadata=stack(syntax="quantity", value="100Gi")
    )
    """Size of the `model-repository` volume claim template (the CRD requires
    volumeClaimTemplates; seed 004 leaves it out); with `base`, of its `<base>-models` claim
    (Seldon's own is 1Gi)."""
    placement: Optional[Placement] = field(default=None, metadata=stack(hidden=True))
    """Where the servers land: a node pool's `placement`."""
    extra_expressions: Optional[Sequence[NodeSelectorRequirement]] = None
    """Required node-affinity expressions `{key, operator, values}` ANDed with the pool's:
    `In` / `NotIn` (values), `Exists` / `DoesNotExist` (none), `Gt` / `Lt` (one integer)."""
    omit_gpu_toleration: Optional[bool] = False
    """Leave out the `nvidia.com/gpu` toleration and rely on the ExtendedResourceToleration
    admission plugin to add it (GKE, EKS and AKS run it; refused where the cluster does not):
    GPU-requesting pods only."""
    host_ipc: Optional[bool] = field(default=None, metadata=stack(hidden=True))
    """Run the server pods in the host's IPC namespace (GKE MPS pools need `hostIPC: true`)."""


@dataclass
class SeldonServerArgs:
    """Inputs of a `SeldonServer`."""

    name: Optional[str] = field(
        default=None,
        metadata=stack(
            required=True,
            syntax="server-name",
            doc="metadata.name, unique among the servers; at most 52 characters, as the "
            "StatefulSet's pods get the label `controller-revision-hash: <name>-<hash>`, which "
            "must fit 63 (kubernetes/kubernetes#64023).",
        ),
    )
    """metadata.name; default: the component's name."""
    namespace: Optional[str] = field(
        default=DEFAULT_NAMESPACE, metadata=stack(source="seldon.namespace")
    )
    """The Seldon runtime namespace."""
    annotations: Optional[Mapping[str, str]] = field(default=None, metadata=stack(hidden=True))
    """metadata.annotations."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """metadata.labels."""
    server_config: Optional[str] = field(
        default=None,
        metadata=stack(
            syntax="dns1123",
            value="mlserver",
            doc="The ServerConfig it uses (the CRD requires one): a declared serverConfig, or "
            "Seldon's built-in `mlserver` / `triton`, which need no serverConfig of ours (give "
            "the Server `pool` or `placement`, `capabilities` and resources; seed 004's "
            "`{name, serverConfig: mlserver, capabilities: [model-on-gpu], placement: {}}`).",
        ),
    )
    """The ServerConfig it uses (e.g. `mlserver`); the CRD requires it."""
    replicas: Optional[int] = field(default=None, metadata=stack(ge=0, le=MAX_REPLICAS, value=1))
    """Number of server replicas (Seldon's default 1)."""
    min_replicas: Optional[int] = field(default=None, metadata=stack(ge=0, le=MAX_REPLICAS))
    """Minimum replicas (autoscaling)."""
    max_replicas: Optional[int] = field(default=None, metadata=stack(ge=1, le=MAX_REPLICAS))
    """Maximum replicas (autoscaling)."""
    extra_capabilities: Optional[Sequence[str]] = field(
        default=None, metadata=stack("capabilities", syntax="capabilities")
    )
    """Capabilities added to the ServerConfig's (the Server's `extraCapabilities`), what Models'
    `requirements` match."""
    capabilities: Optional[Sequence[str]] = field(default=None, metadata=stack(hidden=True))
    """Capabilities replacing the ServerConfig's."""
    containers: Optional[Sequence[ContainerArgs]] = field(default=None, metadata=stack(hidden=True))
    """Overrides of the ServerConfig's containers, by name (e.g. `mlserver` with GPUs)."""
    server_config_containers: Optional[Sequence[str]] = field(
        default=None, metadata=stack(hidden=True)
    )
    """Container names of the referenced ServerConfig (a SeldonServerConfig's
    `container_names`); known already for the upstream `mlserver` and `triton`."""
    placement: Optional[Placement] = field(default=None, metadata=stack(hidden=True))
    """Where the server pods land: a node pool's `placement`."""
    extra_expressions: Optional[Sequence[NodeSelectorRequirement]] = None
    """Required node-affinity expressions `{key, operator, values}` ANDed with the pool's:
    `In` / `NotIn` (values), `Exists` / `DoesNotExist` (none), `Gt` / `Lt` (one integer), e.g.
    seed 004's `Gt`."""
    omit_gpu_toleration: Optional[bool] = False
    """Leave out the `nvidia.com/gpu` toleration and rely on the ExtendedResourceToleration
    admission plugin to add it (GKE, EKS and AKS run it; refused where the cluster does not):
    GPU-requesting pods only."""
    host_ipc: Optional[bool] = field(default=None, metadata=stack(hidden=True))
    """Run the server pods in the host's IPC namespace (GKE MPS pools need `hostIPC: true`)."""


@dataclass
class SeldonModelArgs:
    """Inputs of a `SeldonModel`."""

    name: Optional[str] = field(
        default=None,
        metadata=stack(
            required=True, syntax="dns1123", doc="metadata.name, unique among the models."
        ),
    )
    """metadata.name; default: the component's name."""
    namespace: Optional[str] = field(
        default=DEFAULT_NAMESPACE, metadata=stack(source="seldon.namespace")
    )
    """The Seldon runtime namespace."""
    annotations: Optional[Mapping[str, str]] = field(default=None, metadata=stack(hidden=True))
    """metadata.annotations."""
    labels: Optional[Mapping[str, str]] = field(default=None, metadata=stack(syntax="labels"))
    """metadata.labels."""
    storage_uri: Optional[str] = field(
        default=None, metadata=stack(required=True, syntax="storage-uri")
    )
    """Where the model artifacts are; the CRD requires it."""
    requirements: Optional[Sequence[str]] = field(
        default=None, metadata=stack(syntax="capabilities")
    )
    """Capabilities a server must have to load it (recommended way to reach GPU servers)."""
    server: Optional[str] = None
    """Pin to this Server, which must be declared (no fallback to another server when it cannot
    load, even with `requirements`)."""
    replicas: Optional[int] = field(default=None, metadata=stack(ge=1, le=MAX_REPLICAS))
    """Model replicas (Seldon's default 1)."""
    min_replicas: Optional[int] = field(default=None, metadata=stack(ge=0, le=MAX_REPLICAS))
    """Minimum replicas (autoscaling)."""
    max_replicas: Optional[int] = field(default=None, metadata=stack(ge=1, le=MAX_REPLICAS))
    """Maximum replicas (autoscaling)."""
    memory: Optional[str] = field(default=None, metadata=stack(syntax="quantity"))
    """Memory the model needs (`"20Gi"`), used by the scheduler to pick a server."""


# ---------------------------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------------------------


def _metadata(name: str, args: Any) -> dict[str, Any]:
    obj_name = args.name or name
    namespace = args.namespace
    try:
        validate_dns1123_label(obj_name)
    except InputError as e:
        raise e.at("name") from None
    ns = namespace or DEFAULT_NAMESPACE
    try:
        validate_dns1123_label(ns)
    except InputError as e:
        raise e.at("namespace") from None
    out: dict[str, Any] = {"name": obj_name, "namespace": ns}
    if args.labels:
        try:
            out["labels"] = validate_labels(dict(args.labels))
        except InputError as e:
            raise e.at("labels") from None
    if args.annotations:
        annotations: dict[str, str] = {}
        for k, v in dict(args.annotations).items():
            try:
                validate_label_key(k)
            except InputError as e:
                raise e.at(f"annotations.{k}") from None
            if not isinstance(v, str):
                raise InputError(
                    f"annotation {k} value {show(v)} is not a string", "a string", "annotations"
                )
            annotations[k] = v
        out["annotations"] = annotations
    return out


def _capabilities(values: Optional[Sequence[str]], path: str) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise InputError(f"{show(values)} is not a list of capabilities", "a list of strings", path)
    out: list[str] = []
    for i, v in enumerate(values):
        if not isinstance(v, str) or not _CAPABILITY.match(v):
            raise InputError(f"capability {show(v)} is not valid", CAPABILITY_RULE, f"{path}[{i}]")
        if v in out:
            raise InputError(f"capability {v!r} is listed twice", "each once", f"{path}[{i}]")
        out.append(v)
    return out


def _replicas(args: Any, fields: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in fields:
        value = getattr(args, f)
        camel = {
            "replicas": "replicas",
            "min_replicas": "minReplicas",
            "max_replicas": "maxReplicas",
        }[f]
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(
                f"{camel} {show(value)} is not a replica count", "an integer 0 or more", camel
            )
        out[camel] = value
    lo, hi = out.get("minReplicas"), out.get("maxReplicas")
    if lo is not None and hi is not None and lo > hi:
        raise InputError(
            f"minReplicas {lo} is above maxReplicas {hi}",
            "minReplicas <= maxReplicas",
            "minReplicas",
        )
    n = out.get("replicas")
    if n is not None and ((lo is not None and n < lo) or (hi is not None and n > hi)):
        raise InputError(
            f"replicas {n} is outside minReplicas..maxReplicas ({lo}..{hi})",
            "minReplicas <= replicas <= maxReplicas",
            "replicas",
        )
    return out


def _requests_gpus(containers: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        "nvidia.com/gpu" in requested_resources(c.get("resources") or {}) for c in containers
    )


def _pod_spec(
    args: Any, containers: list[dict[str, Any]]
) -> tuple[dict[str, Any], Optional[Placement]]:
    placement = effective_placement(
        args.placement, args.extra_expressions, args.omit_gpu_toleration, _requests_gpus(containers)
    )
    pod: dict[str, Any] = placement_fields(placement)
    if args.host_ipc:
        pod["hostIPC"] = True
    if containers:
        pod["containers"] = containers
    return pod, placement


def _merge_container(base: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """`own` over a base container: its keys win, `env` entries replace the base's of the same
    name (the rest are appended), `resources` requests / limits merge key by key."""
    out = dict(base)
    for key, value in own.items():
        if key == "env":
            names = {e["name"] for e in value}
            out["env"] = [e for e in base.get("env", []) if e["name"] not in names] + list(value)
        elif key == "resources":
            merged = {part: dict(v) for part, v in (base.get("resources") or {}).items()}
            for part, amounts in value.items():
                merged[part] = {**merged.get(part, {}), **amounts}
            out["resources"] = merged
        else:
            out[key] = value
    return out


def _based_containers(base: str, containers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The base ServerConfig's containers with these merged in by name; new ones appended."""
    mine = {c["name"]: c for c in containers}
    out = []
    for c in builtin_server_config(base)["podSpec"]["containers"]:
        out.append(_merge_container(c, mine.pop(c["name"])) if c["name"] in mine else c)
    for i, c in enumerate(containers):
        if c["name"] in mine and "image" not in c:
            raise InputError(
                f"container {c['name']!r} is not one of the {base} ServerConfig's, so it is a "
                "new container and needs an image",
                "an image, or the name of one of its containers: "
                + ", ".join(b["name"] for b in out),
                f"containers[{i}].image",
            )
    return out + [c for c in containers if c["name"] in mine]


def _base_capabilities(
    containers: list[dict[str, Any]], base: str, caps: list[str], replace: bool
) -> None:
    """Set the base agent's SELDON_SERVER_CAPABILITIES: its server's plus `caps` (or `caps`)."""
    builtin = list(BUILTIN_CAPABILITIES[base])
    value = caps if replace else builtin + [c for c in caps if c not in builtin]
    for c in containers:
        if c["name"] == AGENT_CONTAINER:
            c["env"] = [
                {"name": SELDON_CAPABILITIES_ENV, "value": ",".join(value)}
                if e["name"] == SELDON_CAPABILITIES_ENV
                else e
                for e in c["env"]
            ]


def server_config_body(name: str, args: SeldonServerConfigArgs) -> dict[str, Any]:
    """The ServerConfig CR as a plain dict. Raises InputError (path relative to the args)."""
    check_declared(args, "", keys=True)
    metadata = _metadata(name, args)
    if args.base is not None:
        return _based_server_config(metadata, args)
    containers = containers_body(list(args.containers or ()))
    caps = _capabilities(args.capabilities, "capabilities")
    if caps and not args.replace_capabilities:
        runtime = next((c["name"] for c in containers if c["name"] in BUILTIN_CAPABILITIES), None)
        if runtime is None:
            raise InputError(
                "capabilities are added to the server's own list, known only for an mlserver or "
                "triton container, and there is neither",
                "an mlserver or triton container, or replace_capabilities with the whole list",
                "capabilities",
            )
        base = list(BUILTIN_CAPABILITIES[runtime])
        caps = base + [c for c in caps if c not in base]
    if caps:
        env = {"name": SELDON_CAPABILITIES_ENV, "value": ",".join(caps)}
        agent = next((c for c in containers if c["name"] == AGENT_CONTAINER), None)
        if agent is None:
            if not args.agent_image:
                raise InputError(
                    "capabilities are given but there is no agent container to carry them",
                    "agentImage (an `agent` container is added), or an `agent` container",
                    "agentImage",
                )
            containers.append({"name": AGENT_CONTAINER, "env": [env], "image": args.agent_image})
        else:
            if any(e["name"] == SELDON_CAPABILITIES_ENV for e in agent.get("env", [])):
                raise InputError(
                    f"the agent container sets {SELDON_CAPABILITIES_ENV} and capabilities are given too",
                    "one of them",
                    "capabilities",
                )
            agent.setdefault("env", []).append(env)
    elif args.agent_image:
        raise InputError(
            "agentImage is given without capabilities",
            "agentImage only with capabilities",
            "agentImage",
        )
    if not containers:
        raise InputError(
            "the ServerConfig has no containers (podSpec.containers is required)",
            "containers, or capabilities (+ agentImage)",
            "containers",
        )
    pod, _ = _pod_spec(args, containers)
    spec: dict[str, Any] = {"podSpec": pod}
    if args.model_repository_storage is not None:
        try:
            size = quantity(args.model_repository_storage)
        except InputError as e:
            raise e.at("modelRepositoryStorage") from None
        spec["volumeClaimTemplates"] = [
            {
                "name": "model-repository",
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": size}},
                },
            }
        ]
    return {"apiVersion": API_VERSION, "kind": "ServerConfig", "metadata": metadata, "spec": spec}


def _based_server_config(metadata: dict[str, Any], args: SeldonServerConfigArgs) -> dict[str, Any]:
    """A ServerConfig on Seldon's built-in `args.base`: its pod (containers, volumes, security
    context, service account) with the user's containers, capabilities and placement on top."""
    base = str(args.base)
    if base not in BUILTIN_SERVER_CONFIGS:
        raise InputError(
            f"base {show(base)} is not one of Seldon's built-in ServerConfigs",
            ", ".join(BUILTIN_SERVER_CONFIGS),
            "base",
        )
    if args.agent_image:
        raise InputError(
            "agentImage is given with base, whose agent container is Seldon's",
            "leave agentImage out (override the agent container by name instead)",
            "agentImage",
        )
    own = containers_body(list(args.containers or ()), require_image=False)
    containers = _based_containers(base, own)
    caps = _capabilities(args.capabilities, "capabilities")
    if caps or args.replace_capabilities:
        _base_capabilities(containers, base, caps, bool(args.replace_capabilities))
    template = builtin_server_config(base)
    pod, _ = _pod_spec(args, containers)
    pod = {**{k: v for k, v in template["podSpec"].items() if k != "containers"}, **pod}
    claims = template["volumeClaimTemplates"]
    if args.model_repository_storage is not None:
        try:
            size = quantity(args.model_repository_storage)
        except InputError as e:
            raise e.at("modelRepositoryStorage") from None
        claims[0]["spec"]["resources"]["requests"]["storage"] = size
    spec = {"podSpec": pod, "volumeClaimTemplates": claims}
    return {"apiVersion": API_VERSION, "kind": "ServerConfig", "metadata": metadata, "spec": spec}


def server_body(name: str, args: SeldonServerArgs) -> dict[str, Any]:
    """The Server CR as a plain dict. Raises InputError (path relative to the args)."""
    check_declared(args, "", keys=True)
    metadata = _metadata(name, args)
    spec: dict[str, Any] = _replicas(args, ("replicas", "min_replicas", "max_replicas"))
    if args.server_config is not None:
        try:
            validate_dns1123_label(args.server_config)
        except InputError as e:
            raise e.at("serverConfig") from None
        spec["serverConfig"] = args.server_config
    if args.capabilities is not None:
        spec["capabilities"] = _capabilities(args.capabilities, "capabilities")
    extra = _capabilities(args.extra_capabilities, "extraCapabilities")
    if extra:
        spec["extraCapabilities"] = extra
    containers = containers_body(list(args.containers or ()), require_image=False)
    known = (
        tuple(args.server_config_containers)
        if args.server_config_containers is not None
        else UPSTREAM_SERVER_CONFIG_CONTAINERS.get(args.server_config or "")
    )
    if known is not None:
        for i, c in enumerate(containers):
            if c["name"] not in known and "image" not in c:
                raise InputError(
                    f"container {c['name']!r} overrides no container of ServerConfig "
                    f"{args.server_config!r}; Seldon would add it as a new container without "
                    "an image",
                    ", ".join(known) + " (or give an image to add a container)",
                    f"containers[{i}].name",
                )
    pod, _ = _pod_spec(args, containers)
    if pod:
        spec["podSpec"] = pod
    return {"apiVersion": API_VERSION, "kind": "Server", "metadata": metadata, "spec": spec}


def model_body(name: str, args: SeldonModelArgs) -> dict[str, Any]:
    """The Model CR as a plain dict. Raises InputError (path relative to the args)."""
    check_declared(args, "", keys=True)
    metadata = _metadata(name, args)
    spec: dict[str, Any] = {}
    if args.storage_uri is not None:
        if not isinstance(args.storage_uri, str) or "://" not in args.storage_uri:
            raise InputError(
                f"storage URI {show(args.storage_uri)} has no scheme",
                "gs://, s3://, https:// ... (rclone remotes)",
                "storageUri",
            )
        spec["storageUri"] = args.storage_uri
    if args.server is not None:
        try:
            validate_dns1123_label(args.server)
        except InputError as e:
            raise e.at("server") from None
        spec["server"] = args.server
    reqs = _capabilities(args.requirements, "requirements")
    if reqs:
        spec["requirements"] = reqs
    spec.update(_replicas(args, ("replicas", "min_replicas", "max_replicas")))
    if args.memory is not None:
        try:
            spec["memory"] = quantity(args.memory)
        except InputError as e:
            raise e.at("memory") from None
    return {"apiVersion": API_VERSION, "kind": "Model", "metadata": metadata, "spec": spec}


def validate_seldon_server_config_args(name: str, args: SeldonServerConfigArgs) -> None:
    """Every input checked before anything is registered (raises InputError)."""
    server_config_body(name, args)


def validate_seldon_server_args(name: str, args: SeldonServerArgs) -> None:
    """Every input checked before anything is registered (raises InputError)."""
    server_body(name, args)


def validate_seldon_model_args(name: str, args: SeldonModelArgs) -> None:
    """Every input checked before anything is registered (raises InputError)."""
    model_body(name, args)


def missing_required_fields(body: Mapping[str, Any]) -> list[str]:
    """spec fields the upstream CRD requires that this body leaves out."""
    spec = body.get("spec") or {}
    return [f for f in REQUIRED_SPEC_FIELDS.get(str(body.get("kind")), ()) if f not in spec]


def body_warnings(body: Mapping[str, Any]) -> list[str]:
    """What the API server or the pods will refuse later, said now."""
    out = [
        f"spec.{f} is left out but the {body['kind']} CRD requires it: the API server will "
        "refuse this object until it is set"
        for f in missing_required_fields(body)
    ]
    pod = (body.get("spec") or {}).get("podSpec") or {}
    for c in pod.get("containers") or ():
        out += [f"container {c['name']}: {w}" for w in resource_warnings(c.get("resources") or {})]
    if body.get("kind") == "Server" and (body.get("spec") or {}).get("replicas") == 0:
        out.append("replicas 0: older Seldon Core 2 releases silently run 1 replica instead")
    return out


def server_config_capabilities(config: Optional[Mapping[str, Any]]) -> list[str]:
    """The capabilities a ServerConfig's agent advertises (SELDON_SERVER_CAPABILITIES)."""
    if not config:
        return []
    for c in (config.get("spec") or {}).get("podSpec", {}).get("containers") or ():
        if c.get("name") == AGENT_CONTAINER:
            for e in c.get("env") or ():
                if e.get("name") == SELDON_CAPABILITIES_ENV:
                    return [x for x in str(e.get("value", "")).split(",") if x]
    return []


def server_capabilities(
    server: Mapping[str, Any], config: Optional[Mapping[str, Any]] = None
) -> list[str]:
    """What a Server advertises: its `capabilities` (else the ServerConfig's), plus
    `extraCapabilities`."""
    spec = server.get("spec") or {}
    base = (
        list(spec["capabilities"]) if "capabilities" in spec else server_config_capabilities(config)
    )
    return base + [c for c in spec.get("extraCapabilities") or () if c not in base]


def model_fits_server(
    model: Mapping[str, Any], server: Mapping[str, Any], config: Optional[Mapping[str, Any]] = None
) -> bool:
    """Whether Seldon's scheduler may load `model` on `server`: the pinned server if any, and
    every requirement among the server's capabilities."""
    spec = model.get("spec") or {}
    if spec.get("server") and spec["server"] != server["metadata"]["name"]:
        return False
    if spec.get("server") and not spec.get("requirements"):
        return True
    return set(spec.get("requirements") or ()) <= set(server_capabilities(server, config))


# ---------------------------------------------------------------------------------------------
# Components
# ---------------------------------------------------------------------------------------------


def _register(
    component: pulumi.ComponentResource, name: str, body: Mapping[str, Any]
) -> k8s.apiextensions.CustomResource:
    for w in body_warnings(body):
        pulumi.log.warn(f"{body['kind']}({body['metadata']['name']!r}): {w}", resource=component)
    return k8s.apiextensions.CustomResource(
        name,
        api_version=API_VERSION,
        kind=str(body["kind"]),
        metadata=owned(body["metadata"]),
        spec=dict(body["spec"]),
        opts=create_opts(component),
    )


class _SeldonComponent(pulumi.ComponentResource):
    name: pulumi.Output[str]
    namespace: pulumi.Output[str]

    def _outputs(self, body: Mapping[str, Any]) -> None:
        self.name = pulumi.Output.from_input(str(body["metadata"]["name"]))
        self.namespace = pulumi.Output.from_input(str(body["metadata"]["namespace"]))
        self.register_outputs({"name": self.name, "namespace": self.namespace})


class SeldonServerConfig(_SeldonComponent):
    """A Seldon Core 2 ServerConfig: the pod template (placement, containers, capabilities)."""

    name: pulumi.Output[str]
    """metadata.name of the CR."""
    namespace: pulumi.Output[str]
    """Its namespace."""

    def __init__(
        self, name: str, args: SeldonServerConfigArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            body = server_config_body(name, args)
        except InputError as e:
            raise e.at(f"SeldonServerConfig({name!r})") from None
        super().__init__("gpu-inference:index:SeldonServerConfig", name, None, opts)
        self.manifest: dict[str, Any] = body  # plain attribute, known before deploy
        self.config_name: str = body["metadata"]["name"]
        self.container_names = [c["name"] for c in body["spec"]["podSpec"]["containers"]]
        self.capabilities = server_config_capabilities(body)
        self.placement = Placement.from_pod_spec(body["spec"]["podSpec"])
        self.cr = _register(self, name, body)
        self._outputs(body)


class SeldonServer(_SeldonComponent):
    """A Seldon Core 2 Server: replicas of a ServerConfig, placed on a pool, with capabilities."""

    name: pulumi.Output[str]
    """metadata.name of the CR."""
    namespace: pulumi.Output[str]
    """Its namespace."""

    def __init__(
        self, name: str, args: SeldonServerArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            body = server_body(name, args)
        except InputError as e:
            raise e.at(f"SeldonServer({name!r})") from None
        super().__init__("gpu-inference:index:SeldonServer", name, None, opts)
        self.manifest: dict[str, Any] = body  # plain attribute, known before deploy
        self.server_name: str = body["metadata"]["name"]
        self.extra_capabilities = list(body["spec"].get("extraCapabilities") or ())
        self.placement = Placement.from_pod_spec(body["spec"].get("podSpec"))
        self.cr = _register(self, name, body)
        self._outputs(body)


class SeldonModel(_SeldonComponent):
    """A Seldon Core 2 Model, reaching servers by capability `requirements` or `server` pinning."""

    name: pulumi.Output[str]
    """metadata.name of the CR."""
    namespace: pulumi.Output[str]
    """Its namespace."""

    def __init__(
        self, name: str, args: SeldonModelArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            body = model_body(name, args)
        except InputError as e:
            raise e.at(f"SeldonModel({name!r})") from None
        super().__init__("gpu-inference:index:SeldonModel", name, None, opts)
        self.manifest: dict[str, Any] = body  # plain attribute, known before deploy
        self.model_name: str = body["metadata"]["name"]
        self.cr = _register(self, name, body)
        self._outputs(body)
