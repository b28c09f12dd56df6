"""The dashboard's pages read only what they show: every statement the overview, the queue, the catalog, a rule's
page and /api/rules send to SQLite finds its rows through an index (SQLite's own query plan says so), none reads a
whole table of issues, decisions or deliveries, and none sorts a whole table for a page. The same statements run on
Postgres (tests/app/test_store_summary.py); bench/dashboard_bench.py times them at 100,000 issues."""

from __future__ import annotations

import re

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from bot.app.context import STORE
from bot.app.server import create_app
from bot.app.settings import from_env

from .conftest import fill, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

BIG = {"issue_summary", "issue_findings", "decisions", "deliveries", "issue_state", "candidate_links", "feedback",
       "dashboard_days"}
# partial indexes that hold only the few rows a page needs (issues whose labels a human removed)
PARTIAL = {"issue_state_labels_removed"}
PAGES = ("/dashboard/", "/dashboard/queue", "/dashboard/queue?sort=newest&page=1", "/dashboard/queue?reason=needs+info",
         "/dashboard/rules", "/dashboard/rules/pp-with-draft-model-without-pp", "/api/rules",
         "/api/rules/pp-with-draft-model-without-pp", "/dashboard/issues/vllm-project/vllm/105")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def client(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    env = server_env(tmp_path_factory.mktemp("plans"))
    for key, value in env.items():
        mp.setenv(key, value)
    client = TestClient(TestServer(create_app(from_env(env, core="thread"))))
    await client.start_server()
    await fill(client)
    yield client
    await client.close()
    mp.undo()


def full_reads(db, sql: str) -> list[str]:
    """The lines of a statement's query plan that read a big table whole or sort one."""
    tables = {m.group(2) or m.group(1): m.group(1)   # alias (or name) -> table
              for m in re.finditer(r"(?:FROM|JOIN)\s+(\w+)(?:\s+(?:AS\s+)?(?!WHERE|ON|JOIN|CROSS|LEFT|ORDER|GROUP)"
                                   r"(\w+))?", sql, re.IGNORECASE)}
    bad = []
    for *_, detail in db.execute("EXPLAIN QUERY PLAN " + sql).fetchall():
        scan = re.match(r"SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?", detail)
        if scan and tables.get(scan.group(1), scan.group(1)) in BIG and scan.group(2) not in PARTIAL:
            bad.append(detail)
        if "TEMP B-TREE FOR ORDER BY" in detail and "issue_summary" in sql:
            bad.append(detail)
    return bad


@pytest.mark.parametrize("path", PAGES)
async def test_a_page_reads_only_through_indexes(client, path):
    db = client.app[STORE]._db
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    try:
        resp = await client.get(path)
        assert resp.status == 200, path
    finally:
        db.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert selects, path
    assert not any("FROM decisions" in s for s in selects) or path.startswith("/dashboard/issues/"), path
    for sql in selects:
        assert full_reads(db, sql) == [], sql


async def test_server_timing_says_how_long_a_page_took(client):
    resp = await client.get("/dashboard/queue")
    assert re.fullmatch(r"app;dur=\d+\.\d", resp.headers["Server-Timing"])
