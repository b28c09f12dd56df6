"""The App's core with rules a maintainer suppressed for an issue: they do not fire, and the reduced rule set is
built once per set of suppressed ids."""

from __future__ import annotations

from types import SimpleNamespace

from bot.app.core import Core
from bot.triage import triage


def _issue(number: int, title: str, body: str) -> SimpleNamespace:
    return SimpleNamespace(number=number, title=title, body=body, state="open", created_at="2026-01-01T00:00:00Z",
                           url=f"https://example.invalid/issues/{number}")


def test_a_suppressed_rule_does_not_fire_and_its_rule_set_is_reused(tmp_path):
    core = Core(None, str(tmp_path), triage)
    rule = next(r for r in core.rules.rules if r.examples_match)
    example = rule.examples_match[0]
    fired = core.triage("o/r", _issue(1, example.title, example.body), set(), duplicates=False)
    assert rule.id in {f.rule for f in fired.decision.findings}

    without = core.triage("o/r", _issue(2, example.title, example.body), set(), duplicates=False,
                          suppressed={rule.id})
    assert rule.id not in {f.rule for f in without.decision.findings}
    reduced = core.rules_without(frozenset({rule.id}))
    assert reduced is core.rules_without(frozenset({rule.id}))
    assert len(reduced.rules) == len(core.rules.rules) - 1
    core.close()
