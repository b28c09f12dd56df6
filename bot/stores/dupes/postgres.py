"""The duplicate index in Postgres: bot.dupes' `IndexStore` contract over four tables shared by every replica.

The scoring stays in bot/dupes (BM25F over the same term vectors, signatures, rule ids); this store only
keeps, per repository, the issues, their postings, document frequencies and exact-match keys, exactly like
the SQLite backend. Every replica reads and writes the same rows, so an issue indexed by one replica is
a duplicate candidate on all of them at once (why this and not per-replica copies: docs/app.md, "Scaling out").

Used from the service's single core thread: one synchronous connection per process, shared by the
repositories' stores. Migrations: `MIGRATIONS` (bot/stores/migrations.py says how they are applied and recorded).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import psycopg

from bot.dupes.index import DuplicateIndex
from bot.dupes.store import KEY_LIMIT, Before, StoredIssue
from bot.stores.migrations import migrate_postgres, postgres_table_exists

STORE = "dupes"
DEADLOCK_RETRIES = 5
MIGRATIONS: tuple[str, ...] = (
    # 1: issues, their postings, document frequencies and exact-match keys, per repository
    """
    CREATE TABLE dupe_issues (
        repo TEXT NOT NULL,
        number BIGINT NOT NULL,
        title TEXT NOT NULL,
        state TEXT NOT NULL,
        url TEXT,
        created_at TEXT NOT NULL,
        duplicate_of BIGINT,
        vector TEXT NOT NULL,
        meta TEXT NOT NULL,
        keys TEXT NOT NULL,
        PRIMARY KEY (repo, number)
    );
    CREATE TABLE dupe_terms (
        repo TEXT NOT NULL,
        term TEXT NOT NULL,
        df INTEGER NOT NULL,
        PRIMARY KEY (repo, term)
    );
    CREATE TABLE dupe_postings (
        repo TEXT NOT NULL,
        term TEXT NOT NULL,
        number BIGINT NOT NULL,
        w DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (repo, term, number)
    );
    CREATE TABLE dupe_keys (
        repo TEXT NOT NULL,
        key TEXT NOT NULL,
        number BIGINT NOT NULL,
        PRIMARY KEY (repo, key, number)
    );
    """,
)
LEGACY_VERSION = 5  # before store_versions, the App's schema_migrations entry 5 made these tables


def adopt(conn: psycopg.Connection) -> int:
    """A schema made before store_versions: version 1 if schema_migrations holds the entry that made the tables."""
    if not postgres_table_exists(conn, "schema_migrations"):
        return 0
    return int(conn.execute("SELECT 1 FROM schema_migrations WHERE version = %s",
                            (LEGACY_VERSION,)).fetchone() is not None)


def migrate(url: str) -> int:
    return migrate_postgres(url, STORE, MIGRATIONS, adopt=adopt)


class PostgresIndexes:
    """One connection for the duplicate indexes of all repositories of this process."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: psycopg.Connection | None = None
        self._users = 0
        self._lock = threading.Lock()

    def connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self.url, autocommit=True)
        return self._conn

    def store(self, repo: str) -> PostgresIndexStore:
        with self._lock:
            self._users += 1
        return PostgresIndexStore(self, repo)

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users <= 0 and self._conn is not None:
                self._conn.close()
                self._conn = None


class PostgresIndexStore:
    """bot.dupes.store.IndexStore for one repository."""

    def __init__(self, owner: PostgresIndexes, repo: str) -> None:
        self._owner = owner
        self.repo = repo
        self._in_batch = False
        self._pending_df: Counter[str] = Counter()  # df changes of a batch, written once when it ends
        self._closed = False

    @property
    def _db(self) -> psycopg.Connection:
        return self._owner.connection()

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Connection]:
        db = self._db
        if self._in_batch:
            yield db
            return
        with db.transaction():
            yield db

    # -- writes ---------------------------------------------------------------------------------------

    def put(self, issue: StoredIssue) -> None:
        for attempt in range(DEADLOCK_RETRIES):
            try:
                with self._transaction() as db:
                    self._write(db, issue)
                return
            except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
                if self._in_batch or attempt == DEADLOCK_RETRIES - 1:
                    raise

    def _write(self, db: psycopg.Connection, issue: StoredIssue) -> None:
        repo, number = self.repo, issue.number
        old = db.execute("SELECT vector, keys FROM dupe_issues WHERE repo = %s AND number = %s FOR UPDATE",
                         (repo, number)).fetchone()
        delta: Counter[str] = Counter(issue.vector.keys())
        if old is not None:
            old_terms = list(json.loads(old[0]))
            delta.subtract(old_terms)
            db.execute("DELETE FROM dupe_postings WHERE repo = %s AND number = %s AND term = ANY(%s)",
                       (repo, number, old_terms))
            db.execute("DELETE FROM dupe_keys WHERE repo = %s AND number = %s", (repo, number))
        db.execute(
            "INSERT INTO dupe_issues (repo, number, title, state, url, created_at, duplicate_of, vector, meta, keys)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (repo, number) DO UPDATE SET"
            " title = excluded.title, state = excluded.state, url = excluded.url, created_at = excluded.created_at,"
            " duplicate_of = excluded.duplicate_of, vector = excluded.vector, meta = excluded.meta,"
            " keys = excluded.keys",
            (repo, number, issue.title, issue.state, issue.url, issue.created_at, issue.duplicate_of,
             json.dumps(issue.vector, separators=(",", ":")), json.dumps(issue.meta, separators=(",", ":")),
             json.dumps(list(issue.keys))))
        if issue.vector:  # arrays, not one row per statement: an issue has hundreds of terms
            terms = list(issue.vector)
            db.execute("INSERT INTO dupe_postings (repo, term, number, w)"
                       " SELECT %s, t, %s, w FROM unnest(%s::text[], %s::float8[]) AS x(t, w)",
                       (repo, number, terms, [issue.vector[t] for t in terms]))
        if self._in_batch:  # updating one row thousands of times in one transaction grows its version chain
            self._pending_df.update(delta)
        else:
            self._write_df(db, delta)
        if issue.keys:
            db.execute("INSERT INTO dupe_keys (repo, key, number) SELECT %s, k, %s FROM unnest(%s::text[]) AS x(k)"
                       " ON CONFLICT DO NOTHING", (repo, number, list(dict.fromkeys(issue.keys))))

    def _write_df(self, db: psycopg.Connection, delta: Counter[str]) -> None:
        # in term order: replicas indexing issues that share terms lock the df rows in the same order
        changes = sorted((t, d) for t, d in delta.items() if d)
        if changes:
            db.execute("INSERT INTO dupe_terms (repo, term, df)"
                       " SELECT %s, t, d FROM unnest(%s::text[], %s::int[]) AS x(t, d) ORDER BY t"
                       " ON CONFLICT (repo, term) DO UPDATE SET df = dupe_terms.df + excluded.df",
                       (self.repo, [t for t, _ in changes], [d for _, d in changes]))

    def set_duplicate_of(self, number: int, target: int | None) -> None:
        with self._transaction() as db:
            db.execute("UPDATE dupe_issues SET duplicate_of = %s WHERE repo = %s AND number = %s",
                       (target, self.repo, number))

    @contextmanager
    def batch(self) -> Iterator[None]:
        if self._in_batch:
            yield
            return
        with self._db.transaction() as tx:
            self._in_batch = True
            try:
                yield
                self._write_df(tx.connection, self._pending_df)
            finally:
                self._in_batch = False
                self._pending_df = Counter()

    # -- reads ----------------------------------------------------------------------------------------

    def count(self) -> int:
        return self._db.execute("SELECT count(*) FROM dupe_issues WHERE repo = %s", (self.repo,)).fetchone()[0]

    def get_many(self, numbers: Iterable[int]) -> dict[int, StoredIssue]:
        numbers = list(numbers)
        if not numbers:
            return {}
        rows = self._db.execute(
            "SELECT number, title, state, url, created_at, duplicate_of, vector, meta, keys FROM dupe_issues"
            " WHERE repo = %s AND number = ANY(%s)", (self.repo, numbers)).fetchall()
        return {r[0]: StoredIssue(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), json.loads(r[7]),
                                  tuple(json.loads(r[8]))) for r in rows}

    def df(self, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        rows = self._db.execute("SELECT term, df FROM dupe_terms WHERE repo = %s AND term = ANY(%s)",
                                (self.repo, list(terms))).fetchall()
        out = Counter(dict(rows))
        out.update({t: self._pending_df[t] for t in terms if t in self._pending_df})
        return {t: n for t, n in out.items() if n > 0}

    def postings(self, terms: Sequence[str], before: Before = None) -> Iterator[tuple[str, int, float]]:
        if not terms:
            return iter(())
        if before is None:
            rows = self._db.execute("SELECT term, number, w FROM dupe_postings WHERE repo = %s AND term = ANY(%s)",
                                    (self.repo, list(terms))).fetchall()
        else:
            rows = self._db.execute(
                "SELECT p.term, p.number, p.w FROM dupe_postings p JOIN dupe_issues i"
                " ON i.repo = p.repo AND i.number = p.number WHERE p.repo = %s AND p.term = ANY(%s)"
                " AND (i.created_at COLLATE \"C\", i.number) < (%s, %s)", (self.repo, list(terms), *before)).fetchall()
        return iter(rows)

    def numbers_by_key(self, keys: Sequence[str], limit: int = KEY_LIMIT,
                       before: Before = None) -> dict[str, list[int]]:
        if not keys:
            return {}
        # (created_at, number) compared as (text COLLATE "C", bigint): the order Python and SQLite use
        earlier = "" if before is None else \
            ' AND EXISTS (SELECT 1 FROM dupe_issues i WHERE i.repo = dk.repo AND i.number = dk.number' \
            ' AND (i.created_at COLLATE "C", i.number) < (%s, %s))'
        rows = self._db.execute(
            "SELECT k.key, n.number FROM unnest(%s::text[]) AS k(key) CROSS JOIN LATERAL ("
            f" SELECT number FROM dupe_keys dk WHERE repo = %s AND key = k.key{earlier}"
            " ORDER BY number DESC LIMIT %s) n",
            (list(keys), self.repo, *(before or ()), limit)).fetchall()
        out: dict[str, list[int]] = {}
        for key, number in rows:
            out.setdefault(key, []).append(number)
        return {key: sorted(numbers, reverse=True) for key, numbers in out.items()}

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._owner.release()



_SHARED: dict[str, PostgresIndexes] = {}


def open_postgres_index(url: str, repo: str) -> DuplicateIndex:
    """The repository's index in the database at `url`, on this process's shared connection. The first call
    applies missing migrations (`index --github` may run before any server has)."""
    owner = _SHARED.get(url)
    if owner is None:
        migrate(url)
        owner = _SHARED[url] = PostgresIndexes(url)
    return DuplicateIndex(owner.store(repo))
