"""What the core decides about one issue: findings, duplicate candidates, labels, comment.

Plain data shared by the rules engine, the duplicate index, the comment renderer and every adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Evidence:
    condition: str    # human-readable condition, e.g. "exception.message ~ /Pipeline parallelism is not supported/"
    matched: str      # the text (or value) it matched, bounded in length
    where: str = ""   # exception | frame | log | flag | env | title | body | kind


@dataclass(frozen=True)
class Finding:
    rule: str                          # rule id
    title: str
    labels: tuple[str, ...]
    confidence: float
    explanation: str                   # rendered Markdown
    workaround: str                    # rendered Markdown
    references: tuple[str, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    captures: dict[str, str] = field(default_factory=dict, hash=False)
    upgrade: str | None = None         # e.g. "fixed in 0.18.0: upgrade" when the reporter's version predates the fix
    duplicate_key: str | None = None   # the rule's `duplicate_key`, rendered: which root cause of the rule this is

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "title": self.title, "confidence": self.confidence}


@dataclass(frozen=True)
class Candidate:
    """An earlier issue that may share the root cause."""

    number: int
    score: float
    reason: str
    title: str = ""
    state: str = "open"                # open | closed
    url: str | None = None
    via: int | None = None             # the issue that was closed as a duplicate of `number`, if redirected

    def as_dict(self) -> dict[str, Any]:
        return {"number": self.number, "score": round(self.score, 3), "reason": self.reason, "state": self.state}


@dataclass(frozen=True)
class Decision:
    labels: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    needs_info: tuple[str, ...] = ()
    duplicates: tuple[Candidate, ...] = ()
    comment: str | None = None         # full Markdown of the one bot comment, hidden marker included
    related: tuple[Candidate, ...] = ()  # just below the link threshold: "possibly related", never in the comment
