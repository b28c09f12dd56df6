"""The source index's records: releases, and sites deduplicated across releases with a line per release."""

from __future__ import annotations

import hashlib
import sys
from array import array
from dataclasses import dataclass, field
from functools import cached_property

from packaging.version import InvalidVersion, Version

from bot.sources.extract import RawSite
from bot.sources.template import Template, from_json, render, to_json


@dataclass(frozen=True)
class Release:
    id: int                          # the store's number for it (what `Site.lines` refers to)
    package: str
    version: str
    uploaded_at: str | None = None   # ISO 8601, from the index (or the archive's newest file)

    @cached_property
    def key(self) -> Version:
        return parse_version(self.version)


def parse_version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def site_key(package: str, raw: RawSite, ordinal: int) -> str:
    """A site's identity: what it raises, where (file, qualified name), and its rank among equal ones there.

    The same statement in two releases is one site whatever line it moved to; a changed message or type, or a
    move to another file or function, is another site.
    """
    text = "\x1f".join((package, raw.file, raw.qualname, raw.kind, raw.type or "", to_json(raw.template),
                        str(ordinal)))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def keyed(package: str, sites: list[RawSite]) -> list[tuple[str, RawSite]]:
    """(identity, site) for one release's sites; equal statements in one function are told apart by order."""
    seen: dict[tuple, int] = {}
    out = []
    for raw in sorted(sites, key=lambda s: (s.file, s.line)):
        ident = (raw.file, raw.qualname, raw.kind, raw.type, raw.template)
        n = seen.get(ident, 0)
        seen[ident] = n + 1
        out.append((site_key(package, raw, n), raw))
    return out


LINE_FIELDS = 3  # (release id, line, end line) per release, packed in `Site.lines`


@dataclass(slots=True, eq=False)
class Site:
    """One raise/assert/log statement, the same across the releases that have it."""

    id: str
    package: str
    file: str
    qualname: str
    kind: str
    type: str | None
    template_json: str     # the message template (bot/sources/template.py to_json), decoded when first used
    guard_kind: str | None
    guard: str | None
    lines: array = field(default_factory=lambda: array("I"))  # flat (release id, line, end line) triples
    words: str | None = None  # the template's key words, space-separated (template.key_words), when known
    _template: Template | None = None

    @property
    def template(self) -> Template:
        if self._template is None:
            self._template = from_json(self.template_json)
        return self._template

    @property
    def function(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def message(self) -> str:
        return render(self.template)

    def release_ids(self) -> list[int]:
        return list(self.lines[0::LINE_FIELDS])

    def line_at(self, release_id: int) -> tuple[int, int] | None:
        """(line, end line) in that release, None when the release does not have the site."""
        lines = self.lines
        for i in range(0, len(lines), LINE_FIELDS):
            if lines[i] == release_id:
                return lines[i + 1], lines[i + 2]
        return None


def pack_lines(lines: array) -> bytes:
    """`Site.lines` as stored: little-endian 32-bit integers."""
    if sys.byteorder == "big":
        lines = array("I", lines)
        lines.byteswap()
    return lines.tobytes()


def unpack_lines(data: bytes) -> array:
    lines = array("I")
    lines.frombytes(data)
    if sys.byteorder == "big":
        lines.byteswap()
    return lines


def without_release(lines: array, release_id: int) -> array:
    out = array("I")
    for i in range(0, len(lines), LINE_FIELDS):
        if lines[i] != release_id:
            out.extend(lines[i:i + LINE_FIELDS])
    return out


def add_release(sites: dict[str, Site], package: str, release: Release, raws: list[RawSite],
                newest: bool = True) -> int:
    """Fold one release's sites into `sites` (id -> Site): a known site gains this release's line, a new one is
    added. `newest`: this release is the newest that has the site so far, so its guard is the one kept.
    Returns how many sites were new."""
    new = 0
    for key, raw in keyed(package, raws):
        site = sites.get(key)
        if site is None:
            site = sites[key] = Site(key, package, raw.file, raw.qualname, raw.kind, raw.type,
                                     to_json(raw.template), raw.guard_kind, raw.guard, _template=raw.template)
            new += 1
        elif newest:
            site.guard_kind, site.guard = raw.guard_kind, raw.guard
        site.lines.extend((release.id, raw.line, raw.end_line))
    return new


@dataclass
class ReleaseBuild:
    """One release read: its sites and the text of every module that has one (for excerpts)."""

    package: str
    version: str
    uploaded_at: str | None
    sdist_sha256: str | None
    sites: list[RawSite]
    files: dict[str, tuple[str, bytes]]   # path -> (sha1 of the text, the text zlib-compressed)
    unparsed: list[str] = field(default_factory=list)  # modules ast could not read, with the reason
    modules: int = 0
    seconds: float = 0.0                  # download and read, in the worker
    download_seconds: float = 0.0


def excerpt(text: str, line: int, around: int = 20) -> list[tuple[int, str]]:
    """(line number, line) for the lines from `around` before `line` to `around` after it."""
    lines = text.splitlines()
    start = max(1, line - around)
    return [(n, lines[n - 1]) for n in range(start, min(len(lines), line + around) + 1)]
