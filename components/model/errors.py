"""The one error type for bad input: it names the key path, what was given and what is allowed.

Pure: imports no Pulumi. Validators deep in the library raise it without a path; the layer that
knows where a value came from (the stack config, a component's args) prefixes the path with `at`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable


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


def shown(value: object) -> str:
    """A given value as the stack config's errors quote it (in YAML's words: `true`, JSON for
    lists and mappings, cut to 60 characters)."""
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:57] + "..."
    if isinstance(value, bool):
        return "true" if value else "false"
    return show(value)


def too_short(n: int) -> InputError:
    """A list shorter than its declared `min_items` (pydantic's `too_short`, as worded when the
    stack config is read)."""
    return InputError(
        f"the list is empty; at least {n} item{'s' if n != 1 else ''} required",
        f"a list of at least {n}",
    )


def not_a_choice(given: object, choices: Iterable[object]) -> InputError:
    """A value outside its declared `choices` (a pydantic `Literal`'s refusal)."""
    options = [str(c) for c in choices]
    return InputError(
        f"{shown(given)} is not a valid value{did_you_mean(given, options)}", ", ".join(options)
    )


def type_error(expected: str, given: object, hint: str = "") -> InputError:
    """`expected a string, got 5`: a value of the wrong type."""
    return InputError(f"expected {expected}, got {shown(given)}{hint}")


CLOUD_PROVIDERS = {"aws": "eks", "amazon": "eks", "gcp": "gke", "google": "gke", "azure": "aks"}
"""A cloud's own name where its provider is asked for (`provider: aws`): that provider. By
spelling alone, `aws` is nearest to `aks`."""


def closest(given: object, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice `given` most likely meant, for a "did you mean": the same word in another case
    (or without `_`), the provider of the cloud it names, else the nearest spelling (difflib's,
    at least `cutoff` alike); None when none is close."""
    text, options = str(given), list(choices)
    for option in options:
        if option.lower() == text.lower().replace("_", ""):
            return option
    provider = CLOUD_PROVIDERS.get(text.lower())
    if provider in options:
        return provider
    close = difflib.get_close_matches(text, options, n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(given: object, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """` (did you mean 'x'?)` for the `closest` choice, or "" when none is close."""
    found = closest(given, choices, cutoff)
    return f" (did you mean {found!r}?)" if found is not None else ""
