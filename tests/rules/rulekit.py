"""Builders for rule-engine tests: rule files in tmp dirs and Reports constructed directly."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from bot.report.model import Command, Environment, ExceptionInfo, Frame, Report, Traceback
from bot.rules import RuleSet, load_rules

BASE_RULE: dict[str, Any] = {
    "id": "sample-rule",
    "title": "A sample failure",
    "labels": ["memory"],
    "match": {"exception": {"type": "ValueError", "message": "sample failure"}},
    "explanation": "It failed.",
    "workaround": "Do something else.",
    "examples": {
        "match": [{"body": "ValueError: sample failure happened"}],
        "no_match": [{"body": "ValueError: something else"}],
    },
}


def rule(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE_RULE)
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def write_rules(directory: Path, *rules: dict[str, Any]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for data in rules:
        (directory / f"{data['id']}.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return directory


def ruleset(tmp_path: Path, *rules: dict[str, Any]) -> RuleSet:
    return load_rules(write_rules(tmp_path / "rules", *rules))


def exc(type_: str, message: str, frames: tuple[Frame, ...] = (), source: str = "traceback") -> ExceptionInfo:
    return ExceptionInfo(type=type_, message=message, frames=frames, source=source)


def frame(file: str, function: str, line: int = 10) -> Frame:
    return Frame(file=file, line=line, function=function, is_vllm="/vllm/" in file)


def report(*, title: str = "[Bug]: something fails", kind: str = "bug", body: str = "", description: str = "",
           exceptions: tuple[ExceptionInfo, ...] = (), log_lines: tuple[str, ...] = (),
           error_lines: tuple[str, ...] = (), flags: dict[str, Any] | None = None,
           environment: Environment | None = None, model: str | None = None,
           architectures: tuple[str, ...] = (), commands: tuple[Command, ...] = ()) -> Report:
    tracebacks = (Traceback(chain=exceptions),) if exceptions else ()
    return Report(
        title=title, title_text=title.split(":", 1)[-1].strip(), kind=kind, kind_source="title",
        body=body or description, description=description, environment=environment or Environment(),
        log_lines=log_lines, tracebacks=tracebacks, exceptions=exceptions, error_lines=error_lines,
        commands=commands, flags=dict(flags or {}), model=model, architectures=architectures,
    )
