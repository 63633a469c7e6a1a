"""The catalogue of bad stack config: one row per kind of mistake, each caught by `load_spec` before
anything is registered, with ONE InputError naming the full key path and a message saying what was
given and what is allowed.

Each row: id, base config (gke / eks / existing / llm / aks, see `config_bases.py`), the mutation (key path -> new
value, `DEL` removes the key), the expected error path, and a distinctive piece of the message.
Mutation paths start at the section (`pools[0].maxNodes` is `gpu-inference:pools[0].maxNodes`); a
path with a ':' is a full config key.
"""

from __future__ import annotations

import re

import pytest
from config_bases import DEL, mutated

from components.model.errors import InputError
from components.platform.load import load_spec

NS = "gpu-inference"
LONG = "a" * 41
SECRET_KEY = "namespaces.staticCredentials.AWS_SECRET_ACCESS_KEY"

# fmt: off
CASES = [
    # --- YAML shape: unknown keys, wrong types, missing keys, empty lists ------------------
    ("unknown-key-pool", "gke", {"pools[0].toleration": []}, "pools[0].toleration", "unknown key 'toleration'"),
    ("unknown-key-predictor", "gke", {"inferenceServices[0].predictor.toleration": []}, "inferenceServices[0].predictor.toleration", "did you mean 'tolerations'"),
    ("unknown-section", "gke", {"poolz": []}, "gpu-inference:poolz", "did you mean 'gpu-inference:pools'"),
    ("foreign-namespace", "gke", {"gpu-inferenc:pools": []}, "gpu-inferenc:pools", "outside this project's namespace"),
    ("wrong-type-int", "gke", {"pools[0].maxNodes": "three"}, "pools[0].maxNodes", "expected an integer, got 'three'"),
    ("wrong-type-bool", "gke", {"pools[0].spot": "yes"}, "pools[0].spot", "expected true or false, got 'yes'"),
    ("wrong-type-number", "gke", {"inferenceServices[0].predictor.modelSizeGb": "16GB"}, "inferenceServices[0].predictor.modelSizeGb", "expected a number, got '16GB' (a bare number, without a unit or quotes)"),
    ("wrong-type-number-bool", "gke", {"inferenceServices[0].predictor.modelSizeGb": True}, "inferenceServices[0].predictor.modelSizeGb", "expected a number, got true"),
    ("wrong-type-list", "gke", {"pools": "l4"}, "pools", "expected a list, got 'l4'"),
    ("wrong-type-mapping", "gke", {"knative": "operator"}, "knative", "expected a mapping"),
    ("map-instead-of-list", "gke", {"pools": {"l4-spot": {"accelerator": "nvidia-l4", "machineType": "g2-standard-8"}}}, "pools", "e.g. - {name: l4-spot, accelerator: nvidia-l4, machineType: g2-standard-8}"),
    ("taints-map-instead-of-list", "gke", {"pools[0].taints": {"inference": "true"}}, "pools[0].taints", "e.g. - {key: inference, value: true}"),
    ("label-value-number", "gke", {"pools[0].labels": {"tier": 1}}, "pools[0].labels.tier", "quote numbers"),
    ("missing-max-nodes", "gke", {"pools[1].maxNodes": DEL}, "pools[1].maxNodes", "required key is missing"),
    ("missing-provider", "gke", {"cluster.provider": DEL}, "cluster.provider", "required key is missing"),
    # a cloud's name where its provider is asked: by spelling alone 'aws' is nearest to 'aks'
    ("provider-aws", "gke", {"cluster.provider": "aws"}, "cluster.provider", "'aws' is not a valid value (did you mean 'eks'?)"),
    ("provider-gcp", "eks", {"cluster.provider": "gcp"}, "cluster.provider", "'gcp' is not a valid value (did you mean 'gke'?)"),
    ("provider-google", "eks", {"cluster.provider": "Google"}, "cluster.provider", "'Google' is not a valid value (did you mean 'gke'?)"),
    ("provider-azure", "gke", {"cluster.provider": "azure"}, "cluster.provider", "'azure' is not a valid value (did you mean 'aks'?)"),
    ("provider-typo", "gke", {"cluster.provider": "gek"}, "cluster.provider", "'gek' is not a valid value (did you mean 'gke'?)"),
    ("missing-cluster", "gke", {"cluster": DEL}, "cluster", "required key is missing"),
    ("missing-gke-location", "gke", {"cluster.location": DEL}, "cluster.location", "provider 'gke' needs it"),
    ("empty-pools", "gke", {"pools": []}, "pools", "the list is empty"),
    ("empty-instance-types", "eks", {"pools[0].instanceTypes": []}, "pools[0].instanceTypes", "the list is empty"),
    ("empty-nodes", "existing", {"pools[0].nodes": []}, "pools[0].nodes", "the list is empty"),
    ("missing-machine-type", "gke", {"pools[1].machineType": DEL}, "pools[1].machineType", "(allowed: Compute Engine machine type, e.g. `g2-standard-8`"),
    # --- names ----------------------------------------------------------------------------
    ("pool-name-uppercase", "gke", {"pools[0].name": "L4"}, "pools[0].name", "'L4' has uppercase letters"),
    ("pool-name-too-long", "gke", {"pools[0].name": LONG}, "pools[0].name", "41 characters long (at most 40)"),
    ("name-several-faults", "gke", {"seldon.models[0].name": "My_Model"}, "seldon.models[0].name", "'My_Model' has 2 faults: it has uppercase letters and contains '_'"),
    ("isvc-name-dns1035", "gke", {"inferenceServices[0].name": "1llm"}, "inferenceServices[0].name", "DNS-1035"),
    ("isvc-namespace-dns1123", "gke", {"inferenceServices[0].namespace": "Models"}, "inferenceServices[0].namespace", "DNS-1123"),
    ("isvc-host-too-long", "gke", {"inferenceServices[0].name": "a" * 30, "inferenceServices[0].namespace": "b" * 30}, "inferenceServices[0].name", "'<name>-<component>-<namespace>'"),
    ("duplicate-pool", "gke", {"pools[1].name": "l4-spot"}, "pools[1].name", "pool name 'l4-spot' is used twice"),
    ("duplicate-isvc", "gke", {"inferenceServices[1].name": "llm"}, "inferenceServices[1].name", "declared twice"),
    ("duplicate-server", "gke", {"seldon.servers[1].name": "gpu-server"}, "seldon.servers[1].name", "'gpu-server' is used twice"),
    ("duplicate-model", "gke", {"seldon.models[1].name": "llama3"}, "seldon.models[1].name", "'llama3' is used twice"),
    ("server-name-too-long", "gke", {"seldon.servers[0].name": "s" * 53}, "seldon.servers[0].name", "at most 52"),
    # --- labels and taints ----------------------------------------------------------------
    ("label-key-syntax", "gke", {"pools[0].labels": {"-tier": "a"}}, "pools[0].labels.-tier", "not a valid label key"),
    ("label-value-too-long", "gke", {"pools[0].labels": {"tier": "v" * 64}}, "pools[0].labels.tier", "64 characters long"),
    ("taint-cloud-casing", "gke", {"pools[0].taints[0].effect": "NO_SCHEDULE"}, "pools[0].taints[0].effect", "write 'NoSchedule'"),
    ("taint-effect-typo", "gke", {"pools[0].taints[0].effect": "NoScheduled"}, "pools[0].taints[0].effect", "not a Kubernetes taint effect"),
    ("taint-key-syntax", "gke", {"pools[0].taints[0].key": "Example.com/gpu"}, "pools[0].taints[0].key", "not a lowercase DNS subdomain"),
    ("taint-duplicate", "gke", {"pools[0].taints": [{"key": "a", "value": "1"}, {"key": "a", "value": "2"}]}, "pools[0].taints[1]", "repeats key 'a' with effect NoSchedule"),
    ("toleration-exists-value", "gke", {"inferenceServices[0].predictor.tolerations": [{"key": "a", "operator": "Exists", "value": "x"}]}, "inferenceServices[0].predictor.tolerations[0].value", "'Exists' takes no value"),
    ("toleration-no-key-equal", "gke", {"inferenceServices[0].predictor.tolerations": [{"value": "x"}]}, "inferenceServices[0].predictor.tolerations[0].key", "must use operator 'Exists'"),
    ("expression-gt-not-int", "gke", {"inferenceServices[0].predictor.extraExpressions": [{"key": "mem", "operator": "Gt", "values": ["lots"]}]}, "inferenceServices[0].predictor.extraExpressions[0].values", "needs an integer"),
    ("select-labels-duplicate", "gke", {"pools[0].selectLabels": ["pool", "pool"]}, "pools[0].selectLabels[1]", "listed twice"),
    # --- pools ----------------------------------------------------------------------------
    ("min-above-max", "gke", {"pools[0].minNodes": 5}, "pools[0].minNodes", "minNodes 5 is above maxNodes 3"),
    ("max-nodes-zero", "gke", {"pools[0].maxNodes": 0}, "pools[0].maxNodes", "maxNodes 0 leaves the pool without nodes"),
    ("accelerator-not-offered", "gke", {"pools[0].accelerator": "nvidia-tesla-k80"}, "pools[0].accelerator", "not offered by GKE"),
    ("gpu-count-shape", "gke", {"pools[0].gpusPerNode": 2}, "pools[0].gpusPerNode", "a count of 2 does not fit it (allowed: 1 (or no count); for 2 GPUs per node: g2-standard-24)"),
    ("machine-family-mismatch", "gke", {"pools[0].machineType": "n1-standard-8"}, "pools[0].machineType", "nvidia-l4 attaches to g2-standard-* machines; n1-standard-8 is an N1 machine"),
    ("gke-gpu-machine-as-cpu", "gke", {"pools[2].machineType": "g2-standard-8"}, "pools[2].machineType", "a CPU pool must not use a GPU machine type"),
    ("gke-gpus-without-accelerator", "gke", {"pools[2].gpusPerNode": 1}, "pools[2].gpusPerNode", "gpusPerNode 1 is given without an accelerator"),
    ("gke-dra-cpu-pool", "gke", {"pools[2].dra": True}, "pools[2].dra", "dra is set on a CPU pool (no accelerator)"),
    ("gke-dra-mig", "gke", {"pools[0].dra": True, "pools[0].gpuPartitionSize": "1g.5gb"}, "pools[0].gpuPartitionSize", "GKE supports no GPU sharing or MIG with DRA"),
    ("gke-dra-driver-install", "gke", {"pools[0].dra": True, "pools[0].gpuDriverVersion": "LATEST"}, "pools[0].gpuDriverVersion", "GKE's automatic driver installation is not supported with DRA"),
    ("eks-dra-cpu-group", "eks", {"pools[1].dra": True}, "pools[1].dra", "dra is set on a CPU node group (no GPU instance types)"),
    ("eks-dra-bottlerocket", "eks", {"pools[0].dra": True, "pools[0].amiType": "BOTTLEROCKET_x86_64_NVIDIA"}, "pools[0].amiType", "Bottlerocket's NVIDIA AMIs run NVIDIA's device plugin themselves, which would hand out the GPUs the DRA driver publishes"),
    ("eks-dra-time-slicing", "eks", {"pools[0].dra": True, "pools[0].gpuSharing": {"strategy": "TIME_SHARING", "maxClientsPerGpu": 2}}, "pools[0].gpuSharing.maxClientsPerGpu", "gpuSharing.maxClientsPerGpu is given on a DRA pool: time-slicing is the NVIDIA device plugin's, which a DRA pool does not run"),
    ("karpenter-dra", "eks", {"pools[1]": {"name": "kp", "maxNodes": 2, "dra": True, "karpenter": {"nodeRole": "KarpenterNodeRole", "gpuNames": ["l4"]}}}, "pools[1].dra", "Karpenter 1.15.0 (pinned) ignores pods with resource claims when it decides what to launch (IGNORE_DRA_REQUESTS defaults to true), so no node is ever launched for them; DRA for launched nodes is alpha and off (settings.enableDRA)"),
    ("karpenter-dra-auto-mode", "eks", {"pools[1]": {"name": "kp", "maxNodes": 2, "dra": True, "karpenter": {"autoMode": True, "gpuNames": ["l4"]}}}, "pools[1].dra", "dra is set on a Karpenter pool: EKS Auto Mode does not support DRA"),
    ("existing-dra-unknown-model", "existing", {"pools[0].dra": True}, "pools[0].accelerator", "accelerator 'nvidia-a100-80gb' on a DRA pool is not a GPU whose DRA devices the check knows"),
    ("existing-dra-mig-without-dra", "existing", {"pools[0].draMigProfile": "1g.10gb"}, "pools[0].draMigProfile", "draMigProfile is given without dra"),
    ("existing-dra-mig-profile", "existing", {"pools[0].dra": True, "pools[0].accelerator": "A100 80GB", "pools[0].draMigProfile": "1g.5gb"}, "pools[0].draMigProfile", "MIG profile '1g.5gb' is not one A100 80GB offers"),
    ("gpu-driver-installer-not-gke", "eks", {"addons.gpuDriverInstaller": {"enabled": True}}, "addons.gpuDriverInstaller.enabled", "GKE's NVIDIA driver installer runs on GKE nodes only; the provider is 'eks'"),
    ("isvc-claim-serverless", "gke", {"pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpus": DEL, "inferenceServices[0].predictor.gpuClaim": {"count": 1}}, "inferenceServices[0].predictor.gpuClaim", 'the predictor claims its GPUs (gpuClaim) but deploymentMode is Serverless: Knative\'s webhook refuses claims ("must not set the field(s): spec.template.spec.containers[0].resources.claims", knative/serving#15332'),
    ("isvc-claim-and-gpus", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpuClaim": {"count": 1}}, "inferenceServices[0].predictor.gpuClaim", "gpuClaim and gpus are both given: a part takes its GPUs by claim (DRA) or as nvidia.com/gpu, not both"),
    ("isvc-claim-not-dra-pool", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpus": DEL, "inferenceServices[0].predictor.gpuClaim": {"count": 1}}, "inferenceServices[0].predictor.pool", "gpuClaim asks for GPUs by claim, but pool 'l4' is not a DRA pool: no NVIDIA DRA driver publishes its GPUs, so the claim is never allocated"),
    ("isvc-gpus-on-dra-pool", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4"}, "inferenceServices[0].predictor.gpus", "1 GPU(s) requested as nvidia.com/gpu on DRA pool 'l4', whose GPUs are taken by claim: nothing advertises nvidia.com/gpu there"),
    ("isvc-claim-count-above-node", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpus": DEL, "inferenceServices[0].predictor.gpuClaim": {"count": 2}}, "inferenceServices[0].predictor.gpuClaim.count", "2 device(s) claimed but a node of pool 'l4' publishes 1 (gpu.nvidia.com); a pod's claims are allocated from one node"),
    ("isvc-claim-mig-on-whole-gpus", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpus": DEL, "inferenceServices[0].predictor.gpuClaim": {"deviceClass": "mig.nvidia.com"}}, "inferenceServices[0].predictor.gpuClaim.deviceClass", "deviceClass mig.nvidia.com on pool 'l4', whose nodes publish whole GPUs (gpu.nvidia.com)"),
    ("isvc-claim-class-unknown", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpus": DEL, "inferenceServices[0].predictor.gpuClaim": {"deviceClass": "gpu.example.com"}}, "inferenceServices[0].predictor.gpuClaim.deviceClass", "'gpu.example.com' is not a valid value (did you mean 'gpu.nvidia.com'?)"),
    ("isvc-claim-count-zero", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpus": DEL, "inferenceServices[0].predictor.gpuClaim": {"count": 0}}, "inferenceServices[0].predictor.gpuClaim.count", "0 is out of range"),
    ("isvc-claim-selector-empty", "gke", {"inferenceServices[0].deploymentMode": "RawDeployment", "pools[1].dra": True, "inferenceServices[0].predictor.pool": "l4", "inferenceServices[0].predictor.gpus": DEL, "seldon": DEL, "inferenceServices[0].predictor.gpuClaim": {"selectors": [" "]}}, "inferenceServices[0].predictor.gpuClaim.selectors[0]", "selector ' ' is not a CEL expression"),
    ("llm-claim-not-dra-pool", "llm", {"llmInferenceServices[0].decode.gpus": DEL, "llmInferenceServices[0].decode.gpuClaim": {"count": 4}}, "llmInferenceServices[0].decode.pool", "gpuClaim asks for GPUs by claim, but pool 'h100' is not a DRA pool"),
    ("llm-gpus-on-dra-pool", "llm", {"pools[0].dra": True}, "llmInferenceServices[0].decode.gpus", "4 GPU(s) requested as nvidia.com/gpu on DRA pool 'h100', whose GPUs are taken by claim"),
    ("llm-claim-count-parallelism", "llm", {"pools[0].dra": True, "llmInferenceServices[0].decode.gpus": DEL, "llmInferenceServices[0].decode.gpuClaim": {"count": 2}, "llmInferenceServices[0].prefill.gpus": DEL, "llmInferenceServices[0].prefill.gpuClaim": {"count": 4}, "llmInferenceServices[1].decode.gpus": DEL, "llmInferenceServices[1].decode.gpuClaim": {"count": 8}}, "llmInferenceServices[0].decode.gpuClaim.count", "pipeline 1 x tensor 4 = 4 GPUs, but the worker group has 1 pod(s) x 2 GPUs = 2"),
    ("gke-gpu-taint-effect", "gke", {"pools[1].taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoExecute"}]}, "pools[1].taints[0].effect", "the key GKE taints its GPU nodes with itself"),
    ("gke-gpu-taint-value", "gke", {"pools[1].taints": [{"key": "nvidia.com/gpu", "value": "true"}]}, "pools[1].taints[0].value", "nvidia.com/gpu=present:NoSchedule (or leave it out"),
    ("gke-pool-name-dns1035", "gke", {"pools[2].name": "1cpu"}, "pools[2].name", "DNS-1035"),
    ("eks-instance-without-gpu", "eks", {"pools[0].instanceTypes": ["m6i.large"]}, "pools[0].instanceTypes[0]", "m6i.large is not a GPU instance type"),
    ("eks-accelerator-mismatch", "eks", {"pools[0].accelerator": "nvidia-l4"}, "pools[0].accelerator", "not the GPU of 'g5.xlarge'"),
    ("eks-gpu-count-mismatch", "eks", {"pools[0].gpusPerNode": 4}, "pools[0].gpusPerNode", "has 1 GPU(s), not 4"),
    ("eks-mixed-gpu-models", "eks", {"pools[0].instanceTypes": ["g5.xlarge", "g4dn.xlarge"]}, "pools[0].instanceTypes[1]", "must have the same GPU model, GPU count and architecture"),
    ("eks-standard-ami-on-gpu", "eks", {"pools[0].amiType": "AL2023_x86_64_STANDARD"}, "pools[0].amiType", "no NVIDIA driver"),
    ("spot-and-on-demand", "eks", {"pools[0].spot": True}, "pools[0].capacityType", "spot True conflicts with capacityType ON_DEMAND"),
    ("spot-on-existing", "existing", {"pools[0].spot": True}, "pools[0].spot", "key 'spot' is for aks, eks and gke pools"),
    ("existing-gpu-count-missing", "existing", {"pools[0].gpusPerNode": DEL}, "pools[0].gpusPerNode", "how many GPUs each node has"),
    ("machine-type-on-eks", "eks", {"pools[1].machineType": "n2-standard-4"}, "pools[1].machineType", "is for gke pools"),
    ("instance-types-on-gke", "gke", {"pools[2].instanceTypes": ["m6i.large"]}, "pools[2].instanceTypes", "is for eks pools"),
    ("cluster-key-other-provider", "eks", {"cluster.location": "us-central1"}, "cluster.location", "is for provider 'gke'"),
    # --- workloads ------------------------------------------------------------------------
    ("pool-does-not-exist", "gke", {"inferenceServices[0].transformer.pool": "cpu-pool"}, "inferenceServices[0].transformer.pool", "(allowed: l4-spot, l4, cpu)"),
    ("pool-list-unknown", "gke", {"inferenceServices[0].predictor.pool": ["l4-spot", "a100"]}, "inferenceServices[0].predictor.pool[1]", "pool 'a100' does not exist"),
    ("pool-list-empty", "gke", {"inferenceServices[0].predictor.pool": []}, "inferenceServices[0].predictor.pool", "the pool list is empty"),
    ("pool-list-duplicate", "gke", {"inferenceServices[0].predictor.pool": ["l4", "l4"]}, "inferenceServices[0].predictor.pool[1]", "listed twice"),
    ("gpu-on-cpu-pool", "gke", {"inferenceServices[0].transformer.gpus": 1}, "inferenceServices[0].transformer.gpus", "which has no GPUs"),
    ("gpus-above-node", "gke", {"seldon.servers[0].gpus": 2}, "seldon.servers[0].gpus", "a node of pool 'l4' has 1"),
    ("gpus-above-node-in-list", "gke", {"pools[0].machineType": "g2-standard-24", "inferenceServices[0].predictor.gpus": 2}, "inferenceServices[0].predictor.gpus", "pool 'l4' has 1 (every pool in the list must fit)"),
    ("replicas-min-above-max", "gke", {"inferenceServices[0].predictor.minReplicas": 3, "inferenceServices[0].predictor.maxReplicas": 2}, "inferenceServices[0].predictor.minReplicas", "above maxReplicas 2"),
    ("negative-quantity", "gke", {"inferenceServices[0].predictor.memory": "-1Gi"}, "inferenceServices[0].predictor.memory", "is negative"),
    ("malformed-quantity", "gke", {"inferenceServices[0].predictor.memory": "4GB"}, "inferenceServices[0].predictor.memory", "not a valid quantity"),
    ("float-quantity", "gke", {"inferenceServices[0].transformer.cpu": 0.5}, "inferenceServices[0].transformer.cpu", "'500m'"),
    ("missing-model-source", "gke", {"inferenceServices[0].predictor.model": DEL}, "inferenceServices[0].predictor", "no model source"),
    ("two-model-sources", "gke", {"inferenceServices[0].predictor.containers": [{"name": "c", "image": "i"}]}, "inferenceServices[0].predictor.containers", "are both given"),
    ("transformer-with-model", "gke", {"inferenceServices[0].transformer.model": {"format": "sklearn", "storageUri": "gs://b/m"}}, "inferenceServices[0].transformer.model", "runs containers"),
    ("storage-uri-scheme", "gke", {"inferenceServices[0].predictor.model.storageUri": "bucket/model"}, "inferenceServices[0].predictor.model.storageUri", "not a storage URI"),
    ("raw-min-replicas-zero", "eks", {"inferenceServices[0].predictor.minReplicas": 0}, "inferenceServices[0].predictor.minReplicas", "does not scale to zero"),
    ("seldon-requirements-and-missing-server", "gke", {"seldon.models[0].server": "gpu-srv"}, "seldon.models[0].server", "pins server 'gpu-srv' (and has requirements)"),
    ("seldon-unknown-server-config", "gke", {"seldon.servers[0].serverConfig": "mlserver-gpu"}, "seldon.servers[0].serverConfig", "(allowed: mlserver, mlserver-llm, triton)"),
    ("seldon-gpu-limit-below-request", "gke", {"seldon.servers[0].gpuLimit": 0}, "seldon.servers[0].gpuLimit", "below the request"),
    ("omit-gpu-toleration-without-plugin", "existing", {"inferenceServices[0].predictor.omitGpuToleration": True}, "inferenceServices[0].predictor.omitGpuToleration", "ExtendedResourceToleration"),
    ("no-pool-no-placement", "gke", {"inferenceServices[1].predictor.pool": DEL}, "inferenceServices[1].predictor.pool", "placement: {} runs on any node"),
    ("placement-and-pool", "gke", {"inferenceServices[0].transformer.placement": {}}, "inferenceServices[0].transformer.placement", "pool and placement are both given"),
    ("placement-and-tolerations", "gke", {"inferenceServices[1].predictor.pool": DEL, "inferenceServices[1].predictor.placement": {"nodeSelector": {"a": "b"}}, "inferenceServices[1].predictor.tolerations": [{"key": "a", "operator": "Exists"}]}, "inferenceServices[1].predictor.tolerations", "placement.tolerations"),
    ("placement-omit-gpu-toleration", "gke", {"seldon.servers[0].pool": DEL, "seldon.servers[0].placement": {}, "seldon.servers[0].omitGpuToleration": True}, "seldon.servers[0].omitGpuToleration", "an own placement has only the tolerations it lists"),
    ("server-no-pool-no-placement", "gke", {"seldon.servers[1].pool": DEL}, "seldon.servers[1].pool", "its serverConfig names none"),
    ("serverconfig-named-builtin", "gke", {"seldon.serverConfigs[0].name": "mlserver"}, "seldon.serverConfigs[0].name", "replacesBuiltin: true"),
    ("replaces-builtin-other-name", "gke", {"seldon.serverConfigs[0].replacesBuiltin": True}, "seldon.serverConfigs[0].replacesBuiltin", "not one of Seldon's own"),
    ("model-format-syntax", "gke", {"inferenceServices[1].predictor.model.format": "Scikit Learn"}, "inferenceServices[1].predictor.model.format", "is not a format name"),
    ("capability-syntax", "gke", {"seldon.servers[0].capabilities": ["model-on-gpu", "gpu,fast"]}, "seldon.servers[0].capabilities[1]", "no commas or spaces"),
    ("gpu-limit-without-gpus", "gke", {"seldon.servers[1].gpuLimit": 1}, "seldon.servers[1].gpuLimit", "set without gpus"),
    ("serverconfig-container-without-image", "gke", {"seldon.serverConfigs[0].containers[0].image": DEL}, "seldon.serverConfigs[0].containers[0].image", "has no image"),
    # --- Knative --------------------------------------------------------------------------
    ("knative-unknown-mode", "gke", {"knative.mode": "auto"}, "knative.mode", "(allowed: operator, patch, none)"),
    ("knative-flag-disabled-while-used", "gke", {"knative.features": {"kubernetes.podspec-tolerations": "disabled"}, "knative.allowDisablingPodspecFlags": True}, 'knative.features["kubernetes.podspec-tolerations"]', "InferenceService 'llm'"),
    ("knative-flag-disabled", "gke", {"knative.features": {"kubernetes.podspec-affinity": "disabled"}}, 'knative.features["kubernetes.podspec-affinity"]', "cannot safely be"),
    ("knative-none-serverless", "gke", {"knative.mode": "none"}, "inferenceServices[0].deploymentMode", "knative.assumeFlagsEnabled: true"),
    ("knative-feature-typo", "gke", {"knative.features": {"kubernetes.podspec-toleration": "enabled"}}, 'knative.features["kubernetes.podspec-toleration"]', "did you mean 'kubernetes.podspec-tolerations'"),
    ("knative-feature-value", "gke", {"knative.features": {"multi-container": "on"}}, "knative.features.multi-container", "enabled, disabled, allowed"),
    ("deployment-mode-typo", "gke", {"inferenceServices[0].deploymentMode": "Serveless"}, "inferenceServices[0].deploymentMode", "did you mean 'Serverless'"),
    # --- secure defaults ------------------------------------------------------------------
    ("static-credentials-plain", "eks", {"namespaces.staticCredentials": {"AWS_SECRET_ACCESS_KEY": "x"}}, SECRET_KEY, "in plain text"),
    ("pod-security-unknown", "gke", {"namespaces.podSecurity": "strict"}, "namespaces.podSecurity", "privileged, baseline, restricted"),
    ("aws-role-on-gke", "gke", {"cluster.workloadIdentity": {"awsRoleArn": "arn:aws:iam::123456789012:role/r"}}, "cluster.workloadIdentity.awsRoleArn", "this cluster is GKE"),
    ("node-sa-on-eks", "eks", {"cluster.nodeServiceAccount": "nodes@p.iam.gserviceaccount.com"}, "cluster.nodeServiceAccount", "is for provider 'gke'"),
    # --- the Karpenter controller add-on ----------------------------------------------------
    ("karpenter-addon-on-gke", "gke", {"addons.karpenter": {"enabled": True, "podIdentity": True}}, "addons.karpenter.enabled", "launches EC2 instances for EKS"),
    ("karpenter-addon-no-role", "eks", {"addons.karpenter": {"enabled": True}}, "addons.karpenter.roleArn", "no IAM role for the controller"),
    ("karpenter-addon-tainted-pool", "eks", {"addons.karpenter": {"enabled": True, "podIdentity": True, "systemPools": ["g5"]}}, "addons.karpenter.systemPools[0]", "does not tolerate"),
    # --- LLMInferenceServices and their install ------------------------------------------------
    ("llm-pool-missing", "llm", {"llmInferenceServices[0].decode.pool": "h200"}, "llmInferenceServices[0].decode.pool", "pool 'h200' does not exist"),
    ("llm-decode-on-cpu-pool", "llm", {"llmInferenceServices[0].decode.pool": "router"}, "llmInferenceServices[0].decode.pool", "run vLLM on GPUs"),
    ("llm-decode-unwired", "llm", {"llmInferenceServices[0].decode.pool": DEL}, "llmInferenceServices[0].decode.pool", "required key is missing"),
    ("llm-gpus-above-node", "llm", {"llmInferenceServices[0].decode.gpus": 16, "llmInferenceServices[0].decode.tensor": 16}, "llmInferenceServices[0].decode.gpus", "a node of pool 'h100' has 8"),
    ("llm-gpus-missing", "llm", {"llmInferenceServices[0].prefill.gpus": DEL}, "llmInferenceServices[0].prefill.gpus", "gets no GPU"),
    ("llm-scheduler-on-gpu-pool", "llm", {"llmInferenceServices[0].router.scheduler.pool": "h100"}, "llmInferenceServices[0].router.scheduler.pool", "uses no GPU"),
    ("llm-worker-pool-list", "llm", {"llmInferenceServices[1].decode.worker": {"pool": ["h100", "h200"]}}, "llmInferenceServices[1].decode.worker.pool[1]", "pool 'h200' does not exist"),
    ("llm-pipeline-single-node", "llm", {"llmInferenceServices[0].decode.gpus": 8, "llmInferenceServices[0].decode.pipeline": 2}, "llmInferenceServices[0].decode.pipeline", "never reaches vLLM"),
    ("llm-tensor-heads", "llm", {"llmInferenceServices[0].decode.gpus": 3, "llmInferenceServices[0].decode.tensor": 3}, "llmInferenceServices[0].decode.tensor", "does not divide llama-3.1-70b's 64 attention heads"),
    ("llm-data-without-local", "llm", {"llmInferenceServices[1].decode.dataLocal": DEL}, "llmInferenceServices[1].decode.dataLocal", "must be set together"),
    ("llm-worker-pipeline", "llm", {"llmInferenceServices[1].decode.data": DEL, "llmInferenceServices[1].decode.dataLocal": DEL, "llmInferenceServices[1].decode.pipeline": 2}, "llmInferenceServices[1].decode.worker", "ConfigNotFound"),
    ("llm-replicas-and-max", "llm", {"llmInferenceServices[0].decode.replicas": 2, "llmInferenceServices[0].decode.maxReplicas": 4}, "llmInferenceServices[0].decode.replicas", "mutually exclusive"),
    ("llm-duplicate-name", "llm", {"llmInferenceServices[1].name": "llama-70b"}, "llmInferenceServices[1].name", "declared twice"),
    ("llm-name-dns1035", "llm", {"llmInferenceServices[0].name": "70b"}, "llmInferenceServices[0].name", "DNS-1035"),
    ("llm-model-unknown", "llm", {"llmInferenceServices[0].model": "llama-4"}, "llmInferenceServices[0].model", "llama-3.1-70b"),
    ("llm-max-model-len", "llm", {"llmInferenceServices[1].maxModelLen": 131072}, "llmInferenceServices[1].maxModelLen", "max_position_embeddings 32768"),
    ("llm-model-uri-scheme", "llm", {"llmInferenceServices[0].modelUri": "gs://models/llama"}, "llmInferenceServices[0].modelUri", "unsupported schema in model URI"),
    ("llm-model-uri-no-separator", "llm", {"llmInferenceServices[0].modelUri": "hf:/meta-llama/Llama-3.1-8B"}, "llmInferenceServices[0].modelUri", "invalid model URI"),
    ("llm-lora-base-name", "llm", {"llmInferenceServices[0].loraAdapters": [{"name": "llama-70b", "uri": "hf://org/adapter"}]}, "llmInferenceServices[0].loraAdapters[0].name", "the base model's name"),
    ("llm-scheduler-placed-but-off", "llm", {"llmInferenceServices[0].router.scheduler.enabled": False}, "llmInferenceServices[0].router.scheduler.pool", "the scheduler is placed but it is off"),
    ("llm-pool-and-placement", "llm", {"llmInferenceServices[0].decode.placement": {}}, "llmInferenceServices[0].decode.placement", "pool and placement are both given"),
    ("llm-kserve-namespace", "llm", {"addons.kserve.namespace": "kserve-system"}, "addons.kserve.namespace", "installs KServe's LLM charts into namespace 'kserve'"),
    ("llm-cert-manager-below-minimum", "llm", {"addons.certManager": {"version": "v1.16.2"}}, "addons.certManager.version", "below the v1.18.0"),
    ("llm-local-chart-missing", "llm", {"addons.kserve.llm": {"chart": {"envoyGateway": "/nowhere/gateway-helm"}}}, "addons.kserve.llm.chart.envoyGateway", "does not exist"),
    ("llm-local-copy-while-off", "gke", {"addons.kserve.llm": {"manifest": {"lws": "/nowhere/lws.yaml"}}}, "addons.kserve.llm.manifest.lws", "the add-on is not enabled"),
    # --- cloud quotas ---------------------------------------------------------------------------
    ("quota-metric-typo", "gke", {"quotas": [{"provider": "gke", "region": "us-central1", "limits": {"NVIDIA_H100_GPU": 16}}]}, "quotas[0].limits.NVIDIA_H100_GPU", "did you mean 'NVIDIA_H100_GPUS'"),
    ("quota-ec2-name", "eks", {"quotas": [{"provider": "eks", "region": "us-east-1", "limits": {"Running On-Demand P Instances": 192}}]}, 'quotas[0].limits["Running On-Demand P Instances"]', "did you mean 'Running On-Demand P instances'"),
    ("quota-negative", "gke", {"quotas": [{"provider": "gke", "region": "us-central1", "limits": {"NVIDIA_L4_GPUS": -1}}]}, "quotas[0].limits.NVIDIA_L4_GPUS", "a whole number of GPUs, 0 or more"),
    ("quota-empty-limits", "gke", {"quotas": [{"provider": "gke", "region": "us-central1", "limits": {}}]}, "quotas[0].limits", "limits is empty"),
    ("quota-zone-not-region", "gke", {"quotas": [{"provider": "gke", "region": "us-central1-a", "limits": {"NVIDIA_L4_GPUS": 8}}]}, "quotas[0].region", "is not a GCP region"),
    ("quota-other-provider", "gke", {"quotas": [{"provider": "eks", "region": "us-east-1", "limits": {"Running On-Demand P instances": 192}}]}, "quotas[0].provider", "but the cluster is 'gke'"),
    ("quota-other-region", "gke", {"quotas": [{"provider": "gke", "region": "us-east1", "limits": {"NVIDIA_L4_GPUS": 8}}]}, "quotas[0].region", "the cluster's pools are in 'us-central1'"),
    ("quota-twice", "gke", {"quotas": [{"provider": "gke", "region": "us-central1", "limits": {"NVIDIA_L4_GPUS": 8}}, {"provider": "gke", "region": "us-central1", "limits": {"PREEMPTIBLE_NVIDIA_L4_GPUS": 8}}]}, "quotas[1]", "a second entry for gke in us-central1"),
    ("quota-provider-unknown", "gke", {"quotas": [{"provider": "aks", "region": "eastus", "limits": {"x": 1}}]}, "quotas[0].provider", "(allowed: gke, eks)"),
    # --- refused by the pool components' own rules (run by load_spec: nothing registered) ---
    ("label-reserved-prefix-gke", "gke", {"pools[0].labels": {"pool": "a", "cloud.google.com/gke-nodepool": "x"}}, 'pools[0].labels["cloud.google.com/gke-nodepool"]', "uses the prefix 'cloud.google.com'"),
    ("label-reserved-prefix-eks", "eks", {"pools[0].labels": {"eks.amazonaws.com/nodegroup": "x"}}, 'pools[0].labels["eks.amazonaws.com/nodegroup"]', "uses the prefix 'eks.amazonaws.com'"),
    ("label-reserved-prefix-existing", "existing", {"pools[0].labels": {"node-role.kubernetes.io/gpu": ""}}, 'pools[0].labels["node-role.kubernetes.io/gpu"]', "uses the prefix 'kubernetes.io'"),
    ("eks-cluster-name", "eks", {"cluster.name": "prod/gpu"}, "cluster.name", "is not an EKS cluster name"),
    ("label-pool-key-reserved", "gke", {"pools[2].labels": {"gpu-inference.dev/pool": "cpu"}}, 'pools[2].labels["gpu-inference.dev/pool"]', "is reserved"),
    ("karpenter-addon-version-v", "eks", {"addons.karpenter": {"enabled": True, "podIdentity": True, "version": "v1.15.0"}}, "addons.karpenter.version", "no leading 'v'"),
    # --- AKS: agent pools and node auto-provisioning -------------------------------------
    ("aks-missing-resource-group", "aks", {"cluster.resourceGroup": DEL}, "cluster.resourceGroup", "required key is missing (provider 'aks' needs it)"),
    ("aks-create-needs-location", "aks", {"cluster.create": True}, "cluster.location", "required key is missing (create: true on aks needs it)"),
    ("aks-create-needs-admins", "aks", {"cluster.create": True, "cluster.location": "eastus2"}, "cluster.adminGroupObjectIds", "(allowed: Microsoft Entra group object IDs of the cluster's administrators)"),
    ("aks-location-without-create", "aks", {"cluster.location": "eastus2"}, "cluster.location", "location is given but create is not true: an existing AKS cluster keeps its own"),
    ("aks-kubernetes-version", "aks", {"cluster.create": True, "cluster.location": "eastus2", "cluster.adminGroupObjectIds": ["g"], "cluster.kubernetesVersion": "latest"}, "cluster.kubernetesVersion", "Kubernetes version 'latest' is not MAJOR.MINOR[.PATCH]"),
    ("aks-workload-identity", "aks", {"cluster.workloadIdentity": {"gcpServiceAccount": "models@proj.iam.gserviceaccount.com"}}, "cluster.workloadIdentity.gcpServiceAccount", "gcpServiceAccount is for GKE; this cluster is AKS"),
    ("aks-vm-size-retired", "aks", {"pools[0].vmSize": "Standard_NC6s_v3"}, "pools[0].vmSize", "Standard_NC6s_v3 has NVIDIA GPUs, but its series is retired or in preview"),
    ("aks-vm-size-cpu", "aks", {"pools[0].vmSize": "Standard_D4s_v5"}, "pools[0].vmSize", "Standard_D4s_v5 is not a GPU VM size (no GPUs)"),
    ("aks-vm-size-case", "aks", {"pools[0].vmSize": "standard_nc24ads_a100_v4"}, "pools[0].vmSize", "is spelled 'Standard_NC24ads_A100_v4' by Azure"),
    ("aks-gpus-per-node", "aks", {"pools[0].gpusPerNode": 2}, "pools[0].gpusPerNode", "Standard_NC24ads_A100_v4 has 1 GPU(s), not 2"),
    ("aks-eviction-without-spot", "aks", {"pools[0].spotEvictionPolicy": "Delete"}, "pools[0].spotEvictionPolicy", "spotEvictionPolicy is given but the pool is not spot"),
    ("aks-spot-taint-contradicted", "aks", {"pools[1].taints": [{"key": "kubernetes.azure.com/scalesetpriority", "value": "true"}]}, "pools[1].taints[0]", "contradicts kubernetes.azure.com/scalesetpriority=spot:NoSchedule, which AKS (spot pools) sets on this pool itself"),
    ("aks-reserved-label", "aks", {"pools[0].labels": {"kubernetes.azure.com/mode": "system"}}, 'pools[0].labels["kubernetes.azure.com/mode"]', "uses the prefix 'kubernetes.azure.com'"),
    ("aks-agent-pool-name-clash", "aks", {"pools[0].name": "t4spot"}, "pools[1].name", "agent pool name 't4spot' is also pools[0]'s"),
    ("aks-agent-pool-name-syntax", "aks", {"pools[0].agentPoolName": "gpu-a100"}, "pools[0].agentPoolName", "agent pool name 'gpu-a100' is not an AKS node pool name"),
    ("aks-max-pods", "aks", {"pools[0].maxPods": 300}, "pools[0].maxPods", "300 is out of range"),
    ("aks-ert-false", "aks", {"cluster.extendedResourceToleration": False}, "cluster.extendedResourceToleration", "extendedResourceToleration: false, but AKS enables the ExtendedResourceToleration admission plugin itself"),
    ("aks-ephemeral-os-disk", "aks", {"pools[0].osDiskType": "Ephemeral", "pools[0].osDiskSizeGb": 256}, "pools[0].osDiskSizeGb", "an ephemeral OS disk of 256 GiB does not fit Standard_NC24ads_A100_v4's 64 GiB temp disk"),
    ("aks-spot-price-decimals", "aks", {"pools[1].spotMaxPrice": 0.123456}, "pools[1].spotMaxPrice", "spot max price 0.123456 has more than 5 decimals"),
    ("aks-sharing-driver-none", "aks", {"pools[0].gpuDriver": "None", "pools[0].gpuSharing": {"strategy": "TIME_SHARING", "maxClientsPerGpu": 4}}, "pools[0].gpuSharing.maxClientsPerGpu", "with gpuDriver None: the device plugin that would share the GPUs is not this stack's"),
    ("aks-karpenter-block", "aks", {"pools[0].karpenter": {"gpuNames": ["l4"]}}, "pools[0].karpenter", "key 'karpenter' is for eks pools (Karpenter NodePool); this pool is an AKS agent pool"),
    ("nap-admits-no-size", "aks", {"pools[2].nap.gpuNames": ["H200"], "pools[2].nap.maxGpus": 1}, "pools[2].nap", "admit no GPU VM size in the catalog"),
    ("nap-reserved-capacity", "aks", {"pools[2].nap.capacityTypes": ["reserved"]}, "pools[2].nap.capacityTypes[0]", "'reserved' is not a valid value"),
    ("nap-capacity-order", "aks", {"pools[2].nap.capacityTypes": ["on-demand", "spot"]}, "pools[2].nap.capacityTypes", "it always tries spot, then on-demand"),
    ("nap-label-restricted", "aks", {"pools[2].labels": {"karpenter.azure.com/sku-cpu": "8"}}, 'pools[2].labels["karpenter.azure.com/sku-cpu"]', "one the NodePool CRD of Karpenter on Azure refuses"),
    ("nap-gpu-name-case", "aks", {"pools[2].nap.gpuNames": ["h100"]}, "pools[2].nap.gpuNames[0]", "GPU name 'h100' is not one a catalog size is labelled with"),
    ("nap-series", "aks", {"pools[2].nap.series": ["NC_A100_v4"]}, "pools[2].nap.series[0]", "series 'NC_A100_v4' is not one of the catalog's sizes"),
]
# fmt: on


@pytest.mark.parametrize(
    ("base", "changes", "path", "piece"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input(base, changes, path, piece):
    with pytest.raises(InputError) as caught:
        load_spec(mutated(base, changes))
    err = caught.value
    expected = path if ":" in path else f"{NS}:{path}"
    assert err.path == expected, str(err)
    assert piece in str(err)
    assert str(err).startswith(f"{expected}: ")


def test_catalogue_is_big_and_distinct():
    assert len(CASES) >= 45
    assert len({c[0] for c in CASES}) == len(CASES)
    assert len({repr(c[1:3]) for c in CASES}) == len(CASES)


@pytest.mark.parametrize("base", ["gke", "eks", "existing", "llm", "aks"])
def test_bases_are_valid(base):
    load_spec(mutated(base, {}))


def test_every_case_is_in_the_config_reference():
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "config-reference.md"
    if not doc.exists():
        pytest.skip("docs/config-reference.md folded elsewhere")
    text = doc.read_text()
    missing = [c[0] for c in CASES if f"`{c[0]}`" not in text]
    assert not missing, f"add these to the catalogue in {doc.name}: {missing}"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A throwaway copy of the project (Pulumi.yaml + the real stack program)."""
    import shutil

    from tests.conftest import ROOT

    d = tmp_path_factory.mktemp("bad-inputs")
    shutil.copy(ROOT / "Pulumi.yaml", d)
    shutil.copy(ROOT / "__main__.py", d)
    (d / "stacks").mkdir()
    return d


@pytest.mark.parametrize(
    ("base", "changes", "path", "piece"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bad_stack_file_exits_2_with_the_message(project, capsys, base, changes, path, piece):
    """The same catalogue through `gpu-inference preview`: exit 2, the key path and the message,
    no traceback, nothing written."""
    import yaml

    from components.preview import cli

    stack = f"bad-{abs(hash((base, repr(changes)))) % 10**8}"
    text = yaml.safe_dump({"config": mutated(base, changes)}, sort_keys=False)
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(text)
    out = project / "out" / stack
    assert cli.main(["preview", stack, "--project-dir", str(project), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    expected = path if ":" in path else f"{NS}:{path}"
    assert f"error: {expected}: " in err, err
    assert f"Pulumi.{stack}.yaml:{expected_line(text, expected)})" in err, err
    assert not re.search(r"error: [A-Z]\w*\(", err), err  # never a component's name first
    assert piece in err
    assert "Traceback" not in err
    assert not out.exists()


def expected_line(text: str, key_path: str) -> int:
    """The line of the deepest key of `key_path` in the stack file `text` (a missing key: its
    parent's; a missing section: `config:`'s), found by walking the YAML nodes."""
    import json
    import re

    import yaml

    root = yaml.compose(text)
    node, line = None, 0
    for k, v in root.value:
        if k.value == "config":
            node, line = v, k.start_mark.line + 1
    section = re.match(r"^[^:]+:[^.\[]+", key_path)
    assert section is not None
    steps: list = [section.group(0)]
    steps += [
        json.loads(q) if q else (int(i) if i else name)
        for name, i, q in re.findall(
            r'\.([^.\[\]]+)|\[(\d+)\]|\[("[^"]*")\]', key_path[section.end() :]
        )
    ]
    for step in steps:
        if isinstance(node, yaml.MappingNode):
            hit = [(k, v) for k, v in node.value if k.value == step]
            if not hit:
                break
            line, node = hit[0][0].start_mark.line + 1, hit[0][1]
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value)
        ):
            node = node.value[step]
            line = node.start_mark.line + 1
        else:
            break
    return line


_CATALOGUE_ROW = re.compile(r"^(\d+)\. `([^`]+)` \(([a-z]+)\): (.*)$", re.M)


def _message(base: str, changes: dict) -> str:
    try:
        load_spec(mutated(base, changes))
    except InputError as e:
        return str(e)
    return "NO ERROR"


def _template():
    from components.platform import reference

    return reference.TEMPLATE


def test_the_catalogue_in_the_reference_prints_exactly_what_load_spec_says():
    """docs/config-reference.in.md lists every case with its exact message. When a message
    changes, refresh them with `python tests/platform/test_bad_inputs.py` (then regenerate the
    reference)."""
    rows = {m.group(2): m.group(4) for m in _CATALOGUE_ROW.finditer(_template().read_text())}
    stale = {c[0]: _message(c[1], c[2]) for c in CASES if rows.get(c[0]) != _message(c[1], c[2])}
    assert stale == {}


def refresh_catalogue() -> None:
    """Rewrite each catalogue row's message with what load_spec says now."""
    path = _template()
    by_id = {c[0]: c for c in CASES}

    def row(m: re.Match) -> str:
        case = by_id.get(m.group(2))
        text = _message(case[1], case[2]) if case else m.group(4)
        return f"{m.group(1)}. `{m.group(2)}` ({m.group(3)}): {text}"

    path.write_text(_CATALOGUE_ROW.sub(row, path.read_text()))


if __name__ == "__main__":
    refresh_catalogue()
