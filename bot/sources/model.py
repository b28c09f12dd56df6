"""The source index's records: releases, and sites deduplicated across releases with a line per release."""

from __future__ import annotations

import hashlib
from array import array
from dataclasses import dataclass, field
from functools import cached_property

from packaging.version import InvalidVersion, Version

from bot.sources.extract import RawSite
from bot.sources.template import Compiled, Template, render, to_json


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
    template: Template
    guard_kind: str | None
    guard: str | None
    lines: array = field(default_factory=lambda: array("I"))  # flat (release id, line, end line) triples
    _compiled: Compiled | None = None

    @property
    def function(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def message(self) -> str:
        return render(self.template)

    @property
    def compiled(self) -> Compiled:
        if self._compiled is None:
            self._compiled = Compiled.of(self.template)
        return self._compiled

    def release_ids(self) -> list[int]:
        return list(self.lines[0::LINE_FIELDS])

    def line_at(self, release_id: int) -> tuple[int, int] | None:
        """(line, end line) in that release, None when the release does not have the site."""
        lines = self.lines
        for i in range(0, len(lines), LINE_FIELDS):
            if lines[i] == release_id:
                return lines[i + 1], lines[i + 2]
        return None


def pack_lines(entries: list[tuple[int, int, int]]) -> array:
    out = array("I")
    for entry in sorted(entries):
        out.extend(entry)
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
            site = sites[key] = Site(key, package, raw.file, raw.qualname, raw.kind, raw.type, raw.template,
                                     raw.guard_kind, raw.guard)
            new += 1
        elif newest:
            site.guard_kind, site.guard = raw.guard_kind, raw.guard
        site.lines.extend((release.id, raw.line, raw.end_line))
    return new
