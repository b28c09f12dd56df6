"""Fixtures shared by the duplicate-index tests."""

from __future__ import annotations

import pytest

from bot.dupes import DuplicateIndex, MemoryIndexStore
from bot.stores.dupes.sqlite import SqliteIndexStore


@pytest.fixture(params=["memory", "sqlite"])
def index(request, tmp_path):
    """An empty duplicate index on each store."""
    store = MemoryIndexStore() if request.param == "memory" else SqliteIndexStore(tmp_path / "dupes.sqlite3")
    idx = DuplicateIndex(store)
    yield idx
    idx.close()
