"""Duplicate detection: error signatures + field-weighted BM25 over the whole issue history."""

from __future__ import annotations

from bot.decision import Candidate, Finding
from bot.report.model import Report


class MemoryIndex:
    """Placeholder index: remembers nothing, finds nothing."""

    def add(self, number: int, report: Report, findings: tuple[Finding, ...], *, state: str = "open",
            created_at: str = "", url: str | None = None, duplicate_of: int | None = None) -> None:
        return None

    def search(self, report: Report, findings: tuple[Finding, ...], *, exclude: int | None = None,
               limit: int = 3) -> tuple[Candidate, ...]:
        return ()
