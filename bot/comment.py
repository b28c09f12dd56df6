"""The one bot comment, rendered from templates/ with Jinja2; issue text in it is neutralised."""

from __future__ import annotations

from bot.decision import Candidate, Finding
from bot.report.model import Report

MARKER = "<!-- vllm-triage:comment -->"


def render_comment(
    report: Report, findings: tuple[Finding, ...], duplicates: tuple[Candidate, ...], needs_info: tuple[str, ...]
) -> str | None:
    """Markdown of the comment, or None when nothing useful is known."""
    return None
