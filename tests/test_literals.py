"""bot.literals reads regexes without CPython's private parser: needles that never hide a match, and phrases."""

from __future__ import annotations

import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from bot.literals import Phrase, needles, phrases

# a small regex grammar over a few letters, so that generated texts often match generated patterns
_ATOMS = ["a", "b", "ab", "ba", "c", r"\w", r"\d", ".", "[ab]", "[a-c]", "[^a]", r"\b", "x"]


def _regex(draw_depth: int = 2) -> st.SearchStrategy[str]:
    atom = st.sampled_from(_ATOMS)
    if draw_depth:
        atom = atom | _regex(draw_depth - 1).map(lambda r: f"({r})") \
            | _regex(draw_depth - 1).map(lambda r: f"(?:{r})") \
            | _regex(draw_depth - 1).map(lambda r: f"(?-i:{r})")
    quantified = st.tuples(atom, st.sampled_from(["", "", "?", "*", "+", "{2}", "{0,3}", "{1,}"])).map("".join)
    seq = st.lists(quantified, min_size=1, max_size=4).map("".join)
    return st.lists(seq, min_size=1, max_size=3).map("|".join)


@settings(max_examples=400, deadline=None)
@given(_regex(), st.text(alphabet="abcxAB 1-", max_size=14))
def test_a_text_without_any_needle_never_matches(pattern, text):
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error:   # the grammar can build `\b?`, which re rejects
        assume(False)
    need = needles(pattern)
    if need is not None and compiled.search(text):
        assert any(n in text.lower() for n in need), (pattern, need, text)


def test_needles_of_label_shaped_patterns():
    assert needles(r"\btpus?\b") == ("tpu",)
    assert needles(r"(?-i:\bPP\b)(?!\s*1)|\bpp\s*=") == ("pp",)
    assert needles(r"(?<![a-z])vl(?![a-z])|\dvl") == ("vl",)
    assert needles(r"(?P<arch>\w+)ForCausalLM") == ("forcausallm",)
    assert needles(r"out of memory|oom") == ("oom", "out of memory")
    assert needles(r"CUDA error: \w+|\bcuda\b") == ("cuda",)        # one needle inside the other: the shorter
    assert needles(r"[ab]c") == ("c",)
    assert needles(r"\x41BC") == ("abc",)
    assert needles(r"a|") is None                                  # an empty branch requires nothing
    assert needles(r"(abc)?d*") is None


def test_needles_survive_unusual_syntax():
    # unterminated pieces and escapes the reader does not know cost precision, never an exception
    for pattern in ("(abc", "[abc", "abc\\", "(?", "a{2,", r"\p{Greek}x", r"\pLy", "(?i)abc", "a++b"):
        result = needles(pattern)
        assert result is None or all(isinstance(n, str) for n in result)


def test_phrases_expand_separators_and_optional_parts():
    found = phrases(r"\btool[-_ ]?call\w*")
    assert Phrase("tool call", True) in found and Phrase("toolcall", True) in found
    assert Phrase("tool-call", True) in found
    assert Phrase("parallel", False) in phrases(r"\bpipeline parallel\b") or \
        Phrase("pipeline parallel", False) in phrases(r"\bpipeline parallel\b")
    assert {p.text for p in phrases(r"\bbf(loat)?16\b")} == {"bf16", "bfloat16"}


def test_phrases_mark_stems_and_skip_open_classes():
    found = phrases(r"\bquantiz\w*|\bthroughput\b|latency.{0,40}high")
    assert Phrase("quantiz", True) in found
    assert Phrase("throughput", False) in found
    assert Phrase("latency", True) in found                 # `.` can go on with a letter
    assert Phrase("high", False) in found


def test_phrases_cut_large_expansions():
    found = phrases(r"(a|b|c|d)(e|f|g|h)(i|j|k|l)(m|n|o|p)word")
    assert all(len(p.text) <= 10 for p in found)
    assert any(p.text.endswith("word") for p in found)
