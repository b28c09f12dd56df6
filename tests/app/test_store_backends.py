"""The store contract, run against both backends: SQLite, and PostgreSQL when TEST_DATABASE_URL is set (.ci/run
starts a server and sets it). Idempotent delivery recording, leases, per-issue serialisation, parking,
migrations, state that survives a reconnect, the dashboard reads, and several "replicas" (store instances
on one database) claiming concurrently."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3

import pytest

from bot.stores.deliveries import DONE, PARKED, QUEUED, RUNNING, IssueState, SqliteDeliveryStore, open_delivery_store
from bot.stores.deliveries.sqlite import MIGRATIONS

from .pg import pg_url  # noqa: F401 - fixture


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db.sqlite3'}"
    return request.getfixturevalue("pg_url")


def make_store(url: str, clock=None):
    store = open_delivery_store(url)
    if clock is not None:
        store._clock = clock
    return store


@pytest.fixture
async def store(database_url):
    clock = Clock()
    s = make_store(database_url, clock)
    s.clock = clock
    await s.migrate()
    yield s
    await s.close()


async def put(store, delivery_id, number=1, repo="o/r", event="issues"):
    return await store.record_delivery(delivery_id, event, "opened", repo, number, 7, '{"action": "opened"}')


def test_open_store_picks_the_backend_from_the_url(tmp_path):
    assert isinstance(open_delivery_store(f"sqlite:///{tmp_path / 'x.sqlite3'}"), SqliteDeliveryStore)
    from bot.stores.deliveries.postgres import PostgresDeliveryStore

    # no connection until migrate
    assert isinstance(open_delivery_store("postgresql://u:p@127.0.0.1:1/db"), PostgresDeliveryStore)
    with pytest.raises(ValueError, match="DATABASE_URL"):
        open_delivery_store("mysql://u@h/db")


async def test_redelivery_of_done_is_ignored_but_parked_is_requeued(store):
    assert await put(store, "a") == "queued"
    assert await put(store, "a") == "duplicate"  # still queued: nothing to do
    d = await store.claim("w1", 30, 5)
    assert d.id == "a" and d.attempts == 1 and d.data() == {"action": "opened"} and d.claimed_by == "w1"
    assert await put(store, "a") == "duplicate"  # running
    assert await store.complete("a", "w1")
    assert await put(store, "a") == "duplicate"  # done: must not act twice
    assert (await store.delivery("a")).status == DONE

    await put(store, "b")
    await store.claim("w1", 30, 5)
    await store.park("b", "w1", "boom")
    assert (await store.delivery("b")).status == PARKED
    assert await put(store, "b") == "requeued"
    again = await store.delivery("b")
    assert again.status == QUEUED and again.attempts == 0


async def test_a_burst_of_deliveries_is_recorded_once_each_and_durably(store, database_url):
    """300 deliveries at once, a third of them redelivered within the same burst: each id is queued exactly
    once, every repeat is a duplicate, and all of them are on disk when the callers get their answer."""
    ids = [f"burst-{i}" for i in range(300)] + [f"burst-{i}" for i in range(0, 300, 3)]
    random.Random(7).shuffle(ids)
    outcomes = await asyncio.gather(*(put(store, d, number=i % 40) for i, d in enumerate(ids)))
    seen: dict[str, list[str]] = {}
    for delivery_id, outcome in zip(ids, outcomes, strict=True):
        seen.setdefault(delivery_id, []).append(outcome)
    assert len(seen) == 300
    assert all(o.count("queued") == 1 and o.count("duplicate") == len(o) - 1 for o in seen.values())
    other = make_store(database_url)  # a second connection sees what was acknowledged
    await other.migrate()
    try:
        assert (await other.delivery_counts())[QUEUED] == 300
    finally:
        await other.close()


async def test_sqlite_commits_a_burst_together(tmp_path):
    s = SqliteDeliveryStore(tmp_path / "db.sqlite3")
    await s.migrate()
    commits = []
    s._db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    assert await asyncio.gather(*(put(s, f"d{i}", number=i) for i in range(100))) == ["queued"] * 100
    assert 1 <= len(commits) < 10  # one turn of the event loop: one transaction, not one per delivery
    await s.close()


async def test_sqlite_one_failing_delivery_does_not_fail_the_rest_of_its_burst(tmp_path, monkeypatch):
    s = SqliteDeliveryStore(tmp_path / "db.sqlite3")
    await s.migrate()
    record_one = s._record_one

    def flaky(delivery_id, *rest):
        if delivery_id == "bad":
            raise sqlite3.OperationalError("disk I/O error")
        return record_one(delivery_id, *rest)

    monkeypatch.setattr(s, "_record_one", flaky)
    outcomes = await asyncio.gather(*(put(s, d, number=i) for i, d in enumerate(["a", "bad", "c"])),
                                    return_exceptions=True)
    assert outcomes[0] == outcomes[2] == "queued"
    assert isinstance(outcomes[1], sqlite3.OperationalError)  # the server answers 500: GitHub redelivers it
    assert (await s.delivery("a")).status == QUEUED and await s.delivery("bad") is None
    await s.close()


async def test_sqlite_intake_waits_for_another_process_lock_without_blocking_the_loop(tmp_path):
    s = SqliteDeliveryStore(tmp_path / "db.sqlite3")
    await s.migrate()
    other = sqlite3.connect(tmp_path / "db.sqlite3", isolation_level=None)  # another intake process, say
    other.execute("BEGIN IMMEDIATE")
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    clock = asyncio.create_task(ticker())
    recording = asyncio.create_task(put(s, "while-locked"))
    await asyncio.sleep(0.3)
    assert not recording.done() and ticks >= 10  # waiting, and the event loop kept running meanwhile
    other.execute("COMMIT")
    assert await recording == "queued"
    clock.cancel()
    other.close()
    await s.close()


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
    assert await store.complete("c", "w2")
    store.clock.now += 31  # w1 died: its lease ran out
    again = await store.claim("w3", 30, 5)
    assert again.id == "a" and again.attempts == 2
    assert await store.claim("w4", 30, 5) is None  # a is in flight again: b still waits
    assert not await store.complete("a", "w1")  # the dead worker's late answer is fenced off
    assert not await store.renew("a", "w1", 30)
    assert await store.complete("a", "w3")
    assert (await store.claim("w3", 30, 5)).id == "b"


async def test_dead_workers_deliveries_go_first_then_the_queue_in_arrival_order(store):
    await put(store, "a", number=1)
    store.clock.now += 1
    await put(store, "b", number=1)
    store.clock.now += 1
    await put(store, "c", number=2)
    assert (await store.claim("w1", 30, 5)).id == "a"
    store.clock.now += 1
    assert (await store.claim("w2", 30, 5)).id == "c"
    store.clock.now += 31  # both workers died: their leases ran out
    assert (await store.claim("w3", 30, 5)).id == "a"
    assert await store.complete("a", "w3")
    # c (a dead worker's, received after b) is claimed before b (queued)
    assert [(await store.claim("w3", 30, 5)).id for _ in range(2)] == ["c", "b"]


async def test_renewed_lease_keeps_the_issue(store):
    await put(store, "a", number=1)
    store.clock.now += 1
    await put(store, "b", number=1)
    assert (await store.claim("w1", 30, 5)).id == "a"
    store.clock.now += 20
    assert await store.renew("a", "w1", 30)
    store.clock.now += 20  # past the first lease, within the renewed one
    assert await store.claim("w2", 30, 5) is None


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


async def test_a_waiting_retry_does_not_block_other_issues(store):
    await put(store, "a", number=1)
    store.clock.now += 1
    await put(store, "b", number=2)
    d = await store.claim("w", 30, 5)
    await store.retry(d.id, "w", "503", store.clock.now + 100)
    assert (await store.claim("w", 30, 5)).id == "b"


async def test_rate_limit_retry_does_not_count_an_attempt(store):
    await put(store, "a")
    d = await store.claim("w", 30, 1)
    await store.retry(d.id, "w", "429", store.clock.now, count_attempt=False)
    d = await store.claim("w", 30, 1)
    assert d is not None and d.attempts == 1 and d.status == RUNNING


async def test_deliveries_without_an_issue_run_side_by_side(store):
    for name in ("i1", "i2"):
        await store.record_delivery(name, "installation", "created", None, None, 7, "{}")
    assert {(await store.claim("w1", 30, 5)).id, (await store.claim("w2", 30, 5)).id} == {"i1", "i2"}


async def test_decisions_feedback_installations_config_errors(store):
    await store.record_decision("d1", "o/r", 1, "dry-run", "opened", {"labels": ["bug"]}, applied=False)
    store.clock.now += 1
    await store.record_decision("d2", "o/r", 2, "live", "opened", {"labels": []}, applied=True)
    store.clock.now += 1
    await store.record_decision("d3", "o/r", 1, "live", "edited", {"labels": ["rocm"]}, applied=True)
    latest = await store.decisions()
    assert [d.delivery_id for d in latest] == ["d3", "d2", "d1"] and latest[0].applied and not latest[2].applied
    assert [d.plan for d in await store.decisions("o/r", 1)] == [{"labels": ["rocm"]}, {"labels": ["bug"]}]
    assert [(await store.issue_summary("o/r", n)).decision_id for n in (1, 2)] == [latest[0].id, latest[1].id]
    await store.add_feedback("o/r", 1, "suppress-rule:x", None, "alice", "d9")
    await store.add_feedback("o/q", 4, "not-duplicate", 2, "bob", "d8")
    assert [f["kind"] for f in await store.feedback("o/r", 1)] == ["suppress-rule:x"]
    assert [f["target"] for f in await store.feedback("o/q", 4)] == [2]
    await store.set_config_errors("o/r", ["labels.map: not a mapping"])
    assert await store.config_errors() == {"o/r": ["labels.map: not a mapping"]}
    await store.set_config_errors("o/r", [])
    assert await store.config_errors() == {}
    await store.upsert_installation(5, "org", "Organization", ["org/a"], suspended=True)
    [inst] = await store.installations()
    assert inst["suspended"] is True and inst["deleted"] is False and inst["repos"] == ["org/a"]
    for name in ("x", "y", "z"):
        store.clock.now += 1
        await put(store, name, number=ord(name))
    store.clock.now += 1
    await put(store, "x2", number=ord("x"))
    assert [d.id for d in await store.deliveries(limit=2)] == ["x2", "z"]
    assert [d.id for d in await store.deliveries(QUEUED)] == ["x2", "z", "y", "x"]
    assert [d.id for d in await store.issue_deliveries("o/r", ord("x"))] == ["x2", "x"]
    assert await store.delivery("nope") is None
    await store.save_issue_state(IssueState("o/r", 5, labels_added=["rocm"]))
    await store.save_issue_state(IssueState("o/q", 6, comment_id=2**40))  # GitHub ids outgrow 32 bits
    assert (await store.issue_state("o/r", 5)).labels_added == ["rocm"]
    assert (await store.issue_state("o/q", 6)).comment_id == 2**40


async def test_the_error_pages_read_the_latest_decision_per_issue(store):
    await store.record_decision("d1", "o/r", 1, "dry-run", "issues.opened", {"v": 1}, False)
    store.clock.now += 1
    await store.record_decision("d2", "o/r", 2, "dry-run", "issues.opened", {"v": 1}, False)
    store.clock.now += 1
    await store.record_decision("d3", "o/r", 1, "dry-run", "issues.edited", {"v": 2}, False)
    store.clock.now += 1
    await store.record_decision("d4", "o/other", 1, "live", "issues.opened", {"v": 3}, True)
    latest = await store.latest_decisions()
    assert [(d.repo, d.number, d.plan["v"]) for d in latest] == [("o/other", 1, 3), ("o/r", 1, 2), ("o/r", 2, 1)]
    assert [(d.number, d.plan["v"]) for d in await store.latest_decisions("o/r")] == [(1, 2), (2, 1)]
    cutoff = latest[1].created_at
    assert [d.delivery_id for d in await store.latest_decisions(since=cutoff)] == ["d4", "d3"]
    assert len(await store.latest_decisions(limit=1)) == 1


async def test_the_dashboard_reads_an_issues_deliveries(store):
    for i, number in enumerate((5, 5, 7)):
        store.clock.now += 1
        await store.record_delivery(f"del{i}", "issues", "opened", "o/r", number, None,
                                    json.dumps({"issue": {"number": number}}))
    assert [d.id for d in await store.issue_deliveries("o/r", 5)] == ["del1", "del0"]
    assert await store.issue_deliveries("o/r", 99) == []


async def test_state_survives_reopening(database_url):
    s = make_store(database_url)
    versions = await s.migrate()
    if isinstance(s, SqliteDeliveryStore):
        assert versions == len(MIGRATIONS)
    else:
        from bot.stores.deliveries.postgres import MIGRATIONS as PG_MIGRATIONS

        assert versions == len(PG_MIGRATIONS)
    await put(s, "a")
    await s.save_issue_state(IssueState("o/r", 1, labels_added=["bug"], labels_suppressed=["rocm"], comment_id=9,
                                        last_decision={"labels": ["bug"]}, comment_posted_at=1234.5))
    await s.add_feedback("o/r", 1, "not-duplicate", 3, "alice", "d1")
    await s.add_feedback("o/r", 1, "not-duplicate", 3, "alice", "d1")  # the same delivery again
    await s.upsert_installation(5, "org", "Organization", ["org/a"])
    await s.upsert_installation(5, None, None, add_repos=["org/b"], remove_repos=["org/a"])
    await s.close()
    s = make_store(database_url)
    assert await s.migrate() == versions  # nothing left to apply
    state = await s.issue_state("o/r", 1)
    assert state.labels_added == ["bug"] and state.labels_suppressed == ["rocm"] and state.comment_id == 9
    assert state.last_decision == {"labels": ["bug"]} and state.comment_posted_at == 1234.5
    assert await s.issue_state("o/r", 2) is None
    assert len(await s.feedback("o/r", 1)) == 1
    [inst] = await s.installations()
    assert inst["repos"] == ["org/b"] and inst["account"] == "org"
    assert (await s.delivery("a")).status == QUEUED
    if isinstance(s, SqliteDeliveryStore):
        assert sqlite3.connect(s.path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    await s.close()


async def test_postgres_connections_the_server_dropped_are_replaced(pg_url):  # noqa: F811 - fixture
    """A Postgres restart or an idle timeout kills the pool's connections; the next call still works."""
    import psycopg

    s = make_store(pg_url + "&application_name=vllm-triage-dropped")
    await s.migrate()
    assert await put(s, "before") == "queued"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        killed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                               " WHERE application_name = 'vllm-triage-dropped'").fetchone()[0]
    assert killed >= 1
    try:
        assert await put(s, "after") == "queued"
        assert (await s.delivery_counts())[QUEUED] == 2
    finally:
        await s.close()


async def test_replicas_migrating_at_once_apply_each_migration_once(database_url):
    stores = [make_store(database_url) for _ in range(3)]
    try:
        versions = await asyncio.gather(*(s.migrate() for s in stores))
        assert len(set(versions)) == 1 and versions[0] >= 4
        assert await put(stores[0], "a") == "queued"
        assert await put(stores[1], "a") == "duplicate"
    finally:
        for s in stores:
            await s.close()


async def test_three_replicas_claiming_concurrently(database_url):
    """Three store instances on one database, four claim loops each: every delivery is done exactly once, and
    no two deliveries of one issue are ever in flight at the same time."""
    stores = [make_store(database_url) for _ in range(3)]
    for s in stores:
        await s.migrate()
    rng = random.Random(3)
    ids = [f"d{i}" for i in range(150)]
    for i, delivery_id in enumerate(ids):
        await put(stores[i % 3], delivery_id, number=rng.randint(1, 12))
    running: dict[int, str] = {}
    done: list[str] = []
    overlaps: list[tuple[int, str, str]] = []

    async def loop(store, worker: str) -> None:
        idle = 0
        while idle < 3:
            d = await store.claim(worker, 30, 5)
            if d is None:
                idle += 1
                await asyncio.sleep(0.01)
                continue
            idle = 0
            if d.issue_number in running:
                overlaps.append((d.issue_number, running[d.issue_number], d.id))
            running[d.issue_number] = d.id
            await asyncio.sleep(rng.random() * 0.003)
            del running[d.issue_number]
            assert await store.complete(d.id, worker)
            done.append(d.id)

    try:
        await asyncio.gather(*(loop(s, f"r{r}:{w}") for r, s in enumerate(stores) for w in range(4)))
        assert not overlaps
        assert sorted(done) == sorted(ids)
        assert (await stores[0].delivery_counts())[DONE] == len(ids)
    finally:
        for s in stores:
            await s.close()


def test_settings_accept_sqlite_and_postgres_urls_only():
    from bot.app.settings import SettingsError, from_env

    env = {"HOST": "127.0.0.1"}
    for url in ("sqlite:///var/x.sqlite3", "postgresql://triage:pw@db:5432/triage", "postgres://db/triage"):
        settings = from_env({**env, "DATABASE_URL": url}, insecure_no_secret=True)
        settings.check()
        assert settings.uses_postgres == url.startswith("postgres")
    with pytest.raises(SettingsError, match="DATABASE_URL"):
        from_env({**env, "DATABASE_URL": "mysql://db/triage"}, insecure_no_secret=True).check()
