"""The issue history around the index: building it from an export, the chronological view replay needs,
and the "closed as a duplicate of #N" links found in exported issues."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bot.decision import Candidate, Finding
from bot.dupes.index import DuplicateIndex
from bot.export import IssueRecord
from bot.report import parse
from bot.report.model import Report
from bot.sources.index import SourceIndex
from bot.sources.locate import locate

_DUPLICATE_OF = re.compile(r"(?i)\b(?:duplicate of|dupe? of)\s+#(\d{1,7})\b")


def duplicate_target(issue: IssueRecord) -> int | None:
    """The issue this one was closed as a duplicate of, when the export says so."""
    raw = issue.raw
    reason = str(issue.state_reason or "").lower()
    labelled = any(label.lower() == "duplicate" for label in issue.labels)
    if issue.state != "closed" or not (reason == "duplicate" or labelled or _comments(raw)):
        return None
    for text in reversed(_comments(raw)):
        m = _DUPLICATE_OF.search(text[:5000])
        if m and int(m.group(1)) != issue.number:
            return int(m.group(1))
    return None


def _comments(raw: dict[str, Any]) -> list[str]:
    comments = raw.get("comments")
    if not isinstance(comments, list):
        return []
    return [str(c.get("body") or "") for c in comments if isinstance(c, dict)]


class ChronologicalIndex:
    """Replay's view of an index: each issue sees only the issues created before it, even when the index
    (reused with --db) already holds later ones; closed-as-duplicate links from the export are recorded."""

    def __init__(self, index: DuplicateIndex, issues: Iterable[IssueRecord]) -> None:
        self.index = index
        self._order: dict[int, tuple[str, int]] = {}
        self._targets: dict[int, int] = {}
        for issue in issues:
            self._order[issue.number] = (issue.created_at, issue.number)
            target = duplicate_target(issue)
            if target is not None:
                self._targets[issue.number] = target

    def search(self, report: Report, findings: tuple[Finding, ...], *, exclude: int | None = None,
               limit: int = 3) -> tuple[Candidate, ...]:
        before = self._order.get(exclude) if exclude is not None else None
        return self.index.search(report, findings, exclude=exclude, limit=limit, before=before)

    def similar(self, report: Report, findings: tuple[Finding, ...], *, exclude: int | None = None,
                limit: int = 3) -> tuple[tuple[Candidate, ...], tuple[Candidate, ...]]:
        before = self._order.get(exclude) if exclude is not None else None
        return self.index.similar(report, findings, exclude=exclude, limit=limit, before=before)

    def add(self, number: int, report: Report, findings: tuple[Finding, ...], **kwargs: Any) -> None:
        kwargs.setdefault("duplicate_of", self._targets.get(number))
        self.index.add(number, report, findings, **kwargs)

    def close(self) -> None:
        self.index.close()


@dataclass
class BuildSummary:
    issues: int = 0
    duplicates: int = 0
    seconds: float = 0.0

    def render(self) -> str:
        rate = self.issues / self.seconds if self.seconds else 0.0
        return (f"{self.issues} issues indexed in {self.seconds:.2f} s ({rate:.0f} issues/s), "
                f"{self.duplicates} closed as duplicates")


def build_from_export(issues: Iterable[IssueRecord], index: DuplicateIndex,
                      evaluate: Callable[[Report], tuple[Finding, ...]],
                      progress: Callable[[int], None] | None = None,
                      sources: SourceIndex | None = None) -> BuildSummary:
    """Add (or update) every issue of an export in one batch. `sources`: the raise-site index, to key each issue by
    its root cause's raise site as the triage of a new issue does."""
    summary = BuildSummary()
    start = time.perf_counter()
    with index.batch():
        for issue in issues:
            report = locate(sources, parse(issue.title, issue.body), issue.created_at)
            target = duplicate_target(issue)
            index.add(issue.number, report, evaluate(report), state=issue.state, created_at=issue.created_at,
                      url=issue.url, duplicate_of=target)
            summary.issues += 1
            summary.duplicates += target is not None
            if progress is not None:
                progress(summary.issues)
    summary.seconds = time.perf_counter() - start
    return summary


def describe_candidates(index: DuplicateIndex, report: Report, findings: tuple[Finding, ...],
                        exclude: int | None = None) -> str:
    """`explain --db`: the linked candidates and the best near misses, with their scores and reasons."""
    from bot.dupes.document import build_doc

    scored = index.search_doc(build_doc(report, findings), exclude=exclude, near_misses=True)
    lines = [f"similar issues (index of {len(index)}, link threshold {index.policy.threshold:.2f}):"]
    if not scored:
        lines.append("  (none)")
    for s in scored:
        c = s.candidate
        tag = "LINK" if s.linked else "miss"
        lines.append(f"  {tag} #{c.number} [{c.state}] {c.score:.2f} {c.title[:80]}")
        lines.append(f"       {c.reason}")
        m = s.match
        lines.append(f"       text={m.text:.2f} signature={'yes' if m.signature else 'no'} "
                     f"rules={','.join(m.shared_rules) or '-'}{' CONFLICT' if m.rule_conflict else ''}")
    return "\n".join(lines)


def stderr_progress(every: int = 1000) -> Callable[[int], None]:
    def show(n: int) -> None:
        if n % every == 0:
            print(f"\r{n} issues", end="", file=sys.stderr, flush=True)
    return show
