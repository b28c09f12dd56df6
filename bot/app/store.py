"""Durable state behind one small interface: the delivery queue, per-issue bot state, decisions, feedback,
installations and config errors.

`Store` is the contract the server and the worker use; `SqliteStore` is the embedded default (WAL mode),
`PostgresStore` (bot/app/store_pg.py) the one several replicas share; `open_store(DATABASE_URL)` picks one.
All SQLite SQL lives in this module. Migrations are append-only: add a new entry to `MIGRATIONS`, never edit one.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# A delivery is queued -> running -> done, or back to queued (with not_before) after a failure, or parked
# after too many failures. A redelivery of a parked delivery (same X-GitHub-Delivery) queues it again.
QUEUED, RUNNING, DONE, PARKED = "queued", "running", "done", "parked"

BUSY_TIMEOUT_MS = 30000  # how long an SQLite statement waits for another process's write lock

MIGRATIONS: tuple[str, ...] = (
    # 1: the delivery queue
    """
    CREATE TABLE deliveries (
        id TEXT PRIMARY KEY,
        event TEXT NOT NULL,
        action TEXT,
        repo TEXT,
        issue_number INTEGER,
        issue_key TEXT,
        installation_id INTEGER,
        payload TEXT NOT NULL,
        received_at REAL NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        not_before REAL NOT NULL DEFAULT 0,
        claimed_by TEXT,
        lease_until REAL,
        last_error TEXT,
        finished_at REAL,
        redeliveries INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX deliveries_ready ON deliveries (status, not_before);
    CREATE INDEX deliveries_issue ON deliveries (issue_key, status);
    """,
    # 2: what the bot did and knows per issue
    """
    CREATE TABLE issue_state (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        labels_added TEXT NOT NULL DEFAULT '[]',
        labels_pending TEXT NOT NULL DEFAULT '[]',
        labels_suppressed TEXT NOT NULL DEFAULT '[]',
        comment_id INTEGER,
        comment_sha TEXT,
        last_decision TEXT,
        state TEXT NOT NULL DEFAULT 'open',
        updated_at REAL NOT NULL,
        PRIMARY KEY (repo, number)
    );
    """,
    # 3: every plan the bot made, applied or not (dry-run and shadow read it from here)
    """
    CREATE TABLE decisions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        delivery_id TEXT,
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        mode TEXT NOT NULL,
        reason TEXT NOT NULL,
        plan TEXT NOT NULL,
        applied INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX decisions_issue ON decisions (repo, number);
    """,
    # 4: maintainer feedback, installations, config errors
    """
    CREATE TABLE feedback (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        kind TEXT NOT NULL,
        target INTEGER,
        actor TEXT,
        delivery_id TEXT,
        created_at REAL NOT NULL,
        UNIQUE (delivery_id, kind, target)
    );
    CREATE INDEX feedback_issue ON feedback (repo, number);
    CREATE TABLE installations (
        id INTEGER PRIMARY KEY,
        account TEXT,
        target_type TEXT,
        repos TEXT NOT NULL DEFAULT '[]',
        suspended INTEGER NOT NULL DEFAULT 0,
        deleted INTEGER NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL
    );
    CREATE TABLE config_errors (
        repo TEXT PRIMARY KEY,
        errors TEXT NOT NULL,
        checked_at REAL NOT NULL
    );
    """,
    # 5: claiming walks the queue in arrival order; expired leases are found without a scan
    """
    CREATE INDEX deliveries_queue ON deliveries (status, received_at);
    CREATE INDEX deliveries_lease ON deliveries (status, lease_until);
    """,
    # 6: when a comment POST went out whose answer never came (GitHub may still create that comment)
    """
    ALTER TABLE issue_state ADD COLUMN comment_posted_at REAL;
    """,
)


@dataclass(frozen=True)
class Delivery:
    id: str
    event: str
    action: str | None
    repo: str | None
    issue_number: int | None
    installation_id: int | None
    payload: str
    received_at: float
    status: str
    attempts: int
    last_error: str | None = None
    claimed_by: str | None = None

    def data(self) -> dict[str, Any]:
        return json.loads(self.payload)


@dataclass
class IssueState:
    repo: str
    number: int
    labels_added: list[str] = field(default_factory=list)       # labels the bot put on the issue
    labels_pending: list[str] = field(default_factory=list)     # sent, not yet confirmed (crash in between)
    labels_suppressed: list[str] = field(default_factory=list)  # removed by a human: never added again
    comment_id: int | None = None
    comment_sha: str | None = None
    last_decision: dict[str, Any] | None = None
    state: str = "open"
    comment_posted_at: float | None = None  # a comment POST was sent and its answer not yet seen


@dataclass(frozen=True)
class DecisionRecord:
    id: int
    delivery_id: str | None
    repo: str
    number: int
    mode: str
    reason: str
    plan: dict[str, Any]
    applied: bool
    created_at: float


class Store(Protocol):
    async def migrate(self) -> int: ...
    async def close(self) -> None: ...
    async def record_delivery(self, delivery_id: str, event: str, action: str | None, repo: str | None,
                              issue_number: int | None, installation_id: int | None, payload: str) -> str: ...
    async def claim(self, worker: str, lease_seconds: float, max_attempts: int) -> Delivery | None: ...
    async def renew(self, delivery_id: str, worker: str, lease_seconds: float) -> bool: ...
    async def complete(self, delivery_id: str, worker: str) -> bool: ...
    async def retry(self, delivery_id: str, worker: str, error: str, not_before: float,
                    count_attempt: bool = True) -> bool: ...
    async def park(self, delivery_id: str, worker: str, error: str) -> bool: ...
    async def delivery(self, delivery_id: str) -> Delivery | None: ...
    async def deliveries(self, status: str | None = None, limit: int = 100) -> list[Delivery]: ...
    async def delivery_counts(self) -> dict[str, int]: ...
    async def issue_state(self, repo: str, number: int) -> IssueState | None: ...
    async def save_issue_state(self, state: IssueState) -> None: ...
    async def record_decision(self, delivery_id: str | None, repo: str, number: int, mode: str, reason: str,
                              plan: dict[str, Any], applied: bool) -> None: ...
    async def decisions(self, repo: str | None = None, number: int | None = None,
                        limit: int = 100) -> list[DecisionRecord]: ...
    async def add_feedback(self, repo: str, number: int, kind: str, target: int | None, actor: str | None,
                           delivery_id: str | None) -> None: ...
    async def feedback(self, repo: str, number: int) -> list[dict[str, Any]]: ...
    async def upsert_installation(self, installation_id: int, account: str | None, target_type: str | None,
                                  repos: Iterable[str] | None = None, *, add_repos: Iterable[str] = (),
                                  remove_repos: Iterable[str] = (), suspended: bool = False,
                                  deleted: bool = False) -> None: ...
    async def installations(self) -> list[dict[str, Any]]: ...
    async def set_config_errors(self, repo: str, errors: list[str]) -> None: ...
    async def config_errors(self) -> dict[str, list[str]]: ...
    # read side of the dashboard (bot/dashboard): whole-table reads, aggregated in Python
    async def latest_decisions(self, repo: str | None = None, since: float | None = None,
                               limit: int = 10000) -> list[DecisionRecord]: ...
    async def all_feedback(self, repo: str | None = None) -> list[dict[str, Any]]: ...
    async def issue_states(self, repo: str | None = None) -> list[IssueState]: ...
    async def issue_deliveries(self, repo: str, number: int, limit: int = 20) -> list[Delivery]: ...


# What follows is shared by SqliteStore and PostgresStore (bot/app/store_pg.py): row mapping, pure helpers and
# the queries that differ only in the placeholder; SQL that differs by dialect stays in each store.
# A row is an sqlite3.Row or a psycopg dict row; both are read by column name.
Row = Any
MAX_ERROR_CHARS = 2000  # a delivery's last_error is cut to this


def issue_key(repo: str | None, number: int | None) -> str | None:
    return f"{repo}#{number}" if repo and number is not None else None


def decision_from_row(r: Row) -> DecisionRecord:
    return DecisionRecord(id=r["id"], delivery_id=r["delivery_id"], repo=r["repo"], number=r["number"],
                          mode=r["mode"], reason=r["reason"], plan=json.loads(r["plan"]),
                          applied=bool(r["applied"]), created_at=r["created_at"])


def issue_state_from_row(row: Row) -> IssueState:
    return IssueState(repo=row["repo"], number=row["number"], labels_added=json.loads(row["labels_added"]),
                      labels_pending=json.loads(row["labels_pending"]),
                      labels_suppressed=json.loads(row["labels_suppressed"]),
                      comment_id=row["comment_id"], comment_sha=row["comment_sha"],
                      last_decision=json.loads(row["last_decision"]) if row["last_decision"] else None,
                      state=row["state"], comment_posted_at=row["comment_posted_at"])


def issue_state_params(state: IssueState, now: float) -> tuple:
    """The values of an issue_state row, in the column order of the INSERT both stores use."""
    return (state.repo, state.number, json.dumps(state.labels_added), json.dumps(state.labels_pending),
            json.dumps(state.labels_suppressed), state.comment_id, state.comment_sha,
            json.dumps(state.last_decision) if state.last_decision is not None else None, state.state, now,
            state.comment_posted_at)


def delivery_from_row(row: Row) -> Delivery:
    return Delivery(id=row["id"], event=row["event"], action=row["action"], repo=row["repo"],
                    issue_number=row["issue_number"], installation_id=row["installation_id"],
                    payload=row["payload"], received_at=row["received_at"], status=row["status"],
                    attempts=row["attempts"], last_error=row["last_error"], claimed_by=row["claimed_by"])


def claimed_delivery(row: Row, worker: str) -> Delivery:
    """The delivery of a row just claimed by `worker` (the row as read before the claim's UPDATE)."""
    claimed = delivery_from_row(row)
    return Delivery(**{**claimed.__dict__, "status": RUNNING, "attempts": claimed.attempts + 1,
                       "claimed_by": worker})


def parked_error(row: Row) -> str:
    """last_error of a delivery parked at claim time because it used up its attempts."""
    return f"parked after {row['attempts']} attempts: {row['last_error'] or 'worker lost its lease repeatedly'}"


def installation_repos(current: list[str], add_repos: Iterable[str], remove_repos: Iterable[str]) -> list[str]:
    """An installation's repositories after an installation_repositories event, sorted."""
    removed = set(remove_repos)
    merged = list(current)
    for name in add_repos:
        if name not in merged:
            merged.append(name)
    return sorted(r for r in merged if r not in removed)


def installation_from_row(r: Row) -> dict[str, Any]:
    return {**dict(r), "repos": json.loads(r["repos"]), "suspended": bool(r["suspended"]),
            "deleted": bool(r["deleted"])}


def save_issue_state_sql(ph: str) -> str:
    """The upsert of `Store.save_issue_state`; `ph` is the driver's placeholder (`?` or `%s`)."""
    return ("INSERT INTO issue_state (repo, number, labels_added, labels_pending, labels_suppressed, comment_id,"
            f" comment_sha, last_decision, state, updated_at, comment_posted_at) VALUES ({','.join([ph] * 11)})"
            " ON CONFLICT (repo, number) DO UPDATE SET labels_added = excluded.labels_added,"
            " labels_pending = excluded.labels_pending, labels_suppressed = excluded.labels_suppressed,"
            " comment_id = excluded.comment_id, comment_sha = excluded.comment_sha,"
            " last_decision = excluded.last_decision, state = excluded.state, updated_at = excluded.updated_at,"
            " comment_posted_at = excluded.comment_posted_at")


def decisions_query(ph: str, repo: str | None, number: int | None, limit: int) -> tuple[str, tuple]:
    """SQL and parameters of `Store.decisions`; `ph` is the driver's placeholder (`?` or `%s`)."""
    filters = [(column, value) for column, value in (("repo", repo), ("number", number)) if value is not None]
    where = " WHERE " + " AND ".join(f"{column} = {ph}" for column, _ in filters) if filters else ""
    return (f"SELECT * FROM decisions{where} ORDER BY id DESC LIMIT {ph}",
            (*(value for _, value in filters), limit))


def latest_decisions_query(ph: str, repo: str | None, since: float | None, limit: int) -> tuple[str, tuple]:
    """SQL and parameters of `Store.latest_decisions` (the newest decision of every issue, newest first)."""
    params: list[Any] = []
    latest = "SELECT MAX(id) AS id FROM decisions"
    if repo is not None:
        latest += f" WHERE repo = {ph}"
        params.append(repo)
    sql = f"SELECT d.* FROM decisions d JOIN ({latest} GROUP BY repo, number) m ON d.id = m.id"
    if since is not None:
        sql += f" WHERE d.created_at >= {ph}"
        params.append(since)
    return sql + f" ORDER BY d.id DESC LIMIT {ph}", (*params, limit)


def empty_counts() -> dict[str, int]:
    return {QUEUED: 0, RUNNING: 0, DONE: 0, PARKED: 0}


class GroupCommit:
    """Webhook intake: the deliveries recorded in one turn of the event loop share one transaction, and each
    caller is answered only after it committed (a burst costs one commit, not one per delivery). If the batch
    fails, each delivery is tried in a transaction of its own, so one bad row fails only its own caller."""

    def __init__(self, record: Callable[[list[tuple]], Awaitable[list[str]]]) -> None:
        self._record = record  # rows -> outcomes, in one transaction
        self._waiting: list[tuple[tuple, asyncio.Future[str]]] = []
        self._running: set[asyncio.Task] = set()

    async def submit(self, row: tuple) -> str:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        self._waiting.append((row, answer))
        if len(self._waiting) == 1:
            loop.call_soon(self._start)
        return await answer

    def _start(self) -> None:
        batch, self._waiting = self._waiting, []
        if batch:
            task = asyncio.ensure_future(self._commit(batch))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _commit(self, batch: list[tuple[tuple, asyncio.Future[str]]]) -> None:
        try:
            outcomes: list[str | Exception] = list(await self._record([row for row, _ in batch]))
        except Exception:
            outcomes = []
            for row, _ in batch:
                try:
                    outcomes += await self._record([row])
                except Exception as error:
                    outcomes.append(error)
        for (_, answer), outcome in zip(batch, outcomes, strict=True):
            if answer.done():  # the caller went away; the delivery is recorded all the same
                continue
            if isinstance(outcome, Exception):
                answer.set_exception(outcome)
            else:
                answer.set_result(outcome)

    async def drain(self) -> None:
        self._start()
        while self._running:
            await asyncio.gather(*self._running, return_exceptions=True)


class SqliteStore:
    """The embedded store. One connection, used from the event loop thread (every statement is short)."""

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL", clock=time.time) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a commit survives the process being killed (SIGKILL), not a power cut.
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        self._intake = GroupCommit(self._record_batch)

    # -- schema ---------------------------------------------------------------------------------------

    async def migrate(self) -> int:
        db = self._db
        db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
        done = {r[0] for r in db.execute("SELECT version FROM schema_migrations")}
        for version, script in enumerate(MIGRATIONS, start=1):
            if version in done:
                continue
            statements = [s.strip() for s in script.split(";") if s.strip()]
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in statements:
                    db.execute(statement)
                db.execute("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                           (version, self._clock()))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return len(MIGRATIONS)

    async def close(self) -> None:
        await self._intake.drain()
        self._db.close()

    # -- deliveries -----------------------------------------------------------------------------------

    async def record_delivery(self, delivery_id: str, event: str, action: str | None, repo: str | None,
                              issue_number: int | None, installation_id: int | None, payload: str) -> str:
        """'queued' for a new delivery, 'requeued' for a redelivery of a parked or waiting one,
        'duplicate' when it is already done or being processed (nothing happens then).

        Deliveries arriving together share one transaction (GroupCommit).
        """
        return await self._intake.submit((delivery_id, event, action, repo, issue_number, installation_id, payload,
                                          self._clock()))

    async def _record_batch(self, rows: list[tuple]) -> list[str]:
        db = self._db
        await self._begin_immediate()
        try:
            outcomes = [self._record_one(*row) for row in rows]
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return outcomes

    async def _begin_immediate(self, patience: float = 30.0) -> None:
        """BEGIN IMMEDIATE without blocking the event loop while another process (an intake process, see
        bot/app/intake.py) holds the write lock: try without SQLite's busy wait, and sleep between tries."""
        db, deadline = self._db, time.monotonic() + patience
        while True:
            db.execute("PRAGMA busy_timeout=0")
            try:
                db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
            finally:
                db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            await asyncio.sleep(0.001)

    def _record_one(self, delivery_id: str, event: str, action: str | None, repo: str | None,
                    issue_number: int | None, installation_id: int | None, payload: str, now: float) -> str:
        db = self._db
        inserted = db.execute(
            "INSERT INTO deliveries (id, event, action, repo, issue_number, issue_key, installation_id,"
            " payload, received_at, status, attempts, not_before) VALUES (?,?,?,?,?,?,?,?,?,?,0,?)"
            " ON CONFLICT (id) DO NOTHING",
            (delivery_id, event, action, repo, issue_number, issue_key(repo, issue_number),
             installation_id, payload, now, QUEUED, now))
        if inserted.rowcount == 1:
            return "queued"
        row = db.execute("SELECT status, attempts FROM deliveries WHERE id = ?", (delivery_id,)).fetchone()
        if row["status"] == PARKED or (row["status"] == QUEUED and row["attempts"] > 0):
            db.execute("UPDATE deliveries SET status = ?, attempts = 0, not_before = ?, claimed_by = NULL,"
                       " lease_until = NULL, payload = ?, redeliveries = redeliveries + 1 WHERE id = ?",
                       (QUEUED, now, payload, delivery_id))
            return "requeued"
        db.execute("UPDATE deliveries SET redeliveries = redeliveries + 1 WHERE id = ?", (delivery_id,))
        return "duplicate"

    async def claim(self, worker: str, lease_seconds: float, max_attempts: int) -> Delivery | None:
        """Lease the oldest ready delivery whose issue has no other delivery in flight.

        A running delivery whose lease expired (its worker died) is ready again. A delivery that already
        used `max_attempts` claims is parked instead of being handed out again.
        """
        db = self._db
        while True:
            now = self._clock()
            db.execute("BEGIN IMMEDIATE")
            try:
                free_issue = ("(d.issue_key IS NULL OR NOT EXISTS (SELECT 1 FROM deliveries o"
                              " INDEXED BY deliveries_issue"
                              " WHERE o.issue_key = d.issue_key AND o.status = ? AND o.lease_until >= ?"
                              " AND o.id <> d.id))")
                row = db.execute(  # a dead worker's delivery first, then the oldest ready one
                    f"SELECT * FROM deliveries d WHERE d.status = ? AND d.lease_until < ? AND {free_issue}"
                    " ORDER BY d.lease_until LIMIT 1", (RUNNING, now, RUNNING, now)).fetchone()
                if row is None:
                    row = db.execute(
                        "SELECT * FROM deliveries d INDEXED BY deliveries_queue"
                        f" WHERE d.status = ? AND d.not_before <= ? AND {free_issue}"
                        " ORDER BY d.received_at LIMIT 1", (QUEUED, now, RUNNING, now)).fetchone()
                if row is None:
                    db.execute("COMMIT")
                    return None
                if row["attempts"] >= max_attempts:
                    db.execute("UPDATE deliveries SET status = ?, claimed_by = NULL, lease_until = NULL,"
                               " finished_at = ?, last_error = ? WHERE id = ?",
                               (PARKED, now, parked_error(row), row["id"]))
                    db.execute("COMMIT")
                    continue
                db.execute("UPDATE deliveries SET status = ?, claimed_by = ?, lease_until = ?,"
                           " attempts = attempts + 1 WHERE id = ?",
                           (RUNNING, worker, now + lease_seconds, row["id"]))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return claimed_delivery(row, worker)

    def _update_owned(self, sql: str, params: tuple, delivery_id: str, worker: str) -> bool:
        cur = self._db.execute(sql + " WHERE id = ? AND claimed_by = ? AND status = ?",
                               (*params, delivery_id, worker, RUNNING))
        return cur.rowcount == 1

    async def renew(self, delivery_id: str, worker: str, lease_seconds: float) -> bool:
        return self._update_owned("UPDATE deliveries SET lease_until = ?", (self._clock() + lease_seconds,),
                                  delivery_id, worker)

    async def complete(self, delivery_id: str, worker: str) -> bool:
        return self._update_owned("UPDATE deliveries SET status = ?, finished_at = ?, lease_until = NULL",
                                  (DONE, self._clock()), delivery_id, worker)

    async def retry(self, delivery_id: str, worker: str, error: str, not_before: float,
                    count_attempt: bool = True) -> bool:
        undo = 0 if count_attempt else 1
        return self._update_owned(
            "UPDATE deliveries SET status = ?, not_before = ?, last_error = ?, lease_until = NULL,"
            " attempts = attempts - ?", (QUEUED, not_before, error[:MAX_ERROR_CHARS], undo), delivery_id, worker)

    async def park(self, delivery_id: str, worker: str, error: str) -> bool:
        return self._update_owned(
            "UPDATE deliveries SET status = ?, last_error = ?, finished_at = ?, lease_until = NULL",
            (PARKED, error[:MAX_ERROR_CHARS], self._clock()), delivery_id, worker)

    async def delivery(self, delivery_id: str) -> Delivery | None:
        row = self._db.execute("SELECT * FROM deliveries WHERE id = ?", (delivery_id,)).fetchone()
        return delivery_from_row(row) if row else None

    async def deliveries(self, status: str | None = None, limit: int = 100) -> list[Delivery]:
        if status:
            rows = self._db.execute("SELECT * FROM deliveries WHERE status = ? ORDER BY received_at DESC LIMIT ?",
                                    (status, limit))
        else:
            rows = self._db.execute("SELECT * FROM deliveries ORDER BY received_at DESC LIMIT ?", (limit,))
        return [delivery_from_row(r) for r in rows]

    async def delivery_counts(self) -> dict[str, int]:
        counts = empty_counts()
        for row in self._db.execute("SELECT status, COUNT(*) FROM deliveries GROUP BY status"):
            counts[row[0]] = row[1]
        return counts

    # -- per-issue state ------------------------------------------------------------------------------

    async def issue_state(self, repo: str, number: int) -> IssueState | None:
        row = self._db.execute("SELECT * FROM issue_state WHERE repo = ? AND number = ?", (repo, number)).fetchone()
        return issue_state_from_row(row) if row else None

    async def save_issue_state(self, state: IssueState) -> None:
        self._db.execute(save_issue_state_sql("?"), issue_state_params(state, self._clock()))

    # -- decisions ------------------------------------------------------------------------------------

    async def record_decision(self, delivery_id: str | None, repo: str, number: int, mode: str, reason: str,
                              plan: dict[str, Any], applied: bool) -> None:
        self._db.execute(
            "INSERT INTO decisions (delivery_id, repo, number, mode, reason, plan, applied, created_at)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (delivery_id, repo, number, mode, reason, json.dumps(plan), int(applied), self._clock()))

    async def decisions(self, repo: str | None = None, number: int | None = None,
                        limit: int = 100) -> list[DecisionRecord]:
        return [decision_from_row(r) for r in self._db.execute(*decisions_query("?", repo, number, limit))]

    # -- feedback, installations, config errors -------------------------------------------------------

    async def add_feedback(self, repo: str, number: int, kind: str, target: int | None, actor: str | None,
                           delivery_id: str | None) -> None:
        self._db.execute(
            "INSERT INTO feedback (repo, number, kind, target, actor, delivery_id, created_at)"
            " VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
            (repo, number, kind, target, actor, delivery_id, self._clock()))

    async def feedback(self, repo: str, number: int) -> list[dict[str, Any]]:
        rows = self._db.execute("SELECT kind, target, actor, created_at FROM feedback WHERE repo = ? AND number = ?"
                                " ORDER BY id", (repo, number))
        return [dict(r) for r in rows]

    async def upsert_installation(self, installation_id: int, account: str | None, target_type: str | None,
                                  repos: Iterable[str] | None = None, *, add_repos: Iterable[str] = (),
                                  remove_repos: Iterable[str] = (), suspended: bool = False,
                                  deleted: bool = False) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT repos FROM installations WHERE id = ?", (installation_id,)).fetchone()
            current = list(repos) if repos is not None else (json.loads(row["repos"]) if row else [])
            current = installation_repos(current, add_repos, remove_repos)
            db.execute(
                "INSERT INTO installations (id, account, target_type, repos, suspended, deleted, updated_at)"
                " VALUES (?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET"
                " account = COALESCE(excluded.account, installations.account),"
                " target_type = COALESCE(excluded.target_type, installations.target_type),"
                " repos = excluded.repos, suspended = excluded.suspended, deleted = excluded.deleted,"
                " updated_at = excluded.updated_at",
                (installation_id, account, target_type, json.dumps(current), int(suspended), int(deleted),
                 self._clock()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def installations(self) -> list[dict[str, Any]]:
        rows = self._db.execute("SELECT * FROM installations ORDER BY id")
        return [installation_from_row(r) for r in rows]

    async def set_config_errors(self, repo: str, errors: list[str]) -> None:
        if errors:
            self._db.execute(
                "INSERT INTO config_errors (repo, errors, checked_at) VALUES (?,?,?) ON CONFLICT (repo) DO UPDATE"
                " SET errors = excluded.errors, checked_at = excluded.checked_at",
                (repo, json.dumps(errors), self._clock()))
        else:
            self._db.execute("DELETE FROM config_errors WHERE repo = ?", (repo,))

    async def config_errors(self) -> dict[str, list[str]]:
        return {r["repo"]: json.loads(r["errors"]) for r in self._db.execute("SELECT * FROM config_errors")}

    # -- dashboard reads (plain SQL, no SQLite-only functions) -------------------------------------------

    async def latest_decisions(self, repo: str | None = None, since: float | None = None,
                               limit: int = 10000) -> list[DecisionRecord]:
        """The newest decision of every issue (optionally of one repo, made at or after `since`), newest first."""
        return [decision_from_row(r) for r in self._db.execute(*latest_decisions_query("?", repo, since, limit))]

    async def all_feedback(self, repo: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT repo, number, kind, target, actor, created_at FROM feedback"
        rows = (self._db.execute(sql + " WHERE repo = ? ORDER BY id", (repo,)) if repo is not None
                else self._db.execute(sql + " ORDER BY id"))
        return [dict(r) for r in rows]

    async def issue_states(self, repo: str | None = None) -> list[IssueState]:
        rows = (self._db.execute("SELECT * FROM issue_state WHERE repo = ?", (repo,)) if repo is not None
                else self._db.execute("SELECT * FROM issue_state"))
        return [issue_state_from_row(r) for r in rows]

    async def issue_deliveries(self, repo: str, number: int, limit: int = 20) -> list[Delivery]:
        rows = self._db.execute("SELECT * FROM deliveries WHERE issue_key = ? ORDER BY received_at DESC LIMIT ?",
                                (issue_key(repo, number), limit))
        return [delivery_from_row(r) for r in rows]


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(database_url: str) -> bool:
    return database_url.startswith(POSTGRES_SCHEMES)


def sqlite_path(database_url: str) -> str:
    """The file of a sqlite:///relative/path or sqlite:////absolute/path URL (empty: in memory)."""
    for prefix in ("sqlite:///", "sqlite://"):
        if database_url.startswith(prefix):
            return database_url[len(prefix):] or ":memory:"
    raise ValueError(f"DATABASE_URL must be sqlite:///PATH or postgresql://…, not {database_url.split(':')[0]}:…")


def open_store(database_url: str, *, pool_size: int = 10) -> Store:
    """The store DATABASE_URL names: SQLite (`sqlite:///path`, the default: one replica) or Postgres
    (`postgresql://user:pass@host/db`: any number of replicas, see bot/app/store_pg.py). Call migrate() next."""
    if is_postgres(database_url):
        from bot.app.store_pg import PostgresStore  # psycopg is only imported when Postgres is used

        return PostgresStore(database_url, pool_size=pool_size)
    return SqliteStore(sqlite_path(database_url))
