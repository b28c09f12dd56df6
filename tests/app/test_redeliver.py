"""`vllm-triage redeliver` against the fake GitHub: failed deliveries since a time are asked for again with
POST /app/hook/deliveries/{id}/attempts, the fake sends them to the real server, and the issues get triaged;
older failures, deliveries that succeeded on a later attempt, and a second run redeliver nothing."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.app.github import GitHubClient
from bot.app.redeliver import parse_since, redeliver_failed

from .conftest import SECRET, headers, issue_payload, live_settings
from .fakegithub import APP_ID, FakeGitHub

REPO = "vllm-project/vllm"
ROOT = Path(__file__).resolve().parents[2]


def stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class HookingFake(FakeGitHub):
    """The fake plus GitHub's side of webhook deliveries: it keeps each delivery's attempts (newest first, as
    GET /app/hook/deliveries lists them) and sends a requested redelivery to the App's webhook URL."""

    def __init__(self, private_key: str) -> None:
        super().__init__(private_key)
        self.hook_url = ""
        self.bodies: dict[str, tuple[str, bytes]] = {}
        self._attempt_ids = itertools.count(90_000)

    async def deliver(self, event: str, payload: dict, *, reachable: bool = True, at: float | None = None,
                      guid: str | None = None, redelivery: bool = False) -> dict:
        guid = guid or str(uuid.uuid4())
        if guid not in self.bodies:
            self.bodies[guid] = (event, json.dumps(payload).encode())
        event, body = self.bodies[guid]
        status_code = 502
        if reachable:
            async with aiohttp.ClientSession() as session, session.post(
                    self.hook_url, data=body, headers=headers(event, body, guid)) as response:
                status_code = response.status
        attempt = {"id": next(self._attempt_ids), "guid": guid, "delivered_at": stamp(at or time.time()),
                   "redelivery": redelivery, "duration": 0.05, "event": event, "action": payload.get("action"),
                   "status": "OK" if 200 <= status_code < 300 else f"Invalid HTTP Response: {status_code}",
                   "status_code": status_code, "installation_id": 1, "repository_id": 1}
        self.hook_deliveries.insert(0, attempt)
        return attempt

    async def redeliver(self, request: web.Request) -> web.Response:
        self._app_auth(request)
        attempt_id = int(request.match_info["id"])
        original = next((d for d in self.hook_deliveries if d["id"] == attempt_id), None)
        if original is None:
            return self._error(404, "Not Found")
        self.redelivered.append(attempt_id)
        event, body = self.bodies[original["guid"]]
        await self.deliver(event, json.loads(body), guid=original["guid"], redelivery=True)
        return self._json({}, 202)


@pytest.fixture
async def hooking(private_key):
    gh = HookingFake(private_key)
    await gh.start()
    yield gh
    await gh.stop()


async def test_failed_deliveries_since_a_time_are_redelivered_once(tmp_path, hooking, make_bot):
    fake = hooking
    fake.add_repo(REPO, ["bug", "cuda", "needs-info"])
    for n in range(1, 6):
        fake.add_issue(REPO, n, f"[Bug]: CUDA error {n}", f"report {n} with collect_env")
    settings = live_settings(tmp_path, fake)
    bot = await make_bot(settings)
    fake.hook_url = str(bot.client.make_url("/webhook"))

    def opened(n: int) -> dict:
        issue = fake.repos[REPO].issues[n]
        return issue_payload(REPO, n, issue.title, issue.body)

    now = time.time()
    await fake.deliver("issues", opened(1), at=now - 7200)                        # arrived
    old = await fake.deliver("issues", opened(2), reachable=False, at=now - 3 * 86400)  # failed before --since
    lost = await fake.deliver("issues", opened(3), reachable=False, at=now - 1800)     # failed: redeliver
    flaky = await fake.deliver("issues", opened(4), reachable=False, at=now - 1500)
    await fake.deliver("issues", opened(4), guid=flaky["guid"], redelivery=True, at=now - 1400)  # then arrived
    installation = {"action": "created", "installation": {"id": 1, "account": {"login": "vllm-project"}},
                    "repositories": [{"full_name": REPO}], "sender": {"login": "alice"}}
    lost_installation = await fake.deliver("installation", installation, reachable=False, at=now - 60)
    for n in (5, 5):  # the same issue twice, both lost: two GUIDs, two redeliveries
        await fake.deliver("issues", opened(n), reachable=False, at=now - 30)
    await bot.drain()
    assert fake.repos[REPO].bot_comments(3) == []

    async with aiohttp.ClientSession() as session:
        app = GitHubClient(session, settings=settings, app_id=settings.app_id, private_key=settings.private_key)
        dry = await redeliver_failed(app, now - 3600, dry_run=True)
        assert {r.guid for r in dry.failed} == {lost["guid"], lost_installation["guid"]} | {
            d["guid"] for d in fake.hook_deliveries[:2]}
        assert fake.redelivered == [] and dry.redelivered == 0
        summary = await redeliver_failed(app, now - 3600)
        assert sorted(fake.redelivered) == sorted(r.id for r in dry.failed)
        assert summary.redelivered == 4 and summary.errors == 0
        assert old["id"] not in fake.redelivered and flaky["id"] not in fake.redelivered
        await bot.drain()
        assert len(fake.repos[REPO].bot_comments(3)) == 1
        assert len(fake.repos[REPO].bot_comments(5)) == 1  # two deliveries of one issue: one comment
        assert fake.repos[REPO].bot_comments(2) == []
        again = await redeliver_failed(app, now - 3600)
        assert again.failed == [] and len(fake.redelivered) == 4


def test_since_accepts_durations_and_iso_times():
    assert parse_since("90m", now=10_000.0) == 10_000.0 - 5400
    assert parse_since("2d", now=200_000.0) == 200_000.0 - 172_800
    assert parse_since("2026-01-02T03:04:05Z") == parse_since("2026-01-02T03:04:05")
    with pytest.raises(ValueError, match="--since"):
        parse_since("yesterday")


async def test_the_command_lists_failed_deliveries(tmp_path, hooking):
    fake = hooking
    fake.add_repo(REPO, ["bug"])
    fake.add_issue(REPO, 1, "[Bug]: x", "y")
    lost = await fake.deliver("issues", issue_payload(REPO, 1, "[Bug]: x", "y"), reachable=False)
    env = {**os.environ, "GITHUB_APP_ID": str(APP_ID), "GITHUB_PRIVATE_KEY": fake.private_key,
           "GITHUB_API_URL": fake.base_url, "GITHUB_WEBHOOK_SECRET": SECRET, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "redeliver", "--since", "1h", "--dry-run", env=env, cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert lost["guid"] in text and "issues.opened" in text and "would redeliver" in text
    assert "1 failed, 0 redelivered" in text and fake.redelivered == []
