"""An interrupted `pulumi up` is recovered by `gpu-inference recover`, drift is put right, and
`destroy` leaves the cluster as it was found: the on-prem stack through the real engine on the rig
(see test_onprem.py).

`up` is killed at several points the way a lost machine kills it: the CLI and every process of
its run at once (the language host, the program and each provider: Pulumi starts its plugins in
process groups of their own, so a process-group kill of the CLI would miss them; they are found
by pid from /proc's parentage just before the kill, and frozen first so that none is started
meanwhile). Once while Helm installs a release (the dead provider leaves it `pending-install`),
once while the InferenceServices are being created, and once the CLI alone while a release
installs, as when a terminal closes or a CI job is cancelled: its plugins keep running, and
`recover` must stop them. Each time `gpu-inference recover STACK --yes` clears what was left,
`pulumi up` finishes, and `gpu-inference recover STACK` says the stack converged. A second test
runs two stacks of one project from one directory and shows that recovering one never touches
the other's processes or lock. Every process a test caused is gone when it ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import rig
from stack import write_project, write_stack_config
from test_onprem import (
    NODES,
    SITE_TAINT,
    STACK,
    namespaces,
    node_whole,
    onprem_config,
    onprem_control_plane,
)

pytestmark = [pytest.mark.e2e, pytest.mark.tier("Pulumi half")]


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


def pending_release(cp: rig.ControlPlane) -> Callable[[rig.ControlPlane], bool]:
    """A moment: Helm has a release record pending that was not there when this was called (a
    record an earlier kill left does not count)."""

    def pending() -> set[str]:
        return {
            m["uid"]
            for m in helm_records(cp)
            if m["labels"].get("status", "").startswith("pending")
        }

    before = pending()
    return lambda cp: bool(pending() - before)


def isvc_exists(cp: rig.ControlPlane) -> Callable[[rig.ControlPlane], bool]:
    """A moment: an InferenceService exists."""
    return lambda cp: bool(cp.get(ISVC)["items"])


# -- processes, by pid and start time (a pid alone may be taken again) -------------------------


def stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time in clock ticks, state) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), int(fields[19]), fields[0]


def alive(pid: int, start: int) -> bool:
    s = stat(pid)
    return s is not None and s[1] == start and s[2] not in ("Z", "X")


def tree(root: int) -> dict[int, int]:
    """The process `root` and its descendants (/proc parentage): pid -> start time."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and (s := stat(int(d.name))) and s[2] not in ("Z", "X"):
            children.setdefault(s[0], []).append(int(d.name))
            starts[int(d.name)] = s[1]
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in starts and pid not in out:
            out[pid] = starts[pid]
            todo += children.get(pid, [])
    return out


def kill_run(root: int) -> dict[int, int]:
    """Kill the process `root` and every descendant at once, as a lost machine does: freeze them
    (SIGSTOP, until no new one appears), then SIGKILL each by pid. The processes killed."""
    frozen: dict[int, int] = {}
    while True:
        new = {p: s for p, s in tree(root).items() if p not in frozen}
        if not new:
            break
        for pid in new:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        frozen.update(new)
    for pid, start in frozen.items():
        if alive(pid, start):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10  # SIGKILL is delivered, not awaited
    while any(alive(p, s) for p, s in frozen.items()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return frozen


def is_provider(pid: int) -> bool:
    """Whether the process is a kubernetes resource plugin (the test looks; `recover` never
    goes by names)."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return False
    return argv0.endswith(b"pulumi-resource-kubernetes")


def leftovers(home: Path) -> list[int]:
    """Processes of this test's Pulumi (its private PULUMI_HOME in their environment)."""
    mark = f"PULUMI_HOME={home}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if mark in (d / "environ").read_bytes().split(b"\0"):
                s = stat(int(d.name))
                if s and s[2] not in ("Z", "X"):
                    pids.append(int(d.name))
        except OSError:
            continue
    return pids


class Caused:
    """Every process of every run a test started (pid -> start time), to prove that none is left
    when it ends, and to stop any that is, by pid."""

    def __init__(self, homes: list[Path]) -> None:
        self.seen: dict[int, int] = {}
        self.homes = homes

    def remaining(self) -> list[int]:
        ours = [p for p, s in self.seen.items() if alive(p, s)]
        return sorted(set(ours) | {p for h in self.homes for p in leftovers(h)})

    def stop_all(self) -> None:
        for pid in self.remaining():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def caused(*pulumis: rig.Pulumi) -> Iterator[Caused]:
    c = Caused([p.home for p in pulumis])
    try:
        yield c
        # Normal runs stop their plugins as they end; give the last ones a moment.
        deadline = time.monotonic() + 30
        while c.remaining() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert c.remaining() == [], "processes the test caused are still running"
    finally:
        c.stop_all()


def up_interrupted(
    pulumi: rig.Pulumi,
    project: Path,
    stack: str,
    cp: rig.ControlPlane,
    moment: Callable[[rig.ControlPlane], Callable[[rig.ControlPlane], bool]],
    seen: Caused,
    whole_run: bool = True,
    timeout: float = 900,
) -> dict[int, int]:
    """Start `pulumi up -s stack` and, once the moment `moment(cp)` makes holds, kill the whole
    run (or the CLI alone); the processes of the run still running afterwards (pid -> start
    time). Fails if the run finished first."""
    now = moment(cp)
    out = project.parent / f"up-{stack}-{time.monotonic_ns()}.log"
    with out.open("wb") as log:  # (the child keeps its own copy of the descriptor)
        proc = subprocess.Popen(
            [
                str(pulumi.install.cli),
                "up",
                "--yes",
                "--skip-preview",
                "--non-interactive",
                "-s",
                stack,
            ],
            cwd=project,
            env=pulumi.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            seen.seen.update(tree(proc.pid))
            if now(cp):
                if whole_run:
                    run = kill_run(proc.pid)
                else:
                    run = tree(proc.pid)
                    proc.send_signal(signal.SIGKILL)
                seen.seen.update(run)
                proc.wait()
                return {p: s for p, s in run.items() if alive(p, s)}
            time.sleep(0.05)
        tail = out.read_text(errors="replace")[-4000:]
        raise AssertionError(
            f"`pulumi up -s {stack}` ended (exit {proc.returncode}) before the moment to kill "
            f"it:\n{tail}"
        )
    finally:
        if proc.poll() is None:
            seen.seen.update(kill_run(proc.pid))
            proc.wait()


def recover(
    pulumi: rig.Pulumi, project: Path, stack: str, *flags: str
) -> subprocess.CompletedProcess[str]:
    """`gpu-inference recover STACK` as a user runs it, with the test's Pulumi on PATH."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "components",
            "recover",
            stack,
            *flags,
            "--project-dir",
            str(project),
        ],
        cwd=project,
        env=pulumi.env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


def recovered(pulumi: rig.Pulumi, project: Path, stack: str) -> list[str]:
    """`recover --yes`: it carries its plan out and says the preview still has work for `up`."""
    done = recover(pulumi, project, stack, "--yes")
    assert done.returncode in (0, 1), f"{done.stdout}\n{done.stderr}"
    assert done.stderr == "", done.stderr
    return done.stdout.splitlines()


def state(pulumi: rig.Pulumi, project: Path, stack: str = STACK) -> dict[str, Any]:
    out = pulumi.run("stack", "export", "-s", stack, cwd=project).stdout
    deployment: dict[str, Any] = json.loads(out)["deployment"]
    return deployment


def locks(pulumi: rig.Pulumi, stack: str) -> list[Path]:
    return sorted(pulumi.backend.glob(f".pulumi/locks/organization/*/{stack}/*.json"))


def converged(pulumi: rig.Pulumi, project: Path, cp: rig.ControlPlane) -> None:
    """Every object once in the state and the cluster, nothing pending, and `recover` says the
    stack converged (its closing `pulumi preview --expect-no-changes`)."""
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
    releases: Counter[str] = Counter()
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
    check = recover(pulumi, project, STACK)
    assert check.returncode == 0, f"{check.stdout}\n{check.stderr}"
    assert check.stdout.endswith(
        f"converged: `pulumi preview --expect-no-changes` proposes no change to {STACK}\n"
    )


def private_pulumi(tmp_path: Path, cp: rig.ControlPlane) -> rig.Pulumi:
    """The installed Pulumi, offline, with the run records of this test's programs kept apart."""
    pulumi = rig.Pulumi(tmp_path, kubeconfig=cp.kubeconfig)
    pulumi.env["XDG_STATE_HOME"] = str(tmp_path / "state")
    return pulumi


def test_an_interrupted_up_is_recovered_drift_is_undone_and_destroy_leaves_the_cluster_as_found(
    cluster: rig.ControlPlane, tmp_path: Path
) -> None:
    cp = cluster
    project = write_project(tmp_path / "project", STACK, onprem_config(cp.kubeconfig))
    whole_before = {n: node_whole(cp.get(f"/api/v1/nodes/{n}")) for n in NODES}
    namespaces_before = namespaces(cp)
    pulumi = private_pulumi(tmp_path, cp)
    pulumi.run("stack", "init", STACK, cwd=project)

    log: list[str] = []
    with caused(pulumi) as seen:
        for point, moment, whole in (
            ("the run killed while a Helm release installs", pending_release, True),
            ("the run killed while the InferenceServices are created", isvc_exists, True),
            ("the CLI alone killed while a Helm release installs", pending_release, False),
        ):
            left = up_interrupted(pulumi, project, STACK, cp, moment, seen, whole_run=whole)
            log.append(f"{point}: {len(left)} of its processes left running")
            first = len(log) - 1
            if whole:
                assert left == {}
            else:
                assert left, "the plugins of a killed CLI outlive it"
            plan = recover(pulumi, project, STACK)
            assert plan.returncode == 1 and plan.stderr == "", plan.stdout + plan.stderr
            assert "Run `gpu-inference recover e2e --yes` to carry it out." in plan.stdout
            if moment is pending_release and whole:
                # The dead provider left the release pending-install, marked as this release's:
                # reported, left to the hook.
                assert (
                    " pending-install (Helm refuses the release until this record goes): its "
                    "records carry this release's marker" in plan.stdout
                ), plan.stdout
            out = recovered(pulumi, project, STACK)
            log += [f"  {line}" for line in out]
            print("\n".join([*log[first:], *plan.stdout.splitlines()]), flush=True)
            assert [p for p, s in left.items() if alive(p, s)] == [], "recover stopped them"
            if left:
                assert any(line.startswith("stopped ") for line in out), out
            assert locks(pulumi, STACK) == []
            assert not state(pulumi, project).get("pending_operations")
            up = pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=1200)
            cleared = [line.strip() for line in up.stdout.splitlines() if CLEARED in line]
            log += [f"  {line}" for line in cleared]
            if moment is pending_release and whole:
                # Helm refuses the name until the hook clears what the killed install left.
                assert cleared, up.stdout[-3000:]
            converged(pulumi, project, cp)
            # Start again from nothing for the next kill point.
            pulumi.run(
                "destroy", "--yes", "--skip-preview", "--run-program", cwd=project, timeout=1200
            )
        print("\n".join(log))

        # Drift: a pool taint edited by hand shows in a refreshing preview and `up --refresh`
        # puts it back, keeping the site's own taint; a deleted InferenceService is made again.
        pulumi.run("up", "--yes", "--skip-preview", cwd=project, timeout=1200)
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
        drifted = pulumi.run(
            "preview", "--refresh", "--expect-no-changes", cwd=project, check=False
        )
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


# Stack `small` of the same project: one existing node of its own, nothing else.
SMALL = "small"
SMALL_NODE = "gpu-node-s1"


def small_config(kubeconfig: Path) -> dict[str, Any]:
    return {
        "cluster": {
            "provider": "existing",
            "name": "lab-small",
            "kubeconfig": str(kubeconfig),
            "context": "rig",
            "extendedResourceToleration": False,
        },
        "pools": [
            {
                "name": "small",
                "nodes": [SMALL_NODE],
                "gpusPerNode": 1,
                "nodeAllocatable": {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "100Gi"},
                "accelerator": "nvidia-l4",
                "labels": {"small": "true"},
                "taints": [{"key": "small", "value": "true", "effect": "NoSchedule"}],
                "selectLabels": ["small"],
            }
        ],
        "knative": {"mode": "none"},
        "addons": {
            "kserve": {"enabled": False},
            "seldon": {"enabled": False},
            "certManager": {"enabled": False},
            "nvidiaDevicePlugin": {"enabled": False},
        },
    }


def small_node_patched(cp: rig.ControlPlane) -> Callable[[rig.ControlPlane], bool]:
    """A moment: the small stack's node carries its pool label."""

    def patched(cp: rig.ControlPlane) -> bool:
        labels = cp.get(f"/api/v1/nodes/{SMALL_NODE}")["metadata"].get("labels") or {}
        return labels.get("small") == "true"

    return patched


def test_recover_touches_only_its_own_stacks_processes_and_lock(
    cluster: rig.ControlPlane, tmp_path: Path
) -> None:
    cp = cluster
    project = write_project(tmp_path / "project", STACK, onprem_config(cp.kubeconfig))
    write_stack_config(project, SMALL, small_config(cp.kubeconfig))
    cp.create_node(SMALL_NODE, labels={"site.example/rack": "r3"}, gpus=1)
    small_before = node_whole(cp.get(f"/api/v1/nodes/{SMALL_NODE}"))
    pulumi = private_pulumi(tmp_path, cp)
    for stack in (STACK, SMALL):
        pulumi.run("stack", "init", stack, cwd=project)

    with caused(pulumi) as seen:
        # While a run of the stack goes on, recover refuses, naming the CLI that holds the lock.
        live = subprocess.Popen(
            [
                str(pulumi.install.cli),
                "up",
                "--yes",
                "--skip-preview",
                "--non-interactive",
                "-s",
                STACK,
            ],
            cwd=project,
            env=pulumi.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 600
            while not locks(pulumi, STACK) and time.monotonic() < deadline:
                seen.seen.update(tree(live.pid))
                time.sleep(0.1)
            refused = recover(pulumi, project, STACK, "--yes")
            assert refused.returncode == 2, refused.stdout + refused.stderr
            assert refused.stderr.startswith(
                f"error: stack {STACK} is being updated right now: its lock is held by pid "
                f"{live.pid} on this host"
            ), refused.stderr
            assert live.poll() is None and locks(pulumi, STACK)
        finally:
            seen.seen.update(kill_run(live.pid))
            live.wait()
        recovered(pulumi, project, STACK)

        # Both stacks' CLIs killed alone, from the same directory: each leaves its plugins
        # running and its lock.
        left_a = up_interrupted(pulumi, project, STACK, cp, pending_release, seen, whole_run=False)
        left_b = up_interrupted(
            pulumi, project, SMALL, cp, small_node_patched, seen, whole_run=False
        )
        assert left_a and left_b
        providers_b = [p for p in left_b if is_provider(p)]
        lock_b = locks(pulumi, SMALL)
        assert lock_b and locks(pulumi, STACK)

        plan = recover(pulumi, project, STACK)
        assert plan.returncode == 1, plan.stdout + plan.stderr
        for pid, start in left_a.items():
            # (the program exits by itself once its engine is gone: only those still there)
            assert f"pid {pid} " in plan.stdout or not alive(pid, start), plan.stdout
        for pid in left_b:
            assert f"pid {pid} " not in plan.stdout, plan.stdout

        recovered(pulumi, project, STACK)
        assert [p for p, s in left_a.items() if alive(p, s)] == []
        # The other stack's providers run on (a provider never stops by itself, unlike the
        # program and, after a health check, the language host).
        assert providers_b and all(alive(p, left_b[p]) for p in providers_b), providers_b
        assert locks(pulumi, STACK) == [] and locks(pulumi, SMALL) == lock_b

        recovered(pulumi, project, SMALL)
        assert [p for p, s in left_b.items() if alive(p, s)] == []
        assert locks(pulumi, SMALL) == []

        for stack in (STACK, SMALL):
            pulumi.run("up", "--yes", "--skip-preview", "-s", stack, cwd=project, timeout=1200)
            check = recover(pulumi, project, stack)
            assert check.returncode == 0, check.stdout + check.stderr
        for stack in (SMALL, STACK):
            pulumi.run(
                "destroy", "--yes", "--skip-preview", "--run-program", "-s", stack,
                cwd=project, timeout=1200,
            )  # fmt: skip
    assert node_whole(cp.get(f"/api/v1/nodes/{SMALL_NODE}")) == small_before
    cp.delete_node(SMALL_NODE)
    assert helm_records(cp) == []
