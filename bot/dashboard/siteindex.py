"""The raise-site index as the dashboard reads it: loaded from its store on first use (in a thread), checked for
newly built releases every few minutes, and the module texts read for excerpts. Nothing is created when the index
was never built: the pages then say how to build it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bot.sources.index import SourceIndex
from bot.sources.model import Site
from bot.sources.store import BuiltRelease, SourceStore
from bot.stores.sources import has_index, open_source_store

PACKAGES = ("vllm", "transformers")   # vLLM first: its sites win a tie
REFRESH_SECONDS = 300.0     # how often a loaded index checks for newly built releases
RETRY_SECONDS = 10.0        # ... and how often, while none is built, the store is looked for
BUILD_COMMAND = "vllm-triage sources build"


@dataclass(frozen=True)
class Loaded:
    """Every indexed package's index (only packages with a release built)."""

    indexes: dict[str, SourceIndex]
    built: dict[str, tuple[BuiltRelease, ...]]
    loaded_at: float = field(default_factory=time.time)

    def site(self, site_id: str) -> tuple[SourceIndex, Site] | None:
        for index in self.indexes.values():
            site = index.sites.get(site_id)
            if site is not None:
                return index, site
        return None

    @property
    def signature(self) -> tuple:
        return tuple((p, r.version, r.built_at) for p, rs in sorted(self.built.items()) for r in rs)


class SiteIndexes:
    def __init__(self, database_url: str | None, data_dir: Path | str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.database_url = database_url
        self.data_dir = data_dir
        self._clock = clock
        self._store: SourceStore | None = None
        self._loaded: Loaded | None = None
        self._checked: float | None = None
        self._lock = asyncio.Lock()
        self._db = threading.Lock()     # one store connection, used from executor threads in turn

    def _open(self) -> SourceStore | None:
        if self._store is None and has_index(self.database_url, self.data_dir):
            self._store = open_source_store(self.database_url, self.data_dir)
        return self._store

    def _built(self) -> dict[str, tuple[BuiltRelease, ...]]:
        with self._db:
            store = self._open()
            if store is None:
                return {}
            out = {p: tuple(store.releases(p)) for p in PACKAGES}
        return {p: rs for p, rs in out.items() if rs}

    def _load(self, built: dict[str, tuple[BuiltRelease, ...]]) -> Loaded | None:
        if not built:
            return None
        with self._db:
            store = self._open()
            assert store is not None
            indexes = {p: store.load(p) for p in PACKAGES if p in built}
        for index in indexes.values():
            index.prepare()
        return Loaded(indexes, built)

    def _refresh(self) -> Loaded | None:
        built = self._built()
        current = self._loaded
        if current is not None and Loaded({}, built).signature == current.signature:
            return current
        return self._load(built)

    def _due(self) -> bool:
        wait = REFRESH_SECONDS if self._loaded is not None else RETRY_SECONDS
        return self._checked is None or self._clock() - self._checked >= wait

    async def get(self) -> Loaded | None:
        """The loaded indexes, None when no release was ever built."""
        if not self._due():
            return self._loaded
        async with self._lock:
            if self._due():
                self._loaded = await asyncio.get_running_loop().run_in_executor(None, self._refresh)
                self._checked = self._clock()
        return self._loaded

    def _source(self, package: str, version: str, path: str) -> str | None:
        with self._db:
            store = self._open()
            return store.source(package, version, path) if store is not None else None

    async def source(self, package: str, version: str, path: str) -> str | None:
        """A module's text at a release, for an excerpt."""
        return await asyncio.get_running_loop().run_in_executor(None, self._source, package, version, path)

    def close(self) -> None:
        with self._db:
            if self._store is not None:
                self._store.close()
                self._store = None
