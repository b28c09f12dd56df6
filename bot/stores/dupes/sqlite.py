"""The duplicate index in one SQLite file per repository (under the data dir), or in memory (":memory:").

The same `IndexStore` contract as bot/dupes/store.py's in-memory store, over four tables. Migrations:
`MIGRATIONS` (bot/stores/migrations.py says how they are applied and recorded).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bot.dupes.store import KEY_LIMIT, Before, StoredIssue
from bot.stores.migrations import migrate_sqlite, sqlite_table_exists

STORE = "dupes"
MIGRATIONS: tuple[str, ...] = (
    # 1: issues, their postings, document frequencies and exact-match keys
    """
    CREATE TABLE issues (
        number INTEGER PRIMARY KEY, title TEXT NOT NULL, state TEXT NOT NULL, url TEXT, created_at TEXT NOT NULL,
        duplicate_of INTEGER, vector TEXT NOT NULL, meta TEXT NOT NULL, keys TEXT NOT NULL);
    CREATE TABLE terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE postings (term TEXT NOT NULL, number INTEGER NOT NULL, w REAL NOT NULL,
        PRIMARY KEY (term, number)) WITHOUT ROWID;
    CREATE TABLE keys (key TEXT NOT NULL, number INTEGER NOT NULL, PRIMARY KEY (key, number)) WITHOUT ROWID;
    """,
)
LEGACY_SCHEMA = "2"  # before store_versions, a `meta` table held the schema: "2" is migration 1's tables


def adopt(db: sqlite3.Connection) -> int:
    """An index file made before store_versions: version 1 if its `meta` table says schema 2."""
    if not sqlite_table_exists(db, "meta"):
        return 0
    row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if row is None or row[0] != LEGACY_SCHEMA:
        raise ValueError(f"duplicate index schema {row[0] if row else None}, expected {LEGACY_SCHEMA}: rebuild it")
    return 1


def migrate(path: str | Path) -> int:
    """Bring the index file at `path` to the newest schema (what `vllm-triage migrate` does for each file)."""
    store = SqliteIndexStore(path)
    store.close()
    return len(MIGRATIONS)


_CHUNK = 500              # host parameters per IN (...) list
_FLUSH_EVERY = 2000       # issues buffered in a batch before they are written


class SqliteIndexStore:
    """One SQLite file (or ":memory:"). Writes inside `batch()` are buffered and written sorted by term."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA cache_size=-65536")   # 64 MiB page cache
        try:
            migrate_sqlite(self._db, STORE, MIGRATIONS, adopt=adopt)
        except ValueError as e:
            self._db.close()
            raise ValueError(f"{self.path}: {e}") from None
        self._count = self._db.execute("SELECT count(*) FROM issues").fetchone()[0]
        self._batching = False
        self._pending: list[StoredIssue] = []
        self._pending_numbers: set[int] = set()

    # -- writes ---------------------------------------------------------------------------------------
    def put(self, issue: StoredIssue) -> None:
        if self._batching:
            if issue.number in self._pending_numbers or self._exists(issue.number):
                self._flush()
                self._write([issue])
                return
            self._pending.append(issue)
            self._pending_numbers.add(issue.number)
            self._count += 1
            if len(self._pending) >= _FLUSH_EVERY:
                self._flush()
            return
        self._db.execute("BEGIN")
        try:
            self._write([issue])
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def _exists(self, number: int) -> bool:
        return self._db.execute("SELECT 1 FROM issues WHERE number=?", (number,)).fetchone() is not None

    def _write(self, issues: list[StoredIssue], fresh: bool = False) -> None:
        """Write issues; `fresh` = known not to be in the table yet (a batch checked on put)."""
        db = self._db
        df: Counter[str] = Counter()
        postings: list[tuple[str, int, float]] = []
        keys: list[tuple[str, int]] = []
        rows = []
        for issue in issues:
            old = None if fresh else db.execute("SELECT vector, keys FROM issues WHERE number=?",
                                                (issue.number,)).fetchone()
            if old is not None:
                self._unindex(issue.number, json.loads(old[0]), json.loads(old[1]))
            elif not self._batching:
                self._count += 1
            number = issue.number
            df.update(issue.vector.keys())
            postings.extend((term, number, w) for term, w in issue.vector.items())
            keys.extend((k, number) for k in issue.keys)
            rows.append((number, issue.title, issue.state, issue.url, issue.created_at, issue.duplicate_of,
                         json.dumps(issue.vector, separators=(",", ":")),
                         json.dumps(issue.meta, separators=(",", ":")), json.dumps(list(issue.keys))))
        db.executemany("INSERT OR REPLACE INTO issues VALUES (?,?,?,?,?,?,?,?,?)", rows)
        db.executemany("INSERT INTO postings VALUES (?,?,?)", postings)
        db.executemany("INSERT INTO terms VALUES (?,?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
                       df.items())
        db.executemany("INSERT OR IGNORE INTO keys VALUES (?,?)", keys)

    def _unindex(self, number: int, vector: dict[str, float], keys: list[str]) -> None:
        terms = [(t,) for t in vector]
        self._db.executemany("UPDATE terms SET df = df - 1 WHERE term = ?", terms)
        self._db.executemany("DELETE FROM postings WHERE term = ? AND number = ?", [(t, number) for (t,) in terms])
        self._db.executemany("DELETE FROM keys WHERE key = ? AND number = ?", [(k, number) for k in keys])

    def _flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            self._pending_numbers = set()
            self._write(pending, fresh=True)

    def set_duplicate_of(self, number: int, target: int | None) -> None:
        self._flush()
        self._db.execute("UPDATE issues SET duplicate_of=? WHERE number=?", (target, number))

    @contextmanager
    def batch(self) -> Iterator[None]:
        if self._batching:
            yield
            return
        self._batching = True
        self._db.execute("BEGIN")
        try:
            yield
            self._flush()
            self._db.execute("COMMIT")
        except BaseException:
            self._pending, self._pending_numbers = [], set()
            self._db.execute("ROLLBACK")
            self._count = self._db.execute("SELECT count(*) FROM issues").fetchone()[0]
            raise
        finally:
            self._batching = False

    # -- reads ----------------------------------------------------------------------------------------
    def _chunks(self, items: Sequence[Any]) -> Iterator[Sequence[Any]]:
        for i in range(0, len(items), _CHUNK):
            yield items[i:i + _CHUNK]

    def count(self) -> int:
        return self._count

    def get_many(self, numbers: Iterable[int]) -> dict[int, StoredIssue]:
        self._flush()
        out = {}
        for chunk in self._chunks(list(numbers)):
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(f"SELECT * FROM issues WHERE number IN ({marks})", tuple(chunk)):
                n, title, state, url, created, dup, vector, meta, keys = row
                out[n] = StoredIssue(n, title, state, url, created, dup, json.loads(vector), json.loads(meta),
                                     tuple(json.loads(keys)))
        return out

    def df(self, terms: Sequence[str]) -> dict[str, int]:
        self._flush()
        out = {}
        for chunk in self._chunks(list(terms)):
            marks = ",".join("?" * len(chunk))
            for term, df in self._db.execute(f"SELECT term, df FROM terms WHERE term IN ({marks})", tuple(chunk)):
                if df > 0:
                    out[term] = df
        return out

    def postings(self, terms: Sequence[str], before: Before = None) -> Iterator[tuple[str, int, float]]:
        self._flush()
        for chunk in self._chunks(list(terms)):
            marks = ",".join("?" * len(chunk))
            if before is None:
                yield from self._db.execute(f"SELECT term, number, w FROM postings WHERE term IN ({marks})",
                                            tuple(chunk))
            else:
                yield from self._db.execute(
                    f"SELECT p.term, p.number, p.w FROM postings p JOIN issues i ON i.number = p.number"
                    f" WHERE p.term IN ({marks}) AND (i.created_at, i.number) < (?, ?)", (*chunk, *before))

    def numbers_by_key(self, keys: Sequence[str], limit: int = KEY_LIMIT,
                       before: Before = None) -> dict[str, list[int]]:
        self._flush()
        out = {}
        for k in keys:
            if before is None:
                rows = self._db.execute("SELECT number FROM keys WHERE key=? ORDER BY number DESC LIMIT ?",
                                        (k, limit))
            else:
                rows = self._db.execute(
                    "SELECT k.number FROM keys k JOIN issues i ON i.number = k.number WHERE k.key=?"
                    " AND (i.created_at, i.number) < (?, ?) ORDER BY k.number DESC LIMIT ?", (k, *before, limit))
            numbers = [r[0] for r in rows]
            if numbers:
                out[k] = numbers
        return out

    def close(self) -> None:
        self._flush()
        self._db.close()
