"""Which lines of a text a line reader has to look at, found by one RE2 search of the whole text.

A reader whose state machine is idle most of the time (no traceback open, no collect_env run started) gives a
loose form of every test that can wake it; `lines_matching` finds the lines that pass it, and the reader skips the
others while it is idle. RE2 reads UTF-8: Python's `\\w` outside ASCII is any non-ASCII character there.
"""

from __future__ import annotations

import re2


def line_finder(line: str) -> re2._Regexp:
    """A pattern for `lines_matching`: `line` is matched at the start of a line (`^` is implied), and each match
    covers a run of consecutive lines where it matches, so a search returns once per run, not once per line."""
    return re2.compile(f"(?m)(?:^(?:{line})[^\\n]*(?:\\n|$))+".encode())


def lines_matching(text: str, finder: re2._Regexp) -> list[int]:
    """Indices of the lines of `text` (split on "\\n") where the `line_finder` pattern matches, in order."""
    data = text.encode("utf-8", "replace")   # a lone surrogate becomes "?": the lines stay the same
    out: list[int] = []
    line = pos = 0
    for m in finder.finditer(data):
        start, end = m.span()
        line += data.count(b"\n", pos, start)
        # a run ends after its last newline, or at the end of the text
        covered = data.count(b"\n", start, end) + (data[end - 1] != 0x0A)
        out.extend(range(line, line + covered))
        line += covered
        pos = end
    return out
