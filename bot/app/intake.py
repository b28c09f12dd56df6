"""Extra webhook-intake processes: `serve --intake-processes N` (VLLM_TRIAGE_INTAKE_PROCESSES).

One Python event loop acknowledges a few thousand webhooks a second; past that, deliveries queue in front of
it. With N > 1 the serving process (the primary: worker, triage core, dashboard) starts N - 1 intake
processes that bind the same port with SO_REUSEPORT, so the kernel spreads connections over all of them.
An intake process verifies and records `POST /webhook` itself (the same handler, the same store; the worker
finds the delivery on its next poll) and forwards every other request, unchanged, to the primary over a Unix
socket in the data directory. It exits when the primary is gone; the primary restarts one that died.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import signal
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.app.context import CLIENT_HEADER, INTAKE, METRICS, SETTINGS, STORE
from bot.app.lifeline import follow_parent
from bot.app.metrics import Metrics, share_across_processes
from bot.app.settings import Settings
from bot.app.webhook import webhook
from bot.app.worker import Intake
from bot.stores.deliveries import open_delivery_store

log = logging.getLogger("vllm_triage.intake")

# hop-by-hop headers (RFC 9110, 7.6.1) and the ones aiohttp sets again for the forwarded body
_NOT_FORWARDED = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
                            "trailer", "transfer-encoding", "upgrade", "content-length"})
PRIMARY = web.AppKey("primary", aiohttp.ClientSession)
RESTART_PAUSE = 1.0  # seconds between restarts of an intake process that keeps dying


def primary_socket(settings: Settings) -> str:
    return str(Path(settings.data_dir) / f"primary-{settings.port}.sock")


def metrics_dir(settings: Settings) -> Path:
    """Where every process of the server writes its counts (bot/app/metrics.py)."""
    return Path(settings.data_dir) / f"metrics-{settings.port}"


def _headers(headers) -> list[tuple[str, str]]:
    return [(k, v) for k, v in headers.items() if k.lower() not in _NOT_FORWARDED and k.lower() != CLIENT_HEADER]


async def forward(request: web.Request) -> web.Response:
    """Everything but the webhook goes to the primary: the dashboard, its actions, /healthz, /metrics, /api."""
    body = await request.read()
    try:
        async with request.app[PRIMARY].request(
                request.method, f"http://primary{request.path_qs}",
                headers=[*_headers(request.headers), (CLIENT_HEADER, request.remote or "")],
                data=body or None, allow_redirects=False) as answer:
            content = await answer.read()
            return web.Response(status=answer.status, headers=_headers(answer.headers), body=content)
    except aiohttp.ClientError as e:
        return web.json_response({"message": f"the primary server is not answering: {type(e).__name__}"},
                                 status=502)


def create_intake_app(settings: Settings, socket_path: str) -> web.Application:
    share_across_processes(metrics_dir(settings))
    app = web.Application(client_max_size=settings.max_body_bytes)
    app[SETTINGS] = settings
    app[METRICS] = Metrics()
    app[INTAKE] = Intake()

    async def lifecycle(app: web.Application):
        app[STORE] = open_delivery_store(settings.database_url, pool_size=4)
        await app[STORE].migrate()  # the primary migrated already: this only opens the store
        # no cookie jar: one user's session cookie must never ride along with another user's request
        app[PRIMARY] = aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=socket_path),
                                             cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False,
                                             timeout=aiohttp.ClientTimeout(total=settings.http_timeout))
        yield
        await app[PRIMARY].close()
        await app[STORE].close()

    app.cleanup_ctx.append(lifecycle)
    app.router.add_post("/webhook", webhook)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


def run_intake(settings: Settings, socket_path: str, parent_pid: int) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    app = create_intake_app(settings, socket_path)
    # run_app's SIGTERM handler shuts the server down cleanly
    follow_parent(parent_pid, lambda: os.kill(os.getpid(), signal.SIGTERM))
    gc.freeze()
    web.run_app(app, host=settings.host, port=settings.port, reuse_port=True, print=None, access_log=None,
                shutdown_timeout=5)


class IntakeProcesses:
    """The primary's N - 1 intake processes, kept running until `stop`."""

    def __init__(self, settings: Settings, count: int) -> None:
        self.settings = settings
        self.count = count
        self.socket_path = primary_socket(settings)
        self._context = multiprocessing.get_context("spawn")
        self._processes: list[multiprocessing.process.BaseProcess] = []
        self._watch: asyncio.Task | None = None

    def _spawn(self) -> multiprocessing.process.BaseProcess:
        process = self._context.Process(target=run_intake, args=(self.settings, self.socket_path, os.getpid()),
                                        name="vllm-triage-intake", daemon=True)
        process.start()
        return process

    def start(self) -> None:
        self._processes = [self._spawn() for _ in range(self.count)]
        self._watch = asyncio.create_task(self._keep_running())
        log.info("%d intake processes share port %s (pids %s)", self.count, self.settings.port,
                 ", ".join(str(p.pid) for p in self._processes))

    async def _keep_running(self) -> None:
        while True:
            await asyncio.sleep(RESTART_PAUSE)
            for i, process in enumerate(self._processes):
                if not process.is_alive():
                    log.error("intake process %s exited with %s: starting another", process.pid, process.exitcode)
                    self._processes[i] = self._spawn()

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        for process in self._processes:
            if process.is_alive():
                process.terminate()
        for process in self._processes:
            await asyncio.to_thread(process.join, 10)
            if process.is_alive():
                process.kill()
