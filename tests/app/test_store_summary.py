"""The dashboard's read model in the delivery store (bot/stores/deliveries/summary.py), on SQLite and Postgres:
each issue's summary follows its newest decision and its state, the queue is ordered and filtered in SQL, parking
a delivery and changing the low-confidence threshold move issues, maintainers' disagreement is read from the few
rows that record it, and the counters always equal a recount of the rows."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from bot.stores.deliveries import IssueState, open_delivery_store
from bot.stores.deliveries.summary import QueueQuery, counts, day_counts, opened_day, summary_from_row

from .pg import pg_url  # noqa: F401 - fixture

DAY = 86400.0
NOW = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgres"], name="store")
async def delivery_store(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    s = open_delivery_store(url)
    s._clock = Clock()
    await s.migrate()
    s.test_url = url
    yield s
    await s.close()


def iso(ts: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def plan(number: int, *, days_ago: float = 1, findings=(), needs_info=(), labels=(), kind="bug", error=None,
         candidates=(), repo_labels=(), signature=None) -> dict:
    return {"add_labels": list(labels), "decision": {
        "labels": list(labels), "findings": [r for r, _, _ in findings], "needs_info": list(needs_info),
        "kind": kind, "title": f"issue {number}", "comment": None,
        "error": {"type": error[0], "message": error[1]} if error else None,
        "signature": {"key": signature, "text": f"text of {signature}"} if signature else None,
        "diagnoses": [{"rule": r, "title": f"title {r}", "confidence": c, "labels": list(lb), "evidence": []}
                      for r, c, lb in findings],
        "candidates": [{"number": n, "score": 0.9, "reason": reason} for n, reason in candidates]},
        "issue": {"title": f"issue {number}", "created_at": iso(NOW - days_ago * DAY), "url": None,
                  "labels": list(repo_labels)}}


async def decide(store, number: int, reason: str = "issues.opened", repo: str = "o/r", **kw) -> None:
    await store.record_decision(f"d{number}-{random.random()}", repo, number, "dry-run", reason, plan(number, **kw),
                                False)


async def select(store, sql: str) -> list:
    return store._db.execute(sql).fetchall() if hasattr(store, "_db") else await store._fetch(sql)


async def recount(store) -> dict[str, int]:
    """The counters computed from scratch from every summary row."""
    total: Counter[str] = Counter()
    for r in await select(store, "SELECT * FROM issue_summary"):
        total.update(counts(summary_from_row(r)))
    return {k: v for k, v in total.items() if v}


async def recount_days(store) -> dict[tuple[int, str], int]:
    total: Counter[tuple[int, str]] = Counter()
    for r in await select(store, "SELECT * FROM issue_summary"):
        total.update(day_counts(summary_from_row(r)))
    return {k: v for k, v in total.items() if v}


async def day_counters(store) -> dict[tuple[int, str], int]:
    return {(r["day"], r["name"]): r["n"] for r in await select(store, "SELECT * FROM dashboard_days WHERE n <> 0")}


async def test_a_summary_follows_the_newest_decision_and_the_issue_state(store):
    await decide(store, 1, error=("ValueError", "boom"))
    s = await store.issue_summary("o/r", 1)
    assert (s.title, s.error, s.reasons, s.queue_tier, s.state) == (
        "issue 1", "ValueError: boom", ("no diagnosis",), 2, "open")
    assert abs(s.opened - (NOW - DAY)) < 1
    store._clock.now += 1
    await decide(store, 1, findings=[("oom", 0.9, ("memory",))], labels=["memory"], reason="issues.edited")
    s = await store.issue_summary("o/r", 1)
    assert (s.rules, s.top_title, s.reasons, s.queue_tier, s.labels) == (("oom",), "title oom", (), None,
                                                                          ("memory",))
    assert (await store.dashboard_counts())["rule:oom"] == 1
    await store.save_issue_state(IssueState("o/r", 1, state="closed"))
    assert (await store.issue_summary("o/r", 1)).state == "closed"
    counters = await store.dashboard_counts()
    assert counters == await recount(store)
    assert (counters["issues"], counters.get("open", 0), counters["diagnosed"]) == (1, 0, 1)
    # a decision that failed to apply, then the same again applied
    await decide(store, 2, findings=[("pp", 0.9, ())], reason="issues.opened (failed: HTTP 502)")
    assert (await store.issue_summary("o/r", 2)).reasons == ("failed to apply",)
    await decide(store, 2, findings=[("pp", 0.9, ())])
    assert (await store.issue_summary("o/r", 2)).queue_tier is None
    assert await store.dashboard_counts() == await recount(store)
    assert await day_counters(store) == await recount_days(store)


async def test_any_plan_shape_is_summarised(store):
    await store.record_decision("x", "o/r", 7, "dry-run", "issues.opened", {"labels": ["bug"]}, False)
    await store.record_decision("y", "o/r", 8, "live", "issues.opened",
                                {"decision": {"findings": ["old-rule"], "labels": ["rocm"]}}, True)
    assert (await store.issue_summary("o/r", 7)).title == "#7"
    old = await store.issue_summary("o/r", 8)
    assert old.rules == ("old-rule",) and old.labels == ("rocm",) and old.max_confidence is None
    assert await store.dashboard_counts() == await recount(store)
    assert await day_counters(store) == await recount_days(store)


async def fill_queue(store) -> None:
    await decide(store, 1, days_ago=1, findings=[("r", 0.9, ())], needs_info=["environment"])   # 4 waiting
    await decide(store, 2, days_ago=2, error=("E", "x"), needs_info=["environment"])            # 3
    await decide(store, 3, days_ago=3, needs_info=["version"], labels=["rocm"])                 # 3
    await decide(store, 4, days_ago=4, error=("ValueError", "x"), repo="o/other")               # 2
    await decide(store, 5, days_ago=5, findings=[("weak", 0.4, ())], needs_info=["environment"])  # 1
    await decide(store, 6, days_ago=9, findings=[("r", 0.9, ())], reason="issues.opened (failed: HTTP 502)")  # 0
    await decide(store, 7, days_ago=0.5, findings=[("r", 0.9, ())], needs_info=["command"])     # 4, newest
    await decide(store, 8, days_ago=0.2, findings=[("r", 0.9, ())])                             # not queued
    await decide(store, 9, days_ago=0.1, kind="feature")                                        # not queued
    await decide(store, 10, days_ago=1, error=("E", "x"))                                       # closed below
    await store.save_issue_state(IssueState("o/r", 10, state="closed"))


async def test_the_queue_puts_what_a_maintainer_can_act_on_first(store):
    await fill_queue(store)
    items, total = await store.queue(QueueQuery())
    assert [s.number for s in items] == [6, 5, 4, 2, 3, 7, 1] and total == 7
    assert [s.queue_tier for s in items] == [0, 1, 2, 3, 3, 4, 4]
    assert items[0].priority_name == "the bot could not act"
    page, total = await store.queue(QueueQuery(limit=3, offset=3))
    assert [s.number for s in page] == [2, 3, 7] and total == 7
    assert [s.number for s in (await store.queue(QueueQuery(sort="newest")))[0]] == [7, 1, 2, 3, 4, 5, 6]
    assert [s.number for s in (await store.queue(QueueQuery(sort="oldest")))[0]] == [6, 5, 4, 3, 2, 1, 7]
    assert [s.number for s in (await store.queue(QueueQuery(sort="repo")))[0]][0] == 4
    assert await store.queue(QueueQuery(repo="o/other")) == ([await store.issue_summary("o/other", 4)], 1)
    assert [s.number for s in (await store.queue(QueueQuery(label="rocm")))[0]] == [3]
    assert [s.number for s in (await store.queue(QueueQuery(reason="low confidence")))[0]] == [5]
    items, total = await store.queue(QueueQuery(reason="needs info", opened_since=NOW - 2.5 * DAY))
    assert [s.number for s in items] == [2, 7, 1] and total == 3
    assert (await store.queue(QueueQuery(label="100%_sure")))[1] == 0   # LIKE's wildcards are taken literally


async def test_parking_a_delivery_puts_its_issue_first(store):
    await fill_queue(store)
    await store.record_delivery("p1", "issues", "edited", "o/r", 1, 7, "{}")
    d = await store.claim("w", 30, 5)
    assert await store.park(d.id, "w", "boom")
    s = await store.issue_summary("o/r", 1)
    assert "parked delivery" in s.reasons and s.queue_tier == 0
    assert [x.number for x in (await store.queue(QueueQuery()))[0]][:2] == [1, 6]
    # a delivery that used up its attempts is parked when claimed again
    await store.record_delivery("p2", "issues", "edited", "o/r", 8, 7, "{}")
    d = await store.claim("w", 30, 1)
    await store.retry(d.id, "w", "again", store._clock.now)
    assert await store.claim("w", 30, 1) is None
    assert (await store.issue_summary("o/r", 8)).queue_tier == 0
    # the next triage of the issue (a redelivery that went through) takes it out
    await store.record_delivery("p1", "issues", "edited", "o/r", 1, 7, "{}")
    d = await store.claim("w", 30, 5)
    await decide(store, 1, findings=[("r", 0.9, ())])
    await store.complete(d.id, "w")
    assert (await store.issue_summary("o/r", 1)).queue_tier is None
    assert await store.dashboard_counts() == await recount(store)
    assert await day_counters(store) == await recount_days(store)


async def test_a_new_low_confidence_threshold_moves_issues(store):
    await fill_queue(store)
    assert await store.set_low_confidence(0.7) == 0          # the threshold the summaries were made with
    assert await store.set_low_confidence(0.95) == 4         # 1, 6, 7 and 8 (0.9) are low now (6 stays first)
    assert (await store.issue_summary("o/r", 8)).reasons == ("low confidence",)
    assert (await store.issue_summary("o/r", 7)).queue_tier == 1
    assert (await store.issue_summary("o/r", 6)).queue_tier == 0
    await decide(store, 11, findings=[("r", 0.9, ())])
    assert (await store.issue_summary("o/r", 11)).queue_tier == 1   # new decisions use the new threshold
    assert await store.dashboard_counts() == await recount(store)
    assert await day_counters(store) == await recount_days(store)
    assert await store.set_low_confidence(0.3) == 6          # and none is, 5 (0.4) included
    assert (await store.issue_summary("o/r", 5)).reasons == ("needs info",)


async def test_disagreement_is_read_from_feedback_and_removed_labels(store):
    await decide(store, 1, findings=[("oom", 0.9, ("memory",))], labels=["memory"])
    await decide(store, 2, findings=[("oom", 0.9, ("memory",))], labels=["memory"],
                 candidates=[(1, "same error: X; same diagnosis: oom; similar wording (50%)")])
    await decide(store, 3, findings=[("pp", 0.9, ())], candidates=[(1, "similar wording (80%)")])
    await decide(store, 4, findings=[])            # triaged again without the rule suppressed below
    await store.save_issue_state(IssueState("o/r", 1, labels_suppressed=["memory"]))
    await store.save_issue_state(IssueState("o/r", 3, labels_suppressed=["rocm"]))
    for repo, number, kind, target, delivery in (
            ("o/r", 3, "suppress-rule:pp", None, "a"), ("o/r", 3, "suppress-rule:pp", None, "b"),
            ("o/r", 4, "suppress-rule:gone", None, "c"), ("o/r", 2, "not-duplicate", 1, "d"),
            ("o/r", 3, "not-duplicate", 1, "e"), ("o/r", 4, "not-duplicate", 9, "f"), ("o/r", 5, "duplicate", 2, "g")):
        await store.add_feedback(repo, number, kind, target, "alice", delivery)
    d = await store.disagreement()
    assert d.label_removed == {"oom": 1}
    assert d.suppressed == {"pp": 1, "gone": 1} and d.suppressed_gone == {"gone": 1}
    assert d.not_duplicate == {"oom": 1, "(duplicate search)": 2}
    assert (d.rejected, d.rejected_issues_without_links, d.confirmed) == (3, 1, 1)


async def test_the_window_and_a_rules_issues_are_read_by_index(store):
    for n, days in ((1, 40), (2, 20), (3, 5), (4, 1)):
        await decide(store, n, days_ago=days, findings=[("oom", 0.9, ())] if n != 2 else [])
    await decide(store, 5, days_ago=5, signature="sig-a")
    await decide(store, 6, days_ago=6, signature="sig-a", findings=[("pp", 0.9, ())])
    today = opened_day(NOW)
    days = await store.days(today - 29, today)
    assert {d: n for d, name, n in days if name == "issues"} == {today - 20: 1, today - 6: 1, today - 5: 2,
                                                                 today - 1: 1}
    assert {(d, name) for d, name, _ in days if name.startswith("cause:")} == {
        (today - 5, "cause:rule:oom"), (today - 1, "cause:rule:oom"), (today - 5, "cause:sig:sig-a"),
        (today - 6, "cause:rule:pp")}
    month = (NOW - 30 * DAY, NOW + 1)
    found = await store.cause_issues([("rule:oom", *month), ("sig:sig-a", *month), ("rule:pp", *month),
                                      ("rule:oom", NOW - 30 * DAY, NOW - 2 * DAY), ("sig:none", *month)], 1)
    assert [[s.number for s in part] for part in found] == [[4], [5], [6], [3], []]
    assert [[s.number for s in part] for part in await store.cause_issues([("rule:oom", *month)])] == [[4, 3]]
    assert await store.cause_issues([]) == []
    assert abs(await store.newest_opened() - (NOW - DAY)) < 1
    assert [s.number for s in await store.rule_issues("oom", 2)] == [4, 3]
    assert await store.rule_issues("nope") == []


async def test_counters_equal_a_recount_after_any_sequence_of_writes(store):
    rng = random.Random(7)
    for step in range(120):
        number = rng.randrange(1, 15)
        what = rng.random()
        store._clock.now += 1
        if what < 0.55:
            rules = rng.sample([("a", 0.9, ("memory",)), ("b", 0.5, ("rocm",)), ("c", 0.8, ())], rng.randrange(0, 3))
            await decide(store, number, findings=rules, labels=sorted({lb for _, _, ls in rules for lb in ls}),
                         needs_info=["environment"] if rng.random() < 0.3 else [],
                         error=("E", "x") if rng.random() < 0.5 else None,
                         candidates=[(rng.randrange(1, 15), "same diagnosis: a")] if rng.random() < 0.3 else [],
                         reason="issues.opened (failed: x)" if rng.random() < 0.1 else "issues.opened")
        elif what < 0.8:
            await store.save_issue_state(IssueState("o/r", number, state=rng.choice(["open", "closed", "deleted"])))
        elif what < 0.95:
            await store.record_delivery(f"del{step}", "issues", "edited", "o/r", number, 7, "{}")
            d = await store.claim("w", 30, 5)
            if d is not None:
                await (store.park(d.id, "w", "x") if rng.random() < 0.5 else store.complete(d.id, "w"))
        else:
            await store.set_low_confidence(rng.choice([0.6, 0.7, 0.85]))
    assert await store.dashboard_counts() == await recount(store)
    assert await day_counters(store) == await recount_days(store)


@pytest.fixture(params=["sqlite", "postgres"])
def old_url(request, tmp_path):
    """A delivery store's database at the schema before the read model, with its SQL connection factory."""
    if request.param == "sqlite":
        import sqlite3

        from bot.stores.deliveries.sqlite import BEFORE_READ_MODEL, MIGRATIONS
        from bot.stores.migrations import migrate_sqlite

        path = tmp_path / "old.sqlite3"
        db = sqlite3.connect(path, isolation_level=None)
        migrate_sqlite(db, "deliveries", MIGRATIONS[:BEFORE_READ_MODEL])
        db.close()
        return f"sqlite:///{path}", lambda: sqlite3.connect(path), "?"
    import psycopg

    from bot.stores.deliveries.postgres import BEFORE_READ_MODEL, MIGRATIONS
    from bot.stores.migrations import migrate_postgres

    url = request.getfixturevalue("pg_url")
    migrate_postgres(url, "deliveries", MIGRATIONS[:BEFORE_READ_MODEL])
    return url, lambda: psycopg.connect(url), "%s"


async def test_the_migration_fills_the_read_model_from_recorded_decisions(old_url):
    import json

    url, connect, ph = old_url
    older = plan(1, findings=[("oom", 0.9, ("memory",))], labels=["memory"], candidates=[(7, "same diagnosis: oom")])
    rows = [  # (number, plan, reason): issue 1 decided twice, the rejected link only in its older decision
        (1, older, "issues.opened"),
        (1, plan(1, findings=[("oom", 0.9, ("memory",))], labels=["memory"]), "issues.edited"),
        (2, plan(2, days_ago=3, error=("ValueError", "x"), signature="sig-v"), "issues.opened (failed: HTTP 502)"),
        (3, plan(3, days_ago=40, needs_info=["environment"], kind="feature"), "issues.opened"),
        (4, plan(4, findings=[("weak", 0.4, ())]), "issues.opened"),
    ]
    with connect() as conn:
        for k, (number, p, reason) in enumerate(rows):
            conn.execute("INSERT INTO decisions (delivery_id, repo, number, mode, reason, plan, applied, created_at)"
                         f" VALUES ({', '.join([ph] * 8)})", (f"d{k}", "o/r", number, "live", reason, json.dumps(p),
                                                             True, NOW + k))
        conn.execute(f"INSERT INTO issue_state (repo, number, labels_suppressed, state, updated_at) VALUES ({ph},"
                     f" {ph}, {ph}, {ph}, {ph})", ("o/r", 3, "[]", "closed", NOW))
        conn.execute(f"INSERT INTO issue_state (repo, number, labels_suppressed, state, updated_at) VALUES ({ph},"
                     f" {ph}, {ph}, {ph}, {ph})", ("o/r", 1, '["memory"]', "open", NOW))
        conn.execute("INSERT INTO feedback (repo, number, kind, target, actor, delivery_id, created_at)"
                     f" VALUES ({', '.join([ph] * 7)})", ("o/r", 1, "not-duplicate", 7, "alice", None, NOW))
        conn.execute("INSERT INTO deliveries (id, event, action, repo, issue_number, issue_key, payload, received_at,"
                     f" status) VALUES ({', '.join([ph] * 9)})",
                     ("p1", "issues", "edited", "o/r", 4, "o/r#4", "{}", NOW, "parked"))
        conn.commit()
    store = open_delivery_store(url)
    await store.migrate()
    try:
        one, two, three, four = [await store.issue_summary("o/r", n) for n in (1, 2, 3, 4)]
        assert (one.rules, one.labels, one.queue_tier, one.decision_id) == (("oom",), ("memory",), None, 2)
        assert (two.reasons, two.queue_tier, two.signature_key) == (("no diagnosis", "failed to apply"), 0, "sig-v")
        assert (three.state, three.reasons) == ("closed", ("needs info",))   # closed: not in the queue below
        assert (four.reasons, four.queue_tier) == (("low confidence", "parked delivery"), 0)
        d = await store.disagreement()
        assert d.not_duplicate == {"oom": 1} and d.label_removed == {"oom": 1}   # the older decision's link
        assert await store.dashboard_counts() == await recount(store)
        assert await day_counters(store) == await recount_days(store)
        items, total = await store.queue(QueueQuery())
        assert [s.number for s in items] == [4, 2] and total == 2   # both tier 0, newest first
    finally:
        await store.close()
