"""A message template: literal pieces and holes (the values filled in at run time), and matching a message to it.

A template is a tuple of pieces: `str` for literal text, `Hole` for a value. Matching ignores case and all
whitespace (log wrapping and copy-paste change both), tolerates a message cut short (it may end anywhere in a
literal or a hole), and in free text (a title) finds the template anywhere and may stop early. It is a
bounded backtracking walk over the pieces with `str.find`: no regular expression is built from source text and
untrusted text cannot make it run long (MAX_STEPS).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

MAX_STEPS = 64        # find() calls one match may spend
_WS = re.compile(r"\s+")
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])")


@dataclass(frozen=True, slots=True)
class Hole:
    """A value filled in at run time; `text` is the expression (or format directive) that fills it."""

    text: str


Piece = str | Hole
Template = tuple[Piece, ...]


def normalise(pieces: list[Piece] | tuple[Piece, ...]) -> Template:
    """Adjacent literals joined, adjacent holes joined, empty literals dropped."""
    out: list[Piece] = []
    for p in pieces:
        if isinstance(p, str):
            if not p:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += p
                continue
        elif out and isinstance(out[-1], Hole):
            out[-1] = Hole(out[-1].text + " " + p.text)
            continue
        out.append(p)
    return tuple(out)


def render(template: Template) -> str:
    """The template as f-string-like text: holes as `{expr}`."""
    return "".join(p if isinstance(p, str) else "{" + p.text + "}" for p in template)


def to_json(template: Template) -> str:
    """Literals as strings, holes as one-element lists."""
    return json.dumps([p if isinstance(p, str) else [p.text] for p in template], ensure_ascii=False)


def from_json(text: str) -> Template:
    return tuple(p if isinstance(p, str) else Hole(p[0]) for p in json.loads(text))


def percent_pieces(fmt: str, args: list[str] | None) -> list[Piece]:
    """Pieces of a %-format string; holes named after the arguments' source (`args`) when known."""
    pieces: list[Piece] = []
    pos = 0
    n = 0
    for m in _PERCENT.finditer(fmt):
        pieces.append(fmt[pos:m.start()])
        pos = m.end()
        if m.group("conv") == "%":
            pieces.append("%")
            continue
        if m.group("key") is not None:
            pieces.append(Hole(m.group("key")))
        else:
            pieces.append(Hole(args[n] if args is not None and n < len(args) else m.group(0)))
            n += 1
    pieces.append(fmt[pos:])
    return pieces


def format_pieces(fmt: str, args: list[str], kwargs: dict[str, str]) -> list[Piece] | None:
    """Pieces of a str.format string, holes named after the arguments' source; None when it is not valid."""
    import string

    pieces: list[Piece] = []
    auto = 0
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return None
    for literal, field, _spec, _conv in parsed:
        pieces.append(literal)
        if field is None:
            continue
        head = re.split(r"[.\[]", field, maxsplit=1)[0]
        if head == "":
            text = args[auto] if auto < len(args) else "{}"
            auto += 1
        elif head.isdigit():
            text = args[int(head)] if int(head) < len(args) else field
        else:
            text = kwargs.get(head, head)
        pieces.append(Hole(text + field[len(head):]))
    return pieces


# ---- matching --------------------------------------------------------------------------------------------------

def squash(text: str) -> str:
    """What matching compares: lower case, no whitespace."""
    return _WS.sub("", text).lower()


def letters(text: str) -> int:
    return sum(map(str.isalpha, text))


@dataclass(frozen=True, slots=True)
class Compiled:
    """A template prepared for matching: squashed literals, None for holes."""

    pieces: tuple[str | None, ...]
    literal_chars: int    # squashed literal characters in all
    letters: int          # letters among them
    holes: int
    first: str | None     # the first literal

    @classmethod
    def of(cls, template: Template) -> Compiled:
        pieces: list[str | None] = []
        for p in template:
            if p.__class__ is Hole:
                if not pieces or pieces[-1] is not None:
                    pieces.append(None)
                continue
            s = squash(p)  # type: ignore[arg-type]
            if not s:
                continue
            if pieces and pieces[-1] is not None:
                pieces[-1] += s
            else:
                pieces.append(s)
        literals = [p for p in pieces if p is not None]
        literal = "".join(literals)
        return cls(tuple(pieces), len(literal), letters(literal), len(pieces) - len(literals),
                   literals[0] if literals else None)

    def specific(self, min_letters: int = 12) -> bool:
        """Whether the template says enough to be matched: not mostly holes."""
        return self.letters >= min_letters and self.literal_chars >= 4 * self.holes


@dataclass(frozen=True, slots=True)
class Fit:
    """How a message fits a template."""

    chars: int        # literal characters of the template the message showed
    how: str          # "exact" (whole template), "cut" (the message ended early), "partial" (text went elsewhere)
    start: int        # where in the (squashed) text the template begins

    @property
    def rank(self) -> tuple[int, int]:
        return self.chars, {"exact": 2, "cut": 1, "partial": 0}[self.how]


class _Budget:
    __slots__ = ("left",)

    def __init__(self, steps: int) -> None:
        self.left = steps


def _walk(text: str, pos: int, pieces: tuple[str | None, ...], k: int, chars: int, budget: _Budget,
          partial: bool) -> Fit | None:
    """Best fit of pieces[k:] at text[pos:]; chars: literal characters matched so far."""
    n = len(text)
    while k < len(pieces):
        lit = pieces[k]
        if lit is not None:
            if text.startswith(lit, pos):
                pos += len(lit)
                chars += len(lit)
                k += 1
                continue
            rest = text[pos:pos + len(lit)]
            common = _common_prefix(lit, rest)
            if pos + common == n:
                return Fit(chars + common, "cut", -1)
            return Fit(chars + common, "partial", -1) if partial else None
        # a hole: the next literal somewhere ahead, or the hole runs to the end
        if k + 1 == len(pieces):
            return Fit(chars, "exact", -1)
        nxt = pieces[k + 1]
        assert nxt is not None
        best: Fit | None = None
        i = text.find(nxt, pos)
        while i != -1 and budget.left > 0:
            budget.left -= 1
            fit = _walk(text, i, pieces, k + 1, chars, budget, partial)
            if fit is not None and fit.how == "exact":
                return fit
            if fit is not None and (best is None or fit.rank > best.rank):
                best = fit
            i = text.find(nxt, i + 1)
        # no fit through an occurrence: the text may end inside the hole or inside the next literal
        if text.find(nxt, pos) == -1:
            fallback: Fit | None = Fit(chars + _tail_overlap(text, nxt), "cut", -1)
        else:
            fallback = Fit(chars, "partial", -1) if partial else None
        if fallback is not None and (best is None or fallback.rank > best.rank):
            best = fallback
        return best
    if pos == n:
        return Fit(chars, "exact", -1)
    return Fit(chars, "partial", -1) if partial else None


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _tail_overlap(text: str, lit: str) -> int:
    """The longest end of `text` that begins `lit` (the message cut inside that literal)."""
    if not lit:
        return 0
    i = text.find(lit[0], max(0, len(text) - len(lit) + 1))
    while i != -1:
        if lit.startswith(text[i:]):
            return len(text) - i
        i = text.find(lit[0], i + 1)
    return 0


def fit_message(message: str, compiled: Compiled, steps: int = MAX_STEPS, *, squashed: str | None = None) -> Fit | None:
    """How a whole message (an exception's or a log line's text) fits: from its start, exact or cut short.
    `squashed`: squash(message), when the caller fits one message to many templates."""
    text = squash(message) if squashed is None else squashed
    if not text:
        return None
    first = compiled.pieces[0] if compiled.pieces else None
    if first is not None and not (text.startswith(first) or first.startswith(text)):
        return None
    fit = _walk(text, 0, compiled.pieces, 0, 0, _Budget(steps), partial=False)
    return Fit(fit.chars, fit.how, 0) if fit is not None else None


def fit_within(text: str, compiled: Compiled, steps: int = MAX_STEPS, *, squashed: str | None = None) -> Fit | None:
    """The best place the template shows in free text (a title, a sentence quoting the error)."""
    squashed = squash(text) if squashed is None else squashed
    pieces = compiled.pieces
    budget = _Budget(steps)
    first = compiled.first
    if first is None:
        return None
    lead = 0 if pieces[0] is not None else 1
    best: Fit | None = None
    # the quote begins at the template's first literal (after a leading hole)
    probe = first[: min(len(first), 12)]
    i = squashed.find(probe)
    while i != -1 and budget.left > 0:
        budget.left -= 1
        fit = _walk(squashed, i, pieces, lead, 0, budget, partial=True)
        if fit is not None and (best is None or fit.rank > best.rank):
            best = Fit(fit.chars, fit.how, i)
        i = squashed.find(probe, i + 1)
    return best


def words(text: str) -> set[str]:
    """Words a message is looked up by (lower case, 3+ characters, starting with a letter)."""
    return set(_WORD.findall(text.lower()))


_KEY_WORD = re.compile(r"(?<![\w\x00])[a-z][a-z0-9_]{2,}(?![\w\x00])")


def key_words(template: Template) -> list[str]:
    """The template's whole words in order: words that touch a hole are left out (a value may extend them)."""
    text = "".join(p if isinstance(p, str) else "\x00" for p in template).lower()
    return _KEY_WORD.findall(text)
