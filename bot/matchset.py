"""Which of many Python patterns match a text, from one pass of an RE2 Set: exactly the patterns `k` for which
`re.compile(patterns[k], flags).search(text)` finds a match, at the cost of one pass instead of one search each.

Each pattern's top-level alternatives are read apart. The alternatives RE2 matches as Python `re` does go into
one RE2 Set; the others (lookarounds, `$`, back-references, `{,n}`, …) stay Python patterns, searched only when
the Set finds one of the literal strings every match of them contains (`bot.literals.needles`). When many
alternatives hold an unbounded repetition, they are put in Sets of their own (one pass each; see `_set_groups`).
A text on which RE2 could read a character otherwise than `re` is searched with the Python patterns, as is every
text when a Set gives up (its memory budget):

* RE2's case folding adds U+017F (long s) and U+212A (Kelvin sign) to `s` and `k`; `re.ASCII` does not;
* RE2's `\\s` lacks `\\v`, and Unicode `re` patterns also take `\\x1c`-`\\x1f` and non-ASCII characters for
  spaces, word characters and digits: those patterns take the Set only over ASCII text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import re2

from bot.literals import needles

# characters on which RE2 may disagree with `re` (see the module's docstring)
_ASCII_MODE_UNSAFE = ("\x0b", "\u017f", "\u212a")
_UNICODE_MODE_UNSAFE = ("\x0b", "\x1c", "\x1d", "\x1e", "\x1f")
_LOOKAROUND = re.compile(r"\(\?<?[=!]")
_GLOBAL_FLAG = re.compile(r"\(\?[a-zA-Z-]+\)")
# an alternative with a longer counted repetition (`.{0,60}`) stays a Python pattern: in the Set its DFA states
# multiply with every other pattern's, and on reports unlike the ones seen before the DFA is rebuilt text by text
MAX_COUNT = 12
_COUNTS = re.compile(r"\{\d*,(\d+)\}")
_OPEN_COUNT = re.compile(r"\{\d*,\}")
# when more entries than this have an unbounded repetition, they are put apart, this many a Set (`_set_groups`)
SET_SIZE = 40


def alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of `pattern`, as written (`a|(b|c)|[|]` -> `a`, `(b|c)`, `[|]`)."""
    out: list[str] = []
    depth, start, i, in_class = 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            i += 1
            if pattern[i:i + 1] == "^":
                i += 1
            if pattern[i:i + 1] == "]":   # a `]` first in a class is a literal
                i += 1
            continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def _outside_classes(pattern: str) -> str:
    """`pattern` with the insides of its character classes blanked out (`_`), and escaped characters other than
    letters and digits; of the same length."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escaped = pattern[i + 1:i + 2]
            out.append("__" if in_class else "\\" + (escaped if escaped.isalnum() else "_"))
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
                out.append(c)
            else:
                out.append("_")
        elif c == "[":
            in_class = True
            out.append(c)
            j = i + 1 + (pattern[i + 1:i + 2] == "^")
            if pattern[j:j + 1] == "]":   # a `]` first in a class is a literal
                out.append("_" * (j - i))
                i = j
        else:
            out.append(c)
        i += 1
    return "".join(out)


def re2_reads_alike(alternative: str) -> bool:
    """RE2 matches `alternative` exactly where `re` does (on the texts `MatchSet` gives it)."""
    bare = _outside_classes(alternative)
    if _LOOKAROUND.search(bare) or "$" in bare or "{," in bare or "[:" in alternative or "\\Z" in bare:
        return False
    if re.search(r"\\[0-9]", bare) or "(?" in bare.replace("(?:", "").replace("(?P<", "").replace(
            "(?i:", "").replace("(?-i:", ""):
        return False   # back-references; inline flags other than a scoped `i`
    if any(c.lower() != c.upper() and not c.isascii() for c in alternative):
        return False   # a cased non-ASCII letter: RE2 folds its case, `re.ASCII` does not
    try:
        re2.compile(alternative)
    except re2.error:
        return False
    return True


def _max_count(alternative: str) -> int:
    return max((int(n) for n in _COUNTS.findall(alternative)), default=0)


def _groups(pattern: str) -> list[tuple[int, int]]:
    """The spans of the groups of `pattern`, from their `(` to past their `)`."""
    spans: list[tuple[int, int]] = []
    opened: list[int] = []
    bare = _outside_classes(pattern)
    for i, c in enumerate(bare):
        if c == "(":
            opened.append(i)
        elif c == ")" and opened:
            spans.append((opened.pop(), i + 1))
    return spans


_COMPLEMENTS = {"\\w": "\\W", "\\W": "\\w", "\\d": "\\D", "\\D": "\\d", "\\s": "\\S", "\\S": "\\s"}


def _complement(atom: str) -> str | None:
    """A pattern for one character that `atom` (one class, escape or literal character) does not match."""
    if atom in _COMPLEMENTS:
        return _COMPLEMENTS[atom]
    if atom.startswith("[") and _groups_free_class(atom):
        return "[" + atom[2:] if atom.startswith("[^") else "[^" + atom[1:]
    if len(atom) == 1 and atom.isalnum() and atom.isascii():
        return f"[^{atom}]"
    return None


def _groups_free_class(atom: str) -> bool:
    """`atom` is one character class, nothing more."""
    return len(alternatives(atom)) == 1 and _outside_classes(atom) == "[" + "_" * (len(atom) - 2) + "]"


def _ends_at_dollars(alternative: str) -> str:
    """`alternative` with each `$` after which nothing but the ends of groups follows matched as what it looks at:
    an optional newline, then the end of the text."""
    bare = _outside_classes(alternative)
    out, at = [], 0
    for i, c in enumerate(bare):
        if c == "$" and _nothing_after(bare, i + 1):
            out.append(alternative[at:i] + "\\n?\\z")
            at = i + 1
    out.append(alternative[at:])
    return "".join(out)


def _nothing_after(bare: str, i: int) -> bool:
    """From `i` on, `bare` only closes groups, unquantified (skipping their other alternatives)."""
    depth = 0   # inside another alternative of an enclosing group, skipped
    while i < len(bare):
        c = bare[i]
        if depth:
            depth += (c == "(") - (c == ")")
        elif c == "|":
            depth = 1
        elif c != ")" or bare[i + 1:i + 2] in ("*", "+", "?", "{"):
            return False
        i += 1
    return True


def _exact_form(alternative: str) -> str | None:
    """`alternative` as RE2 reads it alike: as written, or with a lookbehind at its start or a lookahead at its end
    matched as the characters they look at (a match exists exactly when it does), a `$` at its end as an optional
    newline and the end; None when there is none."""
    alternative = _ends_at_dollars(alternative)
    if not _LOOKAROUND.search(_outside_classes(alternative)):
        form = alternative
    else:
        spans = _groups(alternative)
        head, tail, start, end = "", "", 0, len(alternative)
        first = next((s for s in spans if s[0] == 0), None)
        if first is not None and alternative.startswith(("(?<=", "(?<!")):
            inner = alternative[4:first[1] - 1]
            other = _complement(inner) if alternative.startswith("(?<!") else f"(?:{inner})"
            if other is None:
                return None
            head, start = (f"(?:\\A|{other})" if alternative.startswith("(?<!") else other), first[1]
        last = next((s for s in spans if s[1] == len(alternative) and s[0] >= start), None)
        if last is not None and alternative.startswith(("(?=", "(?!"), last[0]):
            inner = alternative[last[0] + 3:-1]
            other = _complement(inner) if alternative.startswith("(?!", last[0]) else f"(?:{inner})"
            if other is None:
                return None
            tail, end = (f"(?:{other}|\\z)" if alternative.startswith("(?!", last[0]) else other), last[0]
        form = head + alternative[start:end] + tail
    return form if re2_reads_alike(form) and _max_count(form) <= MAX_COUNT else None


def _loose_form(alternative: str) -> str | None:
    """A pattern RE2 reads alike that matches wherever `alternative` does and more: its lookarounds left out, its
    long counted repetitions unbounded; None when there is none."""
    alternative = _ends_at_dollars(alternative)
    spans = [s for s in _groups(alternative) if alternative.startswith(("(?=", "(?!", "(?<=", "(?<!"), s[0])]
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            continue   # inside a lookaround left out already
        if alternative[end:end + 1] in ("*", "+", "?", "{"):
            return None
        out.append(alternative[at:start])
        at = end
    out.append(alternative[at:])
    form = _COUNTS.sub(lambda m: m.group(0) if int(m.group(1)) <= MAX_COUNT else m.group(0).split(",")[0] + ",}",
                       "".join(out))
    return form if re2_reads_alike(form) else None


class MatchSet:
    """The patterns `k` whose `re.compile(patterns[k], flags)` has a match in a text (`matching`)."""

    def __init__(self, patterns: Sequence[str], flags: int = re.IGNORECASE | re.ASCII) -> None:
        self.compiled = [re.compile(p, flags) for p in patterns]
        self._unsafe = _ASCII_MODE_UNSAFE if flags & re.ASCII else _UNICODE_MODE_UNSAFE
        self._ascii_only = not flags & re.ASCII
        entries: list[str] = []                          # the RE2 forms the Sets hold, by entry
        self._found_by: dict[int, int] = {}              # entry -> the pattern an alternative of it matched
        self._gates: dict[int, list[int]] = {}           # entry -> patterns whose rest may match (a gate)
        self.rest: dict[int, re.Pattern[str]] = {}       # pattern -> its alternatives the Sets do not read
        self._always: list[int] = []                     # patterns whose rest has no gate: always searched
        gate_ids: dict[str, int] = {}

        def gate(form: str, k: int) -> None:
            if form not in gate_ids:
                gate_ids[form] = len(entries)
                entries.append(form)
            if k not in self._gates.setdefault(gate_ids[form], []):
                self._gates[gate_ids[form]].append(k)

        for k, pattern in enumerate(patterns):
            kept: list[str] = []
            # a global inline flag (`(?i)…`) holds for every alternative: the pattern is not read apart
            split = alternatives(pattern) if not _GLOBAL_FLAG.search(_outside_classes(pattern)) else []
            for alternative in split or [pattern]:
                exact = _exact_form(alternative)
                if exact is not None:
                    self._found_by[len(entries)] = k
                    entries.append(exact)
                    continue
                kept.append(alternative)
                loose = _loose_form(alternative)
                strings = needles(alternative) if flags & re.IGNORECASE else None
                if loose is not None:
                    gate(loose, k)
                elif strings is not None:
                    for string in strings:
                        gate(re2.escape(string), k)
                elif k not in self._always:
                    self._always.append(k)
            if kept:
                self.rest[k] = re.compile("|".join(kept), flags)
        options = re2.Options()
        options.log_errors = False
        options.case_sensitive = not flags & re.IGNORECASE
        # (Set, its sentinel, the entry of each of its indices); the sentinel always matches: a result without it
        # means the Set gave up
        self._sets: list[tuple[Any, int, list[int]]] = []
        for group in _set_groups(entries):
            compiled = re2.Set.SearchSet(options)
            for i in group:
                compiled.Add(entries[i].encode("utf-8"))
            sentinel = compiled.Add(rb"\A")
            compiled.Compile()
            self._sets.append((compiled, sentinel, group))

    def matching(self, text: str) -> set[int]:
        """The patterns with a match in `text`."""
        found = self._match(text)
        if found is None:
            return {k for k, rx in enumerate(self.compiled) if rx.search(text)}
        out = {self._found_by[i] for i in found if i in self._found_by}
        maybe = set(self._always)
        for i in found:
            maybe.update(self._gates.get(i, ()))
        maybe -= out
        for k in maybe:
            if self.rest[k].search(text):
                out.add(k)
        return out

    def _match(self, text: str) -> list[int] | None:
        """The entries the Sets found in `text`, or None when they cannot answer for it."""
        if text.isascii():
            if "\x0b" in text or (self._ascii_only and any(c in text for c in self._unsafe)):
                return None
        elif self._ascii_only or any(c in text for c in self._unsafe):
            return None
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:   # a lone surrogate
            return None
        if len(self._sets) == 1:   # the Set's index i is entry i, and its sentinel no entry
            compiled, sentinel, _ = self._sets[0]
            result = compiled.Match(data)
            return result if result and sentinel in result else None
        found: list[int] = []
        for compiled, sentinel, group in self._sets:
            result = compiled.Match(data)
            if not result or sentinel not in result:
                return None
            found += [group[i] for i in result if i != sentinel]
        return found


def _unbounded(form: str) -> bool:
    """`form` repeats something without bound (`*`, `+`, `{n,}`): a gap that can stay open along the text."""
    bare = _outside_classes(form)
    return "*" in bare or "+" in bare or _OPEN_COUNT.search(bare) is not None


def _set_groups(entries: list[str]) -> list[list[int]]:
    """The entries of each Set: all in one, or when more than SET_SIZE have an unbounded repetition, the others in
    one and those by SET_SIZE. A many-match DFA state is one combination of where each pattern may be in the text:
    open gaps multiply the states of every other pattern, and on text unlike any seen before the states are built
    anew at nearly every character (the label words on real reports, cold: ~40 -> ~22 µs a text)."""
    gaps = [i for i, form in enumerate(entries) if _unbounded(form)]
    if len(gaps) <= SET_SIZE:
        return [list(range(len(entries)))]
    others = [i for i, form in enumerate(entries) if not _unbounded(form)]
    return [g for g in (others, *(gaps[j:j + SET_SIZE] for j in range(0, len(gaps), SET_SIZE))) if g]
