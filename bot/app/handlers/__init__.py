"""Webhook handlers: one gidgethub Router per concern, composed here.

`dispatch` runs every matching callback even when one fails (gidgethub's Router.dispatch stops at the
first exception) and returns the failures, so one broken handler cannot starve the others.
"""

from __future__ import annotations

import logging
from typing import Any

from gidgethub import routing, sansio

from bot.app.handlers import comments, installation, issues

log = logging.getLogger("vllm_triage.handlers")

router = routing.Router(issues.router, comments.router, installation.router)


async def dispatch(event: sansio.Event, *args: Any, router: routing.Router = router,
                   **kwargs: Any) -> list[tuple[str, BaseException]]:
    failures: list[tuple[str, BaseException]] = []
    for callback in sorted(router.fetch(event), key=lambda f: f"{f.__module__}.{f.__qualname__}"):
        name = f"{callback.__module__.rsplit('.', 1)[-1]}.{callback.__qualname__}"
        try:
            await callback(event, *args, **kwargs)
        except Exception as e:  # isolated: the other handlers still run
            log.warning("delivery %s: handler %s failed: %r", event.delivery_id, name, e)
            failures.append((name, e))
    return failures


def repo_of(data: dict[str, Any]) -> str | None:
    return (data.get("repository") or {}).get("full_name")


def installation_of(data: dict[str, Any]) -> int | None:
    value = (data.get("installation") or {}).get("id")
    return int(value) if value is not None else None


def issue_number_of(event: str, data: dict[str, Any]) -> int | None:
    issue = data.get("issue")
    if event in ("issues", "issue_comment") and isinstance(issue, dict) and issue.get("number") is not None:
        return int(issue["number"])
    return None
