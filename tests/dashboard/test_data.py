"""The dashboard's aggregations over store records: rows, top causes, rule precision, the queue."""

from __future__ import annotations

from bot.dashboard import data
from bot.rules import load_rules
from bot.stores.deliveries import DecisionRecord, Delivery, IssueState

NOW = 1_800_000_000.0
DAY = data.DAY


def iso(ts: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def record(number: int, *, days_ago: float = 1, findings=(), candidates=(), needs_info=(), labels=(), kind="bug",
           error=None, signature=None, reason="issues.opened", repo="o/r", rid: int | None = None) -> DecisionRecord:
    decision = {
        "labels": list(labels), "findings": [f[0] for f in findings], "needs_info": list(needs_info),
        "duplicates": [c["number"] for c in candidates], "comment": "c", "kind": kind, "title": f"issue {number}",
        "error": {"type": error[0], "message": error[1]} if error else None,
        "signature": {"key": signature, "text": f"text of {signature}"} if signature else None,
        "diagnoses": [{"rule": r, "title": f"title {r}", "confidence": c, "labels": list(lb), "evidence": []}
                      for r, c, lb in findings],
        "candidates": list(candidates),
    }
    opened = NOW - days_ago * DAY
    plan = {"add_labels": list(labels), "decision": decision,
            "issue": {"title": f"issue {number}", "created_at": iso(opened), "url": None, "labels": []}}
    return DecisionRecord(id=rid or number, delivery_id=f"d{number}", repo=repo, number=number, mode="dry-run",
                          reason=reason, plan=plan, applied=False, created_at=NOW)


def test_issue_row_reads_new_and_old_records():
    row = data.issue_row(record(7, findings=[("r1", 0.9, ("memory",))], error=("ValueError", "boom")))
    assert row.title == "issue 7" and row.findings[0].rule == "r1" and row.findings[0].labels == ("memory",)
    assert row.error == "ValueError: boom" and abs(row.opened - (NOW - DAY)) < 1
    rules = load_rules()
    some = rules.rules[0]
    old = DecisionRecord(1, None, "o/r", 3, "live", "issues.opened",
                         {"decision": {"labels": ["x"], "findings": [some.id], "duplicates": [9]}}, True, NOW)
    row = data.issue_row(old, rules, IssueState("o/r", 3, state="closed"))
    assert row.findings[0].title == some.title and row.findings[0].confidence == some.confidence
    assert row.candidates == ({"number": 9, "score": None, "reason": ""},)
    assert row.state == "closed" and row.opened == NOW and row.title == "#3"


def test_top_causes_group_by_rule_then_signature_within_the_window():
    rows = data.issue_rows([
        record(1, days_ago=1, findings=[("oom", 0.9, ())]),
        record(2, days_ago=2, findings=[("oom", 0.9, ())], signature="msg:a"),
        record(3, days_ago=3, signature="msg:a"),
        record(4, days_ago=4, signature="msg:a"),
        record(5, days_ago=20, signature="msg:b"),
        record(6, days_ago=1),                          # nothing to group by
    ], None)
    week = data.top_causes(rows, NOW, 7)
    assert [(c.key, c.count) for c in week] == [("rule:oom", 2), ("sig:msg:a", 2)]
    assert [r.number for r in week[0].issues] == [1, 2]
    month = data.top_causes(rows, NOW, 30)
    assert [(c.key, c.count) for c in month] == [("rule:oom", 2), ("sig:msg:a", 2), ("sig:msg:b", 1)]


def test_rule_stats_count_disagreement():
    rows = data.issue_rows([
        record(1, findings=[("oom", 0.9, ("memory",))], labels=["memory"]),
        record(2, findings=[("oom", 0.9, ("memory",))], labels=["memory"]),
        record(3, findings=[("pp", 0.9, ("pipeline-parallel",))]),
        record(4, findings=[("pp", 0.9, ("pipeline-parallel",))]),
    ], None)
    states = [IssueState("o/r", 1, labels_suppressed=["memory"]), IssueState("o/r", 3, labels_suppressed=["rocm"])]
    feedback = [
        {"repo": "o/r", "number": 3, "kind": "suppress-rule:pp", "target": None},
        {"repo": "o/r", "number": 3, "kind": "suppress-rule:pp", "target": None},   # twice counts once
        {"repo": "o/r", "number": 4, "kind": "not-duplicate", "target": 3},
        {"repo": "o/r", "number": 2, "kind": "not-duplicate", "target": 1},
    ]
    reasons = {("o/r", 4, 3): "same error: X; same diagnosis: pp; similar wording (50%)"}
    stats = {s.rule: s for s in data.rule_stats(rows, states, feedback, None, reasons)}
    assert (stats["oom"].hits, stats["oom"].label_removed, stats["oom"].precision) == (2, 1, 0.5)
    assert (stats["pp"].hits, stats["pp"].suppressed, stats["pp"].not_duplicate, stats["pp"].precision) == (2, 1, 1, 0)
    assert stats[data.NO_RULE].not_duplicate == 1 and stats[data.NO_RULE].precision is None
    assert data.same_diagnosis("same diagnosis: kv-cache-too-small; similar") == "kv-cache-too-small"
    assert data.same_diagnosis("similar wording (80%)") is None


def test_a_suppressed_rule_keeps_its_hit():
    # the dashboard re-triages an issue without the rule it suppressed: the newest decision no longer names it
    rows = data.issue_rows([record(1, findings=[]), record(2, findings=[("pp", 0.9, ())])], None)
    feedback = [{"repo": "o/r", "number": 1, "kind": "suppress-rule:oom", "target": None}]
    stats = {s.rule: s for s in data.rule_stats(rows, [], feedback, None)}
    assert (stats["oom"].hits, stats["oom"].suppressed, stats["oom"].precision) == (1, 1, 0.0)
    assert stats["pp"].precision == 1.0


def test_duplicate_stats_include_rejected_links():
    rows = data.issue_rows([record(2, candidates=[{"number": 1, "score": 0.9, "reason": ""}])], None)
    fb = [{"repo": "o/r", "number": 3, "kind": "not-duplicate", "target": 1},
          {"repo": "o/r", "number": 2, "kind": "duplicate", "target": 1}]
    assert data.duplicate_stats(rows, fb) == data.DuplicateStat(issues_with_links=2, links=2, rejected=1, confirmed=1)


def test_queue_reasons_filters_and_sorting():
    rows = data.issue_rows([
        record(1, days_ago=1, error=("ValueError", "x")),                       # no diagnosis
        record(2, days_ago=2, findings=[("r", 0.9, ())], needs_info=["environment"], labels=["needs-info"]),
        record(3, days_ago=3, findings=[("weak", 0.4, ())], labels=["memory"]),  # low confidence
        record(4, days_ago=4, findings=[("r", 0.9, ())], reason="issues.opened (failed: HTTP 502)"),
        record(5, days_ago=5, findings=[("r", 0.9, ())]),                         # parked below
        record(6, days_ago=6, kind="feature"),                                    # nothing to diagnose: not queued
        record(7, days_ago=7, findings=[("r", 0.9, ())]),                         # fine
        record(8, days_ago=8, error=("E", "x"), repo="o/broken"),
        record(9, days_ago=1, error=("E", "x")),                                  # closed: not queued
    ], None, [IssueState("o/r", 9, state="closed")])
    parked = [Delivery("p", "issues", "opened", "o/r", 5, None, "{}", NOW, "parked", 8, "boom")]
    config = {"o/broken": ["labels: not a list"]}

    def q(**kw):
        return [(i.row.number, i.reasons) for i in data.build_queue(rows, parked, config, 0.7,
                                                                      data.QueueFilter(**kw), NOW)]

    assert q(sort="newest") == [(1, ("no diagnosis",)), (2, ("needs info",)), (3, ("low confidence",)),
                                (4, ("failed to apply",)), (5, ("parked delivery",)),
                                (8, ("no diagnosis", "config error"))]
    assert [n for n, _ in q(sort="oldest")] == [8, 5, 4, 3, 2, 1]
    assert [n for n, _ in q(sort="repo")][0] == 8
    assert [n for n, _ in q(repo="o/broken")] == [8]
    assert [n for n, _ in q(label="memory")] == [3]
    assert [n for n, _ in q(reason="needs info")] == [2]
    assert [n for n, _ in q(max_age_days=2.5)] == [1, 2]


def test_queue_puts_what_a_maintainer_can_act_on_first():
    rows = data.issue_rows([
        record(1, days_ago=1, findings=[("r", 0.9, ())], needs_info=["environment"]),   # waiting on the reporter
        record(2, days_ago=2, error=("E", "x"), needs_info=["environment"]),             # no diagnosis, details missing
        record(3, days_ago=3, needs_info=["version"]),                                   # the same
        record(4, days_ago=4, error=("ValueError", "x")),                                # an error nobody diagnosed
        record(5, days_ago=5, findings=[("weak", 0.4, ())], needs_info=["environment"]), # a diagnosis to confirm
        record(6, days_ago=9, findings=[("r", 0.9, ())], reason="issues.opened (failed: HTTP 502)"),
        record(7, days_ago=0.5, findings=[("r", 0.9, ())], needs_info=["command"]),      # newest, still waiting
    ], None)
    items = data.build_queue(rows, [], {}, 0.7, data.QueueFilter(), NOW)
    assert [i.row.number for i in items] == [6, 5, 4, 2, 3, 7, 1]
    assert [i.priority for i in items] == [0, 1, 2, 3, 3, 4, 4]
    assert items[0].priority_name == data.PRIORITIES[0][0] == "the bot could not act"
    assert data.QueueFilter().sort == "priority"


def test_charts_and_anchor():
    rows = data.issue_rows([record(1, days_ago=0.1, labels=["memory"]), record(2, days_ago=0.2, labels=["memory"]),
                            record(3, days_ago=3, labels=["rocm"]), record(4, days_ago=40)], None)
    charts = data.chart_data(rows, NOW, days=30)
    assert len(charts["days"]) == 30 and sum(charts["triaged"]) == 3 and charts["triaged"][-1] >= 1
    assert [s["label"] for s in charts["labels"]] == ["memory", "rocm"]
    assert data.anchor_time(rows, NOW) == NOW
    old = data.issue_rows([record(4, days_ago=40), record(5, days_ago=45)], None)
    assert abs(data.anchor_time(old, NOW) - (NOW - 40 * DAY)) < 1
    assert data.anchor_time([], NOW) == NOW
