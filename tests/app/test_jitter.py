"""Retry jitter comes from the worker's and the GitHub client's own generators: drawing it neither changes nor
depends on the global `random` state (Hypothesis warns when code under test touches it)."""

from __future__ import annotations

import random

from bot.app.github import retry_delay
from bot.app.worker import Worker

from .conftest import make_settings


def test_retry_jitter_leaves_the_global_random_state_alone(tmp_path):
    worker = Worker(make_settings(tmp_path, retry_base_seconds=1.0, retry_max_seconds=60.0), store=None,
                    service=None)
    random.seed(1234)
    before = random.getstate()
    backoffs = [worker.backoff(attempt) for attempt in range(1, 6)]
    delays = [retry_delay(502, {}, "bad gateway", attempt, now=0.0, secondary_wait=60.0, backoff=1.0)
              for attempt in range(1, 6)]
    assert random.getstate() == before
    assert all(0.75 * 2 ** i <= b <= 1.25 * 2 ** i for i, b in enumerate(backoffs))
    assert all(0.5 * 2 ** i <= d <= 1.5 * 2 ** i for i, d in enumerate(delays))
    random.seed(1234)  # and the same global seed does not make two runs retry in lockstep
    assert [worker.backoff(3) for _ in range(20)] != [worker.backoff(3) for _ in range(20)]
