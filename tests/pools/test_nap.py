"""AksNapGpuNodePool under Pulumi mocks: the NodePool and AKSNodeClass it emits (valid against the
upstream CRDs when ../shared/crds is there), the VM sizes its requirements admit, its placement,
and the errors for bad arguments."""

from __future__ import annotations

import copy

import pytest

from components.model.errors import InputError
from components.pools.nap import (
    AksNapGpuNodePool,
    AksNapGpuNodePoolArgs,
    validate_nap_pool_args,
)
from components.preview.mockrun import run_program
from tests.conftest import CRDS

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.azure.com/v1beta1:AKSNodeClass"


@pytest.fixture(scope="module")
def world():
    pools: dict[str, AksNapGpuNodePool] = {}

    def program():
        pools["a100"] = AksNapGpuNodePool(
            "a100",
            AksNapGpuNodePoolArgs(
                gpu_names=["A100"], max_gpus=1, capacity_types=["spot", "on-demand"], max_nodes=3
            ),
        )
        pools["t4"] = AksNapGpuNodePool(
            "t4",
            AksNapGpuNodePoolArgs(
                series=["NCas_v3"],
                max_nodes=2,
                max_total_gpus=4,
                image_family="AzureLinux",
                os_disk_size_gb=256,
                max_pods=30,
                gpu_driver="None",
                weight=10,
                labels={"team": "ml"},
            ),
        )

    return pools, run_program(program)


def test_node_pool(world):
    _, g = world
    pool = g.one(NODEPOOL, "a100").inputs
    assert pool["metadata"]["name"] == "a100"
    assert pool["spec"] == {
        "template": {
            "metadata": {"labels": {"gpu-inference.dev/pool": "a100"}},
            "spec": {
                "nodeClassRef": {
                    "group": "karpenter.azure.com",
                    "kind": "AKSNodeClass",
                    "name": "a100",
                },
                "requirements": [
                    {
                        "key": "karpenter.azure.com/sku-gpu-manufacturer",
                        "operator": "In",
                        "values": ["nvidia"],
                    },
                    {"key": "karpenter.azure.com/sku-gpu-count", "operator": "Gt", "values": ["0"]},
                    {"key": "karpenter.azure.com/sku-gpu-count", "operator": "Lt", "values": ["2"]},
                    {
                        "key": "karpenter.azure.com/sku-gpu-name",
                        "operator": "In",
                        "values": ["A100"],
                    },
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    {
                        "key": "karpenter.sh/capacity-type",
                        "operator": "In",
                        "values": ["spot", "on-demand"],
                    },
                ],
                "taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
                "expireAfter": "Never",
            },
        },
        "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
        "limits": {"nodes": "3"},
    }
    assert g.one(NODECLASS, "a100-nodeclass").inputs["spec"] == {
        "osDiskSizeGB": 128,
        "gpu": {"mode": "Driver"},
    }
    assert g.depends_on(g.one(NODEPOOL, "a100"), g.one(NODECLASS, "a100-nodeclass"))


def test_node_class_settings_and_limits(world):
    pools, g = world
    assert g.one(NODECLASS, "t4-nodeclass").inputs["spec"] == {
        "osDiskSizeGB": 256,
        "gpu": {"mode": "None"},
        "imageFamily": "AzureLinux",
        "maxPods": 30,
    }
    spec = g.one(NODEPOOL, "t4").inputs["spec"]
    assert spec["limits"] == {"nodes": "2", "nvidia.com/gpu": "4"}
    assert spec["weight"] == 10
    assert spec["template"]["metadata"]["labels"] == {"gpu-inference.dev/pool": "t4", "team": "ml"}
    assert pools["t4"].builtin_device_plugin


def test_admitted_sizes_and_facts(world):
    pools, _ = world
    # A100 sizes with one GPU: NC24ads_A100_v4 (ND96asr_v4's name names no GPU; it has 8).
    assert pools["a100"].vm_sizes == ["Standard_NC24ads_A100_v4"]
    assert (pools["a100"].gpus_per_node, pools["a100"].facts.gpu_model) == (1, "A100")
    assert pools["t4"].vm_sizes == [
        "Standard_NC4as_T4_v3",
        "Standard_NC8as_T4_v3",
        "Standard_NC16as_T4_v3",
        "Standard_NC64as_T4_v3",
    ]
    assert pools["t4"].gpus_per_node == 4
    labels = pools["t4"].labels
    assert labels["karpenter.sh/capacity-type"] == "on-demand"
    assert labels["kubernetes.azure.com/scalesetpriority"] == "regular"
    assert labels["kubernetes.azure.com/os-sku"] == "AzureLinux"


def test_placement(world):
    pools, _ = world
    sku = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    # A pool that admits spot tolerates AKS's spot taint, which its nodes may carry (the spot
    # e2e of karpenter-provider-azure v1.14.2 tolerates it); an on-demand one does not.
    spot = {
        "key": "kubernetes.azure.com/scalesetpriority",
        "operator": "Equal",
        "value": "spot",
        "effect": "NoSchedule",
    }
    assert pools["a100"].placement.to_pod_spec() == {
        "nodeSelector": {"gpu-inference.dev/pool": "a100"},
        "tolerations": [sku, spot],
    }
    assert pools["t4"].placement.to_pod_spec()["tolerations"] == [sku]


@pytest.mark.skipif(not CRDS.exists(), reason="../shared/crds is absent")
def test_emitted_crs_validate_against_the_crds(world):
    from tests.crdschema import validate_cr

    _, g = world
    for typ in (NODEPOOL, NODECLASS):
        for cr in g.of_type(typ):
            validate_cr(cr.inputs)
    bad = copy.deepcopy(g.one(NODECLASS, "t4-nodeclass").inputs)
    bad["spec"]["gpu"]["mode"] = "Install"
    with pytest.raises(AssertionError, match="mode"):
        validate_cr(bad)


@pytest.mark.parametrize(
    "kw,path,problem",
    [
        (
            {"gpu_names": ["A100"], "max_gpus": 1, "series": ["NCads_v5"]},
            "args",
            "the requirements",
        ),
        (
            {"capacity_types": ["reserved"]},
            "args.capacity_types[0]",
            "'reserved' is not a valid value",
        ),
        (
            {"vm_sizes": ["Standard_NC6s_v3"]},
            "args.vm_sizes[0]",
            "Standard_NC6s_v3 has NVIDIA GPUs",
        ),
        ({"min_gpus": 4, "max_gpus": 2}, "args.max_gpus", "max_gpus 2 is below min_gpus 4"),
        (
            {"labels": {"agentpool": "x"}},
            "args.labels.agentpool",
            "label 'agentpool' is one the NodePool CRD",
        ),
        (
            {"labels": {"kubernetes.azure.com/foo": "x"}},
            "args.labels.kubernetes.azure.com/foo",
            "label 'kubernetes.azure.com/foo' is one the NodePool CRD",
        ),
        (
            {"consolidate_after": "soon"},
            "args.consolidate_after",
            "consolidate_after 'soon' is not a Karpenter duration",
        ),
        (
            {"image_family": "Windows"},
            "args.image_family",
            "'Windows' is not a valid value",
        ),
        ({"os_disk_size_gb": 10}, "args.os_disk_size_gb", "10 is out of range"),
        ({"weight": 101}, "args.weight", "101 is out of range"),
        ({"max_pods": 300}, "args.max_pods", "300 is out of range"),
        ({"gpu_driver": "Skip"}, "args.gpu_driver", "'Skip' is not a valid value"),
    ],
)
def test_bad_arguments(kw, path, problem):
    with pytest.raises(InputError) as e:
        validate_nap_pool_args("p", AksNapGpuNodePoolArgs(**{"gpu_names": ["H100"], **kw}))
    assert e.value.path == path
    assert e.value.problem.startswith(problem)
