"""RE2 patterns for rules: compiled once, searched over UTF-8 bytes, linted against useless or costly shapes.

Issue text is untrusted, so every rule regex runs on RE2 (linear time). Patterns are case-insensitive unless
they start with `(?-i)`. Texts are encoded once per report (see `conditions.Texts`) and searched as bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import re2

# A counted repetition above this is rejected: it bloats the program and never helps match an error message.
MAX_REPEAT = 500
# RE2 program size (instructions): `[^\n]{0,400}` alone is ~3,600; nested counted repeats blow past the limit.
MAX_PROGRAM_SIZE = 20_000
MAX_PATTERN_LEN = 1_000
# What one search may read: longer texts are cut (head kept) before searching.
MAX_SEARCH_BYTES = 2_000_000
# Evidence and captures are cut to this many characters.
MAX_EVIDENCE = 240


class PatternError(ValueError):
    pass


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = 8 << 20
    options.log_errors = False
    return options


def _counted_repeats(pattern: str) -> list[tuple[int, int | None]]:
    """`{n}`, `{n,}`, `{n,m}` quantifiers outside character classes, as (n, m) with m None for unbounded."""
    found: list[tuple[int, int | None]] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if i + 1 < n and pattern[i + 1] == "]":  # `[]…]` starts with a literal bracket
                i += 1
        elif c == "{":
            j = pattern.find("}", i)
            body = pattern[i + 1:j] if j > 0 else ""
            lo, _, hi = body.partition(",")
            if lo.isdigit() and (not hi or hi.isdigit()):
                upper = None if "," in body and not hi else int(hi or lo)
                found.append((int(lo), upper))
                i = j
        i += 1
    return found


def lint(pattern: object) -> str:
    """The pattern as RE2 source, or PatternError saying why it cannot be a rule pattern."""
    if not isinstance(pattern, str):
        raise PatternError(f"must be a string, not {type(pattern).__name__}")
    if not pattern.strip():
        raise PatternError("empty pattern")
    if len(pattern) > MAX_PATTERN_LEN:
        raise PatternError(f"longer than {MAX_PATTERN_LEN} characters")
    for lo, hi in _counted_repeats(pattern):
        if lo > MAX_REPEAT or (hi is not None and hi > MAX_REPEAT):
            raise PatternError(f"counted repetition {{{lo},{'' if hi is None else hi}}} exceeds {MAX_REPEAT}")
    return pattern


@dataclass(frozen=True, eq=False)
class Pattern:
    """One compiled rule regex."""

    source: str
    regexp: object = field(repr=False)
    groups: tuple[tuple[str, int], ...] = ()   # named groups: (name, index)

    @classmethod
    def compile(cls, pattern: object) -> Pattern:
        source = lint(pattern)
        text = source if source.startswith("(?-i)") else "(?i)" + source
        try:
            regexp = re2.compile(text.encode("utf-8"), _options())
        except re2.error as e:
            reason = e.args[0] if e.args else e
            if isinstance(reason, bytes):
                reason = reason.decode("utf-8", "replace")
            raise PatternError(f"RE2 cannot compile /{source}/: {reason}") from None
        raw = regexp._regexp
        if raw.ProgramSize() > MAX_PROGRAM_SIZE:
            raise PatternError(f"compiles to {raw.ProgramSize()} RE2 instructions (limit {MAX_PROGRAM_SIZE})")
        if regexp.search(b"") is not None:
            raise PatternError(f"/{source}/ matches the empty string, so it matches every text")
        groups = []
        for name, index in regexp.groupindex.items():
            key = name.decode("utf-8") if isinstance(name, bytes) else name
            if not key.isidentifier():
                raise PatternError(f"group name {key!r} is not an identifier")
            groups.append((key, index))
        return cls(source, regexp, tuple(sorted(groups, key=lambda g: g[1])))

    def search(self, data: bytes) -> tuple[int, int, dict[str, str]] | None:
        """(start, end, captures) of the first match in `data` (UTF-8 bytes), or None."""
        if len(data) > MAX_SEARCH_BYTES:
            data = data[:MAX_SEARCH_BYTES]
        m = self.regexp.search(data)
        if m is None:
            return None
        captures: dict[str, str] = {}
        for name, index in self.groups:
            value = m.group(index)
            if value is not None:
                captures[name] = bounded(value.decode("utf-8", "replace"))
        start, end = m.span()
        return start, end, captures

    def search_text(self, text: str) -> tuple[str, dict[str, str]] | None:
        """(matched text, captures) in a short str, or None."""
        data = text.encode("utf-8", "replace")
        hit = self.search(data)
        if hit is None:
            return None
        start, end, captures = hit
        return bounded(data[start:end].decode("utf-8", "replace")), captures


def bounded(text: str, limit: int = MAX_EVIDENCE) -> str:
    text = " ".join(text.split()) if "\n" in text or "\t" in text else text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def line_around(data: bytes, start: int, end: int, limit: int = MAX_EVIDENCE) -> str:
    """The line of `data` holding the span, cut to `limit` characters around the match."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    if line_end < 0:
        line_end = len(data)
    prefix = ""
    if line_end - line_start > limit:  # a long line: a window that starts a little before the match
        window = max(line_start, start - limit // 4)
        prefix = "…" if window > line_start else ""
        line_start, line_end = window, min(line_end, window + limit * 2)
    return bounded(prefix + data[line_start:line_end].decode("utf-8", "replace"), limit)
