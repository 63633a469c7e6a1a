// An existing GPU node as a pool, and an InferenceService placed on it, from TypeScript.
//
// `@pulumi/gpu-inference` is the SDK `pulumi package add` generates from the repository's
// provider/ (the Python components, run by the Python language host). The InferenceService's
// inputs are plain values (the component validates them before it registers anything), so the
// program restates the placement the pool hands out: its pool label and the toleration of its
// default taint `nvidia.com/gpu=present:NoSchedule`. The pool's `podPlacement` output is the same
// placement, for resources whose inputs take outputs (a Deployment of @pulumi/kubernetes).
import * as gpuInference from "@pulumi/gpu-inference";

const pool = new gpuInference.ExistingGpuNodes("gpu", {
    nodes: ["gpu-node-01"],
    gpusPerNode: 4,
    gpuModel: "L40S",
    labels: { "site.example/team": "ml" },
});

const llm = new gpuInference.InferenceService(
    "llm",
    {
        name: "llm",
        namespace: "models",
        predictor: {
            modelFormat: "huggingface",
            storageUri: "gs://models.example/llm",
            gpus: 1,
            memory: "24Gi",
            placement: {
                nodeSelector: { "gpu-inference.dev/pool": "gpu" },
                tolerations: [
                    { key: "nvidia.com/gpu", operator: "Equal", value: "present", effect: "NoSchedule" },
                ],
            },
        },
    },
    { dependsOn: [pool] },
);

export const url = llm.url;
export const namespace = llm.namespace;
export const placement = pool.podPlacement;
