"""The prefilter: its literal pass and per-pattern searches answer exactly as searching every pattern would."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
import re2
from hypothesis import given
from hypothesis import strategies as st

from bot.report import parse
from bot.rules import gate, load_rules
from bot.rules.prefilter import Prefilter, _opened
from bot.rules.regex import MAX_SEARCH_BYTES, Pattern
from bot.rules.required import required_literals, shortest_match
from bot.rules.texts import Texts, _joined

RULES = load_rules()
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _texts() -> list[Texts]:
    reports = [parse(ex.title, ex.body) for rule in RULES.rules
               for ex in (*rule.examples_match, *rule.examples_no_match)]
    reports += [parse(path.stem, path.read_text(errors="replace")) for path in sorted(FIXTURES.rglob("*"))
                if path.is_file() and path.suffix in (".md", ".log", ".txt")]
    return [Texts(r, RULES._prefilter[0], RULES._wording[0]) for r in reports]


TEXTS = _texts()


def _patterns() -> dict[str, list[Pattern]]:
    by_source: dict[str, dict[int, Pattern]] = {}
    for rule in RULES.rules:
        for pattern, source in rule.match.sources():
            by_source.setdefault(source, {})[id(pattern)] = pattern
    return {s: list(p.values()) for s, p in by_source.items()}


@pytest.mark.parametrize(("source", "groups"), [
    ("no kernel image (?:is )?available", [{"no kernel image "}, {"available"}]),
    (r"\b(?:nv|mx)?fp[48]\b", [{"fp4", "fp8"}]),                     # a small class: each spelling
    (r"(?:bfloat16|bf16) (?:is )?not supported", [{"not supported"}]),  # "bf" + {loat16, 16}: too short
    (r"flash[ -]?attention|flashinfer", [{"flash"}, {"attention", "infer"}]),
    (r"(?P<n>\d+) GPUs?", [{" GPU"}]),
    (r"(?-i)CUDA_VISIBLE_DEVICES=(?P<v>\S+)", [{"CUDA_VISIBLE_DEVICES="}]),
    (r"(?:warm|hot)+ start", [{" start"}, {"warm", "hot"}]),
    (r"abc[^x]{0,80}defg|xyz12", [{"defg", "xyz12"}]),                # a branch: the best group of each
])
def test_required_literals(source, groups):
    assert set(required_literals(source)) == {frozenset(g) for g in groups}


@pytest.mark.parametrize("source", [
    r"[[:alpha:]]+ is not supported",    # a POSIX class: Python would read a class and a literal `]`
    r"\pL+ not supported",                 # RE2-only escapes: Python rejects them
    r"\x{41}BCDEF",
    r"a?b?c?",                             # nothing is required
    r"\S",
    r"ab|cdefgh",                          # one branch too short to filter on
])
def test_no_literals_when_unsure_or_none(source):
    assert required_literals(source) == ()


def test_every_match_of_a_rule_pattern_holds_a_literal_of_each_group():
    checked = 0
    for patterns in _patterns().values():
        for pattern in patterns:
            groups = required_literals(pattern.source)
            if not groups:
                continue
            finders = [re2.compile(b"(?i)(?:" + b"|".join(re2.escape(s.encode()) for s in g) + b")") for g in groups]
            for texts in TEXTS:
                data = texts.text("any") + b"\n" + texts.text("body") + b"\n" + texts.text("messages")
                hit = pattern.search(data)
                if hit is None:
                    continue
                span = data[hit[0]:hit[1]]
                for group, finder in zip(groups, finders, strict=True):
                    assert finder.search(span) is not None, (pattern.source, sorted(group), span)
                checked += 1
    assert checked > 200


@pytest.mark.parametrize("source", sorted(RULES._prefilter[0].sources()))
def test_literal_pass_single_searches_and_sets_agree_with_searching_every_pattern(source):
    prefilter = RULES._prefilter[0]
    entry = prefilter._texts[source]
    reference = [(slot, re2.compile(_opened(p))) for slot, p in enumerate(entry.patterns)]
    for texts in TEXTS:
        data = texts.text(source)
        matched, _ = prefilter.run(source, data)
        by_parts, _ = texts.prefiltered(source)     # the literals found part by part
        for slot, regexp in reference:
            found = regexp.search(data) is not None
            assert (slot in matched) == found == (slot in by_parts), entry.patterns[slot].source


def test_a_text_holds_the_literals_of_its_parts():
    prefilter = RULES._prefilter[0]
    for texts in TEXTS:
        for source in prefilter.sources():
            parts = texts.parts(source)
            assert "\n".join(parts).encode("utf-8", "replace")[:MAX_SEARCH_BYTES] == texts.text(source)
            joined = prefilter.bits(texts.text(source))
            each = [prefilter.bits(p.encode("utf-8", "replace")) for p in parts]
            assert joined is not None and None not in each
            union = 0
            for bits in each:
                union |= bits
            assert joined & ~union == 0, source    # the parts' literals hold every literal of the text


def test_a_literal_with_a_line_break_is_taken_as_in_every_text_of_several_parts():
    pattern = Pattern.compile(r"first line\nsecond")
    prefilter = Prefilter([(pattern, "any")])
    report = parse("first line", "second line of the body, long enough to be a description")
    texts = Texts(report, prefilter)
    assert texts.parts("any") == [report.title, report.description or report.body]
    assert prefilter.joined_bits
    assert texts.may_match(pattern, "any")
    assert texts.search(pattern, "any") is not None


def test_the_prose_texts_use_every_path():
    for source in ("any", "title"):
        entry = RULES._prefilter[0]._texts[source]
        assert entry.needs and entry.sets, source
    pattern = Pattern.compile(r"\?|\bhow\b")
    entry = Prefilter([(pattern, "title"), (Pattern.compile(r"\?|\bhow\b"), "title")])._texts["title"]
    assert entry.always == [0] and len(entry.index) == 2    # patterns written alike are searched once
    assert entry.run(0, lambda: b"how do I") == {0} and entry.run(0, lambda: b"it fails") == set()


def test_the_prefilter_holds_the_patterns_the_gates_need():
    needed = {(id(n[0]), n[1]) for r in RULES.rules for n in gate(r.match) or () if isinstance(n, tuple)}
    held = {(pid, source) for source, entry in RULES._prefilter[0]._texts.items() for pid in entry.index}
    assert needed == held
    every = {(id(p), source) for r in RULES.rules for p, source in r.match.sources()}
    assert held < every


@pytest.mark.parametrize(("source", "width"), [(r"\S", 1), (r"\?|\bhow\b", 1), (r"ab(?:cd)?e{2,}", 4),
                                                (r"(?-i)x+", 1), (r"[[:alpha:]]", None), (r"\pL", None)])
def test_shortest_match(source, width):
    assert shortest_match(source) == width


class _GaveUp:
    """An RE2 Set whose DFA ran out of memory: RE2 then reports no match at all, not even the sentinel."""

    def Match(self, data: bytes) -> list[int]:  # noqa: N802 (RE2's name)
        return []


@pytest.mark.parametrize("which", ["literals", "sets"])
def test_a_set_that_gives_up_makes_the_answer_unknown(which):
    patterns = [Pattern.compile(r"\b(?:on|at) \d+ ?(?:x|of)\b[^\n]{0,80}\bgp\w*"),   # no literal: in a Set
                Pattern.compile(r"no kernel image (?:is )?available")]
    prefilter = Prefilter([(p, "body") for p in patterns])
    text = b"we run it on 8 x gpus: no kernel image is available"
    assert prefilter.run("body", text) == ({0, 1}, {id(p): i for i, p in enumerate(patterns)})
    entry = prefilter._texts["body"]
    assert entry.sets and entry.needs
    if which == "literals":
        prefilter.literals = _GaveUp()
    else:
        entry.sets[0] = (_GaveUp(), *entry.sets[0][1:])
    assert prefilter.run("body", text) is None


@given(st.lists(st.text(alphabet="ab\n", max_size=12), max_size=6), st.integers(min_value=1, max_value=10))
def test_lines_are_joined_as_when_each_is_cut(lines, limit):
    with patch("bot.rules.texts.MAX_LINE", limit):
        assert _joined(tuple(lines)) == "\n".join(line[:limit] for line in lines)


def test_the_error_text_holds_the_exceptions_then_the_error_lines():
    report = parse("[Bug]: build fails", "```\nERROR: Could not build wheels for vllm\n```\n"
                   "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nValueError: bad value\n")
    texts = Texts(report)
    lines = [f"{e.type}: {e.message}" for e in report.exceptions] + list(report.error_lines)
    assert report.exceptions and report.error_lines
    assert texts.text("error:own") == "\n".join(lines).encode()
