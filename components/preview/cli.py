"""`gpu-inference`: preview a stack offline, or run the placement check on a graph file.

    gpu-inference preview STACK [--out DIR] [--project-dir DIR] [--env-file FILE]
                              [--not-judged {info,error}] [--debug]
    gpu-inference check FILE [--json] [--[no-]extended-resource-toleration]
                             [--not-judged {info,error}] [--debug]
    gpu-inference recover STACK [--yes] [--project-dir DIR] [--debug]

Exit codes: 0 clean (for `recover`: the stack converged); 1 the placement check found an error
(for `recover`: the plan awaits `--yes`, or `pulumi up` has work left); 2 bad config or usage, or
a refusal (one message, no traceback); 3 an internal error (a bug: `--debug` shows the traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .errors import error_message, program_error, user_error
from .preview import (
    OUTPUT_FILES,
    PlacementResult,
    PreviewError,
    collector_paused,
    find_project_dir,
    graph_entries,
    load_project,
    load_stack_config,
    render_tree,
    run_placement,
    run_stack,
    show_path,
    to_json_text,
    write_outputs,
)

EXIT_OK = 0
EXIT_PLACEMENT = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so `main` returns the code."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        raise PreviewError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpu-inference",
        description="Preview a gpu-inference stack offline and check where every pod can land.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an unexpected error"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_preview(sub)
    _add_check(sub)
    _add_recover(sub)
    return parser


def _debug() -> argparse.ArgumentParser:
    """`--debug` after the command too (the top-level one keeps its value when not given)."""
    debug = _Parser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show the traceback of an unexpected error",
    )
    return debug


def _judged() -> argparse.ArgumentParser:
    judged = _Parser(add_help=False)
    judged.add_argument(
        "--not-judged",
        choices=("info", "error"),
        default="info",
        help="how a finding that says a rule could not judge a pod (GI006, GI022, GI044, GI059: "
        "what is missing and how to give it) is reported: info (default), or error, for a CI "
        "gate that passes only what every rule judged (exit 1)",
    )
    return judged


def _project_dir_option() -> argparse.ArgumentParser:
    project = _Parser(add_help=False)
    project.add_argument(
        "--project-dir",
        type=Path,
        metavar="DIR",
        help="the Pulumi project (default: the nearest parent of the working directory "
        "holding Pulumi.yaml)",
    )
    return project


def _add_preview(sub: Any) -> None:
    pre = sub.add_parser(
        "preview",
        parents=[_debug(), _judged(), _project_dir_option()],
        help="run the stack program under Pulumi mocks and write what `pulumi up` would create",
        description=(
            "Run the project's __main__.py under Pulumi's mock runtime with "
            "stacks/Pulumi.STACK.yaml as config (no cloud, no cluster, no Pulumi CLI) and write "
            "manifests.yaml, resources.json, placement.json and placement.md."
        ),
    )
    pre.add_argument("stack", metavar="STACK", help="stack name (stacks/Pulumi.STACK.yaml)")
    pre.add_argument(
        "--out", type=Path, metavar="DIR", help="output directory (default: PROJECT/build/STACK)"
    )
    pre.add_argument(
        "--env-file",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="the values of the stack's ESC environments, instead of their definitions in "
        "stacks/esc/: `pulumi env open NAME --format detailed > FILE.json`, or a definition "
        "(YAML); repeat for several, merged in order",
    )
    pre.set_defaults(func=cmd_preview)


def _add_check(sub: Any) -> None:
    chk = sub.add_parser(
        "check",
        parents=[_debug(), _judged()],
        help="run the placement check on a resources.json-shaped graph file",
        description=(
            "Run the placement check on a graph file: a JSON list of {type, name, inputs} "
            "(a preview's resources.json, or written by hand). FILE may be - for stdin."
        ),
    )
    chk.add_argument("file", metavar="FILE", help="graph file (JSON), or - for stdin")
    chk.add_argument("--json", action="store_true", help="print the report as JSON")
    chk.add_argument(
        "--extended-resource-toleration",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="whether the cluster runs the ExtendedResourceToleration admission plugin "
        "(default: the check decides from the graph's pools)",
    )
    chk.set_defaults(func=cmd_check)


def _add_recover(sub: Any) -> None:
    rec = sub.add_parser(
        "recover",
        parents=[_debug(), _project_dir_option()],
        help="clear what an interrupted `pulumi up` left, then check the stack converged",
        description=(
            "Find what an interrupted `pulumi up` of STACK left (its lock, pending operations, "
            "its processes still running, Helm releases left pending) and show the plan; with "
            "--yes carry it out (stop those processes, `pulumi cancel`, `pulumi refresh "
            "--clear-pending-creates`) and end with `pulumi preview --expect-no-changes`. "
            "Never touches another stack's processes or lock."
        ),
    )
    rec.add_argument("stack", metavar="STACK", help="the stack (as `pulumi -s STACK`)")
    rec.add_argument("--yes", action="store_true", help="carry the plan out")
    rec.set_defaults(func=cmd_recover)


def run() -> None:
    """The process entry point (the `gpu-inference` script, `python -m components`): `main`, then
    the process ends without tearing the interpreter down. Freeing a large preview's heap object
    by object (and a last full collection) took a fifth of a 1000-model preview; by then the files
    are written and closed, and nothing here registers work to run at exit."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line, in this process. Returns the exit code (see the module docstring)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help
        return exit_.code if isinstance(exit_.code, int) else EXIT_OK
    except PreviewError as err:
        _error(str(err))
        return EXIT_USAGE
    if args.command is None:
        build_parser().print_help(sys.stderr)
        return EXIT_USAGE
    debug = bool(getattr(args, "debug", False))
    try:
        return int(args.func(args))
    except PreviewError as err:
        if debug:
            traceback.print_exc()
        _error(str(err), getattr(err, "where", None))
        return EXIT_USAGE
    except Exception as err:
        if debug:
            traceback.print_exc()
        bad = user_error(err)
        if bad is not None:
            _error(error_message(bad), getattr(err, "_gpu_inference_where", None))
            return EXIT_USAGE
        print(f"internal error: {type(err).__name__}: {err}", file=sys.stderr)
        if not debug:
            print("run with --debug for the traceback", file=sys.stderr)
        return EXIT_INTERNAL


def _error(message: str, where: str | None = None) -> None:
    print(f"error: {message}", file=sys.stderr)
    if where:
        print(f"  ({where})", file=sys.stderr)


def _project_dir(given: Path | None) -> Path:
    if given is None:
        return find_project_dir()
    project_dir = given.resolve()
    if not (project_dir / "Pulumi.yaml").is_file():
        raise PreviewError(f"{show_path(project_dir)}: no Pulumi.yaml in the project directory")
    return project_dir


def cmd_recover(args: argparse.Namespace) -> int:
    from .recover import recover  # the Automation API: loaded only for this command

    return recover(args.stack, _project_dir(args.project_dir), args.yes, sys.stdout)


def cmd_preview(args: argparse.Namespace) -> int:
    from .progress import Progress

    project_dir = _project_dir(args.project_dir)
    project = load_project(project_dir)
    # From the config's parse until the process ends (`run`): the run's cycles are never scanned
    # (`collector_paused`).
    with collector_paused():
        config = load_stack_config(project, args.stack, args.env_file)
        for note in config.notes:
            print(note, file=sys.stderr)
        progress = Progress(sys.stderr)
        try:
            try:
                graph = run_stack(
                    project, config, progress.registered if progress.enabled else None
                )
            except Exception as err:
                located = program_error(project, config, err)
                if located is err:
                    raise
                raise located from err
            progress.phase("checking placement")
            entries = graph_entries(graph.resources)
            placement = run_placement(entries, not_judged=args.not_judged)
            out_dir = args.out if args.out is not None else project.dir / "build" / args.stack
            progress.phase("writing files")
            title = f"gpu-inference preview {args.stack}: project {project.name}"
            write_outputs(out_dir, entries, placement, title)
        finally:
            progress.done()
        out = sys.stdout
        print(
            f"Previewing stack {args.stack} of {project.name} offline "
            "(Pulumi mocks: no cloud, no cluster):\n",
            file=out,
        )
        out.write(render_tree(entries, f"{project.name}-{args.stack}"))
        print(file=out)
        _report(len(entries), placement, out)
        print(f"\nWrote {show_path(out_dir)}/: {' '.join(OUTPUT_FILES)}", file=out)
        return EXIT_PLACEMENT if placement.errors else EXIT_OK


def _report(count: int, placement: PlacementResult, out: TextIO) -> None:
    summary = placement.json.get("summary", {})
    pods = (
        f"; pods: {summary['judgedClean']} judged clean, {summary['notJudged']} not judged by "
        "some rule"
        if "judgedClean" in summary
        else ""
    )
    print(
        f"{count} resources; placement: {_plural(placement.errors, 'error')}, "
        f"{_plural(placement.warnings, 'warning')}{pods}",
        file=out,
    )
    for finding in placement.findings:
        if finding.severity in ("error", "warning"):
            print(f"  {finding.line()}", file=out)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def load_graph_file(file: str) -> list[dict[str, Any]]:
    """A graph file's entries, checked for shape: a list of objects with string `type` and
    `name` and an object `inputs` (missing: empty). Bad files raise PreviewError."""
    where = "<stdin>" if file == "-" else show_path(Path(file))
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PreviewError(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise PreviewError(f"{where}: cannot read: {err}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise PreviewError(f"{where}:{err.lineno}:{err.colno}: invalid JSON: {err.msg}") from None
    if not isinstance(data, list):
        raise PreviewError(
            f"{where}: a graph file is a JSON list of {{type, name, inputs}}, "
            f"got {type(data).__name__}"
        )
    entries = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise PreviewError(
                f"{where}: [{i}]: each entry is an object, got {type(item).__name__}"
            )
        for key in ("type", "name"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise PreviewError(f"{where}: [{i}].{key}: missing or not a string")
        inputs = item.get("inputs", {})
        if not isinstance(inputs, dict):
            raise PreviewError(
                f"{where}: [{i}].inputs: must be an object, got {type(inputs).__name__}"
            )
        entries.append({**item, "inputs": inputs})
    return entries


def cmd_check(args: argparse.Namespace) -> int:
    entries = load_graph_file(args.file)
    placement = run_placement(
        entries,
        extended_resource_toleration=args.extended_resource_toleration,
        not_judged=args.not_judged,
    )
    if args.json:
        sys.stdout.write(to_json_text(placement.json))
    else:
        _report(len(entries), placement, sys.stdout)
    return EXIT_PLACEMENT if placement.errors else EXIT_OK


__all__ = ["build_parser", "load_graph_file", "main"]
