"""The duplicate index's durable backends. Its contract (`IndexStore`, `StoredIssue`) and the in-memory store
are part of the pure core (bot/dupes/store.py); the index itself (scoring, search) is bot/dupes/index.py.

    sqlite.py     `SqliteIndexStore`: one file per repository under the data dir (one replica)
    postgres.py   `PostgresIndexStore`: tables in DATABASE_URL shared by every replica (the `postgres` extra)
"""

from __future__ import annotations

from pathlib import Path

from bot.dupes.index import DuplicateIndex
from bot.dupes.store import MemoryIndexStore
from bot.stores.database import is_postgres, require_postgres_driver
from bot.stores.dupes.sqlite import SqliteIndexStore


def open_index_file(path: str | Path | None) -> DuplicateIndex:
    """An index kept in the SQLite file at `path` (made if missing), or in memory when path is None."""
    if not path:
        return DuplicateIndex(MemoryIndexStore())
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return DuplicateIndex(SqliteIndexStore(path))


def index_path(data_dir: Path | str, repo: str) -> Path:
    """The SQLite file of a repository's index under the data dir."""
    return Path(data_dir) / "dupes" / (repo.replace("/", "__") + ".sqlite3")


def open_repo_index(database_url: str | None, data_dir: Path | str, repo: str) -> DuplicateIndex:
    """A repository's index: in the Postgres database DATABASE_URL names (shared by the replicas), else its file
    under the data dir."""
    if database_url and is_postgres(database_url):
        require_postgres_driver()
        from bot.stores.dupes.postgres import open_postgres_index

        return open_postgres_index(database_url, repo)
    return open_index_file(index_path(data_dir, repo))
