"""What to change on one issue, given the core's decision, the issue as GitHub has it now, what the bot did
before and the repository's config. Pure: no I/O, so dry-run, shadow and live share it.

Label rules: only labels the repository allows; never add a label a human removed after the bot added it
(or removed by hand at any time); only ever remove labels the bot itself added; never close anything.
Comment rules: exactly one bot comment, found by its hidden marker; created once, edited only when its text
changes (to a short "cleared" note when an edit leaves nothing to say), extra copies (from a crash or a race)
deleted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bot.app.repo_config import RepoConfig
from bot.comment import MARKER
from bot.stores.deliveries import IssueState


@dataclass(frozen=True)
class BotComment:
    id: int
    body: str


@dataclass(frozen=True)
class CommentAction:
    kind: str                        # create | edit | none
    body: str | None = None
    comment_id: int | None = None


@dataclass(frozen=True)
class Plan:
    add_labels: tuple[str, ...] = ()
    remove_labels: tuple[str, ...] = ()
    comment: CommentAction = CommentAction("none")
    delete_comments: tuple[int, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()      # (label, why it is not added)
    state: IssueState = field(default_factory=lambda: IssueState(repo="", number=0))  # reconciled, before acting

    @property
    def empty(self) -> bool:
        return not (self.add_labels or self.remove_labels or self.comment.kind != "none" or self.delete_comments)

    def as_dict(self) -> dict[str, Any]:
        return {
            "add_labels": list(self.add_labels),
            "remove_labels": list(self.remove_labels),
            "comment": {"action": self.comment.kind, "comment_id": self.comment.comment_id,
                        "body": self.comment.body},
            "delete_comments": list(self.delete_comments),
            "skipped": [{"label": label, "why": why} for label, why in self.skipped],
        }


def sha(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] if text is not None else None


def _ordered(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def reconcile(state: IssueState, current: Iterable[str]) -> IssueState:
    """Fold what happened on GitHub since the bot last acted into its state."""
    now = set(current)
    added = [label for label in state.labels_added if label in now]
    removed_by_human = [label for label in state.labels_added if label not in now]
    confirmed = [label for label in state.labels_pending if label in now and label not in added]
    suppressed = _ordered([*state.labels_suppressed, *removed_by_human])
    return replace(state, labels_added=_ordered([*added, *confirmed]), labels_pending=[],
                   labels_suppressed=suppressed)


def wanted_labels(topics: Sequence[str], config: RepoConfig,
                  repo_labels: Iterable[str] | None) -> tuple[list[str], list[tuple[str, str]]]:
    """Map the core's topic labels to repository labels and keep the allowed ones."""
    existing = set(repo_labels) if repo_labels is not None else None
    wanted: list[str] = []
    skipped: list[tuple[str, str]] = []
    for topic in topics:
        if topic == "needs-info" and not config.enabled("needs_info"):
            skipped.append((topic, "needs_info is off in the repo config"))
            continue
        name = config.repo_label(topic)
        if name is None:
            skipped.append((topic, "mapped to null in the repo config"))
            continue
        if config.allow is not None and name not in config.allow:
            skipped.append((name, "not in labels.allow"))
            continue
        if config.allow is None and existing is not None and name not in existing:
            skipped.append((name, "no such label in the repository"))
            continue
        if name not in wanted:
            wanted.append(name)
    return wanted, skipped


def plan(*, topics: Sequence[str], comment: str | None, current_labels: Sequence[str],
         bot_comments: Sequence[BotComment], state: IssueState, config: RepoConfig,
         repo_labels: Iterable[str] | None = None, cleared: str | None = None) -> Plan:
    """`cleared`: the text an existing bot comment gets when `comment` is None (the issue was edited and
    nothing is left to say); without it an existing comment is left as it is."""
    state = reconcile(state, current_labels)
    current = set(current_labels)
    skipped: list[tuple[str, str]] = []
    add: list[str] = []
    remove: list[str] = []
    if config.enabled("labels"):
        wanted, skipped = wanted_labels(topics, config, repo_labels)
        for label in wanted:
            if label in current:
                continue
            if label in state.labels_suppressed:
                skipped.append((label, "a human removed it"))
                continue
            add.append(label)
        remove = [label for label in state.labels_added if label in current and label not in wanted]

    body = comment if config.enabled("comment") else None
    if body is None and cleared is not None and bot_comments and config.enabled("comment"):
        body = cleared
    if body is not None and MARKER not in body:
        body = f"{MARKER}\n{body}"
    ordered = sorted(bot_comments, key=lambda c: c.id)
    keep = next((c for c in ordered if c.id == state.comment_id), ordered[0] if ordered else None)
    extras = tuple(c.id for c in ordered if keep is not None and c.id != keep.id)
    if body is None:
        action = CommentAction("none", comment_id=keep.id if keep else None)
    elif keep is None and state.comment_id is not None:
        action = CommentAction("none")
        skipped.append(("comment", "a human deleted the bot comment (/triage posts it again)"))
    elif keep is None:
        action = CommentAction("create", body=body)
    elif keep.body.strip() != body.strip():
        action = CommentAction("edit", body=body, comment_id=keep.id)
    else:
        action = CommentAction("none", comment_id=keep.id)
    if keep is not None:
        state = replace(state, comment_id=keep.id, comment_sha=sha(keep.body))
    return Plan(add_labels=tuple(add), remove_labels=tuple(remove), comment=action, delete_comments=extras,
                skipped=tuple(skipped), state=state)
