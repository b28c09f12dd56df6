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


def pp_report(number: int, version: str, *, traceback: bool = True) -> dict:
    """A bug report (a GitHub issue object) whose root cause is the SupportsPP error of the test releases, at
    `version`: with its traceback, or quoting only the message in the title."""
    env = f"### Your current environment\n\n```text\nvLLM Version                 : {version}\n```\n\n"
    bug = "### 🐛 Describe the bug\n\nvllm serve some/model --pipeline-parallel-size 2 fails at start-up.\n"
    if traceback:
        bug += ("\n```text\nTraceback (most recent call last):\n"
                "  File \"/usr/lib/python3.12/site-packages/vllm/engine.py\", line 11, in start_engine\n"
                "    core = make_core(config)\n"
                f"NotImplementedError: {PP}\n```\n")
    title = f"[Bug]: pipeline parallel start-up fails on {version}" if traceback else f"[Bug]: {PP}"
    return {"number": number, "title": title, "body": env + bug, "state": "open",
            "created_at": "2026-06-01T10:00:00Z", "updated_at": "2026-06-01T10:00:00Z", "comments": 0,
            "user": {"login": "reporter"}, "labels": []}
