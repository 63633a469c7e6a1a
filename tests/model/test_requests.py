"""A pod's effective requests as kube-scheduler computes them (k8s.io/component-helpers v0.36.3
`resource.PodRequests`), and the containers the serving controllers add."""

from __future__ import annotations

import pytest

from components.model.errors import InputError
from components.model.nodes.shapes import Resources
from components.model.serving.requests import (
    QUEUE_PROXY,
    STORAGE_INITIALIZER,
    container_requests,
    pod_requests,
    seldon_builtin_containers,
)

GI = 1024**3
MI = 1024**2


def c(name="c", requests=None, limits=None, restart=None):
    out = {"name": name, "resources": {}}
    if requests:
        out["resources"]["requests"] = requests
    if limits:
        out["resources"]["limits"] = limits
    if restart:
        out["restartPolicy"] = restart
    return out


@pytest.mark.parametrize(
    ("containers", "inits", "overhead", "want"),
    [
        # containers add up; a pod takes one of the node's pods
        (
            [c(requests={"cpu": "500m", "memory": "1Gi"}), c(requests={"cpu": 2})],
            [],
            None,
            Resources(cpu=2500, memory=GI, pods=1),
        ),
        # a limit without a request is the request (API server defaulting)
        (
            [c(limits={"cpu": "4", "nvidia.com/gpu": 2})],
            [],
            None,
            Resources(cpu=4000, gpus=2, pods=1),
        ),
        # the largest init container when it is larger than the containers
        (
            [c(requests={"cpu": "1"})],
            [c(requests={"cpu": "3"}), c(requests={"cpu": "2"})],
            None,
            Resources(cpu=3000, pods=1),
        ),
        # init containers never add up with each other or the containers
        (
            [c(requests={"memory": "8Gi"})],
            [c(requests={"memory": "1Gi"})],
            None,
            Resources(memory=8 * GI, pods=1),
        ),
        # a sidecar (restartPolicy Always) runs beside everything after it, and beside the pod
        (
            [c(requests={"cpu": "1"})],
            [c(requests={"cpu": "500m"}, restart="Always"), c(requests={"cpu": "2"})],
            None,
            Resources(cpu=2500, pods=1),
        ),
        (
            [c(requests={"cpu": "3"})],
            [c(requests={"cpu": "500m"}, restart="Always")],
            None,
            Resources(cpu=3500, pods=1),
        ),
        # an init container before a sidecar does not run beside it
        (
            [c(requests={"cpu": "1"})],
            [c(requests={"cpu": "2"}), c(requests={"cpu": "500m"}, restart="Always")],
            None,
            Resources(cpu=2000, pods=1),
        ),
        # pod overhead (RuntimeClass) on top
        (
            [c(requests={"cpu": "1"})],
            [],
            {"cpu": "250m", "memory": "120Mi"},
            Resources(cpu=1250, memory=120 * MI, pods=1),
        ),
        # ephemeral storage counts like the others; fractions of a millicore round up
        (
            [c(requests={"ephemeral-storage": "290Gi", "cpu": "0.0005"})],
            [],
            None,
            Resources(cpu=1, ephemeral_storage=290 * GI, pods=1),
        ),
    ],
)
def test_pod_requests(containers, inits, overhead, want):
    assert pod_requests(containers, inits, overhead) == want


def test_a_bad_quantity_is_an_input_error():
    with pytest.raises(InputError):
        container_requests(c(requests={"memory": "4GB"}))


def test_what_the_controllers_add():
    assert container_requests(QUEUE_PROXY.as_container()) == Resources(cpu=25)
    assert container_requests(STORAGE_INITIALIZER.as_container()) == Resources(
        cpu=100, memory=100 * MI
    )
    # Seldon's built-in mlserver pod: rclone 50m/128Mi + agent 200m/1Gi + mlserver 100m/1Gi
    assert pod_requests(seldon_builtin_containers("mlserver")) == Resources(
        cpu=350, memory=128 * MI + 2 * GI, pods=1
    )
