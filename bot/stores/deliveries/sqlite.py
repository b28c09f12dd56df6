"""The delivery store in one SQLite file (WAL mode): the default, for one replica. All its SQL lives here.

Migrations: `MIGRATIONS` (bot/stores/migrations.py says how they are applied and recorded).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bot.stores.deliveries import summary
from bot.stores.deliveries.records import DONE, PARKED, QUEUED, RUNNING, DecisionRecord, Delivery, IssueState
from bot.stores.deliveries.rows import (
    MAX_ERROR_CHARS,
    GroupCommit,
    claimed_delivery,
    decision_from_row,
    decisions_query,
    delivery_from_row,
    empty_counts,
    installation_from_row,
    installation_repos,
    issue_key,
    issue_state_from_row,
    issue_state_params,
    latest_decisions_query,
    parked_error,
    save_issue_state_sql,
)
from bot.stores.deliveries.summary import (
    DISAGREEMENT_COUNTS,
    NEWEST_OPENED,
    PARKED_OF,
    SUMMARY_OF,
    UNFINISHED_COUNTS,
    Disagreement,
    IssueSummary,
    QueueQuery,
    candidate_links,
    cause_issues_sql,
    days_sql,
    disagreement,
    disagreement_from_counts,
    disagreement_sql,
    disagreement_writes,
    issue_inputs_sql,
    queue_count_sql,
    queue_sql,
    requeued,
    rule_issues_sql,
    state_writes,
    summarize,
    summary_from_row,
    summary_writes,
    tier_writes,
)
from bot.stores.migrations import Migration, migrate_sqlite, sqlite_table_exists

STORE = "deliveries"

BUSY_TIMEOUT_MS = 30000  # how long an SQLite statement waits for another process's write lock

BEFORE_READ_MODEL = 6    # MIGRATIONS[:BEFORE_READ_MODEL]: a deployment from before the dashboard's read model
MIGRATIONS: tuple[Migration, ...] = (
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
    # 7: the dashboard's read model (bot/stores/deliveries/summary.py): a summary row per issue, its findings,
    # duplicate links and counters, kept up to date as decisions are recorded
    """
    CREATE TABLE issue_summary (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        decision_id INTEGER NOT NULL,
        title TEXT NOT NULL,
        url TEXT,
        opened REAL NOT NULL,
        triaged REAL NOT NULL,
        state TEXT NOT NULL DEFAULT 'open',
        kind TEXT,
        labels TEXT NOT NULL DEFAULT '[]',
        issue_labels TEXT NOT NULL DEFAULT '[]',
        rules TEXT NOT NULL DEFAULT '[]',
        finding_labels TEXT NOT NULL DEFAULT '[]',
        top_rule TEXT,
        top_title TEXT,
        max_confidence REAL,
        needs_info INTEGER NOT NULL DEFAULT 0,
        candidates INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        signature_key TEXT,
        signature_text TEXT,
        failed INTEGER NOT NULL DEFAULT 0,
        parked INTEGER NOT NULL DEFAULT 0,
        reasons TEXT NOT NULL DEFAULT '',
        queue_tier INTEGER,
        PRIMARY KEY (repo, number)
    );
    CREATE INDEX issue_summary_opened ON issue_summary (opened);
    CREATE INDEX issue_summary_queue ON issue_summary (state, queue_tier, opened DESC, number DESC)
        WHERE queue_tier IS NOT NULL;
    CREATE INDEX issue_summary_queue_age ON issue_summary (state, opened DESC, number DESC)
        WHERE queue_tier IS NOT NULL;
    CREATE INDEX issue_summary_queue_repo ON issue_summary (state, repo, number DESC) WHERE queue_tier IS NOT NULL;
    CREATE TABLE issue_findings (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        rule TEXT NOT NULL,
        labels TEXT NOT NULL,
        opened REAL NOT NULL,
        PRIMARY KEY (repo, number, rule)
    );
    CREATE INDEX issue_findings_rule ON issue_findings (rule, opened, number);
    CREATE TABLE candidate_links (
        repo TEXT NOT NULL,
        number INTEGER NOT NULL,
        target INTEGER NOT NULL,
        rule TEXT,
        PRIMARY KEY (repo, number, target)
    );
    CREATE TABLE dashboard_counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
    CREATE TABLE dashboard_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE dashboard_days (day INTEGER NOT NULL, name TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (day, name));
    CREATE INDEX issue_summary_top_rule ON issue_summary (top_rule, opened, number);
    CREATE INDEX issue_summary_signature ON issue_summary (signature_key, opened, number) WHERE top_rule IS NULL;
    CREATE INDEX feedback_kind ON feedback (kind);
    CREATE INDEX issue_state_labels_removed ON issue_state (repo, number) WHERE labels_suppressed <> '[]';
    """,
    # 8: the read model filled from the decisions recorded before it
    lambda db: summary.backfill(db, "?"),
    # 9: maintainers' disagreement kept per (kind, rule) as feedback, decisions and removed labels change
    """
    CREATE TABLE disagreement_counts (
        kind TEXT NOT NULL, rule TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (kind, rule)
    );
    """,
    # 10: filled from the feedback and removed labels recorded before it
    lambda db: summary.backfill_disagreement(db, "?"),
)



def adopt(db: sqlite3.Connection) -> int:
    """A database made before store_versions recorded its migrations in schema_migrations (the same numbers)."""
    if not sqlite_table_exists(db, "schema_migrations"):
        return 0
    done = {r[0] for r in db.execute("SELECT version FROM schema_migrations")}
    version = 0
    while version + 1 in done:
        version += 1
    return version


class SqliteDeliveryStore:
    """The embedded store. One connection, used from the event loop thread (every statement is short)."""

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL", clock=time.time,
                 low_confidence: float = summary.LOW_CONFIDENCE) -> None:
        self.path = str(path)
        self.low_confidence = low_confidence
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
        return migrate_sqlite(self._db, STORE, MIGRATIONS, adopt=adopt, clock=self._clock)

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
                    self._requeue(row["repo"], row["issue_number"])
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
        db = self._db
        await self._begin_immediate()
        try:
            parked = self._update_owned(
                "UPDATE deliveries SET status = ?, last_error = ?, finished_at = ?, lease_until = NULL",
                (PARKED, error[:MAX_ERROR_CHARS], self._clock()), delivery_id, worker)
            if parked:
                row = db.execute("SELECT repo, issue_number FROM deliveries WHERE id = ?", (delivery_id,)).fetchone()
                self._requeue(row["repo"], row["issue_number"])
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return parked

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

    async def delivery_counts(self, done: bool = True) -> dict[str, int]:
        """Deliveries per status; without `done` only the unfinished and parked ones (an index range each, where
        counting the done ones reads them all)."""
        if not done:
            counts = dict.fromkeys((QUEUED, RUNNING, PARKED), 0)
            for row in self._db.execute(UNFINISHED_COUNTS):
                counts[row[0]] = row[1]
            return counts
        counts = empty_counts()
        for row in self._db.execute("SELECT status, COUNT(*) FROM deliveries GROUP BY status"):
            counts[row[0]] = row[1]
        return counts

    # -- per-issue state ------------------------------------------------------------------------------

    async def issue_state(self, repo: str, number: int) -> IssueState | None:
        row = self._db.execute("SELECT * FROM issue_state WHERE repo = ? AND number = ?", (repo, number)).fetchone()
        return issue_state_from_row(row) if row else None

    async def save_issue_state(self, state: IssueState) -> None:
        db = self._db
        await self._begin_immediate()
        try:
            before = self._issue_disagreement(state.repo, state.number)
            db.execute(save_issue_state_sql("?"), issue_state_params(state, self._clock()))
            old = self._summary(state.repo, state.number)
            if old is not None:
                self._run(state_writes("?", old, state.state))
            self._run(disagreement_writes("?", before, self._issue_disagreement(state.repo, state.number)))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- decisions ------------------------------------------------------------------------------------

    async def record_decision(self, delivery_id: str | None, repo: str, number: int, mode: str, reason: str,
                              plan: dict[str, Any], applied: bool) -> None:
        """The decision, and the issue's summary for the dashboard, in one transaction."""
        db, now = self._db, self._clock()
        await self._begin_immediate()
        try:
            cur = db.execute(
                "INSERT INTO decisions (delivery_id, repo, number, mode, reason, plan, applied, created_at)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (delivery_id, repo, number, mode, reason, json.dumps(plan), int(applied), now))
            self._store_summary(DecisionRecord(cur.lastrowid, delivery_id, repo, number, mode, reason, plan,
                                               bool(applied), now))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def decisions(self, repo: str | None = None, number: int | None = None,
                        limit: int = 100) -> list[DecisionRecord]:
        return [decision_from_row(r) for r in self._db.execute(*decisions_query("?", repo, number, limit))]

    # -- feedback, installations, config errors -------------------------------------------------------

    async def add_feedback(self, repo: str, number: int, kind: str, target: int | None, actor: str | None,
                           delivery_id: str | None) -> None:
        """The feedback, and maintainers' disagreement for the dashboard, in one transaction."""
        db = self._db
        await self._begin_immediate()
        try:
            before = self._issue_disagreement(repo, number)
            db.execute("INSERT INTO feedback (repo, number, kind, target, actor, delivery_id, created_at)"
                       " VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                       (repo, number, kind, target, actor, delivery_id, self._clock()))
            self._run(disagreement_writes("?", before, self._issue_disagreement(repo, number)))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

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

    # -- the dashboard's read model (bot/stores/deliveries/summary.py) ----------------------------------------

    def _run(self, statements: list[tuple[str, tuple]]) -> None:
        for sql, params in statements:
            self._db.execute(sql, params)

    def _summary(self, repo: str, number: int) -> IssueSummary | None:
        row = self._db.execute(SUMMARY_OF.format(ph="?"), (repo, number)).fetchone()
        return summary_from_row(row) if row else None

    def _parked(self, repo: str, number: int) -> bool:
        return self._db.execute(PARKED_OF.format(ph="?"), (issue_key(repo, number),)).fetchone() is not None

    def _store_summary(self, record: DecisionRecord) -> None:
        old = self._summary(record.repo, record.number)
        if old is not None and old.decision_id > record.id:
            return
        row = self._db.execute("SELECT state FROM issue_state WHERE repo = ? AND number = ?",
                               (record.repo, record.number)).fetchone()
        new = summarize(record, row["state"] if row else "open", self._parked(record.repo, record.number),
                        self.low_confidence)
        before = self._issue_disagreement(record.repo, record.number)
        self._run(summary_writes("?", old, new, candidate_links(record)))
        self._run(disagreement_writes("?", before, self._issue_disagreement(record.repo, record.number)))

    def _issue_disagreement(self, repo: str, number: int) -> Disagreement:
        """One issue's part of maintainers' disagreement, from its rows as they are now."""
        db, key = self._db, (repo, number)
        inputs = db.execute(issue_inputs_sql("?"), key * 2).fetchone()
        feedback, removed = inputs["feedback"] > 0, inputs["removed"] not in (None, "[]")
        if not (feedback or removed):
            return Disagreement()
        suppressed, not_duplicate, labels_removed, confirmed = disagreement_sql("?")
        return disagreement(db.execute(suppressed, key).fetchall() if feedback else [],
                            db.execute(not_duplicate, key).fetchall() if feedback else [],
                            db.execute(labels_removed, key).fetchall() if removed else [],
                            db.execute(confirmed, key).fetchone()["n"] if feedback else 0)

    def _requeue(self, repo: str | None, number: int | None) -> None:
        """After a delivery of the issue was parked: its summary's parked flag, reasons and tier again."""
        old = self._summary(repo, number) if repo and number is not None else None
        if old is not None:
            new = requeued(IssueSummary(**{**old.__dict__, "parked": self._parked(old.repo, old.number)}),
                           self.low_confidence)
            self._run(tier_writes("?", old, new))

    async def set_low_confidence(self, threshold: float) -> int:
        """Use another low-confidence threshold for the queue: every summary's reasons again when it changed;
        returns how many moved."""
        self.low_confidence = threshold
        row = self._db.execute("SELECT value FROM dashboard_meta WHERE key = 'low_confidence'").fetchone()
        if row is not None and float(row["value"]) == threshold:
            return 0
        db, moved = self._db, 0
        await self._begin_immediate()
        try:
            for r in db.execute("SELECT * FROM issue_summary WHERE max_confidence IS NOT NULL").fetchall():
                old = summary_from_row(r)
                writes = tier_writes("?", old, requeued(old, threshold))
                self._run(writes)
                moved += bool(writes)
            db.execute("INSERT INTO dashboard_meta (key, value) VALUES ('low_confidence', ?) ON CONFLICT (key)"
                       " DO UPDATE SET value = excluded.value", (repr(threshold),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return moved

    async def dashboard_counts(self) -> dict[str, int]:
        return {r["name"]: r["n"] for r in self._db.execute("SELECT name, n FROM dashboard_counts WHERE n <> 0")}

    async def issue_summary(self, repo: str, number: int) -> IssueSummary | None:
        return self._summary(repo, number)

    async def queue(self, query: QueueQuery) -> tuple[list[IssueSummary], int]:
        """One page of the queue and the number of issues in it with these filters."""
        rows = [summary_from_row(r) for r in self._db.execute(*queue_sql("?", query))]
        count = queue_count_sql("?", query)
        if count is None:
            row = self._db.execute("SELECT n FROM dashboard_counts WHERE name = 'queue'").fetchone()
            return rows, row["n"] if row else 0
        return rows, self._db.execute(*count).fetchone()["n"]

    async def days(self, first: int, last: int) -> list[tuple[int, str, int]]:
        return [(r["day"], r["name"], r["n"]) for r in self._db.execute(days_sql("?"), (first, last))]

    async def cause_issues(self, causes: Sequence[tuple[str, float, float]],
                           limit: int = 5) -> list[list[IssueSummary]]:
        out: list[list[IssueSummary]] = [[] for _ in causes]
        if causes:
            for r in self._db.execute(*cause_issues_sql("?", causes, limit)):
                out[r["part"]].append(summary_from_row(r))
        return out

    async def newest_opened(self) -> float | None:
        return self._db.execute(NEWEST_OPENED).fetchone()["t"]

    async def rule_issues(self, rule: str, limit: int = 200) -> list[IssueSummary]:
        return [summary_from_row(r) for r in self._db.execute(rule_issues_sql("?"), (rule, limit))]

    async def disagreement(self) -> Disagreement:
        return disagreement_from_counts(self._db.execute(DISAGREEMENT_COUNTS))

    async def latest_decisions(self, repo: str | None = None, since: float | None = None,
                               limit: int = 10000) -> list[DecisionRecord]:
        """The newest decision of every issue (optionally of one repo, made at or after `since`), newest first."""
        return [decision_from_row(r) for r in self._db.execute(*latest_decisions_query("?", repo, since, limit))]

    async def issue_deliveries(self, repo: str, number: int, limit: int = 20) -> list[Delivery]:
        rows = self._db.execute("SELECT * FROM deliveries WHERE issue_key = ? ORDER BY received_at DESC LIMIT ?",
                                (issue_key(repo, number), limit))
        return [delivery_from_row(r) for r in rows]
