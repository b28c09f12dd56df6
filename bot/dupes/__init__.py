"""Duplicate detection: error signatures + field-weighted BM25 over the whole issue history.

`DuplicateIndex` is what the pipeline and the replay use (`add` / `search`); the store behind it is
in memory (`MemoryStore`, the default) or an SQLite file (`SqliteStore`, `DuplicateIndex.open(path)`).
"""

from __future__ import annotations

from bot.dupes.index import DuplicateIndex, Scored
from bot.dupes.store import MemoryStore, SqliteStore, Store, StoredIssue

__all__ = ["DuplicateIndex", "MemoryStore", "Scored", "SqliteStore", "Store", "StoredIssue"]
