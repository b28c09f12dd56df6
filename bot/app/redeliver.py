"""`vllm-triage redeliver`: ask GitHub to deliver again the webhooks that failed since a given time.

GitHub does not retry a failed delivery by itself (a replica down, a proxy answering 502, a timeout). With the
App's credentials this pages through `GET /app/hook/deliveries` (newest first) back to `since`, groups the
attempts by delivery GUID, and for every GUID none of whose attempts got a 2xx answer, asks for one more
attempt with `POST /app/hook/deliveries/{id}/attempts`. Safe to run again: the server records deliveries by
GUID, so a delivery that did arrive after all is recognised and not acted on twice.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import gidgethub

from bot.app.github import GitHubClient
from bot.app.settings import Settings
from bot.isotime import epoch

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_since(value: str, now: float | None = None) -> float:
    """`90m`, `6h`, `2d` (that long ago) or an ISO 8601 time (UTC when it names no zone) -> epoch seconds."""
    text = value.strip()
    m = _DURATION.match(text)
    if m:
        return (time.time() if now is None else now) - float(m.group(1)) * _UNITS[m.group(2)]
    when = epoch(text)
    if when is None:
        raise ValueError(f"--since wants a duration (30m, 6h, 2d) or an ISO time, not {value!r}")
    return when


def _ok(attempt: dict[str, Any]) -> bool:
    code = attempt.get("status_code")
    return isinstance(code, int) and 200 <= code < 300


@dataclass
class Redelivery:
    guid: str
    id: int
    event: str | None
    action: str | None
    delivered_at: str | None
    status: str | None
    outcome: str = ""        # "redelivered", "would redeliver" (dry run) or the error


@dataclass
class RedeliverySummary:
    attempts_seen: int = 0
    deliveries_seen: int = 0
    failed: list[Redelivery] = field(default_factory=list)

    @property
    def redelivered(self) -> int:
        return sum(1 for r in self.failed if r.outcome == "redelivered")

    @property
    def errors(self) -> int:
        return sum(1 for r in self.failed if r.outcome not in ("redelivered", "would redeliver"))

    def render(self) -> str:
        return (f"{self.deliveries_seen} deliveries ({self.attempts_seen} attempts) seen, {len(self.failed)} failed, "
                f"{self.redelivered} redelivered" + (f", {self.errors} could not be" if self.errors else ""))


async def failed_deliveries(app: GitHubClient, since: float) -> tuple[list[Redelivery], int, int]:
    """Deliveries whose every attempt since `since` failed, newest first, with their newest attempt's id."""
    attempts: dict[str, list[dict[str, Any]]] = {}
    seen = 0
    async for attempt in app.getiter("/app/hook/deliveries?per_page=100"):
        when = epoch(attempt.get("delivered_at"))
        if when is not None and when < since:
            break  # newest first: everything after this is older
        seen += 1
        attempts.setdefault(str(attempt.get("guid") or attempt.get("id")), []).append(attempt)
    failed = []
    for guid, tries in attempts.items():
        if any(_ok(t) for t in tries):
            continue
        newest = tries[0]
        failed.append(Redelivery(guid=guid, id=int(newest["id"]), event=newest.get("event"),
                                 action=newest.get("action"), delivered_at=newest.get("delivered_at"),
                                 status=newest.get("status")))
    return failed, seen, len(attempts)


async def redeliver_failed(app: GitHubClient, since: float, *, dry_run: bool = False,
                           limit: int | None = None) -> RedeliverySummary:
    failed, seen, distinct = await failed_deliveries(app, since)
    summary = RedeliverySummary(attempts_seen=seen, deliveries_seen=distinct)
    for item in failed[:limit] if limit is not None else failed:
        if dry_run:
            item.outcome = "would redeliver"
        else:
            try:
                await app.post(f"/app/hook/deliveries/{item.id}/attempts", data={})
                item.outcome = "redelivered"
            except gidgethub.HTTPException as e:
                item.outcome = f"HTTP {int(e.status_code)}: {e}"
        summary.failed.append(item)
    return summary


def run(settings: Settings, since: str, *, dry_run: bool = False, limit: int | None = None, out=None) -> int:
    """The command (bot/cli.py checked `since` and that `settings` carry the App's credentials)."""
    import asyncio
    import sys

    import aiohttp

    out = out or sys.stdout
    start = parse_since(since)

    async def go() -> RedeliverySummary:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=settings.http_timeout)) as session:
            app = GitHubClient(session, settings=settings, app_id=settings.app_id, private_key=settings.private_key)
            return await redeliver_failed(app, start, dry_run=dry_run, limit=limit)

    summary = asyncio.run(go())
    for item in summary.failed:
        print(f"{item.guid}  {item.delivered_at}  {item.event}.{item.action or '-'}  {item.status}: {item.outcome}",
              file=out)
    print(summary.render(), file=out)
    return 1 if summary.errors else 0
