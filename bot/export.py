"""Reading issue exports: a JSON array or JSON lines of GitHub REST issues, or `gh issue list --json` output."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.validtext import valid_text


@dataclass(frozen=True)
class IssueRecord:
    number: int
    title: str
    body: str
    created_at: str = ""
    state: str = "open"
    state_reason: str | None = None
    labels: tuple[str, ...] = ()       # labels as exported (maintainers' labels, for measuring only)
    url: str | None = None
    author: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, hash=False, repr=False)


@dataclass(frozen=True)
class ExportProblem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def issue_from_json(obj: Any) -> IssueRecord | None:
    """One GitHub REST or `gh` issue object -> IssueRecord; None for pull requests. Raises ValueError."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected an issue object, got {type(obj).__name__}")
    if obj.get("pull_request") or obj.get("isPullRequest"):
        return None
    number = obj.get("number")
    if isinstance(number, bool) or not isinstance(number, int):
        raise ValueError("issue has no integer 'number'")
    labels = []
    for label in obj.get("labels") or []:
        name = label.get("name") if isinstance(label, dict) else label
        if isinstance(name, str):
            labels.append(name)
    author = obj.get("user") or obj.get("author") or {}
    return IssueRecord(
        number=number,
        title=str(obj.get("title") or ""),
        body=str(obj.get("body") or ""),
        created_at=str(obj.get("created_at") or obj.get("createdAt") or ""),
        state=str(obj.get("state") or "open").lower(),
        state_reason=obj.get("state_reason") or obj.get("stateReason"),
        labels=tuple(labels),
        url=obj.get("html_url") or obj.get("url"),
        author=author.get("login") if isinstance(author, dict) else None,
        raw=obj,
    )


def read_export(path: str | Path) -> Iterator[IssueRecord | ExportProblem]:
    """Yield issues in file order, and a problem (with its line number) for each line that cannot be read."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as e:
            yield ExportProblem(e.lineno, f"not valid JSON: {e.msg}")
            return
        for i, obj in enumerate(items, 1):
            yield from _one(obj, i, "item")
        return
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            yield ExportProblem(n, f"not valid JSON: {e.msg} (column {e.colno})")
            continue
        yield from _one(obj, n, "line")


def _one(obj: Any, n: int, unit: str) -> Iterator[IssueRecord | ExportProblem]:
    try:
        issue = issue_from_json(valid_text(obj))
    except ValueError as e:
        yield ExportProblem(n, str(e) if unit == "line" else f"item {n}: {e}")
        return
    if issue is not None:
        yield issue
