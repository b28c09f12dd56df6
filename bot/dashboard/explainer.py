"""An error's explainer page (pure): everything the raise-site index, the catalog and the recorded decisions know
about one site, for the dashboard page and `/api/errors/<id>` alike.

The message as its template (holes shown as placeholders), its type or log level; what it means (the covering
rules' explanation, else the guarding condition in words and code); the code around it at a chosen release with
a permalink pinned to that release's tag; the releases that raise it, as runs of lines; the covering rules'
solutions and example fix; related errors (the same message elsewhere, the same function, the same file, rules
that supersede the covering ones); the issues triage resolved to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.dashboard.catalog import CatalogEntry
from bot.dashboard.sitelinks import page_of
from bot.sources import describe
from bot.sources.index import SourceIndex
from bot.sources.model import Release, Site
from bot.sources.template import Hole

AROUND = 20           # lines of code shown either side of the statement
MAX_TITLE = 100
GITHUB_SEARCH = "https://github.com/{repo}/issues?q={query}"


@dataclass(frozen=True)
class SiteRef:
    """Another site, as a related error."""

    id: str
    file: str
    qualname: str
    kind: str
    type: str | None
    message: str
    line: int | None          # at the page's release (None: that release does not have it)
    releases: str             # "0.6.3 – 0.10.0"
    page: str

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "file": self.file, "qualname": self.qualname, "kind": self.kind, "type": self.type,
                "message": self.message, "line": self.line, "releases": self.releases, "page": self.page,
                "api": f"/api/errors/{self.id}"}


@dataclass(frozen=True)
class IssueRef:
    repo: str
    number: int
    title: str
    url: str | None
    opened: float
    version: str | None       # the release the report was resolved at

    def as_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "number": self.number, "title": self.title, "url": self.url,
                "dashboard": f"/dashboard/issues/{self.repo}/{self.number}", "opened": self.opened,
                "release": self.version}


@dataclass(frozen=True)
class CodeLine:
    number: int
    text: str
    marked: bool              # part of the statement that raises


@dataclass(frozen=True)
class ErrorPage:
    site: Site
    package: str
    title: str
    label: str                          # "NotImplementedError", "logger.warning", "AssertionError"
    pieces: tuple[tuple[str, bool], ...]  # the message template: (text, is a hole)
    message: str                        # the template as text, holes as {expression}
    what: describe.Parts                # "raised as `ValueError`", as (text, is code) pieces
    condition: describe.Parts           # the guarding condition in words, the code as code
    guard_code: str | None              # the guard as the line of code that holds it
    release: Release                    # the release the code is shown at
    requested: str | None               # a release asked for that does not raise it (the newest is shown)
    line: int
    end_line: int
    permalink: str | None
    code: tuple[CodeLine, ...]          # empty when the module's text is not in the index
    span: describe.Span
    runs: tuple[describe.Run, ...]
    indexed: tuple[Release, ...]        # every release in the index, oldest first
    same_message: tuple[SiteRef, ...]
    same_function: tuple[SiteRef, ...]
    same_file: tuple[SiteRef, ...]
    rules: tuple[CatalogEntry, ...]     # rules that cover it
    superseding: tuple[tuple[str, str], ...]   # (rule id, title): rules that replace a covering one
    issues: tuple[IssueRef, ...]
    issues_recorded: bool               # whether any decision records its raise site (else: none recorded yet)
    search_url: str | None              # the message's literal text searched in the package's GitHub issues
    built_at: float | None = None       # when the newest release of the index was built

    @property
    def id(self) -> str:
        return self.site.id

    @property
    def releases(self) -> tuple[str, ...]:
        """The versions that raise it, newest first (the release picker)."""
        return tuple(r.version for r in reversed(self.span_releases))

    @property
    def span_releases(self) -> tuple[Release, ...]:
        return tuple(r for r in self.indexed if self.site.line_at(r.id) is not None)

    def as_json(self) -> dict[str, Any]:
        s, span = self.site, self.span
        return {
            "id": s.id, "package": self.package, "page": page_of(s.id), "api": f"/api/errors/{s.id}",
            "title": self.title, "kind": s.kind, "type": s.type, "label": self.label,
            "message": {"template": self.message,
                        "pieces": [{"hole": text} if hole else {"text": text} for text, hole in self.pieces]},
            "file": s.file, "qualname": s.qualname, "function": s.function,
            "meaning": {"condition": describe.markdown(self.condition), "guard_kind": s.guard_kind, "guard": s.guard,
                        "rules": [{"id": e.id, "title": e.title, "explanation": e.meaning} for e in self.rules]},
            "source": {"release": self.release.version, "line": self.line, "end_line": self.end_line,
                       "permalink": self.permalink, "requested": self.requested,
                       "excerpt": [{"line": c.number, "text": c.text, "marked": c.marked} for c in self.code]},
            "releases": {"first": span.first.version, "last": span.last.version, "count": span.releases,
                         "gaps": span.gaps, "newest_indexed": span.newest_indexed.version,
                         "not_raised_since": span.next_after_last.version if span.next_after_last else None,
                         "runs": [{"first": r.first.version, "last": r.last.version, "line": r.line,
                                   "releases": r.count} for r in self.runs],
                         "indexed": len(self.indexed)},
            "solutions": [{"rule": e.id, "title": e.title, "solutions": e.solutions,
                           "example_fix": {"before": e.example_command, "after": e.example_fix,
                                           "error": e.example_error}, "page": f"/dashboard/rules/{e.id}"}
                          for e in self.rules],
            "related": {"same_message": [r.as_json() for r in self.same_message],
                        "same_function": [r.as_json() for r in self.same_function],
                        "same_file": [r.as_json() for r in self.same_file],
                        "superseding_rules": [{"id": rid, "title": t} for rid, t in self.superseding]},
            "issues": {"recorded": self.issues_recorded, "matched": [i.as_json() for i in self.issues]},
            "search_issues": self.search_url, "index_built_at": self.built_at,
        }


def label(site: Site) -> str:
    if site.kind == "log":
        return f"logger.{site.type}" if site.type else "logger"
    return site.type or ("AssertionError" if site.kind == "assert" else "exception")


def pieces(site: Site) -> tuple[tuple[str, bool], ...]:
    return tuple((p.text, True) if isinstance(p, Hole) else (p, False) for p in site.template)


def title(site: Site) -> str:
    """The message on one line, cut at a word when it is longer than MAX_TITLE."""
    text = " ".join(site.message.split())
    if len(text) <= MAX_TITLE:
        return text
    cut = text[:MAX_TITLE - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > MAX_TITLE // 2 else cut).rstrip() + "…"


def _releases_text(index: SourceIndex, site: Site) -> str:
    whole = describe.span(index, site)
    if whole is None:
        return ""
    return whole.first.version if whole.releases == 1 else f"{whole.first.version} – {whole.last.version}"


def ref(index: SourceIndex, site: Site, release: Release) -> SiteRef:
    at = site.line_at(release.id)
    return SiteRef(site.id, site.file, site.qualname, site.kind, site.type, title(site), at[0] if at else None,
                   _releases_text(index, site), page_of(site.id))


def chosen_release(index: SourceIndex, site: Site, version: str | None) -> tuple[Release, str | None]:
    """The release asked for when it raises the site, else the newest that does (and the version asked for)."""
    if version:
        release = index.by_version.get(version)
        if release is not None and site.line_at(release.id) is not None:
            return release, None
    have = index.releases_of(site)
    return have[-1], (version or None)


def code_lines(text: str | None, line: int, end_line: int, around: int = AROUND) -> tuple[CodeLine, ...]:
    """`around` lines before the statement, the statement (marked), `around` lines after it."""
    if not text:
        return ()
    lines = text.splitlines()
    last = max(end_line, line)
    if line > len(lines):
        return ()
    return tuple(CodeLine(n, lines[n - 1], line <= n <= last)
                 for n in range(max(1, line - around), min(len(lines), last + around) + 1))


def _literal(site: Site, limit: int = 120) -> str | None:
    """The longest literal piece of the message: what to search issues for."""
    best = max((p for p in site.template if isinstance(p, str)), key=lambda p: len(p.strip()), default="")
    best = " ".join(best.split())
    return best[:limit] if len(best) >= 12 else None


def search_url(site: Site) -> str | None:
    from urllib.parse import quote_plus

    repo = describe.REPOSITORIES.get(site.package)
    literal = _literal(site)
    if repo is None or literal is None:
        return None
    return GITHUB_SEARCH.format(repo=repo.removeprefix("https://github.com/"), query=quote_plus(f'"{literal}"'))


def build_page(index: SourceIndex, site: Site, release: Release, requested: str | None, text: str | None, *,
               rules: list[CatalogEntry], superseding: list[tuple[str, str]], issues: list[IssueRef],
               issues_recorded: bool, built_at: float | None = None) -> ErrorPage:
    at = site.line_at(release.id)
    assert at is not None, "the page's release must raise the site"
    line, end_line = at
    whole = describe.span(index, site)
    assert whole is not None
    same_function, same_file = describe.neighbours(index, site, release)
    order = {r.id: i for i, r in enumerate(index.releases)}
    moved = sorted((s for s in index.same_message(site) if s.id != site.id),
                   key=lambda s: -max((order.get(i, -1) for i in s.release_ids()), default=-1))
    return ErrorPage(
        site=site, package=site.package, title=title(site), label=label(site), pieces=pieces(site),
        message=site.message, what=describe.what(site), condition=describe.condition(site),
        guard_code=describe.guard_code(site),
        release=release, requested=requested, line=line, end_line=end_line,
        permalink=describe.permalink(site.package, release.version, site.file, line),
        code=code_lines(text, line, end_line), span=whole, runs=tuple(describe.runs(index, site)),
        indexed=tuple(index.releases),
        same_message=tuple(ref(index, s, release) for s in moved[:8]),
        same_function=tuple(ref(index, s, release) for s in same_function),
        same_file=tuple(ref(index, s, release) for s in same_file),
        rules=tuple(rules), superseding=tuple(superseding), issues=tuple(issues), issues_recorded=issues_recorded,
        search_url=search_url(site), built_at=built_at,
    )
