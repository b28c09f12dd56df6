"""The SQLite store: idempotent delivery recording, leases, per-issue serialisation, parking, migrations."""

from __future__ import annotations

import sqlite3

import pytest

from bot.app.store import DONE, MIGRATIONS, PARKED, QUEUED, RUNNING, IssueState, SqliteStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def store(tmp_path):
    clock = Clock()
    s = SqliteStore(tmp_path / "db.sqlite3", clock=clock)
    s.clock = clock
    await s.migrate()
    yield s
    await s.close()


async def put(store, delivery_id, number=1, repo="o/r", event="issues"):
    return await store.record_delivery(delivery_id, event, "opened", repo, number, 7, '{"action": "opened"}')


async def test_redelivery_of_done_is_ignored_but_parked_is_requeued(store):
    assert await put(store, "a") == "queued"
    assert await put(store, "a") == "duplicate"  # still queued: nothing to do
    d = await store.claim("w1", 30, 5)
    assert d.id == "a" and d.attempts == 1
    assert await put(store, "a") == "duplicate"  # running
    assert await store.complete("a", "w1")
    assert await put(store, "a") == "duplicate"  # done: must not act twice
    assert (await store.delivery("a")).status == DONE

    await put(store, "b")
    d = await store.claim("w1", 30, 5)
    await store.park("b", "w1", "boom")
    assert (await store.delivery("b")).status == PARKED
    assert await put(store, "b") == "requeued"
    again = await store.delivery("b")
    assert again.status == QUEUED and again.attempts == 0


async def test_per_issue_serialisation_and_lease_expiry(store):
    await put(store, "a", number=1)
    store.clock.now += 1
    await put(store, "b", number=1)
    store.clock.now += 1
    await put(store, "c", number=2)
    first = await store.claim("w1", 30, 5)
    second = await store.claim("w2", 30, 5)
    assert (first.id, second.id) == ("a", "c")  # b waits: issue 1 is in flight
    assert await store.claim("w3", 30, 5) is None
    store.clock.now += 31  # w1 died: its lease ran out
    again = await store.claim("w3", 30, 5)
    assert again.id == "a" and again.attempts == 2
    assert not await store.complete("a", "w1")  # the dead worker's late answer is fenced off
    assert await store.complete("a", "w3")
    # w2's lease on c ran out too: dead workers' deliveries go first, then the queue in arrival order
    assert [(await store.claim("w3", 30, 5)).id for _ in range(2)] == ["c", "b"]


async def test_retry_waits_and_parks_after_max_attempts(store):
    await put(store, "a")
    d = await store.claim("w", 30, 2)
    await store.retry(d.id, "w", "503", store.clock.now + 10)
    assert await store.claim("w", 30, 2) is None
    store.clock.now += 11
    d = await store.claim("w", 30, 2)
    assert d.attempts == 2
    await store.retry(d.id, "w", "503 again", store.clock.now)
    assert await store.claim("w", 30, 2) is None  # used up: parked, not handed out
    parked = await store.delivery("a")
    assert parked.status == PARKED and "503 again" in parked.last_error
    assert (await store.delivery_counts())[PARKED] == 1


async def test_rate_limit_retry_does_not_count_an_attempt(store):
    await put(store, "a")
    d = await store.claim("w", 30, 1)
    await store.retry(d.id, "w", "429", store.clock.now, count_attempt=False)
    d = await store.claim("w", 30, 1)
    assert d is not None and d.attempts == 1 and d.status == RUNNING


async def test_state_survives_reopening(tmp_path):
    path = tmp_path / "db.sqlite3"
    s = SqliteStore(path)
    await s.migrate()
    await put(s, "a")
    await s.save_issue_state(IssueState("o/r", 1, labels_added=["bug"], labels_suppressed=["rocm"], comment_id=9))
    await s.add_feedback("o/r", 1, "not-duplicate", 3, "alice", "d1")
    await s.add_feedback("o/r", 1, "not-duplicate", 3, "alice", "d1")  # the same delivery again
    await s.upsert_installation(5, "org", "Organization", ["org/a"])
    await s.upsert_installation(5, None, None, add_repos=["org/b"], remove_repos=["org/a"])
    await s.close()
    s = SqliteStore(path)
    assert await s.migrate() == len(MIGRATIONS)
    state = await s.issue_state("o/r", 1)
    assert state.labels_added == ["bug"] and state.labels_suppressed == ["rocm"] and state.comment_id == 9
    assert len(await s.feedback("o/r", 1)) == 1
    [inst] = await s.installations()
    assert inst["repos"] == ["org/b"] and inst["account"] == "org"
    assert (await s.delivery("a")).status == QUEUED
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    await s.close()
