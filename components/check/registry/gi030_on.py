"""The rules GI030 on of the registry (`components.check.registry`)."""

from __future__ import annotations

from .rule import (
    CAPACITY_GAPS,
    CAPACITY_POOLS,
    EVERY_KIND,
    KARPENTER_NO_DRA,
    KUBE_SCHEDULER,
    NO_DAEMONSETS,
    PODS,
    QUOTA_GAPS,
    QUOTA_POLICY,
    VLLM_SOURCE,
    WORKLOAD_KINDS,
    Rule,
    by_autoscaler,
    checked,
    every_kind_but,
    on,
)

RULES_GI030_ON: tuple[Rule, ...] = (
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
        not_judged={
            "aks": "cluster-autoscaler on Azure's template ephemeral storage is not modelled"
        },
        not_applicable=by_autoscaler(
            gke="GKE's autoscaler takes the template's disk from the node pool's config",
            karpenter="Karpenter counts each instance type's ephemeral storage (GI026)",
        ),
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
        not_judged={"aks": "an agent pool's fixed count of 0 is not read"},
        not_applicable={
            "compute_class": "GKE creates its nodes on demand",
            "autopilot": "GKE creates its nodes on demand",
            "karpenter": "Karpenter launches nodes on demand (a static NodePool is GI026's)",
            "auto_mode": "Karpenter launches nodes on demand (a static NodePool is GI026's)",
            "nap": "Karpenter launches nodes on demand (a static NodePool is GI026's)",
            "existing": "existing nodes are there",
        },
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
        severities=("info", "error"),
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
        says_not_judged=True,
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
        not_judged=dict.fromkeys(
            ("compute_class", "asg", "aks"), "the DRA devices of its nodes are not modelled"
        ),
        not_applicable={
            "karpenter": KARPENTER_NO_DRA,
            "auto_mode": KARPENTER_NO_DRA,
            "nap": KARPENTER_NO_DRA,
            "autopilot": "Autopilot has no DRA (GI028)",
        },
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
        not_applicable={
            "karpenter": KARPENTER_NO_DRA,
            "auto_mode": KARPENTER_NO_DRA,
            "nap": KARPENTER_NO_DRA,
        },
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
        not_judged=dict.fromkeys(
            ("compute_class", "asg", "aks"), "the DRA devices of its nodes are not modelled"
        ),
        not_applicable={
            "karpenter": KARPENTER_NO_DRA,
            "auto_mode": KARPENTER_NO_DRA,
            "nap": KARPENTER_NO_DRA,
            "autopilot": "Autopilot has no DRA (GI028)",
        },
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
        not_judged=dict.fromkeys(
            ("compute_class", "asg", "aks"), "the DRA devices of its nodes are not modelled"
        ),
        not_applicable={
            "karpenter": KARPENTER_NO_DRA,
            "auto_mode": KARPENTER_NO_DRA,
            "nap": KARPENTER_NO_DRA,
            "autopilot": "Autopilot has no DRA (GI028)",
        },
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
        not_applicable="GKE node auto-provisioning only (Karpenter's is GI027; other pools "
        "create no node pools)",
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
        not_judged={
            "gke": "GKE's autoscaler on a DRA pool at 0 nodes is not modelled",
            "aks": "cluster-autoscaler on Azure's template node for DRA is not modelled",
        },
        not_applicable={
            "compute_class": "its node auto-provisioning is GI055's",
            "autopilot": "Autopilot has no DRA (GI028)",
            "karpenter": KARPENTER_NO_DRA,
            "auto_mode": KARPENTER_NO_DRA,
            "nap": KARPENTER_NO_DRA,
            "existing": "existing nodes are there",
        },
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
        not_applicable="GKE's GPU driver installers (GKE node pools only)",
    ),
    Rule(
        code="GI059",
        slug="model-fit-unknown",
        severities=("info", "error"),
        scope="pod",
        doc=(
            "whether a GPU pod's model fits its GPUs (GI019) is not judged, and why: its model's "
            "size is not given (a pod that loads a model: a `storageUri`, an "
            "LLMInferenceService's vLLM), the memory of a GPU it may get is unknown (a GPU the "
            "catalog lacks, existing nodes without `nvidia.com/gpu.memory`), or a "
            "mixture-of-experts model spreads its experts (expert parallelism); the fix says "
            "what to state"
        ),
        pools=EVERY_KIND,
        workloads=PODS,
        judge=None,
        run="model_fit:model_too_large",
        says_not_judged=True,
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
        run="placement:ert_only_taint",
    ),
    Rule(
        code="GI062",
        slug="aks-no-gpu-driver",
        severities=("error", "warning"),
        scope="pool",
        doc=(
            "GPU pods land on an AKS pool whose nodes get no NVIDIA driver and no device plugin "
            "from AKS (an agent pool's `gpuProfile.driver: None`, an AKSNodeClass's `gpu.mode: "
            "None`): an error when the graph installs no GPU Operator (the pods stay Pending), a "
            "warning when it does (its DaemonSets' tolerations are not read)"
        ),
        pools=on(
            aks="its gpuProfile.driver is None",
            nap="its AKSNodeClass gpu.mode is None",
        ),
        workloads=PODS,
        judge=checked(
            "AKS docs use-nvidia-gpu.md (Skip GPU driver installation); karpenter-provider-azure "
            "v1.14.2 aksbootstrap.go"
        ),
        run="aks:no_gpu_driver",
        not_applicable="AKS only: the other kinds' driver and device plugin are judged by GI007, "
        "GI012 and GI058",
    ),
    Rule(
        code="GI063",
        slug="aks-memory-range",
        severities=("warning",),
        scope="pool",
        doc=(
            "not judged: an AKS agent pool's node holds the pod only if its memory is near the "
            "top of what AKS nodes are measured to report (MemTotal 1.69-3.29% below the VM "
            "size's; no AKS rule states it): the warning names the range; a pod that fits "
            "nowhere in it is GI021"
        ),
        pools=on(aks="its VM size in the catalog"),
        workloads=NO_DAEMONSETS,
        judge=checked("AKS docs node-resource-reservations.md; measured AKS nodes (aks_shapes)"),
        run="aks:memory_range",
        not_applicable="AKS agent pools only: a NAP node's memory is Karpenter on Azure's own "
        "estimate, what it launches by; the other kinds' node memory is the node-shape "
        "catalog's rule (GI021)",
    ),
    Rule(
        code="GI065",
        slug="count-out-of-api-range",
        severities=("error",),
        scope="graph",
        doc=(
            "a workload's replica or parallelism count is outside what its API takes: past the "
            "int32 maximum (2147483647) of its field, or below its least value (a negative "
            "Deployment or StatefulSet `replicas`, an LLMInferenceService `parallelism` below "
            "1, a LeaderWorkerSet past 1000000 replicas): the API server refuses the object or "
            "its controller cannot read it"
        ),
        pools=None,
        workloads=tuple(k for k in WORKLOAD_KINDS if k != "DaemonSet"),
        judge=checked("apps/v1 int32 fields and validation; the CRDs' format: int32, minimum"),
        run="capacity.api_ranges:api_ranges",
    ),
    Rule(
        code="GI066",
        slug="request-above-limit",
        severities=("error",),
        scope="pod",
        doc=(
            "a container requests more of a resource than its limit, as KServe's defaults make a "
            "model's or custom container that asks more than cpu 1 / memory 2Gi and sets no limit "
            "(it gets the defaults as its limits): the API server refuses the pod, so its "
            "controller never makes one"
        ),
        pools=None,
        workloads=PODS,
        judge=checked(
            "kubernetes v1.37.2 pkg/apis/core/validation/validation.go "
            "ValidateResourceRequirements; kserve v0.20.0 inference_service_defaults.go"
        ),
        run="fit:requests_above_limits",
    ),
    Rule(
        code="GI067",
        slug="feature-gate-off",
        severities=("warning",),
        scope="graph",
        doc=(
            "an object or pod field needs a Kubernetes feature gate its releases leave off: a "
            "Workload or PodGroup, or pods with `schedulingGroup` (gang scheduling: "
            "`GenericWorkload`, off by default on 1.36 and 1.37), a DeviceTaintRule "
            "(`DRADeviceTaintRules`, off by default on 1.36, on from 1.37): on a cluster without "
            "the gate the API server refuses the object or drops the field; the check cannot "
            "see a cluster's gates, so it warns"
        ),
        pools=None,
        workloads=("Deployment", "StatefulSet"),
        judge=checked(
            "k8s.io/kubernetes v1.36.3 and v1.37.2 pkg/features/kube_features.go; k8s.io/api "
            "v0.37.2 core/v1 PodSpec.SchedulingGroup (+featureGate=GenericWorkload)"
        ),
        run="dra.gates:gated_features",
    ),
)
