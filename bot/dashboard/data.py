"""What the pages show, from the store's read model (bot/stores/deliveries/summary.py): the overview's charts,
top causes and rule precision, and the issue page's rows.

Pure functions over plain records: the store reads only the rows a page shows (the issues opened in a window, a
page of the queue) and counters it keeps up to date; what is computed here is bounded by those rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from bot.isotime import epoch
from bot.rules import RuleSet
from bot.stores.deliveries import DecisionRecord, IssueState
from bot.stores.deliveries.summary import (  # noqa: F401 - re-exported for the pages
    NO_RULE,
    PRIORITIES,
    QUEUE_REASONS,
    QUEUE_SORTS,
    SUPPRESS_RULE,
    Disagreement,
    IssueSummary,
    QueueQuery,
    opened_day,
    same_diagnosis,
)

DAY = 86400.0


def day_of(ts: float) -> date:
    return datetime.fromtimestamp(ts, UTC).date()


@dataclass(frozen=True)
class Finding:
    rule: str
    title: str
    confidence: float
    labels: tuple[str, ...] = ()
    evidence: tuple[dict[str, str], ...] = ()
    upgrade: str | None = None


@dataclass(frozen=True)
class IssueRow:
    """The newest decision about one issue, flattened."""

    repo: str
    number: int
    title: str
    url: str | None
    opened: float                      # when the issue was opened (decision time when unknown)
    triaged: float
    mode: str
    applied: bool
    reason: str
    labels: tuple[str, ...]            # the bot's topic labels
    issue_labels: tuple[str, ...]      # the labels on the issue when the bot read it
    findings: tuple[Finding, ...]
    candidates: tuple[dict[str, Any], ...]
    needs_info: tuple[str, ...]
    kind: str | None
    error: str | None                  # "Type: first line" of the root cause
    signature: tuple[str, str] | None  # (key, display)
    state: str = "open"
    record: DecisionRecord | None = field(default=None, compare=False, repr=False)
    related: tuple[dict[str, Any], ...] = ()   # "possibly related": just below the link threshold

    @property
    def key(self) -> tuple[str, int]:
        return self.repo, self.number

    def age_days(self, now: float) -> float:
        return max(0.0, (now - self.opened) / DAY)


def _findings(decision: dict[str, Any], rules: RuleSet | None) -> tuple[Finding, ...]:
    detailed = decision.get("diagnoses")
    if isinstance(detailed, list):
        return tuple(Finding(rule=str(d.get("rule")), title=str(d.get("title") or d.get("rule")),
                             confidence=float(d.get("confidence") or 0), labels=tuple(d.get("labels") or ()),
                             evidence=tuple(e for e in d.get("evidence") or () if isinstance(e, dict)),
                             upgrade=d.get("upgrade"))
                     for d in detailed if isinstance(d, dict))
    out = []
    for rid in decision.get("findings") or ():   # records written before the detail was stored
        rule = rules.get(rid) if rules is not None else None
        out.append(Finding(rule=str(rid), title=rule.title if rule else str(rid),
                           confidence=rule.confidence if rule else 0.0, labels=rule.labels if rule else ()))
    return tuple(out)


def issue_row(rec: DecisionRecord, rules: RuleSet | None = None, state: IssueState | None = None) -> IssueRow:
    plan = rec.plan if isinstance(rec.plan, dict) else {}
    decision = plan.get("decision") if isinstance(plan.get("decision"), dict) else {}
    issue = plan.get("issue") if isinstance(plan.get("issue"), dict) else {}
    error = decision.get("error") if isinstance(decision.get("error"), dict) else None
    sig = decision.get("signature") if isinstance(decision.get("signature"), dict) else None
    candidates = decision.get("candidates")
    if not isinstance(candidates, list):
        candidates = [{"number": n, "score": None, "reason": ""} for n in decision.get("duplicates") or ()]
    return IssueRow(
        repo=rec.repo, number=rec.number,
        title=str(issue.get("title") or decision.get("title") or f"#{rec.number}"),
        url=issue.get("url"),
        opened=epoch(issue.get("created_at")) or rec.created_at,
        triaged=rec.created_at, mode=rec.mode, applied=rec.applied, reason=rec.reason,
        labels=tuple(decision.get("labels") or ()), issue_labels=tuple(issue.get("labels") or ()),
        findings=_findings(decision, rules), candidates=tuple(c for c in candidates if isinstance(c, dict)),
        needs_info=tuple(decision.get("needs_info") or ()), kind=decision.get("kind"),
        error=f"{error.get('type')}: {error.get('message')}" if error else None,
        signature=(str(sig.get("key")), str(sig.get("text"))) if sig else None,
        state=state.state if state is not None else "open", record=rec,
        related=tuple(c for c in decision.get("related") or () if isinstance(c, dict)),
    )


# ------------------------------------------------------------------------------------------------- overview

def anchor_time(newest: float | None, now: float, days: int = 30) -> float:
    """The end of the overview's windows: now, unless nothing was opened in the last `days` days (a server filled
    from an old export), then the time the newest issue was opened."""
    if newest is None or newest >= now - days * DAY:
        return now
    return newest


def daily_series(now: float, days: int) -> list[date]:
    end = day_of(now)
    return [end - timedelta(days=i) for i in range(days - 1, -1, -1)]


def day_range(now: float, days: int) -> tuple[int, int]:
    """The first and last UTC day (days since the epoch) of the `days` days that end with `now`'s."""
    last = opened_day(now)
    return last - days + 1, last


DayRow = tuple[int, str, int]   # (day, counter name, n) from the store's per-day counters


def chart_data(day_rows: list[DayRow], now: float, days: int = 30, top_labels: int = 8) -> dict[str, Any]:
    """Issues triaged per day (by the day they were opened) and the bot's labels per day, for Chart.js, from the
    store's per-day counters."""
    axis = daily_series(now, days)
    first, _ = day_range(now, days)
    per_day = [0] * len(axis)
    label_days: dict[str, list[int]] = defaultdict(lambda: [0] * len(axis))
    label_total: Counter[str] = Counter()
    for day, name, n in day_rows:
        i = day - first
        if not 0 <= i < len(axis):
            continue
        if name == "issues":
            per_day[i] += n
        elif name.startswith("label:"):
            label = name[len("label:"):]
            label_days[label][i] += n
            label_total[label] += n
    labels = sorted(label_total, key=lambda name: (-label_total[name], name))[:top_labels]
    return {
        "days": [d.isoformat() for d in axis],
        "triaged": per_day,
        "labels": [{"label": name, "data": label_days[name]} for name in labels],
    }


@dataclass
class Cause:
    key: str
    kind: str                          # rule | signature
    title: str
    rule: str | None
    count: int = 0
    issues: list[IssueSummary] = field(default_factory=list)
    last: float = 0.0


def ranked_causes(day_rows: list[DayRow], now: float, days: int, limit: int = 15) -> list[Cause]:
    """Root causes by number of reports opened in the last `days` days (whole UTC days, today's included): the top
    diagnosis of an issue when it has one, else its error signature ("top crashers"). Ties: the one seen last
    first. Their titles and issues come from `with_issues`."""
    first, last = day_range(now, days)
    count: Counter[str] = Counter()
    newest: dict[str, int] = {}
    for day, name, n in day_rows:
        if first <= day <= last and name.startswith("cause:") and n > 0:
            key = name[len("cause:"):]
            count[key] += n
            newest[key] = max(newest.get(key, day), day)
    ranked = sorted(count, key=lambda k: (-count[k], -newest[k], k))[:limit]
    return [Cause(key, "rule" if key.startswith("rule:") else "signature", "",
                  key[len("rule:"):] if key.startswith("rule:") else None, count[key], last=newest[key] * DAY)
            for key in ranked]


def with_issues(causes: list[Cause], issues: list[list[IssueSummary]]) -> list[Cause]:
    """The causes with their newest issues (`issues[i]` are those of `causes[i]`, newest first), titled from the
    newest."""
    out = []
    for cause, rows in zip(causes, issues, strict=True):
        if not rows:        # recorded since the counters were read: nothing to show
            continue
        newest = rows[0]
        title = (newest.top_title or cause.rule or "") if cause.rule else (newest.signature_text or "")
        out.append(Cause(cause.key, cause.kind, title, cause.rule, cause.count, list(rows), newest.opened))
    return out


@dataclass
class RuleStat:
    rule: str
    title: str
    hits: int = 0
    label_removed: int = 0
    suppressed: int = 0
    not_duplicate: int = 0

    @property
    def disagreed(self) -> int:
        return self.label_removed + self.suppressed + self.not_duplicate

    @property
    def precision(self) -> float | None:
        if not self.hits:
            return None
        return (self.hits - min(self.hits, self.disagreed)) / self.hits


def rule_stats(counts: dict[str, int], d: Disagreement, rules: RuleSet | None) -> list[RuleStat]:
    """Per rule: how many issues it diagnosed, and how often maintainers disagreed — removed a label the rule
    gave, suppressed the rule on the dashboard, or rejected a duplicate link the rule's diagnosis supported. A
    suppressed rule keeps its hit: it fired there before the issue was triaged again without it."""
    stats: dict[str, RuleStat] = {}

    def stat(rule_id: str) -> RuleStat:
        s = stats.get(rule_id)
        if s is None:
            rule = rules.get(rule_id) if rules is not None and rule_id != NO_RULE else None
            s = stats[rule_id] = RuleStat(rule_id, rule.title if rule else rule_id)
        return s

    for name, n in counts.items():
        if name.startswith("rule:") and n > 0:
            stat(name[len("rule:"):]).hits += n
    for rule, n in d.suppressed_gone.items():
        stat(rule).hits += n
    for rule, n in d.label_removed.items():
        stat(rule).label_removed += n
    for rule, n in d.suppressed.items():
        stat(rule).suppressed += n
    for rule, n in d.not_duplicate.items():
        stat(rule).not_duplicate += n
    return sorted(stats.values(), key=lambda s: (-s.hits, -s.disagreed, s.rule))


def rule_hits(counts: dict[str, int]) -> dict[str, int]:
    return {name[len("rule:"):]: n for name, n in counts.items() if name.startswith("rule:") and n > 0}


@dataclass(frozen=True)
class DuplicateStat:
    issues_with_links: int
    links: int
    rejected: int
    confirmed: int


def duplicate_stats(counts: dict[str, int], d: Disagreement) -> DuplicateStat:
    """Links the bot suggests now, plus the ones maintainers rejected (never suggested again)."""
    return DuplicateStat(issues_with_links=counts.get("with_candidates", 0) + d.rejected_issues_without_links,
                         links=counts.get("candidates", 0) + d.rejected, rejected=d.rejected, confirmed=d.confirmed)
