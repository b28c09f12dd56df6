"""Log cleaning: ANSI codes, nested process tags, logger headers, compose prefixes, \\r."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LogLine:
    text: str               # the line with every prefix stripped
    process: str | None     # innermost process tag, e.g. "Worker_TP7", "RayWorkerWrapper"
    level: str | None       # INFO | WARNING | ERROR | … when a logger header was present


def clean_log(body: str) -> tuple[LogLine, ...]:
    return tuple(LogLine(line, None, None) for line in body.splitlines())
