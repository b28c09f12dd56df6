"""Duplicate detection: error signatures + field-weighted BM25 over the whole issue history.

`DuplicateIndex` is what the pipeline and the replay use (`add` / `search`); the store behind it is in memory
(`MemoryIndexStore`, the default) or durable (bot/stores/dupes: an SQLite file, or Postgres for several replicas).
"""

from __future__ import annotations

from bot.dupes.index import DuplicateIndex, Scored
from bot.dupes.store import IndexStore, MemoryIndexStore, StoredIssue

__all__ = ["DuplicateIndex", "IndexStore", "MemoryIndexStore", "Scored", "StoredIssue"]
