"""Fixtures for the App's tests: GitHub's own example payloads (npm @octokit/webhooks-examples, installed by
.ci/run), the fake GitHub, signed deliveries, and a server driven over HTTP."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app.server import create_app
from bot.app.settings import Settings, from_env

from .fakegithub import APP_ID, BOT_LOGIN, FakeGitHub, make_private_key
from .faketriage import fake_triage

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / ".ci" / "node"
EXAMPLES = NODE_DIR / "node_modules" / "@octokit" / "webhooks-examples" / "api.github.com" / "index.json"
SECRET = "It's a Secret to Everybody"
INSTALLATION = {"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}


def need(path: Path, what: str) -> None:
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{what} missing at {path}: .ci/run must install it")
        pytest.skip(f"{what} not installed ({path}); run `npm install --prefix .ci/node` (see .ci/run)")


@pytest.fixture(scope="session")
def examples() -> dict[str, list[dict[str, Any]]]:
    """Example payloads by event name, each with an `installation` block (most examples lack one)."""
    need(EXAMPLES, "@octokit/webhooks-examples")
    events = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    out: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        payloads = []
        for example in event["examples"]:
            payload = copy.deepcopy(example)
            payload.setdefault("installation", dict(INSTALLATION))
            payloads.append(payload)
        out[event["name"]] = payloads
    return out


@pytest.fixture(scope="session")
def node() -> str:
    exe = shutil.which("node")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("node is required in CI")
        pytest.skip("node is not installed on this machine")
    need(NODE_DIR / "node_modules" / "@octokit" / "webhooks-methods", "@octokit/webhooks-methods")
    return exe


@pytest.fixture(scope="session")
def private_key() -> str:
    return make_private_key()


@pytest.fixture
async def fake(private_key):
    gh = FakeGitHub(private_key)
    await gh.start()
    yield gh
    await gh.stop()


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def headers(event: str, body: bytes, delivery: str | None = None, secret: str | None = SECRET) -> dict[str, str]:
    h = {"Content-Type": "application/json", "X-GitHub-Event": event,
         "X-GitHub-Delivery": delivery or str(uuid.uuid4()), "User-Agent": "GitHub-Hookshot/test"}
    if secret is not None:
        h["X-Hub-Signature-256"] = sign(body, secret)
    return h


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = dict(
        database_url=f"sqlite:///{tmp_path / 'bot.sqlite3'}", data_dir=tmp_path, webhook_secret=SECRET,
        mode="dry-run", workers=4, poll_interval=0.05, retry_base_seconds=0.02, retry_max_seconds=0.2,
        http_backoff_seconds=0.01, secondary_limit_wait=0.02, max_inline_wait=2.0, http_timeout=5.0,
        lease_seconds=10.0, config_cache_seconds=0.0, core="thread", sources_build=0,
        comment_settle_seconds=1.0)  # the fake shows a write at once; GitHub's own delay is 10 s
    values.update(overrides)
    return from_env({}, **values)


def live_settings(tmp_path: Path, fake: FakeGitHub, **overrides: Any) -> Settings:
    return make_settings(tmp_path, app_id=str(APP_ID), private_key=fake.private_key, mode="live",
                         github_api_url=fake.base_url, **overrides)


class Bot:
    """The real server over HTTP, plus helpers to send deliveries and wait for the queue to drain."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.app = client.server.app

    async def send(self, event: str, payload: dict[str, Any] | bytes, delivery: str | None = None,
                   secret: str | None = SECRET, extra: dict[str, str] | None = None):
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        h = headers(event, body, delivery, secret)
        h.update(extra or {})
        return await self.client.post("/webhook", data=body, headers=h)

    async def drain(self, timeout: float = 20.0) -> dict[str, int]:
        import asyncio
        import time

        deadline = time.monotonic() + timeout
        while True:
            counts = (await (await self.client.get("/healthz")).json())["deliveries"]
            if counts["queued"] == 0 and counts["running"] == 0:
                return counts
            if time.monotonic() > deadline:
                raise AssertionError(f"queue did not drain: {counts}")
            await asyncio.sleep(0.05)

    async def get(self, path: str) -> Any:
        response = await self.client.get(path)
        assert response.status == 200, await response.text()
        return await response.json()


@pytest.fixture
async def make_bot():
    clients: list[TestClient] = []

    async def make(settings: Settings, triage_fn=fake_triage) -> Bot:
        client = TestClient(TestServer(create_app(settings, triage_fn=triage_fn)))
        await client.start_server()
        clients.append(client)
        return Bot(client)

    yield make
    for client in reversed(clients):
        await client.close()


def issue_payload(repo: str, number: int, title: str, body: str, action: str = "opened",
                  labels: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    owner, name = repo.split("/")
    return {"action": action,
            "issue": {"number": number, "title": title, "body": body, "state": "open",
                      "labels": [{"name": n} for n in labels or []], "user": {"login": "reporter", "type": "User"},
                      "created_at": "2025-01-01T00:00:00Z", "html_url": f"https://github.com/{repo}/issues/{number}"},
            "repository": {"full_name": repo, "name": name, "owner": {"login": owner}},
            "sender": {"login": "reporter", "type": "User"}, "installation": {"id": 1}, **extra}


def comment_payload(repo: str, number: int, body: str, login: str = "alice", association: str = "MEMBER",
                    user_type: str = "User") -> dict[str, Any]:
    payload = issue_payload(repo, number, "t", "b", action="created")
    payload["comment"] = {"id": 1, "body": body, "user": {"login": login, "type": user_type},
                          "author_association": association}
    payload["sender"] = {"login": login, "type": user_type}
    return payload


__all__ = ["BOT_LOGIN", "Bot", "comment_payload", "headers", "issue_payload", "live_settings", "sign",
           "make_settings"]
