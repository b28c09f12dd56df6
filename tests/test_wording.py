"""Words as people write them: texts are corrected toward the keywords of the patterns, nothing else changes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.wording import Wording, squash

PATTERNS = [
    r"\bpipeline[-_ ]parallel\w*", r"\bquantiz\w*", r"\bspeculat\w*", r"\btool call\b", r"\bmultimodal\b",
    r"\bmemory (leak|usage)\b", r"\bcuda ?graphs?\b", r"\bwheel\b", r"\bdivisib\w*", r"\bturing\b",
    r"\bstructured[-_ ]outputs?\b", r"\bembed\w*",
]
W = Wording(PATTERNS)
RX = [re.compile(p, re.IGNORECASE) for p in PATTERNS]


def _hits(text: str) -> set[str]:
    return {rx.pattern for rx in RX if rx.search(text)}


@pytest.mark.parametrize(("written", "pattern"), [
    ("[Bug]: pipline paralelism hangs on 2 nodes", r"\bpipeline[-_ ]parallel\w*"),     # a letter missing, doubled
    ("[Bug]: pipeline parrallelism hangs", r"\bpipeline[-_ ]parallel\w*"),              # a letter doubled
    ("qunatization of the checkpoint fails", r"\bquantiz\w*"),                          # neighbours swapped
    ("[Usage]: quantisation with awq", r"\bquantiz\w*"),                                # a letter changed
    ("specualtive decoding is slower", r"\bspeculat\w*"),
    ("the tool-call is never parsed", r"\btool call\b"),                                # hyphen for a space
    ("the toolcall is never parsed", r"\btool call\b"),                                 # written as one word
    ("multi-modal inputs are dropped", r"\bmultimodal\b"),                              # one word written apart
    ("a memory-leak after 2 days", r"\bmemory (leak|usage)\b"),
    ("CUDA-graph capture fails", r"\bcuda ?graphs?\b"),
    ("where are the windows wheels", r"\bwheel\b"),                                     # plural
    ("heads are not divisble by 3", r"\bdivisib\w*"),
])
def test_a_misspelt_keyword_matches_after_correction(written: str, pattern: str) -> None:
    assert pattern not in _hits(written)
    assert pattern in _hits(W.correct(written)), W.correct(written)


@pytest.mark.parametrize("written", [
    "[Bug]: the server crashes after the first request with a long prompt",
    "fine-tuning works, but tuning the kernel does not",      # "tuning" is not "turing": the first letter differs
    "the location of the model cache",
    "embedding models return zeros",                          # starts with the stem: matches as written
    "set tool_calls and max_memory_usage_bytes",              # snake_case identifiers are code
    "the structure of the output",
])
def test_words_near_no_keyword_are_left_alone(written: str) -> None:
    assert W.correct(written) is written


def test_two_different_keywords_at_one_edit_give_no_guess() -> None:
    w = Wording([r"\bconnector\b", r"\bconnected\b"])
    assert w.correct("the connectod node") == "the connectod node"
    assert w.word("conector") == "connector"


def test_the_rest_of_the_text_is_kept_as_written() -> None:
    text = "Title: PP>1 with `qunatization=fp8` on (H100) — 2 nodes!"
    assert W.correct(text) == "Title: PP>1 with `quantization=fp8` on (H100) — 2 nodes!"


def test_squash_drops_case_separators_and_doubled_letters() -> None:
    assert squash("Paral-lel") == squash("parallel") == "paralel"
    assert squash("tool_call") == "tolcal"


@pytest.mark.timeout(30)
def test_correction_is_linear_on_hostile_text() -> None:
    text = ("paralel " * 20_000) + ("x" * 100_000) + ("-a" * 50_000)
    out = W.correct(text)
    assert out.count("parallel") == 20_000


def test_a_text_corrected_again_gives_the_same_answer_and_an_unchanged_text_is_itself() -> None:
    w = Wording(PATTERNS)
    fixed = "[Bug]: pipeline parallelism hangs"
    misspelt = "".join(["[Bug]: pipline ", "paralelism hangs"])
    assert w.correct(misspelt) == w.correct("".join(["[Bug]: pipline ", "paralelism hangs"])) == fixed
    plain = "".join(["the server ", "starts"])
    again = "".join(["the server ", "starts"])
    assert w.correct(plain) is plain
    assert w.correct(again) is again    # equal to a text seen before, but the caller's own object
    for k in range(50):                 # more texts than are kept: the answers stay the same
        assert w.correct(f"qunatization {k}") == f"quantization {k}"
    assert w.correct(misspelt) == fixed


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["tool", "call", "calls", "multi", "modal", "node", "kv", "cache", "paralel",
                                 "qunatization", "Tool", "-", " ", "  ", "\t", ".", "x", "2"]),
                max_size=16).map("".join))
def test_an_ascii_text_is_corrected_as_the_same_text_with_non_ascii_after_it(text: str) -> None:
    # the two paths of the pair check: tokens lower-cased (ASCII text), the lower-cased text read again (any other)
    assert W.correct(text + " é") == W.correct(text) + " é"
