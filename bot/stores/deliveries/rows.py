"""What both delivery-store backends share: row mapping, pure helpers, the queries that differ only in the
placeholder, and the group commit of webhook intake. SQL that differs by dialect stays in each backend.
A row is an sqlite3.Row or a psycopg dict row; both are read by column name."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from bot.stores.deliveries.records import DONE, PARKED, QUEUED, RUNNING, DecisionRecord, Delivery, IssueState

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
    """The upsert of `DeliveryStore.save_issue_state`; `ph` is the driver's placeholder (`?` or `%s`)."""
    return ("INSERT INTO issue_state (repo, number, labels_added, labels_pending, labels_suppressed, comment_id,"
            f" comment_sha, last_decision, state, updated_at, comment_posted_at) VALUES ({','.join([ph] * 11)})"
            " ON CONFLICT (repo, number) DO UPDATE SET labels_added = excluded.labels_added,"
            " labels_pending = excluded.labels_pending, labels_suppressed = excluded.labels_suppressed,"
            " comment_id = excluded.comment_id, comment_sha = excluded.comment_sha,"
            " last_decision = excluded.last_decision, state = excluded.state, updated_at = excluded.updated_at,"
            " comment_posted_at = excluded.comment_posted_at")


def decisions_query(ph: str, repo: str | None, number: int | None, limit: int) -> tuple[str, tuple]:
    """SQL and parameters of `DeliveryStore.decisions`; `ph` is the driver's placeholder (`?` or `%s`)."""
    filters = [(column, value) for column, value in (("repo", repo), ("number", number)) if value is not None]
    where = " WHERE " + " AND ".join(f"{column} = {ph}" for column, _ in filters) if filters else ""
    return (f"SELECT * FROM decisions{where} ORDER BY id DESC LIMIT {ph}",
            (*(value for _, value in filters), limit))


def latest_decisions_query(ph: str, repo: str | None, since: float | None, limit: int) -> tuple[str, tuple]:
    """SQL and parameters of `DeliveryStore.latest_decisions` (the newest decision of every issue, newest first)."""
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
