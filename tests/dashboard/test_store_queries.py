"""The dashboard reads only the decisions made since its last request (the store's dashboard reads themselves are
in tests/app/test_store_backends.py, run on SQLite and Postgres)."""

from __future__ import annotations

from bot.stores.deliveries import SqliteDeliveryStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        self.now += 1
        return self.now


async def make_store(tmp_path) -> SqliteDeliveryStore:
    store = SqliteDeliveryStore(tmp_path / "s.sqlite3", clock=Clock())
    await store.migrate()
    return store


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
