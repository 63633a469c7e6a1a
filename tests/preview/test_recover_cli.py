"""`gpu-inference recover`'s thin layer (components/preview/recover.py): this machine's /proc,
lock files and messages of a DIY backend, stopping processes by pid, and the command's flow over
a stand-in for the Automation API's Stack (the real one runs in tests/e2e/test_recovery.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pulumi.automation import CommandResult
from pulumi.automation.errors import CommandError, ConcurrentUpdateError

from components.kube import runs as kube_runs
from components.model.deploy.runs import RunRecord, parse_record, runs_dir, stack_key
from components.preview import recover as rv
from components.preview import recovery as rc
from components.preview.cli import main

# `pulumi up` against a locked DIY stack (diy/lock.go checkForLock), as the CLI prints it.
LOCKED = (
    "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) "
    "to end or delete the lock file with `pulumi cancel`.\n"
    "  s3://state/.pulumi/locks/organization/gpu-inference/dev/5e1c.json: created by "
    "ci@runner-7 (pid 4242) at 2026-11-30T10:00:00Z\n"
)


def test_the_locks_a_locked_stack_error_names():
    (lock,) = rv.locks_in_message(LOCKED)
    assert (lock.where, lock.pid, lock.user, lock.host) == (
        "s3://state/.pulumi/locks/organization/gpu-inference/dev/5e1c.json",
        4242,
        "ci",
        "runner-7",
    )
    assert rv.locks_in_message("error: something else") == []


@pytest.mark.parametrize(
    "url, path",
    [
        ("file:///var/state", "/var/state"),
        ("file:///var/state?no_tmp_dir=true", "/var/state"),
        ("file://~", str(Path.home())),
        ("file://~/state", str(Path.home() / "state")),
        ("file://state", "/proj/state"),
        ("s3://bucket", None),
        ("https://api.pulumi.com", None),
        (None, None),
    ],
)
def test_the_directory_of_a_file_backend(url, path):
    found = rv.file_backend(url, Path("/proj"))
    assert (str(found) if found else None) == path


def test_locks_and_empty_metadata_of_this_stack_only(tmp_path: Path):
    locks = tmp_path / ".pulumi/locks/organization/gpu-inference"
    for stack, pid in (("dev", 11), ("prod", 22)):
        (locks / stack).mkdir(parents=True)
        (locks / stack / "a.json").write_text(
            json.dumps(
                {"pid": pid, "username": "u", "hostname": "h", "timestamp": "2026-11-30T10:00:00Z"}
            )
        )
        (locks / stack / "a.json.attrs").write_text("")
    stacks = tmp_path / ".pulumi/stacks/gpu-inference"
    stacks.mkdir(parents=True)
    for name in (
        "dev.json",
        "dev.json.attrs",
        "prod.json",
        "prod.json.attrs",
        "dev.json.bak.attrs",
    ):
        (stacks / name).write_text("" if name.endswith(".attrs") else "{}")
    assert [lk.pid for lk in rv.file_locks(tmp_path, "gpu-inference", "dev")] == [11]
    assert [p.name for p in rv.empty_attrs(tmp_path, "gpu-inference", "dev")] == [
        "dev.json.attrs",
        "dev.json.bak.attrs",
    ]


def test_this_process_as_proc_shows_it():
    table = rv.process_table()
    me = table[os.getpid()]
    assert me.ppid == os.getppid() and me.uid == os.getuid()
    assert me.argv[0] == sys.argv[0] or Path(me.argv[0]).name.startswith("python")
    assert me.cwd == os.getcwd()
    assert abs(me.started - time.time()) < 3600 * 24 * 365
    assert rv.same_process(me)
    assert not rv.same_process(rc.Proc(me.pid, me.ppid, me.uid, me.started - 5, me.argv))


def test_a_listening_port_is_seen():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert port not in rv.listening_ports()
        s.listen()
        assert port in rv.listening_ports()


def _child(code: str) -> subprocess.Popen[bytes]:
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert child.stdout is not None
    child.stdout.readline()  # ready
    return child


def test_stop_terminates_then_kills_what_ignores_sigterm():
    polite = _child("import time; print(flush=True); time.sleep(60)")
    stubborn = _child(
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(flush=True); "
        "time.sleep(60)"
    )
    table = rv.process_table()
    try:
        stopped = rv.stop([table[polite.pid], table[stubborn.pid]], grace=0.5)
        assert sorted(stopped) == sorted([polite.pid, stubborn.pid])
        assert polite.wait(5) == -15 and stubborn.wait(5) == -9
    finally:
        for c in (polite, stubborn):
            c.kill()
            c.wait()


def test_stop_never_signals_a_pid_taken_by_another_process():
    child = _child("import time; print(flush=True); time.sleep(60)")
    try:
        me = rv.process_table()[child.pid]
        later = rc.Proc(me.pid, me.ppid, me.uid, me.started - 30, me.argv)
        assert rv.stop([later], grace=0.1) == []
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()


# The program's record of its run (components/kube/runs.py), under a private state directory.
ARGV = [
    "/venv/bin/python", "-u", "/pulumi/bin/pulumi-language-python-exec", "--monitor",
    "127.0.0.1:1", "--engine", "127.0.0.1:40001", "--project", "gpu-inference",
    "--root_directory", "/work/proj", "--stack", "dev", "--pwd", "/work/proj", ".",
]  # fmt: skip


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    kube_runs.record_this_run.cache_clear()
    yield runs_dir(os.environ, Path.home())
    kube_runs.record_this_run.cache_clear()


def test_a_program_under_a_language_host_records_its_run_once(state_home, monkeypatch):
    monkeypatch.setattr(kube_runs, "own_command_line", lambda: ARGV)
    path = kube_runs.record_this_run()
    assert path is not None and kube_runs.record_this_run() == path
    assert path.parent == state_home / stack_key("/work/proj", "gpu-inference", "dev")
    record = parse_record(path.read_text())
    assert record is not None
    assert (record.project, record.stack, record.root, record.engine, record.program_pid) == (
        "gpu-inference",
        "dev",
        "/work/proj",
        "127.0.0.1:40001",
        os.getpid(),
    )
    assert rv.run_records("/work/proj", "gpu-inference", "dev") == [record]
    # The record goes once no process carries its engine address.
    rv.prune_records("/work/proj", "gpu-inference", "dev")
    assert not path.exists()


def test_a_program_under_mocks_records_nothing(state_home, monkeypatch):
    monkeypatch.setattr(kube_runs, "own_command_line", lambda: ["python", "-m", "pytest"])
    assert kube_runs.record_this_run() is None
    assert not state_home.exists()


def test_a_stack_keeps_its_newest_records(state_home):
    for i in range(25):
        kube_runs.write_record(
            RunRecord("p", "dev", "/r", f"127.0.0.1:{40000 + i}", 100 + i, 1_000_000 + i),
            state_home,
        )
    kept = sorted(p.name for p in (state_home / stack_key("/r", "p", "dev")).iterdir())
    assert len(kept) == 20 and kept[0].startswith("1000005-40005-")


# The command's flow, over a stand-in Stack.


class FakeStack:
    def __init__(self, deployment: dict[str, Any], changes: dict[str, int], locked: str = ""):
        self.name = "dev"
        self.deployment = deployment
        self.changes = changes
        self.locked = locked
        self.calls: list[str] = []

    def export_stack(self):
        return SimpleNamespace(deployment=self.deployment)

    def cancel(self):
        self.calls.append("cancel")
        self.locked = ""

    def refresh(self, clear_pending_creates: bool):
        self.calls.append(f"refresh clear_pending_creates={clear_pending_creates}")
        if self.locked:
            raise ConcurrentUpdateError(CommandResult("", self.locked, 255))
        self.deployment = {**self.deployment, "pending_operations": []}

    def preview(self, expect_no_changes: bool, on_event):
        self.calls.append(f"preview expect_no_changes={expect_no_changes}")
        summary = {"same": 5, **self.changes}
        on_event(SimpleNamespace(summary_event=SimpleNamespace(resource_changes=summary)))
        if self.changes:
            raise CommandError(CommandResult("", "error: no changes were expected", 255))


PENDING = {
    "resources": [],
    "pending_operations": [
        {"resource": {"urn": "urn:pulumi:dev::p::kubernetes:core/v1:Namespace::models",
                      "type": "kubernetes:core/v1:Namespace"}, "type": "creating"}
    ],
}  # fmt: skip
HOST = socket.gethostname()
ORPHAN = rc.Proc(
    9101, 1, os.getuid(), 1_000_000.0, ("/p/pulumi-resource-kubernetes", "127.0.0.1:40001")
)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A file backend holding this stack's lock (its CLI gone), one orphaned provider of the run
    and one of another stack, and a stand-in Stack."""
    (tmp_path / "Pulumi.yaml").write_text("name: p\nruntime: python\n")
    backend = tmp_path / "backend"
    lock_dir = backend / ".pulumi/locks/organization/p/dev"
    lock_dir.mkdir(parents=True)
    (lock_dir / "l.json").write_text(
        json.dumps(
            {"pid": 999999, "username": "u", "hostname": HOST, "timestamp": "2026-11-30T10:00:00Z"}
        )
    )
    stack = FakeStack(PENDING, {"create": 3})
    ctx = rv.Context(stack, SimpleNamespace(), "p", tmp_path, f"file://{backend}", backend)
    other = rc.Proc(
        9201, 1, os.getuid(), 1_000_000.0, ("/p/pulumi-resource-kubernetes", "127.0.0.1:40002")
    )
    record = RunRecord("p", "dev", str(tmp_path.resolve()), "127.0.0.1:40001", 1, 1.0)
    stopped: list[list[int]] = []
    monkeypatch.setattr(rv, "open_stack", lambda name, d: ctx)
    monkeypatch.setattr(rv, "process_table", lambda: {p.pid: p for p in (ORPHAN, other)})
    monkeypatch.setattr(rv, "listening_ports", set)
    monkeypatch.setattr(
        rv, "run_records", lambda root, project, stack: [record] if stack == "dev" else []
    )
    monkeypatch.setattr(rv, "prune_records", lambda *a: None)
    monkeypatch.setattr(rv, "helm_state", lambda releases, d: ([], []))
    monkeypatch.setattr(
        rv, "stop", lambda procs: stopped.append([p.pid for p in procs]) or [p.pid for p in procs]
    )
    return SimpleNamespace(stack=stack, stopped=stopped, lock=lock_dir / "l.json", dir=tmp_path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["recover", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_without_yes_the_plan_is_shown_and_nothing_is_done(world, capsys):
    code, out, err = run(capsys, "dev", "--project-dir", str(world.dir))
    assert code == 1 and err == ""
    assert world.stack.calls == [] and world.stopped == []
    assert (
        "  processes of a run of this stack (engine 127.0.0.1:40001, found by its run record" in out
    )
    assert "  pid 9101 pulumi-resource-kubernetes\n" in out and "9201" not in out
    assert out.endswith(
        "Plan:\n"
        "  1. stop the 1 process of the interrupted run (9101): SIGTERM, then SIGKILL after 5 s\n"
        "  2. remove the stack's lock (`pulumi cancel`)\n"
        "  3. drop the 1 pending create (what they made stays in the cluster; the next `pulumi "
        "up` adopts it): `pulumi refresh --clear-pending-creates`\n"
        "  4. `pulumi preview --expect-no-changes`\n"
        "\nRun `gpu-inference recover dev --yes` to carry it out.\n"
    )


def test_with_yes_the_plan_is_carried_out_in_order_and_the_preview_judges(world, capsys):
    code, out, err = run(capsys, "dev", "--yes", "--project-dir", str(world.dir))
    assert world.stopped == [[9101]]
    assert world.stack.calls == [
        "cancel",
        "refresh clear_pending_creates=True",
        "preview expect_no_changes=True",
    ]
    assert code == 1, err
    assert out.endswith(
        "stopped 1 process of the interrupted run\n"
        "removed the stack's lock (`pulumi cancel`)\n"
        "refreshing (`pulumi refresh --clear-pending-creates`) ...\n"
        "the checkpoint has no pending operation left\n"
        "previewing (`pulumi preview --expect-no-changes`) ...\n"
        "not converged: the preview proposes 3 to create. Run `pulumi up -s dev` to finish what "
        "the interrupted run began\n"
    )


def test_a_stack_whose_only_leftover_is_a_process_converges_once_it_is_stopped(world, capsys):
    world.lock.unlink()
    world.stack.deployment, world.stack.changes = {"resources": []}, {}
    code, out, _ = run(capsys, "dev", "--yes", "--project-dir", str(world.dir))
    assert code == 0
    assert out.endswith(
        "converged: `pulumi preview --expect-no-changes` proposes no change to dev\n"
    )
    assert world.stopped == [[9101]]


def test_a_live_run_is_refused_with_one_message_and_nothing_touched(world, capsys, monkeypatch):
    monkeypatch.setattr(rv, "listening_ports", lambda: {40001})
    code, _, err = run(capsys, "dev", "--yes", "--project-dir", str(world.dir))
    assert code == 2
    assert err == (
        "error: a run of stack dev is going on: its engine (127.0.0.1:40001) still listens, and "
        "its processes (9101) are running. Let it finish, or stop its `pulumi` and run recover "
        "again\n"
    )
    assert world.stack.calls == [] and world.stopped == [] and world.lock.exists()


def test_a_lock_met_on_a_backend_that_cannot_be_read_is_cancelled_unless_its_cli_runs_here(
    world, capsys
):
    world.lock.unlink()
    ctx = rv.open_stack("dev", world.dir)
    ctx.backend_dir, ctx.backend_url = None, "s3://state"
    ctx.workspace = SimpleNamespace(
        list_stacks=lambda: [SimpleNamespace(name="organization/p/dev", update_in_progress=None)],
    )
    world.stack.locked = LOCKED
    world.stack.changes = {}
    code, out, _ = run(capsys, "dev", "--yes", "--project-dir", str(world.dir))
    assert code == 0
    assert "  lock: s3://state cannot be read from here (only `file://` locks can)\n" in out
    assert world.stack.calls == [
        "refresh clear_pending_creates=True",
        "cancel",
        "refresh clear_pending_creates=True",
        "preview expect_no_changes=True",
    ]
    assert "the refresh met the stack's lock (its CLI is not running here): `pulumi cancel`" in out


def test_recover_outside_a_project_is_a_usage_error(tmp_path, capsys):
    code, out, err = run(capsys, "dev", "--project-dir", str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "no Pulumi.yaml in the project directory" in err


def test_an_empty_checkpoint_attrs_file_is_deleted_first_then_the_checkpoint_is_read(
    world, capsys, monkeypatch
):
    attrs = world.lock.parents[4] / "stacks" / "p" / "dev.json.attrs"
    attrs.parent.mkdir(parents=True)
    attrs.write_text("")
    (attrs.parent / "dev.json").write_text("{}")
    exported = world.stack.export_stack

    def export_stack():
        if attrs.exists():  # what the local backend does: `failed to load checkpoint: EOF`
            raise CommandError(CommandResult("", "error: failed to load checkpoint: EOF", 255))
        return exported()

    monkeypatch.setattr(world.stack, "export_stack", export_stack)
    code, out, _ = run(capsys, "dev", "--project-dir", str(world.dir))
    assert code == 1
    assert "  1. delete the empty .pulumi/stacks/p/dev.json.attrs the kill left beside the " in out
    assert "pending" not in out  # not known until the checkpoint can be read
    code, out, _ = run(capsys, "dev", "--yes", "--project-dir", str(world.dir))
    assert not attrs.exists()
    assert "deleted .pulumi/stacks/p/dev.json.attrs\n" in out
    assert world.stack.calls[:2] == ["cancel", "refresh clear_pending_creates=True"]


def test_an_unreadable_checkpoint_otherwise_is_refused_naming_the_way_out(
    world, capsys, monkeypatch
):
    def export_stack():
        raise CommandError(
            CommandResult("", "error: failed to load checkpoint: unexpected end of JSON input", 255)
        )

    monkeypatch.setattr(world.stack, "export_stack", export_stack)
    code, _, err = run(capsys, "dev", "--yes", "--project-dir", str(world.dir))
    assert code == 2
    assert err == (
        "error: cannot read stack dev's checkpoint: error: failed to load checkpoint: unexpected "
        "end of JSON input. A truncated local checkpoint is restored from the copy beside it "
        "(docs/recovery.md)\n"
    )
    assert world.stack.calls == [] and world.stopped == []


def test_a_stack_that_select_cannot_load_for_an_empty_attrs_is_opened_without_selecting(tmp_path):
    # Seen against Pulumi v3.274.1: a CLI killed while it wrote the checkpoint's metadata leaves
    # `dev.json.attrs` empty, and `pulumi stack select` itself fails (`failed to load checkpoint:
    # EOF`) before recover could plan to delete it.
    from unittest import mock

    from pulumi.automation import Workspace

    workspace = mock.Mock(spec=Workspace)
    workspace.select_stack.side_effect = CommandError(
        CommandResult("", "error: failed to load checkpoint: EOF", 255)
    )
    with pytest.raises(CommandError):  # nothing of the kind beside it: the error stands
        rv.select("dev", workspace, "p", tmp_path)
    with pytest.raises(CommandError):  # not a local backend: the error stands
        rv.select("dev", workspace, "p", None)
    attrs = tmp_path / ".pulumi/stacks/p/dev.json.attrs"
    attrs.parent.mkdir(parents=True)
    attrs.write_text("")
    stack = rv.select("dev", workspace, "p", tmp_path)
    assert stack.name == "dev"
    stack.export_stack()
    workspace.export_stack.assert_called_once_with("dev")  # names its stack itself
