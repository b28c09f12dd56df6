"""`issue_comment` events: maintainer commands. Comments by bots, above all our own, are ignored.

Commands (one per line, at the start of the line, outside quotes, code blocks and HTML comments;
only from users whose association with the repository is OWNER, MEMBER or COLLABORATOR):

    /triage              run the triage again (and post the comment again if it was deleted)
    /not-duplicate #N    #N is not a duplicate of this issue: never suggest it here again (re-triages)
    /duplicate #N        confirm #N as the earlier report of the same failure: linked first from now on (re-triages)
"""

from __future__ import annotations

import re
from typing import Any

from gidgethub import routing, sansio

router = routing.Router()

MAINTAINERS = ("OWNER", "MEMBER", "COLLABORATOR")
_COMMAND = re.compile(r"/(triage|not-duplicate|duplicate)(?:[ \t]+#?(\d{1,9}))?[ \t]*")
MAX_LINES, MAX_LINE = 200, 200


def _without_html_comments(text: str) -> str:
    out, i = [], 0
    while True:
        start = text.find("<!--", i)
        if start < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:start])
        end = text.find("-->", start + 4)
        if end < 0:
            return "".join(out)
        i = end + 3


def parse_commands(body: str | None) -> list[tuple[str, int | None]]:
    """The commands in a comment, in order; a command that needs an issue number and has none is dropped."""
    commands: list[tuple[str, int | None]] = []
    fenced = False
    for raw in _without_html_comments(body or "").splitlines()[:MAX_LINES]:
        line = raw.strip()[:MAX_LINE]
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or not line.startswith("/"):
            continue
        m = _COMMAND.fullmatch(line)
        if m is None:
            continue
        name, number = m.group(1), int(m.group(2)) if m.group(2) else None
        if name != "triage" and number is None:
            continue
        commands.append((name, number))
    return commands


@router.register("issue_comment", action="created")
async def command(event: sansio.Event, service: Any) -> None:
    data = event.data
    comment, issue = data.get("comment") or {}, data.get("issue") or {}
    user, sender = comment.get("user") or {}, data.get("sender") or {}
    bot_login = await service.bot_login()
    if user.get("type") == "Bot" or sender.get("type") == "Bot" or user.get("login") == bot_login:
        return
    if "pull_request" in issue or comment.get("author_association") not in MAINTAINERS:
        return
    commands = parse_commands(comment.get("body"))
    if not commands:
        return
    repo = data["repository"]["full_name"]
    installation = (data.get("installation") or {}).get("id")
    installation = int(installation) if installation is not None else None
    if not await service.commands_enabled(repo, installation):
        return
    number = int(issue["number"])
    rerun = force = False
    for name, target in commands:
        if name == "triage":
            rerun = force = True
        else:
            await service.store.add_feedback(repo, number, name, target, user.get("login"), event.delivery_id)
            if name == "duplicate" and target is not None:
                await service.mark_duplicate(repo, number, target)
            rerun = rerun or name in ("not-duplicate", "duplicate")
    if rerun:
        await service.triage_issue(repo=repo, number=number, installation_id=installation, payload_issue=issue,
                                   delivery_id=event.delivery_id, reason="command", force=force)
