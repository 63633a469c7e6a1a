"""GPU models: one record per GPU, holding its memory, what NVIDIA's DRA driver reports for it, its
MIG layouts and the name each cloud and each consumer gives it. The per-cloud tables are derived
from these records (`catalog.GKE_ACCELERATORS` and `MIG_PROFILES`, `dra_devices.GPUS`,
`quotas.GCE_GPU_METRICS`, `autopilot.AUTOPILOT_GPU_QUANTITIES`) and from the machine rows that
name them (`gke_machines`, `aws_instances`, `azure_vms`). Pure data (imports nothing of ours).

Sources, per field:
- `memory_gib` (nominal GB, one GPU): Compute Engine "GPU machine types" / "GPU platforms"
  (https://cloud.google.com/compute/docs/gpus): L4 24 GB GDDR6, A100 40 GB HBM2, A100 80 GB
  HBM2e, H100 80 GB HBM3, T4 16 GB GDDR6, V100 16 GB HBM2, P4 8 GB GDDR5. AWS Batch User Guide,
  "Run GPU jobs" (docs.aws.amazon.com/batch/latest/userguide/gpu-jobs.html): A10G 24, T4G 16;
  the per-instance GPU table of vantage-sh/ec2instances.info (scraper/aws/ec2/gpu_data.go): L40S
  48, V100 32 (p3dn), H200 141. Azure size pages (MicrosoftDocs/azure-compute-docs
  `articles/virtual-machines/sizes/gpu-accelerated/`, GPU memory per VM divided by its GPUs):
  H100 NVL 94 (`ncadsh100v5-series.md`). Not stated on a page we could read: H200 141 on GKE
  (from the accelerator name nvidia-h200-141gb), RTX PRO 6000 96 GB GDDR7 (NVIDIA's product
  announcements), A10 24 (NVIDIA's A10 datasheet), P100 16 (not confirmed), B200 (not modelled).
- `gke` (`GkeGpu`): the accelerator types (`cloud.google.com/gke-accelerator`) of the Compute
  Engine page above; `model` is how the catalog names the GPU of that accelerator type.
  - `quota`: the GCE regional GPU quota metric its nodes count against (Compute Engine "GPU
    quota"; the `Quota.metric` enum of the Compute v1 API). [V] Compute v1 `Quota.Metric`
    (google-cloud-compute, `COMMITTED_NVIDIA_*` beside each on-demand family): T4, P4, P100,
    V100, L4, A100, A100 80GB, H100; [S] H100 Mega, H200 (the same pattern, seen in `gcloud`
    output quoted by users). The RTX PRO 6000 family's is not known here (None: such a pool's
    quota is not judged).
  - `autopilot`: the GPU quantities a Pod may request on GKE Autopilot, GKE documentation "Deploy
    GPU workloads in Autopilot" (docs.cloud.google.com/kubernetes-engine/docs/how-to/
    autopilot-gpus, last updated 2026-04-10), "Supported GPU quantities" (H100 80GB at 1, 2 and 4
    from 1.31.4-gke.1072000). Not encoded: `nvidia-gb200` (Preview, no quantities listed).
    `AUTOPILOT_GPU_QUANTITIES` lists them in that table's order, which is these records' order
    reversed.
  - `n1_max_vcpus` (GPUs attached to N1 machines, not f1-micro / g1-small): the GPU counts an N1
    machine takes and the most vCPUs it may have with each, the "GPUs on N1" tables of the same
    Compute Engine page (as mirrored in SkyPilot's gcp_catalog.py
    `_NUM_ACC_TO_MAX_CPU_AND_MEMORY`, which cites it). P100 x4 allows 64 vCPUs in a few zones
    and 96 elsewhere; we allow 96.
- `aws`, `aws_label`: the GPU model as the EC2 tables name it (Amazon EC2 "Accelerated computing
  instances" pages: T4, A10G, T4G, L4, L40S, V100, A100, H100, H200; `A100 80GB` for p4de), and
  the `k8s.amazonaws.com/accelerator` value of its nodes. cluster-autoscaler's AWS README
  ("Special note on GPU instances") says that value "varies by instance type" and gives
  `nvidia-tesla-k80` for P2; KServe seed 001 uses `nvidia-tesla-t4` for T4 nodes. There is no
  AWS-published list, so the other values follow the same `nvidia-<model>` convention (GKE's
  names where GKE sells the same GPU).
- `azure`: the GPU model as Azure's size pages and size names give it (`A100` for the 40 GB and
  the 80 GB sizes alike, `H100` for the NVL and the SXM ones): Karpenter on Azure's
  `sku-gpu-name` label where the size name names it (`azure_vms.parse_vm_size`).
- `dra` (`NvidiaGpu`): what kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 publishes for one GPU:
  `productName` is NVML's device name (what `nvidia-smi --query-gpu=name` prints), `memory`
  NVML's total memory, both read on the machine by the driver; the figures are the ones
  nvidia-smi reports for each model (a secondary source: NVIDIA's product pages and published
  nvidia-smi output, not read from the driver); `architecture` as go-nvlib's
  `GetArchitectureAsString` spells it. None where not modelled (V100 32GB, A10, H100 NVL, B200):
  a DRA pool of them is refused, and `dra_devices.GPUS` lacks them.
- `mig`: the MIG profiles a GPU offers and how many instances of one profile fit on one GPU,
  NVIDIA's default layouts: NVIDIA/gpu-operator `assets/state-mig-manager/0400_configmap.yaml`
  (`default-mig-parted-config`, the `all-<profile>` entries and their device filters:
  A100-40GB; H100-80GB / A100-80GB; H200-141GB; RTX-PRO-6000-96GB). The `+me` / `+gfx` / `-me`
  variants are left out (GKE's `gpu_partition_size` names the plain profile: the NVIDIA MIG
  user guide).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

# The records (and the catalog's rows and derived records) are NamedTuples: immutable, and cheaper
# to define than frozen dataclasses (0.06 against 0.44 ms each, measured), so importing the catalog
# needs no `dataclasses` (7.7 ms with the `inspect` it imports).


class NvidiaGpu(NamedTuple):
    """One GPU model as the DRA driver describes it."""

    product_name: str
    architecture: str
    compute_capability: str  # CUDA compute capability, as semver
    memory_mib: int  # NVML total memory


class GkeGpu(NamedTuple):
    """A GKE accelerator type that is this GPU."""

    accelerator: str  # `cloud.google.com/gke-accelerator`
    model: str  # the GPU model of this accelerator type, as the catalog names it
    quota: str | None = None  # the GCE regional quota metric (None: not known)
    autopilot: tuple[int, ...] = ()  # GPU quantities a Pod may request on Autopilot
    n1_max_vcpus: Mapping[int, int] | None = None  # attached to N1: GPU count -> most vCPUs


class GpuModel(NamedTuple):
    """One GPU model and the names the clouds and the consumers give it (see the module)."""

    name: str
    memory_gib: int | None  # nominal GB of one GPU
    dra: NvidiaGpu | None = None
    mig: Mapping[str, int] | None = None  # MIG profile -> instances per GPU
    gke: tuple[GkeGpu, ...] = ()
    aws: str | None = None
    aws_label: str | None = None
    azure: str | None = None


_MIG_A100_40 = {"1g.5gb": 7, "1g.10gb": 4, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1}
_MIG_80 = {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}
_MIG_H200 = {"1g.18gb": 7, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1}
_MIG_RTX_PRO_6000 = {"1g.24gb": 4, "2g.48gb": 2, "4g.96gb": 1}


GPU_MODELS: dict[str, GpuModel] = {
    g.name: g
    for g in (
        GpuModel(
            "P4",
            8,
            NvidiaGpu("Tesla P4", "Pascal", "6.1.0", 7680),
            gke=(GkeGpu("nvidia-tesla-p4", "P4", "NVIDIA_P4_GPUS", (), {1: 24, 2: 48, 4: 96}),),
        ),
        GpuModel(
            "P100",
            16,
            NvidiaGpu("Tesla P100-PCIE-16GB", "Pascal", "6.0.0", 16384),
            gke=(
                GkeGpu("nvidia-tesla-p100", "P100", "NVIDIA_P100_GPUS", (), {1: 16, 2: 32, 4: 96}),
            ),
        ),
        GpuModel(
            "V100",
            16,
            NvidiaGpu("Tesla V100-SXM2-16GB", "Volta", "7.0.0", 16384),
            gke=(
                GkeGpu(
                    "nvidia-tesla-v100",
                    "V100",
                    "NVIDIA_V100_GPUS",
                    (),
                    {1: 12, 2: 24, 4: 48, 8: 96},
                ),
            ),
            aws="V100",
            aws_label="nvidia-tesla-v100",
        ),
        GpuModel("V100 32GB", 32, aws="V100", aws_label="nvidia-tesla-v100"),
        GpuModel(
            "T4",
            16,
            NvidiaGpu("Tesla T4", "Turing", "7.5.0", 15360),
            gke=(
                GkeGpu("nvidia-tesla-t4", "T4", "NVIDIA_T4_GPUS", (1, 2, 4), {1: 48, 2: 48, 4: 96}),
            ),
            aws="T4",
            aws_label="nvidia-tesla-t4",
            azure="T4",
        ),
        GpuModel(
            "T4G",
            16,
            NvidiaGpu("NVIDIA T4G", "Turing", "7.5.0", 15360),
            aws="T4G",
            aws_label="nvidia-t4g",
        ),
        GpuModel("A10", 24, azure="A10"),
        GpuModel(
            "A10G",
            24,
            NvidiaGpu("NVIDIA A10G", "Ampere", "8.6.0", 23028),
            aws="A10G",
            aws_label="nvidia-a10g",
        ),
        GpuModel(
            "L4",
            24,
            NvidiaGpu("NVIDIA L4", "Ada Lovelace", "8.9.0", 23034),
            gke=(GkeGpu("nvidia-l4", "L4", "NVIDIA_L4_GPUS", (1, 2, 4, 8)),),
            aws="L4",
            aws_label="nvidia-l4",
        ),
        GpuModel(
            "L40S",
            48,
            NvidiaGpu("NVIDIA L40S", "Ada Lovelace", "8.9.0", 46068),
            aws="L40S",
            aws_label="nvidia-l40s",
        ),
        GpuModel(
            "RTX PRO 6000",
            96,
            NvidiaGpu("NVIDIA RTX PRO 6000 Blackwell Server Edition", "Blackwell", "12.0.0", 97887),
            _MIG_RTX_PRO_6000,
            gke=(GkeGpu("nvidia-rtx-pro-6000", "RTX PRO 6000", None, (1, 2, 4, 8)),),
        ),
        GpuModel(
            "A100 40GB",
            40,
            NvidiaGpu("NVIDIA A100-SXM4-40GB", "Ampere", "8.0.0", 40960),
            _MIG_A100_40,
            gke=(GkeGpu("nvidia-tesla-a100", "A100 40GB", "NVIDIA_A100_GPUS", (1, 2, 4, 8, 16)),),
            aws="A100",
            aws_label="nvidia-a100",
            azure="A100",
        ),
        GpuModel(
            "A100 80GB",
            80,
            NvidiaGpu("NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", 81920),
            _MIG_80,
            gke=(GkeGpu("nvidia-a100-80gb", "A100 80GB", "NVIDIA_A100_80GB_GPUS", (1, 2, 4, 8)),),
            aws="A100 80GB",
            aws_label="nvidia-a100-80gb",
            azure="A100",
        ),
        GpuModel(
            "H100 80GB",
            80,
            NvidiaGpu("NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", 81559),
            _MIG_80,
            gke=(
                GkeGpu("nvidia-h100-80gb", "H100 80GB", "NVIDIA_H100_GPUS", (1, 2, 4, 8)),
                GkeGpu("nvidia-h100-mega-80gb", "H100 80GB Mega", "NVIDIA_H100_MEGA_GPUS", (8,)),
            ),
            aws="H100",
            aws_label="nvidia-h100",
            azure="H100",
        ),
        GpuModel("H100 NVL", 94, azure="H100"),
        GpuModel(
            "H200",
            141,
            NvidiaGpu("NVIDIA H200", "Hopper", "9.0.0", 143771),
            _MIG_H200,
            gke=(GkeGpu("nvidia-h200-141gb", "H200 141GB", "NVIDIA_H200_GPUS", (8,)),),
            aws="H200",
            aws_label="nvidia-h200",
            azure="H200",
        ),
        GpuModel("B200", None, gke=(GkeGpu("nvidia-b200", "B200", None, (8,)),)),
    )
}
"""Every GPU model of the catalog, by its name (the machine rows name it), in the order the derived
tables list them."""


def gke_gpus() -> list[tuple[GpuModel, GkeGpu]]:
    """Every GKE accelerator type with its GPU model, in the records' order."""
    return [(gpu, offer) for gpu in GPU_MODELS.values() for offer in gpu.gke]
