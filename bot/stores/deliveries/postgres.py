"""The delivery store in Postgres: the same `DeliveryStore` contract as SQLite, shared by several server replicas.

Work sharing:
  * a delivery is claimed with `SELECT … FOR UPDATE SKIP LOCKED`, so replicas never wait on each other's
    candidate rows and never hand out the same delivery twice;
  * the lease is the delivery row itself (`claimed_by`, `lease_until`): a replica that dies stops renewing,
    the lease runs out and any replica claims the delivery again; a late answer from the old owner is fenced
    off by `claimed_by`;
  * per-issue serialisation: while claiming, a transaction-scoped advisory lock on the issue key makes
    "no other delivery of this issue is running, none older is ready" and "mark this one running" one step
    across replicas (the row locks alone cannot: the other delivery of the same issue is a different row).

Times are epoch seconds from the replica's clock, as in SQLite: replicas need synchronised clocks (NTP);
a lease (120 s by default) tolerates seconds of skew.

Migrations: `MIGRATIONS` (bot/stores/migrations.py says how they are applied and recorded).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

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
from bot.stores.migrations import Migration, migrate_postgres, postgres_table_exists

STORE = "deliveries"
CLAIM_BATCH = 16                          # candidate rows locked per claim attempt
INSERT_ROWS = 500                         # deliveries per multi-row INSERT of one group commit

BEFORE_READ_MODEL = 5    # MIGRATIONS[:BEFORE_READ_MODEL]: a deployment from before the dashboard's read model
MIGRATIONS: tuple[Migration, ...] = (
    # 1: the delivery queue
    """
    CREATE TABLE deliveries (
        id TEXT PRIMARY KEY,
        event TEXT NOT NULL,
        action TEXT,
        repo TEXT,
        issue_number BIGINT,
        issue_key TEXT,
        installation_id BIGINT,
        payload TEXT NOT NULL,
        received_at DOUBLE PRECISION NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        not_before DOUBLE PRECISION NOT NULL DEFAULT 0,
        claimed_by TEXT,
        lease_until DOUBLE PRECISION,
        last_error TEXT,
        finished_at DOUBLE PRECISION,
        redeliveries INTEGER NOT NULL DEFAULT 0
    );
    -- only unfinished deliveries are ever scanned by claim: keep that index small
    CREATE INDEX deliveries_ready ON deliveries (received_at) WHERE status IN ('queued', 'running');
    CREATE INDEX deliveries_issue ON deliveries (issue_key, status) WHERE status IN ('queued', 'running');
    CREATE INDEX deliveries_status ON deliveries (status, received_at);
    """,
    # 2: what the bot did and knows per issue
    """
    CREATE TABLE issue_state (
        repo TEXT NOT NULL,
        number BIGINT NOT NULL,
        labels_added TEXT NOT NULL DEFAULT '[]',
        labels_pending TEXT NOT NULL DEFAULT '[]',
        labels_suppressed TEXT NOT NULL DEFAULT '[]',
        comment_id BIGINT,
        comment_sha TEXT,
        last_decision TEXT,
        state TEXT NOT NULL DEFAULT 'open',
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (repo, number)
    );
    """,
    # 3: every plan the bot made, applied or not
    """
    CREATE TABLE decisions (
        id BIGSERIAL PRIMARY KEY,
        delivery_id TEXT,
        repo TEXT NOT NULL,
        number BIGINT NOT NULL,
        mode TEXT NOT NULL,
        reason TEXT NOT NULL,
        plan TEXT NOT NULL,
        applied BOOLEAN NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX decisions_issue ON decisions (repo, number);
    """,
    # 4: maintainer feedback, installations, config errors
    """
    CREATE TABLE feedback (
        id BIGSERIAL PRIMARY KEY,
        repo TEXT NOT NULL,
        number BIGINT NOT NULL,
        kind TEXT NOT NULL,
        target BIGINT,
        actor TEXT,
        delivery_id TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        UNIQUE (delivery_id, kind, target)
    );
    CREATE INDEX feedback_issue ON feedback (repo, number);
    CREATE TABLE installations (
        id BIGINT PRIMARY KEY,
        account TEXT,
        target_type TEXT,
        repos TEXT NOT NULL DEFAULT '[]',
        suspended BOOLEAN NOT NULL DEFAULT FALSE,
        deleted BOOLEAN NOT NULL DEFAULT FALSE,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE TABLE config_errors (
        repo TEXT PRIMARY KEY,
        errors TEXT NOT NULL,
        checked_at DOUBLE PRECISION NOT NULL
    );
    """,
    # 5: when a comment POST went out whose answer never came (GitHub may still create that comment)
    """
    ALTER TABLE issue_state ADD COLUMN comment_posted_at DOUBLE PRECISION;
    """,
    # 6: the dashboard's read model (bot/stores/deliveries/summary.py): a summary row per issue, its findings,
    # duplicate links and counters, kept up to date as decisions are recorded
    """
    CREATE TABLE issue_summary (
        repo TEXT NOT NULL,
        number BIGINT NOT NULL,
        decision_id BIGINT NOT NULL,
        title TEXT NOT NULL,
        url TEXT,
        opened DOUBLE PRECISION NOT NULL,
        triaged DOUBLE PRECISION NOT NULL,
        state TEXT NOT NULL DEFAULT 'open',
        kind TEXT,
        labels TEXT NOT NULL DEFAULT '[]',
        issue_labels TEXT NOT NULL DEFAULT '[]',
        rules TEXT NOT NULL DEFAULT '[]',
        finding_labels TEXT NOT NULL DEFAULT '[]',
        top_rule TEXT,
        top_title TEXT,
        max_confidence DOUBLE PRECISION,
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
        number BIGINT NOT NULL,
        rule TEXT NOT NULL,
        labels TEXT NOT NULL,
        opened DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (repo, number, rule)
    );
    CREATE INDEX issue_findings_rule ON issue_findings (rule, opened, number);
    CREATE TABLE candidate_links (
        repo TEXT NOT NULL,
        number BIGINT NOT NULL,
        target BIGINT NOT NULL,
        rule TEXT,
        PRIMARY KEY (repo, number, target)
    );
    CREATE TABLE dashboard_counts (name TEXT PRIMARY KEY, n BIGINT NOT NULL);
    CREATE TABLE dashboard_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE dashboard_days (day INTEGER NOT NULL, name TEXT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (day, name));
    CREATE INDEX issue_summary_top_rule ON issue_summary (top_rule, opened, number);
    CREATE INDEX issue_summary_signature ON issue_summary (signature_key, opened, number) WHERE top_rule IS NULL;
    CREATE INDEX feedback_kind ON feedback (kind);
    CREATE INDEX issue_state_labels_removed ON issue_state (repo, number) WHERE labels_suppressed <> '[]';
    """,
    # 7: the read model filled from the decisions recorded before it
    lambda conn: summary.backfill(conn, "%s"),
    # 8: maintainers' disagreement kept per (kind, rule) as feedback, decisions and removed labels change
    """
    CREATE TABLE disagreement_counts (
        kind TEXT NOT NULL, rule TEXT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (kind, rule)
    );
    """,
    # 9: filled from the feedback and removed labels recorded before it
    lambda conn: summary.backfill_disagreement(conn, "%s"),
)


# before store_versions, schema_migrations numbered this store's migrations 1-4 and 6 (5 made the duplicate
# index's tables, now the dupes store's own migration 1)
LEGACY_VERSIONS = (1, 2, 3, 4, 6)


def adopt(conn) -> int:
    """A schema made before store_versions: its version from the entries of schema_migrations."""
    if not postgres_table_exists(conn, "schema_migrations"):
        return 0
    done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations").fetchall()}
    version = 0
    while version < len(LEGACY_VERSIONS) and LEGACY_VERSIONS[version] in done:
        version += 1
    return version


class PostgresDeliveryStore:
    """A connection pool; every method is one short transaction."""

    def __init__(self, url: str, *, clock=time.time, pool_size: int = 10,
                 low_confidence: float = summary.LOW_CONFIDENCE) -> None:
        self.url = url
        self.low_confidence = low_confidence
        self._clock = clock
        # check: a connection the server dropped (restart, failover, idle timeout) is replaced before use.
        self._pool = AsyncConnectionPool(url, min_size=1, max_size=max(2, pool_size), open=False,
                                         kwargs={"row_factory": dict_row, "autocommit": False},
                                         check=AsyncConnectionPool.check_connection)
        self._opened = False
        self._intake = GroupCommit(self._record_batch)

    async def open(self) -> None:
        if not self._opened:
            await self._pool.open(wait=True, timeout=30)
            self._opened = True

    def _conn(self):
        return self._pool.connection()

    # -- schema ---------------------------------------------------------------------------------------

    async def migrate(self) -> int:
        await self.open()
        return await asyncio.to_thread(migrate_postgres, self.url, STORE, MIGRATIONS, adopt=adopt, clock=self._clock)

    async def close(self) -> None:
        await self._intake.drain()
        if self._opened:
            await self._pool.close()
            self._opened = False

    # -- deliveries -----------------------------------------------------------------------------------

    async def record_delivery(self, delivery_id: str, event: str, action: str | None, repo: str | None,
                              issue_number: int | None, installation_id: int | None, payload: str) -> str:
        return await self._intake.submit((delivery_id, event, action, repo, issue_number, installation_id, payload,
                                          self._clock()))

    async def _record_batch(self, rows: list[tuple]) -> list[str]:
        """Multi-row INSERTs for the whole batch; the ids they did not insert are redeliveries, settled one by
        one (a delivery sent twice in one batch is queued once, then a duplicate). Rows are locked in id order
        so that two batches holding the same ids cannot deadlock."""
        order = sorted(range(len(rows)), key=lambda i: (rows[i][0], i))
        values = [(d, event, action, repo, number, issue_key(repo, number), inst, payload, now, QUEUED, now)
                  for d, event, action, repo, number, inst, payload, now in (rows[i] for i in order)]
        inserted: set[str] = set()
        async with self._conn() as conn:
            for start in range(0, len(values), INSERT_ROWS):
                chunk = values[start:start + INSERT_ROWS]
                inserted |= {r["id"] for r in await (await conn.execute(
                    "INSERT INTO deliveries (id, event, action, repo, issue_number, issue_key, installation_id,"
                    " payload, received_at, status, attempts, not_before) VALUES "
                    + ",".join(["(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,0,%s)"] * len(chunk))
                    + " ON CONFLICT (id) DO NOTHING RETURNING id", [v for row in chunk for v in row])).fetchall()}
            outcomes = [""] * len(rows)
            for i in order:
                delivery_id, _, _, _, _, _, payload, now = rows[i]
                if delivery_id in inserted:
                    inserted.discard(delivery_id)
                    outcomes[i] = "queued"
                else:
                    outcomes[i] = await self._redelivered(conn, delivery_id, payload, now)
            return outcomes

    async def _redelivered(self, conn: AsyncConnection, delivery_id: str, payload: str, now: float) -> str:
        row = await (await conn.execute("SELECT status, attempts FROM deliveries WHERE id = %s FOR UPDATE",
                                        (delivery_id,))).fetchone()
        if row["status"] == PARKED or (row["status"] == QUEUED and row["attempts"] > 0):
            await conn.execute(
                "UPDATE deliveries SET status = %s, attempts = 0, not_before = %s, claimed_by = NULL,"
                " lease_until = NULL, payload = %s, redeliveries = redeliveries + 1 WHERE id = %s",
                (QUEUED, now, payload, delivery_id))
            return "requeued"
        await conn.execute("UPDATE deliveries SET redeliveries = redeliveries + 1 WHERE id = %s", (delivery_id,))
        return "duplicate"

    async def claim(self, worker: str, lease_seconds: float, max_attempts: int) -> Delivery | None:
        """Lease the oldest ready delivery whose issue has no other delivery in flight (see the module doc)."""
        while True:
            async with self._conn() as conn:
                outcome = await self._claim_once(conn, worker, lease_seconds, max_attempts)
            if outcome != "again":
                return outcome  # type: ignore[return-value]

    async def _claim_once(self, conn: AsyncConnection, worker: str, lease_seconds: float,
                          max_attempts: int) -> Delivery | None | str:
        now = self._clock()
        rows = await (await conn.execute(
            "SELECT * FROM deliveries d"
            " WHERE d.status IN ('queued', 'running')"
            "   AND ((d.status = %s AND d.not_before <= %s) OR (d.status = %s AND d.lease_until < %s))"
            "   AND (d.issue_key IS NULL OR NOT EXISTS ("
            "        SELECT 1 FROM deliveries o WHERE o.issue_key = d.issue_key AND o.status = %s"
            "          AND o.lease_until >= %s AND o.id <> d.id))"
            " ORDER BY d.status = 'running' DESC, d.received_at"  # a dead worker's delivery first, as in SQLite
            " LIMIT %s FOR UPDATE OF d SKIP LOCKED",
            (QUEUED, now, RUNNING, now, RUNNING, now, CLAIM_BATCH))).fetchall()
        for row in rows:
            key = row["issue_key"]
            if key is not None:
                got = await (await conn.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0)) AS ok",
                                                (key,))).fetchone()
                if not got["ok"]:
                    continue  # another replica is claiming for this issue right now
                # a fresh snapshot (new statement, lock held): is the issue busy, or is an older delivery due first?
                busy = await (await conn.execute(
                    "SELECT 1 FROM deliveries o WHERE o.issue_key = %s AND o.id <> %s"
                    " AND o.status IN ('queued', 'running')"
                    " AND ((o.status = %s AND o.lease_until >= %s)"
                    "      OR (o.received_at < %s AND ((o.status = %s AND o.not_before <= %s)"
                    "                                  OR (o.status = %s AND o.lease_until < %s))))"
                    " LIMIT 1",
                    (key, row["id"], RUNNING, now, row["received_at"], QUEUED, now, RUNNING, now))).fetchone()
                if busy is not None:
                    continue
            if row["attempts"] >= max_attempts:
                await conn.execute("UPDATE deliveries SET status = %s, claimed_by = NULL, lease_until = NULL,"
                                   " finished_at = %s, last_error = %s WHERE id = %s",
                                   (PARKED, now, parked_error(row), row["id"]))
                await self._requeue(conn, row["repo"], row["issue_number"])
                return "again"
            await conn.execute("UPDATE deliveries SET status = %s, claimed_by = %s, lease_until = %s,"
                               " attempts = attempts + 1 WHERE id = %s",
                               (RUNNING, worker, now + lease_seconds, row["id"]))
            return claimed_delivery(row, worker)
        return None

    async def _update_owned(self, sql: str, params: tuple, delivery_id: str, worker: str) -> bool:
        async with self._conn() as conn:
            cur = await conn.execute(sql + " WHERE id = %s AND claimed_by = %s AND status = %s",
                                     (*params, delivery_id, worker, RUNNING))
            return cur.rowcount == 1

    async def renew(self, delivery_id: str, worker: str, lease_seconds: float) -> bool:
        return await self._update_owned("UPDATE deliveries SET lease_until = %s", (self._clock() + lease_seconds,),
                                        delivery_id, worker)

    async def complete(self, delivery_id: str, worker: str) -> bool:
        return await self._update_owned("UPDATE deliveries SET status = %s, finished_at = %s, lease_until = NULL",
                                        (DONE, self._clock()), delivery_id, worker)

    async def retry(self, delivery_id: str, worker: str, error: str, not_before: float,
                    count_attempt: bool = True) -> bool:
        undo = 0 if count_attempt else 1
        return await self._update_owned(
            "UPDATE deliveries SET status = %s, not_before = %s, last_error = %s, lease_until = NULL,"
            " attempts = attempts - %s", (QUEUED, not_before, error[:MAX_ERROR_CHARS], undo), delivery_id, worker)

    async def park(self, delivery_id: str, worker: str, error: str) -> bool:
        async with self._conn() as conn:
            row = await (await conn.execute(
                "UPDATE deliveries SET status = %s, last_error = %s, finished_at = %s, lease_until = NULL"
                " WHERE id = %s AND claimed_by = %s AND status = %s RETURNING repo, issue_number",
                (PARKED, error[:MAX_ERROR_CHARS], self._clock(), delivery_id, worker, RUNNING))).fetchone()
            if row is not None:
                await self._requeue(conn, row["repo"], row["issue_number"])
            return row is not None

    async def _fetch(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        async with self._conn() as conn:
            return await (await conn.execute(sql, params)).fetchall()

    async def delivery(self, delivery_id: str) -> Delivery | None:
        rows = await self._fetch("SELECT * FROM deliveries WHERE id = %s", (delivery_id,))
        return delivery_from_row(rows[0]) if rows else None

    async def deliveries(self, status: str | None = None, limit: int = 100) -> list[Delivery]:
        if status:
            rows = await self._fetch("SELECT * FROM deliveries WHERE status = %s ORDER BY received_at DESC LIMIT %s",
                                     (status, limit))
        else:
            rows = await self._fetch("SELECT * FROM deliveries ORDER BY received_at DESC LIMIT %s", (limit,))
        return [delivery_from_row(r) for r in rows]

    async def delivery_counts(self, done: bool = True) -> dict[str, int]:
        """Deliveries per status; without `done` only the unfinished and parked ones (an index range each, where
        counting the done ones reads them all)."""
        if not done:
            counts = dict.fromkeys((QUEUED, RUNNING, PARKED), 0)
            for row in await self._fetch(UNFINISHED_COUNTS):
                counts[row["status"]] = row["n"]
            return counts
        counts = empty_counts()
        for row in await self._fetch("SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status"):
            counts[row["status"]] = row["n"]
        return counts

    # -- per-issue state ------------------------------------------------------------------------------

    async def issue_state(self, repo: str, number: int) -> IssueState | None:
        rows = await self._fetch("SELECT * FROM issue_state WHERE repo = %s AND number = %s", (repo, number))
        return issue_state_from_row(rows[0]) if rows else None

    async def save_issue_state(self, state: IssueState) -> None:
        async with self._conn() as conn:
            old = await self._summary(conn, state.repo, state.number, lock=True)
            before = await self._issue_disagreement(conn, state.repo, state.number)
            await conn.execute(save_issue_state_sql("%s"), issue_state_params(state, self._clock()))
            if old is not None:
                await self._run(conn, state_writes("%s", old, state.state))
            await self._run(conn, disagreement_writes(
                "%s", before, await self._issue_disagreement(conn, state.repo, state.number)))

    # -- decisions ------------------------------------------------------------------------------------

    async def record_decision(self, delivery_id: str | None, repo: str, number: int, mode: str, reason: str,
                              plan: dict[str, Any], applied: bool) -> None:
        """The decision, and the issue's summary for the dashboard, in one transaction."""
        now = self._clock()
        async with self._conn() as conn:
            row = await (await conn.execute(
                "INSERT INTO decisions (delivery_id, repo, number, mode, reason, plan, applied, created_at)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
                (delivery_id, repo, number, mode, reason, json.dumps(plan), bool(applied), now))).fetchone()
            record = DecisionRecord(row["id"], delivery_id, repo, number, mode, reason, plan, bool(applied), now)
            old = await self._summary(conn, repo, number, lock=True)
            if old is not None and old.decision_id > record.id:
                return
            state = await (await conn.execute("SELECT state FROM issue_state WHERE repo = %s AND number = %s",
                                              (repo, number))).fetchone()
            new = summarize(record, state["state"] if state else "open", await self._parked(conn, repo, number),
                            self.low_confidence)
            before = await self._issue_disagreement(conn, repo, number)
            await self._run(conn, summary_writes("%s", old, new, candidate_links(record)))
            await self._run(conn, disagreement_writes("%s", before, await self._issue_disagreement(conn, repo, number)))

    async def decisions(self, repo: str | None = None, number: int | None = None,
                        limit: int = 100) -> list[DecisionRecord]:
        return [decision_from_row(r) for r in await self._fetch(*decisions_query("%s", repo, number, limit))]

    # -- feedback, installations, config errors -------------------------------------------------------

    async def add_feedback(self, repo: str, number: int, kind: str, target: int | None, actor: str | None,
                           delivery_id: str | None) -> None:
        """The feedback, and maintainers' disagreement for the dashboard, in one transaction."""
        async with self._conn() as conn:
            await self._lock(conn, repo, number)
            before = await self._issue_disagreement(conn, repo, number)
            await conn.execute(
                "INSERT INTO feedback (repo, number, kind, target, actor, delivery_id, created_at)"
                " VALUES (%s,%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                (repo, number, kind, target, actor, delivery_id, self._clock()))
            await self._run(conn, disagreement_writes("%s", before, await self._issue_disagreement(conn, repo, number)))

    async def feedback(self, repo: str, number: int) -> list[dict[str, Any]]:
        return await self._fetch("SELECT kind, target, actor, created_at FROM feedback WHERE repo = %s"
                                 " AND number = %s ORDER BY id", (repo, number))

    async def upsert_installation(self, installation_id: int, account: str | None, target_type: str | None,
                                  repos: Iterable[str] | None = None, *, add_repos: Iterable[str] = (),
                                  remove_repos: Iterable[str] = (), suspended: bool = False,
                                  deleted: bool = False) -> None:
        async with self._conn() as conn:
            # the row lock serialises concurrent add/remove events of one installation across replicas
            await conn.execute("INSERT INTO installations (id, updated_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                               (installation_id, self._clock()))
            row = await (await conn.execute("SELECT repos FROM installations WHERE id = %s FOR UPDATE",
                                            (installation_id,))).fetchone()
            current = list(repos) if repos is not None else json.loads(row["repos"])
            current = installation_repos(current, add_repos, remove_repos)
            await conn.execute(
                "UPDATE installations SET account = COALESCE(%s, account), target_type = COALESCE(%s, target_type),"
                " repos = %s, suspended = %s, deleted = %s, updated_at = %s WHERE id = %s",
                (account, target_type, json.dumps(current), bool(suspended), bool(deleted), self._clock(),
                 installation_id))

    async def installations(self) -> list[dict[str, Any]]:
        rows = await self._fetch("SELECT * FROM installations ORDER BY id")
        return [installation_from_row(r) for r in rows]

    async def set_config_errors(self, repo: str, errors: list[str]) -> None:
        async with self._conn() as conn:
            if errors:
                await conn.execute(
                    "INSERT INTO config_errors (repo, errors, checked_at) VALUES (%s,%s,%s) ON CONFLICT (repo)"
                    " DO UPDATE SET errors = excluded.errors, checked_at = excluded.checked_at",
                    (repo, json.dumps(errors), self._clock()))
            else:
                await conn.execute("DELETE FROM config_errors WHERE repo = %s", (repo,))

    async def config_errors(self) -> dict[str, list[str]]:
        return {r["repo"]: json.loads(r["errors"]) for r in await self._fetch("SELECT * FROM config_errors")}

    # -- the dashboard's read model (bot/stores/deliveries/summary.py) ----------------------------------------

    @staticmethod
    async def _run(conn: AsyncConnection, statements: list[tuple[str, tuple]]) -> None:
        for sql, params in statements:
            await conn.execute(sql, params)

    @staticmethod
    async def _summary(conn: AsyncConnection, repo: str, number: int, lock: bool = False) -> IssueSummary | None:
        """The issue's summary row; with `lock`, held until the transaction ends. The first summary of an issue has
        no row to lock: an advisory lock on the issue serialises its writers across replicas."""
        if lock:
            await PostgresDeliveryStore._lock(conn, repo, number)
        row = await (await conn.execute(SUMMARY_OF.format(ph="%s") + (" FOR UPDATE" if lock else ""),
                                        (repo, number))).fetchone()
        return summary_from_row(row) if row else None

    @staticmethod
    async def _lock(conn: AsyncConnection, repo: str, number: int) -> None:
        """Serialise the writers of one issue across replicas until the transaction ends."""
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", (issue_key(repo, number),))

    @staticmethod
    async def _issue_disagreement(conn: AsyncConnection, repo: str, number: int) -> Disagreement:
        """One issue's part of maintainers' disagreement, from its rows as they are now."""
        key = (repo, number)
        inputs = await (await conn.execute(issue_inputs_sql("%s"), key * 2)).fetchone()
        feedback, removed = inputs["feedback"] > 0, inputs["removed"] not in (None, "[]")
        if not (feedback or removed):
            return Disagreement()
        suppressed, not_duplicate, labels_removed, confirmed = disagreement_sql("%s")

        async def rows(sql: str, wanted: bool) -> list[Any]:
            return await (await conn.execute(sql, key)).fetchall() if wanted else []
        return disagreement(await rows(suppressed, feedback), await rows(not_duplicate, feedback),
                            await rows(labels_removed, removed),
                            (await rows(confirmed, feedback))[0]["n"] if feedback else 0)

    @staticmethod
    async def _parked(conn: AsyncConnection, repo: str, number: int) -> bool:
        return await (await conn.execute(PARKED_OF.format(ph="%s"), (issue_key(repo, number),))).fetchone() is not None

    async def _requeue(self, conn: AsyncConnection, repo: str | None, number: int | None) -> None:
        """After a delivery of the issue was parked: its summary's parked flag, reasons and tier again."""
        old = await self._summary(conn, repo, number, lock=True) if repo and number is not None else None
        if old is not None:
            new = requeued(IssueSummary(**{**old.__dict__, "parked": await self._parked(conn, old.repo, old.number)}),
                           self.low_confidence)
            await self._run(conn, tier_writes("%s", old, new))

    async def set_low_confidence(self, threshold: float) -> int:
        """Use another low-confidence threshold for the queue: every summary's reasons again when it changed;
        returns how many moved."""
        self.low_confidence = threshold
        moved = 0
        async with self._conn() as conn:
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('dashboard_meta', 1))")
            row = await (await conn.execute("SELECT value FROM dashboard_meta WHERE key = 'low_confidence'")).fetchone()
            if row is not None and float(row["value"]) == threshold:
                return 0
            rows = await (await conn.execute("SELECT * FROM issue_summary WHERE max_confidence IS NOT NULL"
                                             " FOR UPDATE")).fetchall()
            for r in rows:
                old = summary_from_row(r)
                writes = tier_writes("%s", old, requeued(old, threshold))
                await self._run(conn, writes)
                moved += bool(writes)
            await conn.execute("INSERT INTO dashboard_meta (key, value) VALUES ('low_confidence', %s)"
                               " ON CONFLICT (key) DO UPDATE SET value = excluded.value", (repr(threshold),))
        return moved

    async def dashboard_counts(self) -> dict[str, int]:
        return {r["name"]: r["n"] for r in await self._fetch("SELECT name, n FROM dashboard_counts WHERE n <> 0")}

    async def issue_summary(self, repo: str, number: int) -> IssueSummary | None:
        async with self._conn() as conn:
            return await self._summary(conn, repo, number)

    async def queue(self, query: QueueQuery) -> tuple[list[IssueSummary], int]:
        """One page of the queue and the number of issues in it with these filters."""
        async with self._conn() as conn:
            rows = [summary_from_row(r) for r in await (await conn.execute(*queue_sql("%s", query))).fetchall()]
            count = queue_count_sql("%s", query)
            if count is None:
                row = await (await conn.execute("SELECT n FROM dashboard_counts WHERE name = 'queue'")).fetchone()
                return rows, row["n"] if row else 0
            return rows, (await (await conn.execute(*count)).fetchone())["n"]

    async def days(self, first: int, last: int) -> list[tuple[int, str, int]]:
        return [(r["day"], r["name"], r["n"]) for r in await self._fetch(days_sql("%s"), (first, last))]

    async def cause_issues(self, causes: Sequence[tuple[str, float, float]],
                           limit: int = 5) -> list[list[IssueSummary]]:
        out: list[list[IssueSummary]] = [[] for _ in causes]
        if causes:
            for r in await self._fetch(*cause_issues_sql("%s", causes, limit)):
                out[r["part"]].append(summary_from_row(r))
        return out

    async def newest_opened(self) -> float | None:
        return (await self._fetch(NEWEST_OPENED))[0]["t"]

    async def rule_issues(self, rule: str, limit: int = 200) -> list[IssueSummary]:
        return [summary_from_row(r) for r in await self._fetch(rule_issues_sql("%s"), (rule, limit))]

    async def disagreement(self) -> Disagreement:
        return disagreement_from_counts(await self._fetch(DISAGREEMENT_COUNTS))

    async def latest_decisions(self, repo: str | None = None, since: float | None = None,
                               limit: int = 10000) -> list[DecisionRecord]:
        """The newest decision of every issue (optionally of one repo, made at or after `since`), newest first."""
        return [decision_from_row(r) for r in await self._fetch(*latest_decisions_query("%s", repo, since, limit))]

    async def issue_deliveries(self, repo: str, number: int, limit: int = 20) -> list[Delivery]:
        rows = await self._fetch("SELECT * FROM deliveries WHERE issue_key = %s ORDER BY received_at DESC LIMIT %s",
                                 (issue_key(repo, number), limit))
        return [delivery_from_row(r) for r in rows]
