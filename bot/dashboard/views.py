"""The issue page's view: the parsed Report (re-parsed from the stored delivery), the newest decision with its
findings, candidates and plan, the decision history and the maintainers' feedback."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.dashboard import data
from bot.report import Report, parse
from bot.rules import RuleSet
from bot.stores.deliveries import DecisionRecord, Delivery, IssueState

MAX_FRAMES = 40


@dataclass(frozen=True)
class IssueView:
    row: data.IssueRow
    report: Report | None
    body_available: bool
    flags: list[tuple[str, str]]
    environment: list[tuple[str, str]]
    plan: dict[str, Any]
    comment: str | None
    history: list[data.IssueRow]
    feedback: list[dict[str, Any]]
    rejected: set[int]
    suppressed: set[str]
    state: IssueState | None
    queue_reasons: list[str]
    installation_id: int | None
    frames: list[Any]
    error: dict[str, Any] | None = None   # the root cause as the triage saw it (with a type inferred from its site)
    site: dict[str, Any] | None = None    # its raise site (bot/app/record.py site_detail)


def _text(value: Any, limit: int = 300) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, dict | list | tuple):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _environment(report: Report) -> list[tuple[str, str]]:
    env = report.environment.as_dict()
    out = []
    for key, value in env.items():
        if value in (None, [], 0):
            continue
        if key == "gpus" and value:
            names = sorted(set(value))
            value = ", ".join(f"{n} × {value.count(n)}" if value.count(n) > 1 else n for n in names)
        out.append((key.replace("_", " "), _text(value)))
    return out


def issue_view(records: list[DecisionRecord], state: IssueState | None, feedback: list[dict[str, Any]],
               deliveries: list[Delivery], rules: RuleSet | None, summary: data.IssueSummary | None) -> IssueView:
    latest = records[0]
    row = data.issue_row(latest, rules, state)
    source = None
    for d in deliveries:
        try:
            payload = d.data()
        except ValueError:
            continue
        if isinstance(payload.get("issue"), dict):
            source = (d, payload["issue"])
            break
    report = None
    if source is not None:
        issue = source[1]
        report = parse(str(issue.get("title") or ""), str(issue.get("body") or ""))
    plan = latest.plan if isinstance(latest.plan, dict) else {}
    decision = plan.get("decision") if isinstance(plan.get("decision"), dict) else {}
    root = report.root_cause if report is not None else None
    return IssueView(
        row=row, report=report, body_available=report is not None,
        flags=[(k, _text(v)) for k, v in sorted((report.flags if report else {}).items())],
        environment=_environment(report) if report is not None else [],
        plan=plan, comment=decision.get("comment"),
        history=[data.issue_row(r, rules, state) for r in records],
        feedback=feedback,
        rejected={int(f["target"]) for f in feedback if f.get("kind") == "not-duplicate" and f.get("target")},
        suppressed={f["kind"][len(data.SUPPRESS_RULE):] for f in feedback
                    if str(f.get("kind", "")).startswith(data.SUPPRESS_RULE)},
        state=state,
        queue_reasons=list(summary.reasons) if summary is not None and summary.state == "open" else [],
        installation_id=source[0].installation_id if source is not None else None,
        frames=list(root.frames[-MAX_FRAMES:]) if root is not None else [],
        error=decision.get("error") if isinstance(decision.get("error"), dict) else None,
        site=decision.get("site") if isinstance(decision.get("site"), dict) else None,
    )
