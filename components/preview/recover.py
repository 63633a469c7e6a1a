"""`gpu-inference recover STACK`: find what an interrupted `pulumi up` left and clear it, through
the Pulumi Automation API (any backend), this machine's `/proc`, and the stack's cluster.

This module gathers the facts and carries the plan out; what they mean and what to do is decided
in `recovery.py`. It selects the stack in the project's workspace, as `pulumi stack select` does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TextIO
from urllib.parse import urlparse

from ..model.deploy.helm_records import RECORD_LABELS, record_of
from ..model.deploy.runs import carries_engine, parse_record, runs_dir, stack_key
from . import recovery as rc
from .preview import load_yaml_file

LOCK_LINE = "created by "


# ---------------------------------------------------------------------------------------------
# This machine: processes (Linux /proc)


def _boot_time(proc: Path) -> float:
    for line in (proc / "stat").read_text().splitlines():
        if line.startswith("btime "):
            return float(line.split()[1])
    raise OSError("no btime in /proc/stat")


def read_proc(pid_dir: Path, btime: float, tick: float) -> Optional[rc.Proc]:
    """One process, or None when it is gone or a zombie."""
    try:
        stat = (pid_dir / "stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] in ("Z", "X"):
            return None
        argv = tuple(
            a.decode(errors="replace") for a in (pid_dir / "cmdline").read_bytes().split(b"\0") if a
        )
        uid = pid_dir.stat().st_uid
    except (OSError, ValueError, IndexError):
        return None
    try:
        cwd: Optional[str] = os.readlink(pid_dir / "cwd")
    except OSError:
        cwd = None
    started = btime + int(fields[19]) * tick
    return rc.Proc(int(pid_dir.name), int(fields[1]), uid, started, argv, cwd)


def process_table(proc: Path = Path("/proc")) -> dict[int, rc.Proc]:
    """Every process this user can see (empty where there is no /proc)."""
    try:
        btime = _boot_time(proc)
    except OSError:
        return {}
    tick = 1.0 / os.sysconf("SC_CLK_TCK")
    out = {}
    for d in proc.iterdir():
        if d.name.isdigit():
            p = read_proc(d, btime, tick)
            if p is not None:
                out[p.pid] = p
    return out


def listening_ports(proc: Path = Path("/proc")) -> set[int]:
    """The local TCP ports something listens on (`/proc/net/tcp{,6}`, state 0A)."""
    ports = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 3 and cols[3] == "0A":
                ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


def same_process(p: rc.Proc, proc: Path = Path("/proc")) -> bool:
    """Whether pid `p.pid` is still the process `p` (not gone, not a later one with its pid)."""
    try:
        now = read_proc(proc / str(p.pid), _boot_time(proc), 1.0 / os.sysconf("SC_CLK_TCK"))
    except OSError:
        return False
    return now is not None and abs(now.started - p.started) < 0.05


def stop(procs: Iterable[rc.Proc], grace: float = rc.GRACE) -> list[int]:
    """SIGTERM each process (checked to be the same process first), SIGKILL what is left after
    `grace` seconds; the pids that were stopped."""
    targets = [p for p in procs if same_process(p)]
    for p in targets:
        _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(same_process(p) for p in targets):
        time.sleep(0.1)
    for p in targets:
        if same_process(p):
            _signal(p, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(same_process(p) for p in targets):
        time.sleep(0.1)
    return [p.pid for p in targets if not same_process(p)]


def _signal(p: rc.Proc, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(p.pid, sig)


def run_records(root: str, project: str, stack: str) -> list[Any]:
    """The run records of this stack (`components.kube.runs` writes them)."""
    directory = runs_dir(os.environ, Path.home()) / stack_key(root, project, stack)
    found = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else ():
        try:
            record = parse_record(path.read_text())
        except OSError:
            continue
        if record is not None:
            found.append(record)
    return found


def prune_records(root: str, project: str, stack: str) -> None:
    """Delete the stack's run records whose run has no process left."""
    directory = runs_dir(os.environ, Path.home()) / stack_key(root, project, stack)
    argvs = [p.argv for p in process_table().values()]
    for path in directory.glob("*.json") if directory.is_dir() else ():
        try:
            record = parse_record(path.read_text())
        except OSError:
            continue
        if record is None or not any(carries_engine(a, record.engine) for a in argvs):
            path.unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# The backend


def file_backend(url: Optional[str], project_dir: Path) -> Optional[Path]:
    """The directory of a `file://` backend URL (`file://~`, `file:///abs`, `file://rel`)."""
    if not url or not url.startswith("file://"):
        return None
    rest = url[len("file://") :].split("?", 1)[0]
    if rest == "~" or rest.startswith("~/"):
        return Path(rest).expanduser()
    path = Path(urlparse(url).path if rest.startswith("/") else rest)
    return path if path.is_absolute() else project_dir / path


def file_locks(root: Path, project: str, stack: str) -> list[rc.Lock]:
    locks = []
    for rel in rc.lock_dirs(project, stack):
        directory = root / rel
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else ():
            try:
                lock = rc.parse_lock(path.read_text(), str(path))
            except OSError:
                continue
            if lock is not None:
                locks.append(lock)
    return locks


def empty_attrs(root: Path, project: str, stack: str) -> list[Path]:
    """Empty `.attrs` files beside the stack's checkpoint (gocloud.dev fileblob metadata a kill
    can leave empty: `failed to load checkpoint: EOF`)."""
    found = []
    for legacy in (False, True):
        prefix = root / rc.checkpoint_prefix(project, stack, legacy)
        for path in sorted(prefix.parent.glob(f"{prefix.name}.json*.attrs")):
            if path.is_file() and path.stat().st_size == 0:
                found.append(path)
    return found


def locks_in_message(text: str) -> list[rc.Lock]:
    """The locks a DIY backend names when it refuses a locked stack (`diy/lock.go`
    `checkForLock`: `<url>: created by <user>@<host> (pid <pid>) at <RFC 3339 time>`)."""
    locks = []
    for line in text.splitlines():
        where, sep, rest = line.strip().partition(": " + LOCK_LINE)
        if not sep:
            continue
        who, _, tail = rest.partition(" (pid ")
        pid, _, when = tail.partition(") at ")
        user, _, host = who.rpartition("@")
        lock = rc.parse_lock(
            f'{{"pid": "{pid}", "username": "{user}", "hostname": "{host}", '
            f'"timestamp": "{when.strip()}"}}',
            where,
        )
        if lock is not None:
            locks.append(lock)
    return locks


def pulumi_error(err: Exception) -> str:
    """The CLI's own error lines from an Automation API CommandError."""
    text = str(err)
    stderr = text.split("\n stderr: ", 1)[-1]
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return " ".join(errors or lines[-3:]) or text.strip()


# ---------------------------------------------------------------------------------------------
# The cluster: Helm records


def helm_state(
    releases: Iterable[rc.Release], project_dir: Path
) -> tuple[list[rc.HelmLeft], list[str]]:
    """What the run left of each release, read through its provider's kubeconfig; and why some
    could not be read."""
    from ..kube.cluster import LiveCluster, Target  # the Kubernetes client: only needed here

    left, unchecked = [], []
    clusters: dict[tuple[Optional[str], Optional[str]], Any] = {}
    broken: dict[tuple[Optional[str], Optional[str]], str] = {}
    for r in releases:
        kubeconfig = r.kubeconfig
        if (
            kubeconfig
            and "\n" not in kubeconfig
            and not Path(kubeconfig).expanduser().is_absolute()
        ):
            kubeconfig = str(project_dir / kubeconfig)
        key = (kubeconfig, r.context)
        if key in broken:
            unchecked.append(f"{r.namespace}/{r.name}: {broken[key]}")
            continue
        try:
            if key not in clusters:
                clusters[key] = LiveCluster(Target(kubeconfig, r.context))
            secrets = clusters[key].secrets(r.namespace, RECORD_LABELS.format(release=r.name))
        except Exception as err:  # the client's errors: config, connection, API
            why = f"the cluster is not reachable ({type(err).__name__}: {_first_line(err)})"
            broken[key] = why
            unchecked.append(f"{r.namespace}/{r.name}: {why}")
            continue
        found = rc.helm_left(r, [record_of(s) for s in secrets])
        if found is not None:
            left.append(found)
    return left, unchecked


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [""])[0][:200]


# ---------------------------------------------------------------------------------------------
# Gathering and carrying out


@dataclass
class Context:
    """The stack as the Automation API reaches it."""

    stack: Any
    workspace: Any
    project: str
    project_dir: Path
    backend_url: str
    backend_dir: Optional[Path]


def select(stack_name: str, workspace: Any, project: str, backend_dir: Optional[Path]) -> Any:
    """The stack, selected; or, when `pulumi stack select` cannot load it because a kill left an
    empty `.attrs` beside its checkpoint, a handle that does not select it (every Stack command
    names its stack itself, `--stack`), so that the plan can say so and `--yes` delete them."""
    from pulumi.automation import Stack
    from pulumi.automation.errors import CommandError

    try:
        return Stack.select(stack_name, workspace)
    except CommandError:
        if backend_dir is None or not empty_attrs(backend_dir, project, stack_name):
            raise

    class Unselected(Stack):
        def __init__(self) -> None:  # Stack's own selects; this one must not
            self.name, self.workspace = stack_name, workspace

        def __repr__(self) -> str:
            return f"Stack(stack_name={self.name!r}, not selected)"

    return Unselected()


def open_stack(stack_name: str, project_dir: Path) -> Context:
    from pulumi.automation import LocalWorkspace, PulumiCommand
    from pulumi.automation.errors import CommandError, InvalidVersionError, StackNotFoundError
    from semver import VersionInfo

    from ..kube.provider import MIN_PULUMI

    doc = load_yaml_file(project_dir / "Pulumi.yaml", "project file")
    project = str((doc or {}).get("name", ""))
    try:
        command = PulumiCommand(version=VersionInfo.parse(MIN_PULUMI))
    except FileNotFoundError:
        raise rc.Refused(
            f"no `pulumi` on PATH: recover drives the Pulumi CLI (v{MIN_PULUMI} or later); "
            "install it with `curl -fsSL https://get.pulumi.com | sh`"
        ) from None
    except InvalidVersionError as err:
        raise rc.Refused(f"the Pulumi CLI is too old for this stack: {err}") from None
    workspace = LocalWorkspace(work_dir=str(project_dir), pulumi_command=command)
    try:
        url = workspace.who_am_i().url
        stack = select(stack_name, workspace, project, file_backend(url, project_dir))
    except StackNotFoundError:
        raise rc.Refused(
            f"no stack {stack_name} of project {project} in this backend: `pulumi stack ls` "
            "lists them"
        ) from None
    except CommandError as err:
        raise rc.Refused(f"cannot reach stack {stack_name}: {pulumi_error(err)}") from None
    where = url or "the backend"
    return Context(stack, workspace, project, project_dir, where, file_backend(url, project_dir))


def gather(ctx: Context, stack_name: str) -> rc.Findings:
    """What the interrupted run left: the stack's locks, runs, pending operations, Helm records."""
    from pulumi.automation.errors import CommandError

    f = rc.Findings(ctx.project, stack_name, ctx.backend_url)
    procs = process_table()
    if ctx.backend_dir is not None:
        host = socket.gethostname()
        f.locks = [
            rc.lock_holder(lock, procs, host)
            for lock in file_locks(ctx.backend_dir, ctx.project, stack_name)
        ]
        f.empty_attrs = [
            str(p.relative_to(ctx.backend_dir))
            for p in empty_attrs(ctx.backend_dir, ctx.project, stack_name)
        ]
    else:
        summary = next(
            (s for s in ctx.workspace.list_stacks() if rc.short_stack(s.name) == stack_name), None
        )
        in_progress = getattr(summary, "update_in_progress", None)
        f.in_progress = bool(in_progress)
        f.lock_unknown = in_progress is None
    root = str(ctx.project_dir.resolve())
    records = run_records(root, ctx.project, stack_name)
    f.runs = rc.stack_runs(
        procs.values(),
        records,
        listening_ports(),
        ctx.project,
        stack_name,
        root,
        os.getuid(),
        os.path.realpath,
    )
    try:
        deployment = ctx.stack.export_stack().deployment or {}
    except CommandError as err:
        if f.empty_attrs:
            return f  # readable once the empty metadata is gone (the plan's first step)
        raise rc.Refused(
            f"cannot read stack {stack_name}'s checkpoint: {pulumi_error(err)}. A truncated "
            "local checkpoint is restored from the copy beside it (docs/recovery.md)"
        ) from None
    f.pending = rc.pending_operations(deployment)
    f.helm, f.helm_unchecked = helm_state(rc.helm_releases(deployment), ctx.project_dir)
    return f


def clear_pending(ctx: Context, f: rc.Findings, say: Callable[[str], None]) -> None:
    """`pulumi refresh --clear-pending-creates`; a lock it meets on a backend whose locks cannot
    be read beforehand is cancelled once, unless its CLI runs here."""
    from pulumi.automation.errors import ConcurrentUpdateError

    try:
        ctx.stack.refresh(clear_pending_creates=True)
    except ConcurrentUpdateError as err:
        host = socket.gethostname()
        table = process_table()
        holders = [rc.lock_holder(lock, table, host) for lock in locks_in_message(str(err))]
        f.locks = holders
        reason = rc.refusal(f)
        if reason or not holders:
            raise rc.Refused(reason or f"the stack is locked: {pulumi_error(err)}") from None
        say("the refresh met the stack's lock (its CLI is not running here): `pulumi cancel`")
        ctx.stack.cancel()
        ctx.stack.refresh(clear_pending_creates=True)


def converge(ctx: Context) -> tuple[bool, str]:
    """`pulumi preview --expect-no-changes`: whether the stack converged, and the sentence."""
    from pulumi.automation.errors import CommandError

    summaries: list[Mapping[str, int]] = []

    def on_event(event: Any) -> None:
        if event.summary_event is not None:
            summaries.append(dict(event.summary_event.resource_changes or {}))

    try:
        ctx.stack.preview(expect_no_changes=True, on_event=on_event)
    except CommandError as err:
        if summaries and rc.changes(summaries[-1]):
            return rc.verdict(summaries[-1], ctx.stack.name)
        return False, f"not converged: the preview failed: {pulumi_error(err)}"
    return rc.verdict(summaries[-1] if summaries else {}, ctx.stack.name)


def carry_out(ctx: Context, stack_name: str, f: rc.Findings, say: Callable[[str], None]) -> None:
    for step in rc.plan(f):
        if step.kind == "attrs":
            assert ctx.backend_dir is not None
            for rel in f.empty_attrs:
                (ctx.backend_dir / rel).unlink(missing_ok=True)
            say(f"deleted {', '.join(f.empty_attrs)}")
            again = gather(ctx, stack_name)
            again.empty_attrs = []
            reason = rc.refusal(again)
            if reason:
                raise rc.Refused(reason)
            carry_out(ctx, stack_name, again, say)
            return
        if step.kind == "stop":
            procs = [p for run in f.runs if not run.live for p in run.procs]
            stopped = stop(procs)
            say(f"stopped {rc.plural(len(stopped), 'process', 'processes')} of the interrupted run")
        elif step.kind == "cancel":
            ctx.stack.cancel()
            say("removed the stack's lock (`pulumi cancel`)")
        elif step.kind == "clear":
            say("refreshing (`pulumi refresh --clear-pending-creates`) ...")
            clear_pending(ctx, f, say)
            left = rc.pending_operations(ctx.stack.export_stack().deployment or {})
            if left:
                raise rc.Refused(
                    f"the refresh left {rc.plural(len(left), 'pending operation')} "
                    f"({', '.join(f'{op.kind} {op.name}' for op in left)}): see `pulumi stack "
                    "export`"
                )
            say("the checkpoint has no pending operation left")


def recover(stack_name: str, project_dir: Path, yes: bool, out: TextIO) -> int:
    """The command: 0 converged, 1 not (the plan awaits `--yes`, or `pulumi up` has work left);
    refusals raise `Refused`."""

    def say(line: str) -> None:
        print(line, file=out, flush=True)

    ctx = open_stack(stack_name, project_dir)
    f = gather(ctx, stack_name)
    say(f"Stack {stack_name} of project {ctx.project} ({f.backend}):")
    found = rc.render_findings(f)
    say("\n".join(f"  {line}" for line in found) if found else "  nothing an interrupted run left")
    reason = rc.refusal(f)
    if reason:
        raise rc.Refused(reason)
    steps = rc.plan(f)
    if steps:
        say("\nPlan:")
        for i, step in enumerate(steps, 1):
            say(f"  {i}. {step.text}")
        say(f"  {len(steps) + 1}. `pulumi preview --expect-no-changes`")
        if not yes:
            say(f"\nRun `gpu-inference recover {stack_name} --yes` to carry it out.")
            return 1
        say("")
        carry_out(ctx, stack_name, f, say)
    prune_records(str(ctx.project_dir.resolve()), ctx.project, stack_name)
    say("previewing (`pulumi preview --expect-no-changes`) ...")
    ok, sentence = converge(ctx)
    say(sentence)
    return 0 if ok else 1
