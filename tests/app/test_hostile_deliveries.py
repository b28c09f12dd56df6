"""Signed deliveries an attacker or a broken sender could make: nesting that exhausts the JSON decoder's
recursion, numbers no column holds, fields of the wrong type or missing, lone UTF-16 surrogates. Each is
refused at intake with a 400 and a log line, or, once recorded, fails at once with its reason (never retried
into a parked delivery many minutes later). Both store backends."""

from __future__ import annotations

import json
import logging

import pytest

from .conftest import issue_payload, make_settings
from .pg import pg_url  # noqa: F401 - fixture


# requested before make_bot in each test, so the schema is dropped after the server is closed (a server still
# holding a transaction would block DROP SCHEMA for good)
@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'bot.sqlite3'}"
    return request.getfixturevalue("pg_url")


def nested(depth: int) -> bytes:
    return b'{"action": "opened", "a": ' + b"[" * depth + b"]" * depth + b"}"


async def test_deep_nesting_and_numbers_past_64_bits_get_400_and_a_log_line(database_url, tmp_path, make_bot,
                                                                             caplog):
    bot = await make_bot(make_settings(tmp_path, database_url=database_url))
    caplog.set_level(logging.WARNING, logger="vllm_triage.server")
    for depth in (1_000, 100_000):
        response = await bot.send("issues", nested(depth))
        assert response.status == 400, (depth, await response.text())
        assert "nest" in (await response.json())["message"]
    too_big = issue_payload("o/r", 2**63, "[Bug]: x", "y")
    response = await bot.send("issues", too_big)
    assert response.status == 400, await response.text()
    assert "issue.number" in (await response.json())["message"]
    installation = issue_payload("o/r", 5, "[Bug]: x", "y", installation={"id": 2**64})
    assert (await bot.send("issues", installation)).status == 400
    assert len([r for r in caplog.records if "refused" in r.getMessage()]) == 4
    assert (await bot.get("/healthz"))["deliveries"] == {"queued": 0, "running": 0, "done": 0, "parked": 0}
    fine = await bot.send("issues", issue_payload("o/r", 2**31 - 1, "[Bug]: x", "y"))
    assert fine.status == 202, await fine.text()
    assert (await bot.drain())["done"] == 1


LONE = "\ud83d"  # the first half of a surrogate pair; json.dumps writes it as the escape \ud83d


def lone_surrogate_issue(number: int) -> tuple[str, str]:
    title = f"[Bug]: engine dies {LONE}"
    body = ("### Your current environment\ncollect_env output here\n### 🐛 Describe the bug\n"
            f"```\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB {LONE}\n```\n")
    return title, body


def valid_utf8(value) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def test_a_lone_surrogate_in_a_payload_is_made_valid_before_triage(database_url, tmp_path, make_bot):
    from bot.triage import triage

    bot = await make_bot(make_settings(tmp_path, database_url=database_url), triage_fn=triage)
    title, body = lone_surrogate_issue(3)
    response = await bot.send("issues", issue_payload("o/r", 3, title, body))
    assert response.status == 202, await response.text()
    assert (await bot.drain(60))["done"] == 1
    [decision] = await bot.get("/api/decisions")
    comment = decision["plan"]["decision"]["comment"]
    assert "\ufffd" in comment and valid_utf8(decision)


async def test_a_lone_surrogate_read_from_github_is_commented_once_and_the_state_saved(tmp_path, fake, make_bot):
    from bot.app.server import STORE
    from bot.triage import triage

    from .conftest import live_settings

    repo = "vllm-project/vllm"
    fake.add_repo(repo, ["bug", "memory", "needs-info"])
    title, body = lone_surrogate_issue(4)
    fake.add_issue(repo, 4, title, body)
    bot = await make_bot(live_settings(tmp_path, fake), triage_fn=triage)
    assert (await bot.send("issues", issue_payload(repo, 4, "[Bug]: engine dies", "stale"))).status == 202
    counts = await bot.drain(60)
    assert counts["done"] == 1 and counts["parked"] == 0
    [comment] = fake.repos[repo].bot_comments(4)
    assert "\ufffd" in comment.body and valid_utf8(comment.body)
    state = await bot.app[STORE].issue_state(repo, 4)
    assert state is not None and state.comment_id == comment.id and state.comment_sha
    assert [c.method for c in fake.writes() if "comments" in c.path] == ["POST"]


@pytest.mark.parametrize(("payload", "field"), [
    ({"action": "opened", "repository": {"full_name": "o/r"}}, "issue"),
    ({"action": "opened", "issue": "12", "repository": {"full_name": "o/r"}}, "issue"),
    (issue_payload("o/r", 1, "t", "b") | {"repository": None}, "repository"),
    (issue_payload("o/r", 1, "t", "b") | {"repository": {"full_name": 5}}, "repository.full_name"),
    (issue_payload("o/r", 1, "t", "b") | {"installation": {"id": "one"}}, "installation.id"),
])
async def test_intake_refuses_an_issues_event_it_cannot_act_on(tmp_path, make_bot, payload, field):
    bot = await make_bot(make_settings(tmp_path))
    response = await bot.send("issues", payload)
    assert response.status == 400, await response.text()
    assert field in (await response.json())["message"]


@pytest.mark.parametrize("number", ["12", 1.5, True, None, -3, 0])
async def test_intake_refuses_an_issue_number_that_is_not_a_positive_integer(tmp_path, make_bot, number):
    bot = await make_bot(make_settings(tmp_path))
    payload = issue_payload("o/r", 1, "t", "b")
    payload["issue"]["number"] = number
    for event in ("issues", "issue_comment"):
        response = await bot.send(event, payload)
        assert response.status == 400, (event, await response.text())
        assert "issue.number" in (await response.json())["message"]


@pytest.mark.parametrize(("event", "payload", "field"), [
    ("issues", issue_payload("o/r", 1, "t", "b", labels=["x"]) | {"action": "opened"}, None),
    ("issues", {**issue_payload("o/r", 1, "t", "b"), "issue": {"number": 1, "title": ["a"], "state": "open"}},
     "issue.title"),
    ("issues", {**issue_payload("o/r", 1, "t", "b"), "issue": {"number": 1, "labels": 7}}, "issue.labels"),
    ("installation", {"action": "created", "installation": {"account": {"login": "x"}}}, "installation.id"),
])
async def test_a_recorded_payload_the_handlers_cannot_use_is_parked_at_once_with_its_reason(
        database_url, tmp_path, make_bot, event, payload, field):
    """A delivery recorded before intake checked it (or by an older version) fails once, not eight times."""
    from bot.app.server import STORE

    bot = await make_bot(make_settings(tmp_path, database_url=database_url, max_attempts=8,
                                       retry_base_seconds=5.0))
    store = bot.app[STORE]
    assert await store.record_delivery("bad-1", event, "opened", "o/r", 1, 1, json.dumps(payload)) == "queued"
    await store.record_delivery("bad-2", event, "opened", "o/r", 2, 1, "[" * 5_000 + "]" * 5_000)
    await store.record_delivery("bad-3", event, "opened", "o/r", 3, 1, "{not json")
    counts = await bot.drain(20)
    expected_parked = 2 if field is None else 3
    assert counts["parked"] == expected_parked, counts
    parked = {d["id"]: d for d in await bot.get("/api/deliveries?status=parked")}
    assert all(d["attempts"] == 1 for d in parked.values())
    assert "malformed" in parked["bad-2"]["last_error"] and "malformed" in parked["bad-3"]["last_error"]
    if field is not None:
        assert field in parked["bad-1"]["last_error"]


async def test_a_4xx_that_is_not_a_rate_limit_parks_at_once_and_a_5xx_is_retried(tmp_path, fake, make_bot):
    from .conftest import live_settings

    repo = "vllm-project/vllm"
    fake.add_repo(repo, ["bug", "needs-info"])
    fake.add_issue(repo, 5, "[Bug]: x", "y")
    fake.add_issue(repo, 6, "[Bug]: x", "y")
    fake.fail("POST", r"/issues/5/comments$", 422, times=100)
    fake.fail("GET", r"/issues/6$", 502, times=3)
    bot = await make_bot(live_settings(tmp_path, fake, retry_base_seconds=0.01, retry_max_seconds=0.02,
                                       http_retries=0))
    await bot.send("issues", issue_payload(repo, 5, "[Bug]: x", "y"), delivery="unfixable")
    await bot.send("issues", issue_payload(repo, 6, "[Bug]: x", "y"), delivery="transient")
    counts = await bot.drain(30)
    assert counts == {"queued": 0, "running": 0, "done": 1, "parked": 1}
    [parked] = await bot.get("/api/deliveries?status=parked")
    assert parked["id"] == "unfixable" and parked["attempts"] == 1 and "422" in parked["last_error"]
    assert len(fake.repos[repo].bot_comments(6)) == 1
