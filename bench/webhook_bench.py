"""Webhook acknowledgement latency: N signed `issues.opened` deliveries, C at a time, into a real
`vllm-triage serve` process on loopback (dry-run, SQLite in a temporary directory). The worker runs too,
so acknowledgements compete with triage for the CPU as they would in production.

    .venv/bin/python bench/webhook_bench.py [--deliveries 2000] [--concurrency 200] [--client auto|wrk|python]
                                            [--processes N]   # VLLM_TRIAGE_INTAKE_PROCESSES of the server

The load comes from `wrk` (C, `apt-get install wrk`; bench/webhook_wrk.lua signs nothing itself, it sends
bodies signed here, each with its own delivery id) when it is installed: a Python client on the same two
cores costs as much CPU per request as the server and measures mostly itself (a no-op aiohttp endpoint
answers it at ~2,000/s, p99 ~160 ms at 200 in flight). `--client python` keeps the aiohttp client.

Goal: p99 <= 50 ms at 200 concurrent deliveries.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

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


async def wait_up(url: str, proc: subprocess.Popen, *, worker: bool = True) -> None:
    """Until /healthz answers (and, with `worker`, the worker runs: the rules are loaded, the start-up is over)."""
    async with aiohttp.ClientSession() as session:
        for _ in range(600):
            if proc.poll() is not None:
                raise SystemExit(f"server exited with {proc.returncode}")
            try:
                async with session.get(f"{url}/healthz") as r:
                    if r.status == 200 and (not worker or (await r.json()).get("worker")):
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("server did not come up")


def signature(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def summarise(latencies: list[float], seconds: float, client: str) -> dict[str, Any]:
    ms = sorted(x * 1000 for x in latencies)
    q = statistics.quantiles(ms, n=100)
    return {"client": client, "deliveries": len(ms), "p50_ms": q[49], "p90_ms": q[89], "p99_ms": q[98],
            "max_ms": ms[-1], "per_second": len(ms) / seconds if seconds else 0.0}


def measure(deliveries: int, concurrency: int, url: str, client: str = "auto") -> dict[str, Any]:
    """Ack latency of `deliveries` signed deliveries, `concurrency` in flight, after one warm-up round."""
    if client == "auto":
        client = "wrk" if shutil.which("wrk") else "python"
    if client == "wrk":
        return run_wrk(deliveries, concurrency, url)
    started = time.perf_counter()
    latencies = asyncio.run(run(deliveries + concurrency, concurrency, url))
    return summarise(latencies, time.perf_counter() - started, "python (aiohttp)")


def run_wrk(deliveries: int, concurrency: int, url: str, threads: int = 2) -> dict[str, Any]:
    """wrk with bench/webhook_wrk.lua: each thread stops after its share of deliveries and says so; wrk sleeps
    for its whole -d otherwise, so it gets SIGINT once every thread has stopped and prints its summary."""
    threads = min(threads, concurrency)
    with tempfile.TemporaryDirectory(prefix="wrk-") as tmp:
        requests = Path(tmp) / "requests.tsv"
        with requests.open("w") as out:
            for n in range(1, min(deliveries, 5000) + 1):
                body = payload(n)
                out.write(f"{signature(body)[len('sha256='):]}\t{body.decode()}\n")
        for phase, count in (("warm-up", concurrency), ("measure", deliveries)):
            proc = subprocess.Popen(
                ["wrk", f"-t{threads}", f"-c{concurrency}", "-d600s", "-s", str(ROOT / "bench" / "webhook_wrk.lua"),
                 url, "--", str(requests), f"{phase}-{uuid.uuid4().hex[:8]}", str(-(-count // threads))],
                stdout=subprocess.PIPE, text=True)
            assert proc.stdout is not None
            stopped, output = 0, []
            for line in proc.stdout:
                output.append(line)
                stopped += line.startswith("STOPPED")
                if stopped == threads:
                    proc.send_signal(signal.SIGINT)
            proc.wait()
        summary = next((line for line in output if line.startswith("WRK ")), None)
        if summary is None:
            raise SystemExit("wrk printed no summary:\n" + "".join(output))
        result = json.loads(summary[4:])
    if result["accepted"] < deliveries or result["socket_errors"]:
        raise SystemExit(f"wrk: {result['accepted']} of {deliveries} deliveries got 202, "
                         f"{result['socket_errors']} socket errors")
    return {"client": "wrk", "deliveries": result["requests"], "p50_ms": result["p50_us"] / 1000,
            "p90_ms": result["p90_us"] / 1000, "p99_ms": result["p99_us"] / 1000, "max_ms": result["max_us"] / 1000,
            "per_second": result["requests"] / result["seconds"]}


async def run(deliveries: int, concurrency: int, url: str) -> list[float]:
    bodies = [payload(n) for n in range(1, deliveries + 1)]
    latencies: list[float] = []
    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(body: bytes) -> None:
            headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
                       "X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": signature(body)}
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
    p.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    p.add_argument("--processes", type=int, default=1, help="the server's VLLM_TRIAGE_INTAKE_PROCESSES")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        env = {**os.environ, "GITHUB_WEBHOOK_SECRET": SECRET, "HOST": "127.0.0.1", "PORT": str(port),
               "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3", "VLLM_TRIAGE_DATA_DIR": tmp,
               "VLLM_TRIAGE_SOURCES_BUILD": "0", "VLLM_TRIAGE_INTAKE_PROCESSES": str(args.processes)}
        for name in ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "VLLM_TRIAGE_MODE"):
            env.pop(name, None)
        proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            asyncio.run(wait_up(url, proc))
            result = measure(args.deliveries, args.concurrency, url, args.client)
            server_side = asyncio.run(handler_histogram(url))
        finally:
            proc.terminate()
            proc.wait(15)
    print(f"webhook ack latency over {result['deliveries']} deliveries at concurrency {args.concurrency} "
          f"({result['client']}): p50 {result['p50_ms']:.1f} ms, p90 {result['p90_ms']:.1f} ms, "
          f"p99 {result['p99_ms']:.1f} ms, max {result['max_ms']:.1f} ms, {result['per_second']:.0f} acks/s")
    print(f"server-side handler time (verify, record, answer; from /metrics): {server_side}")
    print(f"load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0 if result["p99_ms"] <= 50 else 1


if __name__ == "__main__":
    raise SystemExit(main())
