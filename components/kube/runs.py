"""The program's record of its own run (`components.model.deploy.runs`), written once per program
process when a `KubeProvider` is made, so that `gpu-inference recover` can find the processes of
this run after its CLI died. Best effort: a record that cannot be written never fails a run."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path
from typing import Optional

from ..model.deploy.runs import (
    RunRecord,
    keep_newest,
    program_run,
    record_name,
    runs_dir,
    stack_key,
)


def own_command_line() -> list[str]:
    """This process's command line as the kernel has it (Linux `/proc`), [] elsewhere."""
    try:
        raw = Path("/proc/self/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def write_record(record: RunRecord, base: Path) -> Path:
    """Write `record` under `base` (atomically), keeping only the stack's newest records."""
    directory = base / stack_key(record.root, record.project, record.stack)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / record_name(record)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(record.to_json())
    os.replace(tmp, path)
    for old in keep_newest([p.name for p in directory.glob("*.json")]):
        (directory / old).unlink(missing_ok=True)
    return path


@functools.cache
def record_this_run() -> Optional[Path]:
    """Record this program's run, when it runs under a Pulumi language host (its command line
    carries `--engine`; not under mocks, nor in an Automation API inline program); the file
    written, or None."""
    found = program_run(own_command_line())
    if found is None:
        return None
    engine, project, stack, root = found
    try:
        record = RunRecord(
            project=project,
            stack=stack,
            root=str(Path(root or os.getcwd()).resolve()),
            engine=engine,
            program_pid=os.getpid(),
            started=time.time(),
        )
        return write_record(record, runs_dir(os.environ, Path.home()))
    except OSError:
        return None
