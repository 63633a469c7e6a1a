"""resources.json and placement.json are written by `components.preview.jsontext`: the same text as
`json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)` and a newline, for any value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.preview.jsontext import to_json_text


def stdlib(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and the infinities too
    | st.text()  # every code point: quotes, backslashes, control characters, non-ASCII
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(values)
def test_the_text_is_json_dumps_for_any_plain_value(value):
    assert to_json_text(value) == stdlib(value)


class Name(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {2: "a", 1: "b"},  # keys json.dumps converts
        {2.5: "a", 1.5: "b"},
        {"a": Name("x"), Name("b"): 1},  # str subclasses
        {"e": [1, 2, {"f": ()}], "g": {}, "h": []},
    ],
)
def test_values_off_the_fast_path_are_written_as_json_dumps_writes_them(value):
    assert to_json_text(value) == stdlib(value)


@pytest.mark.parametrize("value", [{"a": object()}, {1: "a", "b": 2}])
def test_what_json_dumps_refuses_is_refused_the_same_way(value):
    with pytest.raises(TypeError) as ours:
        to_json_text(value)
    with pytest.raises(TypeError) as theirs:
        stdlib(value)
    assert str(ours.value) == str(theirs.value)


def test_a_cycle_is_refused_as_json_dumps_refuses_it():
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference detected"):
        to_json_text(cycle)
