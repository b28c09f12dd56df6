"""The error catalog and the raise-site index, joined (pure): which sites a rule covers, and which rules cover a site.

A rule covers a site when an error its conditions matched in its own examples resolves to that site (the paste
search of bot/sources/search.py, at the newest release that raises it), or to another site raising the same
message with the same type (the statement moved between releases); or when its `raised_in` names the site's
file and function and its `exception` condition names the site's type, when its examples show no error (an error
they show that resolves to no site is not vLLM's, so the file named is only where it surfaces).
`IndexSites` is the catalog's `SiteMessages` source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.dashboard.catalog import Catalog, SiteLink
from bot.rules import Rule
from bot.rules.conditions import ExceptionCond
from bot.sources import describe
from bot.sources.index import SourceIndex
from bot.sources.model import Site
from bot.sources.search import search

MAX_LINKS = 12
_PATH = re.compile(r"(?:vllm|transformers)/[\w./-]{1,200}\.py")
_NAME = re.compile(r"[A-Za-z_][\w.]{2,120}")


def page_of(site_id: str) -> str:
    return f"/dashboard/errors/{site_id}"


def link(index: SourceIndex, site: Site) -> SiteLink | None:
    at = describe.newest(index, site)
    whole = describe.span(index, site)
    if at is None or whole is None:
        return None
    release, line, _ = at
    releases = whole.first.version if whole.releases == 1 else f"{whole.first.version} – {whole.last.version}"
    return SiteLink(site.id, site.file, site.qualname, site.type, release.version, line, releases,
                    describe.permalink(site.package, release.version, site.file, line), page_of(site.id))


def _newest_first(index: SourceIndex, sites: Iterable[Site]) -> list[Site]:
    order = {r.id: i for i, r in enumerate(index.releases)}

    def newest(site: Site) -> int:
        return max((order.get(i, -1) for i in site.release_ids()), default=-1)

    return sorted(sites, key=lambda s: (-newest(s), s.file, s.qualname))


def exception_types(cond: object) -> set[str]:
    """The exception types a rule's match tree names in its `exception` conditions (short names)."""
    if isinstance(cond, ExceptionCond):
        return {t.rsplit(".", 1)[-1] for t in cond.types}
    items = getattr(cond, "items", None)   # all/any; a `not` names what the rule excludes
    return {t for c in items for t in exception_types(c)} if items is not None else set()


def named_in(raised_in: str | None) -> list[tuple[str, set[str]]]:
    """(path, names) for each path `raised_in` mentions, with the identifiers after it up to the next path."""
    if not raised_in:
        return []
    found = list(_PATH.finditer(raised_in))
    out = []
    for i, m in enumerate(found):
        tail = raised_in[m.end(): found[i + 1].start() if i + 1 < len(found) else len(raised_in)]
        names = {n.rsplit(".", 1)[-1] for n in _NAME.findall(tail)} | set(_NAME.findall(tail))
        out.append((m.group(0), names))
    return out


class IndexSites:
    """The catalog's `SiteMessages` source over loaded indexes (package -> SourceIndex), vLLM's first."""

    def __init__(self, indexes: dict[str, SourceIndex]) -> None:
        self.indexes = indexes
        self._resolved: dict[tuple[str, str], list[tuple[SourceIndex, Site]]] = {}

    def resolve(self, error: str) -> list[tuple[SourceIndex, Site]]:
        """The sites an error text resolves to, in the first package that has it."""
        key = ("", error)
        if key not in self._resolved:
            out: list[tuple[SourceIndex, Site]] = []
            for index in self.indexes.values():
                found = search(index, error)
                if found.matches:
                    out = [(index, m.site) for m in found.matches]
                    break
            self._resolved[key] = out
        return self._resolved[key]

    def message(self, rule: Rule, error: str | None) -> str | None:
        if not error:
            return None
        found = self.resolve(error)
        templates = {site.template_json for _, site in found}
        if len(templates) != 1:
            return None
        return found[0][1].message

    def covered(self, rule: Rule, errors: tuple[str, ...]) -> list[tuple[SourceIndex, Site]]:
        """The sites the rule covers (see the module's docstring), newest first."""
        chosen: dict[str, tuple[SourceIndex, Site]] = {}
        for error in errors:
            for index, site in self.resolve(error):
                for s in index.same_message(site):
                    chosen.setdefault(s.id, (index, s))
        if not errors:
            for index, site in self.named(rule):
                chosen.setdefault(site.id, (index, site))
        by_index: dict[int, tuple[SourceIndex, list[Site]]] = {}
        for index, site in chosen.values():
            by_index.setdefault(id(index), (index, []))[1].append(site)
        return [(index, s) for index, sites in by_index.values() for s in _newest_first(index, sites)]

    def named(self, rule: Rule) -> list[tuple[SourceIndex, Site]]:
        """Sites `raised_in` names by file and function, of a type the rule's `exception` condition names."""
        types = exception_types(rule.match)
        if not types:
            return []
        out = []
        for path, names in named_in(rule.raised_in):
            package = path.split("/", 1)[0]
            index = self.indexes.get(package)
            if index is None:
                continue
            for site in index.sites_in(path):
                if site.kind == "raise" and site.type in types and (site.qualname in names or site.function in names):
                    out.append((index, site))
        return out

    def links(self, rule: Rule, errors: tuple[str, ...]) -> tuple[SiteLink, ...]:
        out = [link(index, site) for index, site in self.covered(rule, errors)[:MAX_LINKS]]
        return tuple(x for x in out if x is not None)


def coverage(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """site id -> the ids of the rules that cover it (every entry of the catalog is built)."""
    out: dict[str, list[str]] = {}
    for rid in catalog.ids():
        entry = catalog.entry(rid)
        for s in entry.sites if entry is not None else ():
            out.setdefault(s.id, []).append(rid)
    return {sid: tuple(rids) for sid, rids in out.items()}
