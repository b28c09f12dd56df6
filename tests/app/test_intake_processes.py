"""`serve --intake-processes 2`: two processes acknowledge webhooks on one port (SO_REUSEPORT); the intake
process records deliveries the primary's worker then triages, and forwards everything else to the primary.
Every child of the server (intake process, triage core) ends when the server is SIGKILLed."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import aiohttp
import pytest

from .conftest import issue_payload

ROOT = Path(__file__).resolve().parents[2]
SECRET = "intake-secret"
DELIVERIES = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def fresh_connection_post(url: str, body: bytes, headers: dict[str, str]) -> int:
    # a new connection per request, so the kernel spreads them over both processes
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session, \
            session.post(url, data=body, headers=headers) as r:
        await r.read()
        return r.status


async def fresh_connection_get(url: str) -> tuple[int, str, list[str]]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session, \
            session.get(url, allow_redirects=False) as r:
        return r.status, await r.text(), r.headers.getall("Set-Cookie", [])


@pytest.fixture
def server(tmp_path):
    port = free_port()
    env = {**os.environ, "GITHUB_WEBHOOK_SECRET": SECRET, "HOST": "127.0.0.1", "PORT": str(port),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.sqlite3'}", "VLLM_TRIAGE_INTAKE_PROCESSES": "2",
           "VLLM_TRIAGE_POLL_INTERVAL": "0.1"}
    for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "VLLM_TRIAGE_MODE"):
        env.pop(name, None)
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT)
    yield proc, f"http://127.0.0.1:{port}", tmp_path / "server.log"
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    log.close()


async def wait_for(check, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = await check()
            if value:
                return value
        except (aiohttp.ClientError, OSError):
            pass
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_two_processes_share_the_port_and_die_with_the_server(server):
    proc, url, log = server

    async def worker_up():
        status, text, _ = await fresh_connection_get(f"{url}/healthz")
        return status == 200 and json.loads(text)["worker"]

    await wait_for(worker_up, "the server to start")
    kids = children(proc.pid)
    assert len(kids) >= 2, kids  # the triage core and the intake process (and multiprocessing's resource tracker)

    async def send(n: int) -> int:
        body = json.dumps(issue_payload("o/r", n, f"[Bug]: crash {n}", "no env")).encode()
        headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                   "X-GitHub-Delivery": str(uuid.uuid4()),
                   "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()}
        return await fresh_connection_post(f"{url}/webhook", body, headers)

    assert await asyncio.gather(*(send(n) for n in range(1, DELIVERIES + 1))) == [202] * DELIVERIES

    async def all_done():
        _, text, _ = await fresh_connection_get(f"{url}/healthz")
        return json.loads(text)["deliveries"]["done"] == DELIVERIES

    await wait_for(all_done, "the primary's worker to triage every delivery")
    # /metrics counts what every process acknowledged (prometheus_client's multiprocess mode)
    _, metrics, _ = await fresh_connection_get(f"{url}/metrics")
    queued = sum(float(v) for v in re.findall(r'vllm_triage_webhooks_total\{[^}]*outcome="queued"[^}]*\} (\S+)',
                                              metrics))
    assert queued == DELIVERIES, f"/metrics counts {queued} of the {DELIVERIES} acknowledged webhooks"
    assert re.search(rf'vllm_triage_webhook_seconds_count(?:\{{\}})? {DELIVERIES}(?:\.0)?\n', metrics), metrics
    # the dashboard answers the same through either process (the intake process forwards it)
    pages = [await fresh_connection_get(f"{url}/dashboard/login") for _ in range(12)]
    for status, text, cookies in pages:
        assert status == 200 and "Log in" in text, (status, text[:300])
        assert any(c.startswith("vt_session=") for c in cookies), cookies
    assert {status for status, _, _ in [await fresh_connection_get(f"{url}/dashboard/rules") for _ in range(6)]} \
        == {303}  # redirects to the login page, whichever process took the connection

    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    await wait_for(lambda: asyncio.sleep(0, not any(running(p) for p in kids)),
                   "the server's children to exit after it was killed", timeout=15)
    assert "intake processes share port" in log.read_text()


def _request(peer, headers):
    from unittest import mock

    from aiohttp.test_utils import make_mocked_request

    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: peer if name == "peername" else default
    return make_mocked_request("POST", "/dashboard/login", headers=headers, transport=transport)


def test_the_visitor_address_crosses_the_socket_and_cannot_be_claimed_over_tcp():
    from bot.app.context import CLIENT_HEADER, client_address
    from bot.app.intake import _headers

    assert client_address(_request(("203.0.113.9", 5555), {CLIENT_HEADER: "198.51.100.1"})) == "203.0.113.9"
    assert client_address(_request("", {CLIENT_HEADER: "198.51.100.1"})) == "198.51.100.1"  # via the Unix socket
    assert client_address(_request("", {})) == "?"
    # an intake process drops a claimed address before adding the one it saw
    forwarded = _headers({"Cookie": "vt_session=x", "Connection": "keep-alive", "X-Vllm-Triage-Client": "1.1.1.1"})
    assert forwarded == [("Cookie", "vt_session=x")]
