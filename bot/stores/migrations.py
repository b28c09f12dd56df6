"""The one way a store's schema changes: numbered migrations per store and backend, a version recorded per store.

Each backend module of a store (bot/stores/<store>/sqlite.py, …/postgres.py) holds `MIGRATIONS`, a tuple of SQL
scripts: entry i is version i + 1. To change a schema, append an entry to both backends; never edit, reorder or
remove one. An entry may also be a function of the connection (a data migration: filling a new table from the
old ones), run in the same transaction as the scripts around it. The table `store_versions` (store, version) in
the database or file that holds a store's tables records the version its schema is at; migrating applies the
entries after it, in one transaction, then records the new version. On Postgres an advisory lock makes replicas
that start together apply each entry once.

A schema made before `store_versions` existed is recognised by the store's `adopt` function (its version then),
read once when the store has no row yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

MIGRATION_LOCK = 0x76_74_72_69_61_67_65  # "vtriage": the Postgres advisory lock key held while migrating
Connection = Any                         # an sqlite3.Connection (autocommit) or a psycopg.Connection
Adopt = Callable[[Connection], int]      # the version of a schema that predates store_versions (0: none)
Migration = str | Callable[[Connection], None]   # SQL statements, or a data migration run on the connection


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer vllm-triage than this one."""


def statements(script: str) -> list[str]:
    """The statements of a migration script (`--` comment lines dropped, split on `;`)."""
    lines = [line for line in script.splitlines() if not line.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def _apply(conn: Connection, ph: str, store: str, migrations: Sequence[Migration], adopt: Adopt | None,
           clock: Callable[[], float]) -> int:
    row = conn.execute(f"SELECT version FROM store_versions WHERE store = {ph}", (store,)).fetchone()
    version = row[0] if row is not None else (adopt(conn) if adopt is not None else 0)
    if version > len(migrations):
        raise SchemaTooNew(f"the {store} store's schema is at version {version}, newer than this vllm-triage "
                           f"knows ({len(migrations)}): upgrade vllm-triage")
    for script in migrations[version:]:
        if callable(script):
            script(conn)
            continue
        for statement in statements(script):
            conn.execute(statement)
    if row is None or version < len(migrations):
        conn.execute(f"INSERT INTO store_versions (store, version, migrated_at) VALUES ({ph}, {ph}, {ph})"
                     " ON CONFLICT (store) DO UPDATE SET version = excluded.version,"
                     " migrated_at = excluded.migrated_at", (store, len(migrations), clock()))
    return len(migrations)


def migrate_sqlite(db: Connection, store: str, migrations: Sequence[Migration], *, adopt: Adopt | None = None,
                   clock: Callable[[], float] = time.time) -> int:
    """Bring `store`'s tables in the SQLite database `db` (opened with isolation_level=None) to the newest version;
    returns that version."""
    if sqlite_table_exists(db, "store_versions"):  # up to date: no write lock (intake processes open it too)
        row = db.execute("SELECT version FROM store_versions WHERE store = ?", (store,)).fetchone()
        if row is not None and row[0] == len(migrations):
            return row[0]
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("CREATE TABLE IF NOT EXISTS store_versions"
                   " (store TEXT PRIMARY KEY, version INTEGER NOT NULL, migrated_at REAL NOT NULL)")
        version = _apply(db, "?", store, migrations, adopt, clock)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return version


def sqlite_table_exists(db: Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def migrate_postgres(url: str, store: str, migrations: Sequence[Migration], *, adopt: Adopt | None = None,
                     clock: Callable[[], float] = time.time) -> int:
    """Bring `store`'s tables in the Postgres database at `url` to the newest version (one transaction, under
    the migration lock); returns that version."""
    import psycopg  # bot/stores/database.require_postgres_driver was called by whoever opened the store

    with psycopg.connect(url) as conn:  # one transaction, committed on leaving the block
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS store_versions"
                     " (store TEXT PRIMARY KEY, version INTEGER NOT NULL, migrated_at DOUBLE PRECISION NOT NULL)")
        return _apply(conn, "%s", store, migrations, adopt, clock)


def postgres_table_exists(conn: Connection, name: str) -> bool:
    """Whether `name` is a table on the connection's search_path."""
    return conn.execute("SELECT to_regclass(%s)", (name,)).fetchone()[0] is not None
