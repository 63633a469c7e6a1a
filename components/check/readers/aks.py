"""AKS agent pools (`azure-native:containerservice:AgentPool`) as the check sees them: the labels
and taints AKS adds (`components.pools.aks`, from AKS's docs), GPUs per node from the VM size,
the node's shape, and what cluster-autoscaler knows of the pool at zero (GI016).

AKS runs no device plugin of its own: a pool needs the graph's (GI007 / GI012), or, with
`gpuProfile.driver: None`, a driver and a plugin from elsewhere (GI062, `check.aks`). An unset
`gpuProfile.driver` is AKS's `Install` (pulumi-azure-native 3.29.0 `GPUProfileArgs`: "When it's
not specified, default is Install")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...model.autoscalers.karpenter import ARCH_LABEL, OS_LABEL
from ...model.autoscalers.karpenter_azure import OS_SKU as OS_SKU_LABEL
from ...model.autoscalers.karpenter_azure import ROLE as ROLE_LABEL
from ...model.errors import InputError
from ...model.nodes.aks_shapes import AKS_DEFAULT_OS_DISK_GB, aks_node_shape_or_none
from ...model.nodes.azure_vms import azure_vm_or_none
from ...model.nodes.shapes import NodeShape
from ...model.scheduling import Taint
from ..contract import POOL_LABEL
from ..read import Findings, PoolDraft, as_int, as_list, as_map, resource_id, str_map
from ..results import NodeTemplate

AGENT_POOL = "azure-native:containerservice:AgentPool"
AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
LEGACY_AGENTPOOL_LABEL = "agentpool"
MODE_LABEL = "kubernetes.azure.com/mode"
ACCELERATOR_LABEL = "kubernetes.azure.com/accelerator"
LEGACY_ACCELERATOR_LABEL = "accelerator"
SCALESET_PRIORITY_LABEL = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = Taint(SCALESET_PRIORITY_LABEL, "spot", "NoSchedule")
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
CA_TAG = "k8s.io_cluster-autoscaler_node-template_"


def parse_node_taint(text: Any, where: str, out: Findings) -> Taint | None:
    """An AKS `nodeTaints` entry, `key=value:Effect` (or `key:Effect`)."""
    try:
        return Taint.parse(str(text))
    except (InputError, ValueError) as e:
        out.add("GI013", where, f"invalid taint {text!r}: {e}", "key=value:Effect")
        return None


def tag_labels(tags: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The labels and taints (key -> `value:Effect`) cluster-autoscaler reads from a scale set's
    tags (cluster-autoscaler-1.36.1 `azure_template.go` `extractLabelsFromTags`,
    `extractTaintsFromTags`: `_` is `/`, then `~2` is `_`)."""
    labels: dict[str, str] = {}
    taints: dict[str, str] = {}
    for name, value in tags.items():
        for kind, into in (("label_", labels), ("taint_", taints)):
            head = CA_TAG + kind
            if name.startswith(head) and len(name) > len(head):
                key = name[len(head) :].replace("_", "/").replace("~2", "_")
                into[key] = value
    return labels, taints


def tag_resources(tags: Mapping[str, str]) -> dict[str, str]:
    """The resources cluster-autoscaler's template node takes from a scale set's
    `k8s.io_cluster-autoscaler_node-template_resources_<name>` tags (cluster-autoscaler-1.36.1
    `azure_template.go` `extractAllocatableResourcesFromScaleSet`: `_` and `~2` are `/`)."""
    head = CA_TAG + "resources_"
    return {
        name[len(head) :].replace("_", "/").replace("~2", "/"): value
        for name, value in tags.items()
        if name.startswith(head) and len(name) > len(head)
    }


def template_labels(inputs: Mapping[str, Any], vm_size: str) -> dict[str, str]:
    """The labels cluster-autoscaler's node template of the pool's scale set has at zero
    (`buildNodeFromTemplate`): every scale set tag, the tagged node-template labels, the generic
    ones, the predicted `agentpool` labels, and the GPU labels on the NVIDIA sizes of its list."""
    tags = str_map(inputs.get("tags"))
    labels = dict(tags)
    labels.update(tag_labels(tags)[0])
    # buildGenericLabels: arch `cloudprovider.DefaultArch` (amd64), os the scale set's (linux).
    labels.update({INSTANCE_TYPE_LABEL: vm_size, OS_LABEL: "linux", ARCH_LABEL: "amd64"})
    name = inputs.get("agentPoolName")
    if isinstance(name, str) and name:
        labels[AGENTPOOL_LABEL] = labels[LEGACY_AGENTPOOL_LABEL] = name
    vm = azure_vm_or_none(vm_size)
    if vm is not None and vm.ca_accelerator_label:
        labels[ACCELERATOR_LABEL] = labels[LEGACY_ACCELERATOR_LABEL] = "nvidia"
    return labels


def aks_shape(inputs: Mapping[str, Any]) -> tuple[NodeShape | None, str | None]:
    size = inputs.get("vmSize")
    if not isinstance(size, str) or not size:
        return None, "its VM size is not given (AKS's default is not assumed)"
    disk = as_int(inputs.get("osDiskSizeGB"))
    try:
        shape = aks_node_shape_or_none(
            size,
            os_disk_gb=disk if disk else AKS_DEFAULT_OS_DISK_GB,
            max_pods=as_int(inputs.get("maxPods")),
            kubernetes_version=inputs.get("orchestratorVersion"),
        )
    except InputError as e:
        return None, f"{size}: {e.problem}"
    if shape is None:
        return None, f"VM size {size} is not in the node-shape catalog"
    return shape, None


def aks_pool(entry: Mapping[str, Any], out: Findings) -> PoolDraft:
    typ, name = str(entry["type"]), str(entry["name"])
    inputs = as_map(entry.get("inputs"))
    rid = resource_id(typ, name)
    labels = str_map(inputs.get("nodeLabels"))
    taints = [
        t for t in (parse_node_taint(x, rid, out) for x in as_list(inputs.get("nodeTaints"))) if t
    ]
    spot = str(inputs.get("scaleSetPriority") or "Regular") == "Spot"
    if spot and not any(t.key == SPOT_TAINT.key and t.effect == SPOT_TAINT.effect for t in taints):
        taints.append(SPOT_TAINT)  # AKS adds it to every spot pool
    size = str(inputs.get("vmSize") or "")
    vm = azure_vm_or_none(size)
    effective = dict(labels)
    agent_pool = inputs.get("agentPoolName")
    if isinstance(agent_pool, str) and agent_pool:
        effective[AGENTPOOL_LABEL] = effective[LEGACY_AGENTPOOL_LABEL] = agent_pool
    effective[MODE_LABEL] = str(inputs.get("mode") or "User").lower()
    # AKS's reserved system labels (`use-labels.md` @07fd2900): every node is an agent, Linux
    # on amd64 (every catalog size is x86-64), with its OS SKU (AKS's default Ubuntu).
    effective[ROLE_LABEL] = "agent"
    effective[OS_LABEL] = str(inputs.get("osType") or "Linux").lower()
    effective[ARCH_LABEL] = "amd64"
    effective[OS_SKU_LABEL] = str(inputs.get("osSku") or "Ubuntu")
    if size:
        effective[INSTANCE_TYPE_LABEL] = size
    if vm is not None:
        effective[ACCELERATOR_LABEL] = effective[LEGACY_ACCELERATOR_LABEL] = "nvidia"
    if spot:
        effective[SCALESET_PRIORITY_LABEL] = "spot"
    gpus: int | None = vm.gpus if vm is not None else (None if size.startswith("Standard_N") else 0)
    shape, note = aks_shape(inputs)
    auto = inputs.get("enableAutoScaling") is True
    count = as_int(inputs.get("count"))
    return PoolDraft(
        name=labels.get(POOL_LABEL) or name,
        provider="aks",
        resource=rid,
        node=NodeTemplate(None, effective, tuple(taints), shape=shape),
        shape_note=note,
        gpus=gpus,
        gpu=gpus is None or gpus > 0,
        accelerator=vm.gpu_model if vm is not None else None,
        min_nodes=as_int(inputs.get("minCount")) if auto else count,
        max_nodes=as_int(inputs.get("maxCount")) if auto else count,
        spot=spot,
        gpu_memory_gib=float(vm.gpu_memory_gib) if vm is not None else None,
    )


def agent_pools(graph: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """`type::name` -> inputs of the graph's agent pools."""
    return {
        f"{AGENT_POOL}::{e.get('name')}": as_map(e.get("inputs"))
        for e in graph
        if e.get("type") == AGENT_POOL
    }
