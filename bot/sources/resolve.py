"""A parsed report's errors as queries to the source index, and the raise site of its root cause (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.report.model import ExceptionInfo, Report
from bot.sources.index import Query, Resolution, SourceIndex

MAX_ERROR_LINES = 3


@dataclass(frozen=True)
class Resolved:
    """The root cause's resolution, and what was asked."""

    query: Query
    resolution: Resolution
    of: str           # "exception" (the root cause), "error-line", "title"


def exception_query(exc: ExceptionInfo, version: str | None, created_at: str | None,
                    first_line_only: bool = False) -> Query:
    text = exc.first_line if first_line_only else exc.message
    if exc.source == "title":
        return Query(text, type=exc.type, free_text=True, version=version, created_at=created_at)
    return Query(text, type=exc.type, frames=exc.frames, version=version, created_at=created_at,
                 cut=first_line_only)


def report_queries(report: Report, created_at: str | None = None) -> list[tuple[str, Query]]:
    """(what, query) in the order they are tried: the root-cause exception (whole message, then its first line),
    then error lines outside tracebacks, then the title."""
    version = report.environment.vllm_version
    out: list[tuple[str, Query]] = []
    if report.exceptions:
        root = report.exceptions[-1]
        out.append(("exception", exception_query(root, version, created_at)))
        if "\n" in root.message.strip():
            out.append(("exception", exception_query(root, version, created_at, first_line_only=True)))
    for line in report.error_lines[:MAX_ERROR_LINES]:
        out.append(("error-line", Query(line, free_text=True, version=version, created_at=created_at)))
    if report.title_text:
        out.append(("title", Query(report.title_text, free_text=True, version=version, created_at=created_at)))
    return out


def resolve(index: SourceIndex, report: Report, created_at: str | None = None) -> Resolved | None:
    """The first of the report's queries that resolves to at least one site."""
    for what, query in report_queries(report, created_at):
        resolution = index.match(query)
        if resolution.matches:
            return Resolved(query, resolution, what)
    return None
