"""Three `serve` processes on one PostgreSQL behind one webhook stream (a round-robin proxy that tries the next
replica when one does not answer): 1,000 deliveries (opens, edits, redeliveries, comments, from the e2e
schedule), one replica SIGKILLed mid-run and never restarted. No delivery may be lost, no issue may get two
bot comments, and every issue must end with the right labels: the survivors take over the dead replica's
leases, and per-issue serialisation holds across processes. The replicas share the duplicate index too."""

from __future__ import annotations

import asyncio
import random
import time

import aiohttp

from . import test_e2e as e2e
from .conftest import headers
from .faketriage import expected_comment, expected_labels
from .pg import pg_url  # noqa: F401 - fixture

N_ISSUES = 150
N_DELIVERIES = 1000
KILL_AT = 400
KILLED = 1


async def test_three_replicas_one_killed(tmp_path, fake, pg_url, monkeypatch):  # noqa: F811
    monkeypatch.setattr(e2e, "N_ISSUES", N_ISSUES)
    monkeypatch.setattr(e2e, "N_DELIVERIES", N_DELIVERIES)
    fake.add_repo(e2e.REPO, e2e.REPO_LABELS, config=e2e.CONFIG)
    schedule = e2e.build_schedule(fake, random.Random(23))
    assert len(schedule) == N_DELIVERIES
    replicas = []
    for i in range(3):
        home = tmp_path / f"replica{i}"
        home.mkdir()
        replica = e2e.ServerProcess(home, fake.base_url, fake.private_key)
        replica.env.update({"DATABASE_URL": pg_url, "VLLM_TRIAGE_WORKERS": "6"})
        replicas.append(replica)
    payloads: dict[str, tuple[str, bytes]] = {}
    acked: dict[str, set[int]] = {}
    started = time.monotonic()
    for replica in replicas:
        replica.start()
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
            turn = 0

            async def deliver(delivery: str, event: str, body: bytes) -> None:
                nonlocal turn
                turn += 1
                i = turn % 3
                while True:  # the proxy: the next replica when one refuses or times out
                    try:
                        async with session.post(f"{replicas[i].url}/webhook", data=body,
                                                headers=headers(event, body, delivery)) as response:
                            assert response.status in (200, 202), (delivery, response.status, await response.text())
                            acked.setdefault(delivery, set()).add(i)
                            return
                    except (TimeoutError, aiohttp.ClientError):
                        i = (i + 1) % 3
                        await asyncio.sleep(0.02)

            async def json_of(url: str):
                async with session.get(url) as r:
                    return await r.json()

            deadline = time.monotonic() + 90  # three cold starts on a loaded 2-core runner
            for replica in replicas:  # all three migrated and working before the stream starts
                while True:
                    try:
                        if (await json_of(f"{replica.url}/healthz")).get("worker"):
                            break
                    except (TimeoutError, aiohttp.ClientError):
                        pass
                    assert time.monotonic() < deadline, "a replica did not start"
                    await asyncio.sleep(0.05)

            async def kill_while_busy() -> int:
                """SIGKILL the replica once it has finished deliveries and while it holds leases (so that a survivor
                must take those over)."""
                mark = f":{replicas[KILLED].proc.pid}:"
                held: list[str] = []
                for _ in range(1000):
                    done = await json_of(f"{replicas[0].url}/api/deliveries?status=done&limit=10000")
                    if any(mark in (d["claimed_by"] or "") for d in done):
                        running = await json_of(f"{replicas[0].url}/api/deliveries?status=running&limit=1000")
                        held = [d["id"] for d in running if mark in (d["claimed_by"] or "")]
                        if held:
                            break
                    await asyncio.sleep(0.01)
                replicas[KILLED].kill()
                return len(held)

            held: list[int] = []

            async def before(k: int) -> None:
                if k == KILL_AT:
                    held.append(await kill_while_busy())

            await e2e.stream(schedule, payloads, deliver, window=24, before=before)
            held_at_kill = held[0] if held else 0

            survivor = replicas[0].url
            deadline = time.monotonic() + 180  # a liveness bound: three replicas and Postgres on 2 cores
            while True:
                async with session.get(f"{survivor}/healthz") as r:
                    counts = (await r.json())["deliveries"]
                if counts["queued"] == 0 and counts["running"] == 0:
                    break
                assert time.monotonic() < deadline, f"queue did not drain: {counts}"
                await asyncio.sleep(0.1)
            async with session.get(f"{survivor}/api/deliveries?limit=10000") as r:
                deliveries = {d["id"]: d for d in await r.json()}
    finally:
        for replica in replicas:
            replica.stop()
    elapsed = time.monotonic() - started

    assert set(acked) == set(payloads), "every delivery was acknowledged"
    assert {i for hosts in acked.values() for i in hosts} == {0, 1, 2}, "the stream reached every replica"
    assert set(deliveries) == set(payloads), "no delivery lost"
    assert {d["status"] for d in deliveries.values()} == {"done"}, [d for d in deliveries.values()
                                                                    if d["status"] != "done"][:3]
    repo = fake.repos[e2e.REPO]
    for n, issue in sorted(repo.issues.items()):
        want = [{"usage": "question"}.get(label, label) for label in expected_labels(issue.title, issue.body)]
        want = [label for label in want if label in e2e.REPO_LABELS]
        human = ["good first issue"] if n % 10 == 0 else []
        assert sorted(issue.labels) == sorted(set(want + human)), (n, issue.title, issue.body)
        comments = repo.bot_comments(n)
        assert len(comments) == 1, (n, comments)
        assert comments[0].body == expected_comment(n, issue.body)
    created = [c for c in fake.calls if c.method == "POST" and c.path.endswith("/comments") and c.status == 201]
    assert len(created) == N_ISSUES, "one comment created per issue, then only edits"
    finishers = {d["claimed_by"].split(":")[1] for d in deliveries.values() if d["claimed_by"]}
    taken_over = sum(1 for d in deliveries.values() if d["attempts"] > 1)
    assert held_at_kill and taken_over >= 1, "the killed replica held leases that a survivor took over"
    assert len(finishers) == 3, "every replica finished deliveries"
    print(f"3 replicas: {len(schedule)} deliveries ({len(payloads)} distinct), {len(fake.calls)} GitHub calls, "
          f"{held_at_kill} leases held by the killed replica, {taken_over} deliveries taken over, {elapsed:.1f}s")
