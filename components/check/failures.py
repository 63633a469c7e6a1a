"""The failures users hit most, found before deploy: a cold pool's boot labels (GI014), the
autoscalers' template nodes (GI016, GI033), Knative config the operator reverts (GI017), a
progress deadline shorter than a node's start-up (GI020), a pool that never has a node (GI034).
A model too large for its GPUs (GI019) is `model_fit`'s."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..model.errors import InputError
from ..model.nodes.catalog import node_startup_seconds
from ..model.nodes.shapes import format_resource
from ..model.scheduling import GPU_RESOURCE, Placement, parse_quantity, untolerated
from .contract import (
    ASG_GROUP,
    ASG_TAG,
    BOOT_LABEL_PREFIXES,
    CREATION_GPU_LABELS,
    EKS_NODE_GROUP,
    GKE_NODE_POOL,
    NODE_TEMPLATE_TAG,
    POOL_STARTUP_ANNOTATION,
    PROGRESS_DEADLINE_ANNOTATION,
)
from .read import (
    Findings,
    as_int,
    as_list,
    as_map,
    dependency_key,
    is_type,
    kind_of,
    metadata,
    resource_id,
    str_map,
)
from .readers.aks import agent_pools, tag_labels, tag_resources, template_labels
from .readers.asg import asg_tags
from .results import PoolFacts

if TYPE_CHECKING:
    from .rules import CheckContext, PodContext

KNATIVE_DEFAULT_PROGRESS_DEADLINE = 600
"""Knative Serving's `progress-deadline` default (config-deployment: "600s")."""


def _names(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


def label_keys(placement: Placement) -> list[str]:
    """Label keys the placement's nodeSelector and required node affinity name."""
    keys = list(placement.node_selector or {})
    req = placement.node_affinity.required if placement.node_affinity else None
    for term in req or ():
        keys += [r.key for r in term.match_expressions or ()]
    return list(dict.fromkeys(keys))


def _boot_label(key: str) -> bool:
    return key.startswith(BOOT_LABEL_PREFIXES)


# -- GI014: cold-pool deadlock ------------------------------------------------------------------


def lands_once_booted(placement: Placement, pool: PoolFacts, gpus: int) -> list[str]:
    """The labels a node of this cloud pool gets only after it boots (GPU / node feature
    discovery) that the pod selects and that alone keep it off the pool's node template; [] when
    the pod lands anyway, or would not land even with them."""
    boot = [k for k in label_keys(placement) if _boot_label(k)]
    if not boot or pool.provider == "existing" or not pool.fits(gpus):
        return []
    for node in pool.nodes:
        missing = [k for k in boot if k not in node.labels]
        if not missing or untolerated(node.taints, placement.tolerations or ()):
            continue
        skip = set(missing)
        selector_ok = all(
            node.labels.get(k) == v
            for k, v in (placement.node_selector or {}).items()
            if k not in skip
        )
        req = placement.node_affinity.required if placement.node_affinity else None
        affinity_ok = req is None or any(
            not t.is_empty
            and all(r.key in skip or r.matches(node.labels) for r in t.match_expressions or ())
            for t in req
        )
        if selector_ok and affinity_ok:
            return missing
    return []


def cold_pool_label(ctx: PodContext) -> None:
    """GI014: a pod that would land on a pool at 0 nodes only with labels its nodes get after
    they boot (`PodContext.booting`)."""
    for pool, labels in ctx.booting:
        if pool.min_nodes != 0:
            continue  # a node is up: the labels appear once discovery has run on it
        instead = [f"{k}={pool.labels[k]}" for k in CREATION_GPU_LABELS if k in pool.labels]
        ctx.out.add(
            "GI014",
            ctx.facts.resource,
            f"selects {_names(labels)}, label(s) GPU / node feature discovery put on a node only "
            f"after it boots; pool {pool.name} can be at 0 nodes and its node template lacks "
            "them, so the autoscaler never adds a node for it and it stays Pending",
            f"select {instead[0]} instead (on pool {pool.name}'s nodes from creation)"
            if instead
            else f"label pool {pool.name}'s nodes at creation with what it selects",
        )


# -- GI016: cluster-autoscaler node-template tags ------------------------------------------------


def _group_pools(
    graph: Sequence[Mapping[str, Any]], pools: Sequence[PoolFacts]
) -> list[tuple[PoolFacts, bool, list[Mapping[str, Any]]]]:
    """The pools cluster-autoscaler scales as groups: (pool, EKS managed, its graph entries)."""
    out = []
    at: dict[str, list[int]] = {}  # resource key -> its places in the graph, found once
    for i, e in enumerate(graph):
        at.setdefault(f"{e.get('type')}::{e.get('name')}", []).append(i)
    for pool in pools:
        own = [graph[i] for i in sorted({i for k in pool.keys for i in at.get(k, ())})]
        managed = any(e.get("type") == EKS_NODE_GROUP for e in own)
        if managed or any(e.get("type") == ASG_GROUP for e in own):
            out.append((pool, managed, own))
    return out


def asg_tag_entries(graph: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The graph's `aws:autoscaling/tag:Tag` entries, found once for every group's tags."""
    return [e for e in graph if e.get("type") == ASG_TAG]


def template_tags(
    tag_entries: Sequence[Mapping[str, Any]],
    pool: PoolFacts,
    own: Sequence[Mapping[str, Any]],
    managed: bool,
    managed_groups: int,
) -> dict[str, str]:
    """The tags cluster-autoscaler reads for the group's template node: the Auto Scaling group's
    own, the `aws:autoscaling/tag:Tag`s on it (of `tag_entries`: `asg_tag_entries`; tied by dependsOn, the group's name, or for a
    managed node group its `eks-<nodeGroupName>-` ASG, or the only managed group), and for a
    managed node group its own `tags`, which it also reads (`getManagedNodegroupTags`: only the
    `node-template/resources/...` ones count there)."""
    asgs = [e for e in own if e.get("type") == ASG_GROUP]
    have: dict[str, str] = {}
    names = {str(as_map(e.get("inputs")).get("name") or e.get("name")) for e in asgs}
    for entry in asgs:
        have.update(asg_tags(entry))
    for entry in tag_entries:
        inputs = as_map(entry.get("inputs"))
        asg = str(inputs.get("autoscalingGroupName") or "")
        depends = {dependency_key(str(d)) for d in as_list(entry.get("dependsOn"))}
        if (
            depends & set(pool.keys)
            or asg in names
            or (managed and pool.node_group and asg.startswith(f"eks-{pool.node_group}-"))
            or (managed and managed_groups == 1)
        ):
            tag = as_map(inputs.get("tag"))
            have[str(tag.get("key"))] = str(tag.get("value"))
    for entry in own:
        if entry.get("type") == EKS_NODE_GROUP:
            tags = as_map(as_map(entry.get("inputs")).get("tags"))
            have.update(
                {
                    str(k): str(v)
                    for k, v in tags.items()
                    if str(k).startswith(NODE_TEMPLATE_TAG + "resources/")
                }
            )
    return have


def node_template_tags(ctx: CheckContext) -> None:
    """GI016: the template node cluster-autoscaler builds for a group at 0 nodes, on AWS and
    on AKS."""
    _asg_tags(ctx.entries, ctx.pools, ctx.selected_keys, ctx.out)
    _aks_tags(ctx.entries, ctx.pools, ctx.selected_keys, ctx.out)


def _asg_tags(
    graph: Sequence[Mapping[str, Any]],
    pools: Sequence[PoolFacts],
    selected_keys: Mapping[str, set[str]],
    out: Findings,
) -> None:
    """cluster-autoscaler scales a group at 0 nodes up from a template node it builds itself
    (kubernetes/autoscaler cluster-autoscaler-1.36.1 `cloudprovider/aws/aws_manager.go`
    `buildNodeFromTemplate`): CPU, memory and GPUs from the instance type (`template.InstanceType
    .GPU`, whatever the tags), labels and taints from the Auto Scaling group's
    `k8s.io/cluster-autoscaler/node-template/{label,taint}/...` tags, and resources from its
    `.../resources/<name>` tags.
    - Self-managed Auto Scaling groups: the tags are all it knows, so every taint and every label
      a workload selects must be tagged (error).
    - EKS managed node groups: since cluster-autoscaler-1.24.0 it also takes the node group's
      labels and taints from EKS `DescribeNodegroup` (`managed_nodegroup_cache.go`; the README of
      `cloudprovider/aws`: while the group is at 0 nodes and has never had one, and again after a
      restart; afterwards from the nodes it saw), which needs the IAM permission
      `eks:DescribeNodegroup`. Missing tags are then a warning: they matter only without it.
    - GPUs: only a group whose nodes advertise other than their instance type's GPUs (the NVIDIA
      device plugin's time-slicing: GPUs x replicas) needs `resources/nvidia.com/gpu`."""
    groups = _group_pools(graph, pools)
    managed_groups = sum(1 for _, managed, _ in groups if managed)
    tag_entries = asg_tag_entries(graph)
    for pool, managed, own in groups:
        if pool.min_nodes != 0:
            continue
        asgs = [e for e in own if e.get("type") == ASG_GROUP]
        names = {str(as_map(e.get("inputs")).get("name") or e.get("name")) for e in asgs}
        have = template_tags(tag_entries, pool, own, managed, managed_groups)
        want = {f"{NODE_TEMPLATE_TAG}taint/{t.key}": f"{t.value}:{t.effect}" for t in pool.taints}
        for key in sorted(selected_keys.get(pool.name, ())):
            if key in pool.labels:
                want[f"{NODE_TEMPLATE_TAG}label/{key}"] = pool.labels[key]
        sliced = pool.shared_gpus is not None and pool.shared_gpus.by != "GKE"
        if pool.gpu and pool.gpus_per_node and sliced:
            want[f"{NODE_TEMPLATE_TAG}resources/nvidia.com/gpu"] = str(pool.gpus_per_node)
        wrong = [f"{k}={v}" for k, v in sorted(want.items()) if have.get(k) != v]
        if not wrong:
            continue
        if managed:
            out.add(
                "GI016",
                pool.resource,
                f"node group {pool.node_group or pool.name} can be at 0 nodes and its Auto Scaling "
                f"group lacks the cluster-autoscaler node-template tag(s) {_names(wrong)}: "
                "cluster-autoscaler (1.24 or later) reads an EKS managed node group's labels and "
                "taints from EKS DescribeNodegroup and its GPUs from the instance type, but only "
                "with the IAM permission eks:DescribeNodegroup; without it, pods needing them "
                "never trigger a scale-up",
                "grant cluster-autoscaler eks:DescribeNodegroup, or add aws.autoscaling.Tag "
                "resources (propagateAtLaunch false) on the node group's Auto Scaling group for "
                "each",
                severity="warning",
            )
        else:
            out.add(
                "GI016",
                pool.resource,
                f"Auto Scaling group {sorted(names)[0]} can be at 0 nodes but lacks the "
                f"cluster-autoscaler node-template tag(s) {_names(wrong)}: cluster-autoscaler "
                "knows a self-managed group's labels and taints only from them, so pods needing "
                "them never trigger a scale-up",
                "add the tags to the Auto Scaling group (tags with propagateAtLaunch false)",
            )


def _aks_tags(
    graph: Sequence[Mapping[str, Any]],
    pools: Sequence[PoolFacts],
    selected_keys: Mapping[str, set[str]],
    out: Findings,
) -> None:
    """cluster-autoscaler builds the node of an AKS agent pool's scale set at zero from the VM
    size, generic labels, the `agentpool` labels it predicts, the GPU label of the NVIDIA sizes it
    lists, and the scale set's tags (`readers.aks.template_labels`: cluster-autoscaler-1.36.1
    `azure_template.go`); it passes no agent pool spec for a scale set, so the pool's own labels
    and taints reach it only through `k8s.io_cluster-autoscaler_node-template_{label,taint}_<key>`
    tags, which AKS puts on the scale set from the pool's `tags`. AKS runs its own build of the
    autoscaler, whose code reads an agent pool's labels from AKS where it has them (its
    `InputLabels`): missing tags are a warning, as for EKS managed node groups."""
    inputs_by_key = agent_pools(graph)
    for pool in pools:
        mine = [inputs_by_key[k] for k in pool.keys if k in inputs_by_key]
        if not mine or pool.min_nodes != 0:
            continue
        inputs = mine[0]
        labels = template_labels(inputs, str(inputs.get("vmSize") or ""))
        tags = str_map(inputs.get("tags"))
        taints = tag_labels(tags)[1]
        wrong = [f"taint {t}" for t in pool.taints if taints.get(t.key) != f"{t.value}:{t.effect}"]
        wrong += [
            f"label {k}={pool.labels[k]}"
            for k in sorted(selected_keys.get(pool.name, ()))
            if k in pool.labels and labels.get(k) != pool.labels[k]
        ]
        # Time-sliced GPUs: the template takes the VM size's count unless a resources tag says.
        sliced = pool.shared_gpus is not None and pool.shared_gpus.by != "GKE"
        want_gpus = str(pool.gpus_per_node)
        if (
            pool.gpu
            and pool.gpus_per_node
            and sliced
            and tag_resources(tags).get(GPU_RESOURCE) != want_gpus
        ):
            wrong.append(f"resource {GPU_RESOURCE}={want_gpus}")
        if not wrong:
            continue
        out.add(
            "GI016",
            pool.resource,
            f"agent pool {inputs.get('agentPoolName') or pool.name} can be at 0 nodes and "
            f"cluster-autoscaler's node template of its scale set lacks {_names(wrong)}: upstream "
            "it knows an AKS pool's labels and taints only from scale set tags, so pods needing "
            "the label never trigger a scale-up (and the taint's absence makes it scale up for "
            "pods that then cannot land)",
            "add tags k8s.io_cluster-autoscaler_node-template_label_<key> = value and ..._taint_"
            "<key> = value:Effect (and ..._resources_nvidia.com_gpu = the GPUs a node advertises "
            "where they are time-sliced) to the agent pool (key '/' written '_', '_' written "
            "'~2'); AKS puts them on its scale set",
            severity="warning",
        )


# -- GI033: cluster-autoscaler's template node has no ephemeral storage --------------------------

EPHEMERAL_STORAGE_TAG = NODE_TEMPLATE_TAG + "resources/ephemeral-storage"


def template_storage(ctx: CheckContext) -> None:
    """GI033: a pod asking ephemeral storage lands on a cluster-autoscaler group that can be at 0
    nodes, and the group's template node holds less than it asks. The template node
    (cluster-autoscaler-1.36.1 `cloudprovider/aws/aws_manager.go` `buildNodeFromTemplate`) has
    pods, cpu, memory and `nvidia.com/gpu` from the instance type, then only the resources its
    `k8s.io/cluster-autoscaler/node-template/resources/<name>` tags name, and Allocatable =
    Capacity; EKS DescribeNodegroup adds only a `diskSize` label. Without an ephemeral-storage
    tag its ephemeral storage is 0, so such a pod never triggers a scale-up from zero
    (kubernetes/autoscaler#1869)."""
    graph = ctx.entries
    groups = _group_pools(graph, ctx.pools)
    managed_groups = sum(1 for _, managed, _ in groups if managed)
    tag_entries = asg_tag_entries(graph)
    for pool, managed, own in groups:
        if pool.min_nodes != 0:
            continue
        asking = [
            w
            for w in ctx.lands_on.get(pool.name, ())
            if w.requests is not None and w.requests.ephemeral_storage > 0 and not w.daemonset
        ]
        if not asking:
            continue
        have = template_tags(tag_entries, pool, own, managed, managed_groups).get(
            EPHEMERAL_STORAGE_TAG
        )
        try:
            held = int(parse_quantity(have)) if have is not None else 0
        except (InputError, TypeError, ValueError):
            held = 0
        for w in asking:
            assert w.requests is not None
            if w.requests.ephemeral_storage <= held:
                continue
            tagged = f"tags it {have}" if have is not None else "has no such tag"
            ctx.out.add(
                "GI033",
                w.resource,
                f"asks {format_resource('ephemeral-storage', w.requests.ephemeral_storage)} "
                f"ephemeral-storage and lands on pool {pool.name}, which can be at 0 nodes: "
                "cluster-autoscaler's template node has only the ephemeral storage the group's "
                f"{EPHEMERAL_STORAGE_TAG} tag gives it, and the group {tagged}, so no node is "
                "ever added for it from zero",
                f"tag the group's Auto Scaling group {EPHEMERAL_STORAGE_TAG}=<its nodes' "
                "ephemeral-storage allocatable> (gpu-inference's EKS pools do), or keep a node "
                "up (minNodes 1)",
            )


# -- GI017: Knative ConfigMaps the operator reverts --------------------------------------------


def knative_config_reverted(ctx: CheckContext) -> None:
    """GI017: the Knative Operator owns `knative-serving/config-*` when a KnativeServing CR
    exists and reverts other edits (knative/operator#431, #2062): set them in
    `spec.config.<name>`."""
    graph = ctx.entries
    crs = [
        str(e.get("name"))
        for e in graph
        if is_type(str(e.get("type", "")), "operator.knative.dev", "KnativeServing")
    ]
    if not crs:
        return
    for entry in graph:
        typ = str(entry.get("type", ""))
        if typ not in ("kubernetes:core/v1:ConfigMapPatch", "kubernetes:core/v1:ConfigMap"):
            continue
        md = metadata(as_map(entry.get("inputs")))
        name = str(md.get("name") or "")
        if md.get("namespace") != "knative-serving" or not name.startswith("config-"):
            continue
        section = name.removeprefix("config-")
        ctx.out.add(
            "GI017",
            resource_id(typ, str(entry.get("name"))),
            f"{kind_of(typ)} of knative-serving/{name} while KnativeServing {crs[0]} manages "
            "Knative: the operator reverts it",
            f"set these keys in spec.config.{section} of KnativeServing {crs[0]} and drop the "
            f"{kind_of(typ)}",
        )


# -- GI020: progress deadline vs GPU node start-up ----------------------------------------------

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|m|s|ms)")


def parse_duration(text: Any) -> float | None:
    """Go's time.ParseDuration for the units Knative users write (`600s`, `15m`, `1h30m`)."""
    value = str(text).strip()
    parts = _DURATION.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * scale[u] for n, u in parts)


def knative_progress_deadline(graph: Sequence[Mapping[str, Any]]) -> float:
    """The cluster default from the graph's Knative config (KnativeServing
    `spec.config.deployment` or the config-deployment ConfigMap), else Knative's 600 s."""
    for entry in graph:
        typ = str(entry.get("type", ""))
        inputs = as_map(entry.get("inputs"))
        if is_type(typ, "operator.knative.dev", "KnativeServing"):
            data = as_map(as_map(as_map(inputs.get("spec")).get("config")).get("deployment"))
        elif (
            typ.startswith("kubernetes:core/v1:ConfigMap")
            and metadata(inputs).get("name") == "config-deployment"
        ):
            data = as_map(inputs.get("data"))
        else:
            continue
        found = parse_duration(data.get("progress-deadline", ""))
        if found:
            return found
    return KNATIVE_DEFAULT_PROGRESS_DEADLINE


def progress_deadline(ctx: PodContext) -> None:
    """GI020: a Serverless GPU component scaling to zero on a pool that can be at zero must
    survive a GPU node's start-up (kserve/kserve#1247, knative/serving#9531): its progress
    deadline must cover the pool's start-up (`POOL_STARTUP_ANNOTATION` when the workload states it, else the
    catalog's default per provider and GPU)."""
    t, w, default = ctx.template, ctx.facts, ctx.check.deadline_default
    if not (t.serverless and w.scales_to_zero and w.gpus > 0):
        return
    cold = [p for p in ctx.pools if p.name in w.pools and p.min_nodes == 0 and p.gpu]
    if not cold:
        return
    stated = as_int(t.annotations.get(POOL_STARTUP_ANNOTATION))
    startup = stated or max(node_startup_seconds(p.provider, p.accelerator) for p in cold)
    if startup <= 0:
        return
    component = as_map(t.fragment.get("annotations"))
    value = component.get(
        PROGRESS_DEADLINE_ANNOTATION, t.annotations.get(PROGRESS_DEADLINE_ANNOTATION)
    )
    deadline = parse_duration(value) if value is not None else default
    if deadline is not None and deadline >= startup:
        return
    given = (
        f"{PROGRESS_DEADLINE_ANNOTATION} {value}"
        if value is not None
        else (f"the cluster default {default:g}s")
    )
    ctx.out.add(
        "GI020",
        w.resource,
        f"scales to zero on pool(s) {_names([p.name for p in cold])} that can be at 0 nodes; a GPU "
        f"node there takes up to {startup}s to start but its progress deadline is {given}: "
        "Knative fails the revision first",
        f'annotate it {PROGRESS_DEADLINE_ANNOTATION}: "{startup}s" (or keep minReplicas 1)',
    )


# -- GI034: a pool that never has a node -------------------------------------------------------

_GROUP_TYPES = (GKE_NODE_POOL, EKS_NODE_GROUP, ASG_GROUP)


def never_has_nodes(pool: PoolFacts) -> bool:
    """A GKE node pool, EKS node group or Auto Scaling group whose most nodes is 0: a GKE pool
    without autoscaling and `nodeCount: 0` (nothing ever adds one), or a maximum of 0. Karpenter
    pools are GI026's (`limits.nodes`)."""
    return pool.max_nodes == 0 and all(k.split("::", 1)[0] in _GROUP_TYPES for k in pool.keys)


def pool_never_has_nodes(ctx: PodContext) -> None:
    """GI034: a pod that can land only on pools that never have a node stays Pending."""
    w, by_name = ctx.facts, ctx.check.pool_by_name
    if w.daemonset or not w.pools:
        return
    empty = [n for n in w.pools if n in by_name and never_has_nodes(by_name[n])]
    if len(empty) < len(w.pools):
        return
    ctx.out.add(
        "GI034",
        w.resource,
        f"can land only on pool(s) {_names(empty)}, which never has a node (at most 0 nodes: "
        "no autoscaling and a node count of 0, or a maximum of 0): it stays Pending",
        f"give pool {empty[0]} nodes (autoscaling with maxNodes 1 or more, or a node count), "
        "or wire it to a pool that has some",
    )
