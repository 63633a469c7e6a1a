"""The parts of the docs said by the rules' registry, generated: the findings table and the pool
kinds of docs/findings.md, the policy pack's code lists of docs/policy-pack.md. Each sits between
`<!-- generated: NAME ... -->` and `<!-- end: NAME -->`; the prose around it is kept as written.

    python -m components.check.registry.docs          # rewrite the blocks
    python -m components.check.registry.docs --check  # exit 1 when a file is stale
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from . import QUOTA_POLICY, RULES, codes
from .rule import POOL_KINDS

ROOT = Path(__file__).resolve().parents[3]
FILES = (ROOT / "docs" / "findings.md", ROOT / "docs" / "policy-pack.md")
COMMAND = "python -m components.check.registry.docs"
BLOCK = re.compile(r"(<!-- generated: (\S+) [^\n]*-->\n)(.*?)(<!-- end: \2 -->)", re.S)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def findings_table() -> str:
    lines = ["| code | severity | finding | held against |", "| --- | --- | --- | --- |"]
    for r in sorted(RULES, key=lambda r: r.code):
        judge = r.judge or "-"
        severity = (
            "info (error with `--not-judged error`)"
            if r.says_not_judged
            else (" / ".join(r.severities))
        )
        cells = (r.code, severity, r.doc, judge)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def coverage_table() -> str:
    """Each rule on each pool kind: judged (and on what), not judged (why), n/a (why), or any
    (the pool plays no part); `Rule.cell`, so no cell is left blank."""
    head = ["code", *(f"`{k.name}`" for k in POOL_KINDS), "judged by", "held against"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in sorted(RULES, key=lambda r: r.code):
        cells = [f"{r.code} {r.slug}"]
        for k in POOL_KINDS:
            found = r.cell(k.name)
            if found is None:
                raise ValueError(f"rule {r.code} says nothing of pool kind {k.name}")
            state, why = found
            cells.append(state if state == "any" or not why else f"{state}: {why}")
        cells += [f"`{r.run}`" if r.run else "where the input is read", r.judge or "-"]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def pool_kinds_table() -> str:
    lines = ["| pool kind | read from |", "| --- | --- |"]
    lines += [f"| {k.title} (`{k.name}`) | {_cell(k.resources)} |" for k in POOL_KINDS]
    return "\n".join(lines) + "\n"


def spans(found: Iterable[str]) -> str:
    """`GI001-GI005, GI007, GI008`: runs of three or more consecutive codes joined."""
    numbers = sorted(int(c[2:]) for c in found)
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = []
    for r in runs:
        parts += [f"GI{r[0]:03d}-GI{r[-1]:03d}"] if len(r) > 2 else [f"GI{n:03d}" for n in r]
    return ", ".join(parts)


def policy_codes() -> str:
    both = [r.code for r in RULES if {"error", "warning"} <= set(r.severities) and not r.policy]
    return (
        f"- `gpu-placement-errors`: {spans(codes('error'))}\n"
        f"- `gpu-placement-warnings`: {spans(codes('warning'))}\n"
        f"- `{QUOTA_POLICY}`: {spans(codes('error', QUOTA_POLICY))}\n\n"
        f"{', '.join(both)} are errors or warnings by case (the [findings](findings.md) say\n"
        "which): each finding goes to the policy of its severity. Info findings are not\n"
        "violations.\n"
    )


BLOCKS: dict[str, Callable[[], str]] = {
    "findings-table": findings_table,
    "pool-kinds": pool_kinds_table,
    "coverage-table": coverage_table,
    "policy-codes": policy_codes,
}


def render(text: str) -> str:
    """`text` with each generated block written anew."""

    def one(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in BLOCKS:
            raise KeyError(f"unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        return m.group(1) + BLOCKS[name]() + m.group(4)

    return BLOCK.sub(one, text)


def main(argv: Sequence[str] | None = None, files: Sequence[Path] = FILES) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND)
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    stale = []
    for path in files:
        text = path.read_text()
        new = render(text)
        if new == text:
            continue
        stale.append(path)
        if not args.check:
            path.write_text(new)
            print(f"wrote {path}")
    if args.check and stale:
        print(f"{', '.join(map(str, stale))} stale: run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
