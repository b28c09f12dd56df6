"""What the source index's store keeps, and the contract its backends (bot/stores/sources/) fulfil."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from packaging.version import Version

from bot.sources.extract import EXTRACTOR_VERSION
from bot.sources.index import SourceIndex
from bot.sources.model import LINE_FIELDS, ReleaseBuild, keyed, parse_version
from bot.sources.template import key_words, to_json


@dataclass(frozen=True)
class BuiltRelease:
    """A release the store holds."""

    package: str
    version: str
    uploaded_at: str | None
    built_at: float
    extractor: int          # EXTRACTOR_VERSION it was read with: older ones are rebuilt
    modules: int
    sites: int
    unparsed: int           # modules ast could not read
    seconds: float          # download and read

    @property
    def current(self) -> bool:
        return self.extractor == EXTRACTOR_VERSION


class SourceStore(Protocol):
    def releases(self, package: str) -> list[BuiltRelease]:
        """The releases built, oldest first."""

    def add_release(self, build: ReleaseBuild) -> bool:
        """Store one release (False: it was already there)."""

    def remove_release(self, package: str, version: str) -> bool:
        """Forget one release: its lines, the sites only it had, its module texts (False: it was not there)."""

    def load(self, package: str) -> SourceIndex:
        """Every release and site of the package, ready to match."""

    def source(self, package: str, version: str, path: str) -> str | None:
        """The text of a module with sites, as the release has it (for excerpts)."""

    def close(self) -> None: ...


@dataclass
class SiteRow:
    """A source_sites row as both backends write it."""

    id: str
    package: str
    file: str
    qualname: str
    kind: str
    type: str | None
    template: str         # JSON (bot/sources/template.py to_json)
    words: str            # its key words, space-separated (template.key_words)
    guard_kind: str | None
    guard: str | None
    newest: str           # the newest release that has the site: its guard is the one kept
    lines: list[int]      # flat (release id, line, end line)


def merge_release(build: ReleaseBuild, release_id: int, existing: dict[str, SiteRow]) -> tuple[list[SiteRow],
                                                                                            list[SiteRow]]:
    """(new rows, changed rows) for one release's sites, given the rows already stored under their ids."""
    inserts: list[SiteRow] = []
    updates: list[SiteRow] = []
    version = parse_version(build.version)
    for key, raw in keyed(build.package, build.sites):
        entry = [release_id, raw.line, raw.end_line]
        row = existing.get(key)
        if row is None:
            inserts.append(SiteRow(key, build.package, raw.file, raw.qualname, raw.kind, raw.type,
                                   to_json(raw.template), " ".join(key_words(raw.template)), raw.guard_kind,
                                   raw.guard, build.version, entry))
            continue
        row.lines = _replace(row.lines, release_id) + entry
        if version >= parse_version(row.newest):
            row.guard_kind, row.guard, row.newest = raw.guard_kind, raw.guard, build.version
        updates.append(row)
    return inserts, updates


def _replace(lines: list[int], release_id: int) -> list[int]:
    return [x for i in range(0, len(lines), LINE_FIELDS) if lines[i] != release_id for x in lines[i:i + LINE_FIELDS]]


def newest_first(releases: list[BuiltRelease]) -> list[BuiltRelease]:
    return sorted(releases, key=lambda r: Version(r.version), reverse=True)


Clock = Callable[[], float]
