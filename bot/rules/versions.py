"""Version ranges over reported versions, with vLLM's dev builds ordered sensibly.

PEP 440 says `<0.17.0` excludes `0.17.0rc1.dev136+g…`; for a bug report that build predates 0.17.0, so the
ordered operators compare the public versions directly. Local parts (`+cu128`, `+g<sha>`) are ignored.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_ORDERED: dict[str, Callable[[Version, Version], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


class VersionRange:
    """A PEP 440 specifier set, e.g. `>=0.10,<0.17`."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("must be a non-empty PEP 440 specifier such as '>=0.10,<0.17'")
        try:
            self._set = SpecifierSet(text.strip())
        except InvalidSpecifier as e:
            raise ValueError(f"not a PEP 440 specifier: {text!r} ({e})") from None
        if not len(self._set):
            raise ValueError(f"empty specifier: {text!r}")
        self._specs: list[tuple[Specifier, Version | None]] = []
        for spec in self._set:
            bound = None
            if spec.operator in _ORDERED:
                bound = Version(spec.version)
            self._specs.append((spec, bound))
        self.text = text.strip()

    def contains(self, version: Version) -> bool:
        public = Version(version.public)
        for spec, bound in self._specs:
            if bound is not None:
                if not _ORDERED[spec.operator](public, bound):
                    return False
            elif not spec.contains(public, prereleases=True):
                return False
        return True

    def __str__(self) -> str:
        return self.text


def parse_version(text: object) -> Version | None:
    """A reported version ("0.17.0", "v0.16.0rc1.dev136+gdad2d6a59", "2.9.0+cu128"), or None if unreadable."""
    if text is None:
        return None
    text = str(text)
    return _parse_cached(text) if len(text) <= 200 else _parse_text(text)


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Version | None:
    """Every rule asks for the report's version: each distinct (short) text is parsed once."""
    return _parse_text(text)


def _parse_text(text: str) -> Version | None:
    s = text.strip().lstrip("vV")
    s = s.split()[0] if s else s
    if not s:
        return None
    try:
        return Version(s)
    except InvalidVersion:
        return None


def release_version(text: object) -> Version:
    """A version a rule names (`fixed_in`): a plain release, no local part."""
    v = parse_version(text)
    if v is None or not isinstance(text, str | int | float):
        raise ValueError(f"not a version: {text!r}")
    if v.local:
        raise ValueError(f"{text!r}: a rule version has no local part")
    return v


def is_unordered_dev_build(reported: Version, fixed: Version) -> bool:
    """A dev/pre-release build of the very release that carries the fix: it may or may not include it."""
    if not (reported.is_prerelease or reported.is_devrelease):
        return False
    return _release(reported) == _release(fixed)


def _release(v: Version) -> tuple[int, ...]:
    parts = list(v.release)
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)
