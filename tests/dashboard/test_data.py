"""What the pages compute from the store's read model: charts and top causes over the issues of a window, rule
precision from the counters and maintainers' disagreement, and the issue page's rows from decision records."""

from __future__ import annotations

from collections import Counter

from bot.dashboard import data
from bot.rules import load_rules
from bot.stores.deliveries import DecisionRecord, IssueState
from bot.stores.deliveries.summary import Disagreement, IssueSummary, day_counts

NOW = 1_800_000_000.0
DAY = data.DAY


def summary(number: int, *, days_ago: float = 1, rules=(), labels=(), signature=None) -> IssueSummary:
    return IssueSummary(repo="o/r", number=number, decision_id=number, title=f"issue {number}", url=None,
                        opened=NOW - days_ago * DAY, triaged=NOW, labels=tuple(labels), rules=tuple(rules),
                        top_title=f"title {rules[0]}" if rules else None, signature_key=signature,
                        signature_text=f"text of {signature}" if signature else None)


def test_issue_row_reads_new_and_old_records():
    rec = DecisionRecord(7, "d7", "o/r", 7, "dry-run", "issues.opened", {"decision": {
        "diagnoses": [{"rule": "r1", "title": "t", "confidence": 0.9, "labels": ["memory"]}],
        "error": {"type": "ValueError", "message": "boom"}},
        "issue": {"title": "issue 7", "created_at": "2027-01-14T08:00:00Z"}}, False, NOW)
    row = data.issue_row(rec)
    assert row.title == "issue 7" and row.findings[0].rule == "r1" and row.findings[0].labels == ("memory",)
    assert row.error == "ValueError: boom" and row.opened < NOW
    rules = load_rules()
    some = rules.rules[0]
    old = DecisionRecord(1, None, "o/r", 3, "live", "issues.opened",
                         {"decision": {"labels": ["x"], "findings": [some.id], "duplicates": [9]}}, True, NOW)
    row = data.issue_row(old, rules, IssueState("o/r", 3, state="closed"))
    assert row.findings[0].title == some.title and row.findings[0].confidence == some.confidence
    assert row.candidates == ({"number": 9, "score": None, "reason": ""},)
    assert row.state == "closed" and row.opened == NOW and row.title == "#3"


def day_rows(rows: list[IssueSummary]) -> list[tuple[int, str, int]]:
    """The store's per-day counters of these issues."""
    total: Counter = Counter()
    for row in rows:
        total.update(day_counts(row))
    return [(day, name, n) for (day, name), n in total.items()]


def test_top_causes_group_by_rule_then_signature_within_the_window():
    rows = [summary(1, days_ago=1, rules=["oom"]), summary(2, days_ago=2, rules=["oom"], signature="msg:a"),
            summary(3, days_ago=3, signature="msg:a"), summary(4, days_ago=4, signature="msg:a"),
            summary(5, days_ago=20, signature="msg:b"), summary(6, days_ago=1)]
    days = day_rows(rows)
    week = data.ranked_causes(days, NOW, 7)
    assert [(c.key, c.count, c.rule) for c in week] == [("rule:oom", 2, "oom"), ("sig:msg:a", 2, None)]
    month = data.ranked_causes(days, NOW, 30)
    assert [(c.key, c.count) for c in month] == [("rule:oom", 2), ("sig:msg:a", 2), ("sig:msg:b", 1)]
    assert [(c.key, c.count) for c in data.ranked_causes(days, NOW, 30, limit=1)] == [("rule:oom", 2)]
    shown = data.with_issues(week, [[rows[0], rows[1]], []])
    assert [(c.key, c.title, [r.number for r in c.issues], c.last) for c in shown] == [
        ("rule:oom", "title oom", [1, 2], rows[0].opened)]      # a cause with no issue left is not shown
    sig = data.with_issues(month[1:2], [[rows[2]]])
    assert (sig[0].kind, sig[0].title) == ("signature", "text of msg:a")


def test_rule_stats_count_hits_and_disagreement():
    counts = {"issues": 9, "rule:oom": 2, "rule:pp": 2, "label:memory": 2}
    d = Disagreement(label_removed=Counter({"oom": 1}), suppressed=Counter({"pp": 1, "gone": 1}),
                     suppressed_gone=Counter({"gone": 1}), not_duplicate=Counter({"pp": 1, data.NO_RULE: 1}))
    stats = {s.rule: s for s in data.rule_stats(counts, d, None)}
    assert (stats["oom"].hits, stats["oom"].label_removed, stats["oom"].precision) == (2, 1, 0.5)
    assert (stats["pp"].hits, stats["pp"].suppressed, stats["pp"].not_duplicate, stats["pp"].precision) == (2, 1, 1, 0)
    # suppressed on its only hit: the issue was triaged again without it, and the hit still counts
    assert (stats["gone"].hits, stats["gone"].precision) == (1, 0.0)
    assert stats[data.NO_RULE].not_duplicate == 1 and stats[data.NO_RULE].precision is None
    assert data.rule_hits(counts) == {"oom": 2, "pp": 2}
    assert data.same_diagnosis("same diagnosis: kv-cache-too-small; similar") == "kv-cache-too-small"
    assert data.same_diagnosis("similar wording (80%)") is None


def test_duplicate_stats_include_rejected_links():
    d = Disagreement(rejected=2, rejected_issues_without_links=1, confirmed=1)
    assert data.duplicate_stats({"candidates": 3, "with_candidates": 2}, d) == data.DuplicateStat(
        issues_with_links=3, links=5, rejected=2, confirmed=1)


def test_charts_and_anchor():
    rows = [summary(1, days_ago=0.1, labels=["memory"]), summary(2, days_ago=0.2, labels=["memory"]),
            summary(3, days_ago=3, labels=["rocm"]), summary(4, days_ago=40)]
    charts = data.chart_data(day_rows(rows), NOW, days=30)
    assert len(charts["days"]) == 30 and sum(charts["triaged"]) == 3 and charts["triaged"][-1] >= 1
    assert [s["label"] for s in charts["labels"]] == ["memory", "rocm"]
    assert data.anchor_time(NOW - DAY, NOW) == NOW
    assert data.anchor_time(NOW - 40 * DAY, NOW) == NOW - 40 * DAY
    assert data.anchor_time(None, NOW) == NOW
