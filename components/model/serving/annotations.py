"""The annotations our workloads carry for the placement check (and the KServe and Knative ones
it reads): one spelling each, written by the serving components, read by the check."""

WIRED_COMPONENT_POOL_ANNOTATION = "gpu-inference.dev/pool.{component}"
"""Per-component wiring (`component`: predictor, transformer, explainer on an InferenceService;
decode, worker, prefill, ... on an LLMInferenceService); wins over the wired-pool annotation."""
MODEL_SIZE_ANNOTATION = "gpu-inference.dev/model-size-gb"
"""What the placement check reads for the model's size (GI019, GI024)."""
MODEL_PARAMETERS_ANNOTATION = "gpu-inference.dev/model-parameters"
MODEL_DTYPE_ANNOTATION = "gpu-inference.dev/model-dtype"
MODEL_ANNOTATION = "gpu-inference.dev/model"
"""The model's row in `llm.MODELS` (its shape: layers, heads, KV heads)."""
MAX_MODEL_LEN_ANNOTATION = "gpu-inference.dev/max-model-len"
GPU_MEMORY_UTILIZATION_ANNOTATION = "gpu-inference.dev/gpu-memory-utilization"
NODE_STARTUP_ANNOTATION = "gpu-inference.dev/node-startup-seconds"
"""Seconds the slowest of a workload's pools takes to give a new node its GPUs (GI020)."""

# KServe and Knative's own (kserve pkg/constants/constants.go; knative serving
# pkg/apis/serving/register.go ProgressDeadlineAnnotationKey).
DEPLOYMENT_MODE_ANNOTATION = "serving.kserve.io/deploymentMode"
PROGRESS_DEADLINE_ANNOTATION = "serving.knative.dev/progress-deadline"

# Seldon Core 2's agent reads a server's capabilities from this env of its agent container.
SELDON_CAPABILITIES_ENV = "SELDON_SERVER_CAPABILITIES"
