"""The source index's durable backends: releases built, raise sites with a line per release, module texts.

Its contract (`SourceStore`, `BuiltRelease`) is in the core, bot/sources/store.py; the index it loads is
bot/sources/index.py's `SourceIndex`.

    sqlite.py     `SqliteSourceStore`: `<data dir>/sources/index.sqlite3` (one replica, the CLI)
    postgres.py   `PostgresSourceStore`: tables in DATABASE_URL shared by every replica (the `postgres` extra)

The data is derived from the indexed packages' own source (vLLM: Apache-2.0), built on the user's machine by
`vllm-triage sources build`; none of it is in the repository.
"""

from __future__ import annotations

from pathlib import Path

from bot.sources.index import SourceIndex
from bot.sources.store import SourceStore
from bot.stores.database import is_postgres, require_postgres_driver
from bot.stores.sources.sqlite import SqliteSourceStore, index_file


def open_source_store(database_url: str | None, data_dir: Path | str) -> SourceStore:
    """The Postgres tables when DATABASE_URL names Postgres, else the SQLite file under the data dir."""
    if database_url and is_postgres(database_url):
        require_postgres_driver()
        from bot.stores.sources.postgres import PostgresSourceStore

        return PostgresSourceStore(database_url)
    return SqliteSourceStore(index_file(data_dir))


def has_index(database_url: str | None, data_dir: Path | str) -> bool:
    """Whether a source index may exist (without creating one)."""
    if database_url and is_postgres(database_url):
        return True
    return index_file(data_dir).exists()


def load_index(database_url: str | None, data_dir: Path | str, package: str = "vllm") -> SourceIndex | None:
    """The package's index from the store DATABASE_URL or the data dir names, prepared for matching; None when no
    release of it is built (nothing is created)."""
    if not has_index(database_url, data_dir):
        return None
    store = open_source_store(database_url, data_dir)
    try:
        return load_from(store, package)
    finally:
        store.close()


def load_from(store: SourceStore, package: str = "vllm") -> SourceIndex | None:
    index = store.load(package)
    if not index.releases:
        return None
    index.prepare()
    return index
