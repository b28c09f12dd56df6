"""Report kind from the title prefix, the template's sections, or a guess."""

from __future__ import annotations

from bot.report.model import Section


def detect_kind(title: str, body: str, sections: tuple[Section, ...]) -> tuple[str, str, str]:
    """Return (kind, source, title_without_prefix); source is title | template | guess."""
    return "other", "guess", title
