"""From the store's records to what the pages show: issue rows, the overview's statistics and the queue.

Pure functions over plain records (DecisionRecord, IssueState, feedback dicts, Delivery), so the SQL stays in the
store and the same code serves SQLite and any other implementation of its interface.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from bot.isotime import epoch
from bot.rules import RuleSet
from bot.stores.deliveries import DecisionRecord, Delivery, IssueState

DAY = 86400.0
SUPPRESS_RULE = "suppress-rule:"
NO_RULE = "(duplicate search)"
QUEUE_REASONS = ("no diagnosis", "needs info", "low confidence", "failed to apply", "parked delivery",
                 "config error")
# The queue's order: what a maintainer can act on first. An issue takes the first tier any of its reasons puts it in.
PRIORITIES = (
    ("the bot could not act", "a failed or parked delivery, or a config error: the issue got nothing"),
    ("a diagnosis to confirm", "only low-confidence findings: a quick check settles it"),
    ("an error nobody diagnosed", "a bug with an error (or a complete report) and no rule matched"),
    ("no diagnosis, details missing", "no rule matched and the bot asked the reporter for details"),
    ("waiting on the reporter", "diagnosed or not a bug, but the bot asked for details"),
)
# kinds for which a missing diagnosis means a human should look (feature requests and RFCs have nothing to diagnose)
DIAGNOSABLE_KINDS = ("bug", "installation", "performance")


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


def issue_rows(records: Iterable[DecisionRecord], rules: RuleSet | None,
               states: Iterable[IssueState] = ()) -> list[IssueRow]:
    by_key = {(s.repo, s.number): s for s in states}
    return [issue_row(r, rules, by_key.get((r.repo, r.number))) for r in records]


# ------------------------------------------------------------------------------------------------- overview

def anchor_time(rows: list[IssueRow], now: float, days: int = 30) -> float:
    """The end of the overview's windows: now, unless nothing was opened in the last `days` days (a server filled
    from an old export), then the day the newest issue was opened."""
    newest = max((r.opened for r in rows), default=None)
    if newest is None or newest >= now - days * DAY:
        return now
    return newest


def daily_series(rows: list[IssueRow], now: float, days: int) -> list[date]:
    end = day_of(now)
    return [end - timedelta(days=i) for i in range(days - 1, -1, -1)]


def chart_data(rows: list[IssueRow], now: float, days: int = 30, top_labels: int = 8) -> dict[str, Any]:
    """Issues triaged per day (by the day they were opened) and the bot's labels per day, for Chart.js."""
    axis = daily_series(rows, now, days)
    index = {d: i for i, d in enumerate(axis)}
    per_day = [0] * len(axis)
    label_days: dict[str, list[int]] = defaultdict(lambda: [0] * len(axis))
    label_total: Counter[str] = Counter()
    for row in rows:
        i = index.get(day_of(row.opened))
        if i is None:
            continue
        per_day[i] += 1
        for label in row.labels:
            label_days[label][i] += 1
            label_total[label] += 1
    labels = [name for name, _ in label_total.most_common(top_labels)]
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
    issues: list[IssueRow] = field(default_factory=list)
    first: float = 0.0
    last: float = 0.0


def top_causes(rows: list[IssueRow], now: float, days: int, limit: int = 15) -> list[Cause]:
    """Root causes by number of reports opened in the last `days` days: the top diagnosis of an issue when it has
    one, else its error signature ("top crashers")."""
    since = now - days * DAY
    causes: dict[str, Cause] = {}
    for row in rows:
        if row.opened < since:
            continue
        if row.findings:
            f = row.findings[0]
            key, kind, title, rule = f"rule:{f.rule}", "rule", f.title, f.rule
        elif row.signature:
            key, kind, title, rule = f"sig:{row.signature[0]}", "signature", row.signature[1], None
        else:
            continue
        cause = causes.get(key)
        if cause is None:
            cause = causes[key] = Cause(key, kind, title, rule, first=row.opened, last=row.opened)
        cause.count += 1
        cause.issues.append(row)
        cause.first, cause.last = min(cause.first, row.opened), max(cause.last, row.opened)
    ranked = sorted(causes.values(), key=lambda c: (-c.count, -c.last, c.key))
    for cause in ranked:
        cause.issues.sort(key=lambda r: -r.opened)
    return ranked[:limit]


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


def rule_stats(rows: list[IssueRow], states: Iterable[IssueState], feedback: Iterable[dict[str, Any]],
               rules: RuleSet | None, rejected_reasons: dict[tuple[str, int, int], str] | None = None
               ) -> list[RuleStat]:
    """Per rule: how many issues it diagnosed, and how often maintainers disagreed — removed a label the rule
    gave, suppressed the rule on the dashboard, or rejected a duplicate link the rule's diagnosis supported."""
    stats: dict[str, RuleStat] = {}

    def stat(rule_id: str) -> RuleStat:
        s = stats.get(rule_id)
        if s is None:
            rule = rules.get(rule_id) if rules is not None and rule_id != NO_RULE else None
            s = stats[rule_id] = RuleStat(rule_id, rule.title if rule else rule_id)
        return s

    by_key = {row.key: row for row in rows}
    for row in rows:
        for f in row.findings:
            stat(f.rule).hits += 1
    for state in states:
        row = by_key.get((state.repo, state.number))
        if row is None or not state.labels_suppressed:
            continue
        removed = set(state.labels_suppressed)
        for f in row.findings:
            if removed & set(f.labels):
                stat(f.rule).label_removed += 1
    suppressed_seen: set[tuple[str, int, str]] = set()
    for fb in feedback:
        kind = str(fb.get("kind") or "")
        if kind.startswith(SUPPRESS_RULE):
            rid = kind[len(SUPPRESS_RULE):]
            key = (fb["repo"], fb["number"], rid)
            if key not in suppressed_seen:
                suppressed_seen.add(key)
                s = stat(rid)
                s.suppressed += 1
                row = by_key.get((fb["repo"], fb["number"]))
                if row is None or all(f.rule != rid for f in row.findings):
                    s.hits += 1     # it fired there before a maintainer suppressed it (the newer triage lacks it)
        elif kind == "not-duplicate" and fb.get("target") is not None:
            reason = (rejected_reasons or {}).get((fb["repo"], fb["number"], int(fb["target"])), "")
            stat(same_diagnosis(reason) or NO_RULE).not_duplicate += 1
    return sorted(stats.values(), key=lambda s: (-s.hits, -s.disagreed, s.rule))


def same_diagnosis(reason: str) -> str | None:
    """The rule named by a duplicate candidate's "same diagnosis: <rule>" reason, if any."""
    marker = "same diagnosis: "
    start = reason.find(marker)
    if start < 0:
        return None
    rest = reason[start + len(marker):]
    end = min((i for i in (rest.find(";"), rest.find(" "), rest.find(",")) if i >= 0), default=len(rest))
    return rest[:end].strip() or None


@dataclass(frozen=True)
class DuplicateStat:
    issues_with_links: int
    links: int
    rejected: int
    confirmed: int


def duplicate_stats(rows: list[IssueRow], feedback: Iterable[dict[str, Any]]) -> DuplicateStat:
    feedback = list(feedback)
    rejected = {(f["repo"], f["number"], f["target"]) for f in feedback if f.get("kind") == "not-duplicate"}
    confirmed = {(f["repo"], f["number"], f["target"]) for f in feedback if f.get("kind") == "duplicate"}
    links = {(r.repo, r.number, c.get("number")) for r in rows for c in r.candidates} | rejected
    return DuplicateStat(issues_with_links=len({(r, n) for r, n, _ in links}), links=len(links),
                         rejected=len(rejected), confirmed=len(confirmed))


# ------------------------------------------------------------------------------------------------- queue

@dataclass(frozen=True)
class QueueItem:
    row: IssueRow
    reasons: tuple[str, ...]
    detail: str = ""

    @property
    def priority(self) -> int:
        return queue_priority(self.reasons)

    @property
    def priority_name(self) -> str:
        return PRIORITIES[self.priority][0]


def queue_priority(reasons: tuple[str, ...] | list[str]) -> int:
    """The index in PRIORITIES of a queued issue with these reasons."""
    r = set(reasons)
    if r & {"failed to apply", "parked delivery", "config error"}:
        return 0
    if "low confidence" in r:
        return 1
    if "no diagnosis" in r:
        return 3 if "needs info" in r else 2
    return 4


def queue_reasons(row: IssueRow, low_confidence: float, parked: set[tuple[str, int]]) -> list[str]:
    reasons = []
    if not row.findings and (row.kind in DIAGNOSABLE_KINDS or row.error):
        reasons.append("no diagnosis")
    if row.needs_info:
        reasons.append("needs info")
    if row.findings and all(f.confidence < low_confidence for f in row.findings):
        reasons.append("low confidence")
    if "(failed:" in row.reason:
        reasons.append("failed to apply")
    if row.key in parked:
        reasons.append("parked delivery")
    return reasons


@dataclass(frozen=True)
class QueueFilter:
    repo: str | None = None
    label: str | None = None
    reason: str | None = None
    max_age_days: float | None = None
    sort: str = "priority"            # priority | newest | oldest | repo

    SORTS = ("priority", "newest", "oldest", "repo")


def build_queue(rows: list[IssueRow], parked: list[Delivery], config_errors: dict[str, list[str]],
                low_confidence: float, flt: QueueFilter, now: float | None = None) -> list[QueueItem]:
    now = time.time() if now is None else now
    parked_keys = {(d.repo, d.issue_number) for d in parked if d.repo and d.issue_number is not None}
    items = []
    for row in rows:
        if row.state != "open":
            continue
        reasons = queue_reasons(row, low_confidence, parked_keys)
        if row.repo in config_errors:
            reasons.append("config error")
        if not reasons:
            continue
        if flt.repo and row.repo != flt.repo:
            continue
        if flt.label and flt.label not in row.labels and flt.label not in row.issue_labels:
            continue
        if flt.reason and flt.reason not in reasons:
            continue
        if flt.max_age_days is not None and row.age_days(now) > flt.max_age_days:
            continue
        items.append(QueueItem(row, tuple(reasons)))
    if flt.sort == "oldest":
        items.sort(key=lambda i: (i.row.opened, i.row.number))
    elif flt.sort == "repo":
        items.sort(key=lambda i: (i.row.repo, -i.row.number))
    elif flt.sort == "newest":
        items.sort(key=lambda i: (-i.row.opened, -i.row.number))
    else:
        items.sort(key=lambda i: (i.priority, -i.row.opened, -i.row.number))
    return items
