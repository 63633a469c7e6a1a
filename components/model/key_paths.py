"""Key paths (`pools[0].taints[1].effect`, `labels["a.b/c"]`) and the line of one in a YAML
document: how an error points at its line in the stack file or a workload file.

Pure: parses text and walks nodes the caller composed; reads no file."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import yaml

# `.key`, `[3]`, or `["a.b/c"]` (a map key holding `.` or `/`, JSON-quoted), after a first key.
_STEP = re.compile(r'\.([^.\[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def path_steps(path: str, pos: int = 0) -> list[str | int]:
    """The keys and indexes of `path` from `pos` on (up to the first part that is not a step)."""
    steps: list[str | int] = []
    while pos < len(path):
        step = _STEP.match(path, pos)
        if step is None:
            break
        pos = step.end()
        if step.group(3) is not None:
            steps.append(json.loads(step.group(3)))
        elif step.group(2) is not None:
            steps.append(int(step.group(2)))
        else:
            steps.append(step.group(1))
    return steps


def child(node: Any, key: str | int) -> tuple[int, Any] | None:
    """(line of the key or item, value node) of a mapping key or a sequence item."""
    if isinstance(node, yaml.MappingNode) and isinstance(key, str):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k.start_mark.line + 1, v
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
        item = node.value[key]
        return item.start_mark.line + 1, item
    return None


def deepest_line(node: Any, steps: Sequence[str | int], line: int | None = None) -> int | None:
    """The line of the deepest of `steps` the node tree has (`line` when it has not the first)."""
    for key in steps:
        found = child(node, key)
        if found is None:
            break
        line, node = found
    return line
