"""Words as people write them: a text is corrected toward the keywords of a set of patterns before it is searched.

The keywords are the literal phrases of the patterns (`bot.literals.phrases`): `\\bquantiz\\w*` gives the stem
`quantiz`, `tool[-_ ]?call` gives `tool call`, `toolcall`, …. A word of the text is replaced by a keyword when

* it is the keyword written with doubled letters dropped or doubled ("paralel", "parrallel"),
* it is the plural or the singular of a keyword ("wheels" for `wheel`),
* it is one edit away from a keyword of 7 letters or more (a letter missing, added, changed, or two neighbours
  swapped; never the first letter, never only the last: "qunatization", "pipline", "speculatve"), or two
  neighbours swapped in one of 5-6 letters ("memroy"),
* it is one edit away from a stem's keyword with a common ending ("quantisation" -> "quantization" for
  `quantiz\\w*`); a word that starts with the stem is left alone, it matches already,
* or two words of the text are one keyword written apart, joined or hyphenated differently ("tool-call",
  "multi modal", "toolcall" when the pattern spells `tool call`).

Words of the text that are keywords already, or are near no keyword, stay as written; so does everything else
in the text, and a corrected text without any change is the same object. Patterns are never rewritten, so RE2
and the needles keep working; the correction is linear in the text. A report is corrected toward several
vocabularies (entities, rules, labels): one screen of all their keys tells once per new word whether any of them
can correct it, and only the words that are fixed or may start a keyword written apart are read in place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from bot.literals import phrases

MIN_EDIT = 7          # a keyword this long tolerates any one edit
MIN_SWAP = 5          # a keyword this long tolerates two swapped neighbours
MIN_STEM = 5          # a stem this long is also looked for with common endings
MIN_HEAD = 3          # a keyword written as two words is looked for when its first part is this long
MAX_TOKEN = 40
MAX_CACHE = 50_000
RECENT = 8            # texts whose correction is kept: a report's title and prose are corrected more than once
# phrases holding one of these are sentences, not terms: no joined or split form is looked for
FUNCTION_WORDS = frozenset({"a", "an", "the", "is", "are", "was", "of", "for", "to", "on", "in", "at", "by", "with",
                            "and", "or", "not", "no", "new", "add", "please", "use", "using", "does", "do", "from",
                            "as", "be", "it", "this", "that", "has", "have", "can", "cannot"})
# endings a stem (`quantiz\w*`) commonly takes; a wrong guess only adds a word nobody writes
ENDINGS = ("", "e", "s", "es", "ed", "er", "ers", "ing", "ion", "ions", "ation", "ations", "ive", "ism", "ize",
           "ized", "ise", "ised", "le", "al", "or", "ors")

# a snake_case identifier is one token: code, not words, so it is never corrected
_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_TOKEN_SPLIT = re.compile(f"({_TOKEN.pattern})")
_SEP = re.compile(r"[- \t]{1,3}")


_MISS = object()
_NOT_WORD = re.compile(r"[^a-z0-9]+")
_DOUBLED = re.compile(r"([a-z0-9])\1+")


def squash(text: str) -> str:
    """Lower case, letters and digits only, each run of one letter written once: "Paral-lel" -> "paralel"."""
    return _DOUBLED.sub(_first_group, _NOT_WORD.sub("", text.lower()))


def _first_group(m: re.Match[str]) -> str:
    # (a function, not the template r"\1": Python 3.11 expands a template in Python code at every match)
    return m.group(1)


def _deletions(key: str) -> set[str]:
    return {key[:i] + key[i + 1:] for i in range(len(key))}


def _one_edit(a: str, b: str, swap_only: bool) -> bool:
    """a and b differ by one edit (swap_only: by two neighbours swapped)."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]:
            return True
        return len(diff) == 1 and not swap_only
    if swap_only or abs(la - lb) != 1:
        return False
    short, long_ = (a, b) if la < lb else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1:]


class _Screen:
    """The keys of every Wording at once: whether any of them may correct a token, answered once per token.

    A report's words are corrected toward three vocabularies (entities, rules, labels); most of its new words are
    near none of them, and the screen says so once for all three instead of each searching its own keys."""

    def __init__(self) -> None:
        self.keys: set[str] = set()    # every Wording's squashed single words and joined phrases
        self.forms: set[str] = set()   # every Wording's keyword forms
        self.near: set[str] = set()    # every Wording's squashed keywords and their one-letter deletions
        self._cache: dict[str, tuple[str, str, tuple[str, ...] | None]] = {}

    def add(self, wording: Wording) -> None:
        self.keys |= wording.words.keys() | wording.joined.keys()
        self.forms |= wording.forms
        self.near |= wording.near.keys()
        self._cache.clear()            # a token near none of the keys before may be near the new ones

    def token(self, token: str) -> tuple[str, str, tuple[str, ...] | None]:
        """(the token lower-cased, squashed, and None when no Wording's `_word` can give a keyword for it, else the
        key and those of its one-letter deletions that some Wording's `near` holds)."""
        low = token.lower()             # (what follows depends on the lower-cased token only: "Vllm" is "vllm")
        hit = self._cache.get(low)
        if hit is None:
            key = squash(low)
            hit = (low, key, self._near(low, key))
            if len(self._cache) >= MAX_CACHE:
                self._cache.clear()
            self._cache[low] = hit
        return hit

    def _near(self, low: str, key: str) -> tuple[str, ...] | None:
        # `Wording._word`'s tests in its order, each made looser: None only when every Wording answers None
        if len(low) < MIN_SWAP - 1 or len(low) > MAX_TOKEN or not low.isalpha():
            return None
        near = self.near
        deletions = [key[:i] + key[i + 1:] for i in range(len(key))]
        if key in near or not near.isdisjoint(deletions):   # (most words are near no keyword: one C-level test)
            return tuple(d for d in (key, *deletions) if d in near)
        if key in self.keys:
            return ()
        singular = (low[:-1], low[:-2]) if low.endswith("s") else ()
        return None if self.forms.isdisjoint((low + "s", low + "es", *singular)) else ()


_SCREEN = _Screen()


class Wording:
    """The keywords of some patterns, and the correction of texts toward them."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.words: dict[str, str] = {}            # squashed single word -> the keyword as written
        self.origin: dict[str, str] = {}           # squashed single word -> the phrase or stem it comes from
        self.forms: set[str] = set()               # every keyword form as a pattern accepts it (lower case)
        self.joined: dict[str, str] = {}           # squashed phrase of several words -> the phrase as written
        self.tails: dict[str, set[str]] = {}       # squashed first part of a keyword written apart -> last parts
        #                                            (lower case, as written)
        self.near: dict[str, set[str]] = {}        # a squashed keyword with one letter deleted -> keywords
        self.whole: set[str] = set()               # squashed keywords that are a whole phrase, not a part of one
        self.stems: set[str] = set()               # stems as written (`quantiz` of `quantiz\w*`)
        self.stem_phrases: set[str] = set()        # the same for phrases (`tool call` of `tool[-_ ]?call\w*`)
        self._cache: dict[str, tuple[str | None, str, bool]] = {}
        self._plain: set[str] = set()              # tokens seen that need nothing: neither fixed nor a first part
        self._recent: dict[str, str | None] = {}   # text -> its correction, None when it needs none
        for pattern in patterns:
            for phrase in phrases(pattern):
                self._add(phrase.text, phrase.stem)
        for key in self.words:
            if len(key) >= MIN_SWAP:
                for d in _deletions(key) | {key}:
                    self.near.setdefault(d, set()).add(key)
        for written in self.words.values():   # "multi modal" for `multimodal`
            head = ""
            for cut, c in enumerate(written[:len(written) - MIN_HEAD], 1):
                if c != head[-1:]:
                    head += c   # squash(written[:cut]), built letter by letter
                if cut >= MIN_HEAD:
                    self.tails.setdefault(head, set()).add(written[cut:])
        _SCREEN.add(self)

    def _add(self, text: str, stem: bool) -> None:
        if not any(c.isalpha() for c in text):
            return
        last = _TOKEN.findall(text)[-1:]
        if stem and last and text.endswith(last[0]):
            self.stems.add(last[0])
            self.stem_phrases.add(text)
        for ending in ENDINGS if stem and len(last[0]) >= MIN_STEM else ("",):
            written = text + ending
            self.forms.add(written)
            tokens = _TOKEN.findall(written)
            if len(tokens) == 1 and tokens[0] == written:
                self._word_form(written, text)
                self.whole.add(squash(written))
            elif 2 <= len(tokens) <= 3 and not any(t in FUNCTION_WORDS for t in tokens):
                key = squash(written)
                if len(key) >= MIN_SWAP:
                    self.joined.setdefault(key, written)
                    if len(tokens) == 2:
                        self.tails.setdefault(squash(tokens[0]), set()).add(tokens[1])
                for i, token in enumerate(tokens):   # each word of a phrase is a keyword too
                    if token.isalpha():
                        self.forms.add(token)
                        self._word_form(token, text if i == len(tokens) - 1 else token)

    def _word_form(self, written: str, origin: str) -> None:
        key = squash(written)
        if len(key) >= MIN_SWAP and written.isalpha() and key not in self.words:
            self.words[key] = written
            self.origin[key] = origin

    def word(self, token: str) -> str | None:
        """The keyword a token of the text stands for, when it is not written as one already."""
        return self._lookup(token)[0]

    def _lookup(self, token: str) -> tuple[str | None, str, bool]:
        """(the keyword the token stands for or None, the token squashed, may start a split keyword), cached."""
        hit = self._cache.get(token)
        if hit is None:
            low, key, near = _SCREEN.token(token)
            hit = (None if near is None else self._word(low, key, near), key, key in self.tails)
            if len(self._cache) >= MAX_CACHE:
                self._cache.clear()
                self._plain.clear()
            self._cache[token] = hit
            if hit[0] is None and not hit[2]:
                self._plain.add(token)
        return hit

    def _word(self, low: str, key: str, near_keys: tuple[str, ...]) -> str | None:
        """The keyword for a token (lower-cased, squashed); `near_keys`: the key and those of its one-letter
        deletions that may be in `near` (the others are not)."""
        if len(low) < MIN_SWAP - 1 or len(low) > MAX_TOKEN or not low.isalpha() or low in self.forms:
            return None
        if any(low[:n] in self.stems for n in range(3, len(low))):
            return None                            # "embedding" matches `embed\w*` as written
        if key in self.words:
            return self.words[key]                 # doubled letters written single or the other way
        if key in self.joined:
            return self.joined[key]                # "toolcall" for `tool call`
        singular = (low[:-1], low[:-2]) if low.endswith("s") else ()
        for plural in (low + "s", low + "es", *singular):
            if plural in self.forms and plural.isalpha():
                return plural                      # "wheels" for `wheel`, "backend" for `backends`
        near = self.near
        candidates: set[str] = set()
        for deleted in near_keys:
            found = near.get(deleted)
            if found:
                candidates |= found
        # a letter more or less at the end is another word ("structure", "structured"), not a typo
        best = sorted(c for c in candidates if c[0] == key[0] and not (c.startswith(key) or key.startswith(c))
                      and _one_edit(key, c, swap_only=len(c) < MIN_EDIT))
        if not best or len({self.origin[c] for c in best}) > 1:
            return None                            # near nothing, or near two different keywords: no guess
        return self.words[best[0]]

    def correct(self, text: str) -> str:
        """`text` with words near a keyword written as the keyword (the same object when nothing changed)."""
        if not text or not self.words:
            return text
        recent = self._recent.get(text, _MISS)
        if recent is not _MISS:
            return text if recent is None else recent
        fixed = self._correct(text)
        if len(self._recent) >= RECENT:
            self._recent.clear()
        self._recent[text] = None if fixed is text else fixed
        return fixed

    def _correct(self, text: str) -> str:
        lookup = self._lookup
        tokens = set(_TOKEN.findall(text))
        # the text's words that are fixed (token -> keyword) or may start a keyword written apart (token -> None)
        relevant: dict[str, str | None] = {}
        heads: list[str] = []
        for token in tokens - self._plain:   # most words of a text were seen before and need nothing
            fixed, key, head = lookup(token)
            if fixed is not None or head:
                relevant[token] = fixed
            if head:
                heads.append(key)
        pairs = False
        if heads:
            # (lower-casing a non-ASCII text can make letters: "İ" -> "i̇")
            low = {t.lower() for t in tokens} if text.isascii() else set(_TOKEN.findall(text.lower()))
            pairs = any(not self.tails[h].isdisjoint(low) for h in heads)
        if not pairs and not any(fixed is not None for fixed in relevant.values()):
            return text
        parts = _TOKEN_SPLIT.split(text)     # the words at odd indices, what separates them at even ones
        out = parts.copy()
        last = 0                             # the index of the last word an edit replaced
        for i in [i for i in range(1, len(parts), 2) if parts[i] in relevant]:
            token = parts[i]
            fixed = relevant[token]
            if fixed is not None:
                out[i], last = fixed, i
                continue
            if last == i or i + 2 >= len(parts):
                continue
            # two words that are one keyword written apart, hyphenated or joined differently (a word that is
            # fixed on its own is fixed, not joined)
            sep, second = parts[i + 1], parts[i + 2]
            fixed, key, _ = lookup(second)
            if fixed is not None:
                continue
            first_key = lookup(token)[1]
            pair_key = first_key + key[1:] if key[:1] == first_key[-1:] else first_key + key
            phrase = self.joined.get(pair_key) or (self.words.get(pair_key) if pair_key in self.whole else None)
            if phrase is not None and _SEP.fullmatch(sep):
                pair = (token + sep + second).lower()
                if pair not in self.forms and not any(pair[:n] in self.stem_phrases for n in range(len(pair))):
                    out[i], out[i + 1], out[i + 2], last = phrase, "", "", i + 2
        return "".join(out) if last else text


@lru_cache(maxsize=64)
def wording_of(patterns: tuple[str, ...]) -> Wording:
    """One Wording per set of patterns, shared by the rule sets loaded from the same rules."""
    return Wording(patterns)
