"""The placement check's rules, one entry each, in the order they run (kube-scheduler's plugin
registry is the model): a new rule is its module (the function), its test and its entry here.
What is said of the rules derives from this list: `CODES`, the findings table of docs/findings.md
and the policy pack's code lists (`python -m components.check.registry.docs` writes the docs)."""

from __future__ import annotations

from collections.abc import Mapping

from .rule import (
    CAPACITY_GAPS,
    CAPACITY_POOLS,
    DEVICE_PLUGIN_GAPS,
    DEVICE_PLUGIN_POOLS,
    DEVICE_PLUGIN_SOURCE,
    DYNAMIC,
    EVERY_KIND,
    FIT_GAPS,
    FIT_POOLS,
    KARPENTER,
    KNATIVE_FEATURES_SOURCE,
    KUBE_SCHEDULER,
    NO_DAEMONSETS,
    PODS,
    QUOTA_GAPS,
    SEVERITIES,
    SLICED,
    VLLM_SOURCE,
    WORKLOAD_KINDS,
    Rule,
    checked,
    every_kind_but,
    on,
)

QUOTA_POLICY = "gpu-cloud-quota"
"""The policy pack's policy of the cloud quotas (the placement policies leave its codes to it)."""

RULES: tuple[Rule, ...] = (
    Rule(
        code="GI001",
        slug="no-pool",
        severities=("error",),
        scope="pod",
        doc=(
            "a pod template can land on no pool: it selects (nodeSelector / required affinity) a "
            "pool's labels but an untolerated taint or the GPU count keeps it out of every pool it "
            "selects, whatever it requests and wired or not; or it requests GPUs or is wired and "
            "lands nowhere"
        ),
        pools=EVERY_KIND,
        workloads=NO_DAEMONSETS,
        judge=KUBE_SCHEDULER,
        run="placement:no_pool",
    ),
    Rule(
        code="GI002",
        slug="wrong-pool",
        severities=("error",),
        scope="pod",
        doc="it can land on a pool other than the one(s) it was wired to",
        pools=EVERY_KIND,
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="placement:wrong_pool",
    ),
    Rule(
        code="GI003",
        slug="cpu-on-gpu-pool",
        severities=("error",),
        scope="pod",
        doc="it requests no GPU but can land on a GPU pool (would keep a GPU node up)",
        pools=EVERY_KIND,
        workloads=NO_DAEMONSETS,
        judge=KUBE_SCHEDULER,
        run="placement:cpu_on_gpu_pool",
    ),
    Rule(
        code="GI004",
        slug="too-many-gpus",
        severities=("error",),
        scope="pod",
        doc="it requests more GPUs than the pool's nodes have",
        pools=EVERY_KIND,
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="placement:too_many_gpus",
    ),
    Rule(
        code="GI005",
        slug="knative-flag",
        severities=("error",),
        scope="pod",
        doc=(
            "a Serverless InferenceService uses nodeSelector / affinity / tolerations while the "
            "Knative flag is off"
        ),
        pools=None,
        workloads=("InferenceService",),
        judge=KNATIVE_FEATURES_SOURCE,
        run="placement:knative_flags",
    ),
    Rule(
        code="GI006",
        slug="knative-config-absent",
        severities=("info",),
        scope="pod",
        doc="the graph has no Knative config (the cluster may have it: not guessed)",
        pools=None,
        workloads=("InferenceService",),
        judge=KNATIVE_FEATURES_SOURCE,
        run="placement:knative_flags",
    ),
    Rule(
        code="GI007",
        slug="device-plugin-taint",
        severities=("error",),
        scope="pool",
        doc="a GPU pool's taint is not tolerated by the NVIDIA device plugin in the graph",
        pools=DEVICE_PLUGIN_POOLS,
        workloads=(),
        judge=DEVICE_PLUGIN_SOURCE,
        run="placement:device_plugin_taints",
        not_judged=DEVICE_PLUGIN_GAPS,
    ),
    Rule(
        code="GI008",
        slug="never-scales-to-zero",
        severities=("warning",),
        scope="pool",
        doc="a pool with minNodes 0 hosts a workload that never scales to zero",
        pools=every_kind_but("existing"),
        workloads=NO_DAEMONSETS,
        judge=checked("kserve/kserve#3514: RawDeployment never scales to zero"),
        run="placement:never_scales_to_zero",
        not_judged={"existing": "existing nodes have no min"},
    ),
    Rule(
        code="GI009",
        slug="wildcard-toleration",
        severities=("warning",),
        scope="pod",
        doc="a pod with a wildcard toleration can land on a GPU pool",
        pools=EVERY_KIND,
        workloads=NO_DAEMONSETS,
        judge=KUBE_SCHEDULER,
        run="placement:wildcard_toleration",
    ),
    Rule(
        code="GI010",
        slug="seldon-model-unmatched",
        severities=("warning",),
        scope="graph",
        doc="a Seldon Model matches no Server capability, or its pinned Server does not exist",
        pools=None,
        workloads=("Model",),
        judge=checked("Seldon Core 2 docs-gb/models/scheduling.md"),
        run="placement:seldon_models",
    ),
    Rule(
        code="GI011",
        slug="wired-pool-unreachable",
        severities=("error",),
        scope="pod",
        doc="a pod cannot reach a pool it is wired to",
        pools=EVERY_KIND,
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="placement:wired_pool_unreachable",
    ),
    Rule(
        code="GI012",
        slug="device-plugin-absent",
        severities=("warning",),
        scope="pool",
        doc="no device plugin in the graph, and the chart default would not tolerate a pool taint",
        pools=DEVICE_PLUGIN_POOLS,
        workloads=(),
        judge=DEVICE_PLUGIN_SOURCE,
        run="placement:device_plugin_taints",
        not_judged=DEVICE_PLUGIN_GAPS,
    ),
    Rule(
        code="GI013",
        slug="invalid-spec",
        severities=("error",),
        scope="graph",
        doc="a taint, toleration, selector or GPU quantity Kubernetes would refuse",
        pools=None,
        workloads=WORKLOAD_KINDS,
        judge=checked("k8s.io/apimachinery validation (model.scheduling)"),
        run=None,
    ),
    Rule(
        code="GI014",
        slug="cold-pool-label",
        severities=("warning",),
        scope="pod",
        doc=(
            "cold-pool deadlock: it selects a label GPU / node feature discovery puts on nodes "
            "only after they boot (`nvidia.com/gpu.product`, `feature.node.kubernetes.io/*`, ...) "
            "on a pool that can be at 0 nodes: the autoscaler's node template lacks it, no node is "
            "ever added (the fix names the pool's creation label to select instead)"
        ),
        pools=every_kind_but("existing"),
        workloads=NO_DAEMONSETS,
        judge=checked("NVIDIA/k8s-device-plugin tests/e2e expectedLabelPatterns"),
        run="failures:cold_pool_label",
    ),
    Rule(
        code="GI015",
        slug="max-scale-capacity",
        severities=("warning",),
        scope="graph",
        doc=(
            "max-scale capacity: at max scale (every workload at its `maxReplicas`, Knative "
            "without one at its min) the pods of a set of pools have no packing on the pools' max "
            "nodes, every resource counted (exact, as GI040); what stays Pending and the max nodes "
            "that hold them. Replicas that always run and never fit are GI040, an error"
        ),
        pools=CAPACITY_POOLS,
        workloads=NO_DAEMONSETS,
        judge=None,
        run="capacity.judge:capacity",
        not_judged=CAPACITY_GAPS,
    ),
    Rule(
        code="GI016",
        slug="asg-node-template-tags",
        severities=(
            "error",
            "warning",
        ),
        scope="pool",
        doc=(
            "a group that can be at 0 nodes lacks a cluster-autoscaler `node-template` tag for a "
            "taint or a label a workload selects (or `resources/nvidia.com/gpu` where the NVIDIA "
            "device plugin time-slices its GPUs; otherwise cluster-autoscaler takes the GPUs from "
            "the instance type): an error on a self-managed Auto Scaling group (its node labels "
            "and taints read from its launch template's kubelet flags; cluster-autoscaler knows "
            "them only from the tags), a warning on an EKS managed node group (cluster-autoscaler "
            "1.24+ reads its labels and taints from EKS `DescribeNodegroup` and its GPUs from the "
            "instance type, given the IAM permission `eks:DescribeNodegroup`) and on an AKS agent "
            "pool (upstream cluster-autoscaler 1.36.1 reads a scale set's labels and taints only "
            "from its `k8s.io_cluster-autoscaler_node-template_{label,taint}_<key>` tags, its "
            "`agentpool` labels from the scale set's pool-name tag and "
            "`kubernetes.azure.com/accelerator` for the NVIDIA sizes of its list, which lacks the "
            "A10, H100 and H200 ones; AKS's own build may take the pool's labels from AKS)"
        ),
        pools=on("eks", "asg", "aks"),
        workloads=(),
        judge=checked("cluster-autoscaler-1.36.1 aws_manager.go, azure_template.go"),
        run="failures:node_template_tags",
    ),
    Rule(
        code="GI017",
        slug="knative-config-reverted",
        severities=("error",),
        scope="graph",
        doc=(
            "a `knative-serving/config-*` ConfigMap (patch) while a KnativeServing CR is in the "
            "graph: the operator reverts it; set `spec.config.<name>`"
        ),
        pools=None,
        workloads=(),
        judge=checked("knative/operator#431, #2062 (it reverts config-* edits)"),
        run="failures:knative_config_reverted",
    ),
    Rule(
        code="GI018",
        slug="seldon-model-capacity",
        severities=("warning",),
        scope="graph",
        doc=(
            "a Seldon Model's `memory` or `replicas` above what every capable Server has (memory "
            "request x (1 + overcommit 10%) per replica, replicas): ScheduleFailed"
        ),
        pools=None,
        workloads=("Model",),
        judge=checked("Seldon Core 2 docs-gb/models/scheduling.md, models/mms.md (overcommit)"),
        run="placement:seldon_models",
    ),
    Rule(
        code="GI019",
        slug="model-too-large",
        severities=("error",),
        scope="pod",
        doc=(
            "the model's weights (`gpu-inference.dev/model-size-gb`, or `model-parameters` x "
            "`model-dtype`) + 20% exceed the GPUs it requests x one GPU's memory (the catalog's); "
            "for the vLLM pods of an LLMInferenceService, LLM-grade: the weights split over tensor "
            "x pipeline GPUs plus the KV cache of one `max-model-len` sequence (layers, KV heads, "
            "head dim, dtype of the model's row in `components/model/serving/llm.py`) above "
            "`gpu-memory-utilization` (vLLM's 0.9) x one GPU's memory on every pool it can land "
            "on; the message states the numbers"
        ),
        pools=on("gke", "eks", "aks", "nap", existing="its nodes state their GPU memory"),
        workloads=PODS,
        judge=checked("vLLM (model.serving.llm: its memory rules and their sources)"),
        run="failures:model_too_large",
        not_judged=dict.fromkeys(
            ("compute_class", "autopilot", "karpenter", "auto_mode", "asg"),
            "its reader sets no GPU memory",
        ),
    ),
    Rule(
        code="GI020",
        slug="progress-deadline-short",
        severities=("warning",),
        scope="pod",
        doc=(
            "a Serverless GPU component scaling to zero on a pool that can be at 0 nodes has a "
            "progress deadline (its `serving.knative.dev/progress-deadline`, else the cluster's, "
            "else Knative's 600 s) shorter than the pool's GPU node start-up (900 s on GKE and EKS "
            "by default)"
        ),
        pools=every_kind_but("existing"),
        workloads=("InferenceService",),
        judge=checked("kserve/kserve#1247, knative/serving#9531 (progress-deadline)"),
        run="failures:progress_deadline",
        not_judged={"existing": "existing nodes are up"},
    ),
    Rule(
        code="GI021",
        slug="fits-no-node",
        severities=("error",),
        scope="pod",
        doc=(
            "the pod fits no node of the pools it can land on: its requests (all containers, the "
            "largest init container, overhead, and what the controllers add: KServe's cpu 1 / "
            "memory 2Gi for what a model's container or a custom one does not ask (its runtime's, "
            "its chart's `kserve.inferenceservice.resources`), Knative's queue-proxy (25m, or as "
            "`config-deployment` and `queueproxy.resource-defaults` set it), KServe's "
            "storage-initializer 100m / 100Mi, its modelcar and modelcar-init 10m / 15Mi for an "
            "`oci://` model, its agent 100m / 100Mi for a logger or a batcher, "
            "Seldon's agent and rclone on its built-in ServerConfigs) above what a node's "
            "allocatable cpu, memory, ephemeral storage or pods leaves beside the node's DaemonSet "
            "pods; the message names the resource, the ask, the largest allocatable and its shape "
            "(and what the DaemonSets hold of it), the fix a boot disk, a machine / instance type "
            "or a pool that holds it"
        ),
        pools=FIT_POOLS,
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="fit:fits",
        not_judged=FIT_GAPS,
    ),
    Rule(
        code="GI022",
        slug="fit-unknown",
        severities=("info",),
        scope="pool",
        doc=(
            "fit not judged on a pool: a machine / instance type the node-shape catalog lacks, "
            "existing nodes that do not declare `nodeAllocatable`, Autopilot (its per-accelerator "
            "limits are not verified), a Karpenter NodePool whose EC2NodeClass is not in the graph "
            "(its volume and kubelet settings are unknown)"
        ),
        pools=EVERY_KIND,
        workloads=PODS,
        judge=None,
        run="fit:fit_unknown",
    ),
    Rule(
        code="GI023",
        slug="shared-gpu-request",
        severities=("error",),
        scope="pod",
        doc=(
            "a container asks more than 1 `nvidia.com/gpu` on a pool whose GPUs are shared: GKE "
            "time-sharing (and MPS on multi-GPU nodes) refuses it at admission, the NVIDIA device "
            "plugin's time-slicing hands out replicas of maybe one GPU (ours sets "
            "`failRequestsGreaterThanOne`, so it refuses too)"
        ),
        pools=on(
            gke="GKE time-sharing or MPS",
            eks=SLICED,
            asg=SLICED,
            karpenter=SLICED,
            auto_mode=SLICED,
            aks=SLICED,
            nap=SLICED,
            existing=SLICED,
        ),
        workloads=PODS,
        judge=checked("GKE's device plugin (UnexpectedAdmissionError), k8s-device-plugin v0.17.1"),
        run="fit:fits",
        not_judged=dict.fromkeys(("compute_class", "autopilot"), "its GPU sharing is not read"),
    ),
    Rule(
        code="GI024",
        slug="model-exceeds-disk",
        severities=("error",),
        scope="pod",
        doc=(
            "the predictor's (or an LLMInferenceService vLLM pod's, `hf://` / `s3://`) model "
            "(`modelSizeGb`), which KServe's storage-initializer downloads to the node's ephemeral "
            "storage, is larger than what every node it can land on leaves allocatable"
        ),
        pools=FIT_POOLS,
        workloads=("InferenceService", "LLMInferenceService"),
        judge=checked("kserve v0.20.0 storage_initializer_injector.go"),
        run="fit:fits",
        not_judged=FIT_GAPS,
    ),
    Rule(
        code="GI025",
        slug="mps-without-host-ipc",
        severities=("error",),
        scope="pod",
        doc=(
            "a GPU pod on a GKE MPS pool without `hostIPC: true` (it cannot reach the node's MPS "
            "control daemon)"
        ),
        pools=on("gke"),
        workloads=PODS,
        judge=checked("container-engine-accelerators @992db81 pkg/gpu/nvidia/manager.go"),
        run="fit:fits",
    ),
    Rule(
        code="GI026",
        slug="karpenter-will-not-launch",
        severities=("error",),
        scope="pod",
        doc=(
            "Karpenter would launch no node for the pod from a NodePool it lands on, the reason "
            "named: requirements (the NodePool's and the pod's, against the catalog's instance "
            "types), requests (against each type's allocatable with the EC2NodeClass's volume, "
            "instance-store policy and kubelet settings, plus the DaemonSet pods Karpenter adds to "
            "it), `limits` (cpu, memory, `nvidia.com/gpu`, nodes: Karpenter counts an instance "
            "type's capacity, from zero), capacity type (`reserved` needs "
            "`capacityReservationSelectorTerms`); judged as Karpenter 1.14.1's scheduler does "
            "(relaxed preferences, every taint effect, weights); on AKS node auto-provisioning (a "
            "NodePool whose node class is an `AKSNodeClass`) the same, with Karpenter on Azure "
            "v1.14.2's labels, instance types from the Azure catalog and its own reservations, and "
            "`spot` / `on-demand` as the only capacity types"
        ),
        pools=on(
            karpenter=DYNAMIC,
            nap=DYNAMIC,
            auto_mode=DYNAMIC
            + "; as Karpenter decides (Auto Mode's own provisioner is not public)",
        ),
        workloads=NO_DAEMONSETS,
        judge=KARPENTER,
        run="scaleup:karpenter_will_not_launch",
    ),
    Rule(
        code="GI027",
        slug="dra-not-provisioned",
        severities=("error",),
        scope="pod",
        doc=(
            "a pod taking devices through DRA ResourceClaims lands on a Karpenter or EKS Auto Mode "
            "pool: Karpenter ignores DRA pods (`IGNORE_DRA_REQUESTS` defaults to true), so no node "
            "is launched"
        ),
        pools=on(karpenter=DYNAMIC, nap=DYNAMIC, auto_mode=DYNAMIC),
        workloads=NO_DAEMONSETS,
        judge=KARPENTER,
        run="scaleup:dra_not_provisioned",
    ),
    Rule(
        code="GI028",
        slug="dra-driver-label",
        severities=("error",),
        scope="pod",
        doc=(
            "a pod taking GPUs through DRA lands on a GKE pool whose nodes lack DRA's labels "
            "(`gke-no-default-nvidia-gpu-device-plugin=true`, `nvidia.com/gpu.present=true`), or "
            "on Autopilot (no DRA)"
        ),
        pools=on("gke", "compute_class", "autopilot"),
        workloads=NO_DAEMONSETS,
        judge=checked("GKE's DRA setup page (the node labels: readers.dra.GKE_DRA_LABELS)"),
        run="scaleup:dra_driver_label",
    ),
    Rule(
        code="GI029",
        slug="autopilot-request-out-of-range",
        severities=("error",),
        scope="pod",
        doc=(
            "Autopilot would reject the GPU pod: no `cloud.google.com/gke-accelerator`, a GPU type "
            "Autopilot does not offer, a GPU quantity it does not accept for that type, or a "
            "`gke-accelerator-count` below the quantity"
        ),
        pools=on("autopilot"),
        workloads=NO_DAEMONSETS,
        judge=checked("GKE docs how-to/autopilot-gpus (model.nodes.autopilot)"),
        run="scaleup:autopilot_request",
    ),
    Rule(
        code="GI030",
        slug="tensor-parallel-heads",
        severities=("error",),
        scope="pod",
        doc=(
            "an LLMInferenceService's tensor parallelism does not divide its model's attention "
            "heads (`Total number of attention heads ... must be divisible by tensor parallel "
            "size`), or neither divides its KV heads nor is a multiple of them (vLLM's "
            "`QKVParallelLinear` divides them one way or the other): vLLM refuses to start; the "
            "fix lists the sizes vLLM accepts for the model"
        ),
        pools=None,
        workloads=("LLMInferenceService",),
        judge=VLLM_SOURCE,
        run="llm:parallelism",
    ),
    Rule(
        code="GI031",
        slug="parallelism-gpus",
        severities=(
            "error",
            "warning",
        ),
        scope="pod",
        doc=(
            "vLLM's world size (tensor x pipeline in one pod or a pipeline worker group, data x "
            "tensor over a data-parallel group) is not the GPUs the pod / worker group requests: "
            "an error when fewer (vLLM cannot start its ranks), a warning when more (GPUs idle)"
        ),
        pools=None,
        workloads=("LLMInferenceService",),
        judge=VLLM_SOURCE,
        run="llm:parallelism",
    ),
    Rule(
        code="GI032",
        slug="data-parallel-pod-gpus",
        severities=(
            "error",
            "warning",
        ),
        scope="pod",
        doc=(
            "a data-parallel vLLM pod (LeaderWorkerSet worker group) requests other than "
            "`dataLocal x tensor` GPUs: an error when fewer, a warning when more"
        ),
        pools=None,
        workloads=("LLMInferenceService",),
        judge=VLLM_SOURCE,
        run="llm:parallelism",
    ),
    Rule(
        code="GI033",
        slug="ca-template-ephemeral-storage",
        severities=("error",),
        scope="pool",
        doc=(
            "a pod asking ephemeral storage lands on a cluster-autoscaler group (EKS managed node "
            "group or self-managed Auto Scaling group) that can be at 0 nodes whose "
            "`k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage` tag is missing "
            "or below what it asks: cluster-autoscaler's template node has no other ephemeral "
            "storage (kubernetes/autoscaler#1869), so it never adds a node for the pod from zero; "
            "gpu-inference's EKS pools tag their groups with what their nodes leave allocatable"
        ),
        pools=on("eks", "asg"),
        workloads=NO_DAEMONSETS,
        judge=checked("cluster-autoscaler-1.36.1 aws_manager.go buildNodeFromTemplate"),
        run="failures:template_storage",
    ),
    Rule(
        code="GI034",
        slug="pool-never-has-nodes",
        severities=("error",),
        scope="pod",
        doc=(
            "a pod can land only on pools that never have a node: a GKE node pool without "
            "autoscaling and `nodeCount: 0`, or a node group / Auto Scaling group whose maximum is "
            "0 (GI008 is not said of such a pool)"
        ),
        pools=on("gke", "eks", "asg"),
        workloads=NO_DAEMONSETS,
        judge=None,
        run="failures:pool_never_has_nodes",
    ),
    Rule(
        code="GI040",
        slug="capacity-short",
        severities=("error",),
        scope="graph",
        doc=(
            "capacity: the pods that run all the time (fixed and min replicas, Seldon Server "
            "replicas, LeaderWorkerSet groups whole, prefill and decode) have no packing on their "
            "pools' max nodes, with every resource (GPUs, cpu, memory, ephemeral storage, pods) "
            "and the DaemonSets' share of each node; exact (see below); the message names what "
            "cannot run and the fix the fewest max nodes that hold them"
        ),
        pools=CAPACITY_POOLS,
        workloads=NO_DAEMONSETS,
        judge=KUBE_SCHEDULER,
        run="capacity.judge:capacity",
        not_judged=CAPACITY_GAPS,
    ),
    Rule(
        code="GI041",
        slug="capacity-headroom",
        severities=("info",),
        scope="graph",
        doc=(
            "headroom: per pool at its max, the nodes and GPUs the pods that run all the time "
            "leave free (the fewest nodes that hold them, for a pool of one node shape)"
        ),
        pools=CAPACITY_POOLS,
        workloads=NO_DAEMONSETS,
        judge=None,
        run="capacity.judge:capacity",
        not_judged=CAPACITY_GAPS,
    ),
    Rule(
        code="GI042",
        slug="cold-capacity",
        severities=("warning",),
        scope="graph",
        doc=(
            "cold capacity: the pods that run all the time do not fit the pools' min nodes: the "
            "rest wait for a node to start (the pool's start-up time) each time they are made, and "
            "every scale-up from min is a cold start; the fix names the min that holds them"
        ),
        pools=CAPACITY_POOLS,
        workloads=NO_DAEMONSETS,
        judge=None,
        run="capacity.judge:capacity",
        not_judged=CAPACITY_GAPS,
    ),
    Rule(
        code="GI043",
        slug="fragmentation",
        severities=("warning",),
        scope="graph",
        doc=(
            "fragmentation: a packing exists, but kube-scheduler's default scoring, placing pods "
            "one at a time, spreads them so that an order their controllers may create them in "
            "leaves one Pending: the order, each pod's node, and the max nodes with which no order "
            "strands a pod"
        ),
        pools=CAPACITY_POOLS,
        workloads=NO_DAEMONSETS,
        judge=KUBE_SCHEDULER,
        run="capacity.judge:capacity",
        not_judged=CAPACITY_GAPS,
    ),
    Rule(
        code="GI044",
        slug="capacity-unknown",
        severities=("info",),
        scope="graph",
        doc=(
            "capacity or fragmentation not judged: a pool with a max but nodes of several kinds (a "
            "Karpenter NodePool with `limits.nodes`), or a search past its bound"
        ),
        pools=CAPACITY_POOLS,
        workloads=NO_DAEMONSETS,
        judge=None,
        run="capacity.judge:capacity",
        not_judged=CAPACITY_GAPS,
    ),
    Rule(
        code="GI045",
        slug="quota-max-nodes",
        severities=("error",),
        scope="graph",
        doc=(
            "cloud quota: the pools counting against a quota the stack declares (`quotas`) can "
            "grow past it (max nodes x GPUs per node on GCE, x vCPUs per node on EC2, Spot apart): "
            "scale-up past it fails (GCE QUOTA_EXCEEDED, EC2 VcpuLimitExceeded); see "
            "[capacity.md](capacity.md)"
        ),
        pools=on("gke", "eks"),
        workloads=(),
        judge=checked("GCE QUOTA_EXCEEDED, EC2 VcpuLimitExceeded (model.nodes.quotas)"),
        run="capacity.judge:capacity",
        not_judged=QUOTA_GAPS,
        policy=QUOTA_POLICY,
    ),
    Rule(
        code="GI046",
        slug="quota-capacity",
        severities=("error",),
        scope="graph",
        doc=(
            "cloud quota: with the nodes the quota allows, the pods that run all the time have no "
            "packing (exact, as GI040): they stay Pending though the pool's max would hold them; "
            "the fix the quota that holds them"
        ),
        pools=on("gke", "eks"),
        workloads=NO_DAEMONSETS,
        judge=None,
        run="capacity.judge:capacity",
        not_judged=QUOTA_GAPS,
        policy=QUOTA_POLICY,
    ),
    Rule(
        code="GI050",
        slug="dra-claim-count",
        severities=("error",),
        scope="pod",
        doc=(
            "a pod's DRA claims ask for more devices than one node of any pool it can land on "
            "publishes that match them (e.g. a claim for 2 GPUs on 1-GPU nodes): kube-scheduler's "
            "allocator finds no node, the pod stays Pending ([DRA](dra.md))"
        ),
        pools=on("gke", "eks", "existing"),
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="dra:claims",
    ),
    Rule(
        code="GI051",
        slug="dra-claim-selector",
        severities=("error",),
        scope="pod",
        doc=(
            "no device of a pool the pod can land on matches a claim's DeviceClass and CEL "
            "selectors (e.g. an H100 selector on an L4 pool, a MIG claim on whole GPUs, a pool "
            "publishing no DRA device)"
        ),
        pools=on(
            "gke",
            "eks",
            "existing",
            "asg",
            "aks",
            "autopilot",
            compute_class="it does not create its node pools",
        ),
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="dra:claims",
    ),
    Rule(
        code="GI052",
        slug="dra-selector-error",
        severities=("error",),
        scope="pod",
        doc=(
            "a claim's CEL selector does not compile, or fails on a device the allocator reads (an "
            "attribute the device lacks, a domain it has none of): kube-scheduler aborts the pod's "
            "scheduling on every node (`SchedulerError`); guard with `'attr' in "
            "device.attributes['gpu.nvidia.com']`"
        ),
        pools=on("gke", "eks", "existing"),
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="dra:claims",
    ),
    Rule(
        code="GI053",
        slug="dra-serverless",
        severities=("error",),
        scope="pod",
        doc=(
            "a Serverless (Knative) InferenceService component takes devices by claim: Knative's "
            "webhook refuses `resources.claims` (knative/serving#15332)"
        ),
        pools=None,
        workloads=("InferenceService",),
        judge=checked("knative/serving#15332 (the webhook refuses resources.claims)"),
        run="dra:serverless",
    ),
    Rule(
        code="GI054",
        slug="dra-no-driver",
        severities=(
            "error",
            "warning",
        ),
        scope="pool",
        doc=(
            "a DRA pool whose nodes no NVIDIA DRA driver kubelet plugin serves: an error when the "
            "graph's driver does not tolerate the pool's taints (or select its nodes), a warning "
            "when the graph installs no driver (the cluster's must)"
        ),
        pools=on("gke", "eks", "existing"),
        workloads=(),
        judge=checked("dra-driver-nvidia-gpu chart 0.4.1 (its kubelet plugin's placement)"),
        run="dra:no_driver",
    ),
    Rule(
        code="GI055",
        slug="dra-not-autoscaled",
        severities=("error",),
        scope="pod",
        doc=(
            "a DRA pod can land on a pool made by an autoscaler that ignores claims: GKE node "
            "auto-provisioning (a ComputeClass that creates node pools); Karpenter and EKS Auto "
            "Mode are GI027"
        ),
        pools=on(compute_class="it creates its node pools (nodePoolAutoCreation)"),
        workloads=PODS,
        judge=checked("GKE's DRA setup page, Limitations"),
        run="dra:not_autoscaled",
    ),
    Rule(
        code="GI056",
        slug="dra-claim-unknown",
        severities=(
            "error",
            "warning",
        ),
        scope="pod",
        doc=(
            "a claim names a DeviceClass neither the driver nor the graph defines (error: the pod "
            "stays Pending); a warning, not judged, when the pod names a claim or template the "
            "graph does not hold"
        ),
        pools=None,
        workloads=PODS,
        judge=KUBE_SCHEDULER,
        run="dra:claims",
    ),
    Rule(
        code="GI057",
        slug="dra-no-scale-from-zero",
        severities=("error",),
        scope="pod",
        doc=(
            "a DRA pod can land only on cluster-autoscaler groups on AWS (EKS managed node groups, "
            "self-managed Auto Scaling groups) that can be at 0 nodes: cluster-autoscaler "
            "(v1.36.1) builds the template node of a group without a node with no ResourceSlices, "
            "so no simulated node allocates the claims and the group never scales up from zero; "
            "`minNodes: 1` (the autoscaler then copies a running node's slices) ([DRA](dra.md))"
        ),
        pools=on("eks", "asg"),
        workloads=PODS,
        judge=checked("cluster-autoscaler-1.36.1 aws_cloud_provider.go TemplateNodeInfo"),
        run="dra:claims",
    ),
    Rule(
        code="GI058",
        slug="dra-no-gpu-driver",
        severities=(
            "error",
            "warning",
        ),
        scope="pool",
        doc=(
            "a GKE DRA pool, GKE's automatic GPU driver install off (as GKE's DRA setup asks), "
            "whose nodes no NVIDIA GPU driver installer serves: without the driver the DRA driver "
            "publishes no GPU. An error when the graph's installers are for another node image "
            "(COS vs Ubuntu: each manifest's installer image is preloaded on its own image only) "
            "or do not tolerate the pool's taints or select its nodes; a warning when the graph "
            "installs none (the cluster may run its own, which no graph shows). A DaemonSet "
            "running GKE's installer image, or its manifest applied whole (`yaml/v2` ConfigFile of "
            "container-engine-accelerators "
            "`nvidia-driver-installer/{cos,ubuntu}/daemonset-preloaded*.yaml`), counts "
            "([DRA](dra.md))"
        ),
        pools=on("gke"),
        workloads=(),
        judge=checked("container-engine-accelerators nvidia-driver-installer/{cos,ubuntu}"),
        run="dra:no_gpu_driver",
    ),
    Rule(
        code="GI061",
        slug="ert-only-taint",
        severities=("warning",),
        scope="pool",
        doc=(
            "a GPU pool whose only taint is one the ExtendedResourceToleration admission plugin "
            "makes every GPU pod tolerate (`nvidia.com/gpu:NoSchedule`, the plugin on), while "
            "GPU workloads of the graph not wired to it exist: only labels keep them, and any GPU "
            "pod of the cluster, off it; a taint of its own (`dedicated=<pool>:NoSchedule`) "
            "isolates it"
        ),
        pools=every_kind_but("autopilot"),
        workloads=NO_DAEMONSETS,
        not_judged={"autopilot": "an Autopilot pool takes no taint of its own"},
        judge=checked(
            "kubernetes v1.34.0 plugin/pkg/admission/extendedresourcetoleration/admission.go"
        ),
        run="isolation:ert_only_taint",
    ),
)


def _valid(rules: tuple[Rule, ...]) -> dict[str, Rule]:
    by_code: dict[str, Rule] = {}
    scopes: dict[str, str] = {}
    for r in rules:
        if r.code in by_code:
            raise ValueError(f"rule {r.code} registered twice")
        by_code[r.code] = r
        if r.run is not None and scopes.setdefault(r.run, r.scope) != r.scope:
            raise ValueError(f"{r.run} runs rules of two scopes")
    return by_code


BY_CODE: Mapping[str, Rule] = _valid(RULES)

CODES: dict[str, tuple[str, str]] = {r.code: (r.severity, r.slug) for r in RULES}
"""Code -> (its own severity, slug)."""


def codes(severity: str, policy: str | None = None) -> tuple[str, ...]:
    """The codes a finding of `severity` may have (its own or in the cases its doc names) that
    `policy` reports (None: the placement policies)."""
    assert severity in SEVERITIES
    return tuple(r.code for r in RULES if severity in r.severities and r.policy == policy)
