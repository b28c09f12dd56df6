"""The literal pre-check of the label patterns (bot/matchset.py searches a pattern's Python-only alternatives only
when a needle is there): a text without any of a pattern's needles never matches it."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.labels import FAILURE, WORDS
from bot.literals import needles

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

