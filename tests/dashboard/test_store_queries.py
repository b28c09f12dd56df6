"""The store's dashboard reads: newest decision per issue, all feedback, all issue states, an issue's deliveries."""

from __future__ import annotations

import json

from bot.app.store import IssueState, SqliteStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


async def make_store(tmp_path) -> SqliteStore:
    store = SqliteStore(tmp_path / "s.sqlite3", clock=Clock())
    await store.migrate()
    return store


async def test_latest_decision_per_issue(tmp_path):
    store = await make_store(tmp_path)
    await store.record_decision("d1", "o/r", 1, "dry-run", "issues.opened", {"v": 1}, False)
    await store.record_decision("d2", "o/r", 2, "dry-run", "issues.opened", {"v": 1}, False)
    await store.record_decision("d3", "o/r", 1, "dry-run", "issues.edited", {"v": 2}, False)
    await store.record_decision("d4", "o/other", 1, "live", "issues.opened", {"v": 3}, True)
    latest = await store.latest_decisions()
    assert [(d.repo, d.number, d.plan["v"]) for d in latest] == [("o/other", 1, 3), ("o/r", 1, 2), ("o/r", 2, 1)]
    assert [(d.number, d.plan["v"]) for d in await store.latest_decisions("o/r")] == [(1, 2), (2, 1)]
    cutoff = latest[1].created_at
    assert [d.delivery_id for d in await store.latest_decisions(since=cutoff)] == ["d4", "d3"]
    assert len(await store.latest_decisions(limit=1)) == 1
    await store.close()


async def test_feedback_states_and_deliveries(tmp_path):
    store = await make_store(tmp_path)
    await store.add_feedback("o/r", 5, "not-duplicate", 3, "alice", "x1")
    await store.add_feedback("o/q", 6, "suppress-rule:some-rule", None, "bob", "x2")
    assert [(f["repo"], f["kind"]) for f in await store.all_feedback()] == [
        ("o/r", "not-duplicate"), ("o/q", "suppress-rule:some-rule")]
    assert [f["number"] for f in await store.all_feedback("o/q")] == [6]

    await store.save_issue_state(IssueState("o/r", 5, labels_added=["rocm"], labels_suppressed=["memory"]))
    states = await store.issue_states()
    assert [(s.number, s.labels_suppressed) for s in states] == [(5, ["memory"])]
    assert await store.issue_states("o/q") == []

    for i, number in enumerate((5, 5, 7)):
        await store.record_delivery(f"del{i}", "issues", "opened", "o/r", number, None,
                                    json.dumps({"issue": {"number": number}}))
    assert [d.id for d in await store.issue_deliveries("o/r", 5)] == ["del1", "del0"]
    assert await store.issue_deliveries("o/r", 99) == []
    await store.close()


async def test_dashboard_reads_only_new_decisions_between_requests(tmp_path):
    from bot.app.settings import Settings
    from bot.dashboard.routes import Dashboard
    from bot.dashboard.settings import DashboardSettings

    store = await make_store(tmp_path)
    dash = Dashboard(DashboardSettings(), Settings())
    await store.record_decision("d1", "o/r", 1, "dry-run", "issues.opened", {"v": 1}, False)
    await store.record_decision("d2", "o/r", 2, "dry-run", "issues.opened", {"v": 1}, False)
    assert [(r.number, r.plan["v"]) for r in await dash.latest(store)] == [(2, 1), (1, 1)]
    await store.record_decision("d3", "o/r", 1, "dry-run", "issues.edited", {"v": 2}, False)
    calls = []
    original = store.latest_decisions

    async def spy(*args, **kwargs):
        calls.append(kwargs.get("since"))
        return await original(*args, **kwargs)

    store.latest_decisions = spy
    assert [(r.number, r.plan["v"]) for r in await dash.latest(store)] == [(1, 2), (2, 1)]
    assert calls and calls[0] is not None          # an incremental read, not the whole table
    await store.close()
