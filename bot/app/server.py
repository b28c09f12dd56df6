"""The aiohttp application of `serve`: the webhook (bot/app/webhook.py), health, metrics, the JSON API and the
dashboard, with the store, the service and the worker started and stopped with it.

    create_app(settings) -> aiohttp.web.Application     # no side effects until the app starts
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.app.context import INTAKE, METRICS, SERVICE, SETTINGS, STORE, WORKER
from bot.app.github import GitHub
from bot.app.intake import IntakeProcesses, metrics_dir, primary_socket
from bot.app.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from bot.app.metrics import Metrics, share_across_processes
from bot.app.service import Service, TriageFn
from bot.app.settings import Settings
from bot.app.webhook import webhook
from bot.app.worker import Intake, Worker, describe
from bot.dashboard import setup_dashboard  # overview, queue, issue pages, error catalog (docs/dashboard.md)
from bot.stores.deliveries import DeliveryStore, open_delivery_store
from bot.triage import triage

log = logging.getLogger("vllm_triage.server")


async def healthz(request: web.Request) -> web.Response:
    try:
        counts = await request.app[STORE].delivery_counts()
    except Exception as e:
        return web.json_response({"ok": False, "error": repr(e)}, status=503)
    settings, github = request.app[SETTINGS], request.app[SERVICE].github
    problems = github.permission_problems() if github is not None else {}
    return web.json_response({"ok": True, "mode": settings.mode, "worker": request.app[WORKER].started,
                              "deliveries": counts, **({"permissions_lacking": problems} if problems else {})})


async def metrics(request: web.Request) -> web.Response:
    counts = await request.app[STORE].delivery_counts()
    gauges = [("vllm_triage_deliveries", "Deliveries in the queue by status", "status", dict(counts))]
    github = request.app[SERVICE].github
    if github is not None:
        gauges.append(("vllm_triage_installation_tokens_minted", "Installation tokens minted since start", None,
                       {"": github.tokens_minted}))
    return web.Response(body=request.app[METRICS].render(gauges), headers={"Content-Type": METRICS_CONTENT_TYPE})


def _authorised(request: web.Request) -> None:
    token = request.app[SETTINGS].api_token
    if token and request.headers.get("Authorization") != f"Bearer {token}":
        raise web.HTTPUnauthorized(text="set Authorization: Bearer <VLLM_TRIAGE_API_TOKEN>")


def _int(request: web.Request, name: str, default: int | None = None) -> int | None:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be a number") from None


async def api_decisions(request: web.Request) -> web.Response:
    _authorised(request)
    records = await request.app[STORE].decisions(request.query.get("repo"), _int(request, "number"),
                                                 min(_int(request, "limit", 100) or 100, 1000))
    return web.json_response([r.__dict__ for r in records])


async def api_deliveries(request: web.Request) -> web.Response:
    _authorised(request)
    rows = await request.app[STORE].deliveries(request.query.get("status"), min(_int(request, "limit", 100) or 100,
                                                                                 10000))
    return web.json_response([{k: v for k, v in d.__dict__.items() if k != "payload"} for d in rows])


async def api_config_errors(request: web.Request) -> web.Response:
    _authorised(request)
    return web.json_response(await request.app[STORE].config_errors())


async def api_installations(request: web.Request) -> web.Response:
    _authorised(request)
    return web.json_response(await request.app[STORE].installations())


def create_app(settings: Settings, *, store: DeliveryStore | None = None, triage_fn: TriageFn = triage,
               freeze_gc: bool = False, serves_intakes: bool = False) -> web.Application:
    """`freeze_gc` and `serves_intakes` (start the intake processes, which need the port bound with
    SO_REUSEPORT and the primary's Unix socket) are for `run`, the `serve` process."""
    settings.check()
    app = web.Application(client_max_size=settings.max_body_bytes)
    app[SETTINGS] = settings
    app[METRICS] = Metrics()
    app[INTAKE] = Intake()

    async def lifecycle(app: web.Application):
        app[STORE] = store or open_delivery_store(settings.database_url, pool_size=settings.workers + 4)
        await app[STORE].migrate()
        session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=settings.http_timeout))
        github = GitHub(settings, session) if settings.has_credentials else None
        app[SERVICE] = Service(settings, app[STORE], github=github, triage_fn=triage_fn, metrics=app[METRICS])
        app[WORKER] = Worker(settings, app[STORE], app[SERVICE], app[INTAKE])
        intakes = IntakeProcesses(settings, settings.intake_processes - 1) \
            if serves_intakes and settings.intake_processes > 1 else None
        if intakes is not None:
            intakes.start()

        async def start_worker() -> None:
            # Deliveries are accepted while the rules load; the worker starts once they are ready.
            if github is not None:
                try:
                    await github.check_app()
                except Exception as e:  # GitHub unreachable now: the worker retries its calls anyway
                    log.warning("could not read the App's permissions from GitHub: %s", describe(e))
            await app[SERVICE].start()
            if freeze_gc:
                gc.freeze()  # what start-up built lives as long as the server: keep the collector off it
            app[WORKER].start()
            log.info("worker started (%d concurrent deliveries)", settings.workers)
            app[SERVICE].build_sources()

        starting = asyncio.create_task(start_worker())
        log.info("vllm-triage serving in %s mode on %s:%s", settings.mode, settings.host, settings.port)
        yield
        if not starting.done():
            starting.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await starting
        if intakes is not None:
            await intakes.stop()
        await app[WORKER].stop()
        await session.close()
        await app[SERVICE].close()
        if store is None:
            await app[STORE].close()

    app.cleanup_ctx.append(lifecycle)
    app.router.add_post("/webhook", webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/api/decisions", api_decisions)
    app.router.add_get("/api/deliveries", api_deliveries)
    app.router.add_get("/api/config-errors", api_config_errors)
    app.router.add_get("/api/installations", api_installations)
    setup_dashboard(app, settings)
    return app


def run(settings: Settings) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    socket_path = None
    if settings.intake_processes > 1:  # the intake processes share the port and forward the rest here
        socket_path = primary_socket(settings)
        Path(socket_path).parent.mkdir(parents=True, exist_ok=True)
        Path(socket_path).unlink(missing_ok=True)
        share_across_processes(metrics_dir(settings), clear=True)
    app = create_app(settings, freeze_gc=True, serves_intakes=socket_path is not None)
    web.run_app(app, host=settings.host, port=settings.port, path=socket_path, reuse_port=socket_path is not None,
                print=None, access_log=None, shutdown_timeout=15)
