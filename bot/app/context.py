"""What the server, its intake processes and the dashboard share on the aiohttp application: the keys of the
objects the server puts there, and the visitor's address. They all import this module, never each other."""

from __future__ import annotations

from aiohttp import web

from bot.app.metrics import Metrics
from bot.app.service import Service
from bot.app.settings import Settings
from bot.app.worker import Intake, Worker
from bot.stores.deliveries import DeliveryStore

STORE = web.AppKey("store", DeliveryStore)
SETTINGS = web.AppKey("settings", Settings)
METRICS = web.AppKey("metrics", Metrics)
WORKER = web.AppKey("worker", Worker)      # the serving process only: an intake process has none
SERVICE = web.AppKey("service", Service)
INTAKE = web.AppKey("intake", Intake)

# the visitor's address, for the dashboard's login throttle; trusted only on the Unix socket an intake process
# forwards over (see client_address)
CLIENT_HEADER = "x-vllm-triage-client"


def client_address(request: web.Request) -> str:
    """The visitor's address: the TCP peer, or for a request an intake process forwarded over the Unix socket
    (no TCP peer), the address that process saw. A TCP client cannot set it: it has a peer address."""
    if request.remote:
        return request.remote
    return request.headers.get(CLIENT_HEADER) or "?"
