"""Issue-form sections (`### ` headings), template placeholders, and the description text."""

from __future__ import annotations

from bot.report.model import Section


def split_sections(body: str) -> tuple[Section, ...]:
    """Split on `### ` headings; mark `_No response_`, placeholders and empty wrappers as empty."""
    return ()


def is_placeholder(text: str) -> bool:
    """True when the text is only a template placeholder / `_No response_` / `<details>` wrapper."""
    return not text.strip()


def description_text(body: str, sections: tuple[Section, ...]) -> str:
    """The body without the environment dump and the 'Before submitting' checklist."""
    return body
