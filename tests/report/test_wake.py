"""`lines_matching` finds the same lines as matching the line pattern on each line by itself."""

from __future__ import annotations

import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.report.wake import line_finder, lines_matching

LINE = r"[^\n]*?(?:ab|c\(|é)|[ \t]*[A-Z]\w*:"
FINDER = line_finder(LINE)
EACH = re2.compile(f"^(?:{LINE})".encode())
PIECES = ["ab", "c(", "é", " ", "\t", "X", "Xy:", "z", ":", "\n", "\n\n", "\r", "\ud800", "A:", "a"]


def one_by_one(text: str) -> list[int]:
    return [i for i, line in enumerate(text.split("\n")) if EACH.search(line.encode("utf-8", "replace"))]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=30).map("".join))
def test_runs_of_lines_are_the_lines_that_match_one_by_one(text):
    assert lines_matching(text, FINDER) == one_by_one(text)


def test_runs_and_ends():
    finder = FINDER
    assert lines_matching("ab\nab\nzz\nXy: 1\n", finder) == [0, 1, 3]
    assert lines_matching("zz\nc(", finder) == [1]
    assert lines_matching("", finder) == []
    assert lines_matching("\n\nab", finder) == [2]
