"""What the handlers call: payload -> re-read the issue -> triage (pure) -> plan (pure) -> apply.

One `Service` per server process. The core (parsing, rules, duplicate search) runs in bot/app/core.py's
child process so that a slow triage never delays webhook acknowledgements; only that process touches the
duplicate indexes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from bot.app.actions import IssueView, apply, bot_comments, read_config, read_issue, repo_labels
from bot.app.core import CoreRunner
from bot.app.github import GitHub, GitHubClient, RetryLater
from bot.app.metrics import Metrics
from bot.app.plan import plan as make_plan
from bot.app.record import issue_meta, triage_detail
from bot.app.repo_config import DEFAULT, ConfigCache, RepoConfig
from bot.app.settings import Settings, most_cautious
from bot.app.sources import BackgroundBuild
from bot.comment import render_cleared, render_comment
from bot.labels import topic_labels
from bot.stores.deliveries import DeliveryStore, IssueState
from bot.triage import Triage, triage

log = logging.getLogger("vllm_triage.service")
TriageFn = Callable[..., Triage]


def adjust(result: Triage, config: RepoConfig) -> tuple[list[str], str | None]:
    """The decision's labels and comment after the repository's thresholds and feature switches."""
    d = result.decision
    findings = tuple(f for f in d.findings if f.confidence >= config.diagnosis_threshold)
    duplicates = tuple(c for c in d.duplicates if c.score >= config.duplicate_threshold)
    if not config.enabled("duplicates"):
        duplicates = ()
    needs_info = d.needs_info if config.enabled("needs_info") else ()
    if (findings, duplicates, needs_info) == (d.findings, d.duplicates, d.needs_info):
        return list(d.labels), d.comment
    labels = list(topic_labels(result.report, findings))
    if needs_info:
        labels.append("needs-info")
    return labels, render_comment(result.report, findings, duplicates, needs_info)


def summary(result: Triage, labels: list[str], comment: str | None) -> dict[str, Any]:
    d = result.decision
    return {"labels": labels, "findings": [f.rule for f in d.findings], "needs_info": list(d.needs_info),
            "duplicates": [c.number for c in d.duplicates], "comment": comment, **triage_detail(result)}


class Service:
    def __init__(self, settings: Settings, store: DeliveryStore, *, github: GitHub | None = None,
                 triage_fn: TriageFn = triage, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.store = store
        self.github = github
        self.triage_fn = triage_fn
        self.metrics = metrics or Metrics()
        self.configs = ConfigCache(settings.config_cache_seconds)
        # parsing, rules and duplicate search, in the core's own process (bot/app/core.py)
        self.core = CoreRunner(settings.core, settings.rules_dir, str(settings.data_dir), triage_fn,
                                settings.database_url)
        self._sources_build: BackgroundBuild | None = None
        self._sources_task: asyncio.Task | None = None

    async def start(self) -> None:
        rules = await self.core.start()
        log.info("triage core ready with %d rules", rules)

    def build_sources(self) -> None:
        """Build the releases the raise-site index lacks in the background (bounded by settings.sources_build);
        the core loads the index again when one was stored."""
        if self.settings.sources_build <= 0 or self._sources_task is not None:
            return
        self._sources_build = BackgroundBuild(self.settings.database_url, str(self.settings.data_dir),
                                              self.settings.sources_build)
        self._sources_task = asyncio.create_task(self._build_then_reload(self._sources_build))

    async def _build_then_reload(self, job: BackgroundBuild) -> None:
        try:
            outcome = await job.run()
            if outcome.built:
                releases = await self.core.reload_sources()
                log.info("source index reloaded: %d releases", releases)
        except asyncio.CancelledError:
            raise
        except Exception:  # never fatal: triage goes on with the index it has
            log.exception("source index: the background build failed")

    async def close(self) -> None:
        if self._sources_task is not None:
            self._sources_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._sources_task
        if self._sources_build is not None:
            await asyncio.to_thread(self._sources_build.stop)
        await self.core.close()

    async def mark_duplicate(self, repo: str, number: int, of: int) -> None:
        await self.core.mark_duplicate(repo, number, of)

    # -- GitHub access ---------------------------------------------------------------------------------

    async def client(self, installation_id: int | None) -> GitHubClient | None:
        if self.github is None or installation_id is None or self.settings.mode == "dry-run":
            return None
        return await self.github.installation(installation_id)

    async def repo_config(self, gh: GitHubClient | None, repo: str) -> tuple[RepoConfig, list[str] | None]:
        if gh is None:
            return DEFAULT, None
        cached = self.configs.get(repo)
        if cached is not None:
            return cached
        config = await read_config(gh, repo)
        labels = await repo_labels(gh, repo) if config.allow is None else None
        await self.store.set_config_errors(repo, list(config.errors))
        for error in config.errors:
            log.warning("%s: %s", repo, error)
        self.configs.put(repo, (config, labels))
        return config, labels

    async def bot_login(self) -> str | None:
        return await self.github.bot_login() if self.github is not None else self.settings.bot_login

    # -- what the handlers call ------------------------------------------------------------------------

    def _wait_for_an_unanswered_comment(self, state: IssueState, action: str) -> None:
        """A comment POST that got no answer may still be created by GitHub: posting again before it could
        show up in the list would make a second comment, so the delivery waits until then."""
        if action != "create" or state.comment_posted_at is None:
            return
        until = state.comment_posted_at + self.settings.http_timeout + self.settings.comment_settle_seconds
        if time.time() < until:
            raise RetryLater(until - time.time(), f"{state.repo}#{state.number}: a comment posted at "
                             f"{state.comment_posted_at:.0f} got no answer and may still appear",
                             outcome="waiting-for-comment")

    async def triage_issue(self, *, repo: str, number: int, installation_id: int | None,
                           payload_issue: dict[str, Any], delivery_id: str | None, reason: str,
                           force: bool = False) -> dict[str, Any] | None:
        gh = await self.client(installation_id)
        config, labels_in_repo = await self.repo_config(gh, repo)
        mode = most_cautious(self.settings.mode, config.mode if gh is not None else "dry-run")
        if gh is not None and self.github is not None and not self.github.can_act(installation_id):
            mode, reason = "dry-run", f"{reason} (installation lacks issues: write)"
        issue = await read_issue(gh, repo, number) if gh is not None else IssueView.from_api(payload_issue)
        if issue is None:
            await self._mark(repo, number, "deleted")
            return None
        if issue.is_pull_request or (issue.state != "open" and not force):
            return None
        state = await self.store.issue_state(repo, number) or IssueState(repo=repo, number=number)
        if force:
            state = replace(state, comment_id=None)  # a maintainer asked: post again even if deleted
        feedback = await self.store.feedback(repo, number)
        rejected = {f["target"] for f in feedback if f["kind"] == "not-duplicate" and f["target"] is not None}
        # a rule a maintainer suppressed for this issue on the dashboard (feedback kind "suppress-rule:<id>")
        suppressed = {f["kind"].split(":", 1)[1] for f in feedback if f["kind"].startswith("suppress-rule:")}
        # earlier reports a maintainer confirmed with /duplicate #N (or on the dashboard), oldest first
        confirmed = tuple(f["target"] for f in feedback if f["kind"] == "duplicate" and f["target"] is not None)
        result = await self.core.triage(repo, issue, rejected, config.enabled("duplicates"), suppressed, confirmed)
        labels, comment = adjust(result, config)
        existing = await bot_comments(gh, repo, number, await self.bot_login()) if gh is not None else []
        if existing:
            state = replace(state, comment_posted_at=None)
        the_plan = make_plan(topics=labels, comment=comment, current_labels=issue.labels, bot_comments=existing,
                             state=state, config=config, repo_labels=labels_in_repo, cleared=render_cleared())
        record = {**the_plan.as_dict(), "decision": summary(result, labels, comment),
                  "issue": issue_meta(issue.title, issue.created_at, issue.url, issue.labels),
                  "config_errors": list(config.errors)}
        if mode != "live":
            await self.store.record_decision(delivery_id, repo, number, mode, reason, record, applied=False)
            self.metrics.inc("vllm_triage_decisions_total", mode=mode)
            return record
        self._wait_for_an_unanswered_comment(state, the_plan.comment.kind)
        try:
            new_state = await apply(gh, self.store, repo, number, the_plan) if gh is not None else the_plan.state
        except Exception as e:
            await self.store.record_decision(delivery_id, repo, number, mode, f"{reason} (failed: {e!r:.200})",
                                             record, applied=False)
            raise
        await self.store.save_issue_state(replace(new_state, last_decision=record["decision"], state="open"))
        await self.store.record_decision(delivery_id, repo, number, mode, reason, record, applied=True)
        self.metrics.inc("vllm_triage_decisions_total", mode=mode)
        for kind, n in (("labels_added", len(the_plan.add_labels)), ("labels_removed", len(the_plan.remove_labels)),
                        ("comments_" + the_plan.comment.kind, int(the_plan.comment.kind != "none"))):
            if n:
                self.metrics.inc("vllm_triage_actions_total", n, kind=kind)
        return record

    async def issue_closed(self, repo: str, payload_issue: dict[str, Any]) -> None:
        issue = IssueView.from_api(payload_issue)
        if not issue.is_pull_request:
            await self.core.index_closed(repo, issue)
        await self._mark(repo, issue.number, "closed")

    async def issue_deleted(self, repo: str, number: int) -> None:
        await self._mark(repo, number, "deleted")

    async def _mark(self, repo: str, number: int, what: str) -> None:
        state = await self.store.issue_state(repo, number) or IssueState(repo=repo, number=number)
        await self.store.save_issue_state(replace(state, state=what))

    async def label_removed_by_human(self, repo: str, number: int, label: str) -> None:
        state = await self.store.issue_state(repo, number) or IssueState(repo=repo, number=number)
        if label not in state.labels_suppressed:
            state = replace(state, labels_suppressed=[*state.labels_suppressed, label],
                            labels_added=[lb for lb in state.labels_added if lb != label])
            await self.store.save_issue_state(state)

    async def commands_enabled(self, repo: str, installation_id: int | None) -> bool:
        config, _ = await self.repo_config(await self.client(installation_id), repo)
        return config.enabled("commands")
