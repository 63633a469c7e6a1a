"""The rules GI001-GI029 of the registry (`components.check.registry`), and the names their
declarations share with the rest."""

from __future__ import annotations

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
    GPU_MEMORY_POOLS,
    KARPENTER,
    KNATIVE_FEATURES_SOURCE,
    KUBE_SCHEDULER,
    NO_DAEMONSETS,
    PODS,
    SLICED,
    WORKLOAD_KINDS,
    Rule,
    by_autoscaler,
    checked,
    every_kind_but,
    on,
)

RULES_GI001_GI029: tuple[Rule, ...] = (
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
        severities=("info", "error"),
        scope="pod",
        doc="the graph has no Knative config (the cluster may have it: not guessed)",
        pools=None,
        workloads=("InferenceService",),
        judge=KNATIVE_FEATURES_SOURCE,
        run="placement:knative_flags",
        says_not_judged=True,
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
        not_applicable={"existing": "existing nodes are up: their labels are there"},
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
        not_applicable=by_autoscaler(
            gke="GKE's autoscaler reads the node pool's own config, not tags",
            karpenter="Karpenter reads the NodePool, not tags",
        ),
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
            "on. Where a pool may give it nodes of several kinds, each is judged: every instance "
            "type (VM size) Karpenter's launch decision lists for the pod, each ComputeClass "
            "priority it can land on; the message names those that cannot hold the model and "
            "states the numbers (GI059 when it cannot judge)"
        ),
        pools=GPU_MEMORY_POOLS,
        workloads=PODS,
        judge=checked("vLLM (model.serving.llm: its memory rules and their sources)"),
        run="model_fit:model_too_large",
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
        severities=("info", "error"),
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
        says_not_judged=True,
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
        not_judged=dict.fromkeys(("compute_class", "autopilot"), "its GPU sharing is not read"),
        not_applicable="GKE's MPS only: NVIDIA's device plugin mounts the MPS daemon's shared "
        "memory itself (k8s-device-plugin v0.17.1 internal/plugin/mps.go)",
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
            "`capacityReservationSelectorTerms`); judged as Karpenter 1.15.0's scheduler does "
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
        not_applicable="no Karpenter NodePool: its autoscaler is not Karpenter",
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
        not_applicable="no Karpenter NodePool: its autoscaler is not Karpenter",
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
        not_applicable="the labels are GKE's DRA setup's (GKE pools only)",
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
        not_applicable="Autopilot's GPU request rules (Autopilot only)",
    ),
)
