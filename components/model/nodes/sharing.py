"""Time-sliced GPUs through the NVIDIA device plugin (EKS node groups, Karpenter pools): the
plugin's named configs and the node label that picks one.

Pure Python (imports no Pulumi). Source: NVIDIA/k8s-device-plugin v0.17.1 README ("Shared Access
to GPUs with CUDA Time-Slicing", "Multiple Config File Example", "Updating Per-Node Configuration
With a Node Label") and its chart's `values.yaml` (`config.map`, `config.default`):

- a config `version: v1` with `sharing.timeSlicing.resources: [{name: nvidia.com/gpu, replicas:
  N}]` makes a node with G GPUs advertise G x N `nvidia.com/gpu` ("If this configuration were
  applied to a node with 8 GPUs on it, the plugin would now advertise 80");
- the chart builds one ConfigMap from `config.map` (name -> config file); `config.default` is the
  config of nodes without the label; a node picks another with the label
  `nvidia.com/device-plugin.config=<name>`.

What a container asking more than one shared `nvidia.com/gpu` gets (v0.17.1
`internal/rm/rm.go`, `ValidateRequest`): with time-slicing the plugin hands out several replicas,
which may be the same physical GPU, unless `sharing.timeSlicing.failRequestsGreaterThanOne` is
true (default false, `api/config/v1/replicas.go`), when it fails the allocation; with MPS
(`sharing.mps`) it always fails it. Our configs set `failRequestsGreaterThanOne: true`, so the
cluster refuses what the placement check refuses (GI023).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import InputError
from .catalog import validate_shared_clients
from .labels import GKE_MAX_CLIENTS_LABEL, GKE_PARTITION_LABEL, GKE_SHARING_LABEL

CONFIG_LABEL = "nvidia.com/device-plugin.config"
DEFAULT_CONFIG = "default"
PLAIN_CONFIG = "version: v1\n"
"""The default: no sharing (each GPU is one `nvidia.com/gpu`)."""


def config_name(replicas: int) -> str:
    """`time-sliced-4`: the config (and node label value) of pools whose GPUs have 4 replicas."""
    return f"time-sliced-{replicas}"


def config_file(replicas: int) -> str:
    """The device plugin config file that time-slices every GPU into `replicas`."""
    return yaml.safe_dump(
        {
            "version": "v1",
            "sharing": {
                "timeSlicing": {
                    "failRequestsGreaterThanOne": True,
                    "resources": [{"name": "nvidia.com/gpu", "replicas": replicas}],
                }
            },
        },
        sort_keys=False,
    )


def validate_replicas(replicas: object, path: str) -> int:
    """2..48 clients per GPU, as GKE allows (one limit for every cloud)."""
    try:
        return validate_shared_clients(replicas)
    except InputError as e:
        raise e.at(path) from None


def plugin_config(replicas: Iterable[int]) -> dict[str, Any]:
    """The chart's `config` values for pools time-sliced into these replica counts."""
    wanted = sorted(set(replicas))
    return {
        "map": {DEFAULT_CONFIG: PLAIN_CONFIG, **{config_name(r): config_file(r) for r in wanted}},
        "default": DEFAULT_CONFIG,
    }


@dataclass(frozen=True)
class PluginSharing:
    """How one device plugin config shares `nvidia.com/gpu`."""

    strategy: str  # "time-slicing" | "mps"
    replicas: int
    refuses_more_than_one: bool  # the plugin fails an allocation of more than 1 replica


def sharing_by_config(config: Mapping[str, Any]) -> dict[str, PluginSharing]:
    """Config name -> how it shares `nvidia.com/gpu`, read from a chart's `config.map` (any
    config a user wrote, not only ours); configs that do not share `nvidia.com/gpu` are left
    out. MPS always refuses more than one replica; time-slicing only with
    `failRequestsGreaterThanOne: true` (see the module docstring)."""
    out: dict[str, PluginSharing] = {}
    files = config.get("map") if isinstance(config, Mapping) else None
    for name, text in (files or {}).items() if isinstance(files, Mapping) else ():
        try:
            data = yaml.safe_load(str(text)) or {}
        except yaml.YAMLError:
            continue
        sharing = data.get("sharing") if isinstance(data, Mapping) else None
        for key, strategy in (("timeSlicing", "time-slicing"), ("mps", "mps")):
            part = sharing.get(key) if isinstance(sharing, Mapping) else None
            resources = part.get("resources") if isinstance(part, Mapping) else None
            for r in resources if isinstance(resources, list) else ():
                if isinstance(r, Mapping) and r.get("name") == "nvidia.com/gpu":
                    n = r.get("replicas")
                    if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                        refuses = strategy == "mps" or (
                            isinstance(part, Mapping)
                            and part.get("failRequestsGreaterThanOne") is True
                        )
                        out[str(name)] = PluginSharing(strategy, n, refuses)
    return out


def replicas_by_config(config: Mapping[str, Any]) -> dict[str, int]:
    """Config name -> `nvidia.com/gpu` replicas (time-slicing or MPS), read from a chart's
    `config.map`; configs that do not share `nvidia.com/gpu` are left out."""
    return {name: s.replicas for name, s in sharing_by_config(config).items()}


GKE_SHARING_STRATEGIES = {"TIME_SHARING": "time-sharing", "MPS": "mps"}
"""GKE's GPU sharing strategy (`guest_accelerator.gpu_sharing_config.gpu_sharing_strategy`) -> the
value of the `gke-gpu-sharing-strategy` node label GKE puts on its nodes (GKE docs "Share GPUs with
multiple workloads using GPU time-sharing" / "... using NVIDIA MPS")."""


def gke_shared_gpus(
    gpus: int, strategy: str | None, clients: int | None, partition: str | None, mig: int
) -> tuple[int, dict[str, str]]:
    """The `nvidia.com/gpu` a GKE node with `gpus` GPUs exposes, and the labels GKE adds, when its
    GPUs are shared (`clients` per GPU, by `strategy`) and partitioned (`partition`, `mig`
    instances per GPU): GKE's device plugin counts each client of each MIG instance as a device.
    One derivation for the node pool the component makes and the one the check reads."""
    added: dict[str, str] = {}
    if clients:
        added[GKE_SHARING_LABEL] = GKE_SHARING_STRATEGIES.get(strategy or "", "time-sharing")
        added[GKE_MAX_CLIENTS_LABEL] = str(clients)
        gpus *= clients
    if partition:
        added[GKE_PARTITION_LABEL] = partition
        gpus *= mig
    return gpus, added
