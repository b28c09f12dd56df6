"""ISO 8601 times as GitHub writes them (`2026-11-28T14:00:00Z`) to epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime


def epoch(value: object) -> float | None:
    """Epoch seconds of an ISO 8601 time (UTC when it names no zone); None when it is not one."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()
