"""The two test releases (releases.py) read from sdists the tests write, stored and loaded as a SourceIndex: the
small index the triage, comment, rules and App tests run against."""

from __future__ import annotations

from pathlib import Path

from bot.sources.index import SourceIndex
from bot.stores.sources.sqlite import SqliteSourceStore

from .releases import read_releases


def fill_store(store, directory: Path, versions: list[str] | None = None):
    """Every test release (or `versions`) read from its sdist into `store`; returns the store."""
    for build in read_releases(directory, versions):
        store.add_release(build)
    return store


def small_store(path: Path | str, directory: Path, versions: list[str] | None = None) -> SqliteSourceStore:
    return fill_store(SqliteSourceStore(path), directory, versions)


def small_index(directory: Path, versions: list[str] | None = None) -> SourceIndex:
    store = small_store(":memory:", directory, versions)
    try:
        return store.load("vllm")
    finally:
        store.close()
