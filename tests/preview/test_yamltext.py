"""manifests.yaml is written by `components.preview.yamltext` where it can: the same text PyYAML
writes (`manifests.pyyaml_text`), document by document; what it cannot write goes to PyYAML."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.preview.manifests import object_yaml, ordered_object, pyyaml_text
from components.preview.yamltext import block

# Texts from characters that matter to YAML: indicators, quotes, spaces, colons, hashes, digits
# and words that read as other types (true, null, 0x1F, 1.5, ~), a line break, non-ASCII.
words = st.sampled_from(
    ["true", "no", "on", "null", "~", "900", "0x1F", "1.5", "1e3", "=", "<<", "-1", "a: b", "a:"]
)
any_texts = st.text(alphabet="aZ09_./:-@ #'\"=,~!&*?[]{}|>%`$()+\n\té", max_size=8) | words
plain_texts = (
    st.from_regex(r"[aZ09_/-][aZ09_./:@=,~%$()+-]{0,5}( [aZ09_.-]{1,3})?", fullmatch=True) | words
)


def documents(texts, scalars):
    return st.dictionaries(
        texts,
        st.recursive(
            scalars,
            lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
            max_leaves=12,
        ),
        min_size=1,
        max_size=4,
    )


ints_and_such = st.none() | st.booleans() | st.integers()
any_documents = documents(any_texts, ints_and_such | any_texts | st.floats(allow_nan=False))
plain_documents = documents(plain_texts, ints_and_such | plain_texts)


@settings(max_examples=300)
@given(any_documents | plain_documents)
def test_a_document_written_here_is_the_text_pyyaml_writes(document):
    text = block(document)
    if text is not None:
        assert text == pyyaml_text(document)


# Objects: the keys the manifests order (apiVersion, kind, metadata; name and namespace first in
# it) among others, at every level.
object_keys = st.sampled_from(["apiVersion", "kind", "metadata", "name", "namespace", "b", "a"])
objects = documents(object_keys | plain_texts, ints_and_such | plain_texts) | documents(
    object_keys | any_texts, ints_and_such | any_texts
)


@settings(max_examples=300)
@given(objects)
def test_an_object_is_written_in_its_order_as_pyyaml_writes_it(document):
    # yamltext sorts the keys below the two top levels as it writes; PyYAML is given them sorted.
    assert object_yaml(document) == pyyaml_text(ordered_object(document))


def workload() -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "model-0",
            "namespace": "models",
            "annotations": {"gpu-inference.dev/node-startup-seconds": "900", "x/on": "true"},
            "labels": {},
        },
        "spec": {
            "predictor": {
                "minReplicas": 0,
                "nodeSelector": {"gpu-inference.dev/pool": "l4-0"},
                "tolerations": [
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
                ],
                "args": ["--port=8080", "serve", "a b"],
                "matrix": [[1, 2], [], [{"a": None}]],
                "env": [],
                "enabled": False,
            }
        },
    }


def test_a_workload_is_written_here_as_pyyaml_writes_it():
    document = workload()
    text = block(document)
    assert text is not None  # all of it is plain: none of it goes to PyYAML
    assert text == pyyaml_text(document)
    assert "node-startup-seconds: '900'\n" in text
    assert "    tolerations:\n    - key: nvidia.com/gpu\n      operator: Exists\n" in text
    assert "    matrix:\n    - - 1\n      - 2\n    - []\n    - - a: null\n" in text


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1.5},  # floats
        {"a": "two\nlines"},  # a literal block
        {"a": "it's"},  # quotes
        {"a": " lead"},  # spaces at an end
        {"a": "é"},  # non-ASCII
        {"a": "x" * 121},  # long
        {1: "a"},  # a key that is not a text
        {"a": ("t",)},  # a tuple
        {},
        ["a"],
    ],
)
def test_what_is_not_plain_goes_to_pyyaml(value):
    assert block(value) is None
    assert block(value, sort_from=0) is None
