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


# The three readers below see signed payloads of any shape (the webhook records them before any handler
# runs): a field of the wrong type means "unknown", never an exception (that would answer 500).

def action_of(data: dict[str, Any]) -> str | None:
    action = data.get("action")
    return action if isinstance(action, str) else None


def repo_of(data: dict[str, Any]) -> str | None:
    repo = data.get("repository")
    name = repo.get("full_name") if isinstance(repo, dict) else None
    return name if isinstance(name, str) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def installation_of(data: dict[str, Any]) -> int | None:
    installation = data.get("installation")
    return _int(installation.get("id")) if isinstance(installation, dict) else None


def issue_number_of(event: str, data: dict[str, Any]) -> int | None:
    issue = data.get("issue")
    if event in ("issues", "issue_comment") and isinstance(issue, dict):
        return _int(issue.get("number"))
    return None
