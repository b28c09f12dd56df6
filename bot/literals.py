"""What a regex needs literally: the strings every match contains, and the phrases it spells out.

A small reader of the regex syntax the bot's patterns use (Python `re` and RE2 share it): literals and escapes,
classes, groups (capturing, named, non-capturing, inline flags, lookarounds), alternation and quantifiers.
It reads only; compiling stays with `re` / RE2. Anything it does not understand counts as "any text", which
can only make its answers less precise, never wrong: `needles` may then return None, `phrases` fewer phrases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

# ------------------------------------------------------------------ syntax tree


@dataclass(frozen=True)
class Lit:
    char: str


@dataclass(frozen=True)
class Chars:
    """A class or an escape like `\\w`: `chars` when it is a small explicit set, else None (many characters)."""

    chars: frozenset[str] | None
    word: bool = False      # can match a letter or digit (\w, [a-z], .)


@dataclass(frozen=True)
class Assert:
    """Zero-width: `\\b`, `^`, `$`, `\\A`, lookarounds."""

    boundary: bool = False  # \b, ^, \A or a negative look at word characters


@dataclass(frozen=True)
class Seq:
    items: tuple[object, ...]


@dataclass(frozen=True)
class Alt:
    branches: tuple[Seq, ...]


@dataclass(frozen=True)
class Repeat:
    item: object
    lo: int
    hi: int | None          # None: unbounded


_CLASS_ESCAPES = {"d": "0123456789", "s": " \t\n\r\f\v"}
_WORDY_ESCAPES = set("wWdDsSpP")
_LITERAL_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


class _Reader:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else "\0"   # past the end: a character no syntax test accepts

    def alt(self) -> Alt | Seq:
        branches = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.seq())
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def seq(self) -> Seq:
        items: list[object] = []
        while self.i < len(self.p) and self.peek() not in "|)":
            atom = self.atom()
            if atom is None:
                continue
            items.append(self.quantified(atom))
        return Seq(tuple(items))

    def quantified(self, atom: object) -> object:
        c = self.peek()
        lo: int | None = None
        hi: int | None = None
        if c in "*+?":
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{":
            end = self.p.find("}", self.i)
            body = self.p[self.i + 1:end] if end > 0 else ""
            low, comma, high = body.partition(",")
            if low.isdigit() and (not high or high.isdigit()):
                lo = int(low)
                hi = int(high) if high else (None if comma else lo)
                self.i = end + 1
        if lo is None:
            return atom
        if self.peek() in "?+":   # lazy or possessive: the same language
            self.i += 1
        return Repeat(atom, lo, hi)

    def atom(self) -> object | None:
        c = self.peek()
        self.i += 1
        if c == "(":
            return self.group()
        if c == "[":
            return self.klass()
        if c == "\\":
            return self.escape()
        if c == ".":
            return Chars(None, word=True)
        if c in "^$":
            return Assert(boundary=c == "^")
        return Lit(c)

    def group(self) -> object | None:
        kind = ""
        if self.peek() == "?":
            self.i += 1
            c = self.peek()
            if c == "P" and self.peek(1) == "<":
                self.i = self.p.find(">", self.i) + 1
            elif c == ":":
                self.i += 1
            elif c in "=!":
                self.i += 1
                kind = "look" + c
            elif c == "<" and self.peek(1) in "=!":
                kind = "look" + self.peek(1)
                self.i += 2
            else:   # inline flags: (?i) (?-i) (?i:...) (?-i:...)
                while self.i < len(self.p) and self.peek() not in ":)":
                    self.i += 1
                if self.peek() == ")":
                    self.i += 1
                    return None
                self.i += 1
        inner = self.alt()
        if self.peek() == ")":
            self.i += 1
        if kind == "look=":
            return Assert()
        if kind == "look!":   # (?<![a-z]) and (?![a-z]) act as word boundaries
            return Assert(boundary=True)
        return inner

    def escape(self) -> object:
        c = self.peek()
        self.i += 1
        if c in "bAzZ":
            return Assert(boundary=c in "bA")
        if c == "B" or c == "G":
            return Assert()
        if c in _CLASS_ESCAPES:
            return Chars(frozenset(_CLASS_ESCAPES[c]) if c == "d" else None, word=c == "d")
        if c in _WORDY_ESCAPES:
            if c in "pP" and self.peek() == "{":
                self.i = self.p.find("}", self.i) + 1
            elif c in "pP":
                self.i += 1
            return Chars(None, word=c in "wWDSpP")
        if c in _LITERAL_ESCAPES:
            return Lit(_LITERAL_ESCAPES[c])
        if c == "x":
            digits = self.p[self.i:self.i + 2]
            self.i += 2
            try:
                return Lit(chr(int(digits, 16)))
            except ValueError:
                return Chars(None, word=True)
        return Lit(c)

    def klass(self) -> Chars:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        chars: set[str] = set()
        many = negated
        first = True
        while self.i < len(self.p) and (first or self.peek() != "]"):
            first = False
            c = self.peek()
            self.i += 1
            if c == "\\":
                e = self.peek()
                self.i += 1
                if e in _WORDY_ESCAPES or e in "bB":
                    many = True
                    continue
                c = _LITERAL_ESCAPES.get(e, e)
            if self.peek() == "-" and self.peek(1) not in "]\0":
                self.i += 1
                end = self.peek()
                self.i += 1
                if end == "\\":
                    end = self.peek()
                    self.i += 1
                if ord(end) - ord(c) > 8:
                    many = True
                else:
                    chars.update(chr(o) for o in range(ord(c), ord(end) + 1))
                continue
            chars.add(c)
        self.i += 1
        if many or len(chars) > 8:
            return Chars(None, word=True)
        return Chars(frozenset(chars), word=any(ch.isalnum() for ch in chars))


def parse(pattern: str) -> Seq | Alt:
    return _Reader(pattern).alt()


# ------------------------------------------------------------------ needles


def needles(pattern: str) -> tuple[str, ...] | None:
    """Lower-case strings of which every match of the case-insensitive `pattern` contains one (None: no such
    set found). A text whose lower-cased form holds none of them cannot match, so its search can be skipped."""
    found = _required(parse(pattern))
    return tuple(sorted(found)) if found else None


def _required(node: object) -> set[str] | None:
    if isinstance(node, Alt):
        branches = [_required(b) for b in node.branches]
        if not all(branches):
            return None
        union: set[str] = set().union(*branches)  # type: ignore[arg-type]
        return {n for n in union if not any(m != n and m in n for m in union)}
    if isinstance(node, Repeat):
        return _required(node.item) if node.lo >= 1 else None
    if not isinstance(node, Seq):
        return None
    options: list[set[str]] = []
    run = ""
    for item in node.items:
        if isinstance(item, Lit):     # consecutive literals match consecutive characters
            run += item.char.lower()
            continue
        if isinstance(item, Assert):  # zero-width: the literals on either side are still adjacent
            continue
        if run:
            options.append({run})
            run = ""
        need = _required(item) if isinstance(item, Alt | Seq | Repeat) else None
        if need:
            options.append(need)
    if run:
        options.append({run})
    if not options:
        return None
    # a string holding another one of the same set adds nothing; the best set has the longest shortest string
    options = [{n for n in o if not any(m != n and m in n for m in o)} for o in options]
    return max(options, key=lambda o: (min(map(len, o)), -len(o)))


# ------------------------------------------------------------------ phrases

MAX_EXPANSION = 48
_PUNCT = re.compile(r"[^A-Za-z0-9 _./-]+")


@dataclass(frozen=True)
class Phrase:
    """Words a pattern spells out: `text` as the pattern accepts it, `stem` when the last word may go on (`\\w*`)."""

    text: str
    stem: bool = False


@lru_cache(maxsize=4096)
def phrases(pattern: str) -> frozenset[Phrase]:
    """The literal phrases of a pattern: each run of literals, small classes (`[-_ ]`), optional parts and small
    alternations, expanded into the strings it accepts (`tool[-_ ]?call\\w*` -> `tool-call`, `tool_call`,
    `tool call`, `toolcall`, each a stem). Runs that expand to too many strings are cut into smaller runs."""
    out: set[Phrase] = set()
    _collect(parse(pattern), out)
    return frozenset(out)


def _collect(node: object, out: set[Phrase]) -> None:
    if isinstance(node, Alt):
        for b in node.branches:
            _collect(b, out)
    elif isinstance(node, Repeat):
        _collect(node.item, out)
    elif isinstance(node, Seq):
        _collect_seq(node, out)


def _finite(node: object) -> set[str] | None:
    """Every string `node` matches, when that is a small finite set."""
    if isinstance(node, Lit):
        return {node.char.lower()}
    if isinstance(node, Chars):
        return {c.lower() for c in node.chars} if node.chars is not None and len(node.chars) <= 4 else None
    if isinstance(node, Assert):
        return {""}
    if isinstance(node, Repeat):
        if node.hi is None or node.hi > 1:
            return None
        inner = _finite(node.item)
        return None if inner is None else (inner | {""} if node.lo == 0 else inner)
    if isinstance(node, Alt):
        parts = [_finite(b) for b in node.branches]
        if any(p is None for p in parts):
            return None
        joined = set().union(*parts)  # type: ignore[arg-type]
        return joined if len(joined) <= MAX_EXPANSION else None
    if isinstance(node, Seq):
        acc = {""}
        for item in node.items:
            part = _finite(item)
            if part is None:
                return None
            acc = {a + b for a, b in product(acc, part)}
            if len(acc) > MAX_EXPANSION:
                return None
        return acc
    return None


def _open_right(node: object) -> bool:
    """Can `node` go on with a letter (`\\w*`, `.{0,12}`, `[a-z]+`)?"""
    if isinstance(node, Chars):
        return node.word
    if isinstance(node, Repeat):
        return _open_right(node.item)
    if isinstance(node, Seq):
        return bool(node.items) and _open_right(node.items[0])
    if isinstance(node, Alt):
        return any(_open_right(b) for b in node.branches)
    return False


def _collect_seq(seq: Seq, out: set[Phrase]) -> None:
    run: list[set[str]] = []

    def flush(stem: bool) -> None:
        acc = {""}
        for part in run:
            acc = {a + b for a, b in product(acc, part)}
        for text in acc:
            # punctuation other than `-_./` ends a phrase: "architectures [" is the phrase "architectures"
            parts = _PUNCT.split(text)
            for i, part in enumerate(parts):
                part = part.strip()
                if part:
                    out.add(Phrase(part, stem and i == len(parts) - 1 and part == parts[-1].rstrip()
                                   and not text[-1:].isspace()))
        run.clear()

    closed = False   # the run ends in a word boundary: what follows cannot continue its last word
    size = 1         # how many strings the run expands to
    for item in seq.items:
        part = _finite(item)
        if part is not None:
            if size * len(part) > MAX_EXPANSION:
                flush(False)
                size = 1
            size *= len(part)
            run.append(part)
            closed = isinstance(item, Assert) and item.boundary or (closed and isinstance(item, Assert))
            continue
        flush(_open_right(item) and not closed)
        closed, size = False, 1
        _collect(item, out)
    flush(False)


# ------------------------------------------------------------------ gated patterns


class Gated:
    """A compiled pattern searched only in a text whose lower-cased form holds one of its needles (`needles`): the
    same answers as the pattern, without scanning the many texts that cannot match it.

    `needles_of` is a pattern every match of `pattern` contains a match of (its needles may be rarer). A Unicode
    pattern may fold some non-ASCII letters onto ASCII ones ("ſ" onto "s", in a case-insensitive part) that
    `str.lower` keeps apart: its needles are trusted on ASCII texts only."""

    def __init__(self, pattern: re.Pattern[str], needles_of: str | None = None) -> None:
        self.pattern = pattern
        self.needles = needles(needles_of or pattern.pattern)
        self._ascii_only = not pattern.flags & re.ASCII

    def may_match(self, text: str) -> bool:
        if self.needles is None or (self._ascii_only and not text.isascii()):
            return True
        low = text.lower()
        return any(n in low for n in self.needles)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.may_match(text) else None

    def sub(self, repl: str, text: str) -> str:
        """`pattern.sub(repl, text)`; `text` itself when the pattern cannot match it."""
        return self.pattern.sub(repl, text) if self.may_match(text) else text
