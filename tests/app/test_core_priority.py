"""The triage core runs in a child process at a lower CPU priority than the webhook intake."""

import os

from bot.app.core import CORE_NICENESS, CoreRunner
from bot.triage import triage


async def test_core_process_yields_the_cpu_to_the_server(tmp_path):
    runner = CoreRunner("process", None, str(tmp_path), triage)
    try:
        assert await runner.start() > 0
        child = runner._executor.submit(os.nice, 0).result(timeout=60)
        assert child >= min(os.nice(0) + CORE_NICENESS, 19)
    finally:
        await runner.close()
