"""Block YAML for the plain data of manifests, the text libyaml's emitter writes, faster.

The manifests of a 1000-model preview took 0.14 s CPU through PyYAML (a node per value, then
libyaml's emitter analysing every scalar). Most of their scalars are short, plain texts: names,
labels, image references. This writes a document whose every key and scalar is such a text (or an
int, a bool, None) directly, in the layout the emitter gives with `default_flow_style=False`,
two-space indentation and sequences inside mappings not indented. Anything else (floats, texts
with quotes, spaces at an end, line breaks or non-ASCII, long texts, other types) makes `block`
return None, and the caller dumps the document through PyYAML as before; so the two can differ
only in speed. `tests/preview/test_yamltext.py` holds them equal on random documents."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import yaml

_STR = "tag:yaml.org,2002:str"
_SAFE = re.compile(r"[A-Za-z0-9_/-][A-Za-z0-9_./:@=+,()$%~ -]*")
"""Texts whose characters need no escape and, but for `-`, cannot start an indicator: plain, or
single-quoted where the plain text would read as another type (`'900'`, `'true'`)."""
_LONGEST = 120
"""Longer texts go to PyYAML: a simple key is at most 128 characters, and a long plain text may be
folded at the line width."""


class _NotPlain(Exception):
    """A value this module does not write: PyYAML does."""


@functools.lru_cache(maxsize=1 << 16)
def scalar(text: str) -> str:
    """The text as the emitter writes a string scalar in block context, or raises _NotPlain."""
    if (
        len(text) > _LONGEST
        or not _SAFE.fullmatch(text)
        or text.endswith((" ", ":"))
        or ": " in text
        or " #" in text
        or "  " in text
        or text.startswith(("- ", "---"))
        or text == "-"
    ):
        raise _NotPlain
    return text if scalar_tag(text, (True, False)) == _STR else f"'{text}'"


@functools.lru_cache(maxsize=1 << 16)
def scalar_tag(value: str, implicit: tuple[bool, bool]) -> Any:
    """The tag a plain scalar would resolve to (whether the emitter must quote it): it depends on
    the text alone (the safe resolver has no path resolvers), and manifests repeat their texts.
    The manifests' PyYAML dumper resolves through it too."""
    return yaml.resolver.Resolver().resolve(yaml.ScalarNode, value, implicit)


NEVER = 1 << 30


def block(document: dict[str, Any], sort_from: int = NEVER) -> str | None:
    """The YAML text of a non-empty mapping of plain data, or None when it holds anything else.
    Mappings `sort_from` levels down or deeper (the document is level 0) are written with their
    keys sorted, those above in their own order: a caller that orders the top levels itself need
    not copy the whole document to sort the rest."""
    if type(document) is not dict or not document:
        return None
    parts: list[str] = []
    try:
        _collection(document, "", "", parts.append, sort_from)
    except (_NotPlain, TypeError):  # TypeError: keys that do not sort
        return None
    return "".join(parts)


def _value(o: Any) -> str:
    t = type(o)
    if t is str:
        return scalar(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if t is int:
        return int.__repr__(o)
    if (t is dict or t is list) and not o:
        return "{}" if t is dict else "[]"
    raise _NotPlain


def _collection(
    o: Any, indent: str, first: str, out: Callable[[str], None], sort_from: int
) -> None:
    """A non-empty dict or list at `indent`; its first line starts with `first` instead. Its
    mappings' keys are sorted from `sort_from` levels down (0: this one)."""
    lead = first
    below = sort_from - 1
    if type(o) is dict:
        for k in sorted(o) if sort_from <= 0 else o:
            if type(k) is not str:
                raise _NotPlain
            v = o[k]
            out(lead)
            out(scalar(k))
            t = type(v)
            if t is dict and v:
                out(":\n")
                _collection(v, indent + "  ", indent + "  ", out, below)
            elif t is list and v:
                out(":\n")
                # A sequence in a mapping is not indented.
                _collection(v, indent, indent, out, below)
            else:
                out(": ")
                out(_value(v))
                out("\n")
            lead = indent
        return
    for v in o:
        item = lead + "- "
        t = type(v)
        if (t is dict or t is list) and v:
            _collection(v, indent + "  ", item, out, below)
        else:
            out(item)
            out(_value(v))
            out("\n")
        lead = indent


__all__ = ["NEVER", "block", "scalar", "scalar_tag"]
