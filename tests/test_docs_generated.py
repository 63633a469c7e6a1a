"""The docs the rules' registry says (the findings table, the pool kinds, the policy pack's code
lists) are generated from it: the committed files are the generated ones, and a stale one fails
the check command."""

from __future__ import annotations

import pytest

from components.check.registry import RULES, docs


@pytest.mark.parametrize("path", docs.FILES, ids=lambda p: p.name)
def test_the_committed_docs_are_the_generated_ones(path):
    assert path.read_text() == docs.render(path.read_text()), f"{path} is stale: run {docs.COMMAND}"


def test_every_rule_has_its_row_and_every_pool_kind_its_line():
    findings = docs.FILES[0].read_text()
    for r in RULES:
        severity = (
            "info (error with `--not-judged error`)"
            if r.says_not_judged
            else " / ".join(r.severities)
        )
        assert f"| {r.code} | {severity} | {r.doc} |" in findings
    assert "| EKS Auto Mode NodePool (`auto_mode`) |" in findings


def test_the_policy_lists_leave_the_quota_codes_to_their_policy():
    text = docs.policy_codes()
    errors, warnings, quota = text.splitlines()[:3]
    assert "GI045" not in errors and "GI045" not in warnings
    assert quota == "- `gpu-cloud-quota`: GI045, GI046"
    assert "GI050-GI059" in errors and "GI016" in errors and "GI016" in warnings


def test_spans():
    assert docs.spans(["GI003", "GI001", "GI002", "GI005", "GI006", "GI009"]) == (
        "GI001-GI003, GI005, GI006, GI009"
    )


def test_the_check_command_fails_on_a_stale_file_and_rewrites_it(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- generated: pool-kinds (x) -->\nold\n<!-- end: pool-kinds -->\nb\n")
    assert docs.main(["--check"], files=[page]) == 1
    assert docs.main([], files=[page]) == 0
    assert docs.main(["--check"], files=[page]) == 0
    assert page.read_text() == (
        "a\n<!-- generated: pool-kinds (x) -->\n"
        + docs.pool_kinds_table()
        + "<!-- end: pool-kinds -->\nb\n"
    )


def test_an_unknown_block_is_refused():
    with pytest.raises(KeyError, match="unknown generated block 'tables'"):
        docs.render("<!-- generated: tables x -->\n<!-- end: tables -->\n")
