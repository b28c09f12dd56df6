"""The Jinja2 environment of the dashboard and of the replay report: HTML templates under templates/dashboard/,
autoescape always on (every value from an issue is escaped; only `md` output and our own assets are Markup)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from bot.dashboard.markdown import to_html
from bot.paths import templates_dir

STATIC_DIR = Path(__file__).resolve().parent / "static"


def _when(ts: float | None) -> str:
    if not ts:
        return "—"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _day(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d") if ts else "—"


def _ago(ts: float | None, now: float | None = None) -> str:
    if not ts:
        return "—"
    seconds = max(0.0, (time.time() if now is None else now) - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def _url(value: object) -> str | None:
    """Only http(s) links from data (an export or a payload could carry `javascript:`); None otherwise."""
    if not isinstance(value, str) or len(value) > 2000 or not value.startswith(("https://", "http://")):
        return None
    return None if any(c.isspace() or ord(c) < 32 for c in value) else value


def _pct(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value * 100:.{digits}f}%"


@lru_cache(maxsize=4)
def environment(directory: str | None = None) -> Environment:
    root = Path(directory) if directory else templates_dir() / "dashboard"
    env = Environment(loader=FileSystemLoader(str(root)), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(md=to_html, when=_when, day=_day, ago=_ago, pct=_pct, url=_url)
    return env


@lru_cache(maxsize=8)
def asset(name: str) -> Markup:
    """One of our static files, to inline into the self-contained report (trusted: shipped with the package)."""
    return Markup((STATIC_DIR / name).read_text(encoding="utf-8"))
