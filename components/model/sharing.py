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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from .catalog import validate_shared_clients
from .errors import InputError

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
                "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": replicas}]}
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


def replicas_by_config(config: Mapping[str, Any]) -> dict[str, int]:
    """Config name -> `nvidia.com/gpu` replicas, read from a chart's `config.map` (any config a
    user wrote, not only ours); configs without time-slicing of `nvidia.com/gpu` are left out."""
    out: dict[str, int] = {}
    files = config.get("map") if isinstance(config, Mapping) else None
    for name, text in (files or {}).items() if isinstance(files, Mapping) else ():
        try:
            data = yaml.safe_load(str(text)) or {}
        except yaml.YAMLError:
            continue
        sharing = data.get("sharing") if isinstance(data, Mapping) else None
        slicing = sharing.get("timeSlicing") if isinstance(sharing, Mapping) else None
        resources = slicing.get("resources") if isinstance(slicing, Mapping) else None
        for r in resources if isinstance(resources, list) else ():
            if isinstance(r, Mapping) and r.get("name") == "nvidia.com/gpu":
                n = r.get("replicas")
                if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                    out[str(name)] = n
    return out
