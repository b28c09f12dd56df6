"""`issues` events: triage on opened / reopened / edited (title or body changed); closed and deleted update
the duplicate index and the bot's state; a label removed by a human is never added again."""

from __future__ import annotations

from typing import Any

from gidgethub import routing, sansio

router = routing.Router()


def _where(event: sansio.Event) -> tuple[str, int, int | None]:
    data = event.data
    inst = (data.get("installation") or {}).get("id")
    return data["repository"]["full_name"], int(data["issue"]["number"]), int(inst) if inst is not None else None


@router.register("issues", action="opened")
@router.register("issues", action="reopened")
async def triage_new(event: sansio.Event, service: Any) -> None:
    repo, number, installation = _where(event)
    await service.triage_issue(repo=repo, number=number, installation_id=installation,
                               payload_issue=event.data["issue"], delivery_id=event.delivery_id,
                               reason=f"issues.{event.data['action']}")


@router.register("issues", action="edited")
async def triage_edited(event: sansio.Event, service: Any) -> None:
    changes = event.data.get("changes") or {}
    if "title" not in changes and "body" not in changes:
        return
    repo, number, installation = _where(event)
    await service.triage_issue(repo=repo, number=number, installation_id=installation,
                               payload_issue=event.data["issue"], delivery_id=event.delivery_id,
                               reason="issues.edited")


@router.register("issues", action="closed")
async def closed(event: sansio.Event, service: Any) -> None:
    repo, _, _ = _where(event)
    await service.issue_closed(repo, event.data["issue"])


@router.register("issues", action="deleted")
async def deleted(event: sansio.Event, service: Any) -> None:
    repo, number, _ = _where(event)
    await service.issue_deleted(repo, number)


@router.register("issues", action="unlabeled")
async def unlabeled(event: sansio.Event, service: Any) -> None:
    sender = event.data.get("sender") or {}
    label = (event.data.get("label") or {}).get("name")
    if not label or sender.get("type") == "Bot" or sender.get("login") == await service.bot_login():
        return
    repo, number, _ = _where(event)
    await service.label_removed_by_human(repo, number, label)
