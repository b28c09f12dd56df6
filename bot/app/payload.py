"""What a webhook payload must hold for the handlers to act on it.

`problem` is cheap (a few lookups) and runs twice: at intake, where a signed payload that fails it is answered
400 and never recorded, and in the worker before the handlers, where a delivery that fails it (recorded by an
older version) is parked at once with the reason, since retrying cannot change a payload. `decode` turns a
recorded payload back into data, its text made valid (bot/validtext.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bot.validtext import may_hold_invalid, valid_text

MAX_ID = 2**63 - 1  # the widest integer column either store has (SQLite INTEGER, PostgreSQL BIGINT)


class Malformed(Exception):
    """A payload the handlers cannot act on; retrying cannot fix it."""

    def __init__(self, why: str) -> None:
        super().__init__(f"malformed payload: {why}")


# (path, kind, required): a path's parts are keys, "[]" stands for every item of a list; an optional field
# may be absent or null; the fields under an absent optional one are not looked at.
Field = tuple[str, str, bool]
_INSTALLATION: tuple[Field, ...] = (("installation", "object", False), ("installation.id", "id", False))
_REPOSITORY: tuple[Field, ...] = (("repository", "object", True), ("repository.full_name", "repo", True))
_ISSUE: tuple[Field, ...] = (
    ("issue", "object", True), ("issue.number", "id", True), ("issue.title", "str", False),
    ("issue.body", "str", False), ("issue.state", "str", False), ("issue.created_at", "str", False),
    ("issue.html_url", "str", False), ("issue.labels", "list", False), ("issue.labels.[]", "label", False),
    ("sender", "object", False), ("sender.login", "str", False), ("sender.type", "str", False))
SCHEMA: dict[str, tuple[Field, ...]] = {
    "issues": (*_INSTALLATION, *_REPOSITORY, *_ISSUE, ("changes", "object", False), ("label", "object", False),
               ("label.name", "str", False)),
    "issue_comment": (*_INSTALLATION, *_REPOSITORY, *_ISSUE, ("comment", "object", True),
                      ("comment.body", "str", False), ("comment.author_association", "str", False),
                      ("comment.user", "object", False), ("comment.user.login", "str", False),
                      ("comment.user.type", "str", False)),
    "installation": (("installation", "object", True), ("installation.id", "id", True),
                     ("installation.account", "object", False), ("installation.account.login", "str", False),
                     ("installation.target_type", "str", False), ("repositories", "list", False),
                     ("repositories.[]", "named", False)),
    "installation_repositories": (("installation", "object", True), ("installation.id", "id", True),
                                  ("installation.account", "object", False),
                                  ("installation.account.login", "str", False),
                                  ("repositories_added", "list", False), ("repositories_added.[]", "named", False),
                                  ("repositories_removed", "list", False),
                                  ("repositories_removed.[]", "named", False)),
}
EVENTS = frozenset({*SCHEMA, "ping"})  # what the App subscribes to (app.yml) and is sent unasked
_WANTED = {"object": "an object", "list": "a list", "str": "a string", "id": f"an integer from 1 to {MAX_ID}",
           "repo": "a string 'owner/name'", "label": "a label object with a string name",
           "named": "an object with a string full_name"}


def _is_id(value: Any) -> bool:
    return type(value) is int and 1 <= value <= MAX_ID  # not a bool, not a float


_FITS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "str": lambda v: isinstance(v, str),
    "id": _is_id,
    "repo": lambda v: isinstance(v, str) and "/" in v.strip("/"),
    "label": lambda v: isinstance(v, dict) and isinstance(v.get("name"), str),
    "named": lambda v: isinstance(v, dict) and isinstance(v.get("full_name"), str),
}
# the schema with its paths split once: (path, parents, last key or None for "[]", fits, required)
_COMPILED = {event: tuple((path, tuple(path.split(".")[:-1]), None if path.endswith("[]") else path.rsplit(".", 1)[-1],
                           _FITS[kind], _WANTED[kind], required) for path, kind, required in fields)
             for event, fields in {**SCHEMA, "": _INSTALLATION}.items()}


def _values(data: dict[str, Any], parents: tuple[str, ...], last: str | None) -> list[Any]:
    """The values at a path (several under a "[]"); none when a parent is absent or null."""
    found = [data]
    for part in parents:
        if part == "[]":
            found = [v for value in found for v in value]
        else:
            found = [value[part] for value in found if value.get(part) is not None]
    if last is None:
        return [v for value in found for v in value]
    return [value.get(last) for value in found]


def problem(event: str, data: Any) -> str | None:
    """Why the handlers could not act on this payload, or None. Parents are checked before their fields."""
    if not isinstance(data, dict):
        return "the payload is not a JSON object"
    for path, parents, last, fits, wanted, required in _COMPILED.get(event) or _COMPILED[""]:
        if last is not None and "[]" not in parents:  # one value at most: the common case, kept quick
            parent: Any = data
            for part in parents:
                parent = parent.get(part)
                if parent is None:
                    break
            values = () if parent is None else (parent.get(last),)
        else:
            values = _values(data, parents, last)
        for value in values:
            if value is None:
                if required:
                    return f"{path} is missing"
            elif not fits(value):
                return f"{path} must be {wanted}"
    return None


def decode(payload: str) -> Any:
    """A recorded payload as data, its text made valid; Malformed when it does not decode."""
    try:
        data = json.loads(payload)
    except RecursionError:
        raise Malformed("JSON nests too deep") from None
    except ValueError as e:
        raise Malformed(f"not JSON ({e})") from None
    return valid_text(data) if may_hold_invalid(payload) else data


def check(event: str, data: Any) -> None:
    why = problem(event, data)
    if why is not None:
        raise Malformed(why)
