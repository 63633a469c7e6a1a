"""What an interrupted `pulumi up` left, and the plan to clear it: the pure half of
`gpu-inference recover` (`recover.py` gathers the facts and carries the plan out).

An `up` killed with its machine, its terminal or its CI job leaves, for its stack:
- **the lock** (a DIY backend's `.pulumi/locks/<org>/<project>/<stack>/<id>.json`, holding the
  CLI's pid, user, host and start time: pulumi v3.259.0 `pkg/backend/diy/lock.go`
  `lockContent`), or on the Pulumi Cloud an update still "in progress"; `pulumi cancel` removes
  either (`diy/backend.go` `CancelCurrentUpdate`);
- **pending operations** in the checkpoint (`pending_operations`, `apitype.OperationV2`: the
  resource and `creating` / `updating` / `deleting` / `reading`). `pulumi refresh
  --clear-pending-creates` drops the creates (`pkg/cmd/pulumi/operations/refresh.go`
  `filterMapPendingCreates`); the objects they made stay and the next `up` adopts them (the
  provider upserts with this stack's field manager). The refresh reads the rest back;
- **processes still running**: the plugins of the run, in process groups of their own, outlive
  the CLI (`components.model.deploy.runs`);
- **Helm releases left pending** (`pending-install`, `pending-upgrade`): reported only; the
  release's error hook clears what this stack's create left on the next `up`.

Nothing here touches another stack: locks are this stack's lock files, processes are those whose
command line carries the engine address of a run of this stack (from its run records, or from a
program process naming this project and stack), and a run whose engine still listens is live and
is refused, not stopped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Optional

from ..model.deploy.helm_records import PENDING, Record, release_owner
from ..model.deploy.runs import RunRecord, carries_engine, engine_port, program_run, short_stack
from .preview import PreviewError

RELEASE = "kubernetes:helm.sh/v3:Release"
PROVIDER = "pulumi:providers:kubernetes"
SECRET_SIG = "4dabf18193072939515e22adb298388d"
"""The key that marks a secret value in a deployment (`resource/sig.Secret`)."""
CLOCK_SLACK = 2.0
"""Seconds a process's start time may seem later than the lock its CLI wrote: /proc gives start
times from the boot time in whole seconds."""
GRACE = 5.0
"""Seconds between SIGTERM and SIGKILL when stopping a run's processes."""


class Refused(PreviewError):
    """Recovery refuses to act (a live run, a stack that is not there): exit 2, one message."""


# ---------------------------------------------------------------------------------------------
# The lock


@dataclass(frozen=True)
class Lock:
    """A DIY backend's lock file: which CLI holds the stack (`diy/lock.go` `lockContent`)."""

    where: str
    pid: int
    user: str
    host: str
    timestamp: float
    """When the CLI took the lock (seconds since the epoch)."""


def parse_lock(text: str, where: str) -> Optional[Lock]:
    """A lock from its file's JSON (`{"pid", "username", "hostname", "timestamp"}`, the time in
    RFC 3339 with up to nanoseconds); None when it is not one."""
    try:
        data = json.loads(text)
        stamp = str(data["timestamp"])
        head, dot, rest = stamp.partition(".")
        if dot:  # Python reads at most microseconds
            digits = len(rest) - len(rest.lstrip("0123456789"))
            stamp = f"{head}.{rest[: min(digits, 6)]}{rest[digits:]}"
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        return Lock(where, int(data["pid"]), str(data["username"]), str(data["hostname"]), when)
    except (ValueError, KeyError, TypeError):
        return None


def lock_dirs(project: str, stack: str) -> list[str]:
    """The stack's lock directories under a DIY backend's root: the project layout
    (`organization/<project>/<stack>`, `diy/backend.go` FullyQualifiedName) and the legacy one."""
    name = short_stack(stack)
    return [f".pulumi/locks/organization/{project}/{name}", f".pulumi/locks/{name}"]


def checkpoint_prefix(project: str, stack: str, legacy: bool) -> str:
    """The stack's checkpoint under a DIY backend's root, without the `.json[.gz]` extension."""
    name = short_stack(stack)
    return f".pulumi/stacks/{name}" if legacy else f".pulumi/stacks/{project}/{name}"


# ---------------------------------------------------------------------------------------------
# Processes


@dataclass(frozen=True)
class Proc:
    """A process as `/proc` shows it."""

    pid: int
    ppid: int
    uid: int
    started: float
    """Seconds since the epoch."""
    argv: tuple[str, ...]
    cwd: Optional[str] = None

    def label(self) -> str:
        name = self.argv[0].rsplit("/", 1)[-1] if self.argv else "?"
        if len(self.argv) > 1 and name.startswith("python"):
            script = next((a for a in self.argv[1:] if not a.startswith("-")), "")
            name = f"{name} {script.rsplit('/', 1)[-1]}".strip()
        return f"pid {self.pid} {name}"


@dataclass(frozen=True)
class LockHolder:
    """What the lock's CLI is now."""

    lock: Lock
    state: str
    """`live` (this host, that pid running since before the lock), `gone` (this host, no such
    process, or the pid taken by a later one), `elsewhere` (another host: cannot be seen here)."""


def lock_holder(lock: Lock, procs: Mapping[int, Proc], hostname: str) -> LockHolder:
    if lock.host != hostname:
        return LockHolder(lock, "elsewhere")
    proc = procs.get(lock.pid)
    if proc is not None and proc.started <= lock.timestamp + CLOCK_SLACK:
        return LockHolder(lock, "live")
    return LockHolder(lock, "gone")


@dataclass(frozen=True)
class Run:
    """One run of this stack whose processes are still there."""

    engine: str
    source: str
    """How it was tied to the stack: `run record` or `program` (a program process naming it)."""
    live: bool
    """Its engine still listens: the CLI is alive, the run is going on."""
    procs: tuple[Proc, ...]


def stack_runs(
    procs: Iterable[Proc],
    records: Iterable[RunRecord],
    listening: set[int],
    project: str,
    stack: str,
    root: str,
    uid: int,
    resolve: Callable[[str], str] = str,
) -> list[Run]:
    """The runs of stack `stack` of `project` (in directory `root`, resolved) that still have
    processes: each with every process of `uid` whose command line carries the run's engine
    address. `resolve` resolves the project directory a program process names."""
    name = short_stack(stack)
    procs = [p for p in procs if p.uid == uid]
    engines: dict[str, str] = {}
    for r in records:
        if r.project == project and short_stack(r.stack) == name and r.root == root:
            engines.setdefault(r.engine, "run record")
    for p in procs:
        found = program_run(p.argv)
        if found is None:
            continue
        engine, p_project, p_stack, p_root = found
        if (
            p_project == project
            and short_stack(p_stack) == name
            and (p_root is None or resolve(p_root) == root)
        ):
            engines.setdefault(engine, "program")
    runs = []
    for engine, source in sorted(engines.items()):
        members = tuple(sorted((p for p in procs if carries_engine(p.argv, engine)), key=pid_of))
        if members:
            port = engine_port(engine)
            runs.append(Run(engine, source, port is not None and port in listening, members))
    return runs


def pid_of(p: Proc) -> int:
    return p.pid


# ---------------------------------------------------------------------------------------------
# The checkpoint


@dataclass(frozen=True)
class PendingOp:
    kind: str
    """`creating`, `updating`, `deleting`, `reading`."""
    urn: str
    type: str

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


def pending_operations(deployment: Mapping[str, Any]) -> list[PendingOp]:
    """The checkpoint's pending operations (`deployment.pending_operations`)."""
    out = []
    for op in deployment.get("pending_operations") or []:
        res = op.get("resource") or {}
        out.append(
            PendingOp(str(op.get("type", "")), str(res.get("urn", "")), str(res.get("type")))
        )
    return out


def plain(value: Any) -> Any:
    """A value of an exported deployment with its secrets shown (`stack export --show-secrets`)
    as plain values: `{<sig>: ..., "plaintext": "<json>"}` becomes the JSON's value."""
    if isinstance(value, Mapping):
        if SECRET_SIG in value:
            text = value.get("plaintext")
            try:
                return plain(json.loads(text)) if isinstance(text, str) else None
            except ValueError:
                return None
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Release:
    """A Helm release of the stack, and the cluster its provider talks to."""

    urn: str
    name: str
    namespace: str
    kubeconfig: Optional[str]
    """The provider's `kubeconfig` (a path or the document); None: the ambient one."""
    context: Optional[str]
    pending: Optional[str]
    """The checkpoint's pending operation on it (`creating`, `updating`), if any."""


def helm_releases(deployment: Mapping[str, Any]) -> list[Release]:
    """The stack's Helm releases: in its resources, and in its pending operations (a create the
    killed run began), each with its provider's kubeconfig and context."""
    resources = [plain(r) for r in deployment.get("resources") or []]
    providers = {r.get("urn"): r for r in resources if r.get("type") == PROVIDER}
    pending = {
        (op.get("resource") or {}).get("urn"): (op.get("type"), plain(op.get("resource") or {}))
        for op in deployment.get("pending_operations") or []
    }
    seen: dict[str, Release] = {}
    candidates = [(r, None) for r in resources] + [(res, kind) for kind, res in pending.values()]
    for res, kind in candidates:
        if res.get("type") != RELEASE or res.get("delete"):
            continue
        urn = str(res.get("urn", ""))
        values = {**(res.get("inputs") or {}), **(res.get("outputs") or {})}
        name = values.get("name")
        if not isinstance(name, str) or not name:
            continue
        provider = providers.get(str(res.get("provider", "")).rsplit("::", 1)[0]) or {}
        inputs = provider.get("inputs") or {}
        kubeconfig, context = inputs.get("kubeconfig"), inputs.get("context")
        op = kind or (pending[urn][0] if urn in pending else None)
        seen[urn] = Release(
            urn,
            name,
            str(values.get("namespace") or "default"),
            kubeconfig if isinstance(kubeconfig, str) and kubeconfig else None,
            context if isinstance(context, str) and context else None,
            str(op) if op else None,
        )
    return sorted(seen.values(), key=lambda r: (r.namespace, r.name))


@dataclass(frozen=True)
class HelmLeft:
    """A release whose records an interrupted run left."""

    release: Release
    status: str
    revision: int
    note: str
    foreign: Optional[str] = None
    """Who the records belong to when not to this release's resource (`release_owner`): then the
    release's error hook refuses to clear them."""


def helm_left(release: Release, records: Sequence[Record]) -> Optional[HelmLeft]:
    """What the killed run left of `release` (Helm's records for it, any order): a pending last
    revision, or, under a pending create, a revision the state never recorded; with whom the
    records belong to when their marker (`helm_records`) is not this release's resource's."""
    if not records:
        return None
    last = max(records, key=lambda r: r.revision)
    if last.status in PENDING:
        note = "Helm refuses the release until this record goes"
    elif release.pending == "creating":
        note = (
            "installed by a provider that outlived its CLI, never recorded in the state"
            if last.status == "deployed"
            else "left by the create the run began"
        )
    else:
        return None
    return HelmLeft(release, last.status, last.revision, note, release_owner(records, release.urn))


# ---------------------------------------------------------------------------------------------
# Findings and plan


@dataclass
class Findings:
    project: str
    stack: str
    backend: str
    locks: list[LockHolder] = field(default_factory=list)
    lock_unknown: bool = False
    """The backend's locks cannot be read from here (a DIY bucket other than `file://`)."""
    in_progress: bool = False
    """The Pulumi Cloud says an update of the stack is in progress."""
    pending: list[PendingOp] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    helm: list[HelmLeft] = field(default_factory=list)
    helm_unchecked: list[str] = field(default_factory=list)
    """Why some releases' records could not be read (the cluster not reachable)."""
    empty_attrs: list[str] = field(default_factory=list)
    """Empty `.attrs` files beside the stack's checkpoint (`failed to load checkpoint: EOF`)."""


@dataclass(frozen=True)
class Step:
    kind: str
    """`attrs`, `stop`, `cancel`, `clear`."""
    text: str


def refusal(f: Findings) -> Optional[str]:
    """Why recovery must not act: a run of this stack still going on."""
    for h in f.locks:
        if h.state == "live":
            return (
                f"stack {f.stack} is being updated right now: its lock is held by pid "
                f"{h.lock.pid} on this host ({h.lock.user}, since {stamp(h.lock.timestamp)}), "
                "and that process is running. recover clears what an interrupted run left, not "
                f"a running one: let it finish, or stop it (kill {h.lock.pid}) and run "
                "recover again"
            )
    for run in f.runs:
        if run.live:
            pids = ", ".join(str(p.pid) for p in run.procs)
            return (
                f"a run of stack {f.stack} is going on: its engine ({run.engine}) still "
                f"listens, and its processes ({pids}) are running. Let it finish, or stop its "
                "`pulumi` and run recover again"
            )
    return None


def plan(f: Findings) -> list[Step]:
    """The steps that clear what the run left, in order: the checkpoint readable, its processes
    stopped, its lock removed, its pending creates dropped."""
    steps = []
    if f.empty_attrs:
        steps.append(
            Step(
                "attrs",
                f"delete the empty {', '.join(f.empty_attrs)} the kill left beside the "
                "checkpoint (the checkpoint itself is whole)",
            )
        )
    stale = [p for run in f.runs if not run.live for p in run.procs]
    if stale:
        steps.append(
            Step(
                "stop",
                f"stop the {plural(len(stale), 'process', 'processes')} of the interrupted run "
                f"({', '.join(str(p.pid) for p in stale)}): SIGTERM, then SIGKILL after "
                f"{GRACE:g} s",
            )
        )
    if f.locks or f.in_progress:
        steps.append(Step("cancel", "remove the stack's lock (`pulumi cancel`)"))
    if f.pending or f.lock_unknown:
        kinds = Counter(op.kind for op in f.pending)
        creates = kinds.pop("creating", 0)
        what = []
        if creates:
            what.append(
                f"drop the {plural(creates, 'pending create')} (what they made stays in the "
                "cluster; the next `pulumi up` adopts it)"
            )
        if kinds:
            what.append(f"read back the {plural(sum(kinds.values()), 'other pending operation')}")
        if f.lock_unknown:
            what.append(
                "meet the stack's lock if there is one (this backend's locks cannot be read from "
                "here: one whose CLI is not running here is removed with `pulumi cancel`)"
            )
        steps.append(Step("clear", f"{'; '.join(what)}: `pulumi refresh --clear-pending-creates`"))
    return steps


def plural(n: int, word: str, words: Optional[str] = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).astimezone().isoformat(timespec="seconds")


def render_findings(f: Findings) -> list[str]:
    """What the interrupted run left, one line per fact (and sub-lines)."""
    lines = []
    for h in f.locks:
        state = {
            "live": "that process is running",
            "gone": "that process is gone",
            "elsewhere": "another host: whether that run is alive cannot be seen from here",
        }[h.state]
        lines.append(
            f"lock: held by pid {h.lock.pid} on {h.lock.host} ({h.lock.user}, since "
            f"{stamp(h.lock.timestamp)}): {state}"
        )
    if f.in_progress:
        lines.append("lock: the backend says an update of this stack is in progress")
    if f.lock_unknown:
        lines.append(f"lock: {f.backend} cannot be read from here (only `file://` locks can)")
    if f.pending:
        kinds = Counter(op.kind for op in f.pending)
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        lines.append(f"pending operations ({summary}):")
        lines += [f"  {op.kind:<9} {op.type}  {op.name}" for op in f.pending]
    for run in f.runs:
        state = "its engine still listens" if run.live else "its CLI is gone"
        lines.append(
            f"processes of a run of this stack (engine {run.engine}, found by its {run.source}; "
            f"{state}):"
        )
        lines += [f"  {p.label()}" for p in run.procs]
    for left in f.helm:
        r = left.release
        head = (
            f"Helm release {r.namespace}/{r.name}: revision {left.revision} {left.status} "
            f"({left.note}): "
        )
        if left.foreign:
            lines.append(
                f"{head}it {left.foreign}; not proven this stack's, so neither recover nor the "
                "release's error hook clears it: the next `pulumi up` refuses the release"
            )
        else:
            lines.append(
                f"{head}its records carry this release's marker; left to the release's error "
                "hook, which clears them on the next `pulumi up` (never the objects)"
            )
    lines += [f"Helm records not checked: {why}" for why in f.helm_unchecked]
    if f.empty_attrs:
        lines.append(f"empty metadata beside the checkpoint: {', '.join(f.empty_attrs)}")
    return lines


NO_CHANGE = ("same", "read", "read-replacement", "discard")
"""The operations `--expect-no-changes` accepts: `same` and the reads of existing resources
(pulumi v3.259.0 `pkg/engine/update.go` `HasChanges`, ops from `pkg/resource/deploy/step.go`)."""


def changes(summary: Mapping[str, int]) -> dict[str, int]:
    """The changes a preview's summary proposes, as `--expect-no-changes` counts them."""
    return {k: n for k, n in sorted(summary.items()) if k not in NO_CHANGE and n}


def verdict(summary: Mapping[str, int], stack: str) -> tuple[bool, str]:
    """Whether the stack converged, and the sentence that says so."""
    proposed = changes(summary)
    if not proposed:
        return (
            True,
            f"converged: `pulumi preview --expect-no-changes` proposes no change to {stack}",
        )
    what = ", ".join(f"{n} to {k}" for k, n in proposed.items())
    return False, (
        f"not converged: the preview proposes {what}. Run `pulumi up -s {stack}` to finish what "
        "the interrupted run began"
    )
