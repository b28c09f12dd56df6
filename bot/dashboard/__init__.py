"""The maintainers' dashboard: overview, queue, issue pages, the error catalog and the replay's HTML report.

`setup_dashboard(app, settings)` registers every route on the App's aiohttp application (bot/app/server.py calls
it); the routes are imported only then, so the replay's HTML report (bot/dashboard/report.py) needs no web layer.
"""

from __future__ import annotations

from typing import Any


def setup_dashboard(app: Any, settings: Any, **kwargs: Any) -> None:
    from bot.dashboard.routes import setup

    setup(app, settings, **kwargs)
