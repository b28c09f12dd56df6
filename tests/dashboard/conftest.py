"""Fixtures: a dashboard on the real App (dry-run, SQLite) filled by delivering an export as signed webhooks."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import uuid
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from bot.dashboard.feed import issue_payload
from bot.dashboard.settings import token_digest
from bot.export import issue_from_json

from .export import export_issues

SECRET = "dashboard-test-secret"
ALICE_TOKEN = "alice-maintainer-token-0001"
TOKENS = f"alice:sha256:{token_digest(ALICE_TOKEN)}"
REPO = "vllm-project/vllm"


def server_env(tmp: Path, port: int | None = None, *, public: bool = True) -> dict[str, str]:
    env = {
        "DATABASE_URL": f"sqlite:///{tmp / 'triage.sqlite3'}", "VLLM_TRIAGE_DATA_DIR": str(tmp / "data"),
        "GITHUB_WEBHOOK_SECRET": SECRET, "VLLM_TRIAGE_WORKERS": "1", "VLLM_TRIAGE_POLL_INTERVAL": "0.05",
        "VLLM_TRIAGE_SOURCES_BUILD": "0", "DASHBOARD_TOKENS": TOKENS, "DASHBOARD_PUBLIC": "1" if public else "0",
        "HOST": "127.0.0.1",
    }
    if port is not None:
        env["PORT"] = str(port)
    return env


def signed(payload: dict) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload).encode()
    return body, {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                  "X-GitHub-Delivery": str(uuid.uuid4()),
                  "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()}


async def fill(client: TestClient, raws: list[dict] | None = None) -> None:
    """Deliver the test export (or `raws`, GitHub issue objects; oldest first) and wait until the worker has processed
    every delivery."""
    import asyncio

    for raw in export_issues() if raws is None else raws:
        issue = issue_from_json(raw)
        actions = ("opened", "closed") if issue.state == "closed" else ("opened",)
        for action in actions:
            body, headers = signed(issue_payload(issue, REPO, action))
            resp = await client.post("/webhook", data=body, headers=headers)
            assert resp.status == 202, await resp.text()
    for _ in range(600):
        health = await (await client.get("/healthz")).json()
        if health.get("worker") is not False and not health["deliveries"]["queued"] \
                and not health["deliveries"]["running"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"deliveries still pending: {health}")


_CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')


def csrf_of(html: str) -> str:
    m = _CSRF.search(html)
    assert m, "no CSRF token in the page"
    return m.group(1)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """One `vllm-triage serve` process filled with the test export, shared by every browser test."""
    from .browser import require_chromium, serve_filled

    require_chromium()
    yield from serve_filled(tmp_path_factory.mktemp("browser"))


@pytest.fixture(scope="module")   # Playwright's sync API holds an event loop: closed before the asyncio tests run
def browser():
    from .browser import launch, require_chromium

    require_chromium()
    yield from launch()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    shots = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
    if shots.is_dir() and any(shots.glob("*.png")):
        terminalreporter.write_line(f"dashboard screenshots: {shots}")
