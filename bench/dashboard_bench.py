"""The dashboard's pages with 100,000 issues recorded: server time p50 / p99 on SQLite and on Postgres.

    .venv/bin/python -m bench.dashboard_bench                       # 100,000 issues, SQLite, and Postgres when
                                                                   # TEST_DATABASE_URL is set (a schema of its own)
    .venv/bin/python -m bench.dashboard_bench --issues 10000 --requests 50 --backends sqlite

1. Fill: `--issues` issues opened over three years (the newest in the last hour), ~88 % of those older than 60
   days closed, maintainers' feedback on ~2 % (suppressed rules, rejected and confirmed duplicate links, removed
   labels), a finished delivery per decision. Each decision is the service's real record of a triage of a
   synthetic report (bench/corpus.py: 400 reports run through bot.triage, varied per issue: number, title, date,
   duplicate candidates). All but the newest 1,000 are loaded as a deployment that predates the read model has
   them, then `migrate()` adds and fills the read model (timed: what an upgrade costs); the newest 1,000 go
   through the store's write path (`record_decision`, `save_issue_state`, `add_feedback`; record_decision timed),
   and five deliveries are parked through `claim` and `park`.
2. Measure: the App (bot.app.server.create_app, DASHBOARD_PUBLIC=1) in this process on loopback; each page is
   requested `--requests` times, interleaved, after 5 warm-up rounds, and its `Server-Timing: app;dur=` header
   (handler and template, set by the dashboard's middleware) is the server time. The client's wall time is
   printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.corpus import generate
from bot.app.plan import plan as make_plan
from bot.app.record import issue_meta
from bot.app.repo_config import RepoConfig
from bot.app.service import summary
from bot.rules import load_rules
from bot.stores.database import sqlite_path
from bot.stores.deliveries import IssueState, open_delivery_store
from bot.stores.deliveries.rows import issue_key, issue_state_params, save_issue_state_sql
from bot.stores.deliveries.sqlite import STORE
from bot.stores.migrations import migrate_postgres, migrate_sqlite
from bot.triage import triage

REPO = "vllm-project/vllm"
OTHER_REPOS = ("vllm-project/production-stack", "vllm-project/llm-compressor")
YEAR = 365 * 86400.0
SPAN = 3 * YEAR
TEMPLATES = 400
GOAL_MS = 100.0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


@functools.cache
def templates(n: int, seed: int) -> list[str]:
    """The records the service stores for `n` triaged synthetic reports, as JSON (copied and varied per issue)."""
    rules = load_rules()
    out = []
    for issue in generate(n, seed):
        result = triage(issue["number"], issue["title"], issue["body"], rules, created_at=issue["created_at"])
        labels, comment = list(result.decision.labels), result.decision.comment
        the_plan = make_plan(topics=labels, comment=comment, current_labels=[], bot_comments=[],
                             state=IssueState(REPO, issue["number"]), config=RepoConfig())
        out.append(json.dumps({**the_plan.as_dict(), "decision": summary(result, labels, comment),
                               "issue": issue_meta(issue["title"], issue["created_at"], None, []),
                               "config_errors": []}))
    return out


class Fill:
    """What one issue's history writes, decided up front so both backends get the same data."""

    def __init__(self, n: int, seed: int, now: float) -> None:
        self.n, self.now = n, now
        self.rng = random.Random(seed)
        self.templates = templates(TEMPLATES, seed)
        self.by_template: dict[int, list[int]] = {}

    def issue(self, i: int) -> dict[str, Any]:
        rng = self.rng
        number = i + 1
        repo = REPO if rng.random() < 0.95 else rng.choice(OTHER_REPOS)
        opened = self.now - 3600 - SPAN * (1 - i / self.n)
        t = rng.randrange(len(self.templates))
        record = json.loads(self.templates[t])
        decision = record["decision"]
        title = f"{decision.get('title') or 'report'} ({number})"
        decision["title"] = record["issue"]["title"] = title
        record["issue"]["created_at"] = iso(opened)
        record["issue"]["url"] = f"https://github.com/{repo}/issues/{number}"
        earlier = self.by_template.setdefault(t, [])
        candidates = []
        if earlier and rng.random() < 0.3:   # reports of the same failure link each other
            rules = [d["rule"] for d in decision.get("diagnoses") or ()]
            for target in rng.sample(earlier[-50:], min(len(earlier[-50:]), rng.randint(1, 3))):
                reason = f"same diagnosis: {rules[0]}; similar wording (71%)" if rules else "similar wording (74%)"
                candidates.append({"number": target, "score": round(rng.uniform(0.6, 0.95), 3), "reason": reason,
                                   "title": f"issue {target}", "state": "open", "url": None, "via": "index"})
        decision["candidates"] = candidates
        decision["duplicates"] = [c["number"] for c in candidates]
        earlier.append(number)
        closed = rng.random() < (0.88 if opened < self.now - 60 * 86400 else 0.3)
        feedback = []
        diagnoses = decision.get("diagnoses") or []
        r = rng.random()
        if diagnoses and r < 0.01:
            feedback.append((f"suppress-rule:{diagnoses[0]['rule']}", None))
        elif candidates and r < 0.03:
            feedback.append(("not-duplicate", candidates[0]["number"]))
        elif candidates and r < 0.04:
            feedback.append(("duplicate", candidates[0]["number"]))
        removed = decision.get("labels")[:1] if decision.get("labels") and rng.random() < 0.01 else []
        # the record as JSON (100,000 parsed records would take gigabytes)
        return {"repo": repo, "number": number, "record": json.dumps(record), "opened": opened,
                "labels": decision.get("labels") or [], "closed": closed, "feedback": feedback,
                "removed": removed, "reason": "issues.opened"}


REAL_PATH = 1000     # the newest issues are recorded through record_decision (its time is measured)


async def record(store: Any, item: dict[str, Any], write_ms: list[float]) -> None:
    t0 = time.perf_counter()
    await store.record_decision(f"bench-{item['number']}", item["repo"], item["number"], "live", item["reason"],
                                json.loads(item["record"]), True)
    write_ms.append((time.perf_counter() - t0) * 1000)
    if item["closed"] or item["removed"]:
        await store.save_issue_state(IssueState(item["repo"], item["number"], labels_suppressed=item["removed"],
                                                state="closed" if item["closed"] else "open"))
    for kind, target in item["feedback"]:
        await store.add_feedback(item["repo"], item["number"], kind, target, "dashboard:bench", None)


def bulk_rows(items: list[dict[str, Any]], now: float) -> dict[str, list[tuple]]:
    """The rows of the tables that predate the read model, as a deployment that upgrades has them."""
    rows: dict[str, list[tuple]] = {"decisions": [], "issue_state": [], "feedback": [], "deliveries": []}
    for it in items:
        opened = it["opened"]
        delivery = f"bench-{it['number']}"
        rows["decisions"].append((delivery, it["repo"], it["number"], "live", it["reason"],
                                  it["record"], True, opened + 60))
        rows["issue_state"].append(issue_state_params(IssueState(
            it["repo"], it["number"], labels_added=it["labels"],
            labels_suppressed=it["removed"], state="closed" if it["closed"] else "open"), opened + 61))
        rows["feedback"] += [(it["repo"], it["number"], kind, target, "dashboard:bench", None, opened + 3600)
                             for kind, target in it["feedback"]]
        rows["deliveries"].append((delivery, "issues", "opened", it["repo"], it["number"],
                                   issue_key(it["repo"], it["number"]), 1, "{}", opened + 1, "done", 1, 0.0,
                                   opened + 60))
    return rows


INSERTS = {
    "decisions": "INSERT INTO decisions (delivery_id, repo, number, mode, reason, plan, applied, created_at)"
                 " VALUES ({v})",
    "issue_state": None,   # save_issue_state_sql
    "feedback": "INSERT INTO feedback (repo, number, kind, target, actor, delivery_id, created_at) VALUES ({v})",
    "deliveries": "INSERT INTO deliveries (id, event, action, repo, issue_number, issue_key, installation_id,"
                  " payload, received_at, status, attempts, not_before, finished_at) VALUES ({v})",
}


def insert_sql(table: str, ph: str, width: int) -> str:
    return save_issue_state_sql(ph) if table == "issue_state" else INSERTS[table].format(v=", ".join([ph] * width))


def bulk_load(url: str, rows: dict[str, list[tuple]], postgres: bool) -> None:
    """The schema before the read model (the migrations before the read model's), then the rows, in one transaction."""
    if postgres:
        import psycopg

        from bot.stores.deliveries.postgres import BEFORE_READ_MODEL, MIGRATIONS

        migrate_postgres(url, STORE, MIGRATIONS[:BEFORE_READ_MODEL])
        with psycopg.connect(url) as conn, conn.cursor() as cur:
            for table, values in rows.items():
                cur.executemany(insert_sql(table, "%s", len(values[0])), values)
        return
    import sqlite3

    from bot.stores.deliveries.sqlite import BEFORE_READ_MODEL, MIGRATIONS

    db = sqlite3.connect(sqlite_path(url), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    migrate_sqlite(db, STORE, MIGRATIONS[:BEFORE_READ_MODEL])
    db.execute("BEGIN")
    for table, values in rows.items():
        db.executemany(insert_sql(table, "?", len(values[0])), [
            tuple(int(v) if isinstance(v, bool) else v for v in row) for row in values])
    db.execute("COMMIT")
    db.close()


async def fill(url: str, n: int, seed: int, postgres: bool) -> dict[str, Any]:
    """All but the newest REAL_PATH issues loaded as an older version stored them, the migrations that add and
    fill the read model (timed), then the newest through the store's write path (timed per decision)."""
    now = time.time()
    t0 = time.perf_counter()
    plan = Fill(n, seed, now)
    items = [plan.issue(i) for i in range(n)]
    log(f"  {n:,} issues prepared in {time.perf_counter() - t0:.1f}s")
    old, new = items[:-REAL_PATH], items[-REAL_PATH:]
    t0 = time.perf_counter()
    bulk_load(url, bulk_rows(old, now), postgres)
    log(f"  {len(old):,} loaded in {time.perf_counter() - t0:.0f}s")
    store = open_delivery_store(url, pool_size=8)
    t0 = time.perf_counter()
    await store.migrate()
    migrate_s = time.perf_counter() - t0
    log(f"  read model filled by the migration in {migrate_s:.1f}s")
    write_ms: list[float] = []
    for it in new:
        await record(store, it, write_ms)
    # a few deliveries that failed for good, through the worker's own calls (they move their issues in the queue)
    for it in [it for it in items if not it["closed"]][-5:]:
        await store.record_delivery(f"parked-{it['number']}", "issues", "edited", it["repo"], it["number"], 1, "{}")
        claimed = await store.claim("bench", 60, 8)
        await store.park(claimed.id, "bench", "HTTPError 502 (bench)")
    counts = await store.dashboard_counts()
    await store.close()
    if postgres:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ANALYZE")
    rule = max((k for k in counts if k.startswith("rule:")), key=lambda k: counts[k])[len("rule:"):]
    open_numbers = [it["number"] for it in items if not it["closed"] and it["repo"] == REPO]
    return {"migrate_s": migrate_s, "write_ms": write_ms, "counts": counts, "rule": rule, "open": open_numbers}


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * len(s)) - 1))]


async def measure(url: str, data_dir: Path, filled: dict[str, Any], requests: int) -> dict[str, dict[str, float]]:
    from aiohttp.test_utils import TestClient, TestServer

    from bot.app.server import create_app
    from bot.app.settings import from_env

    env = {"DATABASE_URL": url, "VLLM_TRIAGE_DATA_DIR": str(data_dir), "GITHUB_WEBHOOK_SECRET": "bench-secret",
           "VLLM_TRIAGE_WORKERS": "1", "VLLM_TRIAGE_SOURCES_BUILD": "0", "DASHBOARD_PUBLIC": "1",
           "DASHBOARD_TOKENS": "bench:bench-dashboard-token-0001", "HOST": "127.0.0.1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    client = TestClient(TestServer(create_app(from_env(env, core="thread"))))
    await client.start_server()
    try:
        queue_total = filled["counts"].get("queue", 0)
        deep = max(1, (queue_total // 50) // 2)
        recent = filled["open"][-2000:]
        rng = random.Random(1)
        pages = {
            "overview": lambda: "/dashboard/",
            "queue, page 1": lambda: "/dashboard/queue",
            f"queue, page {deep} (offset {(deep - 1) * 50:,})": lambda: f"/dashboard/queue?page={deep}",
            "queue, reason filter": lambda: "/dashboard/queue?reason=needs+info",
            "catalog": lambda: "/dashboard/rules",
            f"rule page ({filled['rule']})": lambda: f"/dashboard/rules/{filled['rule']}",
            "issue page": lambda: f"/dashboard/issues/{REPO}/{rng.choice(recent)}",
        }
        server: dict[str, list[float]] = {name: [] for name in pages}
        wall: dict[str, list[float]] = {name: [] for name in pages}
        for round_ in range(requests + 5):
            for name, path in pages.items():
                t0 = time.perf_counter()
                resp = await client.get(path())
                await resp.read()
                elapsed = (time.perf_counter() - t0) * 1000
                assert resp.status == 200, (name, resp.status)
                if round_ >= 5:   # warm-up: templates compiled, rules and catalog loaded
                    server[name].append(float(resp.headers["Server-Timing"].split("dur=")[1]))
                    wall[name].append(elapsed)
        return {name: {"p50": statistics.median(v), "p99": pct(v, 0.99), "max": max(v),
                       "wall_p50": statistics.median(wall[name]), "wall_p99": pct(wall[name], 0.99)}
                for name, v in server.items()}
    finally:
        await client.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def with_options(url: str, options: str) -> str:
    return url + ("&" if "?" in url else "?") + "options=" + quote(options, safe="")


async def run_backend(backend: str, n: int, requests: int, seed: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="dashboard-bench-"))
    schema = None
    if backend == "sqlite":
        url = f"sqlite:///{tmp / 'triage.sqlite3'}"
    else:
        import psycopg

        base = os.environ["TEST_DATABASE_URL"]
        schema = "bench_" + uuid.uuid4().hex[:8]
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        url = with_options(base, f"-csearch_path={schema}")
    try:
        log(f"{backend}: filling {n:,} issues")
        filled = await fill(url, n, seed, backend == "postgres")
        log(f"{backend}: measuring {requests} requests per page")
        pages = await measure(url, tmp / "data", filled, requests)
        return {"backend": backend, "issues": n, "migrate_s": filled["migrate_s"],
                "queue": filled["counts"].get("queue"),
                "open": filled["counts"].get("open"), "write_p50": statistics.median(filled["write_ms"]),
                "write_p99": pct(filled["write_ms"], 0.99), "pages": pages}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if schema is not None:
            import psycopg

            with psycopg.connect(os.environ["TEST_DATABASE_URL"], autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")


def report(results: list[dict[str, Any]]) -> str:
    lines = []
    for r in results:
        lines.append(f"\n{r['backend']}: {r['issues']:,} issues ({r['open']:,} open, {r['queue']:,} in the queue);"
                     f" the migration that fills the read model {r['migrate_s']:.1f}s; record_decision (read model"
                     f" included) p50 {r['write_p50']:.2f} ms, p99 {r['write_p99']:.2f} ms")
        lines.append("| page | server p50 ms | server p99 ms | max | client p50 / p99 ms |")
        lines.append("|---|---|---|---|---|")
        for name, m in r["pages"].items():
            ok = " ✅" if m["p99"] <= GOAL_MS else " ❌"
            lines.append(f"| {name} | {m['p50']:.1f} | {m['p99']:.1f}{ok} | {m['max']:.1f} |"
                         f" {m['wall_p50']:.1f} / {m['wall_p99']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--issues", type=int, default=100_000)
    ap.add_argument("--requests", type=int, default=200, help="measured requests per page")
    ap.add_argument("--backends", nargs="+", choices=("sqlite", "postgres"), default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args(argv)
    backends = a.backends or (("sqlite", "postgres") if os.environ.get("TEST_DATABASE_URL") else ("sqlite",))
    if "postgres" in backends and not os.environ.get("TEST_DATABASE_URL"):
        ap.error("postgres needs TEST_DATABASE_URL")
    results = [asyncio.run(run_backend(b, a.issues, a.requests, a.seed)) for b in backends]
    print(report(results))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
