"""`vllm-triage index --github OWNER/REPO`: page through a repository's whole issue history with gidgethub's
`getiter` and add every issue to the duplicate index; optionally queue a triage for open issues the bot has
never seen (GitHub does not redeliver webhooks missed while the server was down)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
import gidgethub.abc
from gidgethub import apps

from bot.app.github import GitHubClient
from bot.app.settings import Settings
from bot.dupes import DuplicateIndex
from bot.report import parse
from bot.rules import RuleSet
from bot.sources.index import SourceIndex
from bot.sources.locate import locate
from bot.stores.deliveries import DeliveryStore


@dataclass
class BackfillSummary:
    issues: int = 0
    pull_requests: int = 0
    open: int = 0
    queued: int = 0
    seconds: float = 0.0

    def render(self) -> str:
        return (f"indexed {self.issues} issues ({self.open} open; {self.pull_requests} pull requests skipped)"
                f"{f', queued {self.queued} never-triaged open issues' if self.queued else ''}"
                f" in {self.seconds:.1f}s")


async def client_for(repo: str, settings: Settings, session: aiohttp.ClientSession,
                     token: str | None) -> tuple[GitHubClient, int | None]:
    """An installation client when the App's credentials are set, else a token (or anonymous) client."""
    if settings.has_credentials:
        app = GitHubClient(session, settings=settings, app_id=settings.app_id, private_key=settings.private_key)
        owner, name = repo.split("/", 1)
        inst = await app.getitem("/repos/{owner}/{repo}/installation", {"owner": owner, "repo": name})
        answer = await apps.get_installation_access_token(app, installation_id=str(inst["id"]),
                                                          app_id=str(settings.app_id),
                                                          private_key=settings.private_key or "")
        return GitHubClient(session, settings=settings, oauth_token=answer["token"]), int(inst["id"])
    return GitHubClient(session, settings=settings, oauth_token=token), None


async def backfill(gh: gidgethub.abc.GitHubAPI, repo: str, index: DuplicateIndex, rules: RuleSet, *,
                   store: DeliveryStore | None = None, installation_id: int | None = None,
                   progress: Callable[[int], None] | None = None,
                   sources: SourceIndex | None = None) -> BackfillSummary:
    summary = BackfillSummary()
    started = time.monotonic()
    owner, name = repo.split("/", 1)
    url = "/repos/{owner}/{repo}/issues?state=all&sort=created&direction=asc&per_page=100"
    async for issue in gh.getiter(url, {"owner": owner, "repo": name}):
        if "pull_request" in issue:
            summary.pull_requests += 1
            continue
        report = locate(sources, parse(issue.get("title"), issue.get("body")), issue.get("created_at"))
        state = str(issue.get("state") or "open")
        with index.batch():
            index.add(int(issue["number"]), report, rules.evaluate(report), state=state,
                      created_at=str(issue.get("created_at") or ""), url=issue.get("html_url"))
        summary.issues += 1
        if state == "open":
            summary.open += 1
            if store is not None and await store.issue_state(repo, int(issue["number"])) is None:
                payload = {"action": "opened", "issue": issue, "repository": {"full_name": repo},
                           "installation": {"id": installation_id} if installation_id else None}
                outcome = await store.record_delivery(
                    f"backfill:{repo}#{issue['number']}:{issue.get('updated_at')}", "issues", "opened", repo,
                    int(issue["number"]), installation_id, json.dumps(payload))
                summary.queued += outcome != "duplicate"
        if progress is not None:
            progress(summary.issues)
    summary.seconds = time.monotonic() - started
    return summary
