"""Progress of a long preview on a terminal: one line on stderr, overwritten in place, naming the
phase and its counts (`running the stack program: 2233 resources, 1100 workloads`). Nothing is
written when stderr is not a terminal (or is a `TERM=dumb` one, which cannot erase a line), nor for
a stack of a few dozen workloads or fewer (it previews in a second or two); the files a preview
writes never change.

The program phase is fed one call per registration (`registered`), kept cheap: a counter, a
dictionary look-up of the type, and a clock read only once the line shows; the line is redrawn at
most every `interval` seconds (a 1000-model preview registers about 2200 resources: a few dozen
redraws, not thousands).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import TextIO

from ..check.graph import is_workload

THRESHOLD = 36
"""Workloads (`check.graph.is_workload`) past which the line shows ("more than a few dozen")."""
INTERVAL = 0.1
"""Seconds between two redraws of the program phase, at least."""
CLEAR = "\r\x1b[K"
"""Back to the line's start, and erase it (ANSI EL)."""
PREFIX = "gpu-inference preview: "


def on_terminal(stream: TextIO, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether `stream` is a terminal that can redraw a line."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and environ.get("TERM") != "dumb"


class Progress:
    """The progress line of one preview on `stream` (see the module docstring)."""

    def __init__(
        self,
        stream: TextIO,
        *,
        enabled: bool | None = None,
        threshold: int = THRESHOLD,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = on_terminal(stream) if enabled is None else enabled
        self.stream = stream
        self.threshold = threshold
        self.interval = interval
        self.clock = clock
        self.resources = 0
        self.workloads = 0
        self.showing = False
        self._last = float("-inf")
        self._is_workload: dict[str, bool] = {}

    def registered(self, resource_type: str) -> None:
        """One registration of the stack program."""
        self.resources += 1
        workload = self._is_workload.get(resource_type)
        if workload is None:
            workload = self._is_workload[resource_type] = is_workload(resource_type)
        if workload:
            self.workloads += 1
        if not self.showing and self.workloads <= self.threshold:
            return
        now = self.clock()
        if now - self._last >= self.interval:
            self._last = now
            self._draw(f"running the stack program: {self._counts()}")

    def phase(self, text: str) -> None:
        """A later phase (`checking placement`, `writing files`), once the stack is large."""
        if self.showing or self.workloads > self.threshold:
            self._draw(f"{text} ({self._counts()})")

    def done(self) -> None:
        """Erase the line, so that what the preview prints next starts on a clean line."""
        if self.showing:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.showing = False

    def _counts(self) -> str:
        return f"{self.resources} resources, {self.workloads} workloads"

    def _draw(self, text: str) -> None:
        if not self.enabled:
            return
        self.showing = True
        self.stream.write(f"{CLEAR}{PREFIX}{text}")
        self.stream.flush()


__all__ = ["CLEAR", "INTERVAL", "PREFIX", "THRESHOLD", "Progress", "on_terminal"]
