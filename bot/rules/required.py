"""Required literals of a rule pattern: groups of strings such that every match holds a string of each group.

The prefilter finds every literal of a text's patterns in one pass and tries a pattern only when each of its
groups has a literal there. The pattern is read with Python's own regex parser (`re._parser`), whose syntax
agrees with RE2's for what rules use; where the two could read a pattern differently (POSIX classes, RE2-only
escapes, which Python rejects) the pattern has no groups and is always tried. Literals are compared
case-insensitively by RE2 itself, with the folding the patterns use, so a group only has to hold some spelling.
"""

from __future__ import annotations

import re
import re._constants as C  # noqa: N812
import re._parser as sre_parse
from typing import Any

# a group whose shortest literal is shorter than this is in nearly every text: no use as a filter
MIN_LITERAL = 3
# `fp[48]` is the group {fp4, fp8}: a small class multiplies a run's spellings up to this many
MAX_SPELLINGS = 32
MAX_CLASS = 10
# the most selective groups kept per pattern
MAX_GROUPS = 3
_POSIX = re.compile(r"\[:\^?[a-z]+:\]")
_FLAGS = re.compile(r"\A\(\?-?[a-zA-Z]+\)")
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)

Group = frozenset[str]


def required_literals(source: str) -> tuple[Group, ...]:
    """Groups of strings, each holding a substring of every match of `source`; () when none is known."""
    if _POSIX.search(source):   # `[[:alpha:]]` is a POSIX class to RE2 but a class and a `]` to Python
        return ()
    pattern = _FLAGS.sub("", source)   # `(?-i)` alone is not Python syntax; case is ignored here anyway
    try:
        tree = sre_parse.parse(pattern)
    except (re.error, ValueError, OverflowError, RecursionError):
        return ()
    groups = sorted(set(_sequence(list(tree))), key=lambda g: (_score(g), sorted(g)), reverse=True)
    return tuple(groups[:MAX_GROUPS])


def shortest_match(source: str) -> int | None:
    """The length of the shortest text `source` can match, in characters; None when unsure."""
    if _POSIX.search(source):
        return None
    try:
        return int(sre_parse.parse(_FLAGS.sub("", source)).getwidth()[0])
    except (re.error, ValueError, OverflowError, RecursionError):
        return None


def _sequence(items: list[tuple[Any, Any]]) -> list[Group]:
    """A concatenation needs what each of its items needs, and each run of literal characters."""
    groups: list[Group] = []
    run: set[str] = {""}

    def flush() -> None:
        nonlocal run
        if min(map(len, run)) >= MIN_LITERAL:
            groups.append(frozenset(run))
        run = {""}

    for op, av in items:
        chars = _chars(op, av)
        if chars is not None and len(run) * len(chars) <= MAX_SPELLINGS:
            run = {s + c for s in run for c in chars}
            continue
        flush()
        groups.extend(_item(op, av))
    flush()
    return groups


def _chars(op: Any, av: Any) -> list[str] | None:
    """The characters a literal or a small class of literals matches; None for anything else."""
    if op is C.LITERAL:
        return [chr(av)]
    if op is not C.IN:
        return None
    chars: list[str] = []
    for kind, value in av:
        if kind is C.LITERAL:
            chars.append(chr(value))
        elif kind is C.RANGE and value[1] - value[0] < MAX_CLASS:
            chars.extend(map(chr, range(value[0], value[1] + 1)))
        else:
            return None
    return chars if 0 < len(chars) <= MAX_CLASS else None


def _item(op: Any, av: Any) -> list[Group]:
    if op is C.SUBPATTERN:
        return _sequence(list(av[-1]))
    if op is C.BRANCH:    # one group: the best group of each alternative
        union: set[str] = set()
        for branch in av[1]:
            found = _sequence(list(branch))
            if not found:
                return []
            union |= max(found, key=_score)
        return [frozenset(union)]
    if op in _REPEATS and av[0] >= 1:
        return _sequence(list(av[2]))
    return []


def _score(group: Group) -> tuple[int, int]:
    return min(map(len, group)), -len(group)
