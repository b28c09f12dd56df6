"""The dashboard's read model in the delivery store: one summary row per issue (its newest decision, flattened,
with the queue's reasons and priority), a row per finding and per duplicate link, and counters. They are written
in the transaction that records a decision (or changes the issue's state, or parks a delivery), so a dashboard
page reads only the rows it shows and the counters, never every decision.

Pure: `summarize` flattens a decision; `summary_writes` is the SQL that stores a summary and moves the counters
from the old row's values to the new ones; `queue_sql` and friends are the reads. Both backends run the same
statements with their placeholder (`?` or `%s`).

    issue_summary      one row per issue: title, dates, state, labels, rules, error, reasons, queue_tier, …
    issue_findings     (repo, number, rule): the newest decision's findings, with their labels
    candidate_links    (repo, number, target): every duplicate link ever suggested, with the rule behind it
    dashboard_counts   (name, n): issues, open, diagnosed, needs_info, with_candidates, candidates, queue,
                       rule:<id>, label:<name>, repo:<owner/name>
    dashboard_days     (day, name, n): per day opened (UTC): issues, label:<name>, cause:rule:<id> | cause:sig:<key>
    dashboard_meta     (key, value): the low-confidence threshold the queue's reasons were computed with
    disagreement_counts (kind, rule, n): maintainers' disagreement (`Disagreement`'s fields; rule '' for totals)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from bot.isotime import epoch
from bot.stores.deliveries.records import (  # noqa: F401 - the read model's records, re-exported
    PRIORITIES,
    DecisionRecord,
    Disagreement,
    IssueSummary,
    QueueQuery,
)

DIAGNOSABLE_KINDS = ("bug", "installation", "performance")  # a missing diagnosis means a human should look
LOW_CONFIDENCE = 0.7      # findings below this put an issue in the queue (DASHBOARD_LOW_CONFIDENCE)
QUEUE_REASONS = ("no diagnosis", "needs info", "low confidence", "failed to apply", "parked delivery")
QUEUE_SORTS = ("priority", "newest", "oldest", "repo")
MAX_TEXT = 300
DAY = 86400.0


def _cut(text: Any, limit: int = MAX_TEXT) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def queue_reasons(s: IssueSummary, low_confidence: float) -> tuple[str, ...]:
    """Why an open issue needs a human (see QUEUE_REASONS)."""
    reasons = []
    if not s.rules and (s.kind in DIAGNOSABLE_KINDS or s.error):
        reasons.append("no diagnosis")
    if s.needs_info:
        reasons.append("needs info")
    if s.rules and s.max_confidence is not None and s.max_confidence < low_confidence:
        reasons.append("low confidence")
    if s.failed:
        reasons.append("failed to apply")
    if s.parked:
        reasons.append("parked delivery")
    return tuple(reasons)


def queue_tier(reasons: Iterable[str]) -> int | None:
    """The index in PRIORITIES of an issue with these reasons; None when it has none."""
    r = set(reasons)
    if not r:
        return None
    if r & {"failed to apply", "parked delivery"}:
        return 0
    if "low confidence" in r:
        return 1
    if "no diagnosis" in r:
        return 3 if "needs info" in r else 2
    return 4


def requeued(s: IssueSummary, low_confidence: float) -> IssueSummary:
    """The summary with its reasons and tier computed again (after `parked` or the threshold changed)."""
    reasons = queue_reasons(s, low_confidence)
    return replace(s, reasons=reasons, queue_tier=queue_tier(reasons))


def summarize(record: DecisionRecord, state: str = "open", parked: bool = False,
              low_confidence: float = LOW_CONFIDENCE) -> IssueSummary:
    """The summary of an issue whose newest decision is `record` (any plan shape: fields may be missing)."""
    plan = _dict(record.plan)
    decision, issue = _dict(plan.get("decision")), _dict(plan.get("issue"))
    diagnoses = [d for d in decision.get("diagnoses") or () if isinstance(d, dict)]
    if diagnoses:
        rules = tuple(str(d.get("rule")) for d in diagnoses)
        confidences = [float(d.get("confidence") or 0) for d in diagnoses]
        finding_labels = tuple((str(d.get("rule")), _strings(d.get("labels"))) for d in diagnoses)
        top_title = _cut(diagnoses[0].get("title") or rules[0])
    else:   # records written before the detail was stored name the rules only
        rules = _strings(decision.get("findings"))
        confidences, finding_labels, top_title = [], tuple((r, ()) for r in rules), _cut(rules[0]) if rules else None
    error, sig = _dict(decision.get("error")), _dict(decision.get("signature"))
    candidates = decision.get("candidates")
    count = len(candidates) if isinstance(candidates, list) else len(decision.get("duplicates") or ())
    summary = IssueSummary(
        repo=record.repo, number=record.number, decision_id=record.id,
        title=_cut(issue.get("title") or decision.get("title") or f"#{record.number}") or "",
        url=_cut(issue.get("url"), 2000), opened=epoch(issue.get("created_at")) or record.created_at,
        triaged=record.created_at, state=state, kind=_cut(decision.get("kind"), 40),
        labels=_strings(decision.get("labels")), issue_labels=_strings(issue.get("labels"))[:50], rules=rules,
        top_title=top_title, max_confidence=max(confidences) if confidences else None,
        needs_info=len(decision.get("needs_info") or ()), candidates=count,
        error=_cut(f"{error.get('type')}: {error.get('message')}") if error else None,
        signature_key=_cut(sig.get("key")) if sig else None, signature_text=_cut(sig.get("text")) if sig else None,
        failed="(failed:" in record.reason, parked=parked, finding_labels=finding_labels)
    return requeued(summary, low_confidence)


def same_diagnosis(reason: str) -> str | None:
    """The rule named by a duplicate candidate's "same diagnosis: <rule>" reason, if any."""
    marker = "same diagnosis: "
    start = reason.find(marker)
    if start < 0:
        return None
    rest = reason[start + len(marker):]
    end = min((i for i in (rest.find(";"), rest.find(" "), rest.find(",")) if i >= 0), default=len(rest))
    return rest[:end].strip() or None


def candidate_links(record: DecisionRecord) -> list[tuple[int, str | None]]:
    """(target, rule whose diagnosis supported the link) of every duplicate candidate the decision suggested."""
    decision = _dict(_dict(record.plan).get("decision"))
    out = []
    for c in decision.get("candidates") or ():
        if isinstance(c, dict) and isinstance(c.get("number"), int):
            out.append((c["number"], same_diagnosis(str(c.get("reason") or ""))))
    return out


# ------------------------------------------------------------------------------------------------ counters

def counts(s: IssueSummary | None) -> Counter[str]:
    """The counters one summary row contributes to."""
    c: Counter[str] = Counter()
    if s is None:
        return c
    c["issues"] = 1
    c[f"repo:{s.repo}"] = 1
    c["open"] = int(s.state == "open")
    c["diagnosed"] = int(bool(s.rules))
    c["needs_info"] = int(s.needs_info > 0)
    c["with_candidates"] = int(s.candidates > 0)
    c["candidates"] = s.candidates
    c["queue"] = int(s.state == "open" and s.queue_tier is not None)
    for rule in set(s.rules):
        c[f"rule:{rule}"] += 1
    for label in set(s.labels):
        c[f"label:{label}"] += 1
    return c


def opened_day(ts: float) -> int:
    """The UTC day (days since the epoch) of a time: the overview's charts and windows count whole days."""
    return int(ts // DAY)


def cause_key(s: IssueSummary) -> str | None:
    """An issue's root cause on the overview: its top diagnosis, else its error signature."""
    if s.top_rule:
        return f"rule:{s.top_rule}"
    return f"sig:{s.signature_key}" if s.signature_key else None


def day_counts(s: IssueSummary | None) -> Counter[tuple[int, str]]:
    """The per-day counters one summary row contributes to, on the day it was opened: issues, label:<name>,
    cause:<cause_key>."""
    c: Counter[tuple[int, str]] = Counter()
    if s is None:
        return c
    day = opened_day(s.opened)
    c[(day, "issues")] = 1
    for label in set(s.labels):
        c[(day, f"label:{label}")] += 1
    cause = cause_key(s)
    if cause:
        c[(day, f"cause:{cause}")] = 1
    return c


def day_deltas(old: IssueSummary | None, new: IssueSummary | None) -> dict[tuple[int, str], int]:
    before, after = day_counts(old), day_counts(new)
    return {k: after[k] - before[k] for k in before.keys() | after.keys() if after[k] != before[k]}


def deltas(old: IssueSummary | None, new: IssueSummary | None) -> dict[str, int]:
    before, after = counts(old), counts(new)
    return {name: after[name] - before[name] for name in before.keys() | after.keys()
            if after[name] != before[name]}


# ------------------------------------------------------------------------------------------------ SQL

SUMMARY_COLUMNS = ("repo", "number", "decision_id", "title", "url", "opened", "triaged", "state", "kind", "labels",
                   "issue_labels", "rules", "finding_labels", "top_rule", "top_title", "max_confidence", "needs_info",
                   "candidates", "error", "signature_key", "signature_text", "failed", "parked", "reasons",
                   "queue_tier")


def _json(values: Sequence[Any]) -> str:
    return json.dumps(list(values), separators=(",", ":"))


def summary_values(s: IssueSummary) -> tuple[Any, ...]:
    return (s.repo, s.number, s.decision_id, s.title, s.url, s.opened, s.triaged, s.state, s.kind, _json(s.labels),
            _json(s.issue_labels), _json(s.rules), _json([[r, list(lb)] for r, lb in s.finding_labels]), s.top_rule,
            s.top_title, s.max_confidence, s.needs_info, s.candidates, s.error, s.signature_key, s.signature_text,
            int(s.failed), int(s.parked), "|" + "|".join(s.reasons) + "|" if s.reasons else "", s.queue_tier)


def summary_from_row(r: Any) -> IssueSummary:
    """A summary from an issue_summary row read by column name (sqlite3.Row or a psycopg dict row)."""
    return IssueSummary(
        repo=r["repo"], number=r["number"], decision_id=r["decision_id"], title=r["title"], url=r["url"],
        opened=r["opened"], triaged=r["triaged"], state=r["state"], kind=r["kind"],
        labels=tuple(json.loads(r["labels"])), issue_labels=tuple(json.loads(r["issue_labels"])),
        rules=tuple(json.loads(r["rules"])), top_title=r["top_title"], max_confidence=r["max_confidence"],
        needs_info=r["needs_info"], candidates=r["candidates"], error=r["error"], signature_key=r["signature_key"],
        signature_text=r["signature_text"], failed=bool(r["failed"]), parked=bool(r["parked"]),
        reasons=tuple(x for x in (r["reasons"] or "").split("|") if x), queue_tier=r["queue_tier"],
        finding_labels=tuple((rule, tuple(labels)) for rule, labels in json.loads(r["finding_labels"])))


def counter_writes(ph: str, changes: dict[str, int]) -> list[tuple[str, tuple]]:
    return [(f"INSERT INTO dashboard_counts (name, n) VALUES ({ph}, {ph}) ON CONFLICT (name)"
             " DO UPDATE SET n = dashboard_counts.n + excluded.n", (name, n)) for name, n in sorted(changes.items())]


def day_writes(ph: str, changes: dict[tuple[int, str], int]) -> list[tuple[str, tuple]]:
    return [(f"INSERT INTO dashboard_days (day, name, n) VALUES ({ph}, {ph}, {ph}) ON CONFLICT (day, name)"
             " DO UPDATE SET n = dashboard_days.n + excluded.n", (day, name, n))
            for (day, name), n in sorted(changes.items())]


def summary_writes(ph: str, old: IssueSummary | None, new: IssueSummary,
                   links: Iterable[tuple[int, str | None]] = (), count: bool = True) -> list[tuple[str, tuple]]:
    """The statements that store `new` over `old` (None: the issue has no row yet): the summary row, its findings,
    the decision's duplicate links and (with `count`) the counters' changes."""
    cols = ", ".join(SUMMARY_COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in SUMMARY_COLUMNS[2:])
    out: list[tuple[str, tuple]] = [(
        f"INSERT INTO issue_summary ({cols}) VALUES ({', '.join([ph] * len(SUMMARY_COLUMNS))})"
        f" ON CONFLICT (repo, number) DO UPDATE SET {updates}", summary_values(new))]
    if old is None or old.finding_labels != new.finding_labels or old.opened != new.opened:
        out.append((f"DELETE FROM issue_findings WHERE repo = {ph} AND number = {ph}", (new.repo, new.number)))
        for rule, labels in dict(new.finding_labels).items():
            out.append((f"INSERT INTO issue_findings (repo, number, rule, labels, opened) VALUES ({ph}, {ph}, {ph},"
                        f" {ph}, {ph})", (new.repo, new.number, rule, _json(labels), new.opened)))
    for target, rule in links:
        out.append((f"INSERT INTO candidate_links (repo, number, target, rule) VALUES ({ph}, {ph}, {ph}, {ph})"
                    " ON CONFLICT (repo, number, target) DO NOTHING", (new.repo, new.number, target, rule)))
    if not count:
        return out
    return out + counter_writes(ph, deltas(old, new)) + day_writes(ph, day_deltas(old, new))


def state_writes(ph: str, old: IssueSummary, state: str) -> list[tuple[str, tuple]]:
    """The statements that set an issue's state (open, closed, deleted) on its summary and move the counters."""
    if old.state == state:
        return []
    return [(f"UPDATE issue_summary SET state = {ph} WHERE repo = {ph} AND number = {ph}",
             (state, old.repo, old.number))] + counter_writes(ph, deltas(old, replace(old, state=state)))


def tier_writes(ph: str, old: IssueSummary, new: IssueSummary) -> list[tuple[str, tuple]]:
    """The statements that store a summary's new `parked` flag, reasons and tier."""
    if (old.parked, old.reasons, old.queue_tier) == (new.parked, new.reasons, new.queue_tier):
        return []
    values = summary_values(new)
    return [(f"UPDATE issue_summary SET parked = {ph}, reasons = {ph}, queue_tier = {ph} WHERE repo = {ph}"
             f" AND number = {ph}", (*values[-3:], new.repo, new.number))] \
        + counter_writes(ph, deltas(old, new))


SUMMARY_OF = "SELECT * FROM issue_summary WHERE repo = {ph} AND number = {ph}"
PARKED_OF = "SELECT 1 FROM deliveries WHERE issue_key = {ph} AND status = 'parked' LIMIT 1"


_ORDER = {"priority": "queue_tier, opened DESC, number DESC", "newest": "opened DESC, number DESC",
          "oldest": "opened, number", "repo": "repo, number DESC"}


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def queue_where(ph: str, q: QueueQuery) -> tuple[str, tuple]:
    where = ["state = 'open'", "queue_tier IS NOT NULL"]
    params: list[Any] = []
    if q.repo:
        where.append(f"repo = {ph}")
        params.append(q.repo)
    if q.reason:
        where.append(f"reasons LIKE {ph} ESCAPE '\\'")
        params.append(f"%|{_like(q.reason)}|%")
    if q.label:
        where.append(f"(labels LIKE {ph} ESCAPE '\\' OR issue_labels LIKE {ph} ESCAPE '\\')")
        params += [f"%{_like(json.dumps(q.label))}%"] * 2
    if q.opened_since is not None:
        where.append(f"opened >= {ph}")
        params.append(q.opened_since)
    return " AND ".join(where), tuple(params)


def queue_sql(ph: str, q: QueueQuery) -> tuple[str, tuple]:
    where, params = queue_where(ph, q)
    return (f"SELECT * FROM issue_summary WHERE {where} ORDER BY {_ORDER.get(q.sort, _ORDER['priority'])}"
            f" LIMIT {ph} OFFSET {ph}", (*params, q.limit, q.offset))


def queue_count_sql(ph: str, q: QueueQuery) -> tuple[str, tuple] | None:
    """A COUNT for a filtered queue; None when the `queue` counter has the answer."""
    if not (q.repo or q.reason or q.label or q.opened_since is not None):
        return None
    where, params = queue_where(ph, q)
    return f"SELECT COUNT(*) AS n FROM issue_summary WHERE {where}", params


def days_sql(ph: str) -> str:
    """The per-day counters of the days [first, last]: the overview's charts and top causes."""
    return f"SELECT day, name, n FROM dashboard_days WHERE day >= {ph} AND day <= {ph} AND n <> 0"


def cause_issues_sql(ph: str, causes: Sequence[tuple[str, float, float]], limit: int) -> tuple[str, tuple]:
    """One statement for the newest `limit` issues of each (cause_key, since, until): opened in [since, until)
    with that root cause; each row's `part` is its cause's index in `causes`."""
    parts, params = [], []
    for i, (cause, since, until) in enumerate(causes):
        where = f"top_rule = {ph}" if cause.startswith("rule:") else f"top_rule IS NULL AND signature_key = {ph}"
        parts.append(f"SELECT * FROM (SELECT {i} AS part, s.* FROM issue_summary s WHERE {where} AND opened >= {ph}"
                     f" AND opened < {ph} ORDER BY opened DESC, number DESC LIMIT {ph}) AS p{i}")
        params += [cause.split(":", 1)[1], since, until, limit]
    return " UNION ALL ".join(parts), tuple(params)


UNFINISHED_COUNTS = ("SELECT status, COUNT(*) AS n FROM deliveries WHERE status IN ('queued', 'running', 'parked')"
                     " GROUP BY status")
NEWEST_OPENED = "SELECT MAX(opened) AS t FROM issue_summary"


def rule_issues_sql(ph: str) -> str:
    return ("SELECT s.* FROM issue_findings f JOIN issue_summary s ON s.repo = f.repo AND s.number = f.number"
            f" WHERE f.rule = {ph} ORDER BY f.opened DESC, f.number DESC LIMIT {ph}")


# maintainers' disagreement: the fold of the rows that record it (feedback, labels a human removed), kept per
# (kind, rule) in disagreement_counts and moved, whenever one issue's feedback, decision or removed labels change, by
# the change of that issue's own fold (its rows read before and after the write, in the same transaction)

def disagreement_sql(ph: str | None = None) -> tuple[str, str, str, str]:
    """SUPPRESSED, NOT_DUPLICATE, LABELS_REMOVED and CONFIRMED: over every issue (the migration's backfill), or with
    `ph` over one issue, each statement taking (repo, number)."""
    def one(alias: str) -> str:
        return f" AND {alias}.repo = {ph} AND {alias}.number = {ph}" if ph else ""

    suppressed = ("SELECT f.repo, f.number, f.kind, (SELECT COUNT(*) FROM issue_findings i WHERE i.repo = f.repo"
                  " AND i.number = f.number AND i.rule = substr(f.kind, 15)) AS present FROM feedback f"
                  f" WHERE f.kind >= 'suppress-rule:' AND f.kind < 'suppress-rule;'{one('f')}"
                  " GROUP BY f.repo, f.number, f.kind")
    not_duplicate = ("SELECT DISTINCT f.repo, f.number, f.target, l.rule, s.candidates FROM feedback f"
                     " LEFT JOIN candidate_links l ON l.repo = f.repo AND l.number = f.number AND l.target = f.target"
                     " LEFT JOIN issue_summary s ON s.repo = f.repo AND s.number = f.number"
                     f" WHERE f.kind = 'not-duplicate' AND f.target IS NOT NULL{one('f')}")
    # CROSS JOIN: SQLite reads issue_state first (its partial index holds only the issues whose labels were removed)
    labels_removed = ("SELECT st.labels_suppressed, i.rule, i.labels FROM issue_state st CROSS JOIN issue_findings i"
                      f" WHERE st.labels_suppressed <> '[]' AND i.repo = st.repo AND i.number = st.number{one('st')}")
    confirmed = ("SELECT COUNT(*) AS n FROM (SELECT DISTINCT f.repo, f.number, f.target FROM feedback f"
                 f" WHERE f.kind = 'duplicate'{one('f')}) d")
    return suppressed, not_duplicate, labels_removed, confirmed


def issue_inputs_sql(ph: str) -> str:
    """Whether one issue has any feedback or removed labels (else its fold is empty); takes (repo, number) twice."""
    return (f"SELECT (SELECT COUNT(*) FROM feedback WHERE repo = {ph} AND number = {ph}) AS feedback,"
            f" (SELECT labels_suppressed FROM issue_state WHERE repo = {ph} AND number = {ph}) AS removed")


NO_RULE = "(duplicate search)"
SUPPRESS_RULE = "suppress-rule:"
PER_RULE = ("label_removed", "suppressed", "suppressed_gone", "not_duplicate")
TOTALS = ("rejected", "rejected_issues_without_links", "confirmed")
DISAGREEMENT_COUNTS = "SELECT kind, rule, n FROM disagreement_counts WHERE n <> 0"


def disagreement(suppressed: Iterable[Any], not_duplicate: Iterable[Any], labels_removed: Iterable[Any],
                 confirmed: int) -> Disagreement:
    """From the rows of `disagreement_sql`'s SUPPRESSED, NOT_DUPLICATE and LABELS_REMOVED (read by column name)."""
    d = Disagreement(confirmed=confirmed)
    for r in suppressed:
        rule = r["kind"][len(SUPPRESS_RULE):]
        d.suppressed[rule] += 1
        if not r["present"]:
            d.suppressed_gone[rule] += 1
    issues_without = set()
    for r in not_duplicate:
        d.rejected += 1
        d.not_duplicate[r["rule"] or NO_RULE] += 1
        if not r["candidates"]:
            issues_without.add((r["repo"], r["number"]))
    d.rejected_issues_without_links = len(issues_without)
    for r in labels_removed:
        if set(json.loads(r["labels_suppressed"])) & set(json.loads(r["labels"])):
            d.label_removed[r["rule"]] += 1
    return d


def disagreement_counts(d: Disagreement) -> Counter[tuple[str, str]]:
    """The (kind, rule) counters of a fold: every number is a sum over issues, so issues add up."""
    c: Counter[tuple[str, str]] = Counter()
    for kind in PER_RULE:
        for rule, n in getattr(d, kind).items():
            c[(kind, rule)] += n
    for kind in TOTALS:
        c[(kind, "")] += getattr(d, kind)
    return c


def disagreement_from_counts(rows: Iterable[Any]) -> Disagreement:
    """The fold from the rows of DISAGREEMENT_COUNTS (read by column name)."""
    d = Disagreement()
    for r in rows:
        if r["kind"] in PER_RULE:
            getattr(d, r["kind"])[r["rule"]] = r["n"]
        elif r["kind"] in TOTALS:
            setattr(d, r["kind"], r["n"])
    return d


def disagreement_writes(ph: str, before: Disagreement, after: Disagreement) -> list[tuple[str, tuple]]:
    """The statements that move disagreement_counts by an issue's change of fold (in key order: no deadlocks)."""
    old, new = disagreement_counts(before), disagreement_counts(after)
    changes = {k: new[k] - old[k] for k in old.keys() | new.keys() if new[k] != old[k]}
    return [(f"INSERT INTO disagreement_counts (kind, rule, n) VALUES ({ph}, {ph}, {ph}) ON CONFLICT (kind, rule)"
             " DO UPDATE SET n = disagreement_counts.n + excluded.n", (kind, rule, n))
            for (kind, rule), n in sorted(changes.items())]


# ------------------------------------------------------------------------------------------------ migration

def execute_many(conn: Any, statements: list[tuple[str, tuple]]) -> None:
    """Run the statements grouped by their SQL, in the order each SQL first appears (one executemany each: a
    pipeline on psycopg)."""
    groups: dict[str, list[tuple]] = {}
    for sql, params in statements:
        groups.setdefault(sql, []).append(params)
    for sql, rows in groups.items():
        if hasattr(conn, "executemany"):     # sqlite3
            conn.executemany(sql, rows)
        else:
            with conn.cursor() as cur:
                cur.executemany(sql, rows)


def backfill(conn: Any, ph: str, low_confidence: float = LOW_CONFIDENCE, batch: int = 1000) -> int:
    """Fill the read model from the decisions already recorded (the data migration that adds it): every issue's
    summary from its newest decision, the links its rejected candidates were suggested with, and the counters.
    `conn` is a synchronous connection (sqlite3 or psycopg) inside the migration's transaction. Each batch's
    statements are grouped by SQL: within a batch every issue is new, so the order across issues does not matter."""
    from bot.stores.deliveries.rows import issue_key

    states = {(r[0], r[1]): r[2] for r in conn.execute("SELECT repo, number, state FROM issue_state").fetchall()}
    parked = {r[0] for r in conn.execute("SELECT DISTINCT issue_key FROM deliveries WHERE status = 'parked'")
              .fetchall()}
    totals: Counter[str] = Counter()
    day_totals: Counter[tuple[int, str]] = Counter()
    last, done = 0, 0
    while True:
        rows = conn.execute(
            "SELECT d.id, d.delivery_id, d.repo, d.number, d.mode, d.reason, d.plan, d.applied, d.created_at"
            f" FROM decisions d WHERE d.id > {ph} AND d.id = (SELECT MAX(e.id) FROM decisions e"
            f" WHERE e.repo = d.repo AND e.number = d.number) ORDER BY d.id LIMIT {ph}", (last, batch)).fetchall()
        if not rows:
            break
        writes: list[tuple[str, tuple]] = []
        for r in rows:
            try:
                plan = json.loads(r[6])
            except ValueError:
                plan = {}
            record = DecisionRecord(r[0], r[1], r[2], r[3], r[4], r[5], plan, bool(r[7]), r[8])
            s = summarize(record, states.get((record.repo, record.number), "open"),
                          issue_key(record.repo, record.number) in parked, low_confidence)
            writes += summary_writes(ph, None, s, candidate_links(record), count=False)
            totals.update(counts(s))
            day_totals.update(day_counts(s))
            last, done = record.id, done + 1
        execute_many(conn, writes)
    # a rejected link was suggested by an older decision than the newest: find the one that suggested it
    for repo, number, target in conn.execute(
            "SELECT DISTINCT f.repo, f.number, f.target FROM feedback f WHERE f.kind = 'not-duplicate'"
            " AND f.target IS NOT NULL AND NOT EXISTS (SELECT 1 FROM candidate_links l WHERE l.repo = f.repo"
            " AND l.number = f.number AND l.target = f.target)").fetchall():
        for (plan_text,) in conn.execute(f"SELECT plan FROM decisions WHERE repo = {ph} AND number = {ph}"
                                         " ORDER BY id DESC", (repo, number)).fetchall():
            try:
                plan = json.loads(plan_text)
            except ValueError:
                continue
            found = [(t, rule) for t, rule in candidate_links(DecisionRecord(0, None, repo, number, "", "", plan,
                                                                            False, 0.0)) if t == target]
            if found:
                conn.execute(f"INSERT INTO candidate_links (repo, number, target, rule) VALUES ({ph}, {ph}, {ph},"
                             f" {ph}) ON CONFLICT (repo, number, target) DO NOTHING", (repo, number, *found[0]))
                break
    for sql, params in counter_writes(ph, {k: v for k, v in totals.items() if v}) + day_writes(ph, day_totals):
        conn.execute(sql, params)
    conn.execute(f"INSERT INTO dashboard_meta (key, value) VALUES ({ph}, {ph})",
                 ("low_confidence", repr(low_confidence)))
    return done


def _dicts(cursor: Any) -> list[dict[str, Any]]:
    names = [c[0] for c in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def backfill_disagreement(conn: Any, ph: str) -> None:
    """Fill disagreement_counts from the feedback and removed labels already recorded (the data migration that adds
    it), on a synchronous connection inside the migration's transaction."""
    suppressed, not_duplicate, labels_removed, confirmed = disagreement_sql()
    d = disagreement(_dicts(conn.execute(suppressed)), _dicts(conn.execute(not_duplicate)),
                     _dicts(conn.execute(labels_removed)), _dicts(conn.execute(confirmed))[0]["n"])
    for sql, params in disagreement_writes(ph, Disagreement(), d):
        conn.execute(sql, params)
