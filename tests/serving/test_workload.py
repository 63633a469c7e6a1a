"""Shared container helpers: resources (GPU/CPU/memory -> requests/limits), env lists,
containers, and the effective placement of a workload component."""

from __future__ import annotations

import pytest

from components.model.errors import InputError
from components.model.scheduling import NodeSelectorRequirement, Placement, Taint, Toleration
from components.serving.workload import (
    ContainerArgs,
    container_body,
    container_resources,
    effective_placement,
    env_list,
    resource_warnings,
)


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        ({}, {}),
        ({"gpus": 0}, {}),
        (
            {"gpus": 1},
            {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 1}},
        ),
        (
            {"cpu": "500m", "memory": "2Gi"},
            {
                "requests": {"cpu": "500m", "memory": "2Gi"},
                "limits": {"cpu": "500m", "memory": "2Gi"},
            },
        ),
        (  # integers stay integers (seed 004 writes `cpu: 40`)
            {"cpu": 40},
            {"requests": {"cpu": 40}, "limits": {"cpu": 40}},
        ),
        (
            {"cpu": "2", "cpu_limit": "4", "memory": "1Gi", "memory_limit": "2Gi"},
            {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "4", "memory": "2Gi"}},
        ),
        (  # ephemeral storage: a request only, unless a limit is given
            {"ephemeral_storage": "290Gi"},
            {"requests": {"ephemeral-storage": "290Gi"}},
        ),
        (
            {"gpus": 1, "gpu_limit": 2},
            {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}},
        ),
    ],
)
def test_container_resources(kwargs, expected) -> None:
    assert container_resources(**kwargs) == expected


@pytest.mark.parametrize(
    "kwargs, pieces",
    [
        ({"cpu": 0.5}, ["cpu:", "'500m'"]),
        ({"memory": "4GB"}, ["memory:", "'4GB'"]),
        ({"memory": "-1Gi"}, ["memory:", "negative"]),
        ({"gpus": 1.0}, ["gpus:", "whole number"]),
        ({"gpus": True}, ["gpus:"]),
        ({"gpu_limit": 1}, ["gpuLimit:", "without gpus"]),
        ({"memory": "2Gi", "memory_limit": "1Gi"}, ["memory:", "above its limit"]),
        ({"ephemeral_storage_limit": "1x"}, ["ephemeralStorageLimit:"]),
    ],
)
def test_container_resources_errors(kwargs, pieces) -> None:
    with pytest.raises(InputError) as err:
        container_resources(**kwargs)
    for piece in pieces:
        assert piece in str(err.value)


def test_gpu_request_limit_mismatch_is_warned() -> None:
    assert resource_warnings(container_resources(gpus=1, gpu_limit=2))
    assert resource_warnings(container_resources(gpus=1)) == []


def test_env_list_shapes() -> None:
    assert env_list({"A": "1", "B": "x"}) == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "x"},
    ]
    secret = {"secretKeyRef": {"name": "hf", "key": "token"}}
    assert env_list([{"name": "HF_TOKEN", "valueFrom": secret}]) == [
        {"name": "HF_TOKEN", "valueFrom": secret}
    ]
    assert env_list(None) == []
    # In a mapping too (what the stack config gives): a value from a Secret.
    assert env_list({"HF_TOKEN": {"valueFrom": secret}, "A": "1"}) == [
        {"name": "HF_TOKEN", "valueFrom": secret},
        {"name": "A", "value": "1"},
    ]
    field = {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env_list([{"name": "POD", "valueFrom": field}]) == [{"name": "POD", "valueFrom": field}]


@pytest.mark.parametrize(
    "env, pieces",
    [
        ("A=1", ["neither a mapping nor a list"]),
        ({"1A": "x"}, ["[0]:", "'1A'"]),
        ({"A": True}, ["[0]:", "not a string"]),
        ([{"value": "x"}], ["[0]:", "no name"]),
        ([{"name": "A", "value": "1", "valueFrom": {}}], ["both value and valueFrom"]),
        ([{"name": "A", "valu": "1"}], ["unknown keys ['valu']"]),
        (
            {"HF_TOKEN": {"valueFrom": {"secretKeyRef": {"name": "hf"}}}},
            ["[0].valueFrom.secretKeyRef.key: required key is missing (allowed: the Secret's key)"],
        ),
        (
            [
                {
                    "name": "T",
                    "valueFrom": {"secretKeyRef": {"name": "hf", "key": "k"}, "fieldRef": {}},
                }
            ],
            [
                "[0].valueFrom: valueFrom has 2 sources (secretKeyRef, fieldRef); Kubernetes takes "
                "exactly one (allowed: one of configMapKeyRef, fieldRef, resourceFieldRef, secretKeyRef)"
            ],
        ),
        (
            [{"name": "T", "valueFrom": {"secretRef": {"name": "hf"}}}],
            [
                "[0].valueFrom.secretRef: unknown key 'secretRef' (allowed: configMapKeyRef, "
                "fieldRef, resourceFieldRef, secretKeyRef)"
            ],
        ),
        (
            {"T": {"valueFrom": {"secretKeyRef": {"name": "hf", "key": "a b"}}}},
            ["[0].valueFrom.secretKeyRef.key: 'a b' is not a Secret key"],
        ),
        ({"T": {}}, ["[0]: env T is a mapping without valueFrom"]),
    ],
)
def test_env_list_errors(env, pieces) -> None:
    with pytest.raises(InputError) as err:
        env_list(env)
    for piece in pieces:
        assert piece in str(err.value)


def test_container_body_errors_are_located() -> None:
    with pytest.raises(InputError, match=r"^name:"):
        container_body(ContainerArgs("Main", image="x:1"))
    with pytest.raises(InputError, match=r"^args:"):
        container_body(ContainerArgs("main", image="x:1", args="--flag"))
    with pytest.raises(InputError, match=r"^image:"):
        container_body(ContainerArgs("main", image=" x:1"))
    assert container_body(ContainerArgs("main"), require_image=False) == {"name": "main"}


def test_effective_placement() -> None:
    pool = Placement.for_pool(
        {"pool": "gpu"}, [Taint("pool", "gpu"), Taint("nvidia.com/gpu", "present")]
    )
    gt = NodeSelectorRequirement("cloud.google.com/gke-accelerator-count", "Gt", ["1"])
    p = effective_placement(pool, [gt], omit_gpu_toleration=True, requests_gpus=True)
    assert p is not None
    assert p.tolerations == (Toleration("pool", "Equal", "gpu", "NoSchedule"),)
    assert p.admits(
        {"pool": "gpu", "cloud.google.com/gke-accelerator-count": "2"}, [Taint("pool", "gpu")]
    )
    assert not p.admits({"pool": "gpu", "cloud.google.com/gke-accelerator-count": "1"}, [])
    assert effective_placement(None) is None
    with pytest.raises(InputError, match="placement"):
        effective_placement({"pool": "gpu"})  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"extraExpressions\[0\]"):
        effective_placement(pool, [{"key": "a"}])  # type: ignore[list-item]
