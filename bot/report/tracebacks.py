"""Python tracebacks (with chained exceptions), bare error lines, and the root cause."""

from __future__ import annotations

from bot.report.logs import LogLine
from bot.report.model import ExceptionInfo, Traceback


def extract_errors(
    log: tuple[LogLine, ...], title: str
) -> tuple[tuple[Traceback, ...], tuple[ExceptionInfo, ...], tuple[str, ...]]:
    """Return (tracebacks, exceptions with the root cause last, error lines outside tracebacks)."""
    return (), (), ()
