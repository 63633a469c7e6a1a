"""Every integer input has the range its API takes, declared once with its Args field and checked
by one mechanism on both entry paths: the stack config (`derive.config_type`) and a component's
Python args (`inputs.check_declared`), with the same words."""

from __future__ import annotations

import pytest
from config_bases import DEL, mutated

from components.model.errors import InputError
from components.model.inputs import INT32_MAX, check_declared, violation
from components.platform.load import load_spec
from components.pools.compute_class import GkeGpuComputeClassArgs
from components.pools.gke import GkeGpuNodePool, GkeGpuNodePoolArgs
from components.serving.inference_service import InferenceServiceArgs, PredictorArgs
from components.serving.seldon import SeldonServerArgs, server_body

NS = "gpu-inference"

# fmt: off
STACK_CASES = [
    ("gke", {"pools[1].maxNodes": 10**12}, "pools[1].maxNodes", "a number <= 15000"),
    ("gke", {"pools[1].maxNodes": INT32_MAX}, "pools[1].maxNodes", "a number <= 15000"),
    ("eks", {"pools[0].maxNodes": INT32_MAX}, "pools[0].maxNodes", "a number <= 100000"),
    ("eks", {"pools[0].diskSizeGb": 2**31}, "pools[0].diskSizeGb", "a number <= 16384"),
    ("gke", {"pools[1].diskSizeGb": INT32_MAX}, "pools[1].diskSizeGb", "a number <= 65536"),
    ("gke", {"inferenceServices[0].predictor.maxReplicas": INT32_MAX}, "inferenceServices[0].predictor.maxReplicas", "a number <= 1000000"),
    ("gke", {"inferenceServices[0].predictor.minReplicas": 10**12}, "inferenceServices[0].predictor.minReplicas", "a number <= 1000000"),
    ("gke", {"seldon.servers[0].replicas": INT32_MAX}, "seldon.servers[0].replicas", "a number <= 1000000"),
    ("existing", {"pools[0].gpusPerNode": INT32_MAX}, "pools[0].gpusPerNode", "a number <= 64"),
    ("gke", {"inferenceServices[0].predictor.modelSizeGb": 10**12}, "inferenceServices[0].predictor.modelSizeGb", "a number <= 1000000"),
    ("llm", {"llmInferenceServices[0].modelSizeGb": INT32_MAX}, "llmInferenceServices[0].modelSizeGb", "a number <= 1000000"),
    ("llm", {"llmInferenceServices[1].model": DEL, "llmInferenceServices[1].modelParameters": 10**16}, "llmInferenceServices[1].modelParameters", "a number <= 1000000000000000"),
]
# fmt: on


@pytest.mark.parametrize(("base", "changes", "path", "allowed"), STACK_CASES)
def test_a_number_past_its_range_is_refused_at_its_key(base, changes, path, allowed):
    with pytest.raises(InputError) as caught:
        load_spec(mutated(base, changes))
    value = list(changes.values())[-1]
    assert str(caught.value) == f"{NS}:{path}: {value} is out of range (allowed: {allowed})"


def test_a_count_that_is_no_int32_declares_its_own_bound():
    """A model's parameters pass the int32 maximum (Qwen2.5 72B has 72.7e9): its declared bound
    holds, not the int32 one every other count gets."""
    spec = load_spec(
        mutated(
            "llm",
            {
                "llmInferenceServices[1].model": DEL,
                "llmInferenceServices[1].modelParameters": 72_700_000_000,
                "llmInferenceServices[1].modelDtype": "bf16",
            },
        )
    )
    assert spec.llm_inference_services[1].model_parameters == 72_700_000_000


def test_the_python_args_are_refused_with_the_same_words():
    with pytest.raises(InputError) as caught:
        check_declared(
            GkeGpuNodePoolArgs(cluster="dev", machine_type="g2-standard-8", max_nodes=10**12)
        )
    assert str(caught.value) == (
        "args.max_nodes: 1000000000000 is out of range (allowed: a number <= 15000)"
    )


def test_a_compute_class_boot_disk_is_at_most_the_largest_persistent_disk():
    with pytest.raises(InputError) as caught:
        check_declared(
            GkeGpuComputeClassArgs(
                accelerator="nvidia-l4", machine_type="g2-standard-8", boot_disk_size_gb=INT32_MAX
            )
        )
    assert str(caught.value) == (
        "args.boot_disk_size_gb: 2147483647 is out of range (allowed: a number <= 65536)"
    )


def test_a_component_refuses_it_before_registering_anything(run):
    def program():
        GkeGpuNodePool(
            "l4", GkeGpuNodePoolArgs(cluster="dev", machine_type="g2-standard-8", max_nodes=2**31)
        )

    with pytest.raises(InputError) as caught:
        run(program)
    assert str(caught.value) == (
        "GkeGpuNodePool('l4').args.max_nodes: 2147483648 is out of range "
        "(allowed: a number <= 15000)"
    )


def test_nested_args_are_named_by_their_keys():
    args = InferenceServiceArgs(
        name="m", predictor=PredictorArgs(max_replicas=INT32_MAX, storage_uri="gs://b/m")
    )
    found = violation(args, "", keys=True)
    assert found is not None
    assert (found[0], str(found[1])) == (
        "predictor.maxReplicas",
        "2147483647 is out of range (allowed: a number <= 1000000)",
    )


def test_a_seldon_server_body_refuses_a_negative_count():
    with pytest.raises(InputError) as caught:
        server_body("s", SeldonServerArgs(server_config="mlserver", replicas=-1))
    assert str(caught.value) == "replicas: -1 is out of range (allowed: a number >= 0)"
