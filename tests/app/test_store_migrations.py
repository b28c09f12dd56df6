"""One way of migrating every store: numbered migrations per store and backend, a version per store in
`store_versions`. Databases made before it (the App's `schema_migrations`, the duplicate index's `meta` table)
are recognised at their version and migrate forward with their data; `vllm-triage migrate` migrates them all."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys

import pytest

from bot.dupes import DuplicateIndex, StoredIssue
from bot.stores.database import MissingDriver
from bot.stores.deliveries import QUEUED, IssueState, SqliteDeliveryStore, open_delivery_store
from bot.stores.deliveries import sqlite as deliveries_sqlite
from bot.stores.dupes import sqlite as dupes_sqlite
from bot.stores.dupes.sqlite import SqliteIndexStore
from bot.stores.migrations import SchemaTooNew, statements

from .pg import pg_url  # noqa: F401 - fixture

DELIVERY = ("d1", "issues", "opened", "o/r", 5, 7, '{"action": "opened"}', 1000.0)


def versions(db) -> dict[str, int]:
    return dict(db.execute("SELECT store, version FROM store_versions").fetchall())


# -- SQLite: the delivery store ----------------------------------------------------------------------------------

def legacy_sqlite_app_db(path, upto: int) -> None:
    """An App database as vllm-triage made it before store_versions: migrations 1..upto, recorded in
    schema_migrations (the same numbers as today's MIGRATIONS), with a delivery and an issue's state in it."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
    for version, script in enumerate(deliveries_sqlite.MIGRATIONS[:upto], start=1):
        for statement in statements(script):
            db.execute(statement)
        db.execute("INSERT INTO schema_migrations VALUES (?, 0)", (version,))
    db.execute("INSERT INTO deliveries (id, event, action, repo, issue_number, installation_id, payload,"
               " received_at, status, not_before) VALUES (?,?,?,?,?,?,?,?,'queued',0)", DELIVERY)
    db.execute("INSERT INTO issue_state (repo, number, labels_added, updated_at) VALUES ('o/r', 5, '[\"bug\"]', 1)")
    db.close()


@pytest.mark.parametrize("upto", [4, 6])
async def test_a_sqlite_app_database_from_before_store_versions_migrates_forward(tmp_path, upto):
    path = tmp_path / "old.sqlite3"
    legacy_sqlite_app_db(path, upto)
    store = SqliteDeliveryStore(path)
    assert await store.migrate() == len(deliveries_sqlite.MIGRATIONS)
    assert versions(store._db) == {"deliveries": len(deliveries_sqlite.MIGRATIONS)}
    assert (await store.delivery("d1")).status == QUEUED
    state = await store.issue_state("o/r", 5)
    assert state.labels_added == ["bug"] and state.comment_posted_at is None  # migration 6 ran when it was missing
    await store.save_issue_state(IssueState("o/r", 5, comment_posted_at=12.5))
    assert (await store.issue_state("o/r", 5)).comment_posted_at == 12.5
    await store.close()


async def test_a_new_sqlite_database_is_recorded_per_store_and_reopening_applies_nothing(tmp_path):
    path = tmp_path / "new.sqlite3"
    store = SqliteDeliveryStore(path)
    await store.migrate()
    await store.close()
    store = SqliteDeliveryStore(path)
    statements_run: list[str] = []
    store._db.set_trace_callback(statements_run.append)
    await store.migrate()
    assert not any(s.startswith(("CREATE", "ALTER", "BEGIN", "INSERT")) for s in statements_run)
    assert versions(store._db) == {"deliveries": len(deliveries_sqlite.MIGRATIONS)}
    assert not store._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
    await store.close()


async def test_a_database_from_a_newer_vllm_triage_is_refused(tmp_path):
    path = tmp_path / "newer.sqlite3"
    store = SqliteDeliveryStore(path)
    await store.migrate()
    store._db.execute("UPDATE store_versions SET version = version + 1")
    with pytest.raises(SchemaTooNew, match="upgrade vllm-triage"):
        await store.migrate()
    await store.close()


# -- SQLite: the duplicate index --------------------------------------------------------------------------------

def legacy_index_file(path, schema: str = "2") -> None:
    """A duplicate index file as made before store_versions: its schema in a `meta` table, one issue in it."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema', ?)", (schema,))
    for statement in statements(dupes_sqlite.MIGRATIONS[0]):
        db.execute(statement)
    db.execute("INSERT INTO issues VALUES (1, 'CUDA OOM', 'open', NULL, '2025-01-01', NULL, ?, '{}', ?)",
               (json.dumps({"oom": 0.5}), json.dumps(["sig:oom"])))
    db.execute("INSERT INTO terms VALUES ('oom', 1)")
    db.execute("INSERT INTO postings VALUES ('oom', 1, 0.5)")
    db.execute("INSERT INTO keys VALUES ('sig:oom', 1)")
    db.close()


def test_a_duplicate_index_file_from_before_store_versions_opens_with_its_issues(tmp_path):
    path = tmp_path / "o__r.sqlite3"
    legacy_index_file(path)
    store = SqliteIndexStore(path)
    assert store.count() == 1 and store.numbers_by_key(["sig:oom"]) == {"sig:oom": [1]}
    store.put(StoredIssue(2, "another OOM", vector={"oom": 0.25}, keys=("sig:oom",)))
    assert store.df(["oom"]) == {"oom": 2}
    assert versions(store._db) == {"dupes": len(dupes_sqlite.MIGRATIONS)}
    store.close()


def test_a_duplicate_index_file_of_an_unknown_schema_asks_for_a_rebuild(tmp_path):
    path = tmp_path / "old.sqlite3"
    legacy_index_file(path, schema="1")
    with pytest.raises(ValueError, match="rebuild it"):
        SqliteIndexStore(path)


def test_vllm_triage_migrate_migrates_every_store_of_an_sqlite_deployment(tmp_path):
    legacy_sqlite_app_db(tmp_path / "bot.sqlite3", 4)
    (tmp_path / "dupes").mkdir()
    legacy_index_file(tmp_path / "dupes" / "o__r.sqlite3")
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'bot.sqlite3'}", "VLLM_TRIAGE_DATA_DIR": str(tmp_path),
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "bot", "migrate"], env=env, capture_output=True, text=True,
                          check=True)
    assert done.stdout.splitlines() == [
        f"deliveries: schema at version {len(deliveries_sqlite.MIGRATIONS)} (sqlite)",
        f"dupes: schema at version 1 ({tmp_path / 'dupes' / 'o__r.sqlite3'})"]
    db = sqlite3.connect(tmp_path / "dupes" / "o__r.sqlite3")
    assert versions(db) == {"dupes": 1} and db.execute("SELECT count(*) FROM issues").fetchone() == (1,)


# -- Postgres ---------------------------------------------------------------------------------------------------

def legacy_postgres_schema(url: str, upto: int) -> None:
    """The App's Postgres schema before store_versions: one list in schema_migrations, where entries 1-4 and 6
    made the delivery store's tables and entry 5 the duplicate index's; a delivery and an indexed issue in it."""
    import psycopg

    from bot.stores.deliveries import postgres as deliveries_pg
    from bot.stores.dupes import postgres as dupes_pg

    legacy = [*deliveries_pg.MIGRATIONS[:4], dupes_pg.MIGRATIONS[0], deliveries_pg.MIGRATIONS[4]]
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION)")
        for version, script in enumerate(legacy[:upto], start=1):
            for statement in statements(script):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (%s, 0)", (version,))
        conn.execute("INSERT INTO deliveries (id, event, action, repo, issue_number, installation_id, payload,"
                     " received_at, status, not_before) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,'queued',0)", DELIVERY)
        if upto >= 5:
            conn.execute("INSERT INTO dupe_issues VALUES ('o/r', 1, 'CUDA OOM', 'open', NULL, '2025-01-01', NULL,"
                         " '{\"oom\": 0.5}', '{}', '[\"sig:oom\"]')")
            conn.execute("INSERT INTO dupe_keys VALUES ('o/r', 'sig:oom', 1)")


@pytest.mark.parametrize("upto", [5, 6])
def test_a_postgres_schema_from_before_store_versions_migrates_forward(pg_url, upto):  # noqa: F811
    import psycopg

    from bot.stores.deliveries import postgres as deliveries_pg
    from bot.stores.dupes import postgres as dupes_pg
    from bot.stores.registry import migrate_all
    from bot.stores.sources import postgres as sources_pg

    legacy_postgres_schema(pg_url, upto)
    assert migrate_all(pg_url, "unused") == [("deliveries", "postgresql", len(deliveries_pg.MIGRATIONS)),
                                              ("dupes", "postgresql", len(dupes_pg.MIGRATIONS)),
                                              ("sources", "postgresql", len(sources_pg.MIGRATIONS))]
    with psycopg.connect(pg_url) as conn:
        assert versions(conn) == {"deliveries": len(deliveries_pg.MIGRATIONS), "dupes": len(dupes_pg.MIGRATIONS),
                                  "sources": len(sources_pg.MIGRATIONS)}

    async def read() -> None:
        store = open_delivery_store(pg_url)
        await store.migrate()
        assert (await store.delivery("d1")).status == QUEUED
        await store.save_issue_state(IssueState("o/r", 5, comment_posted_at=3.5))  # the column of entry 6
        assert (await store.issue_state("o/r", 5)).comment_posted_at == 3.5
        await store.close()

    asyncio.run(read())
    index = DuplicateIndex(dupes_pg.PostgresIndexes(pg_url).store("o/r"))
    assert index.store.numbers_by_key(["sig:oom"]) == {"sig:oom": [1]}
    index.close()


def test_a_new_postgres_schema_gets_each_store_from_its_own_migrations(pg_url):  # noqa: F811
    import psycopg

    from bot.stores.dupes import postgres as dupes_pg

    async def deliveries() -> None:
        store = open_delivery_store(pg_url)
        await store.migrate()
        await store.close()

    asyncio.run(deliveries())
    with psycopg.connect(pg_url) as conn:
        assert set(versions(conn)) == {"deliveries"}
        assert conn.execute("SELECT to_regclass('dupe_issues')").fetchone()[0] is None
    dupes_pg.migrate(pg_url)
    dupes_pg.migrate(pg_url)  # again: nothing to apply
    with psycopg.connect(pg_url) as conn:
        assert set(versions(conn)) == {"deliveries", "dupes"}
        assert conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None


# -- the Postgres driver is an optional extra ---------------------------------------------------------------------

def test_postgres_without_psycopg_is_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` now raises ImportError
    with pytest.raises(MissingDriver, match=r"psycopg is not installed: pip install 'vllm-triage\[postgres\]'"):
        open_delivery_store("postgresql://u:p@127.0.0.1:1/db")
    from bot.stores.dupes import open_repo_index

    with pytest.raises(MissingDriver):
        open_repo_index("postgresql://u:p@127.0.0.1:1/db", tmp_path, "o/r")


def test_the_cli_says_in_one_line_that_the_postgres_extra_is_missing(tmp_path):
    for command in ("migrate", "serve"):
        done = subprocess.run(
            [sys.executable, "-c", "import sys; sys.modules['psycopg'] = None; from bot.cli import main; "
             f"sys.exit(main(['{command}']))"],
            env={"DATABASE_URL": "postgresql://u:p@127.0.0.1:1/db", "PATH": "/usr/bin:/bin",
                 "GITHUB_WEBHOOK_SECRET": "s", "VLLM_TRIAGE_DATA_DIR": str(tmp_path)},
            capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.strip().splitlines() == [
            f"vllm-triage {command}: DATABASE_URL is postgresql:// but psycopg is not installed: "
            "pip install 'vllm-triage[postgres]'"]
