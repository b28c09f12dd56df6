"""While webhooks keep arriving, workers wait for a quiet moment before claiming work (bounded)."""

import time
from types import SimpleNamespace

from bot.app import worker as worker_module
from bot.app.worker import Intake, Worker


def make_worker(intake):
    return Worker(SimpleNamespace(), store=None, service=None, intake=intake)


async def test_worker_claims_at_once_when_no_webhook_arrived():
    started = time.monotonic()
    await make_worker(Intake())._give_way()
    assert time.monotonic() - started < worker_module.INTAKE_QUIET


async def test_worker_waits_for_a_quiet_moment_after_a_webhook():
    intake = Intake()
    intake.touch()
    started = time.monotonic()
    await make_worker(intake)._give_way()
    waited = time.monotonic() - started
    assert worker_module.INTAKE_QUIET <= waited < worker_module.INTAKE_MAX_DEFER + 0.5


async def test_a_steady_stream_cannot_starve_the_queue(monkeypatch):
    monkeypatch.setattr(worker_module, "INTAKE_MAX_DEFER", 0.2)

    class Busy(Intake):
        def quiet_for(self) -> float:
            return 0.0

    started = time.monotonic()
    await make_worker(Busy())._give_way()
    assert time.monotonic() - started < 1.0
