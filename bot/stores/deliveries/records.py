"""The contract of the delivery store: what the server, the worker and the dashboard may ask of it, and the
records it returns. Backends: bot/stores/deliveries/sqlite.py (one replica), …/postgres.py (several)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
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


# ------------------------------------------------------------- the dashboard's read model (summary.py)

# The queue's order: what a maintainer can act on first. An issue takes the first tier its reasons put it in.
PRIORITIES = (
    ("the bot could not act", "a failed or parked delivery: the issue got nothing"),
    ("a diagnosis to confirm", "only low-confidence findings: a quick check settles it"),
    ("an error nobody diagnosed", "a bug with an error (or a complete report) and no rule matched"),
    ("no diagnosis, details missing", "no rule matched and the bot asked the reporter for details"),
    ("waiting on the reporter", "diagnosed or not a bug, but the bot asked for details"),
)


@dataclass(frozen=True)
class IssueSummary:
    """An issue's newest decision, flattened: what the overview, the queue and the catalog show of it."""

    repo: str
    number: int
    decision_id: int
    title: str
    url: str | None
    opened: float                       # when the issue was opened (the decision's time when unknown)
    triaged: float
    state: str = "open"
    kind: str | None = None
    labels: tuple[str, ...] = ()        # the bot's topic labels
    issue_labels: tuple[str, ...] = ()  # the labels on the issue when the bot read it
    rules: tuple[str, ...] = ()         # the findings' rules, most confident first
    top_title: str | None = None        # the first finding's title
    max_confidence: float | None = None
    needs_info: int = 0
    candidates: int = 0
    error: str | None = None            # "Type: first line" of the root cause
    signature_key: str | None = None
    signature_text: str | None = None
    failed: bool = False                # applying the decision failed
    parked: bool = False                # a delivery of the issue is parked
    reasons: tuple[str, ...] = ()       # why it is in the queue (QUEUE_REASONS), empty when it is not
    queue_tier: int | None = None       # index in PRIORITIES; None: not in the queue
    finding_labels: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[str, int]:
        return self.repo, self.number

    @property
    def top_rule(self) -> str | None:
        return self.rules[0] if self.rules else None

    @property
    def diagnosed(self) -> bool:
        return bool(self.rules)

    @property
    def priority_name(self) -> str | None:
        return PRIORITIES[self.queue_tier][0] if self.queue_tier is not None else None


@dataclass(frozen=True)
class QueueQuery:
    """The queue page's filters, order and page."""

    repo: str | None = None
    label: str | None = None
    reason: str | None = None
    opened_since: float | None = None
    sort: str = "priority"
    limit: int = 50
    offset: int = 0


@dataclass
class Disagreement:
    """Per rule, how often maintainers disagreed with it, and the duplicate links they rejected or confirmed."""

    label_removed: Counter[str] = field(default_factory=Counter)
    suppressed: Counter[str] = field(default_factory=Counter)
    suppressed_gone: Counter[str] = field(default_factory=Counter)   # suppressed, so no longer a finding
    not_duplicate: Counter[str] = field(default_factory=Counter)     # by the rule that supported the link
    rejected: int = 0
    rejected_issues_without_links: int = 0
    confirmed: int = 0


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
    async def delivery_counts(self, done: bool = True) -> dict[str, int]: ...
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
    async def issue_deliveries(self, repo: str, number: int, limit: int = 20) -> list[Delivery]: ...
    # the error pages' issues (bot/dashboard/errors.py): the newest decision of every issue
    async def latest_decisions(self, repo: str | None = None, since: float | None = None,
                               limit: int = 10000) -> list[DecisionRecord]: ...
    # the dashboard's read model (bot/stores/deliveries/summary.py), kept up to date by the writes above
    async def set_low_confidence(self, threshold: float) -> int: ...
    async def dashboard_counts(self) -> dict[str, int]: ...
    async def issue_summary(self, repo: str, number: int) -> IssueSummary | None: ...
    async def queue(self, query: QueueQuery) -> tuple[list[IssueSummary], int]: ...
    async def days(self, first: int, last: int) -> list[tuple[int, str, int]]: ...
    async def cause_issues(self, causes: Sequence[tuple[str, float, float]],
                           limit: int = 5) -> list[list[IssueSummary]]: ...
    async def newest_opened(self) -> float | None: ...
    async def rule_issues(self, rule: str, limit: int = 200) -> list[IssueSummary]: ...
    async def disagreement(self) -> Disagreement: ...
