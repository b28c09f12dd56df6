"""What the dashboard needs to remember about one triage, beyond the plan: a compact, bounded JSON summary of the
Report and of the Decision (findings with evidence, duplicate candidates with scores and reasons).

Pure. The service stores it inside every decision record (`plan["decision"]`, `plan["issue"]`), so the overview,
the queue and the issue page read decisions only and never re-parse issue bodies.
"""

from __future__ import annotations

from typing import Any

from bot.decision import Candidate
from bot.dupes.signature import signatures
from bot.report.model import Report
from bot.sources.locate import site_dict
from bot.triage import Triage

MAX_TEXT = 300
MAX_TIED = 20
MAX_EVIDENCE = 8


def _cut(text: str | None, limit: int = MAX_TEXT) -> str | None:
    if text is None:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def triage_detail(result: Triage) -> dict[str, Any]:
    """The report's and the decision's parts shown on the dashboard; every string bounded."""
    r, d = result.report, result.decision
    root = r.root_cause
    sigs = signatures(r)
    return {
        "title": _cut(r.title),
        "kind": r.kind,
        "vllm_version": _cut(r.environment.vllm_version, 80),
        "platform": r.environment.platform,
        "error": ({"type": _cut(root.type, 120), "message": _cut(root.first_line), "inferred": root.inferred}
                  if root else None),
        "site": site_detail(r),
        "signature": {"key": sigs[0].key, "text": _cut(sigs[0].describe(200))} if sigs else None,
        "diagnoses": [
            {"rule": f.rule, "title": _cut(f.title), "confidence": f.confidence, "labels": list(f.labels),
             "upgrade": _cut(f.upgrade),
             "evidence": [{"condition": _cut(e.condition), "matched": _cut(e.matched), "where": e.where}
                          for e in f.evidence[:MAX_EVIDENCE]]}
            for f in d.findings],
        "candidates": [_candidate(c) for c in d.duplicates],
        "related": [_candidate(c) for c in d.related],
    }


def _candidate(c: Candidate) -> dict[str, Any]:
    return {"number": c.number, "score": round(c.score, 3), "reason": _cut(c.reason), "title": _cut(c.title),
            "state": c.state, "url": c.url, "via": c.via}


def site_detail(r: Report) -> dict[str, Any] | None:
    """The root cause's raise site (the first of tied ones) as the issue page shows it, and the ids of every tied
    site (the explainer page of each lists the issue)."""
    if not r.sites:
        return None
    return {**site_dict(r.sites[0], len(r.sites)), "qualname": _cut(r.sites[0].qualname, 200),
            "ids": [t.id for t in r.sites[:MAX_TIED]]}


def issue_meta(title: str, created_at: str, url: str | None, labels: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The issue as GitHub had it when the bot read it (its labels are the maintainers' as well as the bot's)."""
    return {"title": _cut(title), "created_at": created_at or None, "url": url, "labels": list(labels)[:50]}
