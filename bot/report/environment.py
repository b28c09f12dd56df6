"""Environment: collect_env (both formats) and the fallbacks users give instead."""

from __future__ import annotations

from bot.report.model import Environment, Section


def parse_environment(
    title: str, body: str, sections: tuple[Section, ...], lines: tuple[str, ...]
) -> tuple[Environment, bool]:
    """Return (environment, environment_section_is_placeholder)."""
    return Environment(), False
