"""Stack and project files are read by `preview.load_yaml_file`: plain documents built straight
from libyaml's nodes, anything else by PyYAML's safe loader (which refuses a key given twice). The
value is the safe loader's in every case, and an error names the same file, line and problem."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from components.preview.preview import PreviewError, load_yaml_file


def load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    return load_yaml_file(path, "stack file")


keys = st.text(alphabet="ab_-.:/ 09é'\"#", min_size=1, max_size=6)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["yes", "off", "0x1F", "1_000", "~", "2026-11-27", "1:30", "<<"])
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=200)
@given(documents, st.booleans())
def test_a_document_reads_as_the_safe_loader_reads_it(tmp_path_factory, value, flow):
    text = yaml.safe_dump(value, default_flow_style=flow, allow_unicode=True)
    assert load(tmp_path_factory.mktemp("y"), text) == yaml.safe_load(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("", None),
        ("a: 1\nb: [x, 0x1F, 1_000, yes, ~, 2026-11-27]\n", None),
        ("a: &p {x: 1, y: [2]}\nb: *p\nc: [*p, *p]\n", None),  # aliases: equal values
        ("base: &b {x: 1, y: 1}\nover:\n  <<: *b\n  y: 2\n", None),  # a merge key, overridden
        ("a: !!str 12\nb: !!int '7'\nc: !!binary aGk=\n", None),  # explicit tags
        ("1: a\n2.5: b\nnull: c\n", None),  # keys that are not texts
        ("a: 2026-11-27\n", {"a": datetime.date(2026, 11, 27)}),
    ],
)
def test_every_kind_of_document_reads_as_before(tmp_path: Path, text: str, value: Any) -> None:
    expected = yaml.safe_load(text) if value is None else value
    assert load(tmp_path, text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\nb:\n  c: 1\n  c: 2\n", "Pulumi.dev.yaml:4:3: invalid YAML in stack file"),
        ("a: 1\n---\nb: 2\n", "Pulumi.dev.yaml:2:1: invalid YAML in stack file"),
        ("a: !custom 1\n", "Pulumi.dev.yaml:1:4: invalid YAML in stack file"),
        ("a: &x\n  - 1\n  - *x\n", "1:4: invalid YAML in stack file: found unconstructable"),
    ],
)
def test_bad_documents_are_refused_naming_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(PreviewError) as err:
        load(tmp_path, text)
    assert message in str(err.value)
