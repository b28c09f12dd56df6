"""`installation` and `installation_repositories` events: who installed the App, on which repositories."""

from __future__ import annotations

from typing import Any

from gidgethub import routing, sansio

router = routing.Router()


def _names(repos: Any) -> list[str]:
    return [r["full_name"] for r in repos or () if isinstance(r, dict) and r.get("full_name")]


@router.register("installation")
async def installation(event: sansio.Event, service: Any) -> None:
    data = event.data
    inst = data["installation"]
    account = (inst.get("account") or {}).get("login")
    action = data.get("action")
    repos = _names(data.get("repositories")) if "repositories" in data else None
    await service.store.upsert_installation(
        int(inst["id"]), account, inst.get("target_type"), repos,
        suspended=action == "suspend" or (action != "unsuspend" and bool(inst.get("suspended_at"))),
        deleted=action == "deleted")
    if service.github is not None and action in ("deleted", "suspend", "new_permissions_accepted"):
        service.github.forget_token(int(inst["id"]))


@router.register("installation_repositories")
async def repositories(event: sansio.Event, service: Any) -> None:
    data = event.data
    inst = data["installation"]
    await service.store.upsert_installation(
        int(inst["id"]), (inst.get("account") or {}).get("login"), inst.get("target_type"),
        add_repos=_names(data.get("repositories_added")), remove_repos=_names(data.get("repositories_removed")))
