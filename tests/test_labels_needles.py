"""The literal pre-check of the label patterns (bot/matchset.py searches a pattern's Python-only alternatives only
when a needle is there): a text without any of a pattern's needles never matches it."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import labels, subject
from bot.labels import FAILURE, WORDS
from bot.literals import Gated, needles

PATTERNS = [w.pattern for w in WORDS] + [p.pattern for p in FAILURE]
COMPILED = [(re.compile(p, re.IGNORECASE | re.ASCII), needles(p)) for p in PATTERNS]
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# words of the patterns themselves, mixed case, glued with separators, so that matches are common
WORDS_IN_PATTERNS = sorted({w for p in PATTERNS for w in re.findall(r"[A-Za-z_]{2,}|\d+", p)})
PIECES = [*WORDS_IN_PATTERNS, *(w.upper() for w in WORDS_IN_PATTERNS[::3]), " ", "-", "_", ".", "/", "=", "2", "\n",
          "K", "İ", "é"]


def _may_match(low: str, strings: tuple[str, ...] | None) -> bool:
    return strings is None or any(s in low for s in strings)


def _agree(text: str) -> None:
    low = text.lower()
    for rx, need in COMPILED:
        if rx.search(text):
            assert _may_match(low, need), (rx.pattern, need, text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map(" ".join))
def test_needles_never_hide_a_match(text):
    _agree(text)


def test_needles_on_the_fixtures():
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in (".md", ".log", ".txt", ".json"):
            for line in path.read_text(errors="replace").splitlines():
                _agree(line)


def test_needles_of_some_patterns():
    assert needles(r"\btpus?\b") == ("tpu",)
    assert needles(r"\bquantiz\w*|\b(nvfp4|mxfp4|fp4)\b") == ("fp4", "quantiz")
    assert needles(r"(?-i:\bPP\b)(?!\s*1)|\bpp\s*=") == ("pp",)
    assert needles(r"\b(images?|videos?)\b") == ("image", "video")
    assert needles(r".{0,3}\d+") is None                     # nothing literal is required
    assert needles(r"cuda|\d+") is None                      # one branch requires nothing
    assert not _may_match("a cpu", ("gpu", "tpu")) and _may_match("a TPU".lower(), ("tpu",))



GATED = [g for module in (labels, subject) for g in vars(module).values() if isinstance(g, Gated)]
GATED_WORDS = sorted({w for g in GATED for w in re.findall(r"[A-Za-z_]{2,}|\d+", g.pattern.pattern)})
GATED_PIECES = [*GATED_WORDS, *(w.upper() for w in GATED_WORDS[::3]), "", " ", "-", "_", ".", "/", "=", "2", "8", "\n",
                "K", "İ", "ſ", "é", "乱码"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(GATED_PIECES), max_size=10).map(lambda parts: "".join(
    p + (" " if i % 3 else "") for i, p in enumerate(parts))))
def test_gated_patterns_answer_as_the_patterns(text):
    """A pattern searched only in texts holding its needles finds and replaces what the pattern does."""
    for g in GATED:
        found, expected = g.search(text), g.pattern.search(text)
        assert (found and found.span()) == (expected and expected.span()), (g.pattern.pattern, text)
        assert g.sub(" ", text) == g.pattern.sub(" ", text)


def test_gated_patterns_skip_texts_without_their_needles():
    assert len(GATED) >= 12
    assert not labels._BLACKWELL_FAILS.may_match("Engine fails to start")     # needles of the GPU, not the failure
    assert labels._BLACKWELL_FAILS.may_match("RTX 5090: engine fails to start")
    assert not subject._KV_CACHE_TYPE.may_match("an FP16 model") and subject._KV_CACHE_TYPE.may_match("fp8 kv")
    assert subject._CLASS_NAME.may_match("Qwen2Tokenizer fails") and subject._CLASS_NAME.may_match("ſ non-ASCII")
