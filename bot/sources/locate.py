"""The raise site of a report's root-cause error, carried by the Report, and the exception type it implies (pure).

`locate(index, report, created_at)` asks the index about the report's errors in the order of
`resolve.report_queries` (the root-cause exception, error lines, the title), then about a traceback cut before
its exception line (by its innermost frame). The first answer that is not a wrapper ("Engine core initialization
failed. See root cause above") wins; a wrapper's site is kept only when nothing better resolves. A quote in free
text (an error line, the title) resolves only to sites the reporter's release has: prose paraphrases messages, and
a paraphrase may fit another release's template by chance. When the report shows a root cause of its own, error
lines are not asked (they are its consequences, or unrelated).

When the report shows the message but no type (an error line, a title, a cut traceback) and the sites agree on
the type they raise, an exception of that type is added to the report, marked `inferred`, so rules with
`exception:` conditions read it like a printed one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.report.errors import has_anchor, rank
from bot.report.model import ExceptionInfo, RaiseSite, Report
from bot.sources.index import Query, Resolution, SiteMatch, SourceIndex
from bot.sources.resolve import report_queries

MAX_SITES = 4  # tied sites kept on the report
REPOSITORY = "https://github.com/vllm-project/vllm"
# log lines that announce a failure printed elsewhere (a worker's traceback follows them)
_ANNOUNCEMENTS = ("exception in worker", "error in worker", "worker failed", "failed to start", "hit an exception",
                  "encountered a fatal error", "see root cause", "see stack trace")


def is_wrapper(type_: str | None, message: str) -> bool:
    """The site only reports a failure elsewhere: its message says so, or its type is a wrapper's."""
    low = message.lower()
    return rank(type_ or "Exception", message) <= 1 or has_anchor(message) or any(a in low for a in _ANNOUNCEMENTS)


def locate(index: SourceIndex | None, report: Report, created_at: str | None = None) -> Report:
    """The report with its root cause's raise sites (`Report.sites`) and, when the report shows only the message,
    the exception type they raise (an `inferred` exception). Unchanged without an index or a resolution."""
    if index is None or not index.releases:
        return report
    found = _resolve(index, report, created_at)
    if found is None:
        return report
    what, query, resolution = found
    sites = tuple(raise_site(index, m, resolution, what) for m in resolution.matches[:MAX_SITES])
    report = replace(report, sites=sites)
    inferred = _inferred(report, what, query, sites)
    if inferred is None:
        return report
    return replace(report, exceptions=_with_inferred(report.exceptions, inferred))


def _resolve(index: SourceIndex, report: Report, created_at: str | None) -> tuple[str, Query, Resolution] | None:
    wrapped: tuple[str, Query, Resolution] | None = None
    frames = report.cut_frames if not report.exceptions else ()
    caused = _shows_cause(report)
    for what, query in report_queries(report, created_at):
        if caused and what == "error-line":
            continue  # the root cause is shown: other error lines are its consequences or unrelated
        if frames and what != "exception":
            query = replace(query, frames=frames)  # a cut traceback still tells tied sites apart
        resolution = index.match(query)
        if what != "exception" and resolution.release is not None:
            # a quote in prose may paraphrase a message that only another release's template happens to fit
            resolution = Resolution(resolution.release, tuple(m for m in resolution.matches if m.at_release))
        if not resolution.matches:
            continue
        if what != "exception" and all(m.by == "frame" for m in resolution.matches):
            what = "traceback"  # the text fits nothing: the cut traceback's innermost frame resolved it
        if all(is_wrapper(m.site.type, m.site.message) for m in resolution.matches):
            wrapped = wrapped or (what, query, resolution)
            continue
        return what, query, resolution
    if report.cut_frames:
        query = Query("", frames=report.cut_frames, version=report.environment.vllm_version, created_at=created_at)
        resolution = index.match(query)
        if resolution.matches:
            return "traceback", query, resolution
    return wrapped


def _shows_cause(report: Report) -> bool:
    """The report shows a root-cause exception of its own (not a wrapper or consequence, not a type in prose)."""
    return report.root_cause is not None and _shows_cause_exc(report.root_cause)


def _shows_cause_exc(exc: ExceptionInfo) -> bool:
    return exc.source != "mention" and rank(exc.type, exc.message) >= 3


def raise_site(index: SourceIndex, m: SiteMatch, resolution: Resolution, of: str) -> RaiseSite:
    lines = index.lines_of(m.site)
    reporter = resolution.release
    newest = index.releases[-1]
    # the message, from this place or another it moved to (a module split, a renamed function)
    anywhere = sorted({r.key: r for s in index.same_message(m.site) for r, _ in index.lines_of(s)}.items())
    after = reporter is not None and any(key > reporter.key for key, _ in anywhere)
    site = m.site
    return RaiseSite(
        id=site.id, file=site.file, line=m.line, end_line=m.end_line, qualname=site.qualname, kind=site.kind,
        type=_raised_type(site.kind, site.type), message=site.message, release=m.release.version,
        at_release=m.at_release, reporter_release=reporter.version if reporter is not None else None,
        first=lines[0][0].version if lines else m.release.version,
        last=lines[-1][0].version if lines else m.release.version, releases=len(lines), newest=newest.version,
        raised_after=after, of=of, by=m.by, wrapper=is_wrapper(site.type, site.message),
        message_first=anywhere[0][1].version if anywhere else None,
        message_last=anywhere[-1][1].version if anywhere else None,
    )


def _raised_type(kind: str, type_: str | None) -> str | None:
    if kind == "assert":
        return "AssertionError"
    return type_


def _inferred(report: Report, what: str, query: Query, sites: tuple[RaiseSite, ...]) -> ExceptionInfo | None:
    """The exception the report shows only the message of, typed by its sites (when they agree on a type)."""
    if what == "exception" or not sites or any(s.wrapper or s.kind == "log" for s in sites):
        return None
    types = {s.type for s in sites}
    if len(types) != 1 or None in types:
        return None
    (type_,) = types
    if what == "traceback":
        message, source = sites[0].message, "traceback"
    else:
        message, source = query.text.strip(), "title" if what == "title" else "line"
    return ExceptionInfo(type=type_, message=message, frames=report.cut_frames, source=source, inferred=True)


def _with_inferred(exceptions: tuple[ExceptionInfo, ...], inferred: ExceptionInfo) -> tuple[ExceptionInfo, ...]:
    """The inferred exception is the root cause (last) unless the report shows a cause of its own (not a wrapper,
    a consequence or a type named in prose); then it goes just before it."""
    if exceptions and _shows_cause_exc(exceptions[-1]):
        return (*exceptions[:-1], inferred, exceptions[-1])
    return (*exceptions, inferred)


def release_tag(version: str) -> str:
    """vLLM's git tag of a release: `v0.17.0`."""
    return "v" + version


def permalink(site: RaiseSite) -> str:
    """The site's first line on GitHub, pinned to the tag of the release the line was read at."""
    return f"{REPOSITORY}/blob/{release_tag(site.release)}/{site.file}#L{site.line}"


def site_dict(s: RaiseSite, tied: int) -> dict[str, Any]:
    """The site as the replay JSON and the decision record carry it; `tied`: how many sites the report resolved to."""
    return {"id": s.id, "file": s.file, "line": s.line, "qualname": s.qualname, "kind": s.kind, "type": s.type,
            "release": s.release, "at_release": s.at_release, "first": s.first, "last": s.last,
            "message_first": s.message_first, "message_last": s.message_last, "raised_after": s.raised_after,
            "changed_since": s.changed_since, "of": s.of, "by": s.by, "wrapper": s.wrapper, "tied": tied,
            "url": permalink(s)}
