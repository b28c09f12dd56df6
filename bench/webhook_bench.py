"""Webhook acknowledgement latency: N signed `issues.opened` deliveries, C at a time, into a real
`vllm-triage serve` process on loopback (dry-run, SQLite in a temporary directory). The worker runs too,
so acknowledgements compete with triage for the CPU as they would in production.

    .venv/bin/python bench/webhook_bench.py [--deliveries 2000] [--concurrency 200]

Goal: p99 <= 50 ms at 200 concurrent deliveries.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
SECRET = "bench-secret"
BODY = """### Your current environment
vLLM Version: 0.11.0
PyTorch version: 2.8.0+cu128
GPU 0: NVIDIA H100 80GB HBM3

### 🐛 Describe the bug
`vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --max-model-len 32768`

```
(EngineCore_DP0 pid=1234) ERROR 10-02 11:22:33 [core.py:708] EngineCore failed to start.
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB
```
"""


def payload(n: int) -> bytes:
    return json.dumps({
        "action": "opened",
        "issue": {"number": n, "title": f"[Bug]: OOM at startup {n}", "body": BODY, "state": "open", "labels": [],
                  "user": {"login": "reporter", "type": "User"}, "created_at": "2025-10-02T11:22:33Z"},
        "repository": {"full_name": "bench/repo", "name": "repo", "owner": {"login": "bench"}},
        "sender": {"login": "reporter", "type": "User"}, "installation": {"id": 1},
    }).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_up(url: str, proc: subprocess.Popen) -> None:
    async with aiohttp.ClientSession() as session:
        for _ in range(300):
            if proc.poll() is not None:
                raise SystemExit(f"server exited with {proc.returncode}")
            try:
                async with session.get(f"{url}/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("server did not come up")


async def run(deliveries: int, concurrency: int, url: str) -> list[float]:
    bodies = [payload(n) for n in range(1, deliveries + 1)]
    latencies: list[float] = []
    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(body: bytes) -> None:
            headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                       "X-GitHub-Delivery": str(uuid.uuid4()),
                       "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()}
            async with gate:
                started = time.perf_counter()
                async with session.post(f"{url}/webhook", data=body, headers=headers) as r:
                    await r.read()
                    assert r.status == 202, r.status
                latencies.append(time.perf_counter() - started)

        await asyncio.gather(*(one(b) for b in bodies[: concurrency]))  # warm up connections
        latencies.clear()
        started = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies[concurrency:]))
        elapsed = time.perf_counter() - started
    print(f"throughput: {len(latencies) / elapsed:.0f} deliveries/s")
    return latencies


async def handler_histogram(url: str) -> str:
    async with aiohttp.ClientSession() as session, session.get(f"{url}/metrics") as r:
        text = await r.text()
    buckets = []
    for line in text.splitlines():
        if line.startswith("vllm_triage_webhook_seconds_bucket"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float("inf") if bound == "+Inf" else float(bound), float(line.rsplit(" ", 1)[1])))
    total = buckets[-1][1] if buckets else 0
    parts = []
    for q in (0.5, 0.99):
        bound = next((b for b, count in buckets if count >= q * total), float("inf"))
        parts.append(f"p{int(q * 100)} <= {bound * 1000:g} ms")
    return ", ".join(parts) + f" ({int(total)} requests)"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--deliveries", type=int, default=2000)
    p.add_argument("--concurrency", type=int, default=200)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {**os.environ, "GITHUB_WEBHOOK_SECRET": SECRET, "HOST": "127.0.0.1", "PORT": str(port),
               "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3"}
        for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "VLLM_TRIAGE_MODE"):
            env.pop(name, None)
        proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            asyncio.run(wait_up(url, proc))
            latencies = asyncio.run(run(args.deliveries + args.concurrency, args.concurrency, url))
            server_side = asyncio.run(handler_histogram(url))
        finally:
            proc.terminate()
            proc.wait(15)
    ms = sorted(x * 1000 for x in latencies)
    q = statistics.quantiles(ms, n=100)
    print(f"webhook ack latency over {len(ms)} deliveries at concurrency {args.concurrency}: "
          f"p50 {q[49]:.1f} ms, p90 {q[89]:.1f} ms, p99 {q[98]:.1f} ms, max {ms[-1]:.1f} ms")
    print(f"server-side handler time (verify, record, answer; from /metrics): {server_side}")
    print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0 if q[98] <= 50 else 1


if __name__ == "__main__":
    raise SystemExit(main())
