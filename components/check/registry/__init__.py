"""The placement check's rules, one entry each, in the order they run (kube-scheduler's plugin
registry is the model): a new rule is its module (the function), its test and its entry here.
What is said of the rules derives from this list: `CODES`, the findings table of docs/findings.md
and the policy pack's code lists (`python -m components.check.registry.docs` writes the docs)."""

from __future__ import annotations

from collections.abc import Mapping

from .gi001_gi029 import RULES_GI001_GI029
from .gi030_on import RULES_GI030_ON
from .rule import QUOTA_POLICY as QUOTA_POLICY
from .rule import SEVERITIES, Rule

RULES: tuple[Rule, ...] = (*RULES_GI001_GI029, *RULES_GI030_ON)


def _valid(rules: tuple[Rule, ...]) -> dict[str, Rule]:
    by_code: dict[str, Rule] = {}
    scopes: dict[str, str] = {}
    for r in rules:
        if r.code in by_code:
            raise ValueError(f"rule {r.code} registered twice")
        by_code[r.code] = r
        if r.run is not None and scopes.setdefault(r.run, r.scope) != r.scope:
            raise ValueError(f"{r.run} runs rules of two scopes")
    return by_code


BY_CODE: Mapping[str, Rule] = _valid(RULES)

CODES: dict[str, tuple[str, str]] = {r.code: (r.severity, r.slug) for r in RULES}

NOT_JUDGED_CODES: tuple[str, ...] = tuple(r.code for r in RULES if r.says_not_judged)
"""The codes whose finding says a rule could not judge (info, or errors for a CI gate)."""
"""Code -> (its own severity, slug)."""


def codes(severity: str, policy: str | None = None) -> tuple[str, ...]:
    """The codes a finding of `severity` may have (its own or in the cases its doc names) that
    `policy` reports (None: the placement policies)."""
    assert severity in SEVERITIES
    return tuple(r.code for r in RULES if severity in r.severities and r.policy == policy)
