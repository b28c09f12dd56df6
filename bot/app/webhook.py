"""POST /webhook: verify the signature, record the delivery, answer 202; the worker does the rest. The serving
process and the intake processes (bot/app/intake.py) both serve it."""

from __future__ import annotations

import contextlib
import json
import logging
import time
from typing import Any

import gidgethub
from aiohttp import web
from gidgethub import sansio

from bot.app.context import INTAKE, METRICS, SETTINGS, STORE, WORKER
from bot.app.handlers import action_of, installation_of, issue_number_of, repo_of
from bot.app.payload import EVENTS, problem

log = logging.getLogger("vllm_triage.webhook")


def _answer(status: int, message: str, **extra: Any) -> web.Response:
    # A short text in the body shows up in GitHub's delivery log.
    return web.json_response({"message": message, **extra}, status=status)


async def webhook(request: web.Request) -> web.Response:
    started = time.perf_counter()
    request.app[INTAKE].touch()
    settings, metrics = request.app[SETTINGS], request.app[METRICS]
    event_name = request.headers.get("X-GitHub-Event", "?")
    event_label = event_name if event_name in EVENTS else "other"  # a client may send any name, signed or not

    def done(response: web.Response, outcome: str) -> web.Response:
        metrics.inc("vllm_triage_webhooks_total", event=event_label, outcome=outcome)
        metrics.observe("vllm_triage_webhook_seconds", time.perf_counter() - started)
        return response

    if request.content_length is not None and request.content_length > settings.max_body_bytes:
        return done(_answer(413, "payload too large"), "too-large")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return done(_answer(413, "payload too large"), "too-large")

    def refuse(why: str, delivery_id: str | None) -> web.Response:
        log.warning("delivery %s (%s) refused: %s", delivery_id, event_name[:40], why)
        return done(_answer(400, why), "bad-request")

    try:
        event = sansio.Event.from_http(request.headers, body, secret=settings.webhook_secret)
    except RecursionError:  # signed, but nested deeper than the JSON decoder goes
        return refuse("the JSON nests too deep", request.headers.get("X-GitHub-Delivery"))
    except gidgethub.ValidationFailure as e:
        return done(_answer(401, f"signature check failed: {e}"), "bad-signature")
    except gidgethub.BadRequest as e:
        return done(_answer(415, str(e) or "expected application/json"), "bad-content-type")
    except KeyError as e:
        return refuse(f"missing header {e}", request.headers.get("X-GitHub-Delivery"))
    except ValueError:  # JSON that does not parse
        return done(_answer(400, "body is not valid JSON"), "bad-request")
    if event.event == "ping":
        return done(_answer(200, "pong"), "ping")
    if not event.delivery_id:
        return refuse("missing X-GitHub-Delivery", None)
    why = problem(event.event, event.data)
    if why is not None:
        return refuse(why, event.delivery_id)
    data = event.data
    payload = None
    if request.content_type == "application/json":
        with contextlib.suppress(UnicodeDecodeError):  # gidgethub decoded it by its charset parameter
            payload = body.decode("utf-8")
    if payload is None:
        try:
            payload = json.dumps(data)
        except RecursionError:
            return refuse("the JSON nests too deep", event.delivery_id)
    outcome = await request.app[STORE].record_delivery(
        event.delivery_id, event.event, action_of(data), repo_of(data), issue_number_of(event.event, data),
        installation_of(data), payload)
    worker = request.app.get(WORKER)  # an intake process (bot/app/intake.py) has none: the primary's polls
    if outcome != "duplicate" and worker is not None:
        worker.wake()
    return done(_answer(202, outcome, delivery=event.delivery_id), outcome)
