"""Which processes belong to one run of one stack, so that `gpu-inference recover` can stop the
processes a killed `pulumi up` left running, and only those.

Pulumi starts every plugin of a run (the language host, each resource provider) with the address
of the CLI's engine server as an argument, and in a process group of its own (pulumi v3.259.0
`sdk/go/common/resource/plugin/plugin.go` `ExecPlugin` and `cmdutil.RegisterProcessGroup`;
`provider_plugin.go` `NewProvider` passes `host.ServerAddr()`, `langruntime_plugin.go`
`buildArgsForNewPlugin` the same as the last argument). The Python program gets it as
`--engine ADDR`, beside `--project`, `--stack` and `--root_directory`
(`sdk/python/cmd/pulumi-language-python/main.go` `constructArguments`). When the CLI dies its
plugins are re-parented and keep running (a provider for good: `pkg/resource/provider/main.go`
runs no health check of the engine), and nothing in a provider's command line names the stack.
So the program records, per run, the engine address next to its stack (`RunRecord`), and a
process belongs to the run when its command line carries that address.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

STATE_DIR = "gpu-inference/runs"
"""Under `$XDG_STATE_HOME` (default `~/.local/state`): one directory per stack."""
KEEP = 20
"""How many run records a stack keeps (the newest)."""
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True)
class RunRecord:
    """One run of a stack's program, as the program saw it when it started."""

    project: str
    stack: str
    root: str
    """The project's directory (where Pulumi.yaml is), resolved."""
    engine: str
    """The CLI's engine address every plugin of the run has on its command line."""
    program_pid: int
    started: float
    """When the program wrote the record (seconds since the epoch)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True) + "\n"


def parse_record(text: str) -> Optional[RunRecord]:
    """A record from its file's text; None for anything else (a half-written or foreign file)."""
    try:
        data = json.loads(text)
        return RunRecord(
            project=str(data["project"]),
            stack=str(data["stack"]),
            root=str(data["root"]),
            engine=str(data["engine"]),
            program_pid=int(data["program_pid"]),
            started=float(data["started"]),
        )
    except (ValueError, KeyError, TypeError):
        return None


def runs_dir(env: Mapping[str, str], home: Path) -> Path:
    """Where run records live: `$XDG_STATE_HOME/gpu-inference/runs` (XDG base directory spec)."""
    base = env.get("XDG_STATE_HOME") or str(home / ".local" / "state")
    return Path(base) / STATE_DIR


def stack_key(root: str, project: str, stack: str) -> str:
    """The directory name of one stack's records: the same project directory, project and stack."""
    return hashlib.sha256(f"{root}\0{project}\0{short_stack(stack)}".encode()).hexdigest()[:24]


def short_stack(stack: str) -> str:
    """`dev` from `dev`, `org/dev` or `org/project/dev`."""
    return stack.rsplit("/", 1)[-1]


def record_name(record: RunRecord) -> str:
    """The file name of a record: unique per run (engine port and program pid)."""
    port = engine_port(record.engine)
    return f"{int(record.started)}-{port or 0}-{record.program_pid}.json"


def option(argv: Sequence[str], name: str) -> Optional[str]:
    """The value of `--name VALUE` or `--name=VALUE` in a command line."""
    flag = f"--{name}"
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1 :]
    return None


def program_run(argv: Sequence[str]) -> Optional[tuple[str, str, str, Optional[str]]]:
    """(engine, project, stack, root directory) of a Pulumi Python program's command line, or None
    when it is not one (no `--engine`, `--project` and `--stack`)."""
    engine, project, stack = (option(argv, k) for k in ("engine", "project", "stack"))
    if not engine or not project or not stack:
        return None
    return engine, project, stack, option(argv, "root_directory")


def engine_port(address: str) -> Optional[int]:
    """The port of a local engine address (`127.0.0.1:PORT`); None for anything else."""
    host, sep, port = address.rpartition(":")
    if not sep or host not in LOCAL_HOSTS or not port.isdigit():
        return None
    value = int(port)
    return value if 0 < value < 65536 else None


def carries_engine(argv: Sequence[str], engine: str) -> bool:
    """Whether a command line is one a plugin or program of the run with `engine` gets: the address
    as a whole argument (plugins) or as `--engine`'s value (the program)."""
    return engine in argv[1:] or option(argv, "engine") == engine


def keep_newest(names: Sequence[str], keep: int = KEEP) -> list[str]:
    """The record files to delete so that the newest `keep` stay (names start with the time)."""

    def started(name: str) -> int:
        head = name.split("-", 1)[0]
        return int(head) if head.isdigit() else 0

    ordered = sorted(names, key=lambda n: (started(n), n), reverse=True)
    return sorted(ordered[keep:])
