"""Static placement check: where every pod template in a resource graph can land, and what is wrong.

Pure Python (imports no Pulumi). The input is the resource graph, a list of `{type, name, inputs}`
(optionally `parent`, `dependsOn`) with Pulumi type tokens and the inputs as registered (camelCase),
the shape `mockrun.Graph.as_graph()` and `resources.json` hold. Only type tokens and inputs are
read (and `dependsOn`, `type::name` or URNs, to tie an ASG Tag to its node group: GI016), so a
hand-written program that registers the same resource types is checked the same way.

    report = check(graph)                  # extended_resource_toleration=None: inferred
    report.errors                          # the error findings
    report.to_json()                       # stable, JSON-serialisable, keys sorted
    render_markdown(report)                # table workload -> pools -> findings + Mermaid diagram

Node pools (each pool is one or more node templates with effective labels and taints):
- `gcp:container/nodePool:NodePool`: `nodeConfig.labels` / `.taints` (cloud casing), GPUs from
  `nodeConfig.guestAccelerators[{type, count}]` or, for machine types that come with GPUs, from
  `catalog.gke_gpus_for_machine(nodeConfig.machineType)`. GKE adds to every GPU pool the taint
  `nvidia.com/gpu=present:NoSchedule` and the labels `cloud.google.com/gke-accelerator=<type>`,
  `cloud.google.com/gke-accelerator-count=<n>`; to every pool `cloud.google.com/gke-nodepool=<name>`
  (when `name` is set; an auto-named pool's name is not known before deploy), and
  `cloud.google.com/gke-spot=true` (spot) / `cloud.google.com/gke-preemptible=true` (preemptible).
  Nodes: `autoscaling.minNodeCount/maxNodeCount` or `totalMinNodeCount/totalMaxNodeCount`, else
  the fixed `nodeCount` (or `initialNodeCount`).
- `aws:eks/nodeGroup:NodeGroup`: `labels`, `taints` (cloud casing), GPUs per node from
  `catalog.aws_instance(instanceTypes[i]).gpus` (several types: the smallest), nodes from
  `scalingConfig.minSize/maxSize`. EKS adds `eks.amazonaws.com/nodegroup=<nodeGroupName>` (when
  set) and `eks.amazonaws.com/capacityType=ON_DEMAND|SPOT`; it adds NO GPU taint.
- `aws:autoscaling/group:Group` (self-managed; not one tagged `eks:nodegroup-name`): labels and
  taints from its launch template's user data (`--node-labels`, `--register-with-taints`) and its
  node-template tags, GPUs from the launch template's instance type (`readers.asg`).
- `gcp:container/cluster:Cluster` with `enableAutopilot: true` (when no GkeAutopilotGpuPool is in
  the graph): one node template per GPU type and count Autopilot offers (`readers.autopilot`).
- `resource.k8s.io` ResourceClaims / ResourceClaimTemplates / DeviceClasses: which pods take
  devices (GPUs) through DRA (`readers.dra`).
- `kubernetes:core/v1:NodePatch`: `metadata.labels`, `spec.taints` (Kubernetes casing). GPUs per
  node from the first of `GPU_COUNT_KEYS` found in the node's annotations or labels, else unknown.
  NodePatches carrying the same `gpu-inference.dev/pool` label form one pool (a pod lands on the
  pool when it lands on any of its nodes, each node with its own GPU count: the pool's
  `gpus_per_node` is the smallest); a NodePatch without it is a pool of its own.
Pool identity: the `POOL_LABEL` (`gpu-inference.dev/pool`) label value if present, else the
resource name. A pool is a GPU pool when its nodes have GPUs (or, for a NodePatch with no count,
when an NVIDIA / cloud accelerator label or an `nvidia.com/gpu` taint says so).

Pod templates (workloads):
- `kubernetes:serving.kserve.io/v1beta1:InferenceService`: `spec.predictor`, `spec.transformer`,
  `spec.explainer`; the component is the pod-spec fragment (nodeSelector, affinity, tolerations);
  GPUs from its containers (`model`, a framework key such as `triton`, `containers[*]`).
  `minReplicas` absent = 1. Deployment mode from the annotation `serving.kserve.io/deploymentMode`
  (`Serverless` / `Knative` / `RawDeployment` / `Standard`; absent = the KServe Helm release's
  `kserve.controller.deploymentMode` when the graph has one, else Serverless). Only a Serverless
  (Knative) component with `minReplicas: 0` scales to zero (RawDeployment never does: kserve #3514),
  and not when Knative's `enable-scale-to-zero` is "false" in the graph.
- `kubernetes:mlops.seldon.io/v1alpha1:Server`: its ServerConfig's podSpec merged with its own
  `spec.podSpec` exactly as Seldon's operator does it (`mergePodSpecs`: mergo with override and
  append-slice): maps such as nodeSelector merge key by key (the Server's value wins), lists such
  as tolerations and node-selector terms are appended, containers are merged by name (resources key
  by key). `replicas` absent = 1; a Server is a StatefulSet that the operator does not scale to
  zero, so only `replicas: 0` counts as scaled to zero. A ServerConfig is a template, not a
  workload. A Server whose ServerConfig is not in the graph uses its own podSpec; `mlserver` and
  `triton` (the ServerConfigs Seldon installs) have their default capabilities.
- `kubernetes:apps/v1:Deployment` / `StatefulSet` (`spec.template.spec`, `replicas` absent = 1,
  scaled to zero only at `replicas: 0`) and `DaemonSet` (on every node it tolerates, never scaled
  to zero; the cluster autoscaler ignores DaemonSet pods when it drains a node, so DaemonSets are
  exempt from the cpu-on-gpu-pool, never-scales-to-zero and wildcard findings).
- `kubernetes:serving.kserve.io/v1alpha2:LLMInferenceService` (v1alpha1 alike; `readers.llmisvc`):
  a template per pod KServe v0.20.0's controller makes (`model.serving.llmisvc.generated_pods`): decode
  `<name>-kserve` from `spec.template`, LeaderWorkerSet `<name>-kserve-mn` (leader from
  `spec.template`, `size - 1` workers per group from `spec.worker`), prefill
  `<name>-kserve-prefill` / `<name>-kserve-mn-prefill`, scheduler `<name>-kserve-router-scheduler`,
  each with the containers the presets and the controller add (storage-initializer, routing
  sidecar, the scheduler preset's requests), its spec merged over the graph's
  LLMInferenceServiceConfigs it names in `baseRefs`. Resource ids
  `LLMInferenceService/<name>/<workload>[/leader|/worker]`. Replicas `replicas` (absent 1) or
  `scaling.maxReplicas`; only `replicas: 0` is scaled to zero. Wired by
  `gpu-inference.dev/pool.<component>` (decode, worker, prefill, prefill-worker, scheduler; a
  worker without its own: its leader's), else the CR's `gpu-inference.dev/pool`.
- `kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet` written by anyone: `leaderTemplate`
  (absent: `workerTemplate`) for the leaders, `workerTemplate` for the other `size - 1` pods of
  each of `replicas` groups; wired like an apps workload. An InferencePool makes no pod: not read.
- Node shapes (fit): `NodeTemplate.shape` from `model.nodes.shapes`: GKE `nodeConfig.machineType`,
  `diskSizeGb` (GKE's default 100), `maxPodsConstraint.maxPodsPerNode`; an EKS node group's first
  `instanceTypes` entry on AL2023 with its launch template's `/dev/xvda` volume (tied by
  `dependsOn`), else `diskSize`, else 20 GiB; each Karpenter instance type with its EC2NodeClass's
  volume (`blockDeviceMappings`), `instanceStorePolicy`, AMI family and kubelet settings
  (`model.nodes.karpenter_kubelet`); each ComputeClass priority's
  `machineType` and `storage.bootDiskSize` (default 100); existing nodes from
  `ALLOCATABLE_ANNOTATION`. Anything else is unknown (GI022), never guessed. Each node runs the
  DaemonSet pods `model.nodes.daemonsets` gives its kind (the provider's own) and the graph's
  (`readers.daemonsets.graph_daemons`) that its labels and taints let in: `NodeTemplate.daemons`,
  what they hold taken from the allocatable before any workload (`NodeTemplate.room`).
- GPUs a pod requests: `nvidia.com/gpu` requests (limits when no request) summed over containers,
  or the largest init container's, whichever is larger.
- The pools a pod can land on: `scheduling.Placement.from_pod_spec(fragment).admits(...)` against
  each node of each pool, with the tolerations the ExtendedResourceToleration admission plugin adds
  to pods requesting extended resources when the cluster enables it
  (`extended_resource_toleration`; None = on when any pool is GKE or EKS or a NodePatch carries
  `ERT_ANNOTATION: "true"`, off for graphs with only other existing nodes), and only on nodes with the GPUs it requests (the scheduler's resource fit):
  that is `WorkloadFacts.pools`. The cluster may have nodes the graph does not declare (a default
  pool): a pod that can land on none of the graph's pools is reported only when it selects the
  labels of a pool of the graph, asks for GPUs, or is wired.

Wiring (the contract workload components emit): `WIRED_POOL_ANNOTATION`
(`gpu-inference.dev/pool`) in the CR's (or Deployment's) `metadata.annotations`, value a pool name
or a comma-separated list in preference order (spot first, on-demand fallback). On an
InferenceService, `gpu-inference.dev/pool.<component>` (`wired_annotation(component)`; component
predictor / transformer / explainer) wins over the CR-level one, which applies to every component
without its own; an empty per-component value (`gpu-inference.dev/pool.transformer: ""`) says the
component is wired to no pool (a CPU transformer next to a GPU predictor). A Seldon Server without
one uses its ServerConfig's. A workload without wiring gets every check except wrong-pool /
wired-pool-unreachable.

Device plugins: the GKE-managed NVIDIA device plugin tolerates every NoSchedule / NoExecute taint
(kubernetes `cluster/addons/device-plugins/nvidia-gpu/daemonset.yaml`: `operator: Exists` for both
effects), so GKE pools are exempt unless their nodes carry `gke-no-default-nvidia-gpu-device-plugin
=true` (the GPU operator setup). EKS Bottlerocket NVIDIA AMIs run the device plugin on the host.
Every other GPU pool (EKS AL2 / AL2023 NVIDIA AMIs, existing nodes) needs a device plugin
DaemonSet: the check uses the ones in the graph (a DaemonSet whose name or image names the NVIDIA
device plugin, or a Helm release of chart `nvidia-device-plugin`: `values.tolerations`, default
`CriticalAddonsOnly Exists` + `nvidia.com/gpu Exists NoSchedule`; its NFD worker, deployed when
`nfd.enabled` or else `gfd.enabled`, uses `values.nfd.worker.tolerations`, default
`nvidia.com/gpu=present` with `Equal`: NVIDIA/k8s-device-plugin #1934). The pool is served when one
plugin tolerates all its taints. With none in the graph the chart's defaults are assumed (GI012).
Only tolerations are checked, not the plugin's own nodeSelector / affinity.

Findings (stable codes):

| code  | severity | what                                                                      |
| ----- | -------- | ------------------------------------------------------------------------- |
| GI001 | error    | no-pool: a pod can land on no pool although it selects (nodeSelector / required affinity) the labels of some pool (a taint or the GPU count keeps it out: named), or it requests GPUs, or it is wired |
| GI002 | error    | wrong-pool: can land on a pool it is not wired to                         |
| GI003 | error    | cpu-on-gpu-pool: requests no GPU but can land on a GPU pool (pins a node) |
| GI004 | error    | too-many-gpus: requests more GPUs than the nodes of every pool it can land on have |
| GI005 | error    | knative-flag: Serverless InferenceService sets nodeSelector / affinity / tolerations while the Knative podspec feature is not "enabled" (the webhook rejects it) |
| GI006 | info     | knative-config-absent: such an InferenceService, but the graph has no Knative config (KnativeServing or config-features): the cluster's must enable the flags |
| GI007 | error    | device-plugin-taint: a GPU pool's taint is not tolerated by the device plugin in the graph (the node exposes no GPUs) |
| GI008 | warning  | never-scales-to-zero: a pool with min 0 nodes hosts workloads that never scale to zero (named) |
| GI009 | warning  | wildcard-toleration: a pod can land on GPU pools only thanks to `operator: Exists` with no key |
| GI010 | warning  | seldon-model-unmatched: a Model's requirements match no Server's capabilities, or its pinned Server does not exist (or lacks them) |
| GI011 | error    | wired-pool-unreachable: cannot land on a pool it is wired to (or the pool is not in the graph) |
| GI012 | warning  | device-plugin-absent: a GPU pool that needs a device plugin DaemonSet has a taint the upstream chart's defaults do not tolerate, and the graph installs none |
| GI013 | error    | invalid-spec: a taint, toleration, selector or GPU quantity Kubernetes would refuse |
| GI014 | warning  | cold-pool-label: selects a label nodes get only after they boot (`BOOT_LABEL_PREFIXES`: GPU / node feature discovery) on a gke/eks pool with min 0 nodes, and would land there with it: the autoscaler's node template lacks it |
| GI015 | warning  | max-scale-capacity: for a set of pools workloads share, their pods at max scale (every workload at its most replicas) have no packing on the pools' max nodes with every resource (`capacity`; it was a GPU sum before) |
| GI016 | error    | asg-node-template-tags: a group with min 0 nodes lacks a tag `k8s.io/cluster-autoscaler/node-template/{taint,label}/...` for a taint or a selected label (`resources/nvidia.com/gpu` only where the device plugin time-slices its GPUs: else cluster-autoscaler takes them from the instance type): an error on a self-managed Auto Scaling group (`aws:autoscaling/group:Group`), a warning on an EKS managed node group (cluster-autoscaler 1.24+ reads it from EKS DescribeNodegroup given `eks:DescribeNodegroup`) |
| GI017 | error    | knative-config-reverted: a `knative-serving/config-*` ConfigMap or ConfigMapPatch while a KnativeServing CR is in the graph |
| GI018 | warning  | seldon-model-capacity: a Model's `replicas` / `memory` above every capable Server's replicas / memory request x (1 + overcommit) |
| GI019 | error    | model-too-large: weights (`MODEL_SIZE_ANNOTATION`, or parameters x dtype) x (1 + `MODEL_MEMORY_OVERHEAD`) above GPUs requested x one GPU's memory on every pool it can land on; for an LLMInferenceService vLLM pod, vLLM's need (`llm.fit`: weights over tensor x pipeline + one max-model-len sequence's KV cache) above gpu_memory_utilization x one GPU's memory (`check.llm`) |
| GI020 | warning  | progress-deadline-short: a Serverless GPU component scaling to zero on a gke/eks pool with min 0 nodes has a Knative progress deadline below the pool's start-up (`POOL_STARTUP_ANNOTATION`, else `catalog.node_startup_seconds`) |
| GI021 | error    | fits-no-node: the pod's requests (containers, the largest init container, overhead, and what Knative / KServe / Seldon add: `fit.pod_containers`) fit what no node of any pool it can land on leaves beside its DaemonSet pods (`NodeTemplate.room`; the resource, what it asks, the largest allocatable and its shape; GPUs are GI004's) |
| GI022 | info     | fit-unknown: a pool pods land on has a node whose shape is unknown (a type the catalog lacks, existing nodes without `ALLOCATABLE_ANNOTATION`, Autopilot, an EC2NodeClass not in the graph): fit not judged there |
| GI023 | error    | shared-gpu-request: a container asks more than 1 `nvidia.com/gpu` on a pool whose GPUs are shared (GKE time-sharing / MPS on multi-GPU nodes, the NVIDIA device plugin's time-slicing or MPS) |
| GI024 | error    | model-exceeds-disk: a predictor's model size (`MODEL_SIZE_ANNOTATION`), which KServe's storage-initializer downloads to the node's ephemeral storage, is above the ephemeral-storage allocatable of every node it can land on |
| GI025 | error    | mps-without-host-ipc: a GPU pod on a GKE MPS pool without `hostIPC: true` |
| GI026 | error    | karpenter-will-not-launch: the pod lands on a Karpenter pool but Karpenter would create no NodeClaim for it from that NodePool (`scaleup`, `model.autoscalers.karpenter_launch`), the cause named (requirements, requests, limits, capacity-type, taints, nodepool, pod) |
| GI027 | error    | dra-not-provisioned: a pod with DRA ResourceClaims lands on a Karpenter or EKS Auto Mode pool (Karpenter ignores DRA pods) |
| GI028 | error    | dra-driver-label: a DRA GPU pod lands on a GKE pool without DRA's node labels, or on Autopilot |
| GI029 | error    | autopilot-request-out-of-range: a GPU pod Autopilot would reject (`model.nodes.autopilot.autopilot_gpu_problem`) |
| GI030 | error    | tensor-parallel-heads: an LLMInferenceService's tensor parallelism does not divide its model's attention heads, or neither divides its KV heads nor is a multiple of them (vLLM refuses; the fix lists the sizes it accepts) |
| GI031 | error    | parallelism-gpus: vLLM's world size (tensor x pipeline, or data x tensor over a data-parallel group) is not the GPUs of the pod / worker group (a warning when the GPUs are more: idle) |
| GI032 | error    | data-parallel-pod-gpus: a data-parallel vLLM pod requests other than dataLocal x tensor GPUs (a warning when more) |
| GI033 | error    | ca-template-ephemeral-storage: a pod asking ephemeral storage lands on a cluster-autoscaler group (EKS managed node group, self-managed Auto Scaling group) that can be at 0 nodes whose `node-template/resources/ephemeral-storage` tag is missing or below the request: the template node has none, no scale-up from zero |
| GI034 | error    | pool-never-has-nodes: a pod can land only on GKE node pools / EKS node groups / Auto Scaling groups whose most nodes is 0 (a GKE pool without autoscaling and `nodeCount: 0`): it stays Pending (GI008 is not said of such a pool) |
| GI040 | error    | capacity-short: the pods that run all the time (fixed and min replicas, Server replicas, LeaderWorkerSet groups whole, prefill and decode) have no packing on the pools' max nodes after their DaemonSets, with every resource (exact: `capacity.packing`): what cannot run, and the fewest max nodes that hold them |
| GI041 | info     | capacity-headroom: per pool at its max, the nodes and GPUs the pods that run all the time leave free |
| GI042 | warning  | cold-capacity: the pods that run all the time do not fit the pools' min nodes: the rest wait for a node (the pool's start-up time), every scale-up from min is a cold start |
| GI043 | warning  | fragmentation: a packing exists, but kube-scheduler placing the pods one at a time (LeastAllocated spreads them) in an order their controllers may create them in leaves one Pending: the order and each pod's node |
| GI044 | info     | capacity-unknown: capacity or fragmentation not judged (a pool of several node shapes with a max, or a search past its bound) |
| GI045 | error    | quota-max-nodes: the pools counting against a declared cloud quota (`gpu-inference:index:CloudQuota`, or given to `check`) can grow past it: GCE GPUs per family, EC2 vCPUs per instance-family quota, Spot apart (`capacity.quota`) |
| GI046 | error    | quota-capacity: with the nodes the quota allows, the pods that run all the time have no packing (exact) |
| GI050 | error    | dra-claim-count: a pod's DRA claims ask for more devices than one node of any pool it can land on publishes that match them (`check.dra`: kube-scheduler's allocator) |
| GI051 | error    | dra-claim-selector: no device of a pool the pod can land on matches a claim's DeviceClass and CEL selectors (a pool publishing no DRA device included) |
| GI052 | error    | dra-selector-error: a claim's CEL selector does not compile or fails on a device (a missing attribute): kube-scheduler aborts the pod's scheduling on every node |
| GI053 | error    | dra-serverless: a Serverless (Knative) InferenceService component takes devices by claim (Knative refuses `resources.claims`: knative/serving#15332) |
| GI054 | error    | dra-no-driver: a DRA pool whose nodes no NVIDIA DRA driver kubelet plugin serves (a warning when the graph installs none: the cluster's must) |
| GI055 | error    | dra-not-autoscaled: a DRA pod lands on a pool made by an autoscaler that ignores claims (GKE node auto-provisioning; Karpenter and EKS Auto Mode: GI027) |
| GI056 | error    | dra-claim-unknown: a claim names a DeviceClass neither the driver nor the graph defines (a warning, not judged, when the pod names a claim or template the graph lacks) |
| GI057 | error    | dra-no-scale-from-zero: a DRA pod can land only on cluster-autoscaler groups on AWS (EKS managed node groups, Auto Scaling groups) that can be at 0 nodes: the autoscaler's template node of a group without a node has no ResourceSlices (cluster-autoscaler v1.36.1 `aws_cloud_provider.go` TemplateNodeInfo), so no scale-up from zero |
| GI058 | error    | dra-no-gpu-driver: a GKE DRA pool, GKE's GPU driver install off, whose nodes no NVIDIA GPU driver installer serves (GKE's nvidia-driver-installer DaemonSet for the node image, `versions.GKE_DRIVER_INSTALLER_PATHS`): the DRA driver publishes no GPU (a warning when the graph installs none: the cluster's must) |
"""

from __future__ import annotations

from ..model.deploy.versions import SELDON_BUILTIN_CAPABILITIES
from ..model.scheduling import (
    GPU_RESOURCE,
    Taint,
    Toleration,
)
from ..model.scheduling import POOL_LABEL as POOL_LABEL  # one spelling: the model's
from ..model.scheduling import WIRED_POOL_ANNOTATION as WIRED_POOL_ANNOTATION
from ..model.serving.llmisvc import (  # the LLMInferenceService annotations: one spelling, the model's
    GPU_MEMORY_UTILIZATION_ANNOTATION as GPU_MEMORY_UTILIZATION_ANNOTATION,
)
from ..model.serving.llmisvc import MAX_MODEL_LEN_ANNOTATION as MAX_MODEL_LEN_ANNOTATION
from ..model.serving.llmisvc import MODEL_ANNOTATION as MODEL_ANNOTATION
from .registry import CODES as CODES  # derived from the rules' registry
from .registry.rule import SEVERITIES as SEVERITIES

# ---------------------------------------------------------------------------------------------
# Contract
# ---------------------------------------------------------------------------------------------

WIRED_COMPONENT_POOL_ANNOTATION = "gpu-inference.dev/pool.{component}"
"""Per-component wiring on an InferenceService (`component`: predictor, transformer, explainer);
wins over `WIRED_POOL_ANNOTATION`."""
PRESENT_LABELS_ANNOTATION = "gpu-inference.dev/present-labels"
ERT_ANNOTATION = "gpu-inference.dev/extended-resource-toleration"
ALLOCATABLE_ANNOTATION = "gpu-inference.dev/allocatable"
"""Annotation on a NodePatch: what the node has allocatable, JSON quantities by resource name
(`{"cpu": "32", "memory": "250Gi", "ephemeral-storage": "400Gi"}`): its node shape (fit)."""
"""Annotation `"true"` on a NodePatch: the cluster of these existing nodes runs the
ExtendedResourceToleration admission plugin (what `ExistingGpuNodes` writes when told so)."""
"""Node label naming the pool a node belongs to (pool identity)."""
GPU_COUNT_KEYS = (
    "gpu-inference.dev/gpus-per-node",
    "nvidia.com/gpu.count",
    "cloud.google.com/gke-accelerator-count",
)
"""Annotation or label keys a NodePatch may carry to say how many GPUs the node has."""

GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODE_PATCH = "kubernetes:core/v1:NodePatch"
AUTOPILOT_POOL = "gpu-inference:index:GkeAutopilotGpuPool"
"""GPUs on GKE Autopilot have no cloud resource; the component registers what they will be."""
AUTOPILOT_CLUSTER = "gcp:container/cluster:Cluster"
"""A GKE cluster; with `enableAutopilot: true` its GPU nodes are Autopilot's (read when the graph
has no GkeAutopilotGpuPool)."""
ASG_GROUP = "aws:autoscaling/group:Group"
"""A self-managed Auto Scaling group of nodes (gpu-inference makes none)."""
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
INFERENCE_SERVICE = "kubernetes:serving.kserve.io/v1beta1:InferenceService"
SELDON_SERVER = "kubernetes:mlops.seldon.io/v1alpha1:Server"
SELDON_SERVER_CONFIG = "kubernetes:mlops.seldon.io/v1alpha1:ServerConfig"
SELDON_MODEL = "kubernetes:mlops.seldon.io/v1alpha1:Model"
KNATIVE_SERVING = "kubernetes:operator.knative.dev/v1beta1:KnativeServing"
HELM_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
APPS_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
ISVC_COMPONENTS = ("predictor", "transformer", "explainer")

SERVERLESS_MODES = ("Serverless", "Knative")
RAW_MODES = ("RawDeployment", "Standard")
DEPLOYMENT_MODE_ANNOTATION = "serving.kserve.io/deploymentMode"

GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"
GKE_ACCELERATOR_COUNT_LABEL = "cloud.google.com/gke-accelerator-count"
GKE_NODEPOOL_LABEL = "cloud.google.com/gke-nodepool"
GKE_SPOT_LABEL = "cloud.google.com/gke-spot"
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
GKE_SHARING_LABEL = "cloud.google.com/gke-gpu-sharing-strategy"
GKE_MAX_CLIENTS_LABEL = "cloud.google.com/gke-max-shared-clients-per-gpu"
GKE_PARTITION_LABEL = "cloud.google.com/gke-gpu-partition-size"
GKE_PREEMPTIBLE_LABEL = "cloud.google.com/gke-preemptible"
GKE_NO_DEFAULT_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
GKE_GPU_TAINT = Taint(GPU_RESOURCE, "present", "NoSchedule")
EKS_NODEGROUP_LABEL = "eks.amazonaws.com/nodegroup"
EKS_CAPACITY_LABEL = "eks.amazonaws.com/capacityType"

DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
DEVICE_PLUGIN_DEFAULT_TOLERATIONS = (
    Toleration("CriticalAddonsOnly", "Exists"),
    Toleration(GPU_RESOURCE, "Exists", "", "NoSchedule"),
)
NFD_WORKER_DEFAULT_TOLERATIONS = (
    Toleration("node-role.kubernetes.io/master", "Equal", "", "NoSchedule"),
    Toleration(GPU_RESOURCE, "Equal", "present", "NoSchedule"),
)
DEVICE_PLUGIN_MARKERS = ("nvidia-device-plugin", "k8s-device-plugin", "nvidia-gpu-device-plugin")
# The chart's default affinity (NVIDIA/k8s-device-plugin v0.17.1 deployments/helm/
# nvidia-device-plugin/values.yaml): labels node / GPU feature discovery puts on GPU nodes.
DEVICE_PLUGIN_DEFAULT_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": key, "operator": "In", "values": [value]},
                    ]
                }
                for key, value in (
                    ("feature.node.kubernetes.io/pci-10de.present", "true"),
                    ("feature.node.kubernetes.io/cpu-model.vendor_id", "NVIDIA"),
                    ("nvidia.com/gpu.present", "true"),
                )
            ]
        }
    }
}
# NVIDIA's DCGM exporter chart and its defaults (NVIDIA/dcgm-exporter 4.5.3-4.8.2
# deployment/values.yaml: requests 100m / 128Mi, tolerates only the control-plane taint).
DCGM_EXPORTER_CHART = "dcgm-exporter"
DCGM_EXPORTER_DEFAULTS = {
    "resources": {
        "requests": {"cpu": "100m", "memory": "128Mi"},
        "limits": {"cpu": "200m", "memory": "512Mi"},
    },
    "tolerations": [
        {
            "key": "node-role.kubernetes.io/control-plane",
            "operator": "Exists",
            "effect": "NoSchedule",
        }
    ],
}

SELDON_CAPABILITIES_ENV = "SELDON_SERVER_CAPABILITIES"
SELDON_DEFAULT_CAPABILITIES: dict[str, frozenset[str]] = {
    name: frozenset(caps) for name, caps in SELDON_BUILTIN_CAPABILITIES.items()
}
SELDON_SERVER_CHARTS = ("seldon-core-v2-runtime", "seldon-core-v2-servers")
KSERVE_CHARTS = ("kserve", "kserve-resources")

# Keys of a KServe component that are pod-spec fields or component settings, never a container.
COMPONENT_NON_CONTAINER_KEYS = frozenset(
    {
        "affinity",
        "nodeSelector",
        "tolerations",
        "securityContext",
        "dnsConfig",
        "logger",
        "batcher",
        "workerSpec",
        "readinessGates",
        "overhead",
        "annotations",
        "labels",
        "topologySpreadConstraints",
    }
)
CONTAINER_MARKERS = ("resources", "storageUri", "image", "modelFormat", "runtime", "args")


# Labels a node gets only after it boots, from daemons running on it: GPU feature discovery
# (`nvidia.com/gpu.product`, `.memory`, `.count`, `nvidia.com/cuda.*`, `nvidia.com/mig.*`, ...:
# NVIDIA/k8s-device-plugin tests/e2e expectedLabelPatterns) and node-feature-discovery
# (`feature.node.kubernetes.io/*`). A cloud pool's node template (what the autoscaler simulates
# when the pool is at zero) has only the labels the pool is created with.
BOOT_LABEL_PREFIXES = ("nvidia.com/", "feature.node.kubernetes.io/")
# Labels a cloud pool's nodes carry from creation that say which GPU it has (fix text of GI014).
CREATION_GPU_LABELS = (
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    POOL_LABEL,
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
)

ASG_TAG = "aws:autoscaling/tag:Tag"
NODE_TEMPLATE_TAG = "k8s.io/cluster-autoscaler/node-template/"
MAX_REPLICAS_ANNOTATION = "gpu-inference.dev/max-replicas"

# Model size (GI019): a workload states it with these annotations (on the InferenceService, the
# Seldon Server / Model, or the Deployment): the weights in GB, or parameters and dtype.
MODEL_SIZE_ANNOTATION = "gpu-inference.dev/model-size-gb"
MODEL_PARAMETERS_ANNOTATION = "gpu-inference.dev/model-parameters"
MODEL_DTYPE_ANNOTATION = "gpu-inference.dev/model-dtype"
DTYPE_BYTES = {
    "fp32": 4.0,
    "float32": 4.0,
    "fp16": 2.0,
    "float16": 2.0,
    "bf16": 2.0,
    "bfloat16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}
# GPU memory a model needs beyond its weights, as a fraction of them: the CUDA context, activations
# and a minimal KV cache. Stated, not measured: vLLM itself takes only 90% of a GPU by default
# (`gpu_memory_utilization` 0.9), so weights + 20% is the least that has a chance to start.
MODEL_MEMORY_OVERHEAD = 0.2

# Knative revision annotation: how long a new revision may take to become ready (GI020).
PROGRESS_DEADLINE_ANNOTATION = "serving.knative.dev/progress-deadline"
POOL_STARTUP_ANNOTATION = "gpu-inference.dev/node-startup-seconds"

# Seldon Core 2 agent: a server replica may register models up to its server container's memory
# request x (1 + SELDON_OVERCOMMIT_PERCENTAGE / 100), 10 by default (Seldon docs, models/mms.md).
SELDON_OVERCOMMIT_ENV = "SELDON_OVERCOMMIT_PERCENTAGE"
SELDON_DEFAULT_OVERCOMMIT = 10
SELDON_SERVER_CONTAINERS = ("mlserver", "triton")


def wired_annotation(component: str) -> str:
    """The per-component wiring annotation of an InferenceService component."""
    return WIRED_COMPONENT_POOL_ANNOTATION.format(component=component)
