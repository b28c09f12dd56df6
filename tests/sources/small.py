"""The two test releases (releases.py) read from sdists the tests write, stored and loaded as a SourceIndex: the
small index the triage, comment, rules and App tests run against."""

from __future__ import annotations

from pathlib import Path

from bot.sources.build import read_release
from bot.sources.index import SourceIndex
from bot.sources.sdists import Sdist
from bot.stores.sources.sqlite import SqliteSourceStore

from .releases import RELEASES, write_sdist


def fill_store(store, directory: Path, versions: list[str] | None = None):
    """Every test release (or `versions`) read from its sdist into `store`; returns the store."""
    directory.mkdir(parents=True, exist_ok=True)
    for version in versions or list(RELEASES):
        archive = write_sdist(directory, version)
        store.add_release(read_release("vllm", Sdist("vllm", version, archive.name, archive.as_uri()), archive))
    return store


def small_store(path: Path | str, directory: Path, versions: list[str] | None = None) -> SqliteSourceStore:
    return fill_store(SqliteSourceStore(path), directory, versions)


def small_index(directory: Path, versions: list[str] | None = None) -> SourceIndex:
    store = small_store(":memory:", directory, versions)
    try:
        return store.load("vllm")
    finally:
        store.close()
