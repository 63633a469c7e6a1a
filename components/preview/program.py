"""The project's own program, when it fails: its exception is the user's (exit 2, naming the file
and line of their code), unless it was raised inside this library (a bug of ours, exit 3)."""

from __future__ import annotations

import traceback
from pathlib import Path

from ..model.errors import InputError
from .preview import (
    CONFIG_KEY,
    PreviewError,
    Project,
    StackConfig,
    error_where,
    show_path,
    user_error,
)


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
    if isinstance(bad, InputError) and not CONFIG_KEY.match(bad.path):
        line = program_line(project, bad) or program_line(project, err)
        if line is not None:
            err._gpu_inference_where = f"program: {line}"  # type: ignore[attr-defined]
            return err
    if isinstance(bad, InputError) and bad.path:
        err._gpu_inference_where = error_where(project, config, bad)  # type: ignore[attr-defined]
    else:
        err._gpu_inference_where = f"stack config: {show_path(config.file)}"  # type: ignore[attr-defined]
    return err


__all__ = ["ProgramError", "program_error", "program_line"]
