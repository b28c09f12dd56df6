"""The pipeline: title + body -> Report (+ raise site) -> findings -> similar issues -> Decision.

Pure apart from the indexes, which the caller passes in (replay, worker, tests): the duplicate index, and the
raise-site index (read only; without it the report has no raise site and nothing else changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from bot.comment import render_comment
from bot.decision import Candidate, Decision, Finding
from bot.labels import NEEDS_INFO, topic_labels
from bot.report import Report, parse
from bot.report.model import ExceptionInfo
from bot.rules import RuleSet
from bot.sources.index import SourceIndex
from bot.sources.locate import locate, site_dict


class SimilarIssues(Protocol):
    def search(self, report: Report, findings: tuple[Finding, ...], *, exclude: int | None = None,
               limit: int = 3) -> tuple[Candidate, ...]: ...


def similar_issues(similar: SimilarIssues, report: Report, findings: tuple[Finding, ...],
                   number: int) -> tuple[tuple[Candidate, ...], tuple[Candidate, ...]]:
    """(linked, possibly related): an index that can tell (`similar`) gives both, any other its links only."""
    both = getattr(similar, "similar", None)
    if both is not None:
        return both(report, findings, exclude=number)
    return similar.search(report, findings, exclude=number), ()


@dataclass(frozen=True)
class Triage:
    number: int
    report: Report
    decision: Decision

    def as_dict(self) -> dict[str, Any]:
        """The replay output contract (keys and types are read by other tools)."""
        r, d = self.report, self.decision
        return {
            "number": self.number,
            "kind": r.kind,
            "labels": list(d.labels),
            "diagnoses": [f.as_dict() for f in d.findings],
            "needs_info": list(d.needs_info),
            "environment": r.environment.as_dict(),
            "exceptions": [_exception(e) for e in r.exceptions],
            "site": site_dict(r.sites[0], len(r.sites)) if r.sites else None,
            "duplicates": [c.as_dict() for c in d.duplicates],
            "related": [c.as_dict() for c in d.related],
            "comment": d.comment,
        }


def _exception(e: ExceptionInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"type": e.type, "message": e.first_line}
    if e.inferred:
        out["inferred"] = True
    return out


@dataclass(frozen=True)
class Analysis:
    """The part of the triage that needs nothing but the issue itself (replay runs it in worker processes)."""

    report: Report
    findings: tuple[Finding, ...]
    labels: tuple[str, ...]


def analyse(title: str | None, body: str | None, rules: RuleSet, sources: SourceIndex | None = None,
            created_at: str | None = None) -> Analysis:
    """`sources`: the raise-site index; the report's root cause is located in it before the rules run (rules read
    the site and the exception type it implies). `created_at`: when the issue was filed (the release it is about
    when it names no version)."""
    report = locate(sources, parse(title, body), created_at)
    findings = rules.evaluate(report)
    labels = topic_labels(report, findings)
    if report.needs_info and NEEDS_INFO not in labels:
        labels = (*labels, NEEDS_INFO)
    return Analysis(report, findings, labels)


def decide(number: int, analysis: Analysis, similar: SimilarIssues | None = None,
           comment_context: dict[str, Any] | None = None) -> Triage:
    """Duplicates (which depend on the history) and the comment. `comment_context`: the comment's context
    (bot.comment.comment_context of this issue) when it was built already."""
    report, findings = analysis.report, analysis.findings
    duplicates, related = similar_issues(similar, report, findings, number) if similar is not None else ((), ())
    comment = render_comment(report, findings, duplicates, report.needs_info, number=number, context=comment_context)
    decision = Decision(labels=analysis.labels, findings=findings, needs_info=report.needs_info,
                        duplicates=duplicates, comment=comment, related=related)
    return Triage(number, report, decision)


def triage(number: int, title: str | None, body: str | None, rules: RuleSet,
           similar: SimilarIssues | None = None, sources: SourceIndex | None = None,
           created_at: str | None = None) -> Triage:
    return decide(number, analyse(title, body, rules, sources, created_at), similar)
