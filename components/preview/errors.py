"""What the CLI says when a stack's program fails: the bad input behind the exception and where
it is (the stack file's line of its key path, the workload file's, or the line of the project's
own program that called a component); an exception the program itself raised is the user's too
(exit 2, naming their file and line); one raised inside this library is a bug of ours (exit 3)."""

from __future__ import annotations

import re
import traceback
from pathlib import Path

import yaml

from ..model.errors import InputError
from ..model.key_paths import child, deepest_line, path_steps
from .preview import PreviewError, Project, StackConfig, show_path


def user_error(exc: BaseException) -> BaseException | None:
    """The bad-input error behind `exc` (an InputError first, else pulumi's RunError,
    InputPropertyError or InputPropertiesError), following causes, contexts and exception
    groups; None when there is none (a bug)."""
    import pulumi.errors

    chain: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if any(e is c for c in chain):
            continue
        chain.append(e)
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend(c for c in (e.__cause__, e.__context__) if c is not None)
    pulumi_kinds = (
        pulumi.errors.RunError,
        pulumi.errors.InputPropertyError,
        pulumi.errors.InputPropertiesError,
    )
    for kinds in ((InputError,), pulumi_kinds):
        for e in chain:
            if isinstance(e, kinds):
                return e
    return None


def error_message(err: BaseException) -> str:
    """The one-line text a user error is shown with."""
    path, reason = getattr(err, "property_path", None), getattr(err, "reason", None)
    if isinstance(path, str) and isinstance(reason, str):
        return f"{path}: {reason}"
    return str(err).strip() or type(err).__name__


CONFIG_KEY = re.compile(r"^([\w.-]+:[\w.-]+?)(?=$|[.\[])")
"""The config key a key path starts with (`gpu-inference:pools` of `gpu-inference:pools[0].name`);
a component's argument path (`GkeGpuNodePool('l4').args.accelerator`) has none."""


def config_line(config: StackConfig, key_path: str) -> int | None:
    """The line in the stack file of the key at a key path like `gpu-inference:pools[0].name`
    (of the deepest part of it that the file has: a missing key's parent, a missing section's
    `config:`); None when the file has no `config:`."""
    m = CONFIG_KEY.match(key_path)
    if not m:
        return None
    try:
        root = yaml.compose(config.file.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return None
    config_node = child(root, "config")
    if config_node is None:
        return None
    found = child(config_node[1], m.group(1))
    if found is None:
        found = child(config_node[1], m.group(1).split(":", 1)[1])
    if found is None:
        return config_node[0]  # a missing section: where it belongs
    line, node = found
    return deepest_line(node, path_steps(key_path, m.end()), line)


def error_where(project: Project, config: StackConfig, err: InputError) -> str:
    """Where a config error is, for the line under its message: the stack file and the line of
    its key path, or, for an item of a workload file (the program's error carries `file`, `line`
    and the `key` that named the file), that file's line and where the stack file names it."""
    file, key = getattr(err, "file", None), getattr(err, "key", None)
    if isinstance(file, str) and isinstance(key, str):
        line = getattr(err, "line", None)
        named = config_line(config, key)
        return (
            f"workload file: {show_path(project.dir / file)}"
            + (f":{line}" if isinstance(line, int) else "")
            + f", named by {key} in {show_path(config.file)}"
            + (f":{named}" if named else "")
        )
    line = config_line(config, err.path)
    return f"stack config: {show_path(config.file)}" + (f":{line}" if line else "")


class ProgramError(PreviewError):
    """An exception the project's own program raised (its file and line in `where`): the
    user's code, not a bug of ours, so exit 2 like any bad input."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message)
        self.where = where


_LIBRARY = (
    Path(__file__).resolve().parents[1],
    Path(__file__).resolve().parents[2] / "gpu_inference",
)
"""This library's files: `components/` (in the wheel, `gpu_inference/`) and the checkout's
`gpu_inference/` shim."""


def _whose(project: Project, filename: str) -> str | None:
    """`program` for a file of the project's own code, `library` for one of ours, None for the
    rest (Python's, the Pulumi SDKs', other installed packages')."""
    if filename.startswith("<"):
        return None
    path = Path(filename).resolve()
    if any(path.is_relative_to(lib) for lib in _LIBRARY):
        return "library"
    if not path.is_relative_to(project.dir) or {"site-packages", "dist-packages"} & set(path.parts):
        return None
    return "program"


def program_line(project: Project, err: BaseException, *, raised: bool = False) -> str | None:
    """`FILE:LINE` of the project's own code in `err`'s traceback: the innermost such frame (the
    line of the program that called what failed). With `raised`, only when the program raised
    `err` itself, i.e. no frame of this library is inside that one: else it is a bug of ours."""
    found = None
    for frame, line in traceback.walk_tb(err.__traceback__):
        whose = _whose(project, frame.f_code.co_filename)
        if whose == "program":
            found = f"{show_path(Path(frame.f_code.co_filename))}:{line}"
        elif whose == "library" and raised:
            found = None
    return found


def program_error(project: Project, config: StackConfig, err: BaseException) -> BaseException:
    """What the CLI reports for an exception out of the project's program: an InputError or a
    Pulumi error located (`_gpu_inference_where`: its stack config line, or the program's line
    for a component's error), the program's own exception as a ProgramError naming its line,
    or `err` itself, a bug of ours (exit 3)."""
    bad = user_error(err)
    if bad is None:
        line = program_line(project, err, raised=True)
        if line is None:
            return err
        problem = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        program = ProgramError(problem, f"program: {line}")
        return program
    in_files = hasattr(bad, "file") or CONFIG_KEY.match(getattr(bad, "path", ""))
    if isinstance(bad, InputError) and not in_files:
        line = program_line(project, bad) or program_line(project, err)
        if line is not None:
            err._gpu_inference_where = f"program: {line}"  # type: ignore[attr-defined]
            return err
    if isinstance(bad, InputError) and bad.path:
        err._gpu_inference_where = error_where(project, config, bad)  # type: ignore[attr-defined]
    else:
        err._gpu_inference_where = f"stack config: {show_path(config.file)}"  # type: ignore[attr-defined]
    return err


__all__ = [
    "CONFIG_KEY",
    "ProgramError",
    "config_line",
    "error_message",
    "error_where",
    "program_error",
    "program_line",
    "user_error",
]
