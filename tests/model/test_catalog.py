"""GPU catalogs: the GKE accelerator / machine table, the AWS GPU instance table, and their validators."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.model.errors import InputError
from components.model.nodes.catalog import (
    AWS_GPU_INSTANCES,
    GKE_ACCELERATORS,
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
    validate_aws_cpu_instance_types,
    validate_aws_gpu_instance_types,
    validate_gke_accelerator,
    validate_gke_cpu_machine_type,
)
from components.model.scheduling import label_value_problem

# ---------------------------------------------------------------------------------------------
# GKE data
# ---------------------------------------------------------------------------------------------

# machine type -> (accelerator, GPUs attached)
ATTACHED_SHAPES = {
    "g2-standard-4": ("nvidia-l4", 1),
    "g2-standard-8": ("nvidia-l4", 1),
    "g2-standard-12": ("nvidia-l4", 1),
    "g2-standard-16": ("nvidia-l4", 1),
    "g2-standard-24": ("nvidia-l4", 2),
    "g2-standard-32": ("nvidia-l4", 1),
    "g2-standard-48": ("nvidia-l4", 4),
    "g2-standard-96": ("nvidia-l4", 8),
    "a2-highgpu-1g": ("nvidia-tesla-a100", 1),
    "a2-highgpu-2g": ("nvidia-tesla-a100", 2),
    "a2-highgpu-4g": ("nvidia-tesla-a100", 4),
    "a2-highgpu-8g": ("nvidia-tesla-a100", 8),
    "a2-megagpu-16g": ("nvidia-tesla-a100", 16),
    "a2-ultragpu-1g": ("nvidia-a100-80gb", 1),
    "a2-ultragpu-2g": ("nvidia-a100-80gb", 2),
    "a2-ultragpu-4g": ("nvidia-a100-80gb", 4),
    "a2-ultragpu-8g": ("nvidia-a100-80gb", 8),
    "a3-highgpu-1g": ("nvidia-h100-80gb", 1),
    "a3-highgpu-2g": ("nvidia-h100-80gb", 2),
    "a3-highgpu-4g": ("nvidia-h100-80gb", 4),
    "a3-highgpu-8g": ("nvidia-h100-80gb", 8),
    "a3-megagpu-8g": ("nvidia-h100-mega-80gb", 8),
    "a3-ultragpu-8g": ("nvidia-h200-141gb", 8),
    "g4-standard-48": ("nvidia-rtx-pro-6000", 1),
    "g4-standard-96": ("nvidia-rtx-pro-6000", 2),
    "g4-standard-192": ("nvidia-rtx-pro-6000", 4),
    "g4-standard-384": ("nvidia-rtx-pro-6000", 8),
}

# accelerator -> (GPU memory GB, attached to the machine?)
GKE_MEMORY = {
    "nvidia-tesla-t4": (16, False),
    "nvidia-tesla-v100": (16, False),
    "nvidia-tesla-p100": (16, False),
    "nvidia-tesla-p4": (8, False),
    "nvidia-l4": (24, True),
    "nvidia-tesla-a100": (40, True),
    "nvidia-a100-80gb": (80, True),
    "nvidia-h100-80gb": (80, True),
    "nvidia-h100-mega-80gb": (80, True),
    "nvidia-h200-141gb": (141, True),
    "nvidia-rtx-pro-6000": (96, True),
}

N1_COUNTS = {
    "nvidia-tesla-t4": (1, 2, 4),
    "nvidia-tesla-v100": (1, 2, 4, 8),
    "nvidia-tesla-p100": (1, 2, 4),
    "nvidia-tesla-p4": (1, 2, 4),
}


def test_gke_catalog_has_exactly_the_checked_accelerators():
    assert set(GKE_ACCELERATORS) == set(GKE_MEMORY)
    for name, acc in GKE_ACCELERATORS.items():
        assert acc.name == name


@pytest.mark.parametrize(("name", "memory", "attached"), [(k, *v) for k, v in GKE_MEMORY.items()])
def test_gke_accelerator_memory_and_kind(name, memory, attached):
    acc = gke_accelerator(name)
    assert acc.memory_gib == memory
    assert acc.attached is attached


@pytest.mark.parametrize(("machine", "expected"), ATTACHED_SHAPES.items())
def test_attached_shapes_have_fixed_counts(machine, expected):
    accelerator, count = expected
    assert gke_gpus_for_machine(machine) == expected
    assert gke_accelerator(accelerator).counts_for(machine) == (count,)
    assert validate_gke_accelerator(accelerator, machine, None) == count
    assert validate_gke_accelerator(accelerator, machine, count) == count
    assert is_gke_gpu_machine(machine)


def test_every_attached_shape_in_the_catalog_is_in_the_checked_table():
    listed = {m for acc in GKE_ACCELERATORS.values() if acc.attached for m in acc.machines}
    assert listed == set(ATTACHED_SHAPES)


@pytest.mark.parametrize(("accelerator", "counts"), N1_COUNTS.items())
@pytest.mark.parametrize(
    "machine", ["n1-standard-4", "n1-highmem-8", "n1-highcpu-4", "custom-4-5120"]
)
def test_n1_accelerators_take_their_counts(accelerator, counts, machine):
    acc = gke_accelerator(accelerator)
    assert acc.counts_for(machine) == counts
    for count in counts:
        assert validate_gke_accelerator(accelerator, machine, count) == count


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


@given(
    accelerator=st.sampled_from(sorted(N1_COUNTS)),
    count=st.integers(min_value=-3, max_value=20),
)
def test_n1_counts_property(accelerator, count):
    """On a small N1 machine a count passes exactly when it is one of the documented counts."""
    if count in N1_COUNTS[accelerator]:
        assert validate_gke_accelerator(accelerator, "n1-standard-4", count) == count
    else:
        with pytest.raises(InputError):
            validate_gke_accelerator(accelerator, "n1-standard-4", count)


@given(machine=st.sampled_from(sorted(ATTACHED_SHAPES)), count=st.integers(0, 20))
def test_attached_counts_property(machine, count):
    accelerator, fixed = ATTACHED_SHAPES[machine]
    if count == fixed:
        assert validate_gke_accelerator(accelerator, machine, count) == fixed
    else:
        with pytest.raises(InputError):
            validate_gke_accelerator(accelerator, machine, count)


# ---------------------------------------------------------------------------------------------
# AWS data
# ---------------------------------------------------------------------------------------------

# instance type -> (GPU model, GPUs, GPU memory GiB, arch, k8s.amazonaws.com/accelerator)
T4 = ("T4", 16, "x86_64", "nvidia-tesla-t4")
A10G = ("A10G", 24, "x86_64", "nvidia-a10g")
T4G = ("T4G", 16, "arm64", "nvidia-t4g")
L4 = ("L4", 24, "x86_64", "nvidia-l4")
L40S = ("L40S", 48, "x86_64", "nvidia-l40s")


def _row(spec: tuple[str, int, str, str], gpus: int) -> tuple[str, int, int, str, str]:
    model, memory, arch, label = spec
    return (model, gpus, memory, arch, label)


AWS_TABLE = {
    "g4dn.xlarge": _row(T4, 1),
    "g4dn.2xlarge": _row(T4, 1),
    "g4dn.4xlarge": _row(T4, 1),
    "g4dn.8xlarge": _row(T4, 1),
    "g4dn.16xlarge": _row(T4, 1),
    "g4dn.12xlarge": _row(T4, 4),
    "g4dn.metal": _row(T4, 8),
    **{f"g5.{s}": _row(A10G, 1) for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "g5.12xlarge": _row(A10G, 4),
    "g5.24xlarge": _row(A10G, 4),
    "g5.48xlarge": _row(A10G, 8),
    **{f"g5g.{s}": _row(T4G, 1) for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge")},
    "g5g.16xlarge": _row(T4G, 2),
    "g5g.metal": _row(T4G, 2),
    **{f"g6.{s}": _row(L4, 1) for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "g6.12xlarge": _row(L4, 4),
    "g6.24xlarge": _row(L4, 4),
    "g6.48xlarge": _row(L4, 8),
    **{f"g6e.{s}": _row(L40S, 1) for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge")},
    "g6e.12xlarge": _row(L40S, 4),
    "g6e.24xlarge": _row(L40S, 4),
    "g6e.48xlarge": _row(L40S, 8),
    "p3.2xlarge": ("V100", 1, 16, "x86_64", "nvidia-tesla-v100"),
    "p3.8xlarge": ("V100", 4, 16, "x86_64", "nvidia-tesla-v100"),
    "p3.16xlarge": ("V100", 8, 16, "x86_64", "nvidia-tesla-v100"),
    "p3dn.24xlarge": ("V100", 8, 32, "x86_64", "nvidia-tesla-v100"),
    "p4d.24xlarge": ("A100", 8, 40, "x86_64", "nvidia-a100"),
    "p4de.24xlarge": ("A100 80GB", 8, 80, "x86_64", "nvidia-a100-80gb"),
    "p5.4xlarge": ("H100", 1, 80, "x86_64", "nvidia-h100"),
    "p5.48xlarge": ("H100", 8, 80, "x86_64", "nvidia-h100"),
    "p5e.48xlarge": ("H200", 8, 141, "x86_64", "nvidia-h200"),
    "p5en.48xlarge": ("H200", 8, 141, "x86_64", "nvidia-h200"),
}


def test_aws_catalog_is_exactly_the_checked_table():
    assert set(AWS_GPU_INSTANCES) == set(AWS_TABLE)


@pytest.mark.parametrize(("instance_type", "expected"), AWS_TABLE.items())
def test_aws_instances(instance_type, expected):
    inst = aws_instance(instance_type)
    assert inst.instance_type == instance_type
    assert (inst.gpu_model, inst.gpus, inst.gpu_memory_gib, inst.arch, inst.accelerator_label) == (
        expected
    )
    assert inst.family == aws_instance_family(instance_type) == instance_type.split(".")[0]
    assert label_value_problem(inst.accelerator_label) is None
    assert aws_instance_or_none(instance_type) is inst
    assert is_gpu_instance(instance_type)


def test_seed_001_t4_label():
    # KServe seed 001 selects `k8s.amazonaws.com/accelerator: nvidia-tesla-t4` for its T4 nodes.
    assert aws_instance("g4dn.xlarge").accelerator_label == "nvidia-tesla-t4"


def test_aws_families():
    assert aws_gpu_families() == [
        "g4dn",
        "g5",
        "g5g",
        "g6",
        "g6e",
        "p3",
        "p3dn",
        "p4d",
        "p4de",
        "p5",
        "p5e",
        "p5en",
    ]


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
