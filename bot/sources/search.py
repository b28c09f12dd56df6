"""Finding the sites of an error a person pastes: a traceback, a log line, a bare message (pure).

The paste is untrusted and may be long: only its last MAX_PASTE characters are read (a traceback's root cause is
at its end), it is parsed like a report (bot/report), and only a short paste is also fitted as a bare message and
as free text. No regular expression is built from it; the one below is fixed and linear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from bot.report import parse
from bot.sources.index import Query, Resolution, SourceIndex
from bot.sources.resolve import report_queries

MAX_PASTE = 50_000     # characters read, from the end
MAX_BARE = 2_000       # a paste at most this long is also tried as a bare message and as free text
MAX_LOG_LINES = 40     # log lines (warning and above) tried, from the end
# vLLM's logger: `WARNING 03-10 19:20:41 [utils.py:302] message` (before 2025 without the opening bracket;
# later with a shortened path in the brackets), after any process tag or prefix
_LOG = re.compile(r"\b(?P<level>WARNING|WARN|ERROR|CRITICAL)\s+\d\d-\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+\[?"
                  r"(?P<file>[\w./-]{1,200}\.py):(?P<line>\d{1,7})\]\s?(?P<msg>[^\n]*)")


@dataclass(frozen=True)
class Found:
    """What a paste resolved to: the first of its readings that matched."""

    resolution: Resolution | None
    of: str | None            # "exception", "error-line", "log-line", "message", "text"; None: nothing matched
    truncated: bool           # only the end of the paste was read

    @property
    def matches(self) -> tuple:
        return self.resolution.matches if self.resolution is not None else ()


def queries(text: str, version: str | None = None, default: str | None = None) -> list[tuple[str, Query]]:
    """(reading, query) in the order they are tried, at `version`, else the version the paste names, else
    `default`."""
    report = parse("", text)
    version = version or report.environment.vllm_version or default
    out = [(what, _with_version(q, version)) for what, q in report_queries(report) if what != "title"]
    logs = [m for m in _LOG.finditer(text[-MAX_PASTE:]) if m.group("msg").strip()]
    for m in reversed(logs[-MAX_LOG_LINES:]):
        name = m.group("file").rsplit("/", 1)[-1]
        out.append(("log-line", Query(m.group("msg").strip(), level=m.group("level"),
                                      location=(name, int(m.group("line"))), version=version)))
    bare = text.strip()
    if bare and len(bare) <= MAX_BARE:
        out.append(("message", Query(bare, version=version)))
        out.append(("text", Query(bare, free_text=True, version=version)))
    return out


def _with_version(q: Query, version: str | None) -> Query:
    return q if q.version == version else replace(q, version=version)


def search(index: SourceIndex, text: str, version: str | None = None) -> Found:
    """The sites of the pasted error at `version`, else at the version the paste names, else at the newest
    release (a message only older releases raise then needs a longer fit, as for a reporter's old version)."""
    truncated = len(text) > MAX_PASTE
    if truncated:
        text = text[-MAX_PASTE:]
        text = text[text.find("\n") + 1:] if "\n" in text else text
    newest = index.releases[-1].version if index.releases else None
    for what, query in queries(text, version, newest):
        resolution = index.match(query)
        if resolution.matches:
            return Found(_cut_short(index, query, resolution), what, truncated)
    return Found(None, None, truncated)


def _cut_short(index: SourceIndex, query: Query, resolution: Resolution) -> Resolution:
    """A person pastes the start of a message as often as all of it. When the text only ends the message early
    (no exact fit) and fits no site at the release searched, read it as known to be cut: a longer message of that
    release that it begins wins over the older releases' shorter one, which the stricter reading preferred."""
    if query.cut or query.free_text or any(m.at_release for m in resolution.matches) \
            or any(m.fit is None or m.fit.how == "exact" for m in resolution.matches):
        return resolution
    again = index.match(replace(query, cut=True))
    return again if any(m.at_release for m in again.matches) else resolution
