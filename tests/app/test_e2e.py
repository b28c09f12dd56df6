"""End to end: 500 deliveries (opens, edits, redeliveries, comments) into a server process that is killed
with SIGKILL twice and restarted; then the same with 30 % of GitHub calls failing (5xx, 429, secondary-limit
403s, some 5xx after the write took effect). Every issue must end with the right labels and exactly one bot
comment, no delivery may be lost, nothing may be done twice."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from .conftest import SECRET, headers, issue_payload
from .fakegithub import APP_ID, BOT_LOGIN
from .faketriage import expected_comment, expected_labels

REPO = "vllm-project/vllm"
REPO_LABELS = ["bug", "rocm", "cuda", "memory", "needs-info", "question", "good first issue"]
CONFIG = "labels:\n  map:\n    usage: question\n"
N_ISSUES = 100
N_DELIVERIES = 500
KILL_AT = (170, 340)
TITLES = ["[Bug]: ROCm crash", "[Bug]: CUDA OOM", "[Usage]: how to serve", "[Bug]: tool parser", "Question"]
SERVER = Path(__file__).with_name("e2e_server.py")
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    def __init__(self, tmp: Path, base_url: str, private_key: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(tmp / "server.log", "ab")  # noqa: SIM115 - closed in stop()
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "HOST": "127.0.0.1", "PORT": str(self.port),
                    "DATABASE_URL": f"sqlite:///{tmp / 'bot.sqlite3'}", "VLLM_TRIAGE_DATA_DIR": str(tmp),
                    "GITHUB_APP_ID": str(APP_ID), "GITHUB_PRIVATE_KEY": private_key,
                    "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_API_URL": base_url, "VLLM_TRIAGE_WORKERS": "8",
                    "VLLM_TRIAGE_LEASE_SECONDS": "1.5", "VLLM_TRIAGE_RETRY_BASE_SECONDS": "0.02",
                    "VLLM_TRIAGE_RETRY_MAX_SECONDS": "0.3", "VLLM_TRIAGE_MAX_ATTEMPTS": "40",
                    "VLLM_TRIAGE_HTTP_BACKOFF_SECONDS": "0.01", "VLLM_TRIAGE_SECONDARY_LIMIT_WAIT": "0.01",
                    "VLLM_TRIAGE_HTTP_TIMEOUT": "5", "VLLM_TRIAGE_POLL_INTERVAL": "0.05",
                    "VLLM_TRIAGE_CONFIG_CACHE_SECONDS": "30",
                    # the fake shows a write at once; GitHub's own delay is not what this test is about
                    "VLLM_TRIAGE_COMMENT_SETTLE_SECONDS": "1",
                    # the stand-in triage needs no rules; loading the real ones would only slow each restart
                    "VLLM_TRIAGE_RULES_DIR": str(tmp / "rules")}
        (tmp / "rules").mkdir(exist_ok=True)
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(SERVER)], env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT, cwd=ROOT)
        self.starts += 1

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def build_schedule(fake, rng: random.Random) -> list[tuple[str, str, callable]]:
    """(delivery id, event, prepare) in sending order; prepare() changes the fake like the real event did and
    returns the payload."""
    schedule: list = []
    for n in range(1, N_ISSUES + 1):
        title = rng.choice(TITLES)
        body = f"report {n}" + (" with collect_env" if rng.random() < 0.5 else "")
        labels = ["good first issue"] if n % 10 == 0 else []
        fake.add_issue(REPO, n, title, body, labels)
    opened = list(range(1, N_ISSUES + 1))
    i = 0
    while len(schedule) < N_DELIVERIES:
        i += 1
        roll = rng.random()
        if opened and (roll < 0.3 or len(schedule) < 20):
            n = opened.pop(0)

            def prepare(n=n):
                issue = fake.repos[REPO].issues[n]
                return issue_payload(REPO, n, issue.title, issue.body, labels=issue.labels)
            schedule.append((f"open-{n}", "issues", prepare))
        elif roll < 0.6:
            n = rng.randint(1, N_ISSUES)
            words = rng.choice(["CUDA", "ROCm", "OOM", "collect_env", "tool", "nothing"])

            def prepare(n=n, words=words, i=i):
                issue = fake.repos[REPO].issues[n]
                issue.body = f"{issue.body.split(' edit')[0]} edit {i} {words}"
                return issue_payload(REPO, n, "stale title", "stale body", action="edited",
                                     changes={"body": {"from": "..."}})
            schedule.append((f"edit-{i}", "issues", prepare))
        elif roll < 0.8 and len(schedule) > 10:
            delivery, event, prepare = schedule[rng.randrange(len(schedule))]
            schedule.append((delivery, event, prepare))  # a redelivery: same X-GitHub-Delivery
        else:
            n = rng.randint(1, N_ISSUES)
            kind = rng.choice(["maintainer", "bot", "user"])
            text = {"maintainer": "/triage", "bot": f"{BOT_LOGIN}: /triage", "user": "/triage please"}[kind]

            def prepare(n=n, kind=kind, text=text):
                login, association, utype = {"maintainer": ("alice", "MEMBER", "User"),
                                             "bot": (BOT_LOGIN, "NONE", "Bot"),
                                             "user": ("bob", "NONE", "User")}[kind]
                comment = fake.add_comment(REPO, n, text if kind != "bot" else "/triage", login, association,
                                           utype)
                issue = fake.repos[REPO].issues[n]
                payload = issue_payload(REPO, n, issue.title, issue.body, action="created")
                payload["comment"] = comment.api(REPO, n)
                payload["sender"] = {"login": login, "type": utype}
                return payload
            schedule.append((f"comment-{i}", "issue_comment", prepare))
    return schedule[:N_DELIVERIES]


async def run_scenario(tmp: Path, fake, faults: bool) -> None:
    rng = random.Random(7)
    fake.add_repo(REPO, REPO_LABELS, config=CONFIG)
    if faults:
        fake.set_faults(rate=0.3, kinds=("500", "502", "503", "429", "403-secondary"), after_effect=0.5,
                        retry_after="0", seed=11)
    schedule = build_schedule(fake, rng)
    server = ServerProcess(tmp, fake.base_url, fake.private_key)
    server.start()
    payloads: dict[str, tuple[str, bytes]] = {}
    acked: set[str] = set()
    started = time.monotonic()
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
            async def deliver(delivery: str, event: str, body: bytes) -> None:
                while True:  # GitHub's side: a delivery that got no 2xx is delivered again
                    try:
                        async with session.post(f"{server.url}/webhook", data=body,
                                                headers=headers(event, body, delivery)) as response:
                            if response.status in (200, 202):
                                acked.add(delivery)
                                return
                            raise AssertionError(f"{delivery}: {response.status} {await response.text()}")
                    except (TimeoutError, aiohttp.ClientError):
                        await asyncio.sleep(0.05)

            async def before(k: int) -> None:
                if k in KILL_AT:
                    server.kill()  # mid-run: deliveries in flight, the worker busy
                    server.start()

            await stream(schedule, payloads, deliver, window=20, before=before)

            deadline = time.monotonic() + 120  # a liveness bound, generous for a loaded 2-core runner
            while True:
                try:
                    async with session.get(f"{server.url}/healthz") as r:
                        counts = (await r.json())["deliveries"]
                    if counts["queued"] == 0 and counts["running"] == 0:
                        break
                except aiohttp.ClientError:
                    pass
                assert time.monotonic() < deadline, f"queue did not drain: {counts}"
                await asyncio.sleep(0.1)
            async with session.get(f"{server.url}/api/deliveries?limit=10000") as r:
                deliveries = {d["id"]: d for d in await r.json()}
    finally:
        server.stop()
    elapsed = time.monotonic() - started

    assert server.starts == 3
    assert acked == set(payloads), "every delivery was acknowledged"
    assert set(deliveries) == set(payloads), "no delivery lost"
    assert {d["status"] for d in deliveries.values()} == {"done"}, [d for d in deliveries.values()
                                                                    if d["status"] != "done"][:3]
    repo = fake.repos[REPO]
    for n, issue in sorted(repo.issues.items()):
        want = [{"usage": "question"}.get(label, label) for label in expected_labels(issue.title, issue.body)]
        want = [label for label in want if label in REPO_LABELS]
        human = ["good first issue"] if n % 10 == 0 else []
        assert sorted(issue.labels) == sorted(set(want + human)), (n, issue.title, issue.body)
        comments = repo.bot_comments(n)
        assert len(comments) == 1, (n, comments)
        assert comments[0].body == expected_comment(n, issue.body)
    created = [c for c in fake.calls if c.method == "POST" and c.path.endswith("/comments")
               and (c.status == 201 or c.fault == "applied")]
    assert len(created) == N_ISSUES, "one comment created per issue, then only edits"
    assert not [c for c in fake.calls if c.method == "PATCH" and c.path.rstrip("0123456789").endswith("/issues/")]
    print(f"e2e faults={faults}: {len(schedule)} deliveries ({len(payloads)} distinct), {len(fake.calls)} "
          f"GitHub calls, {sum(1 for c in fake.calls if c.fault)} faults, {elapsed:.1f}s")


async def stream(schedule, payloads: dict[str, tuple[str, bytes]], deliver, *, window: int, before=None) -> None:
    """Send the schedule's deliveries, at most `window` in flight; a redelivery re-sends the same bytes.
    `before(k)` runs before the k-th delivery (to kill a server mid-run)."""
    pending: set[asyncio.Task] = set()
    for k, (delivery, event, prepare) in enumerate(schedule):
        if before is not None:
            await before(k)
        if delivery not in payloads:
            payloads[delivery] = (event, json.dumps(prepare()).encode())
        event, body = payloads[delivery]
        pending.add(asyncio.create_task(deliver(delivery, event, body)))
        if len(pending) >= window:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.gather(*pending)


@pytest.mark.parametrize("faults", [False, True], ids=["clean", "30pct-faults"])
async def test_500_deliveries_two_sigkills(tmp_path, fake, faults):
    await run_scenario(tmp_path, fake, faults)
