"""An interrupted `pulumi up` converges, drift is put right, and `destroy` leaves the cluster as
it was found: the on-prem stack through the real engine on the rig (see test_onprem.py).

`up` is killed (SIGKILL, the whole process group: the CLI, the language host, the provider) at
several points: while Helm installs a release, while the InferenceServices are being created, and
once the CLI alone while a release installs (its language host and provider outlive it, as they
do when a terminal closes). Each time the next `up` must converge with no hand deletion: every
object once in the cluster and in the state, and `preview --expect-no-changes` clean.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rig
from stack import write_project
from test_onprem import (
    NODES,
    SITE_TAINT,
    STACK,
    namespaces,
    node_whole,
    onprem_config,
    onprem_control_plane,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def cluster(pulumi_install: rig.PulumiInstall) -> Iterator[rig.ControlPlane]:
    with onprem_control_plane() as cp:
        yield cp


RELEASES = ("nvidia-device-plugin", "seldon-core-v2-crds", "seldon-core-v2-setup")
ISVC = "/apis/serving.kserve.io/v1beta1/inferenceservices"
CLEARED = "cleared the records an interrupted run left"
"""What the release's error hook says when it clears a half-made release (kube/provider.py)."""


def helm_records(cp: rig.ControlPlane) -> list[dict[str, Any]]:
    found = cp.get("/api/v1/secrets?labelSelector=owner%3Dhelm")["items"]
    return [s["metadata"] for s in found]


def pending_release(cp: rig.ControlPlane) -> bool:
    return any(m["labels"].get("status", "").startswith("pending") for m in helm_records(cp))


def isvc_exists(cp: rig.ControlPlane) -> bool:
    return bool(cp.get(ISVC)["items"])


def leftovers(home: Path) -> list[int]:
    """Processes of this test's Pulumi (its private PULUMI_HOME in their environment)."""
    mark = f"PULUMI_HOME={home}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if mark in (d / "environ").read_bytes().split(b"\0"):
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


def up_killed_when(
    pulumi: rig.Pulumi,
    project: Path,
    cp: rig.ControlPlane,
    moment: Callable[[rig.ControlPlane], bool],
    whole_group: bool = True,
    timeout: float = 600,
) -> bool:
    """Start `pulumi up` and SIGKILL it once `moment(cp)` holds (the process group, or the CLI
    only); True if it was killed, False if it finished first."""
    proc = subprocess.Popen(
        [str(pulumi.install.cli), "up", "--yes", "--skip-preview", "--non-interactive"],
        cwd=project,
        env=pulumi.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if moment(cp):
                if whole_group:
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.send_signal(signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.05)
        return False
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def settle_orphans(pulumi: rig.Pulumi, grace: float = 60) -> int:
    """Let the language host and provider a killed CLI left finish what they were doing, then
    stop them (README, Recovery); how many there were."""
    orphans = leftovers(pulumi.home)
    deadline = time.monotonic() + grace
    while orphans and time.monotonic() < deadline:
        time.sleep(1)
        orphans = leftovers(pulumi.home)
    for pid in orphans:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return len(orphans)


def repair_empty_attrs(pulumi: rig.Pulumi) -> list[str]:
    """The README's recovery for a local backend the kill left with an empty `.attrs` file
    (gocloud.dev's fileblob metadata, written beside each checkpoint): delete it."""
    empty = [p for p in pulumi.backend.rglob("*.attrs") if p.stat().st_size == 0]
    for p in empty:
        p.unlink()
    return [p.name for p in empty]


def recover(pulumi: rig.Pulumi, project: Path) -> list[str]:
    """The README's recovery steps after a killed run (Pulumi commands only: no object is
    touched by hand), and what each found: empty `.attrs` files, the killed run's lock
    (`pulumi cancel`), its pending operations (`pulumi refresh --clear-pending-creates`: the
    objects they made are adopted by the next `up`)."""
    done = [f"empty {name} removed" for name in repair_empty_attrs(pulumi)]
    locks = list(pulumi.backend.rglob(".pulumi/locks/**/*.json"))
    if locks:
        pulumi.run("cancel", "--yes", cwd=project)
        done.append(f"{len(locks)} lock(s) of the killed run removed with `pulumi cancel`")
    pending = state(pulumi, project).get("pending_operations") or []
    if pending:
        pulumi.run("refresh", "--yes", "--skip-preview", "--clear-pending-creates", cwd=project)
        kinds = Counter(op["type"] for op in pending)
        done.append(f"pending operations {dict(kinds)} cleared with `pulumi refresh`")
    return done


def state(pulumi: rig.Pulumi, project: Path) -> dict[str, Any]:
    out = pulumi.run("stack", "export", cwd=project).stdout
    deployment: dict[str, Any] = json.loads(out)["deployment"]
    return deployment


def converged(pulumi: rig.Pulumi, project: Path, cp: rig.ControlPlane) -> None:
    """Every object once in the state and the cluster, nothing pending, no change to make."""
    deployment = state(pulumi, project)
    assert not deployment.get("pending_operations"), deployment.get("pending_operations")
    urns = Counter(r["urn"] for r in deployment["resources"])
    assert [u for u, n in urns.items() if n > 1] == []
    in_state = {
        r["outputs"].get("metadata", {}).get("name")
        for r in deployment["resources"]
        if r["type"] == "kubernetes:serving.kserve.io/v1beta1:InferenceService"
    }
    live = {i["metadata"]["name"] for i in cp.get(ISVC)["items"]}
    assert live == in_state and live
    releases = Counter()
    for meta in helm_records(cp):
        if meta["labels"].get("status") == "deployed":
            releases[meta["labels"]["name"]] += 1
        else:
            assert meta["labels"].get("status") == "superseded", meta
    assert all(releases[r] == 1 for r in RELEASES), releases
    state_releases = [
        r["outputs"]["name"]
        for r in deployment["resources"]
        if r["type"] == "kubernetes:helm.sh/v3:Release"
    ]
    assert sorted(state_releases) == sorted(releases)
    pulumi.run("preview", "--expect-no-changes", cwd=project, timeout=600)


def test_an_interrupted_up_converges_drift_is_undone_and_destroy_leaves_the_cluster_as_found(
    cluster: rig.ControlPlane, tmp_path: Path
) -> None:
    cp = cluster
    project = write_project(tmp_path / "project", STACK, onprem_config(cp.kubeconfig))
    whole_before = {n: node_whole(cp.get(f"/api/v1/nodes/{n}")) for n in NODES}
    namespaces_before = namespaces(cp)
    pulumi = rig.Pulumi(tmp_path, kubeconfig=cp.kubeconfig)
    pulumi.run("stack", "init", STACK, cwd=project)

    log: list[str] = []
    for point, moment, group in (
        ("a Helm release installing", pending_release, True),
        ("the InferenceServices being created", isvc_exists, True),
    ):
        killed = up_killed_when(pulumi, project, cp, moment, whole_group=group)
        log.append(f"{point}: {'killed' if killed else 'finished first'}")
        log += [f"  {step}" for step in recover(pulumi, project)]
        up = pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=1200)
        cleared = [line.strip() for line in up.stdout.splitlines() if CLEARED in line]
        log += [f"  {line}" for line in cleared]
        if killed and moment is pending_release:
            # Killed while Helm installed: Helm refuses the name until the hook clears it.
            assert cleared, up.stdout[-3000:]
        converged(pulumi, project, cp)
        # Start again from nothing for the next kill point.
        pulumi.run("destroy", "--yes", "--skip-preview", "--run-program", cwd=project, timeout=1200)

    # The CLI alone killed while a release installs: its provider outlives it.
    killed = up_killed_when(pulumi, project, cp, pending_release, whole_group=False)
    orphans = settle_orphans(pulumi)
    log.append(f"CLI only: {'killed' if killed else 'finished first'}, {orphans} left running")
    log += [f"  {step}" for step in recover(pulumi, project)]
    pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=1200)
    converged(pulumi, project, cp)
    print("\n".join(log))

    # Drift: a pool taint edited by hand shows in a refreshing preview and `up --refresh` puts
    # it back, keeping the site's own taint; a deleted InferenceService is made again.
    node = cp.get("/api/v1/nodes/gpu-node-01")
    taints = node["spec"]["taints"]
    ours = next(i for i, t in enumerate(taints) if t["key"] != SITE_TAINT["key"])
    edited = [dict(t) for t in taints]
    edited[ours]["value"] = "edited-by-hand"
    cp.request(
        "PATCH",
        "/api/v1/nodes/gpu-node-01?fieldManager=kubectl-edit",
        [{"op": "replace", "path": "/spec/taints", "value": edited}],
        content_type="application/json-patch+json",
    )
    drifted = pulumi.run("preview", "--refresh", "--expect-no-changes", cwd=project, check=False)
    assert drifted.returncode != 0, "the edited taint must show as a change"
    (isvc,) = [i["metadata"] for i in cp.get(ISVC)["items"]][:1]
    cp.request(
        "DELETE",
        f"/apis/serving.kserve.io/v1beta1/namespaces/{isvc['namespace']}/"
        f"inferenceservices/{isvc['name']}",
    )
    pulumi.run("up", "--yes", "--skip-preview", "--refresh", cwd=project, timeout=1200)
    assert cp.get("/api/v1/nodes/gpu-node-01")["spec"]["taints"] == taints
    assert cp.get(
        f"/apis/serving.kserve.io/v1beta1/namespaces/{isvc['namespace']}/inferenceservices/"
        f"{isvc['name']}"
    )
    converged(pulumi, project, cp)

    pulumi.run("destroy", "--yes", "--skip-preview", "--run-program", cwd=project, timeout=1200)
    assert {n: node_whole(cp.get(f"/api/v1/nodes/{n}")) for n in NODES} == whole_before
    assert namespaces(cp) == namespaces_before
    assert helm_records(cp) == []
