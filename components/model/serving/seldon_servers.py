"""Seldon Core 2's built-in ServerConfigs `mlserver` and `triton`, as the pinned setup chart
installs them: the server pod a stack ServerConfig starts from (`serverConfigs[].base`) and the
pod the placement check assumes for a Server whose ServerConfig is not in the graph.

Pure data (imports nothing of ours but `versions`). Transcribed from SeldonIO/seldon-core v2.6.0
`k8s/helm-charts/seldon-core-v2-setup/templates/seldon-v2-components.yaml` (the two
`kind: ServerConfig` documents) rendered with that chart's `values.yaml` defaults
(`serverConfig.*`, `security.*`, `opentelemetry.endpoint`; `imagePullSecrets` empty, so the
template writes none). Only the chart is the source: the kustomize copy in the same repository
has other numbers (see FIELD_NOTES).

`builtin_server_config(name)` returns a fresh `{podSpec, volumeClaimTemplates}` each call.
"""

from __future__ import annotations

import copy
from typing import Any

from ..deploy.versions import SELDON_BUILTIN_CAPABILITIES, SELDON_VERSION

SOURCE = (
    "SeldonIO/seldon-core v2.6.0 k8s/helm-charts/seldon-core-v2-setup/templates/"
    "seldon-v2-components.yaml (ServerConfig mlserver / triton) with the chart's values.yaml "
    "defaults"
)
BUILTIN_SERVER_CONFIGS = ("mlserver", "triton")
"""The ServerConfigs the setup chart installs (their names are also their server containers')."""

# values.yaml serverConfig.*.image (registry/repository:tag) and resources (memory limit = request).
IMAGES = {
    "rclone": f"docker.io/seldonio/seldon-rclone:{SELDON_VERSION}",
    "agent": f"docker.io/seldonio/seldon-agent:{SELDON_VERSION}",
    "mlserver": "docker.io/seldonio/mlserver:1.3.5",
    "triton": "nvcr.io/nvidia/tritonserver:23.03-py3",
}
RESOURCES = {
    "rclone": ("50m", "128Mi"),
    "agent": ("200m", "1Gi"),
    "mlserver": ("100m", "1Gi"),
    "triton": ("100m", "1Gi"),
}
MODEL_VOLUME_STORAGE = "1Gi"  # serverConfig.{mlserver,triton}.modelVolumeStorage
TERMINATION_GRACE_PERIOD_SECONDS = 120  # serverConfig.terminationGracePeriodSeconds
SECURITY_CONTEXT = {"fsGroup": 1000, "runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": True}

_PRE_STOP = {"preStop": {"httpGet": {"path": "terminate", "port": 9007}}}
_LIVE = {"httpGet": {"path": "/v2/health/live", "port": "server-http"}}


def _resources(container: str) -> dict[str, Any]:
    cpu, memory = RESOURCES[container]
    return {"limits": {"memory": memory}, "requests": {"cpu": cpu, "memory": memory}}


def _env(pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"name": k, "value": v} for k, v in pairs]


def _field_ref(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


# The agent's env (the template's order; mlserver and triton differ slightly).
_SECURITY_ENV = [
    ("CONTROL_PLANE_SECURITY_PROTOCOL", "PLAINTEXT"),
    ("CONTROL_PLANE_CLIENT_TLS_SECRET_NAME", "seldon-controlplane-client"),
    ("CONTROL_PLANE_SERVER_TLS_SECRET_NAME", "seldon-controlplane-server"),
    ("CONTROL_PLANE_CLIENT_TLS_KEY_LOCATION", "/tmp/certs/cpc/tls.key"),
    ("CONTROL_PLANE_CLIENT_TLS_CRT_LOCATION", "/tmp/certs/cpc/tls.crt"),
    ("CONTROL_PLANE_CLIENT_TLS_CA_LOCATION", "/tmp/certs/cpc/ca.crt"),
    ("CONTROL_PLANE_SERVER_TLS_CA_LOCATION", "/tmp/certs/cps/ca.crt"),
    ("ENVOY_SECURITY_PROTOCOL", "PLAINTEXT"),
    ("ENVOY_UPSTREAM_SERVER_TLS_SECRET_NAME", "seldon-upstream-server"),
    ("ENVOY_UPSTREAM_CLIENT_TLS_SECRET_NAME", "seldon-upstream-client"),
    ("ENVOY_UPSTREAM_SERVER_TLS_KEY_LOCATION", "/tmp/certs/dus/tls.key"),
    ("ENVOY_UPSTREAM_SERVER_TLS_CRT_LOCATION", "/tmp/certs/dus/tls.crt"),
    ("ENVOY_UPSTREAM_SERVER_TLS_CA_LOCATION", "/tmp/certs/dus/ca.crt"),
    ("ENVOY_UPSTREAM_CLIENT_TLS_CA_LOCATION", "/tmp/certs/duc/ca.crt"),
]


def _agent_env(server: str) -> list[dict[str, Any]]:
    head = [
        ("SELDON_SERVER_CAPABILITIES", ",".join(SELDON_BUILTIN_CAPABILITIES[server])),
        ("SELDON_MODEL_INFERENCE_LAG_THRESHOLD", "30"),
        ("SELDON_MODEL_INACTIVE_SECONDS_THRESHOLD", "600"),
        ("SELDON_SCALING_STATS_PERIOD_SECONDS", "20"),
        ("SELDON_OVERCOMMIT_PERCENTAGE", "10"),
        *_SECURITY_ENV,
    ]
    ports = [
        ("SELDON_SERVER_HTTP_PORT", "9000"),
        ("SELDON_SERVER_GRPC_PORT", "9500"),
        ("SELDON_REVERSE_PROXY_HTTP_PORT", "9001"),
        ("SELDON_REVERSE_PROXY_GRPC_PORT", "9501"),
    ]
    if server == "mlserver":
        rest = [
            ("MLSERVER_TRACING_SERVER", "seldon-collector.seldon-mesh:4317"),
            *ports,
            ("SELDON_SCHEDULER_HOST", "seldon-scheduler"),
            ("SELDON_SCHEDULER_PORT", "9005"),
            ("SELDON_SCHEDULER_TLS_PORT", "9055"),
            ("SELDON_METRICS_PORT", "9006"),
            ("SELDON_DRAINER_PORT", "9007"),
            ("AGENT_TLS_SECRET_NAME", ""),
            ("AGENT_TLS_FOLDER_PATH", ""),
            ("SELDON_SERVER_TYPE", "mlserver"),
            ("SELDON_ENVOY_HOST", "seldon-mesh"),
            ("SELDON_ENVOY_PORT", "80"),
        ]
    else:
        rest = [
            *ports,
            ("AGENT_TLS_SECRET_NAME", ""),
            ("AGENT_TLS_FOLDER_PATH", ""),
            ("SELDON_SCHEDULER_HOST", "seldon-scheduler"),
            ("SELDON_SCHEDULER_PORT", "9005"),
            ("SELDON_METRICS_PORT", "9006"),
            ("SELDON_DRAINER_PORT", "9007"),
            ("SELDON_SERVER_TYPE", "triton"),
        ]
    return [
        *_env(head + rest),
        _field_ref("POD_NAME", "metadata.name"),
        _field_ref("POD_NAMESPACE", "metadata.namespace"),
        {
            "name": "MEMORY_REQUEST",
            "valueFrom": {
                "resourceFieldRef": {"containerName": server, "resource": "requests.memory"}
            },
        },
    ]


def _rclone(models: str) -> dict[str, Any]:
    return {
        "image": IMAGES["rclone"],
        "imagePullPolicy": "IfNotPresent",
        "lifecycle": _PRE_STOP,
        "name": "rclone",
        "ports": [{"containerPort": 5572, "name": "rclone", "protocol": "TCP"}],
        "readinessProbe": {
            "failureThreshold": 3,
            "initialDelaySeconds": 5,
            "periodSeconds": 5,
            "successThreshold": 1,
            "tcpSocket": {"port": 5572},
            "timeoutSeconds": 1,
        },
        "resources": _resources("rclone"),
        "volumeMounts": [{"mountPath": "/mnt/agent", "name": models}],
    }


def _agent(server: str, models: str) -> dict[str, Any]:
    return {
        "args": ["--tracing-config-path=/mnt/tracing/tracing.json"],
        "command": ["/bin/agent"],
        "env": _agent_env(server),
        "image": IMAGES["agent"],
        "imagePullPolicy": "IfNotPresent",
        "lifecycle": _PRE_STOP,
        "name": "agent",
        "ports": [
            {"containerPort": 9501, "name": "grpc", "protocol": "TCP"},
            {"containerPort": 9001, "name": "http", "protocol": "TCP"},
            {"containerPort": 9006, "name": "metrics", "protocol": "TCP"},
        ],
        "resources": _resources("agent"),
        "volumeMounts": [
            {"mountPath": "/mnt/agent", "name": models},
            {"mountPath": "/mnt/config", "name": "config-volume"},
            {"mountPath": "/mnt/tracing", "name": "tracing-config-volume"},
        ],
    }


def _server_ports(extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"containerPort": 9500, "name": "server-grpc", "protocol": "TCP"},
        {"containerPort": 9000, "name": "server-http", "protocol": "TCP"},
        *extra,
    ]


def _mlserver() -> dict[str, Any]:
    return {
        "env": _env(
            [
                ("MLSERVER_HTTP_PORT", "9000"),
                ("MLSERVER_GRPC_PORT", "9500"),
                ("MLSERVER_MODELS_DIR", "/mnt/agent/models"),
                ("MLSERVER_MODEL_PARALLEL_WORKERS", "1"),
                ("MLSERVER_LOAD_MODELS_AT_STARTUP", "false"),
                ("MLSERVER_GRPC_MAX_MESSAGE_LENGTH", "1048576000"),
            ]
        ),
        "image": IMAGES["mlserver"],
        "imagePullPolicy": "IfNotPresent",
        "lifecycle": _PRE_STOP,
        "livenessProbe": _LIVE,
        "name": "mlserver",
        "ports": _server_ports([]),
        "readinessProbe": {**_LIVE, "initialDelaySeconds": 5, "periodSeconds": 5},
        "resources": _resources("mlserver"),
        "startupProbe": {**_LIVE, "failureThreshold": 10, "periodSeconds": 10},
        "volumeMounts": [
            {"mountPath": "/mnt/agent", "name": "mlserver-models", "readOnly": True},
            {"mountPath": "/mnt/certs", "name": "downstream-ca-certs", "readOnly": True},
        ],
    }


def _triton() -> dict[str, Any]:
    return {
        "args": [
            "--model-repository=$(SERVER_MODELS_DIR)",
            "--http-port=$(SERVER_HTTP_PORT)",
            "--grpc-port=$(SERVER_GRPC_PORT)",
            "--log-verbose=1",
            "--model-control-mode=explicit",
            "--backend-config=python,shm-default-byte-size=16777216",
        ],
        "command": ["/opt/tritonserver/bin/tritonserver"],
        "env": _env(
            [
                ("SERVER_HTTP_PORT", "9000"),
                ("SERVER_GRPC_PORT", "9500"),
                ("SERVER_MODELS_DIR", "/mnt/agent/models"),
                ("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"),
            ]
        ),
        "image": IMAGES["triton"],
        "imagePullPolicy": "IfNotPresent",
        "lifecycle": _PRE_STOP,
        "livenessProbe": _LIVE,
        "name": "triton",
        "ports": _server_ports([{"containerPort": 8002, "name": "server-metrics"}]),
        "readinessProbe": {**_LIVE, "initialDelaySeconds": 5, "periodSeconds": 5},
        "resources": _resources("triton"),
        "startupProbe": {**_LIVE, "failureThreshold": 10, "periodSeconds": 10},
        "volumeMounts": [
            {"mountPath": "/mnt/agent", "name": "triton-models", "readOnly": True},
            {"mountPath": "/dev/shm", "name": "dshm", "readOnly": False},
        ],
    }


def _config_volumes() -> list[dict[str, Any]]:
    return [
        {"configMap": {"name": "seldon-agent"}, "name": "config-volume"},
        {"configMap": {"name": "seldon-tracing"}, "name": "tracing-config-volume"},
    ]


def models_volume(server: str) -> str:
    """The volume claim template the built-in ServerConfig mounts at /mnt/agent (model store)."""
    return f"{server}-models"


def builtin_server_config(server: str) -> dict[str, Any]:
    """`{podSpec, volumeClaimTemplates}` of the built-in ServerConfig `server` (mlserver or
    triton), as the pinned chart installs it: a fresh copy. Raises KeyError for another name."""
    return copy.deepcopy(_BUILT[server])


def builtin_containers(server: str) -> tuple[dict[str, Any], ...]:
    """The built-in ServerConfig's containers, shared: read them, do not change them (the
    placement check reads them for every Server on Seldon's own ServerConfig)."""
    return _CONTAINERS[server]


def _build(server: str) -> dict[str, Any]:
    models = models_volume(server)
    if server == "mlserver":
        main = _mlserver()
        volumes = [
            {
                "name": "downstream-ca-certs",
                "secret": {"optional": True, "secretName": "seldon-downstream-server"},
            },
            *_config_volumes(),
        ]
    else:
        main = _triton()
        volumes = [
            *_config_volumes(),
            {"emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}, "name": "dshm"},
        ]
    pod = {
        "containers": [_rclone(models), _agent(server, models), main],
        "securityContext": dict(SECURITY_CONTEXT),
        "serviceAccountName": "seldon-server",
        "terminationGracePeriodSeconds": TERMINATION_GRACE_PERIOD_SECONDS,
        "volumes": volumes,
    }
    claims = [
        {
            "name": models,
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": MODEL_VOLUME_STORAGE}},
            },
        }
    ]
    return {"podSpec": pod, "volumeClaimTemplates": claims}


_BUILT = {server: _build(server) for server in BUILTIN_SERVER_CONFIGS}
_CONTAINERS = {server: tuple(_BUILT[server]["podSpec"]["containers"]) for server in _BUILT}
