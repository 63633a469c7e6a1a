"""Key paths and their line in a YAML document (the stack file, a workload file)."""

from __future__ import annotations

import pytest
import yaml

from components.model.key_paths import deepest_line, path_steps

DOC = """\
pools:
  - name: a
    labels:
      "a.b/c": x
      -tier: gpu
  - name: b
    taints:
      - {key: k, effect: NoSchedule}
"""


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("pools[0].name", ["pools", 0, "name"]),
        ('pools[0].labels["a.b/c"]', ["pools", 0, "labels", "a.b/c"]),
        ("pools[0].labels.-tier", ["pools", 0, "labels", "-tier"]),
        ("pools[1].taints[0].effect", ["pools", 1, "taints", 0, "effect"]),
        ("pools[x]", ["pools"]),  # stops at the first part that is not a step
    ],
)
def test_path_steps(path: str, steps: list) -> None:
    assert path_steps(path, len("pools")) == steps[1:]
    assert [path.split("[")[0].split(".")[0], *path_steps(path, len("pools"))] == steps


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("pools[0].name", 2),
        ('pools[0].labels["a.b/c"]', 4),
        ("pools[0].labels.-tier", 5),
        ("pools[1].taints[0]", 8),
        ("pools[1].taints[0].value", 8),  # a missing key: its parent's line
        ("pools[7].name", 1),
    ],
)
def test_deepest_line(path: str, line: int) -> None:
    node = yaml.compose(DOC, Loader=yaml.SafeLoader)
    assert deepest_line(node, ["pools", *path_steps(path, len("pools"))]) == line


def test_a_key_the_document_lacks_gives_the_line_given() -> None:
    node = yaml.compose(DOC, Loader=yaml.SafeLoader)
    assert deepest_line(node, ["knative"], 9) == 9
    assert deepest_line(node, ["knative"]) is None
