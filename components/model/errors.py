"""The one error type for bad input: it names the key path, what was given and what is allowed.

Pure: imports no Pulumi. Validators deep in the library raise it without a path; the layer that
knows where a value came from (the stack config, a component's args) prefixes the path with `at`.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad input, found before any resource is registered.

    `path` is the key path (e.g. `gpu-inference:pools[0].taints[1].effect`), `problem` says what
    is wrong with the given value and `allowed` what would be accepted.
    """

    def __init__(self, problem: str, allowed: str = "", path: str = "") -> None:
        self.problem = problem
        self.allowed = allowed
        self.path = path
        super().__init__(self._render())

    def _render(self) -> str:
        text = f"{self.path}: {self.problem}" if self.path else self.problem
        if self.allowed:
            text += f" (allowed: {self.allowed})"
        return text

    def at(self, path: str) -> InputError:
        """The same error, located under `path` (prefixed to any path it already has)."""
        if not path:
            return self
        if not self.path:
            joined = path
        elif self.path.startswith("["):
            joined = path + self.path
        else:
            joined = f"{path}.{self.path}"
        return InputError(self.problem, self.allowed, joined)


def show(value: object) -> str:
    """A given value as an error message quotes it."""
    return repr(value) if isinstance(value, str) else str(value)
