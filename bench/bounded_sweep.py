"""Every integer of every example stack set to a huge value, one at a time: does the preview stay
bounded? And the check of a graph with a Seldon Server at the int32 maximum.

Run by hand (not a test):
    python bench/bounded_sweep.py [--values 1000000000000,2147483647] [--stacks gke-dev,eks-esc]
                                  [--timeout 30] [--mem-limit-gb 4] [--json out.json]

For each stack in stacks/ it finds every integer field (not a bool) in the stack's config and in the
`pulumiConfig` of the ESC environments it imports (stacks/esc/), the first list item holding it
unless --all-indexes, sets that one to each value, and
runs `python -m components preview STACK` on a copy of the project in a fresh process with its
address space capped (`RLIMIT_AS`, --mem-limit-gb: a guard for the machine, not the bound judged)
and a wall-clock timeout. Each run prints the exit code, wall time, peak RSS (the child's
`ru_maxrss` from wait4, what `/usr/bin/time -v` reports) and the message's first line. A run
passes when it exits 1 or 2 within 10 s of CPU and 1 GB and its message names the key it changed
(CPU, not wall: on a shared machine a child waits for a core; the wall time is printed too, and
`RLIMIT_CPU`, --cpu-limit, ends a child that would hang).

Then it runs `python -m components check` on gke-dev's preview graph with its Seldon Servers'
`replicas` set to each of --replicas, under the same limits.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 10.0
LIMIT_RSS_MB = 1024.0


def int_paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths to every int (bools excluded) inside a YAML value."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from int_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from int_paths(v, (*path, i))


def set_at(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    node = doc
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def show(path: tuple[Any, ...]) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def generic(path: tuple[Any, ...]) -> str:
    """The field, without list indexes: `gpu-inference:pools[].maxNodes`."""
    return re.sub(r"\[\d+\]", "[]", show(path))


def key_words(path: tuple[Any, ...]) -> list[str]:
    """What the message must name: the last key of the path."""
    keys = [s for s in path if isinstance(s, str)]
    return [keys[-1].split(":")[-1]]


def run(
    argv: list[str], cwd: Path, timeout: float, mem_gb: float, cpu_limit: float = 30
) -> dict[str, Any]:
    """One child: exit code, wall and CPU seconds, peak RSS (MB), its output."""
    out_path = cwd / "child.out"
    err_path = cwd / "child.err"

    def limit() -> None:
        cap = int(mem_gb * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        # CPU seconds as well as wall: on a shared machine a child may wait for a core.
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_limit), int(cpu_limit) + 5))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out_path.open("wb") as out, err_path.open("wb") as err:
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child: limits, files, exec
            try:
                limit()
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        killed = False
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() - start > timeout:
                os.kill(pid, 9)
                killed = True
                _, status, usage = os.wait4(pid, 0)
                break
            time.sleep(0.02)
        wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    text = err_path.read_text(errors="replace") + out_path.read_text(errors="replace")
    return {
        "exit": "timeout" if killed else code,
        "wall": round(wall, 2),
        "cpu": round(usage.ru_utime + usage.ru_stime, 2),
        "rss_mb": round(usage.ru_maxrss / 1024, 1),
        "message": text.strip(),
    }


def project_copy(where: Path) -> Path:
    proj = where / "project"
    proj.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, proj / name)
    shutil.copytree(ROOT / "stacks", proj / "stacks")
    return proj


def stack_targets(stack: str) -> list[tuple[Path, tuple[Any, ...], Any]]:
    """(file relative to the project, path inside its YAML, the document) for each int the stack
    reads: its own config, and its environments' pulumiConfig."""
    rel = Path("stacks") / f"Pulumi.{stack}.yaml"
    doc = yaml.safe_load((ROOT / rel).read_text())
    out = [(rel, ("config", *p), doc) for p in int_paths(doc.get("config") or {})]
    for env in doc.get("environment") or []:
        env_rel = Path("stacks/esc") / f"{env}.yaml"
        env_doc = yaml.safe_load((ROOT / env_rel).read_text())
        pc = (env_doc.get("values") or {}).get("pulumiConfig") or {}
        out += [(env_rel, ("values", "pulumiConfig", *p), env_doc) for p in int_paths(pc)]
    return out


def sweep(args: argparse.Namespace) -> list[dict[str, Any]]:
    stacks = (
        args.stacks.split(",")
        if args.stacks
        else sorted(
            p.name[len("Pulumi.") : -len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
        )
    )
    values = [int(v) for v in args.values.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        proj = project_copy(Path(tmp))
        for stack in stacks:
            seen: set[str] = set()
            for rel, path, doc in stack_targets(stack):
                field = generic(path[1:] if path[0] == "config" else path[2:])
                if field in seen and not args.all_indexes:
                    continue  # the same field of another list item
                if args.fields and not any(f in field for f in args.fields.split(",")):
                    continue
                seen.add(field)
                for value in values:
                    changed = copy.deepcopy(doc)
                    set_at(changed, path, value)
                    original = (proj / rel).read_text()
                    (proj / rel).write_text(yaml.safe_dump(changed, sort_keys=False))
                    try:
                        argv = [
                            sys.executable, "-m", "components", "preview", stack,
                            "--project-dir", str(proj), "--out", str(Path(tmp) / "out"),
                        ]  # fmt: skip
                        got = run(argv, Path(tmp), args.timeout, args.mem_limit_gb, args.cpu_limit)
                    finally:
                        (proj / rel).write_text(original)
                    key = show(path[1:] if path[0] == "config" else path[2:])
                    named = all(w in got["message"] for w in key_words(path))
                    ok = (
                        got["exit"] in (1, 2)
                        and got["cpu"] <= LIMIT_S
                        and got["rss_mb"] <= LIMIT_RSS_MB
                        and named
                    )
                    row = {
                        "stack": stack,
                        "key": key,
                        "field": field,
                        "value": value,
                        **got,
                        "named": named,
                        "ok": ok,
                    }
                    rows.append(row)
                    first = next(
                        (ln for ln in got["message"].splitlines() if "error" in ln.lower()),
                        got["message"].splitlines()[0] if got["message"] else "",
                    )
                    print(
                        f"{'ok ' if ok else 'BAD'} {stack:18} {key:60} {value:>14} "
                        f"exit={got['exit']!s:7} {got['wall']:6.2f}s {got['cpu']:6.2f}cpu "
                        f"{got['rss_mb']:7.1f}MB "
                        f"{first[:110]}",
                        flush=True,
                    )
    return rows


def seldon_graph(tmp: Path, replicas: int) -> list[dict[str, Any]]:
    """gke-dev's preview graph with its Seldon Servers at `replicas`."""
    out = tmp / "gke-dev"
    if not (out / "resources.json").exists():
        argv = [sys.executable, "-m", "components", "preview", "gke-dev", "--project-dir",
                str(ROOT), "--out", str(out)]  # fmt: skip
        run(argv, tmp, 60, 4)
    graph = json.loads((out / "resources.json").read_text())
    servers = [e for e in graph if e["type"] == "kubernetes:mlops.seldon.io/v1alpha1:Server"]
    assert servers, "gke-dev has no Seldon Server"
    for e in servers:
        e["inputs"]["spec"]["replicas"] = replicas
    return graph


def graph_check(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for replicas in [int(v) for v in args.replicas.split(",")]:
            path = Path(tmp) / "resources.json"
            path.write_text(json.dumps(seldon_graph(Path(tmp), replicas)))
            argv = [sys.executable, "-m", "components", "check", str(path)]
            got = run(argv, Path(tmp), args.timeout, args.mem_limit_gb, args.cpu_limit)
            rows.append({"replicas": replicas, **got})
            tail = got["message"].splitlines()[-3:]
            print(
                f"check replicas={replicas:>12} exit={got['exit']!s:7} {got['wall']:6.2f}s "
                f"{got['cpu']:6.2f}cpu "
                f"{got['rss_mb']:7.1f}MB {' | '.join(tail)[:200]}",
                flush=True,
            )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--values", default="1000000000000,2147483647")
    p.add_argument("--stacks", default="", help="comma-separated stack names (default: all)")
    p.add_argument("--timeout", type=float, default=120.0, help="wall seconds")
    p.add_argument("--cpu-limit", type=float, default=30.0, help="CPU seconds (RLIMIT_CPU)")
    p.add_argument("--mem-limit-gb", type=float, default=4.0)
    p.add_argument("--replicas", default="100000,2147483647", help="for the graph check")
    p.add_argument(
        "--all-indexes", action="store_true", help="every list item, not the first of each field"
    )
    p.add_argument("--fields", default="", help="comma-separated parts of the fields to run")
    p.add_argument("--skip-stacks", action="store_true")
    p.add_argument("--skip-graph", action="store_true")
    p.add_argument("--json", default="", help="write every row here")
    args = p.parse_args()
    rows: dict[str, Any] = {}
    if not args.skip_stacks:
        rows["stacks"] = sweep(args)
        bad = [r for r in rows["stacks"] if not r["ok"]]
        fields = {r["field"] for r in rows["stacks"]}
        print(
            f"\n{len(rows['stacks'])} runs over {len(fields)} distinct fields: "
            f"{len(bad)} failed ({len({r['field'] for r in bad})} fields)"
        )
        for r in rows["stacks"]:
            if not r["ok"]:
                print(f"  {r['field']} = {r['value']} ({r['stack']}): exit {r['exit']}")
    if not args.skip_graph:
        rows["graph"] = graph_check(args)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
