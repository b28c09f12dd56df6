"""The contract of the delivery store: what the server, the worker and the dashboard may ask of it, and the
records it returns. Backends: bot/stores/deliveries/sqlite.py (one replica), …/postgres.py (several)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

# A delivery is queued -> running -> done, or back to queued (with not_before) after a failure, or parked
# after too many failures. A redelivery of a parked delivery (same X-GitHub-Delivery) queues it again.
QUEUED, RUNNING, DONE, PARKED = "queued", "running", "done", "parked"


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


class DeliveryStore(Protocol):
    """The delivery queue, per-issue bot state, decisions, feedback, installations and config errors."""

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
