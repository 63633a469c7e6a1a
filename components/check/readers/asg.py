"""Self-managed Auto Scaling groups of nodes (`aws:autoscaling/group:Group`), which gpu-inference
does not make but a hand-written program may: a pool whose nodes carry the labels and taints the
kubelet registers them with, while cluster-autoscaler knows of them only from the group's
`k8s.io/cluster-autoscaler/node-template/...` tags.

What a node registers with is read from its launch template's user data when the graph holds it
(`aws:ec2/launchTemplate:LaunchTemplate` `userData`, base64 or plain: the kubelet flags
`--node-labels` and `--register-with-taints`, as bootstrap.sh `--kubelet-extra-args` and nodeadm's
`kubelet.flags` pass them); the tags add theirs. GPUs per node: the launch template's (or the
mixed instances policy's) instance types in the catalog, else the
`node-template/resources/nvidia.com/gpu` tag.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...model.errors import InputError
from ...model.nodes.catalog import aws_instance_or_none
from ...model.scheduling import GPU_RESOURCE, Taint
from ..contract import LAUNCH_TEMPLATE, NODE_TEMPLATE_TAG, POOL_LABEL
from ..read import (
    Findings,
    PoolDraft,
    as_int,
    as_list,
    as_map,
    resource_id,
)
from ..results import NodeTemplate

_FLAG = re.compile(r"--(node-labels|register-with-taints)[= ]([^\s\"',\]]+(?:,[^\s\"',\]]+)*)")


def asg_tags(entry: Mapping[str, Any]) -> dict[str, str]:
    """The group's own tags (`tags: [{key, value, propagateAtLaunch}]`)."""
    return {
        str(as_map(t).get("key")): str(as_map(t).get("value"))
        for t in as_list(as_map(entry.get("inputs")).get("tags"))
        if as_map(t).get("key")
    }


def _user_data(text: str) -> str:
    try:
        decoded = base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return text
    return decoded


def _launch_template(
    entry: Mapping[str, Any], graph: Sequence[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    inputs = as_map(entry.get("inputs"))
    spec = as_map(inputs.get("launchTemplate")) or as_map(
        as_map(as_map(inputs.get("mixedInstancesPolicy")).get("launchTemplate")).get(
            "launchTemplateSpecification"
        )
    )
    wanted = {str(spec.get(k)) for k in ("name", "launchTemplateName", "id", "launchTemplateId")}
    templates = [e for e in graph if e.get("type") == LAUNCH_TEMPLATE]
    for lt in templates:
        name = str(as_map(lt.get("inputs")).get("name") or lt.get("name"))
        if name in wanted or any(str(lt.get("name")) in w for w in wanted if w != "None"):
            return as_map(lt.get("inputs"))
    return as_map(templates[0].get("inputs")) if len(templates) == 1 else None


def kubelet_registration(
    user_data: str, where: str, out: Findings
) -> tuple[dict[str, str], list[Taint]]:
    """The labels and taints the kubelet flags in a launch template's user data register."""
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    for flag, value in _FLAG.findall(_user_data(user_data)):
        for item in value.split(","):
            if flag == "node-labels" and "=" in item:
                k, _, v = item.partition("=")
                labels[k] = v
            elif flag == "register-with-taints":
                try:
                    taints.append(Taint.parse(item))
                except (InputError, ValueError) as e:
                    out.add("GI013", where, f"invalid taint {item!r} in user data: {e}", "fix it")
    return labels, taints


def is_self_managed(entry: Mapping[str, Any]) -> bool:
    """An Auto Scaling group that is not an EKS managed node group's (EKS tags those
    `eks:nodegroup-name`: cluster-autoscaler-1.36.1 aws_manager.go reads that tag)."""
    return "eks:nodegroup-name" not in asg_tags(entry)


def asg_pool(
    entry: Mapping[str, Any], graph: Sequence[Mapping[str, Any]], out: Findings
) -> PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    rid = resource_id(typ, name)
    tags = asg_tags(entry)
    labels = {
        k.removeprefix(NODE_TEMPLATE_TAG + "label/"): v
        for k, v in tags.items()
        if k.startswith(NODE_TEMPLATE_TAG + "label/")
    }
    taints: list[Taint] = []
    for k, v in tags.items():
        if k.startswith(NODE_TEMPLATE_TAG + "taint/"):
            value, _, effect = v.rpartition(":")
            try:
                taints.append(Taint(k.removeprefix(NODE_TEMPLATE_TAG + "taint/"), value, effect))
            except (InputError, ValueError) as e:
                out.add("GI013", rid, f"invalid taint tag {k}={v}: {e}", "fix the tag")
    lt = _launch_template(entry, graph)
    types = []
    if lt is not None:
        own_labels, own_taints = kubelet_registration(str(lt.get("userData") or ""), rid, out)
        labels.update(own_labels)
        taints += [t for t in own_taints if t not in taints]
        if lt.get("instanceType"):
            types.append(str(lt["instanceType"]))
    overrides = as_list(
        as_map(as_map(inputs.get("mixedInstancesPolicy")).get("launchTemplate")).get("overrides")
    )
    types += [
        str(as_map(o).get("instanceType")) for o in overrides if as_map(o).get("instanceType")
    ]
    instances = [aws_instance_or_none(t) for t in types]
    counts = [i.gpus if i else None for i in instances]
    # Its GPUs' memory, the least of its instance types (the group launches any of them).
    memories = [float(i.gpu_memory_gib) for i in instances if i and i.gpu_memory_gib]
    gpus: int | None
    if counts and None not in counts:
        gpus = min(c for c in counts if c is not None)
    else:
        gpus = as_int(tags.get(NODE_TEMPLATE_TAG + "resources/nvidia.com/gpu"))
    return PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="eks",
        resource=rid,
        node=NodeTemplate(None, labels, tuple(taints)),
        gpus=gpus,
        gpu=(gpus or 0) > 0 or (gpus is None and any(t.key == GPU_RESOURCE for t in taints)),
        min_nodes=as_int(inputs.get("minSize")),
        max_nodes=as_int(inputs.get("maxSize")),
        gpu_memory_gib=min(memories) if memories and len(memories) == len(types) else None,
        daemon_kind="eks",
    )
