"""Reading a resource graph: the pools (effective labels, taints, GPUs) and the pod templates
(placement fragment, GPUs, replicas, wiring) that the check judges, each read by the reader of its
kind (`components.check.readers`). See `contract` for what is read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..model.nodes.daemonsets import DaemonPod, daemon_overhead, system_daemons
from .contract import ASG_GROUP, AUTOPILOT_POOL, EKS_NODE_GROUP, GKE_NODE_POOL, NODE_PATCH
from .read import Findings, PoolDraft, Template, is_type, least
from .readers.aks import AGENT_POOL, aks_pool
from .readers.apps import apps_template, is_apps_workload, leader_worker_set_templates
from .readers.asg import asg_pool, is_self_managed
from .readers.autopilot import autopilot_cluster_pool, autopilot_pool, is_autopilot_cluster
from .readers.compute_class import compute_class_pool
from .readers.daemonsets import apply_time_slicing, graph_daemons
from .readers.dra import read_driver_installers
from .readers.eks import eks_pool, launch_templates
from .readers.existing import node_pool
from .readers.gke import gke_pool
from .readers.karpenter import karpenter_pool, node_classes
from .readers.kserve import (
    inference_service_templates,
    kserve_default_mode,
    kserve_settings,
)
from .readers.llmisvc import llm_configs, llm_inference_service_templates
from .readers.nap import aks_node_classes, is_nap_nodepool, nap_pool
from .readers.seldon import server_configs, server_template
from .results import NodeTemplate, PoolFacts


def read_pools(graph: Sequence[Mapping[str, Any]], out: Findings) -> list[PoolFacts]:
    drafts: dict[str, list[PoolDraft]] = {}
    templates = launch_templates(graph)
    autopilot_pools = any(e.get("type") == AUTOPILOT_POOL for e in graph)
    aks_classes = aks_node_classes(graph)
    classes = None  # the EC2NodeClasses, read once, when there is a Karpenter NodePool
    for entry in graph:
        typ = str(entry.get("type", ""))
        if typ == GKE_NODE_POOL:
            draft = gke_pool(entry, out)
        elif typ == EKS_NODE_GROUP:
            draft = eks_pool(entry, out, templates)
        elif typ == ASG_GROUP and is_self_managed(entry):
            draft = asg_pool(entry, graph, out)
        elif typ == NODE_PATCH:
            draft = node_pool(entry, out)
        elif typ == AGENT_POOL:
            draft = aks_pool(entry, out)
        elif is_nap_nodepool(entry):
            draft = nap_pool(entry, aks_classes, out)
        elif is_type(typ, "karpenter.sh", "NodePool"):
            if classes is None:
                classes = node_classes(graph)
            draft = karpenter_pool(entry, classes, out)
        elif is_type(typ, "cloud.google.com", "ComputeClass"):
            draft = compute_class_pool(entry, out)
        elif typ == AUTOPILOT_POOL:
            draft = autopilot_pool(entry)
        elif is_autopilot_cluster(entry) and not autopilot_pools:
            draft = autopilot_cluster_pool(entry)
        else:
            continue
        draft.key = f"{typ}::{entry.get('name')}"
        drafts.setdefault(draft.name, []).append(draft)
    apply_time_slicing(graph, drafts)
    for group in drafts.values():
        for d in group:
            # A DRA node's GPUs are published as ResourceSlices by NVIDIA's DRA driver; no device
            # plugin advertises them as nvidia.com/gpu (GKE's is off, the stack keeps NVIDIA's
            # off: a DRA driver and a device plugin must never manage the same GPUs).
            if d.node.dra_devices is not None:
                d.gpus = 0
                d.node = replace(d.node, gpus=0)
    daemons = graph_daemons(graph)
    installers = [i.pod for i in read_driver_installers(graph) if i.pod is not None]
    for group in drafts.values():
        for d in group:
            d.node = with_daemons(d.node, d.daemon_kind, daemons, installers)
            d.more_nodes = tuple(
                with_daemons(n, d.daemon_kind, daemons, installers) for n in d.more_nodes
            )
    pools = []
    for name in sorted(drafts):
        group = drafts[name]
        known = [d.gpus for d in group if d.gpus is not None]
        gpus = min(known) if known and len(known) == len(group) else None
        mins = [d.min_nodes for d in group]
        maxs = [d.max_nodes for d in group]
        pools.append(
            PoolFacts(
                name=name,
                provider=group[0].provider,
                resources=tuple(sorted(d.resource for d in group)),
                nodes=tuple(n for d in group for n in (d.node, *d.more_nodes)),
                gpus_per_node=gpus,
                gpu=any(d.gpu for d in group),
                accelerator=next((d.accelerator for d in group if d.accelerator), None),
                min_nodes=None if None in mins else sum(m for m in mins if m is not None),
                max_nodes=None if None in maxs else sum(m for m in maxs if m is not None),
                spot=all(d.spot for d in group),
                builtin_device_plugin=all(d.builtin_device_plugin for d in group),
                gpu_memory_gib=least([d.gpu_memory_gib for d in group]),
                node_group=group[0].node_group if len(group) == 1 else None,
                keys=tuple(sorted(d.key for d in group)),
                shared_gpus=next((d.shared for d in group if d.shared), None),
                shape_note=next((d.shape_note for d in group if d.shape_note), None),
            )
        )
    return pools


def with_daemons(
    node: NodeTemplate,
    kind: str,
    daemons: Sequence[DaemonPod],
    installers: Sequence[DaemonPod] = (),
) -> NodeTemplate:
    """The node with the DaemonSet pods it runs: the provider's own for its `kind`, then the
    graph's (`model.nodes.daemonsets.daemon_overhead`), GKE's GPU driver installer manifests the
    graph applies whole (`installers`) on a GKE GPU node whose driver GKE does not install (GKE
    labels the others `cloud.google.com/gke-gpu-driver-version`, which the installer avoids; the
    check's node templates leave that label out)."""
    held = node.shape.allocatable if node.shape is not None else None
    candidates = (*system_daemons(kind), *daemons)
    if node.gpu_driver not in (None, "gke"):
        candidates = (*candidates, *installers)
    return replace(
        node,
        daemons=daemon_overhead(candidates, node.labels, node.taints, held, node.name),
        daemon_kind=kind,
    )


def read_templates(
    graph: Sequence[Mapping[str, Any]], scale_to_zero_allowed: bool
) -> list[Template]:
    """Every pod template of the graph, in graph order, each read by its workload kind's reader.
    An InferencePool (`inference.networking.k8s.io`) is not read: it selects the model pods for
    the gateway and makes no pod, so it has nothing to place."""
    out: list[Template] = []
    default_mode = kserve_default_mode(graph)
    kserve = kserve_settings(graph)
    configs = server_configs(graph)
    llm_bases = llm_configs(graph)
    for entry in graph:
        typ = str(entry.get("type", ""))
        if is_type(typ, "serving.kserve.io", "InferenceService"):
            out += inference_service_templates(entry, default_mode, scale_to_zero_allowed, kserve)
        elif is_type(typ, "mlops.seldon.io", "Server"):
            out.append(server_template(entry, configs))
        elif is_type(typ, "serving.kserve.io", "LLMInferenceService"):
            out += llm_inference_service_templates(entry, llm_bases)
        elif is_type(typ, "leaderworkerset.x-k8s.io", "LeaderWorkerSet"):
            out += leader_worker_set_templates(entry)
        elif is_apps_workload(typ):
            out.append(apps_template(entry))
    return out


def is_workload(typ: str) -> bool:
    """Whether a resource type is a workload: one `read_templates` reads pod templates from, or a
    Seldon Model (Seldon places it on a Server's pods). The preview's progress counts these."""
    return (
        is_type(typ, "serving.kserve.io", "InferenceService")
        or is_type(typ, "serving.kserve.io", "LLMInferenceService")
        or is_type(typ, "mlops.seldon.io", "Server")
        or is_type(typ, "mlops.seldon.io", "Model")
        or is_type(typ, "leaderworkerset.x-k8s.io", "LeaderWorkerSet")
        or is_apps_workload(typ)
    )
