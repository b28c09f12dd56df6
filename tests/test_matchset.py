"""bot.matchset: the patterns an RE2 Set pass finds are exactly those Python `re` finds, pattern by pattern."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.labels import FAILURE, FRAMES, WORDS
from bot.matchset import MatchSet, _exact_form, _loose_form, alternatives, re2_reads_alike
from bot.subject import ACCURACY, WRONG_OUTPUT

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LABEL_SETS = [MatchSet([w.pattern for w in WORDS]), MatchSet([p.pattern for p in FAILURE]),
              MatchSet([f.pattern for f in FRAMES])]
UNICODE_SET = MatchSet([WRONG_OUTPUT, ACCURACY, r"\b\w+\s+model\b", r"^\W{0,3}add\b"], re.IGNORECASE)
ALL_SETS = [*LABEL_SETS, UNICODE_SET]

PATTERN_WORDS = sorted({w for m in LABEL_SETS for rx in m.compiled for w in re.findall(r"[A-Za-z_]{2,}|\d+",
                                                                                           rx.pattern)})
# the pattern's own words in both cases and glued by separators, so that matches are common; and the characters on
# which RE2 and `re` read differently
PIECES = [*PATTERN_WORDS, *(w.upper() for w in PATTERN_WORDS[::3]), " ", "-", "_", ".", "/", "=", "2", "\n", "`",
          "K", "ſ", "\u212a", "\x0b", "\x1c", "İ", "é", "多模态", "乱码", "\ud800"]


def python_answer(m: MatchSet, text: str) -> set[int]:
    return {k for k, rx in enumerate(m.compiled) if rx.search(text)}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map("".join))
def test_the_set_answers_as_python_re_glued(text):
    for m in ALL_SETS:
        assert m.matching(text) == python_answer(m, text), text


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14).map(" ".join))
def test_the_set_answers_as_python_re_spaced(text):
    for m in ALL_SETS:
        assert m.matching(text) == python_answer(m, text), text


def test_the_set_answers_as_python_re_on_the_fixtures():
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in (".md", ".log", ".txt", ".json"):
            text = path.read_text(errors="replace")
            for piece in (text[:20_000], *text.splitlines()[:400]):
                for m in ALL_SETS:
                    assert m.matching(piece) == python_answer(m, piece), (path, piece[:200])


def test_the_set_takes_most_alternatives_and_python_keeps_the_rest():
    m = MatchSet([r"\bcuda\b|(?<!no )gpu|\bnccl$", r"x{,3}y|(a)\1", r"(?i)rocm|hip"], re.ASCII)
    assert set(m.rest) == {0, 1, 2}
    assert m.rest[0].pattern == r"(?<!no )gpu"            # `\bcuda\b` and `\bnccl$` are in the Set
    assert m.rest[2].pattern == r"(?i)rocm|hip"           # a global flag holds for every alternative: not read apart
    assert m.matching("CUDA") == set() and m.matching("cuda 12") == {0}
    assert m.matching("a gpu") == {0} and m.matching("no gpu") == set() and m.matching("nccl") == {0}
    assert m.matching("xxy HIP") == {1, 2} and m.matching("x{,3}z") == set()
    assert len(LABEL_SETS[0].rest) < len(WORDS) // 2      # the label words are mostly read by the Set


@pytest.mark.parametrize("text", ["ſpeculative decoding", "\u212av cache", "tp\x0b=\x0b1", "pp =\x0b2"])
def test_texts_re2_reads_otherwise_are_searched_by_python(text):
    m = LABEL_SETS[0]
    assert m._match(text) is None
    assert m.matching(text) == python_answer(m, text)


class _GivesUp:
    """An RE2 Set whose DFA ran out of memory: no match, or matches without the sentinel."""

    def __init__(self, found: list[int] | None) -> None:
        self.found = found

    def Match(self, data: bytes) -> list[int] | None:  # noqa: N802 (RE2's name)
        return self.found


@pytest.mark.parametrize("found", [None, [0]])
def test_a_set_that_gives_up_falls_back_to_python(found):
    m = MatchSet([r"\bcuda\b", r"(?<!no )gpu"])
    assert m.matching("CUDA on a GPU") == {0, 1}
    compiled, sentinel, group = m._sets[0]
    m._sets[0] = (_GivesUp(found), sentinel, group)
    assert m.matching("CUDA on a GPU") == {0, 1} and m.matching("no GPU") == set()


def test_patterns_with_an_open_gap_are_in_sets_of_their_own():
    words = [f"\\bword{i}\\b" for i in range(60)]
    gaps = [f"\\bfrom{i}\\b.*\\bto{i}\\b" for i in range(50)]
    m = MatchSet(words + gaps)
    assert [len(group) for _, _, group in m._sets] == [60, 40, 10]
    assert m.matching("word3 and from45 then to45, from2 to3") == {3, 60 + 45}
    sets = list(m._sets)
    for k, (_, sentinel, group) in enumerate(sets):   # any one of the Sets giving up: Python answers
        m._sets = [*sets[:k], (_GivesUp(None), sentinel, group), *sets[k + 1:]]
        assert m._match("word3 and from45 then to45") is None
        assert m.matching("word3 and from45 then to45") == {3, 60 + 45}
    assert [len(group) for _, _, group in MatchSet(words + gaps[:40])._sets] == [100]   # a few gaps: one Set


def test_alternatives_are_read_at_the_top_level_only():
    assert alternatives(r"a|(b|c)|[|]|\||[]|]x") == ["a", "(b|c)", "[|]", r"\|", "[]|]x"]
    assert alternatives("abc") == ["abc"]
    assert alternatives("a|") == ["a", ""]


@pytest.mark.parametrize(("alternative", "alike"), [
    (r"\bcuda\b", True), (r"(?-i:\bPP\b)", True), (r"(?:a|b)c", True), (r"[$]", True), ("多模态", True),
    (r"a(?=b)", False), (r"a(?!b)", False), (r"(?<=a)b", False), (r"(?<!a)b", False), (r"a$", False),
    (r"a{,3}", False), (r"(a)\1", False), (r"[[:alpha:]]", False), (r"é", False), (r"(?#c)a", False),
    (r"a\Z", False), (r"(?x)a", False), (r"a{2000}", False),
])
def test_what_re2_reads_alike(alternative, alike):
    assert re2_reads_alike(alternative) is alike


@pytest.mark.parametrize(("alternative", "exact"), [
    (r"(?<![a-z])vl(?![a-z])", r"(?:\A|[^a-z])vl(?:[^a-z]|\z)"),
    (r"(?<![-\w.])n\b ?=", r"(?:\A|[^-\w.])n\b ?="),
    (r"vl(?=for|model)", r"vl(?:for|model)"),
    (r"(?<=ab)c(?!\d)", r"(?:ab)c(?:\D|\z)"),
    (r"\bPP\b(?!\s*1)", None),             # a lookahead of more than one character
    (r"(?<!no )gpu", None),
    (r"a(?!b)c", None),                      # not at the edge
    (r"x.{0,40}y", None),                    # a long counted repetition
    (r"ray_utils\.py$", r"ray_utils\.py\n?\z"),
    (r"config(\.py$|/(x|y)\.py$)", r"config(\.py\n?\z|/(x|y)\.py\n?\z)"),
    (r"(x|a$)", r"(x|a\n?\z)"),
    (r"a$b", None), (r"(a$|b)c", None), (r"(a$)?", None),
])
def test_lookarounds_at_the_edges_are_read_as_characters(alternative, exact):
    assert _exact_form(alternative) == exact
    m = MatchSet([alternative])
    assert (0 in m.rest) is (exact is None)


@pytest.mark.parametrize(("alternative", "loose"), [
    (r"(?-i:\bPP\b)(?!\s*[=:]?\s*1\b)", r"(?-i:\bPP\b)"),
    (r"(?<!kernel )(?<!docker )\b(images?|audio)\b", r"\b(images?|audio)\b"),
    (r"\b(eagle-?3?(?![-_]?\d+b)|medusa)\b", r"\b(eagle-?3?|medusa)\b"),
    (r"\bkv cache\b.{0,60}\bmemory", r"\bkv cache\b.{0,}\bmemory"),
    (r"a(?=b)*", None),
])
def test_a_python_alternative_is_searched_only_where_its_loose_form_matches(alternative, loose):
    assert _loose_form(alternative) == loose
