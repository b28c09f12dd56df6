"""Child processes of `serve` (the triage core, the intake processes) end when the server that started them is
gone, also when it was killed with SIGKILL (an OOM kill, a crash) and had no chance to stop them."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable


def follow_parent(parent_pid: int, on_gone: Callable[[], None], interval: float = 1.0) -> threading.Thread:
    """Call `on_gone` (in a daemon thread) once this process's parent is no longer `parent_pid`."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval)
        on_gone()

    thread = threading.Thread(target=watch, name="vllm-triage-lifeline", daemon=True)
    thread.start()
    return thread
