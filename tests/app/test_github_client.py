"""The GitHub client's retry policy, on its own and against the fake's faults."""

from __future__ import annotations

import time

import aiohttp
import gidgethub
import pytest

from bot.app.github import GitHub, GitHubClient, RetryLater, TransientError, idempotent, retry_delay

from .conftest import live_settings

NOW = 1_700_000_000.0


def delay(status, headers=None, message="", attempt=1):
    return retry_delay(status, headers or {}, message, attempt, now=NOW, secondary_wait=60, backoff=1)


def test_retry_delay_rules():
    assert delay(429, {"retry-after": "7"}) == 7
    assert delay(403, {"retry-after": "3"}) == 3
    assert delay(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)}) == 31
    assert delay(403, {}, "You have exceeded a secondary rate limit") == 60
    assert delay(403, {}, "You have exceeded a secondary rate limit", attempt=3) == 240
    assert delay(429) == 60
    assert delay(403, {}, "Resource not accessible by integration") is None
    assert delay(404) is None and delay(422) is None
    assert 0.5 <= delay(502) <= 1.5 and 2 <= delay(503, attempt=3) <= 6


def test_idempotent_calls():
    assert idempotent("GET", "/x") and idempotent("PATCH", "/x") and idempotent("DELETE", "/x")
    assert idempotent("POST", "https://api.github.com/repos/o/r/issues/1/labels")
    assert idempotent("POST", "https://api.github.com/app/installations/1/access_tokens")
    assert not idempotent("POST", "https://api.github.com/repos/o/r/issues/1/comments")


@pytest.fixture
async def client(tmp_path, fake):
    fake.add_repo("o/r", ["bug"])
    fake.add_issue("o/r", 1, "t", "b")
    settings = live_settings(tmp_path, fake, http_timeout=0.5, max_inline_wait=0.5)
    async with aiohttp.ClientSession() as session:
        github = GitHub(settings, session)
        yield github, await github.installation(1)


async def test_rate_limits_and_5xx_are_retried_inline(client, fake):
    _, gh = client
    for kind in ("429", "403-secondary", "500", "503", "reset", "timeout"):
        fake.faults.timeout_sleep = 1.0
        fake.fail("GET", r"/issues/1$", kind, times=2)
        issue = await gh.getitem("/repos/o/r/issues/1")
        assert issue["number"] == 1, kind
    assert len([c for c in fake.calls if c.fault]) == 10  # the timeouts answer late, not as faults


async def test_timeouts_and_resets_are_retried_for_reads(client, fake):
    _, gh = client
    fake.set_faults(rate=1.0, kinds=("timeout",), timeout_sleep=1.0)
    with pytest.raises(TransientError):
        await gh.getitem("/repos/o/r/issues/1")  # every attempt times out
    fake.set_faults(rate=0.5, kinds=("reset",), seed=3)
    for _ in range(5):
        assert (await gh.getitem("/repos/o/r/issues/1"))["number"] == 1


async def test_a_comment_is_not_posted_twice_inline_after_a_5xx(client, fake):
    _, gh = client
    fake.fail("POST", r"/comments$", "502-after")
    with pytest.raises(gidgethub.GitHubBroken):
        await gh.post("/repos/o/r/issues/1/comments", data={"body": "x"})
    assert len(fake.repos["o/r"].issues[1].comments) == 1  # created once, and not again
    fake.repos["o/r"].issues[1].comments.clear()
    fake.fail("POST", r"/comments$", 429)  # a rate-limited call did nothing: repeating it is safe
    await gh.post("/repos/o/r/issues/1/comments", data={"body": "x"})
    assert len(fake.repos["o/r"].issues[1].comments) == 1


async def test_long_waits_release_the_delivery(client, fake):
    _, gh = client
    fake.set_faults(rate=0.0, retry_after="30")
    fake.fail("GET", r"/issues/1$", 429)
    with pytest.raises(RetryLater) as e:
        await gh.getitem("/repos/o/r/issues/1")
    assert e.value.wait == 30
    fake.fail("GET", r"/issues/1$", 403)  # plain 403: a permission problem, surfaced, not retried
    with pytest.raises(gidgethub.BadRequest):
        await gh.getitem("/repos/o/r/issues/1")


async def test_primary_limit_used_up_waits_until_reset(client, fake):
    _, gh = client
    fake.fail("GET", r"/issues/1$", "403-primary", times=10)
    started = time.monotonic()
    with pytest.raises(RetryLater):  # the reset is ~1 s away, longer than max_inline_wait (0.5 s)
        await gh.getitem("/repos/o/r/issues/1")
    assert time.monotonic() - started < 1.0


async def test_token_cached_per_installation_and_bot_login(client, fake):
    github, gh = client
    assert await github.installation(1) is gh
    assert len([c for c in fake.calls if c.path.endswith("/access_tokens")]) == 1
    assert await github.bot_login() == "vllm-triage-test[bot]"
    github._tokens[1] = (github._tokens[1][0], time.time() + 60)  # expires within the refresh margin
    await github.installation(1)
    assert len([c for c in fake.calls if c.path.endswith("/access_tokens")]) == 2


def test_client_needs_credentials(tmp_path):
    from .conftest import make_settings

    with pytest.raises(ValueError):
        GitHub(make_settings(tmp_path), None)  # type: ignore[arg-type]
    assert GitHubClient
