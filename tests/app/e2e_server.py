"""The real server (create_app + web.run_app, settings from the environment) with the deterministic
stand-in triage of faketriage.py, run as a subprocess by test_e2e.py so that it can be SIGKILLed."""

import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aiohttp import web  # noqa: E402
from faketriage import fake_triage  # noqa: E402

from bot.app.server import create_app  # noqa: E402
from bot.app.settings import from_env  # noqa: E402

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = from_env()
    web.run_app(create_app(settings, triage_fn=fake_triage), host=settings.host, port=settings.port,
                print=None, access_log=None)
