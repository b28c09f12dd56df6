"""Per searchable text, which rule patterns can match anywhere in it.

Conditions then search (for spans and captures) only with the patterns the prefilter reported. Its answer only
has to be a superset of the real matches, which makes it cheap: each pattern is tried with its counted
repetitions made open (`[^\\n]{0,80}` as `[^\\n]{0,}`), and how depends on the pattern:

- a pattern every match of which holds literals of at least `GATING_LITERAL` characters (`required_literals`:
  "flashinfer", "no kernel image", one of "gpu"/"card"…) is searched on its own, and only when a first pass of one
  RE2 Set of every text's literals found each of its groups of literals (most texts hold few). That pass runs
  once over each part of the report (title, description, body, corrected words, log…), not over every text that
  joins the part: a text's literals are those of its parts;
- a pattern that can match a single character (`\\S`) is searched on its own every time;
- the others (no literal of three characters: `(指定|设置)…`, `\\btp\\s*=\\s*[3567]`) go into RE2 Sets of at most
  `SET_SIZE` patterns, one pass each. A many-match DFA tracks every pattern at once, so counters and `[^\\n]*`
  gaps multiply into states that each new report builds afresh (a Set of 33 question patterns cost ~0.4 ms a
  report on real issues): as few patterns in Sets as possible.

RE2's Set gives up silently when its DFA runs out of memory, so every Set holds a sentinel that always matches:
a result without the sentinel means "unknown", and every pattern is searched as if there were no prefilter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import re2

from bot.rules.regex import Pattern
from bot.rules.required import required_literals, shortest_match

SENTINEL = rb"\A"
SET_MAX_MEM = 64 << 20
SET_SIZE = 20
# a group of literals whose shortest is shorter than this is in too many texts to be worth a search of its own
STRONG_LITERAL = 5
# a group of literals gates a search of its own from this length: the Sets cost more than searching the patterns whose
# every group is in a text, one by one
GATING_LITERAL = 3
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
    """The patterns of every text, and one RE2 Set of all their literals: a report's pieces (its title, body,
    description, log…) are each passed through it once, and a text's literals are those of the pieces it joins."""

    def __init__(self, pairs: Iterable[tuple[Pattern, str]]) -> None:
        by_source: dict[str, dict[int, Pattern]] = {}
        for pattern, source in pairs:
            by_source.setdefault(source, {})[id(pattern)] = pattern
        bit_of: dict[frozenset[str], int] = {}      # a group of literals -> its bit, shared by every text
        self._texts = {source: TextFilter(list(patterns.values()), bit_of) for source, patterns in by_source.items()}
        bits_of: dict[str, int] = {}                # literal -> the bits of the groups it is in
        for group, bit in bit_of.items():
            for literal in sorted(group):
                bits_of[literal] = bits_of.get(literal, 0) | bit
        self.literals = _new_set()
        self.literal_bits: list[int] = []
        # a literal holding a line break may span two joined pieces: a text of several pieces may hold it
        self.joined_bits = 0
        for literal, bits in bits_of.items():
            self.literals.Add(b"(?i)" + re2.escape(literal.encode("utf-8")))
            self.literal_bits.append(bits)
            if "\n" in literal:
                self.joined_bits |= bits
        self.literals_sentinel = self.literals.Add(SENTINEL)
        self.literal_bits.append(0)
        self.literals.Compile()

    def sources(self) -> tuple[str, ...]:
        return tuple(self._texts)

    def holds(self, source: str) -> bool:
        return source in self._texts

    def slot(self, source: str, pattern: Pattern) -> int | None:
        """The index `run` reports for the pattern when it can match in text `source` (None: not prefiltered)."""
        entry = self._texts.get(source)
        return entry.index.get(id(pattern)) if entry is not None else None

    def bits(self, data: bytes) -> int | None:
        """The bits of the groups of literals found in `data`, from one pass; None when the Set failed."""
        found = self.literals.Match(data)
        if not found or self.literals_sentinel not in found:
            return None
        bits = 0
        literal_bits = self.literal_bits
        for k in found:
            bits |= literal_bits[k]
        return bits

    def run(self, source: str, data: bytes) -> tuple[set[int], dict[int, int]] | None:
        """(slots that matched, pattern-id -> slot), or None when the source has no patterns or a Set failed."""
        return self.run_joined(source, self.bits(data), lambda: data)

    def run_joined(self, source: str, bits: int | None,
                   text: Callable[[], bytes]) -> tuple[set[int], dict[int, int]] | None:
        """`run` for a text whose literals' `bits` are known (from its pieces); `text()` is read only when a
        pattern needs searching."""
        entry = self._texts.get(source)
        if entry is None or bits is None:
            return None
        matched = entry.run(bits, text)
        return None if matched is None else (matched, entry.index)


class TextFilter:
    """The patterns of one text, slot i being patterns[i]: those with literals searched one by one when their
    literals are there, the others in Sets."""

    def __init__(self, patterns: list[Pattern], bit_of: dict[frozenset[str], int] | None = None) -> None:
        bit_of = {} if bit_of is None else bit_of
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
        # slots searched on their own when their groups' literals are in the text: by the bit of their most selective
        # group, (slot, the bits of all its groups)
        self.needs: dict[int, list[tuple[int, int]]] = {}
        self.keys = 0                           # the bits of those most selective groups
        in_sets: list[int] = []
        for slot, pattern in enumerate(patterns):
            groups = literal_groups(pattern)
            if not groups and matches_anything(pattern):
                self.always.append(slot)
            elif not groups:
                in_sets.append(slot)
            else:
                need = 0
                for group in groups:
                    need |= bit_of.setdefault(group, 1 << len(bit_of))
                key = bit_of[groups[0]]
                self.needs.setdefault(key, []).append((slot, need))
                self.keys |= key
        # compiled now, not on first use: replay's workers fork after loading the rules and share them
        gated = (slot for needs in self.needs.values() for slot, _ in needs)
        self.singles = {slot: _single(patterns[slot]) for slot in (*self.always, *gated)}
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

    def candidates(self, bits: int) -> list[int]:
        """The slots searched on their own whose every group has a literal among `bits`."""
        out = []
        keys = bits & self.keys
        while keys:
            key = keys & -keys
            keys ^= key
            out += [slot for slot, need in self.needs[key] if need & bits == need]
        return out

    def run(self, bits: int, text: Callable[[], bytes]) -> set[int] | None:
        """The slots whose pattern (with open repeats) matches somewhere in `text()`, the literals of which are
        `bits`; None when a Set failed."""
        searched = self.candidates(bits)
        searched += self.always
        if not searched and not self.sets:
            return set()
        data = text()
        singles = self.singles
        matched = {slot for slot in searched if singles[slot].search(data) is not None}
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
    """The groups of literals long enough to be in few texts."""
    return [g for g in required_literals(pattern.source) if min(map(len, g)) >= STRONG_LITERAL]


def literal_groups(pattern: Pattern) -> list[frozenset[str]]:
    """The groups of literals that gate a search of `pattern` of its own; [] puts it in a Set."""
    return [g for g in required_literals(pattern.source) if min(map(len, g)) >= GATING_LITERAL]


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
