"""NVIDIA's DRA driver install (issue #32) and a GKE DRA pool: the exact inputs they get, and the
whole chain read back by the placement check (the pool's GPUs published, the driver's kubelet
plugin tolerating the pool's taints, a claim allocated)."""

from __future__ import annotations

import json

import pytest

from components.check import check
from components.model.deploy import gke_driver_installer, versions
from components.model.errors import InputError
from components.model.scheduling import Taint
from components.pools.gke import GkeGpuNodePoolArgs, plan_gke_pool
from components.pools.pool import POOL_LABEL
from components.serving.nvidia_dra_driver import (
    GkeGpuDriverInstaller,
    GkeGpuDriverInstallerArgs,
    NvidiaDraDriver,
    NvidiaDraDriverArgs,
)
from tests.conftest import values_of

RELEASE = "kubernetes:helm.sh/v3:Release"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
MANAGER_ANNOTATION = "pulumi.com/patchFieldManager"


def _vendored(image: str) -> dict:
    """The pinned manifest's object as vendored (tests/model/test_gke_driver_installer.py)."""
    return gke_driver_installer.installer_daemonset(image)


def test_the_driver_chart_is_pinned_and_its_kubelet_plugin_tolerates_every_pool_taint(run):
    args = NvidiaDraDriverArgs(
        pool_taints=[Taint("team", "ml", "NoSchedule"), Taint("nvidia.com/gpu", "present")],
        driver_root="/home/kubernetes/bin/nvidia",
    )
    registered = run(lambda: NvidiaDraDriver("dra", args)).one(RELEASE)
    release = registered.inputs
    assert (
        release["chart"] == "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
    )
    assert release["version"] == "0.4.1"
    assert versions.NVIDIA_DRA_DRIVER.version == "0.4.1"
    assert release["namespace"] == "dra-driver-nvidia-gpu"
    assert values_of(registered) == {
        "gpuResourcesEnabledOverride": True,
        "nvidiaDriverRoot": "/home/kubernetes/bin/nvidia",
        "kubeletPlugin": {
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "team", "operator": "Exists", "effect": "NoSchedule"},
            ]
        },
    }


def l4_dra_args(**kw) -> GkeGpuNodePoolArgs:
    return GkeGpuNodePoolArgs(
        cluster="c",
        machine_type="g2-standard-24",
        accelerator="nvidia-l4",
        gpu_count=2,
        dra=True,
        max_nodes=2,
        **kw,
    )


def test_a_gke_dra_pool_turns_gke_driver_and_device_plugin_off():
    plan = plan_gke_pool("l4-dra", l4_dra_args())
    nc = plan.node_pool["nodeConfig"]
    assert nc["labels"] == {
        "gpu-inference.dev/pool": "l4-dra",
        "gke-no-default-nvidia-gpu-device-plugin": "true",
        "nvidia.com/gpu.present": "true",
    }
    assert nc["guestAccelerators"] == [
        {
            "type": "nvidia-l4",
            "count": 2,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "INSTALLATION_DISABLED"},
        }
    ]


def _graph(pool_taints: list[Taint], count: int) -> list[dict]:
    """The pool as registered (camelCase), the driver, a template for `count` GPUs, a pod."""
    plan = plan_gke_pool("l4-dra", l4_dra_args(taints=pool_taints))
    nc = plan.node_pool["nodeConfig"]
    pool = {
        "type": "gcp:container/nodePool:NodePool",
        "name": "l4-dra",
        "inputs": {
            "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 2},
            "nodeConfig": {
                "machineType": nc["machineType"],
                "labels": nc["labels"],
                "taints": [
                    {"key": t["key"], "value": t["value"], "effect": t["effect"]}
                    for t in nc["taints"]
                ],
                "guestAccelerators": [{"type": "nvidia-l4", "count": 2}],
            },
        },
    }
    driver = {
        "type": RELEASE,
        "name": "dra",
        "inputs": {
            "chart": "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
            "values": json.loads(
                json.dumps(
                    {
                        "kubeletPlugin": {
                            "tolerations": [
                                {
                                    "key": "nvidia.com/gpu",
                                    "operator": "Exists",
                                    "effect": "NoSchedule",
                                }
                            ]
                        }
                    }
                )
            ),
        },
    }
    template = {
        "type": "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
        "name": "gpus",
        "inputs": {
            "metadata": {"name": "gpus", "namespace": "apps"},
            "spec": {
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpu",
                                "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count},
                            }
                        ]
                    }
                }
            },
        },
    }
    pod = {
        "containers": [{"name": "main", "resources": {"claims": [{"name": "gpu"}]}}],
        "nodeSelector": {"gpu-inference.dev/pool": "l4-dra"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpus"}],
    }
    deployment = {
        "type": "kubernetes:apps/v1:Deployment",
        "name": "a",
        "inputs": {
            "metadata": {"name": "a", "namespace": "apps"},
            "spec": {"template": {"spec": pod}},
        },
    }
    return [pool, driver, template, deployment]


def test_the_check_reads_the_gke_dra_pool_as_two_published_l4s():
    ok = check(_graph([], 2))
    assert ok.workloads[0].pools == ("l4-dra",) and ok.errors == []
    too_many = check(_graph([], 3))
    assert [f.code for f in too_many.errors] == ["GI050"]
    assert "the nodes publish 2 x NVIDIA L4" in too_many.errors[0].message


def test_a_pool_taint_the_driver_does_not_tolerate_is_gi054():
    report = check(_graph([Taint("team", "ml", "NoSchedule")], 1))
    assert "GI054" in {f.code for f in report.errors}


def test_gke_driver_installer_is_the_pinned_cos_manifest_on_the_given_pools_only(run):
    """The DaemonSet is the vendored object (the pinned manifest's) with one node requirement more, marked as this stack's (its refusal of another's: test_ownership_refusals)."""
    args = GkeGpuDriverInstallerArgs(pool_label=POOL_LABEL, pool_label_values=["t4", "l4"])
    g = run(lambda: GkeGpuDriverInstaller("gpu", args))
    ds = g.one(DAEMONSET)
    assert ds.name == "gpu-daemonset"
    upstream = _vendored("cos")
    assert {k: v for k, v in ds.inputs["metadata"].items() if k != "annotations"} == (
        upstream["metadata"]
    )
    assert ds.inputs["metadata"]["annotations"] == {
        "gpu-inference.dev/pool": "l4,t4",
        MANAGER_ANNOTATION: "gpu-inference/gpu-inference/test",
    }
    pod = ds.inputs["spec"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"] == [
        {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
        {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
        {
            "key": "cloud.google.com/gke-confidential-nodes-instance-type",
            "operator": "DoesNotExist",
        },
        {"key": "gpu-inference.dev/pool", "operator": "In", "values": ["l4", "t4"]},
    ]
    term["matchExpressions"].pop()
    assert ds.inputs["spec"] == upstream["spec"]
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["initContainers"][0]["image"] == "cos-nvidia-installer:fixed"
    assert not ds.retain_on_delete


def test_gke_driver_installer_unnarrowed_and_on_ubuntu_is_upstream_whole(run):
    g = run(lambda: GkeGpuDriverInstaller("gpu", GkeGpuDriverInstallerArgs(image="ubuntu")))
    ds = g.one(DAEMONSET)
    upstream = _vendored("ubuntu")
    assert ds.inputs["spec"] == upstream["spec"]
    assert list(ds.inputs["metadata"]["annotations"]) == [MANAGER_ANNOTATION]
    assert ds.inputs["spec"]["template"]["spec"]["initContainers"][0]["image"] == (
        "gke-nvidia-installer:fixed"
    )


def test_an_adopted_installer_is_not_refused_and_destroy_leaves_it(run):
    g = run(lambda: GkeGpuDriverInstaller("gpu", GkeGpuDriverInstallerArgs(adopt=True)))
    ds = g.one(DAEMONSET)
    assert ds.retain_on_delete and ds.hooks == {}


def test_gke_driver_installer_refuses_an_image_gke_has_no_installer_for(run):
    with pytest.raises(InputError) as e:
        run(lambda: GkeGpuDriverInstaller("gpu", GkeGpuDriverInstallerArgs(image="windows")))
    assert str(e.value) == (
        "args.image: GKE has no NVIDIA driver installer manifest for node image 'windows' "
        "(allowed: cos or ubuntu)"
    )
