"""The rule gate: a rule the prefilter rules out would not have fired anyway."""

from __future__ import annotations

from pathlib import Path

import pytest
import re2

from bot.report import parse
from bot.rules import evaluate_rule, gate, load_rules
from bot.rules.conditions import All, Any_, KindCond, Not, TextCond
from bot.rules.prefilter import open_repeats
from bot.rules.texts import Texts

RULES = load_rules()
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _reports():
    for rule in RULES.rules:
        for ex in (*rule.examples_match, *rule.examples_no_match):
            yield parse(ex.title, ex.body)
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in (".md", ".log", ".txt"):
            yield parse(path.stem, path.read_text(errors="replace"))


@pytest.mark.parametrize("report", list(_reports()), ids=lambda r: r.title[:40])
def test_rules_left_out_by_the_gate_do_not_fire(report):
    texts = Texts(report, RULES._prefilter[0])
    possible = RULES._possible(texts)
    for i, rule in enumerate(RULES.rules):
        if i not in possible:
            assert evaluate_rule(rule, report, Texts(report)) is None, rule.id


def test_gate_shapes():
    a = TextCond("log", "log", RULES.rules[0].match.patterns()[0]) if RULES.rules[0].match.patterns() else None
    assert a is not None
    assert gate(a) == ((a.pattern, "log"),)
    assert gate(All((KindCond(("bug",)), a))) == ((a.pattern, "log"),)
    assert gate(Any_((a, KindCond(("bug",))))) is None      # one branch needs no pattern
    assert gate(Not(a)) is None


@pytest.mark.parametrize(("pattern", "opened"), [
    (rb"a[^\n]{0,80}b", rb"a[^\n]{0,}b"),
    (rb"x{2,5}y{3}", rb"x{2,}y{3}"),
    (rb"[{1,2}]\{1,2\}", rb"[{1,2}]\{1,2\}"),        # in a class, or escaped: literal braces
    (rb"[]{1,2}]+\x{41}{1,3}", rb"[]{1,2}]+\x{41}{1,}"),
    (rb"[^]{1,2}]\p{L}{0,9}", rb"[^]{1,2}]\p{L}{0,}"),
])
def test_open_repeats(pattern, opened):
    assert open_repeats(pattern) == opened


def test_opened_patterns_match_wherever_the_rule_patterns_do():
    texts = [(r.title + "\n" + r.body).encode() for r in _reports()]
    for rule in RULES.rules:
        for pattern in rule.match.patterns():
            source = pattern.regexp._pattern
            try:
                opened = re2.compile(open_repeats(source))
            except re2.error:
                continue    # the prefilter then adds the pattern as written
            for data in texts:
                if pattern.regexp.search(data) is not None:
                    assert opened.search(data) is not None, pattern.source
