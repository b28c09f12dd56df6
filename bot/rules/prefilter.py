"""RE2 Sets per searchable text: one pass tells which rule patterns can match anywhere in it.

Conditions then search (for spans and captures) only with the patterns the Sets reported. RE2's Set gives
up silently when its DFA runs out of memory, so every Set holds a sentinel that always matches: a result
without the sentinel means "unknown", and every pattern is searched as if there were no prefilter.

The Sets only have to be a superset of the real matches, which makes them cheap: each pattern is added with
its counted repetitions made open (`[^\\n]{0,80}` as `[^\\n]{0,}`), and a text's patterns are spread over Sets of
at most `SET_SIZE`. A many-match DFA tracks every pattern at once, so counters and dozens of `\\b…[^\\n]*…`
patterns multiply into states that each new text builds afresh (one Set of 230 such patterns cost 4 ms a text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import re2

from bot.rules.regex import Pattern

SENTINEL = rb"\A"
SET_MAX_MEM = 64 << 20
SET_SIZE = 40
_RANGE = re.compile(rb"\{(\d+),\d+\}")


def open_repeats(pattern: bytes) -> bytes:
    """`pattern` with every `{m,n}` quantifier outside a character class written `{m,}`: it matches wherever
    `pattern` matches, and more."""
    out = bytearray()
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i:i + 1]
        if c == b"\\":
            if pattern[i + 1:i + 2] in (b"x", b"p", b"P") and pattern[i + 2:i + 3] == b"{":
                end = pattern.find(b"}", i)
                end = n - 1 if end < 0 else end
                out += pattern[i:end + 1]
                i = end + 1
            else:
                out += pattern[i:i + 2]
                i += 2
            continue
        if in_class:
            in_class = c != b"]"
        elif c == b"[":
            in_class = True
            out += c
            i += 1
            if pattern[i:i + 1] == b"^":
                out += b"^"
                i += 1
            if pattern[i:i + 1] == b"]":   # `[]…]` and `[^]…]` start with a literal bracket
                out += b"]"
                i += 1
            continue
        elif c == b"{" and (m := _RANGE.match(pattern, i)) is not None:
            out += b"{" + m.group(1) + b",}"
            i = m.end()
            continue
        out += c
        i += 1
    return bytes(out)


def _new_set() -> object:
    options = re2.Options()
    options.max_mem = SET_MAX_MEM
    options.log_errors = False
    return re2.Set.SearchSet(options)


def _add(compiled: object, pattern: Pattern) -> int:
    # (?m): `^`/`$` also match at line breaks of the joined text, a superset of per-item matching
    source = b"(?m)" + pattern.regexp._pattern
    try:
        return compiled.Add(open_repeats(source))
    except re2.error:
        return compiled.Add(source)


class Prefilter:
    def __init__(self, pairs: Iterable[tuple[Pattern, str]]) -> None:
        by_source: dict[str, dict[int, Pattern]] = {}
        for pattern, source in pairs:
            by_source.setdefault(source, {})[id(pattern)] = pattern
        # per text: [(Set, its sentinel's index, the slot of its index 0)], pattern id -> slot
        self._sets: dict[str, tuple[list[tuple[object, int, int]], dict[int, int]]] = {}
        for source, patterns in by_source.items():
            sets: list[tuple[object, int, int]] = []
            index: dict[int, int] = {}
            items = list(patterns.items())
            for start in range(0, len(items), SET_SIZE):
                compiled = _new_set()
                base = start + len(sets)    # every Set's sentinel takes a slot too
                for key, pattern in items[start:start + SET_SIZE]:
                    index[key] = base + _add(compiled, pattern)
                sentinel = compiled.Add(SENTINEL)
                compiled.Compile()
                sets.append((compiled, sentinel, base))
            self._sets[source] = (sets, index)

    def sources(self) -> tuple[str, ...]:
        return tuple(self._sets)

    def slot(self, source: str, pattern: Pattern) -> int | None:
        """The index `run` reports for the pattern when it can match in text `source` (None: not in the Sets)."""
        entry = self._sets.get(source)
        return entry[1].get(id(pattern)) if entry is not None else None

    def run(self, source: str, data: bytes) -> tuple[set[int], dict[int, int]] | None:
        """(slots that matched, pattern-id -> slot), or None when the source has no Set or a Set failed."""
        entry = self._sets.get(source)
        if entry is None:
            return None
        sets, index = entry
        matched: set[int] = set()
        for compiled, sentinel, base in sets:
            result = compiled.Match(data)
            if not result or sentinel not in result:
                return None
            matched.update(base + k for k in result)
        return matched, index
