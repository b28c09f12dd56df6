"""Markdown -> HTML for the dashboard, safe for untrusted text.

CommonMark with raw HTML off: every `<tag>` in the source comes out escaped. The bot's own comment uses a few
attribute-less tags GitHub renders (`<details>`, `<summary>`, `<sub>`); exactly those, written without attributes,
are let through. Link targets go through markdown-it's validator (no `javascript:`, `vbscript:`, `file:`, `data:`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from bot.comment import MARKER

ALLOWED_TAGS = ("details", "summary", "sub", "sup", "b", "i", "br", "p")
_TAG = re.compile(r"<(/?)([a-z]{1,10})\s{0,2}(/?)>")
MAX_SOURCE = 200_000


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": False})
    md.enable("table").enable("strikethrough")

    def html(renderer, tokens, idx, options, env) -> str:
        return _allow_tags(tokens[idx].content)

    md.add_render_rule("html_block", html)
    md.add_render_rule("html_inline", html)
    return md


def _allow_tags(raw: str) -> str:
    """Raw HTML from the source: the allowed bare tags stay, everything else (comments included) is escaped text."""
    out: list[str] = []
    pos = 0
    for m in _TAG.finditer(raw):
        out.append(str(escape(raw[pos:m.start()])))
        closing, name, self_closing = m.groups()
        if name in ALLOWED_TAGS:
            out.append(f"<{closing}{name}{self_closing and ' /'}>")
        else:
            out.append(str(escape(m.group(0))))
        pos = m.end()
    out.append(str(escape(raw[pos:])))
    return "".join(out)


def to_html(text: str | None) -> Markup:
    if not text:
        return Markup("")
    text = text.replace(MARKER, "")[:MAX_SOURCE]
    return Markup(_md().render(text))
