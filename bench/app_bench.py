"""The App under load: webhook acknowledgement latency at C concurrent signed deliveries, and end-to-end time
from a delivery to the fake GitHub holding the labels and the comment.

    .venv/bin/python -m bench.app_bench [--concurrency 50 200] [--processes 1 2] [--deliveries 2000] [--e2e 200]

Ack: `vllm-triage serve` (dry-run, SQLite in a temporary directory, the worker running) on loopback, driven by
bench/webhook_bench.py's client (wrk when installed, else aiohttp). End to end: the same server in live mode
against the stateful fake GitHub of tests/app/fakegithub.py (run in this process, on loopback), real rules;
issues are synthetic bug reports with a known failure (bench/corpus.py). Sequential: one delivery at a time;
burst: all at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp

from bench import webhook_bench as wb
from bench.corpus import Generator
from bot.labels import NEEDS_INFO, TOPICS
from bot.rules import load_rules
from bot.triage import triage

ROOT = Path(__file__).resolve().parents[1]


def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))] * 1000 if s else 0.0


def _server(env_extra: dict[str, str], tmp: str) -> tuple[subprocess.Popen, str]:
    port = wb.free_port()
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port), "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
           "VLLM_TRIAGE_DATA_DIR": tmp, "VLLM_TRIAGE_SOURCES_BUILD": "0", **env_extra}
    for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "VLLM_TRIAGE_MODE"):
        if name not in env_extra:
            env.pop(name, None)
    log = open(Path(tmp) / "server.log", "ab")  # noqa: SIM115 - owned by the process
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT)
    return proc, f"http://127.0.0.1:{port}"


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def ack(concurrency: int, deliveries: int, client: str = "auto", processes: int = 1) -> dict[str, Any]:
    """`processes`: VLLM_TRIAGE_INTAKE_PROCESSES of the server (1: the serving process alone)."""
    with tempfile.TemporaryDirectory(prefix="ack-bench-") as tmp:
        proc, url = _server({"GITHUB_WEBHOOK_SECRET": wb.SECRET, "VLLM_TRIAGE_INTAKE_PROCESSES": str(processes)}, tmp)
        try:
            asyncio.run(wb.wait_up(url, proc))
            result = wb.measure(deliveries, concurrency, url, client)
        finally:
            _stop(proc)
    return {"concurrency": concurrency, "processes": processes, **result}


async def _e2e(n_seq: int, n_burst: int, seed: int) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from tests.app.conftest import headers as signed_headers  # noqa: PLC0415 - test helpers, bench-only
    from tests.app.conftest import issue_payload
    from tests.app.fakegithub import APP_ID, FakeGitHub

    fake = FakeGitHub()
    await fake.start()
    repo_name = "vllm-project/vllm"
    repo = fake.add_repo(repo_name, [*TOPICS, NEEDS_INFO, "bug"])
    issues = []
    rules = load_rules()
    for issue in Generator(seed).issues(3 * (n_seq + n_burst), failure_share=1.0):
        decision = triage(issue["number"], issue["title"], issue["body"], rules).decision
        if decision.labels and decision.comment:  # the issues that end with both (some get labels only)
            fake.add_issue(repo_name, issue["number"], issue["title"], issue["body"])
            issues.append(issue["number"])
        if len(issues) == n_seq + n_burst:
            break
    tmp = tempfile.mkdtemp(prefix="e2e-bench-")
    from tests.app.conftest import SECRET

    proc, url = _server({"GITHUB_APP_ID": str(APP_ID), "GITHUB_PRIVATE_KEY": fake.private_key,
                         "GITHUB_WEBHOOK_SECRET": SECRET, "GITHUB_API_URL": fake.base_url,
                         "VLLM_TRIAGE_MODE": "live", "VLLM_TRIAGE_POLL_INTERVAL": "0.02"}, tmp)
    try:
        await wb.wait_up(url, proc)

        def done(number: int) -> bool:
            return bool(repo.issues[number].labels) and bool(repo.bot_comments(number))

        async with aiohttp.ClientSession() as session:
            async def deliver(number: int) -> float:
                issue = repo.issues[number]
                body = json.dumps(issue_payload(repo_name, number, issue.title, issue.body)).encode()
                started = time.perf_counter()
                async with session.post(f"{url}/webhook", data=body,
                                        headers=signed_headers("issues", body, str(uuid.uuid4()))) as r:
                    assert r.status == 202, r.status
                deadline = started + 30
                while not done(number):
                    if time.perf_counter() > deadline:
                        return float("inf")
                    await asyncio.sleep(0.002)
                return time.perf_counter() - started

            await deliver(issues[0])  # warm-up: the triage child loads the rules
            sequential = [await deliver(n) for n in issues[1:n_seq]]
            began = time.perf_counter()
            burst = await asyncio.gather(*(deliver(n) for n in issues[n_seq:]))
            burst_s = time.perf_counter() - began
    finally:
        _stop(proc)
        await fake.stop()
    ok_seq = [x for x in sequential if x != float("inf")]
    ok_burst = [x for x in burst if x != float("inf")]
    return {"sequential": {"issues": len(sequential), "completed": len(ok_seq), "p50_ms": _pct(ok_seq, 0.5),
                           "p99_ms": _pct(ok_seq, 0.99)},
            "burst": {"issues": len(burst), "completed": len(ok_burst), "p50_ms": _pct(ok_burst, 0.5),
                      "p99_ms": _pct(ok_burst, 0.99), "seconds": burst_s},
            "github_calls": len(fake.calls)}


def e2e(n_seq: int, n_burst: int, seed: int = 5) -> dict[str, Any]:
    return asyncio.run(_e2e(n_seq, n_burst, seed))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--deliveries", type=int, default=2000)
    ap.add_argument("--e2e", type=int, default=200, help="issues in the end-to-end burst")
    ap.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2], help="VLLM_TRIAGE_INTAKE_PROCESSES values")
    a = ap.parse_args()
    out = {"ack": [ack(c, a.deliveries, a.client, n) for n in a.processes for c in a.concurrency],
           "e2e": e2e(20, a.e2e)}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
