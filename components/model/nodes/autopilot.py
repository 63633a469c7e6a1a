"""GPUs on GKE Autopilot: the accelerators Autopilot offers, the GPU quantities it accepts for each,
and the rule by which it rejects a GPU Pod. Used by the `GkeAutopilotGpuPool` component (config
refusals) and by the placement check (GI029), so both read Autopilot the same way.

Pure (imports only `gpus`). Source: GKE documentation "Deploy GPU workloads in Autopilot"
(docs.cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus, last updated 2026-04-10):
- "Request GPUs in your containers": the allowed `cloud.google.com/gke-accelerator` values;
  "You must specify both the GPU type and the GPU quantity in your Pod specification. If you omit
  either of these values, Autopilot rejects your Pod."; `cloud.google.com/gke-accelerator-count`
  "Must be greater than or equal to GPU_QUANTITY and a supported GPU quantity for the GPU type".
- "Supported GPU quantities": each GPU record's `autopilot` (`gpus.GkeGpu`, with its source); "If
  you request a GPU quantity that isn't supported for that type, Autopilot rejects your Pod."
- "How GPU allocation works in Autopilot": Autopilot taints the GPU node and adds the
  corresponding tolerations to the Pod.
Not encoded: the CPU / memory minimums and maximums per GPU type and count of "Resource requests
in Autopilot" (concepts/autopilot-resource-requests): that table could not be read here, so
requests beyond them are not refused (unverified).
"""

from __future__ import annotations

from .gpus import gke_gpus

AUTOPILOT_GPU_QUANTITIES: dict[str, tuple[int, ...]] = {
    offer.accelerator: offer.autopilot for _, offer in reversed(gke_gpus()) if offer.autopilot
}
"""GPU type -> the GPU quantities a Pod may request on Autopilot, in the docs' table's order (the
GPU records' reversed: the largest first)."""


def _listing() -> str:
    return "; ".join(
        f"{acc}: {', '.join(map(str, counts))}" for acc, counts in AUTOPILOT_GPU_QUANTITIES.items()
    )


def autopilot_gpu_problem(
    accelerator: str | None, node_count: str | None, quantity: int
) -> tuple[str, str] | None:
    """Why Autopilot rejects a Pod that selects `cloud.google.com/gke-accelerator` =
    `accelerator` (None: not selected) and `cloud.google.com/gke-accelerator-count` = `node_count`
    (None: not selected) and requests `quantity` `nvidia.com/gpu` in all; None when it accepts
    it. The answer is (problem, what is allowed)."""
    if accelerator is None and quantity == 0:
        return None
    if accelerator is None:
        return (
            f"it requests {quantity} nvidia.com/gpu but selects no cloud.google.com/gke-accelerator: "
            "Autopilot rejects a GPU Pod without both the GPU type and the quantity",
            "a nodeSelector cloud.google.com/gke-accelerator of "
            + ", ".join(AUTOPILOT_GPU_QUANTITIES),
        )
    counts = AUTOPILOT_GPU_QUANTITIES.get(accelerator)
    if counts is None:
        return (
            f"cloud.google.com/gke-accelerator {accelerator!r} is not a GPU type Autopilot offers",
            ", ".join(AUTOPILOT_GPU_QUANTITIES),
        )
    if quantity == 0:
        return (
            f"it selects cloud.google.com/gke-accelerator {accelerator} but requests no "
            "nvidia.com/gpu: Autopilot rejects a GPU Pod without both the GPU type and the quantity",
            f"nvidia.com/gpu of {', '.join(map(str, counts))}",
        )
    if quantity not in counts:
        return (
            f"it requests {quantity} {accelerator} GPUs, a quantity Autopilot does not support for "
            "that type",
            f"{accelerator}: {', '.join(map(str, counts))} GPUs",
        )
    if node_count is not None:
        n = int(node_count) if node_count.isdigit() else None
        if n is None or n not in counts or n < quantity:
            return (
                f"cloud.google.com/gke-accelerator-count {node_count!r} with {quantity} GPU(s) "
                f"requested: it must be a supported {accelerator} count and at least the quantity",
                f"{accelerator}: {', '.join(str(c) for c in counts if c >= quantity)}",
            )
    return None


def autopilot_offer() -> str:
    """What Autopilot offers, for messages: `nvidia-l4: 1, 2, 4, 8; ...`."""
    return _listing()
