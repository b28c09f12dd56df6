"""One RE2 Set per searchable text: a single pass tells which rule patterns can match anywhere in it.

Conditions then search (for spans and captures) only with the patterns the Set reported. RE2's Set gives
up silently when its DFA runs out of memory, so every Set holds a sentinel that always matches: a result
without the sentinel means "unknown", and every pattern is searched as if there were no prefilter.
"""

from __future__ import annotations

from collections.abc import Iterable

import re2

from bot.rules.regex import Pattern

SENTINEL = rb"\A"
SET_MAX_MEM = 64 << 20


class Prefilter:
    def __init__(self, pairs: Iterable[tuple[Pattern, str]]) -> None:
        by_source: dict[str, dict[int, Pattern]] = {}
        for pattern, source in pairs:
            by_source.setdefault(source, {})[id(pattern)] = pattern
        self._sets: dict[str, tuple[object, dict[int, int], int]] = {}
        for source, patterns in by_source.items():
            options = re2.Options()
            options.max_mem = SET_MAX_MEM
            options.log_errors = False
            compiled = re2.Set.SearchSet(options)
            index: dict[int, int] = {}
            for key, pattern in patterns.items():
                # (?m): `^`/`$` also match at line breaks of the joined text, a superset of per-item matching
                index[key] = compiled.Add(b"(?m)" + pattern.regexp._pattern)
            sentinel = compiled.Add(SENTINEL)
            compiled.Compile()
            self._sets[source] = (compiled, index, sentinel)

    def sources(self) -> tuple[str, ...]:
        return tuple(self._sets)

    def slot(self, source: str, pattern: Pattern) -> int | None:
        """The index `run` reports for the pattern when it can match in text `source` (None: not in the Set)."""
        entry = self._sets.get(source)
        return entry[1].get(id(pattern)) if entry is not None else None

    def run(self, source: str, data: bytes) -> tuple[set[int], dict[int, int]] | None:
        """(indexes that matched, pattern-id -> index), or None when the source has no Set or the Set failed."""
        entry = self._sets.get(source)
        if entry is None:
            return None
        compiled, index, sentinel = entry
        result = compiled.Match(data)
        if not result or sentinel not in result:
            return None
        return set(result), index
