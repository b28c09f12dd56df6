"""Words as people write them: texts are corrected toward the keywords of the patterns, nothing else changes."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
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


def _scanned(w: Wording, text: str) -> str:
    """The correction read word by word in order: every word looked up, each pair of neighbours tried (the plain
    form of what `Wording._correct` does only for the words that are fixed or may start a keyword written apart)."""
    looked = [w._lookup(t) for t in set(re.findall(r"[A-Za-z0-9_]+", text))]
    low = set(re.findall(r"[A-Za-z0-9_]+", text.lower()))
    if all(fixed is None for fixed, _, _ in looked) and all(w.tails[k].isdisjoint(low) for _, k, h in looked if h):
        return text   # nothing fixed, and no word that may start a keyword written apart is followed by its end
    edits: list[tuple[int, int, str]] = []
    prev: re.Match[str] | None = None
    prev_key, prev_head = "", False
    for m in re.finditer(r"[A-Za-z0-9_]+", text):
        fixed, key, head = w._lookup(m.group())
        if fixed is not None:
            edits.append((m.start(), m.end(), fixed))
        elif prev_head and prev is not None:
            pair_key = prev_key + key[1:] if key[:1] == prev_key[-1:] else prev_key + key
            phrase = w.joined.get(pair_key) or (w.words.get(pair_key) if pair_key in w.whole else None)
            if phrase is not None and not (edits and edits[-1][1] > prev.start()) \
                    and re.fullmatch(r"[- \t]{1,3}", text[prev.end():m.start()]):
                pair = text[prev.start():m.end()].lower()
                if pair not in w.forms and not any(pair[:n] in w.stem_phrases for n in range(len(pair))):
                    edits.append((prev.start(), m.end(), phrase))
        prev, prev_key, prev_head = m, key, head
    if not edits:
        return text
    for start, end, fixed in reversed(edits):
        text = text[:start] + fixed + text[end:]
    return text


# keywords written apart whose second word starts another ("multi modal input": only one of the two is joined)
CHAINED = PATTERNS + [r"\bmodal input\b", r"\bcall graph\b", r"\bleak check\b"]
PIECES = ["tool", "call", "calls", "multi", "modal", "multimodal", "memory", "leak", "usage", "cuda", "graph",
          "pipeline", "pipline", "parallel", "paralel", "qunatization", "quantisation", "structured", "output",
          "wheels", "Tool", "CALL", "Multi", "speculatve", "divisble", "turing", "embed", "toolcall", "cudagraphs",
          "memoryleak", "input", "check", "x", "2", "_"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES + ["-", " ", "  ", "    ", "\t", "-_", ".", " - ", "é"]), max_size=24)
       .map("".join))
@example("multi modal-input, tool-call graph")
@example("pipline paralel  multi-modal\tinput cuda graph")
def test_the_words_fixed_or_joined_are_those_a_word_by_word_reading_finds(text: str) -> None:
    w = Wording(CHAINED)
    corrected, scanned = w.correct(text), _scanned(w, text)
    assert corrected == scanned
    assert (corrected is text) == (scanned is text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="aceilmnoprstuvwyzACLMPQT_", min_size=1, max_size=16)
       | st.sampled_from(PIECES).flatmap(lambda p: st.tuples(st.just(p), st.integers(0, len(p)), st.sampled_from(
           "aeilnrstz")).map(lambda t: t[0][:t[1]] + t[2] + t[0][t[1]:])))
def test_a_word_near_no_keyword_of_any_wording_is_not_searched_for_one(token: str) -> None:
    # the screen shared by every Wording skips the search for a word none of them can correct: the answer is the
    # one of a search over the key and all its one-letter deletions
    w = Wording(PATTERNS)
    low = token.lower()
    key = squash(low)
    every = (key, *(key[:i] + key[i + 1:] for i in range(len(key))))
    assert w.word(token) == w._word(low, key, every)
