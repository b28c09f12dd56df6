"""A raise-site index for the dashboard tests: the two small releases of tests/sources/releases.py written as sdists,
read and stored in the data directory's SQLite file, as `vllm-triage sources build` would."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sources.releases import line_of  # noqa: E402, F401 - re-exported for the tests
from sources.small import fill_store  # noqa: E402

from bot.sources.index import SourceIndex  # noqa: E402
from bot.stores.sources.sqlite import SqliteSourceStore, index_file  # noqa: E402

PP = ("Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` "
      "interface.")


def build_index(data_dir: Path, work: Path) -> SourceIndex:
    """Build the test releases into `<data_dir>/sources/index.sqlite3`; the index as loaded from it."""
    store = SqliteSourceStore(index_file(data_dir))
    try:
        fill_store(store, work)
        return store.load("vllm")
    finally:
        store.close()


def site_of(index: SourceIndex, file: str, text: str):
    found = [s for s in index.sites.values() if s.file == file and text in s.message]
    assert len(found) == 1, found
    return found[0]
