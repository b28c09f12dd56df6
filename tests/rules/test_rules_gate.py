"""The rule gate: a rule the prefilter rules out would not have fired anyway."""

from __future__ import annotations

from pathlib import Path

import pytest
import re2

from bot.report import parse
from bot.rules import evaluate_rule, gate, load_rules
from bot.rules.conditions import All, Any_, ExceptionCond, FlagsOnly, KindCond, Not, TextCond
from bot.rules.prefilter import open_repeats
from bot.rules.schema import build_rule
from bot.rules.texts import Texts
from tests.rules.rulekit import rule as rule_data

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
    kind = KindCond(("bug",))
    assert gate(All((kind, a))) == ((a.pattern, "log"),)   # a pattern before a cheap condition
    assert gate(All((kind, Not(a)))) == (kind,)
    assert gate(Any_((a, kind))) == ((a.pattern, "log"), kind)
    exc = ExceptionCond(types=("OutOfMemoryError",))
    assert gate(FlagsOnly(exc, 0.5)) == (exc,)
    assert gate(Any_((a, Not(kind)))) is None                 # one branch needs nothing
    assert gate(Not(a)) is None


def test_a_rule_gated_by_a_cheap_condition_alone_is_left_out_when_it_does_not_hold():
    rule = build_rule(rule_data(id="x", match={"any": [
        {"exception": {"type": "OutOfMemoryError"}},
        {"flags_only": {"confidence": 0.5, "match": {"flag": {"name": "tensor_parallel_size", "in": [3, 5]}}}},
    ]}), "x.yaml", "x")
    rules = type(RULES)((rule,))
    assert gate(rule.match) is not None
    plain = parse("[Bug]: it fails", "vllm serve m --tensor-parallel-size 2")
    assert rules._possible(Texts(plain, rules._prefilter[0])) == set()
    odd = parse("[Bug]: it fails", "vllm serve m --tensor-parallel-size 3")
    assert rules._possible(Texts(odd, rules._prefilter[0])) == {0}
    assert [f.rule for f in rules.evaluate(odd)] == ["x"]
    oom = parse("[Bug]: it fails", "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n"
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert rules._possible(Texts(oom, rules._prefilter[0])) == {0}


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
