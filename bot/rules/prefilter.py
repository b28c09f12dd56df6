"""Per searchable text, which rule patterns can match anywhere in it, found in a few passes over the text.

Conditions then search (for spans and captures) only with the patterns the prefilter reported. Its answer only
has to be a superset of the real matches, which makes it cheap: each pattern is tried with its counted
repetitions made open (`[^\\n]{0,80}` as `[^\\n]{0,}`), and how depends on the pattern:

- a pattern every match of which holds a long literal (`required_literals`: "flashinfer", "no kernel image",
  one of "bfloat16"/"bf16 is not"…) is searched on its own, and only when a first pass of one RE2 Set of all
  such literals found each of its groups of literals in the text (most texts hold none);
- a pattern that can match a single character (`\\S`, `\\?|\\bhow\\b`) is searched on its own every time:
  it matches almost at once, where in a Set it would make nearly every state a matching one;
- the others (`\\b(support\\w*|run\\w*)\\b…`, whose words are in most texts) go into RE2 Sets of at most
  `SET_SIZE` patterns, one pass each. A many-match DFA tracks every pattern at once, so counters and dozens of
  `\\b…[^\\n]*…` patterns multiply into states that each new text builds afresh (one Set of 230 such patterns
  cost 4 ms a text): few patterns per Set, and as few patterns in Sets as possible.

RE2's Set gives up silently when its DFA runs out of memory, so every Set holds a sentinel that always matches:
a result without the sentinel means "unknown", and every pattern is searched as if there were no prefilter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import re2

from bot.rules.regex import Pattern
from bot.rules.required import required_literals, shortest_match

SENTINEL = rb"\A"
SET_MAX_MEM = 64 << 20
SET_SIZE = 20
# a group of literals whose shortest is shorter than this is in too many texts to be worth a search of its own
STRONG_LITERAL = 5
# a pattern that can match this few characters matches nearly every text, and at once
MATCHES_ANYTHING = 1
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


class Prefilter:
    def __init__(self, pairs: Iterable[tuple[Pattern, str]]) -> None:
        by_source: dict[str, dict[int, Pattern]] = {}
        for pattern, source in pairs:
            by_source.setdefault(source, {})[id(pattern)] = pattern
        self._texts = {source: TextFilter(list(patterns.values())) for source, patterns in by_source.items()}

    def sources(self) -> tuple[str, ...]:
        return tuple(self._texts)

    def slot(self, source: str, pattern: Pattern) -> int | None:
        """The index `run` reports for the pattern when it can match in text `source` (None: not prefiltered)."""
        entry = self._texts.get(source)
        return entry.index.get(id(pattern)) if entry is not None else None

    def run(self, source: str, data: bytes) -> tuple[set[int], dict[int, int]] | None:
        """(slots that matched, pattern-id -> slot), or None when the source has no patterns or a Set failed."""
        entry = self._texts.get(source)
        if entry is None:
            return None
        matched = entry.run(data)
        return None if matched is None else (matched, entry.index)


class TextFilter:
    """The patterns of one text, slot i being patterns[i]: those with strong literals searched one by one when
    their literals are there, the others in Sets."""

    def __init__(self, patterns: list[Pattern]) -> None:
        self.patterns: list[Pattern] = []
        self.index: dict[int, int] = {}
        slot_of: dict[bytes, int] = {}          # patterns written alike (every rule's own `\\S`) share a slot
        for pattern in patterns:
            key = pattern.regexp._pattern
            if key not in slot_of:
                slot_of[key] = len(self.patterns)
                self.patterns.append(pattern)
            self.index[id(pattern)] = slot_of[key]
        patterns = self.patterns
        self.always: list[int] = []             # slots searched on their own for every text
        self.needs: dict[int, int] = {}         # slot searched on its own -> bit mask of its groups of literals
        bits_of: dict[str, int] = {}            # literal -> the groups it is in
        in_sets: list[int] = []
        groups_seen = 0
        for slot, pattern in enumerate(patterns):
            groups = strong_literals(pattern)
            if not groups and matches_anything(pattern):
                self.always.append(slot)
            elif not groups:
                in_sets.append(slot)
            for group in groups:
                bit = 1 << groups_seen
                groups_seen += 1
                self.needs[slot] = self.needs.get(slot, 0) | bit
                for literal in sorted(group):
                    bits_of[literal] = bits_of.get(literal, 0) | bit
        # compiled now, not on first use: replay's workers fork after loading the rules and share them
        self.singles = {slot: _single(patterns[slot]) for slot in (*self.always, *self.needs)}
        self.literals = _new_set()
        self.literal_bits: list[int] = []
        self.literal_slots: list[tuple[int, ...]] = []
        for literal, bits in bits_of.items():
            self.literals.Add(b"(?i)" + re2.escape(literal.encode("utf-8")))
            self.literal_bits.append(bits)
            self.literal_slots.append(tuple(s for s, need in self.needs.items() if need & bits))
        self.literals_sentinel = self.literals.Add(SENTINEL)
        self.literals.Compile()
        self.sets: list[tuple[object, int, list[int]]] = []   # (Set, its sentinel, the slot of each index)
        for start in range(0, len(in_sets), SET_SIZE):
            compiled = _new_set()
            slots = in_sets[start:start + SET_SIZE]
            for slot in slots:
                try:
                    compiled.Add(_opened(patterns[slot]))
                except re2.error:
                    compiled.Add(_opened(patterns[slot], open_them=False))
            sentinel = compiled.Add(SENTINEL)
            compiled.Compile()
            self.sets.append((compiled, sentinel, slots))

    def candidates(self, data: bytes) -> set[int] | None:
        """The slots searched on their own whose every group has a literal in `data`; None when the Set failed."""
        found = self.literals.Match(data)
        if not found or self.literals_sentinel not in found:
            return None
        have = 0
        touched: set[int] = set()
        for k in found:
            if k != self.literals_sentinel:
                have |= self.literal_bits[k]
                touched.update(self.literal_slots[k])
        needs = self.needs
        return {slot for slot in touched if needs[slot] & have == needs[slot]}

    def run(self, data: bytes) -> set[int] | None:
        """The slots whose pattern (with open repeats) matches somewhere in `data`; None when a Set failed."""
        candidates = self.candidates(data)
        if candidates is None:
            return None
        candidates.update(self.always)
        singles = self.singles
        matched = {slot for slot in candidates if singles[slot].search(data) is not None}
        for compiled, sentinel, slots in self.sets:
            result = compiled.Match(data)
            if not result or sentinel not in result:
                return None
            matched.update(slots[k] for k in result if k != sentinel)
        return matched


def matches_anything(pattern: Pattern) -> bool:
    """`pattern` can match MATCHES_ANYTHING characters or fewer: it matches nearly every text, and at once."""
    width = shortest_match(pattern.source)
    return width is not None and width <= MATCHES_ANYTHING


def strong_literals(pattern: Pattern) -> list[frozenset[str]]:
    """The groups of literals long enough to gate a search of `pattern` of its own; [] puts it in a Set."""
    return [g for g in required_literals(pattern.source) if min(map(len, g)) >= STRONG_LITERAL]


def _single(pattern: Pattern) -> Any:
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(_opened(pattern), options)
    except re2.error:
        return re2.compile(_opened(pattern, open_them=False), options)


def _opened(pattern: Pattern, open_them: bool = True) -> bytes:
    # (?m): `^`/`$` also match at line breaks of the joined text, a superset of per-item matching
    source = b"(?m)" + pattern.regexp._pattern
    return open_repeats(source) if open_them else source
