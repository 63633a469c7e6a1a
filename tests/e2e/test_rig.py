"""Smoke tests proving the rig is real: the real scheduler and admission (control plane tier),
the real Pulumi engine as installed on this machine (Pulumi half)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import rig

pytestmark = pytest.mark.e2e

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.mark.tier("control plane")
@pytest.mark.parametrize("ert", [True, False], ids=["ert-on", "ert-off"])
def test_gpu_pod_without_toleration_needs_extended_resource_toleration(
    control_plane_bins: Path, ert: bool
) -> None:
    with rig.ControlPlane(extended_resource_toleration=ert) as cp:
        print(f"control plane up in {cp.startup_seconds:.1f}s (ERT {'on' if ert else 'off'})")
        cp.create_node("gpu-0", labels={"pool": "gpu"}, taints=[GPU_TAINT], gpus=1)
        cp.create_pod("wants-gpu", gpus=1)
        cp.create_pod("no-gpu", node_selector={"pool": "gpu"})

        state, detail = cp.wait_pod_scheduled("wants-gpu")
        pod = cp.get("/api/v1/namespaces/default/pods/wants-gpu")
        added = [t for t in pod["spec"].get("tolerations", []) if t.get("key") == "nvidia.com/gpu"]
        if ert:
            assert (state, detail) == ("bound", "gpu-0")
            assert added == [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
            ]
        else:
            assert state == "unschedulable", (state, detail)
            assert "untolerated taint" in detail, detail
            assert added == []

        # A pod that requests no GPU gets no toleration either way and stays out.
        state, detail = cp.wait_pod_scheduled("no-gpu")
        assert state == "unschedulable", (state, detail)

        # kwok really runs the bound pod.
        if ert:
            deadline = time.monotonic() + 30
            while (
                cp.get("/api/v1/namespaces/default/pods/wants-gpu")["status"].get("phase")
                != "Running"
            ):
                assert time.monotonic() < deadline, "kwok did not mark the pod Running"
                time.sleep(0.2)


PROGRAM = """\
import pulumi
import pulumi_kubernetes as k8s

ns = k8s.core.v1.Namespace("ns", metadata={"name": "rig-smoke"})
cm = k8s.core.v1.ConfigMap(
    "cm",
    metadata={"name": "rig-settings", "namespace": ns.metadata.name},
    data={"answer": "42"},
)
pulumi.export("configmap", cm.metadata.name)
"""


@pytest.mark.tier("Pulumi half")
def test_pulumi_up_preview_destroy(pulumi_install: rig.PulumiInstall, tmp_path: Path) -> None:
    print(f"pulumi {pulumi_install.version} at {pulumi_install.cli}")
    with rig.ControlPlane() as cp:
        project = rig.Pulumi.write_project(tmp_path / "project", "rig-smoke", PROGRAM)
        pulumi = rig.Pulumi(tmp_path, kubeconfig=cp.kubeconfig, install=pulumi_install)
        pulumi.run("stack", "init", "dev", cwd=project)

        up = pulumi.run("up", "--yes", "--skip-preview", cwd=project)
        assert "3 created" in up.stdout or "+ 3 created" in up.stdout, up.stdout
        cm = cp.get("/api/v1/namespaces/rig-smoke/configmaps/rig-settings")
        assert cm is not None and cm["data"] == {"answer": "42"}
        assert cp.get("/api/v1/namespaces/rig-smoke")["status"]["phase"] == "Active"
        # The kubernetes provider that ran is the cached one at the SDK's version.
        state = json.loads(pulumi.run("stack", "export", cwd=project).stdout)
        providers = [
            r
            for r in state["deployment"]["resources"]
            if r["type"] == "pulumi:providers:kubernetes"
        ]
        assert [p["inputs"].get("version") for p in providers] == [pulumi_install.kubernetes]

        pulumi.run("preview", "--expect-no-changes", cwd=project)

        pulumi.run("destroy", "--yes", "--skip-preview", cwd=project)
        assert cp.get("/api/v1/namespaces/rig-smoke/configmaps/rig-settings") is None
        assert cp.get("/api/v1/namespaces/rig-smoke") is None
