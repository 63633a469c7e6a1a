"""What a pod asks a node for, as kube-scheduler computes it, and what the serving controllers add
to the pods they make.

Pure: imports nothing but `components.model`.

The rule (k8s.io/component-helpers v0.36.3 `resource/helpers.go`, `PodRequests`): the sum of the
regular containers' requests, and of the sidecars (init containers with `restartPolicy: Always`);
each other init container runs alone beside the sidecars started before it, so the pod needs at
least the largest of those; then the pod overhead. A container that gives a limit and no request
is requested its limit (the API server's defaulting, `pkg/apis/core/v1/defaults.go`
`SetDefaults_Pod`). Every pod takes one of the node's `pods`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING
from typing import Any

from ..nodes.shapes import RESOURCE_NAMES, Resources
from ..scheduling.quantities import parse_quantity
from .seldon_servers import builtin_containers

_BY_K8S = {v: k for k, v in RESOURCE_NAMES.items()}


def _as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def container_requests(container: Mapping[str, Any]) -> Resources:
    """One container's requests (its limits where it gives no request). Raises InputError for
    a quantity Kubernetes would refuse."""
    res = _as_map(container.get("resources"))
    requests, limits = _as_map(res.get("requests")), _as_map(res.get("limits"))
    amounts: dict[str, int] = {}
    for k8s_name, field_name in _BY_K8S.items():
        if k8s_name == "pods":
            continue
        q = requests.get(k8s_name, limits.get(k8s_name))
        if q is None:
            continue
        milli = k8s_name == "cpu"
        if type(q) is str or type(q) is int:
            amounts[field_name] = _amount(q, milli)
        else:
            amounts[field_name] = _amount.__wrapped__(q, milli)
    return Resources(**amounts)


@functools.lru_cache(maxsize=4096, typed=True)
def _amount(q: Any, milli: bool) -> int:
    """A quantity in whole units (millicores for cpu), rounded up: remembered for the strings and
    ints every pod of a stack repeats. Raises InputError for one Kubernetes would refuse."""
    value = parse_quantity(q)
    return int((value * (1000 if milli else 1)).to_integral_value(rounding=ROUND_CEILING))


def _sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def pod_requests(
    containers: Iterable[Mapping[str, Any]],
    init_containers: Iterable[Mapping[str, Any]] = (),
    overhead: Mapping[str, Any] | None = None,
) -> Resources:
    """The pod's effective requests, `pods` 1 (see the module docstring)."""
    total = Resources()
    for c in containers:
        total = total + container_requests(c)
    started = Resources()  # sidecars started so far
    init = Resources()
    for c in init_containers:
        asked = container_requests(c)
        if _sidecar(c):
            total = total + asked
            started = started + asked
            init = init.max(started)
        else:
            init = init.max(asked + started)
    total = total.max(init)
    if overhead:
        total = total + container_requests({"resources": {"requests": overhead}})
    return total + Resources(pods=1)


@dataclass(frozen=True)
class AddedContainer:
    """A container a controller adds to the pods it makes, with its default requests and
    limits."""

    name: str
    requests: Mapping[str, str]
    init: bool
    source: str
    limits: Mapping[str, str] = field(default_factory=dict)

    def as_container(self) -> dict[str, Any]:
        resources: dict[str, Any] = {"requests": dict(self.requests)}
        if self.limits:
            resources["limits"] = dict(self.limits)
        return {"name": self.name, "resources": resources}


QUEUE_PROXY = AddedContainer(
    "queue-proxy",
    {"cpu": "25m"},
    init=False,
    source="knative.dev/serving v0.50.0 (knative-v1.23.0) pkg/deployment/config.go defaultConfig "
    "(QueueSidecarCPURequest 25m; no other request or limit unless config-deployment or "
    "queueproxy.resource-defaults gives one: `queue_proxy`)",
)
"""Knative Serving's sidecar in every revision's pods (Serverless InferenceServices), under
Knative's default configuration."""

_QUEUE_RESOURCES = (
    # (resource, config-deployment keys (legacy first, as NewConfigFromMap reads them: the later
    # wins), annotation suffix, the resource-defaults request and limit)
    ("cpu", "CPU", "cpu", "25m", "1000m"),
    ("memory", "Memory", "memory", "400Mi", "800Mi"),
    ("ephemeral-storage", "EphemeralStorage", "ephemeral-storage", None, None),
)
QUEUE_ANNOTATION = "queue.sidecar.serving.knative.dev/{resource}-resource-{part}"
"""pkg/apis/serving/register.go QueueSidecar*ResourceRequestAnnotationKey / ...LimitAnnotationKey."""


def queue_proxy(
    features: Mapping[str, str],
    deployment: Mapping[str, str],
    annotations: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The queue-proxy container Knative Serving v1.23.0 adds to a revision's pods, with its
    requests and limits (pkg/reconciler/revision/resources/queue.go createQueueResources): the
    `config-deployment` value (`queue-sidecar-cpu-request`, or the legacy `queueSidecarCPURequest`;
    the cpu request is 25m when neither is set), else Knative's defaults (requests cpu 25m,
    memory 400Mi, limits cpu 1000m, memory 800Mi; no ephemeral storage) when `config-features`
    `queueproxy.resource-defaults` is `enabled` (any case), else none; the revision's
    `queue.sidecar.serving.knative.dev/<resource>-resource-request` / `-limit` annotations win.
    The deprecated `resource-percentage` annotation is not read. Quantities are kept as given
    (the pod's ask parses them)."""
    defaults = str(features.get("queueproxy.resource-defaults", "")).lower() == "enabled"
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    for resource, camel, dashed, request_default, limit_default in _QUEUE_RESOURCES:
        for part, out, default in (
            ("request", requests, request_default),
            ("limit", limits, limit_default),
        ):
            value = None
            for key in (f"queueSidecar{camel}{part.title()}", f"queue-sidecar-{dashed}-{part}"):
                if deployment.get(key) not in (None, ""):
                    value = str(deployment[key])
            if value is None and (defaults or (resource == "cpu" and part == "request")):
                value = default
            given = (annotations or {}).get(QUEUE_ANNOTATION.format(resource=dashed, part=part))
            if given not in (None, ""):
                value = str(given)
            if value is not None:
                out[resource] = value
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {"name": QUEUE_PROXY.name, "resources": resources}


STORAGE_INITIALIZER = AddedContainer(
    "storage-initializer",
    {"cpu": "100m", "memory": "100Mi"},
    init=True,
    source="kserve/kserve v0.20.0 charts/kserve-resources/values.yaml "
    "(kserve.storage.resources: requests cpu 100m, memory 100Mi; limits cpu 1, memory 1Gi), the "
    "ClusterStorageContainer `default` (files/common/storagecontainer-patch.yaml), patched over "
    "the `storageInitializer` config's same values (storage_initializer_injector.go "
    "CommonStorageInitialization)",
    limits={"cpu": "1", "memory": "1Gi"},
)
"""KServe's init container that downloads a `storageUri` into the pod before the model starts."""


AGENT = AddedContainer(
    "agent",
    {"cpu": "100m", "memory": "100Mi"},
    init=False,
    source="kserve/kserve v0.20.0 pkg/webhook/admission/pod/agent_injector.go InjectAgent (the "
    "container's resources from the `agent` config: charts/kserve-resources/files/common/"
    "configmap-patch.yaml cpuRequest 100m, memoryRequest 100Mi, cpuLimit 1, memoryLimit 1Gi), "
    "injected for a logger or a batcher",
    limits={"cpu": "1", "memory": "1Gi"},
)
"""KServe's agent sidecar, in the pods of a component with a `logger` or a `batcher`."""

MODELCAR = AddedContainer(
    "modelcar",
    {"cpu": "10m", "memory": "15Mi"},
    init=False,
    source="kserve/kserve v0.20.0 pkg/utils/storage.go CreateModelcarContainer (cpuModelcar 10m, "
    "memoryModelcar 15Mi, requests and limits: charts/kserve-resources/values.yaml "
    "kserve.storage; enableModelcar true)",
    limits={"cpu": "10m", "memory": "15Mi"},
)
"""KServe's modelcar sidecar, serving an `oci://` model image to the model container."""

MODELCAR_INIT = AddedContainer(
    "modelcar-init",
    {"cpu": "10m", "memory": "15Mi"},
    init=True,
    source="kserve/kserve v0.20.0 pkg/utils/storage.go CreateModelcarInitContainer (the same "
    "10m / 15Mi)",
    limits={"cpu": "10m", "memory": "15Mi"},
)
"""The modelcar's init container (pulls the model image before the model starts)."""


def seldon_builtin_containers(server: str) -> list[dict[str, Any]]:
    """The containers of Seldon's built-in ServerConfig `server` (`mlserver` or `triton`) as the
    pinned setup chart makes them (`seldon_servers.builtin_server_config`: rclone 50m/128Mi,
    agent 200m/1Gi, the server 100m/1Gi); the check merges a Server's containers into them by
    name, as Seldon's operator does. Shared dicts: read them, do not change them. Raises KeyError
    for another name."""
    return list(builtin_containers(server))
