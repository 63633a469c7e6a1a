"""EC2 instance types: vCPUs, memory, network interfaces, instance store and GPUs, the inputs of an
EKS or Karpenter node.

Pure data (imports nothing of ours). `components.model.nodes.shapes` turns a row into a node shape;
`components.model.nodes.catalog` reads the GPU rows as its GPU instance types.

INTERFACE:
- `Ec2Instance(name, vcpus, memory_mib, enis, ipv4_per_eni, arch, instance_store_gb, gpu, gpus)`;
  `EC2_INSTANCES: dict[str, Ec2Instance]`, `ec2_instance_or_none(name)`,
  `ec2_family_sizes(family) -> list[str]`, `instance_store_gb(name) -> int | None`,
  `EC2_INSTANCE_SOURCES: str`, `EC2_UNMODELLED_GPU_FAMILIES`, `EC2_NON_GPU_ACCELERATOR_FAMILIES`

Sources (numbers transcribed, files not copied):
- vCPUs (`DefaultVCpus`), memory (`MemoryInfo.SizeInMiB`) and architecture: the EC2
  DescribeInstanceTypes list generated into kubernetes/autoscaler cluster-autoscaler-1.36.1
  `cluster-autoscaler/cloudprovider/aws/ec2_instance_types.go` (static list of 2026-01-22; its
  fields are filled from those EC2 fields in `aws_util.go`). These are the EC2 fields Karpenter
  reads (`cpu()`, `memory()` in aws/karpenter-provider-aws v1.14.1
  `pkg/providers/instancetype/types.go`).
- `enis`: the maximum network interfaces of the instance's default network card, and
  `ipv4_per_eni`: IPv4 addresses per interface, from aws/karpenter-provider-aws v1.14.1
  `pkg/providers/instancetype/zz_generated.vpclimits.go` (`NetworkCards[DefaultNetworkCardIndex]
  .MaximumNetworkInterfaces`, `IPv4PerInterface`). They equal `defaultMaxENIs` /
  `ipv4AddressesPerInterface` of awslabs/amazon-eks-ami v20260724
  `nodeadm/internal/kubelet/instance-info.jsonl` for every row here that file lists (p3.* are
  not in it; nodeadm then asks the EC2 API).
- p5e.48xlarge is not in the cluster-autoscaler list: 192 vCPUs / 2048 GiB from
  meta-pytorch/torchx `torchx/specs/named_resources_aws.py` (PR #1098), a secondary source; the
  same shape as p5.48xlarge and p5en.48xlarge in the autoscaler list.
"""

from __future__ import annotations

from typing import NamedTuple

EC2_INSTANCE_SOURCES = (
    "EC2 DescribeInstanceTypes as listed in kubernetes/autoscaler cluster-autoscaler-1.36.1 "
    "ec2_instance_types.go; ENIs from aws/karpenter-provider-aws v1.14.1 zz_generated.vpclimits.go"
)

# Graviton families (cluster-autoscaler's list: `Architecture: "arm64"`).
_ARM64_FAMILIES = frozenset({"g5g"})


class Ec2Instance(NamedTuple):
    """An EC2 instance type: vCPUs, memory (MiB), ENIs on the default card, IPv4 per ENI, instance
    store and GPUs."""

    name: str
    vcpus: int
    memory_mib: int
    enis: int
    ipv4_per_eni: int
    arch: str  # "x86_64" | "arm64"
    instance_store_gb: int = 0  # 0: none
    gpu: str | None = None  # the GPU model (`gpus.GPU_MODELS`)
    gpus: int = 0  # how many

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]


# ---------------------------------------------------------------------------------------------
# GPU instance types: (instance type, vCPUs, memory MiB, ENIs on the default network card, IPv4
# per ENI, instance store GB, GPU model (`gpus.GPU_MODELS`), GPUs).
#
# - GPUs per instance: AWS Batch User Guide, "Run GPU jobs" (https://docs.aws.amazon.com/batch/
#   latest/userguide/gpu-jobs.html) for g4dn, g5, g5g and g6 sizes; the per-instance GPU table of
#   vantage-sh/ec2instances.info (scraper/aws/ec2/gpu_data.go, curated from the EC2 instance-type
#   pages) for g4dn.metal, g6e, p3, p4d, p4de, p5, p5e, p5en. p5.4xlarge (1 x H100) is newer
#   than most sources; it is listed only by ec2instances.info.
# - Instance store (local NVMe), total GB (EC2 `InstanceStorageInfo.TotalSizeInGB`): what
#   Karpenter makes ephemeral storage with `instanceStorePolicy: RAID0`. From
#   aws/karpenter-provider-aws v1.14.1 website/content/en/docs/reference/instance-types.md, the
#   `karpenter.k8s.aws/instance-local-nvme` label of each type (types.go computeRequirements sets
#   it to TotalSizeInGB); a type listed there without it has no instance store (0). p3.* are
#   listed (without it) in the same tree's website/content/en/v1.12/reference/instance-types.md.
# ---------------------------------------------------------------------------------------------

_GPU_ROWS: tuple[tuple[str, int, int, int, int, int, str, int], ...] = (
    ("g4dn.xlarge", 4, 16384, 3, 10, 125, "T4", 1),
    ("g4dn.2xlarge", 8, 32768, 3, 10, 225, "T4", 1),
    ("g4dn.4xlarge", 16, 65536, 3, 10, 225, "T4", 1),
    ("g4dn.8xlarge", 32, 131072, 4, 15, 900, "T4", 1),
    ("g4dn.16xlarge", 64, 262144, 4, 15, 900, "T4", 1),
    ("g4dn.12xlarge", 48, 196608, 8, 30, 900, "T4", 4),
    ("g4dn.metal", 96, 393216, 15, 50, 1800, "T4", 8),
    ("g5.xlarge", 4, 16384, 4, 15, 250, "A10G", 1),
    ("g5.2xlarge", 8, 32768, 4, 15, 450, "A10G", 1),
    ("g5.4xlarge", 16, 65536, 8, 30, 600, "A10G", 1),
    ("g5.8xlarge", 32, 131072, 8, 30, 900, "A10G", 1),
    ("g5.16xlarge", 64, 262144, 8, 30, 1900, "A10G", 1),
    ("g5.12xlarge", 48, 196608, 15, 50, 3800, "A10G", 4),
    ("g5.24xlarge", 96, 393216, 15, 50, 3800, "A10G", 4),
    ("g5.48xlarge", 192, 786432, 7, 50, 7600, "A10G", 8),
    ("g5g.xlarge", 4, 8192, 4, 15, 0, "T4G", 1),
    ("g5g.2xlarge", 8, 16384, 4, 15, 0, "T4G", 1),
    ("g5g.4xlarge", 16, 32768, 8, 30, 0, "T4G", 1),
    ("g5g.8xlarge", 32, 65536, 8, 30, 0, "T4G", 1),
    ("g5g.16xlarge", 64, 131072, 15, 50, 0, "T4G", 2),
    ("g5g.metal", 64, 131072, 15, 50, 0, "T4G", 2),
    ("g6.xlarge", 4, 16384, 4, 15, 250, "L4", 1),
    ("g6.2xlarge", 8, 32768, 4, 15, 450, "L4", 1),
    ("g6.4xlarge", 16, 65536, 8, 30, 600, "L4", 1),
    ("g6.8xlarge", 32, 131072, 8, 30, 900, "L4", 1),
    ("g6.16xlarge", 64, 262144, 15, 50, 1880, "L4", 1),
    ("g6.12xlarge", 48, 196608, 8, 30, 3760, "L4", 4),
    ("g6.24xlarge", 96, 393216, 15, 50, 3760, "L4", 4),
    ("g6.48xlarge", 192, 786432, 15, 50, 7520, "L4", 8),
    ("g6e.xlarge", 4, 32768, 4, 15, 250, "L40S", 1),
    ("g6e.2xlarge", 8, 65536, 4, 15, 450, "L40S", 1),
    ("g6e.4xlarge", 16, 131072, 8, 30, 600, "L40S", 1),
    ("g6e.8xlarge", 32, 262144, 8, 30, 900, "L40S", 1),
    ("g6e.16xlarge", 64, 524288, 15, 50, 1900, "L40S", 1),
    ("g6e.12xlarge", 48, 393216, 10, 30, 3800, "L40S", 4),
    ("g6e.24xlarge", 96, 786432, 10, 50, 3800, "L40S", 4),
    ("g6e.48xlarge", 192, 1572864, 10, 50, 7600, "L40S", 8),
    ("p3.2xlarge", 8, 62464, 4, 15, 0, "V100", 1),
    ("p3.8xlarge", 32, 249856, 8, 30, 0, "V100", 4),
    ("p3.16xlarge", 64, 499712, 8, 30, 0, "V100", 8),
    ("p3dn.24xlarge", 96, 786432, 15, 50, 1800, "V100 32GB", 8),
    ("p4d.24xlarge", 96, 1179648, 15, 50, 8000, "A100 40GB", 8),
    ("p4de.24xlarge", 96, 1179648, 15, 50, 8000, "A100 80GB", 8),
    ("p5.4xlarge", 16, 262144, 4, 30, 3800, "H100 80GB", 1),
    ("p5.48xlarge", 192, 2097152, 2, 50, 30400, "H100 80GB", 8),
    (
        "p5e.48xlarge",
        192,
        2097152,
        2,
        50,
        30400,
        "H200",
        8,
    ),  # vCPUs and memory: see the p5e note above
    ("p5en.48xlarge", 192, 2097152, 4, 50, 30400, "H200", 8),
)

# Instance types without GPUs (nor instance store): (instance type, vCPUs, memory MiB, ENIs on
# the default network card, IPv4 per ENI).
_ROWS: tuple[tuple[str, int, int, int, int], ...] = (
    ("m5.large", 2, 8192, 3, 10),
    ("m5.xlarge", 4, 16384, 4, 15),
    ("m5.2xlarge", 8, 32768, 4, 15),
    ("m5.4xlarge", 16, 65536, 8, 30),
    ("m5.8xlarge", 32, 131072, 8, 30),
    ("m5.12xlarge", 48, 196608, 8, 30),
    ("m5.16xlarge", 64, 262144, 15, 50),
    ("m5.24xlarge", 96, 393216, 15, 50),
    ("m5.metal", 96, 393216, 15, 50),
    ("m6i.large", 2, 8192, 3, 10),
    ("m6i.xlarge", 4, 16384, 4, 15),
    ("m6i.2xlarge", 8, 32768, 4, 15),
    ("m6i.4xlarge", 16, 65536, 8, 30),
    ("m6i.8xlarge", 32, 131072, 8, 30),
    ("m6i.12xlarge", 48, 196608, 8, 30),
    ("m6i.16xlarge", 64, 262144, 15, 50),
    ("m6i.24xlarge", 96, 393216, 15, 50),
    ("m6i.32xlarge", 128, 524288, 15, 50),
    ("m6i.metal", 128, 524288, 15, 50),
    ("m7i.large", 2, 8192, 3, 10),
    ("m7i.xlarge", 4, 16384, 4, 15),
    ("m7i.2xlarge", 8, 32768, 4, 15),
    ("m7i.4xlarge", 16, 65536, 8, 30),
    ("m7i.8xlarge", 32, 131072, 8, 30),
    ("m7i.12xlarge", 48, 196608, 8, 30),
    ("m7i.16xlarge", 64, 262144, 15, 50),
    ("m7i.24xlarge", 96, 393216, 15, 50),
    ("m7i.metal-24xl", 96, 393216, 15, 50),
    ("m7i.48xlarge", 192, 786432, 15, 50),
    ("m7i.metal-48xl", 192, 786432, 15, 50),
    ("c5.large", 2, 4096, 3, 10),
    ("c5.xlarge", 4, 8192, 4, 15),
    ("c5.2xlarge", 8, 16384, 4, 15),
    ("c5.4xlarge", 16, 32768, 8, 30),
    ("c5.9xlarge", 36, 73728, 8, 30),
    ("c5.12xlarge", 48, 98304, 8, 30),
    ("c5.18xlarge", 72, 147456, 15, 50),
    ("c5.24xlarge", 96, 196608, 15, 50),
    ("c5.metal", 96, 196608, 15, 50),
    ("c6i.large", 2, 4096, 3, 10),
    ("c6i.xlarge", 4, 8192, 4, 15),
    ("c6i.2xlarge", 8, 16384, 4, 15),
    ("c6i.4xlarge", 16, 32768, 8, 30),
    ("c6i.8xlarge", 32, 65536, 8, 30),
    ("c6i.12xlarge", 48, 98304, 8, 30),
    ("c6i.16xlarge", 64, 131072, 15, 50),
    ("c6i.24xlarge", 96, 196608, 15, 50),
    ("c6i.32xlarge", 128, 262144, 15, 50),
    ("c6i.metal", 128, 262144, 15, 50),
    ("c7i.large", 2, 4096, 3, 10),
    ("c7i.xlarge", 4, 8192, 4, 15),
    ("c7i.2xlarge", 8, 16384, 4, 15),
    ("c7i.4xlarge", 16, 32768, 8, 30),
    ("c7i.8xlarge", 32, 65536, 8, 30),
    ("c7i.12xlarge", 48, 98304, 8, 30),
    ("c7i.16xlarge", 64, 131072, 15, 50),
    ("c7i.24xlarge", 96, 196608, 15, 50),
    ("c7i.metal-24xl", 96, 196608, 15, 50),
    ("c7i.48xlarge", 192, 393216, 15, 50),
    ("c7i.metal-48xl", 192, 393216, 15, 50),
    ("r5.large", 2, 16384, 3, 10),
    ("r5.xlarge", 4, 32768, 4, 15),
    ("r5.2xlarge", 8, 65536, 4, 15),
    ("r5.4xlarge", 16, 131072, 8, 30),
    ("r5.8xlarge", 32, 262144, 8, 30),
    ("r5.12xlarge", 48, 393216, 8, 30),
    ("r5.16xlarge", 64, 524288, 15, 50),
    ("r5.24xlarge", 96, 786432, 15, 50),
    ("r5.metal", 96, 786432, 15, 50),
    ("r6i.large", 2, 16384, 3, 10),
    ("r6i.xlarge", 4, 32768, 4, 15),
    ("r6i.2xlarge", 8, 65536, 4, 15),
    ("r6i.4xlarge", 16, 131072, 8, 30),
    ("r6i.8xlarge", 32, 262144, 8, 30),
    ("r6i.12xlarge", 48, 393216, 8, 30),
    ("r6i.16xlarge", 64, 524288, 15, 50),
    ("r6i.24xlarge", 96, 786432, 15, 50),
    ("r6i.32xlarge", 128, 1048576, 15, 50),
    ("r6i.metal", 128, 1048576, 15, 50),
    ("t3.large", 2, 8192, 3, 12),
    ("t3.medium", 2, 4096, 3, 6),
    ("t3.micro", 2, 1024, 2, 2),
    ("t3.nano", 2, 512, 2, 2),
    ("t3.small", 2, 2048, 3, 4),
    ("t3.xlarge", 4, 16384, 4, 15),
    ("t3.2xlarge", 8, 32768, 4, 15),
)


def _arch(name: str) -> str:
    return "arm64" if name.split(".", 1)[0] in _ARM64_FAMILIES else "x86_64"


EC2_INSTANCES: dict[str, Ec2Instance] = {
    **{
        name: Ec2Instance(name, vcpus, mib, enis, ipv4, _arch(name), store, gpu, gpus)
        for name, vcpus, mib, enis, ipv4, store, gpu, gpus in _GPU_ROWS
    },
    **{
        name: Ec2Instance(name, vcpus, mib, enis, ipv4, _arch(name))
        for name, vcpus, mib, enis, ipv4 in _ROWS
    },
}

# Families with GPUs (or other accelerators that are not `nvidia.com/gpu`) that the rows above do
# not model; recognised so that errors can say what they are.
EC2_UNMODELLED_GPU_FAMILIES = (
    "p2",
    "g3",
    "g3s",
    "g4ad",
    "gr6",
    "g6f",
    "gr6f",
    "p6-b200",
    "p6e-gb200",
)
EC2_NON_GPU_ACCELERATOR_FAMILIES = (
    "inf1",
    "inf2",
    "trn1",
    "trn1n",
    "trn2",
    "dl1",
    "dl2q",
    "f1",
    "f2",
    "vt1",
)


def instance_store_gb(name: str) -> int | None:
    """The instance type's instance store in GB (0: none), None when the catalog lacks the type."""
    found = EC2_INSTANCES.get(name)
    return None if found is None else found.instance_store_gb


def ec2_instance_or_none(name: object) -> Ec2Instance | None:
    """The instance type's row, or None when this catalog does not know it."""
    return EC2_INSTANCES.get(name) if isinstance(name, str) else None


def ec2_family_sizes(family: str) -> list[str]:
    """The instance types of a family this catalog knows, smallest first."""
    rows = [i for i in EC2_INSTANCES.values() if i.family == family]
    return [i.name for i in sorted(rows, key=lambda i: (i.vcpus, i.memory_mib, i.name))]


def ec2_families() -> list[str]:
    return sorted({i.family for i in EC2_INSTANCES.values()})
