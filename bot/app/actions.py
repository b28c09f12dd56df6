"""Reading the issue back from GitHub and carrying out a Plan. The only module that writes to GitHub.

Writes: add labels (one call), remove labels the bot added, create / edit / delete the bot's own comment.
Nothing here closes, locks or edits an issue. State is saved around every write so that a crash between
the write and the save is recognised on the next attempt (pending labels, the comment found by its marker).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Any

import gidgethub

from bot.app.plan import BotComment, Plan, sha
from bot.app.repo_config import CONFIG_PATH, DEFAULT, RepoConfig, decode_contents, parse_config
from bot.comment import MARKER
from bot.stores.deliveries import DeliveryStore, IssueState

log = logging.getLogger("vllm_triage.actions")


@dataclass(frozen=True)
class IssueView:
    number: int
    title: str
    body: str
    labels: tuple[str, ...]
    state: str
    is_pull_request: bool = False
    created_at: str = ""
    url: str | None = None

    @classmethod
    def from_api(cls, issue: dict[str, Any]) -> IssueView:
        labels = tuple(lb["name"] if isinstance(lb, dict) else str(lb) for lb in issue.get("labels") or ())
        return cls(number=int(issue["number"]), title=str(issue.get("title") or ""),
                   body=str(issue.get("body") or ""), labels=labels, state=str(issue.get("state") or "open"),
                   is_pull_request="pull_request" in issue, created_at=str(issue.get("created_at") or ""),
                   url=issue.get("html_url"))


def _split(repo: str) -> dict[str, str]:
    owner, name = repo.split("/", 1)
    return {"owner": owner, "repo": name}


async def read_issue(gh: gidgethub.abc.GitHubAPI, repo: str, number: int) -> IssueView | None:
    """The issue as it is now; None when it was deleted or moved (404, 410)."""
    try:
        data = await gh.getitem("/repos/{owner}/{repo}/issues/{number}", {**_split(repo), "number": number})
    except gidgethub.BadRequest as e:
        if e.status_code in (404, 410):
            return None
        raise
    return IssueView.from_api(data)


def is_bot_comment(comment: dict[str, Any], bot_login: str | None) -> bool:
    if MARKER not in (comment.get("body") or ""):
        return False
    user = comment.get("user") or {}
    if bot_login is not None:
        return user.get("login") == bot_login
    return user.get("type") == "Bot"


async def bot_comments(gh: gidgethub.abc.GitHubAPI, repo: str, number: int,
                       bot_login: str | None) -> list[BotComment]:
    found = []
    async for c in gh.getiter("/repos/{owner}/{repo}/issues/{number}/comments?per_page=100",
                              {**_split(repo), "number": number}):
        if is_bot_comment(c, bot_login):
            found.append(BotComment(id=int(c["id"]), body=str(c.get("body") or "")))
    return found


async def read_config(gh: gidgethub.abc.GitHubAPI, repo: str) -> RepoConfig:
    """`.github/vllm-triage.yml` from the default branch (the contents API's default ref)."""
    try:
        item = await gh.getitem("/repos/{owner}/{repo}/contents/{+path}", {**_split(repo), "path": CONFIG_PATH})
    except gidgethub.BadRequest as e:
        if e.status_code == 404:
            return DEFAULT
        raise
    if not isinstance(item, dict):
        return RepoConfig(mode="shadow", errors=(f"{CONFIG_PATH}: not a file",), found=True)
    return parse_config(decode_contents(item))


async def repo_labels(gh: gidgethub.abc.GitHubAPI, repo: str) -> list[str]:
    return [lb["name"] async for lb in gh.getiter("/repos/{owner}/{repo}/labels?per_page=100", _split(repo))]


async def apply(gh: gidgethub.abc.GitHubAPI, store: DeliveryStore, repo: str, number: int, plan: Plan) -> IssueState:
    """Carry out `plan`; returns the state saved after the last write."""
    where = {**_split(repo), "number": number}
    state = plan.state
    if plan.add_labels:
        state = replace(state, labels_pending=list(plan.add_labels))
        await store.save_issue_state(state)
        await gh.post("/repos/{owner}/{repo}/issues/{number}/labels", where, data={"labels": list(plan.add_labels)})
        added = [*state.labels_added, *(lb for lb in plan.add_labels if lb not in state.labels_added)]
        state = replace(state, labels_added=added, labels_pending=[])
        await store.save_issue_state(state)
    for label in plan.remove_labels:
        try:
            await gh.delete("/repos/{owner}/{repo}/issues/{number}/labels/{name}", {**where, "name": label})
        except gidgethub.BadRequest as e:
            if e.status_code != 404:  # already gone
                raise
        state = replace(state, labels_added=[lb for lb in state.labels_added if lb != label])
        await store.save_issue_state(state)
    action = plan.comment
    if action.kind == "create":
        state = replace(state, comment_posted_at=time.time())  # if no answer comes, GitHub may still create it
        await store.save_issue_state(state)
        try:
            created = await gh.post("/repos/{owner}/{repo}/issues/{number}/comments", where,
                                    data={"body": action.body})
        except gidgethub.BadRequest:  # a 4xx answer: GitHub refused, nothing was created
            await store.save_issue_state(replace(state, comment_posted_at=None))
            raise
        state = replace(state, comment_id=int(created["id"]), comment_sha=sha(action.body), comment_posted_at=None)
        await store.save_issue_state(state)
    elif action.kind == "edit":
        await gh.patch("/repos/{owner}/{repo}/issues/comments/{comment_id}",
                       {**_split(repo), "comment_id": action.comment_id}, data={"body": action.body})
        state = replace(state, comment_id=action.comment_id, comment_sha=sha(action.body), comment_posted_at=None)
        await store.save_issue_state(state)
    for comment_id in plan.delete_comments:
        try:
            await gh.delete("/repos/{owner}/{repo}/issues/comments/{comment_id}",
                            {**_split(repo), "comment_id": comment_id})
        except gidgethub.BadRequest as e:
            if e.status_code != 404:
                raise
    await store.save_issue_state(state)
    return state
