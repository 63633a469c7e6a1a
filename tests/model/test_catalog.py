"""GPU catalogs: the GPU records, the GKE and AWS GPU machine rows, and the validators.

Facts are asserted for chosen rows, each from its source; every row is held to the invariants
(Hypothesis), so adding a row needs no copy of it here.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.model.autoscalers.karpenter import ec2_gpu_name
from components.model.errors import InputError
from components.model.nodes.autopilot import AUTOPILOT_GPU_QUANTITIES
from components.model.nodes.aws_instances import EC2_INSTANCES
from components.model.nodes.catalog import (
    AWS_GPU_INSTANCES,
    GKE_ACCELERATORS,
    MIG_PROFILES,
    AwsGpuNodeShape,
    aws_gpu_families,
    aws_instance,
    aws_instance_family,
    aws_instance_or_none,
    gke_accelerator,
    gke_accelerator_for_family,
    gke_accelerator_machines,
    gke_gpus_for_machine,
    gke_machine_families,
    gke_machine_series,
    is_gke_gpu_machine,
    is_gpu_instance,
    mig_instances,
    reference_list,
    validate_aws_cpu_instance_types,
    validate_aws_gpu_instance_types,
    validate_gke_accelerator,
    validate_gke_cpu_machine_type,
)
from components.model.nodes.dra_devices import GPUS
from components.model.nodes.gke_machines import GCE_MACHINES
from components.model.nodes.gpus import GPU_MODELS
from components.model.nodes.quotas import gce_quota
from components.model.scheduling import label_value_problem

# ---------------------------------------------------------------------------------------------
# GPU records: facts from the sources for chosen models, invariants over every record
# ---------------------------------------------------------------------------------------------

GPU_RECORDS = sorted(GPU_MODELS)


@pytest.mark.parametrize(
    ("accelerator", "memory_gib"),
    # Compute Engine "GPU machine types": L4 24 GB, A100 40 / 80 GB, H100 80 GB, T4 16, V100 16, P4 8
    [
        ("nvidia-l4", 24),
        ("nvidia-tesla-a100", 40),
        ("nvidia-a100-80gb", 80),
        ("nvidia-h100-80gb", 80),
        ("nvidia-tesla-t4", 16),
        ("nvidia-tesla-v100", 16),
        ("nvidia-tesla-p4", 8),
    ],
)
def test_gke_accelerator_memory_from_the_compute_engine_page(accelerator, memory_gib):
    assert gke_accelerator(accelerator).memory_gib == memory_gib


@pytest.mark.parametrize(
    ("accelerator", "metric"),
    # Compute v1 Quota.Metric; gcloud output for H100 Mega and H200
    [
        ("nvidia-tesla-t4", "NVIDIA_T4_GPUS"),
        ("nvidia-a100-80gb", "NVIDIA_A100_80GB_GPUS"),
        ("nvidia-h100-mega-80gb", "NVIDIA_H100_MEGA_GPUS"),
        ("nvidia-h200-141gb", "NVIDIA_H200_GPUS"),
    ],
)
def test_gce_quota_metrics(accelerator, metric):
    assert gce_quota(accelerator, preemptible=False) == metric
    assert gce_quota(accelerator, preemptible=True) == "PREEMPTIBLE_" + metric


def test_autopilot_quantities_from_the_docs_table():
    # "Supported GPU quantities", in the table's order
    assert list(AUTOPILOT_GPU_QUANTITIES)[:4] == [
        "nvidia-b200",
        "nvidia-h200-141gb",
        "nvidia-h100-mega-80gb",
        "nvidia-h100-80gb",
    ]
    assert AUTOPILOT_GPU_QUANTITIES["nvidia-tesla-a100"] == (1, 2, 4, 8, 16)
    assert AUTOPILOT_GPU_QUANTITIES["nvidia-tesla-t4"] == (1, 2, 4)


@given(st.sampled_from(GPU_RECORDS))
def test_a_gpu_record_agrees_with_itself(name):
    gpu = GPU_MODELS[name]
    for offer in gpu.gke:
        assert offer.accelerator.startswith("nvidia-")
        size = re.search(r"-(\d+)gb$", offer.accelerator)
        if size:  # the accelerator's name says its memory
            assert gpu.memory_gib == int(size.group(1))
        assert offer.quota is None or re.fullmatch(r"NVIDIA_[A-Z0-9_]+_GPUS", offer.quota)
        acc = GKE_ACCELERATORS.get(offer.accelerator)
        if acc is not None:  # Autopilot offers only counts a machine type has
            assert set(offer.autopilot) <= {c for counts in acc.machines.values() for c in counts}
    if gpu.dra is not None and gpu.memory_gib:
        # NVML reports a little less than the nominal memory, never more
        assert 0.9 <= gpu.dra.memory_mib / (gpu.memory_gib * 1024) <= 1
    assert bool(gpu.aws) == bool(gpu.aws_label)
    assert gpu.aws_label is None or label_value_problem(gpu.aws_label) is None


@given(st.sampled_from([n for n in GPU_RECORDS if GPU_MODELS[n].mig]))
def test_mig_layouts_fill_at_most_one_gpu(name):
    gpu = GPU_MODELS[name]
    layout = dict(gpu.mig or {})
    slices = {p: int(p.split("g.")[0]) for p in layout}
    whole = max(slices.values())
    for profile, instances in layout.items():
        assert re.fullmatch(r"\d+g\.\d+gb", profile)
        assert instances * slices[profile] <= whole
        assert int(profile.split(".")[1][:-2]) <= (gpu.memory_gib or 0)
    assert {int(p.split(".")[1][:-2]) for p, s in slices.items() if s == whole} == {gpu.memory_gib}
    for offer in gpu.gke:
        assert MIG_PROFILES[offer.accelerator] == layout
        assert mig_instances(offer.accelerator, next(iter(layout))) == next(iter(layout.values()))


def test_every_name_a_table_is_keyed_by_belongs_to_one_record():
    """The derived tables key by GKE accelerator, the GKE and AWS model names: one record each."""
    owners: dict[str, set[str]] = {}
    for gpu in GPU_MODELS.values():
        names = {o.accelerator for o in gpu.gke} | {o.model for o in gpu.gke}
        if gpu.dra or gpu.mig:
            names |= {gpu.aws} if gpu.aws else set()
        for name in names:
            owners.setdefault(name, set()).add(gpu.name)
    assert {n: o for n, o in owners.items() if len(o) > 1} == {}
    for name, device in GPUS.items():
        assert GPU_MODELS[next(iter(owners[name]))].dra == device


# ---------------------------------------------------------------------------------------------
# GKE machine types: facts from the sources for chosen rows, invariants over every row
# ---------------------------------------------------------------------------------------------

GKE_GPU_ROWS = sorted(m for m, row in GCE_MACHINES.items() if row.accelerator)


@pytest.mark.parametrize(
    ("machine", "expected"),
    # cluster-toolkit gpu-definition `accelerator_machines`; Compute Engine "GPU machine types"
    [
        ("g2-standard-4", ("nvidia-l4", 1)),
        ("g2-standard-24", ("nvidia-l4", 2)),
        ("g2-standard-96", ("nvidia-l4", 8)),
        ("a2-highgpu-1g", ("nvidia-tesla-a100", 1)),
        ("a2-megagpu-16g", ("nvidia-tesla-a100", 16)),
        ("a2-ultragpu-8g", ("nvidia-a100-80gb", 8)),
        ("a3-highgpu-8g", ("nvidia-h100-80gb", 8)),
        ("a3-megagpu-8g", ("nvidia-h100-mega-80gb", 8)),
        ("a3-ultragpu-8g", ("nvidia-h200-141gb", 8)),
        ("g4-standard-48", ("nvidia-rtx-pro-6000", 1)),
        ("g4-standard-384", ("nvidia-rtx-pro-6000", 8)),
    ],
)
def test_gke_machine_types_from_the_sources(machine, expected):
    assert gke_gpus_for_machine(machine) == expected


@given(st.sampled_from(GKE_GPU_ROWS), st.integers(0, 20))
def test_a_gke_gpu_machine_takes_its_accelerator_in_its_count_only(machine, count):
    accelerator, gpus = gke_gpus_for_machine(machine) or ("", 0)
    assert accelerator in GKE_ACCELERATORS and gpus >= 1
    assert is_gke_gpu_machine(machine)
    assert gke_accelerator(accelerator).counts_for(machine) == (gpus,)
    assert validate_gke_accelerator(accelerator, machine, None) == gpus
    if count == gpus:
        assert validate_gke_accelerator(accelerator, machine, count) == gpus
    else:
        with pytest.raises(InputError):
            validate_gke_accelerator(accelerator, machine, count)
    with pytest.raises(InputError, match="a CPU pool must not use a GPU machine type"):
        validate_gke_cpu_machine_type(machine)


@given(st.sampled_from(GKE_GPU_ROWS), st.sampled_from(sorted(GKE_ACCELERATORS)))
def test_no_other_accelerator_goes_on_a_gke_gpu_machine(machine, accelerator):
    if accelerator != gke_gpus_for_machine(machine)[0]:  # type: ignore[index]
        with pytest.raises(InputError):
            validate_gke_accelerator(accelerator, machine, None)


def test_gke_gpu_machine_families_agree():
    """One accelerator per family, and a `-<n>g` name says its GPUs."""
    by_family: dict[str, list] = {}
    for name in GKE_GPU_ROWS:
        by_family.setdefault(name.rsplit("-", 1)[0], []).append(GCE_MACHINES[name])
    for family, rows in by_family.items():
        assert len({r.accelerator for r in rows}) == 1, family
        assert gke_accelerator_for_family(family) == rows[0].accelerator
        for row in rows:
            named = re.fullmatch(r".*-(\d+)g", row.name)
            assert named is None or int(named.group(1)) == row.gpus, row.name


@pytest.mark.parametrize(
    ("accelerator", "counts"),
    # Compute Engine "GPUs on N1"
    [("nvidia-tesla-t4", (1, 2, 4)), ("nvidia-tesla-v100", (1, 2, 4, 8))],
)
@pytest.mark.parametrize(
    "machine", ["n1-standard-4", "n1-highmem-8", "n1-highcpu-4", "custom-4-5120"]
)
def test_n1_accelerators_take_their_counts(accelerator, counts, machine):
    acc = gke_accelerator(accelerator)
    assert acc.counts_for(machine) == counts
    for count in counts:
        assert validate_gke_accelerator(accelerator, machine, count) == count


N1_ACCELERATORS = sorted(n for n, a in GKE_ACCELERATORS.items() if not a.attached)


@given(accelerator=st.sampled_from(N1_ACCELERATORS), count=st.integers(min_value=-3, max_value=20))
def test_n1_counts_property(accelerator, count):
    """On a small N1 machine a count passes exactly when the accelerator's N1 limits list it."""
    if count in (gke_accelerator(accelerator).max_vcpus or {}):
        assert validate_gke_accelerator(accelerator, "n1-standard-4", count) == count
    else:
        with pytest.raises(InputError):
            validate_gke_accelerator(accelerator, "n1-standard-4", count)


@pytest.mark.parametrize(
    "machine", ["n1-standard-8", "e2-standard-8", "n2-standard-8", "c3-standard-4", "f1-micro"]
)
def test_machines_without_built_in_gpus(machine):
    assert gke_gpus_for_machine(machine) is None
    assert not is_gke_gpu_machine(machine)
    assert validate_gke_cpu_machine_type(machine) == machine


@pytest.mark.parametrize(
    ("machine", "series"),
    [
        ("n1-standard-8", "N1"),
        ("custom-4-5120", "N1"),
        ("g2-standard-8", "G2"),
        ("a3-megagpu-8g", "A3"),
        ("e2-medium", "E2"),
    ],
)
def test_machine_series(machine, series):
    assert gke_machine_series(machine) == series


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("nvidia-l4", "g2-standard-* machines"),
        ("nvidia-tesla-a100", "a2-highgpu-* or a2-megagpu-16g machines"),
        ("nvidia-h100-mega-80gb", "a3-megagpu-8g machines"),
        ("nvidia-tesla-t4", "n1-standard-*, n1-highmem-*, n1-highcpu-* or custom-* machines"),
    ],
)
def test_accelerator_machines_text(name, text):
    assert gke_accelerator_machines(name) == text


def test_machine_families():
    families = gke_machine_families()
    assert families["g2-standard"] == "nvidia-l4"
    assert families["a2-ultragpu"] == "nvidia-a100-80gb"
    assert families["n1-standard"] == ""
    assert gke_accelerator_for_family("a3-ultragpu") == "nvidia-h200-141gb"
    assert gke_accelerator_for_family("n1-standard") is None
    assert gke_accelerator_for_family("e2-standard") is None
    assert GKE_ACCELERATORS["nvidia-l4"].families == ["g2-standard"]


def test_unmodelled_gpu_families_are_still_gpu_machines():
    assert is_gke_gpu_machine("a4-highgpu-8g")
    assert gke_gpus_for_machine("a4-highgpu-8g") is None


# ---------------------------------------------------------------------------------------------
# GKE validation errors: (accelerator, machine, count) -> pieces the message must contain
# ---------------------------------------------------------------------------------------------

GKE_ERRORS = [
    pytest.param(
        "nvidia-a100",
        "a2-highgpu-1g",
        1,
        ["'nvidia-a100' is not offered by GKE", "allowed: nvidia-a100-80gb", "nvidia-tesla-a100"],
        id="unknown-accelerator",
    ),
    pytest.param(
        "nvidia-l4",
        "n1-standard-8",
        1,
        ["nvidia-l4 attaches to g2-standard-* machines", "n1-standard-8 is an N1 machine"],
        id="l4-on-n1",
    ),
    pytest.param(
        "nvidia-tesla-t4",
        "e2-standard-8",
        1,
        ["nvidia-tesla-t4 attaches to n1-standard-*", "e2-standard-8 is an E2 machine"],
        id="t4-on-e2",
    ),
    pytest.param(
        "nvidia-tesla-t4",
        "g2-standard-8",
        1,
        [
            "g2-standard-8 comes with nvidia-l4 GPUs, not nvidia-tesla-t4",
            "accelerator nvidia-l4 on",
        ],
        id="t4-on-g2",
    ),
    pytest.param(
        "nvidia-tesla-a100",
        "a2-ultragpu-1g",
        None,
        ["a2-ultragpu-1g comes with nvidia-a100-80gb GPUs", "a2-highgpu-* or a2-megagpu-16g"],
        id="a100-40-on-ultragpu",
    ),
    pytest.param(
        "nvidia-h100-mega-80gb",
        "a3-highgpu-8g",
        None,
        ["a3-highgpu-8g comes with nvidia-h100-80gb GPUs", "a3-megagpu-8g"],
        id="mega-on-high",
    ),
    pytest.param(
        "nvidia-l4",
        "g2-standard-6",
        None,
        [
            "g2-standard-6 is not a machine type that takes nvidia-l4",
            "g2-standard-4, g2-standard-8",
        ],
        id="unknown-g2-shape",
    ),
    pytest.param(
        "nvidia-l4",
        "g2-standard-8",
        2,
        [
            "g2-standard-8 comes with 1 nvidia-l4 GPU; a count of 2 does not fit it",
            "for 2 GPUs per node: g2-standard-24",
        ],
        id="wrong-count-on-g2",
    ),
    pytest.param(
        "nvidia-h200-141gb",
        "a3-ultragpu-8g",
        4,
        ["comes with 8 nvidia-h200-141gb GPUs", "no nvidia-h200-141gb machine type has 4 GPUs"],
        id="wrong-count-no-shape",
    ),
    pytest.param(
        "nvidia-tesla-t4",
        "n1-standard-8",
        3,
        ["nvidia-tesla-t4 attaches 1, 2 or 4 GPUs to an N1 machine; 3 is not one of them"],
        id="t4-count-3",
    ),
    pytest.param(
        "nvidia-tesla-t4",
        "n1-standard-8",
        8,
        ["8 is not one of them", "allowed: 1, 2 or 4"],
        id="t4-count-8",
    ),
    pytest.param(
        "nvidia-tesla-v100", "n1-standard-8", 0, ["0 is not one of them"], id="v100-count-0"
    ),
    pytest.param(
        "nvidia-tesla-t4",
        "n1-standard-8",
        None,
        ["no GPU count given for nvidia-tesla-t4 on n1-standard-8", "allowed: 1, 2 or 4"],
        id="n1-count-missing",
    ),
    pytest.param(
        "nvidia-tesla-a100",
        "a2-highgpu-1g",
        True,
        ["GPU count True is not a whole number"],
        id="bool",
    ),
    pytest.param(
        "nvidia-tesla-t4", "n1-standard-8", "2", ["GPU count '2' is not a whole number"], id="str"
    ),
    pytest.param(
        "nvidia-tesla-t4",
        "n1-standard-96",
        1,
        [
            "n1-standard-96 has 96 vCPUs; with 1 nvidia-tesla-t4 GPU an N1 machine may have at most 48",
            "4 GPUs (up to 96 vCPUs)",
        ],
        id="t4-vcpu-limit",
    ),
    pytest.param(
        "nvidia-tesla-v100",
        "n1-highmem-16",
        1,
        ["at most 12", "2 GPUs (up to 24 vCPUs)"],
        id="v100-vcpu-limit",
    ),
    pytest.param(
        "nvidia-tesla-p4", "custom-32-65536", 1, ["custom-32-65536 has 32 vCPUs"], id="custom-vcpus"
    ),
    pytest.param(
        "nvidia-tesla-t4",
        "",
        1,
        ["machine type '' is not a Compute Engine machine type name"],
        id="empty-machine",
    ),
    pytest.param(
        "nvidia-l4", None, None, ["machine type None is not a Compute Engine"], id="none-machine"
    ),
]


@pytest.mark.parametrize(("accelerator", "machine", "count", "pieces"), GKE_ERRORS)
def test_gke_accelerator_errors(accelerator, machine, count, pieces):
    with pytest.raises(InputError) as err:
        validate_gke_accelerator(accelerator, machine, count)
    message = str(err.value)
    for piece in pieces:
        assert piece in message
    assert "allowed:" in message


@pytest.mark.parametrize(
    ("accelerator", "machine", "count"),
    [
        ("nvidia-tesla-t4", "n1-standard-48", 1),
        ("nvidia-tesla-t4", "n1-standard-96", 4),
        ("nvidia-tesla-v100", "n1-standard-96", 8),
        ("nvidia-tesla-p100", "n1-highmem-16", 1),
        ("nvidia-tesla-p4", "n1-highcpu-96", 4),
        ("nvidia-tesla-t4", "custom-4-5120-ext", 1),
    ],
)
def test_n1_vcpu_limits_allow_the_documented_maximum(accelerator, machine, count):
    assert validate_gke_accelerator(accelerator, machine, count) == count


def test_unknown_accelerator_lookup_lists_allowed():
    with pytest.raises(InputError) as err:
        gke_accelerator("nvidia-tesla-k80")
    assert err.value.allowed == ", ".join(sorted(GKE_ACCELERATORS))


@pytest.mark.parametrize(
    ("machine", "piece"),
    [
        ("g2-standard-24", "g2-standard-24 comes with 2 nvidia-l4 GPUs"),
        ("a3-megagpu-8g", "comes with 8 nvidia-h100-mega-80gb GPUs"),
        ("a4-highgpu-8g", "a4-highgpu-8g comes with GPUs"),
        ("", "is not a Compute Engine machine type name"),
    ],
)
def test_cpu_pool_rejects_gpu_machines(machine, piece):
    with pytest.raises(InputError) as err:
        validate_gke_cpu_machine_type(machine)
    assert piece in str(err.value)
    assert "allowed:" in str(err.value)


# ---------------------------------------------------------------------------------------------
# AWS GPU instance types: facts from the sources for chosen rows, invariants over every row
# ---------------------------------------------------------------------------------------------

AWS_GPU_ROWS = sorted(AWS_GPU_INSTANCES)


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    # (GPU model, GPUs, GPU memory GiB, arch): AWS Batch "Run GPU jobs" for g4dn.12xlarge,
    # g5.48xlarge, g5g.16xlarge, g6.24xlarge; ec2instances.info gpu_data.go for the rest
    [
        ("g4dn.12xlarge", ("T4", 4, 16, "x86_64")),
        ("g4dn.metal", ("T4", 8, 16, "x86_64")),
        ("g5.48xlarge", ("A10G", 8, 24, "x86_64")),
        ("g5g.16xlarge", ("T4G", 2, 16, "arm64")),
        ("g6.24xlarge", ("L4", 4, 24, "x86_64")),
        ("g6e.12xlarge", ("L40S", 4, 48, "x86_64")),
        ("p3dn.24xlarge", ("V100", 8, 32, "x86_64")),
        ("p4de.24xlarge", ("A100 80GB", 8, 80, "x86_64")),
        ("p5.4xlarge", ("H100", 1, 80, "x86_64")),
        ("p5en.48xlarge", ("H200", 8, 141, "x86_64")),
    ],
)
def test_aws_instances_from_the_sources(instance_type, expected):
    inst = aws_instance(instance_type)
    assert (inst.gpu_model, inst.gpus, inst.gpu_memory_gib, inst.arch) == expected


def test_seed_001_t4_label():
    # KServe seed 001 selects `k8s.amazonaws.com/accelerator: nvidia-tesla-t4` for its T4 nodes.
    assert aws_instance("g4dn.xlarge").accelerator_label == "nvidia-tesla-t4"


@pytest.mark.parametrize(
    ("instance_type", "name"),
    # Karpenter v1.14.1 reference/instance-types.md, `karpenter.k8s.aws/instance-gpu-name`
    [
        ("g5.xlarge", "a10g"),
        ("g5g.xlarge", "t4g"),
        ("p4de.24xlarge", "a100"),
        ("p5.48xlarge", "h100"),
    ],
)
def test_the_gpu_name_karpenter_labels(instance_type, name):
    assert ec2_gpu_name(aws_instance(instance_type)) == name


@given(st.sampled_from(AWS_GPU_ROWS))
def test_an_aws_gpu_instance_is_its_row_and_its_gpu_record(instance_type):
    inst = aws_instance(instance_type)
    row = EC2_INSTANCES[instance_type]
    gpu = GPU_MODELS[str(row.gpu)]
    assert (inst.instance_type, inst.gpus, inst.arch) == (instance_type, row.gpus, row.arch)
    assert (inst.gpu_model, inst.gpu_memory_gib, inst.accelerator_label) == (
        gpu.aws,
        gpu.memory_gib,
        gpu.aws_label,
    )
    assert inst.gpus >= 1
    assert inst.family == aws_instance_family(instance_type) == instance_type.split(".")[0]
    assert aws_instance_or_none(instance_type) is inst
    assert is_gpu_instance(instance_type)
    assert validate_aws_gpu_instance_types([instance_type]).gpus == inst.gpus
    with pytest.raises(InputError, match="is a GPU instance type"):
        validate_aws_cpu_instance_types([instance_type])


def test_every_size_of_an_aws_gpu_family_has_its_gpu_model_and_architecture():
    families = aws_gpu_families()
    assert families[:2] == ["g4dn", "g5"] and "p5" in families
    assert len(set(families)) == len(families)
    for family in families:
        sizes = [i for i in AWS_GPU_INSTANCES.values() if i.family == family]
        assert len({(i.gpu_model, i.arch, i.accelerator_label) for i in sizes}) == 1, family
    order = [i.family for i in AWS_GPU_INSTANCES.values()]
    assert families == list(dict.fromkeys(order))
    assert order == sorted(order, key=families.index)  # each family's rows together


def test_the_config_reference_lists_every_aws_gpu_family():
    text = reference_list("eks-gpu-families")
    for family in aws_gpu_families():
        inst = next(i for i in AWS_GPU_INSTANCES.values() if i.family == family)
        assert f"`{family}.*` {inst.gpu_model} (`{inst.accelerator_label}`)" in text
    with pytest.raises(KeyError, match="known: eks-gpu-families"):
        reference_list("gke-machines")


@pytest.mark.parametrize(
    ("instance_type", "gpu"),
    [
        ("m5.large", False),
        ("c6i.2xlarge", False),
        ("inf2.xlarge", False),
        ("p2.xlarge", True),
        ("g4ad.xlarge", True),
        ("g5.xlarge", True),
        ("g5.huge", True),
    ],
)
def test_is_gpu_instance(instance_type, gpu):
    assert is_gpu_instance(instance_type) is gpu
    assert aws_instance_or_none(instance_type) is (AWS_GPU_INSTANCES.get(instance_type))


AWS_LOOKUP_ERRORS = [
    ("m5.large", "m5.large is not a GPU instance type", "g4dn.*, g5.*"),
    ("g5.huge", "g5.huge is not a g5 size", "g5.xlarge, g5.2xlarge"),
    ("p2.xlarge", "the p2 family is not in this catalog", "g4dn.*"),
    ("inf2.xlarge", "its accelerators are not NVIDIA GPUs", "g4dn.*"),
    ("G5.XLARGE", "'G5.XLARGE' is not an EC2 instance type name", "such as g5.xlarge"),
    ("g5", "'g5' is not an EC2 instance type name", "such as g5.xlarge"),
    ("", "'' is not an EC2 instance type name", "such as g5.xlarge"),
]


@pytest.mark.parametrize(("instance_type", "problem", "allowed"), AWS_LOOKUP_ERRORS)
def test_aws_instance_errors(instance_type, problem, allowed):
    with pytest.raises(InputError) as err:
        aws_instance(instance_type)
    assert problem in err.value.problem
    assert allowed in err.value.allowed


# ---------------------------------------------------------------------------------------------
# AWS node group validation
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("types", "shape"),
    [
        (
            ["g4dn.xlarge"],
            AwsGpuNodeShape(("g4dn.xlarge",), "T4", 1, 16, "x86_64", "nvidia-tesla-t4"),
        ),
        (
            ("g5.xlarge", "g5.2xlarge", "g5.4xlarge"),
            AwsGpuNodeShape(
                ("g5.xlarge", "g5.2xlarge", "g5.4xlarge"), "A10G", 1, 24, "x86_64", "nvidia-a10g"
            ),
        ),
        (
            ["g6e.12xlarge", "g6e.24xlarge"],
            AwsGpuNodeShape(
                ("g6e.12xlarge", "g6e.24xlarge"), "L40S", 4, 48, "x86_64", "nvidia-l40s"
            ),
        ),
        (
            ["g5g.16xlarge", "g5g.metal"],
            AwsGpuNodeShape(("g5g.16xlarge", "g5g.metal"), "T4G", 2, 16, "arm64", "nvidia-t4g"),
        ),
        (
            ["p5e.48xlarge", "p5en.48xlarge"],
            AwsGpuNodeShape(
                ("p5e.48xlarge", "p5en.48xlarge"), "H200", 8, 141, "x86_64", "nvidia-h200"
            ),
        ),
    ],
)
def test_aws_node_group_shapes(types, shape):
    assert validate_aws_gpu_instance_types(types) == shape


AWS_GROUP_ERRORS = [
    pytest.param(
        ["m5.large"],
        "args.instance_types[0]: m5.large is not a GPU instance type",
        id="not-gpu",
    ),
    pytest.param(
        ["g5.xlarge", "m5.large"],
        "args.instance_types[1]: m5.large is not a GPU instance type",
        id="not-gpu-second",
    ),
    pytest.param(
        ["g5.xlarge", "g6.xlarge"],
        "args.instance_types[1]: g6.xlarge has GPU model L4 but g5.xlarge has A10G",
        id="model-mismatch",
    ),
    pytest.param(
        ["g5.xlarge", "g5.12xlarge"],
        "args.instance_types[1]: g5.12xlarge has GPU count 4 but g5.xlarge has 1",
        id="count-mismatch",
    ),
    pytest.param(
        ["g4dn.xlarge", "g5g.xlarge"],
        "args.instance_types[1]: g5g.xlarge has GPU model T4G but g4dn.xlarge has T4",
        id="arch-and-model-mismatch",
    ),
    pytest.param(
        ["g6.xlarge", "g6.xlarge"],
        "args.instance_types[1]: 'g6.xlarge' is listed twice",
        id="duplicate",
    ),
    pytest.param([], "args.instance_types: no instance types given", id="empty"),
    pytest.param(
        "g5.xlarge", "args.instance_types: instance types 'g5.xlarge' is not a list", id="str"
    ),
    pytest.param(
        ["g5.xlarge", 5], "args.instance_types[1]: instance type 5 is not an EC2", id="not-str"
    ),
    pytest.param(["g5.huge"], "args.instance_types[0]: g5.huge is not a g5 size", id="bad-size"),
]


@pytest.mark.parametrize(("types", "message"), AWS_GROUP_ERRORS)
def test_aws_node_group_errors(types, message):
    with pytest.raises(InputError) as err:
        validate_aws_gpu_instance_types(types)
    located = err.value.at("args.instance_types")
    assert str(located).startswith(message)
    assert "(allowed: " in str(located)


def test_mismatch_error_lists_compatible_types():
    with pytest.raises(InputError) as err:
        validate_aws_gpu_instance_types(["g6.12xlarge", "g6.48xlarge"])
    assert err.value.allowed == "types like g6.12xlarge: g6.12xlarge, g6.24xlarge"


def test_cpu_node_group_types():
    assert validate_aws_cpu_instance_types(["m5.xlarge", "c6i.2xlarge"]) == (
        "m5.xlarge",
        "c6i.2xlarge",
    )


@pytest.mark.parametrize(
    ("types", "message"),
    [
        (["m5.xlarge", "g6e.xlarge"], "args.instance_types[1]: g6e.xlarge is a GPU instance type"),
        (["p2.xlarge"], "args.instance_types[0]: p2.xlarge is a GPU instance type"),
        (["m5.xlarge", "m5.xlarge"], "args.instance_types[1]: 'm5.xlarge' is listed twice"),
        (["M5"], "args.instance_types[0]: instance type 'M5' is not an EC2 instance type name"),
        ([], "args.instance_types: no instance types given"),
    ],
)
def test_cpu_node_group_errors(types, message):
    with pytest.raises(InputError) as err:
        validate_aws_cpu_instance_types(types)
    assert str(err.value.at("args.instance_types")).startswith(message)
