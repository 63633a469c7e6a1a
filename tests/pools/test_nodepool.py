"""The NodePool helpers the two Karpenter pool kinds share (`components.pools.nodepool`), table by
table, with each cloud's data: EKS (`karpenter`) and AKS node auto-provisioning (`nap`)."""

import pytest

from components.model.autoscalers import karpenter as aws
from components.model.autoscalers import karpenter_azure as azure
from components.model.errors import InputError
from components.pools.karpenter import GPU_KEYS as AWS_KEYS
from components.pools.nap import GPU_KEYS as AZURE_KEYS
from components.pools.nodepool import (
    admits_none,
    capacity_order,
    check_duration,
    gpu_range,
    gpu_requirements,
    listed_in,
    nodepool,
    nodepool_limits,
    offer_summary,
    refuse_restricted_labels,
)


@pytest.mark.parametrize(
    "allowed, given, expected",
    [
        (aws.CAPACITY_TYPES, None, ["on-demand"]),
        (aws.CAPACITY_TYPES, ["reserved", "spot"], ["reserved", "spot"]),
        (azure.CAPACITY_TYPES, ["spot", "on-demand"], None),
    ],
)
def test_capacity_order_keeps_karpenter_order(allowed, given, expected):
    assert capacity_order(given, allowed) == (expected or given)


@pytest.mark.parametrize(
    "allowed, given, message",
    [
        (
            aws.CAPACITY_TYPES,
            ["on-demand", "reserved"],
            "within one NodePool it always tries reserved, then spot, then on-demand",
        ),
        (
            azure.CAPACITY_TYPES,
            ["on-demand", "spot"],
            "within one NodePool it always tries spot, then on-demand",
        ),
        (aws.CAPACITY_TYPES, ["spot", "spot"], "args.capacity_types[1]: 'spot' is listed twice"),
    ],
)
def test_capacity_order_refusals(allowed, given, message):
    with pytest.raises(InputError) as e:
        capacity_order(given, allowed)
    assert message in str(e.value)


@pytest.mark.parametrize(
    "keys, low, high, names, families, types, expected",
    [
        (
            AWS_KEYS,
            1,
            None,
            None,
            None,
            None,
            [
                {"key": aws.GPU_MANUFACTURER, "operator": "In", "values": ["nvidia"]},
                {"key": aws.GPU_COUNT, "operator": "Gt", "values": ["0"]},
            ],
        ),
        (
            AZURE_KEYS,
            2,
            4,
            ["A100"],
            ["NCads_v4"],
            ["Standard_NC48ads_A100_v4"],
            [
                {"key": azure.SKU_GPU_MANUFACTURER, "operator": "In", "values": ["nvidia"]},
                {"key": azure.SKU_GPU_COUNT, "operator": "Gt", "values": ["1"]},
                {"key": azure.SKU_GPU_COUNT, "operator": "Lt", "values": ["5"]},
                {"key": azure.SKU_GPU_NAME, "operator": "In", "values": ["A100"]},
                {"key": azure.SKU_SERIES, "operator": "In", "values": ["NCads_v4"]},
                {"key": azure.SKU_NAME, "operator": "In", "values": ["Standard_NC48ads_A100_v4"]},
            ],
        ),
    ],
)
def test_gpu_requirements(keys, low, high, names, families, types, expected):
    assert gpu_requirements(keys, low, high, names, families, types) == expected


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: listed_in(["l4", "x1"], "args.gpu_names", "names", ("l4",), "GPU {} unknown"),
            "args.gpu_names[1]: GPU 'x1' unknown",
        ),
        (
            lambda: listed_in(["l4", "l4"], "args.gpu_names", "names", ("l4",), "GPU {} unknown"),
            "args.gpu_names[1]: 'l4' is listed twice",
        ),
        (lambda: gpu_range(4, 2), "args.max_gpus: max_gpus 2 is below min_gpus 4"),
        (
            lambda: check_duration(None, "consolidate_after", "5m, or Never", True),
            "args.consolidate_after: consolidate_after None is not a Karpenter duration",
        ),
        (
            lambda: check_duration("5 min", "expire_after", "720h, or Never"),
            "args.expire_after: expire_after '5 min' is not a Karpenter duration",
        ),
        (
            lambda: refuse_restricted_labels(
                {"team": "a", "x.karpenter.sh/y": "1"}, ("karpenter.sh",), (), "bad {}", "ok"
            ),
            "args.labels.x.karpenter.sh/y: bad 'x.karpenter.sh/y'",
        ),
        (
            lambda: refuse_restricted_labels({"accelerator": "a"}, (), ("accelerator",), "{}", ""),
            "args.labels.accelerator: 'accelerator'",
        ),
    ],
)
def test_refusals(call, message):
    with pytest.raises(InputError) as e:
        call()
    assert str(e.value).startswith(message)


@pytest.mark.parametrize(
    "value, required",
    [(None, False), ("Never", True), ("1h30m", True), ("720h", False)],
)
def test_durations_taken(value, required):
    check_duration(value, "expire_after", "720h", required)


def test_admits_none_names_what_was_asked_and_what_is_offered():
    shape = gpu_requirements(AWS_KEYS, 1, None, ["h200"], None, None)
    offers = [("h200", 8, "p5en"), ("l4", 1, "g6"), ("l4", 4, "g6"), ("l4", 8, "g6")]
    e = admits_none(shape, "GPU instance type", "catalog instance type", "x")
    assert "the requirements (" + aws.GPU_COUNT + " Gt 0; " in str(e)
    assert "admit no GPU instance type in the catalog" in str(e)
    assert offer_summary(offers, None) == "h200: 8 GPUs (p5en); l4: 1, 4, 8 GPUs (g6)"
    assert offer_summary(offers, ["l4"]) == "l4: 1, 4, 8 GPUs (g6)"


def test_nodepool_shape():
    assert nodepool(
        "gpu",
        {"group": "g", "kind": "K", "name": "gpu"},
        [{"key": "k", "operator": "Exists"}],
        [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
        {"team": "a"},
        consolidate_after="5m",
        expire_after=None,
        limits=nodepool_limits(2, 4, 3),
        weight=10,
    ) == {
        "metadata": {"name": "gpu"},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": "a"}},
                "spec": {
                    "nodeClassRef": {"group": "g", "kind": "K", "name": "gpu"},
                    "requirements": [{"key": "k", "operator": "Exists"}],
                    "taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
                },
            },
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
            "limits": {"nodes": "2", "nvidia.com/gpu": "12"},
            "weight": 10,
        },
    }
