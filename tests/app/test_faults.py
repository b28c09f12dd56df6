"""Fault injection against the fake GitHub, one table: each fault ends in a sane, logged state, never a loop.

Covered elsewhere and not repeated here: inline retries of reads (test_github_client.py), a 5xx on the
comment before/after its effect and a 422 on labels that parks (test_live.py), a 404 on the issue read
(test_live.py), SIGKILLs with 30 % random faults (test_e2e.py).

Each case sends one `issues.opened` delivery for an issue, injects the fault on one GitHub endpoint and checks:
  * the delivery ends as expected: done, parked (visible in /api/deliveries with the HTTP error) or waiting
    for a rate limit (queued with a later not_before, no attempt counted);
  * at most one bot comment exists, and the labels are the triage's when the delivery is done;
  * the number of GitHub calls stays bounded (no retry loop), also after waiting a little longer;
  * the worker logged the outcome.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import pytest

from .conftest import issue_payload, live_settings
from .faketriage import expected_labels

REPO = "vllm-project/vllm"
LABELS = ["bug", "rocm", "cuda", "memory", "needs-info", "usage", "question"]
TITLE = "[Bug]: CUDA OOM"
BODY = "collect_env output here; CUDA OOM"
N = 7


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    kind: str                      # fake.fail kind, or "always:<kind>" for every call failing
    times: int = 1
    outcome: str = "done"          # done | parked | waiting
    comments: int = 1              # bot comments at the end
    labelled: bool = True          # the triage's labels are on the issue at the end
    log: str = ""                  # a worker log message that must appear
    settings: dict = field(default_factory=dict)


CASES = [
    # a read that times out is repeated inline
    Case("timeout-read", "GET", rf"/issues/{N}$", "timeout", log="done"),
    # the comment POST times out but GitHub still creates it: the next attempt finds it, never a second one
    Case("timeout-comment-applied", "POST", rf"/issues/{N}/comments$", "timeout", log="retry",
         settings={"retry_base_seconds": 1.0, "retry_max_seconds": 1.0}),
    # ... also when the retry re-reads the comments before GitHub finished creating the first one: the delivery
    # waits (no attempt counted) until the unanswered POST had time to show up
    Case("timeout-comment-race", "POST", rf"/issues/{N}/comments$", "timeout", log="waiting-for-comment",
         settings={"comment_settle_seconds": 1.0}),
    # a reset label POST is safe to repeat inline; a reset comment POST fails the attempt, the retry posts it
    Case("reset-labels", "POST", rf"/issues/{N}/labels$", "reset", log="done"),
    Case("reset-comment", "POST", rf"/issues/{N}/comments$", "reset", log="retry"),
    # a 5xx that does not stop is parked after max_attempts, with the status in the error
    Case("5xx-always", "POST", rf"/issues/{N}/labels$", "503", times=100, outcome="parked", comments=0,
         labelled=False, log="parked"),
    Case("5xx-once", "POST", rf"/issues/{N}/labels$", "502", log="done"),
    # rate limits: a short retry-after is waited for inline, a long one releases the delivery until then
    Case("429-short", "POST", rf"/issues/{N}/labels$", "429", times=2, log="done"),
    Case("429-long", "POST", rf"/issues/{N}/labels$", "429", times=100, outcome="waiting", comments=0,
         labelled=False, log="rate-limited", settings={"retry_after": "3600"}),
    Case("secondary-403-short", "POST", rf"/issues/{N}/comments$", "403-secondary", times=2, log="done"),
    Case("secondary-403-always", "GET", rf"/issues/{N}$", "403-secondary", times=100, outcome="waiting",
         comments=0, labelled=False, log="rate-limited", settings={"secondary_limit_wait": 600.0}),
    # the issue was deleted between the read and the writes; a locked issue refuses the comment
    Case("404-deleted-midway", "POST", rf"/issues/{N}/labels$", "404", times=100, outcome="parked", comments=0,
         labelled=False, log="parked"),
    Case("410-locked", "POST", rf"/issues/{N}/comments$", "410", times=100, outcome="parked", comments=0,
         log="parked"),
]


async def _status(bot, delivery: str) -> dict:
    rows = await bot.get("/api/deliveries?limit=100")
    return next(d for d in rows if d["id"] == delivery)


async def _settle(bot, delivery: str, outcome: str, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        row = await _status(bot, delivery)
        if outcome in ("done", "parked") and row["status"] == outcome:
            return row
        if outcome == "waiting" and row["status"] == "queued" and row.get("last_error"):
            return row
        assert time.monotonic() < deadline, f"delivery did not settle as {outcome}: {row}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("case", CASES, ids=[getattr(c, "name", None) or c.values[0].name for c in CASES])
async def test_fault(case: Case, tmp_path, fake, make_bot, caplog):
    caplog.set_level(logging.INFO, logger="vllm_triage")
    fake.add_repo(REPO, LABELS)
    retry_after = case.settings.get("retry_after")
    if retry_after is not None:
        fake.faults.retry_after = retry_after
    fake.faults.timeout_sleep = 0.6
    overrides = {"max_attempts": 3, "http_timeout": 0.3, "http_retries": 2}
    overrides.update({k: v for k, v in case.settings.items() if k != "retry_after"})
    bot = await make_bot(live_settings(tmp_path, fake, **overrides))
    issue = fake.add_issue(REPO, N, TITLE, BODY)
    fake.fail(case.method, case.path, case.kind, times=case.times)

    delivery = f"fault-{case.name}"
    assert (await bot.send("issues", issue_payload(REPO, N, TITLE, BODY), delivery=delivery)).status == 202
    row = await _settle(bot, delivery, case.outcome)
    if case.kind == "timeout":
        await asyncio.sleep(0.7)  # a timed-out call is answered (and recorded) late
    calls = len(fake.calls)
    await asyncio.sleep(0.4)  # nothing keeps going once the delivery settled
    assert len(fake.calls) == calls, [(c.method, c.path, c.status) for c in fake.calls[calls:]]
    assert calls <= 40, f"{calls} GitHub calls for one delivery"

    if case.outcome == "parked":  # a 4xx that is not a rate limit cannot be fixed by retrying: parked at once
        assert row["attempts"] == (3 if case.kind.startswith("5") else 1)
        assert row["last_error"] and any(code in row["last_error"] for code in ("503", "404", "410")), row
    if case.outcome == "waiting":
        assert row["attempts"] == 0, "a rate-limit wait is not a failed attempt"
        assert ("429" in row["last_error"] or "403" in row["last_error"]), row

    comments = fake.repos[REPO].bot_comments(N)
    assert len(comments) == case.comments, [c.body[:80] for c in comments]
    want = [label for label in expected_labels(TITLE, BODY) if label in LABELS]
    if case.labelled:
        assert sorted(issue.labels) == sorted(want)
    else:
        assert issue.labels == [] or case.outcome != "done"
    assert any(case.log in r.getMessage() for r in caplog.records if r.name.startswith("vllm_triage")), \
        [r.getMessage() for r in caplog.records][-5:]
