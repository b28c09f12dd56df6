"""The queue consumer: claims deliveries, runs the handlers, retries with backoff, parks what keeps failing.

Thin on purpose: everything a delivery means is in `handlers/` and `service.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import socket
import time
import uuid

import gidgethub
from gidgethub import sansio

from bot.app.github import RetryLater
from bot.app.handlers import dispatch
from bot.app.payload import Malformed, check, decode
from bot.app.service import Service
from bot.app.settings import Settings
from bot.stores.deliveries import Delivery, DeliveryStore

log = logging.getLogger("vllm_triage.worker")

# Acknowledging webhooks comes first: while deliveries keep arriving, a worker waits for a quiet moment
# before it claims the next one (at most INTAKE_MAX_DEFER, so a steady stream cannot starve the queue).
INTAKE_QUIET = 0.05
INTAKE_MAX_DEFER = 1.0
RETRYABLE_4XX = frozenset({401, 408, 409, 429})  # 401: the token expired, the next attempt mints another


class Intake:
    """When the webhook endpoint last received a request."""

    def __init__(self) -> None:
        self._last = float("-inf")

    def touch(self) -> None:
        self._last = time.monotonic()

    def quiet_for(self) -> float:
        return time.monotonic() - self._last


def permanent(error: BaseException) -> bool:
    """A failure that retrying the delivery cannot fix: a malformed payload, or GitHub refusing the request
    (a 4xx other than an expired token, a timeout, a conflict or a rate limit)."""
    if isinstance(error, Malformed):
        return True
    if isinstance(error, gidgethub.RateLimitExceeded) or not isinstance(error, gidgethub.BadRequest):
        return False
    return int(error.status_code) not in RETRYABLE_4XX


def describe(error: BaseException) -> str:
    if isinstance(error, gidgethub.HTTPException):
        return f"HTTP {int(error.status_code)} {type(error).__name__}: {error}"
    return f"{type(error).__name__}: {error}"


class Worker:
    def __init__(self, settings: Settings, store: DeliveryStore, service: Service,
                 intake: Intake | None = None) -> None:
        self.settings = settings
        self.intake = intake
        self.store = store
        self.service = service
        self.instance = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._wake = asyncio.Event()
        self._stopping = False
        self._tasks: list[asyncio.Task] = []
        self._inflight: dict[str, str] = {}  # delivery id -> worker id
        self._jitter = random.Random()  # its own: retry jitter never touches (or depends on) the global state

    def wake(self) -> None:
        self._wake.set()

    @property
    def started(self) -> bool:
        return bool(self._tasks)

    def start(self) -> None:
        for i in range(max(1, self.settings.workers)):
            self._tasks.append(asyncio.create_task(self._loop(f"{self.instance}:{i}")))

    async def stop(self, grace: float = 10.0) -> None:
        """Let in-flight deliveries finish for `grace` seconds, then give their leases back."""
        self._stopping = True
        self._wake.set()
        _, pending = await asyncio.wait(self._tasks, timeout=grace) if self._tasks else (set(), set())
        for task in pending:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for delivery_id, worker in list(self._inflight.items()):
            await self.store.retry(delivery_id, worker, "server stopped", time.time(), count_attempt=False)

    async def _loop(self, worker: str) -> None:
        while not self._stopping:
            await self._give_way()
            try:
                delivery = await self.store.claim(worker, self.settings.lease_seconds, self.settings.max_attempts)
            except Exception:
                log.exception("claiming a delivery failed")
                delivery = None
            if delivery is None:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.settings.poll_interval)
                continue
            self._inflight[delivery.id] = worker
            try:
                await self.process(delivery, worker)
            finally:
                self._inflight.pop(delivery.id, None)
            self._wake.set()  # the issue is free again: its next delivery may be ready

    async def _give_way(self) -> None:
        if self.intake is None:
            return
        deadline = time.monotonic() + INTAKE_MAX_DEFER
        while self.intake.quiet_for() < INTAKE_QUIET and time.monotonic() < deadline and not self._stopping:
            await asyncio.sleep(INTAKE_QUIET)

    async def _renew(self, delivery: Delivery, worker: str) -> None:
        while True:
            await asyncio.sleep(self.settings.lease_seconds / 3)
            await self.store.renew(delivery.id, worker, self.settings.lease_seconds)

    def backoff(self, attempts: int) -> float:
        base = self.settings.retry_base_seconds * 2 ** max(0, attempts - 1)
        return min(self.settings.retry_max_seconds, base) * (0.75 + self._jitter.random() / 2)

    async def process(self, delivery: Delivery, worker: str) -> str:
        renew = asyncio.create_task(self._renew(delivery, worker))
        started = time.monotonic()
        try:
            data = decode(delivery.payload)
            check(delivery.event, data)
            failures = await dispatch(sansio.Event(data, event=delivery.event, delivery_id=delivery.id),
                                      self.service)
        except Exception as e:  # a payload the handlers cannot even be given
            failures = [("worker", e)]
        finally:
            renew.cancel()
        metrics = self.service.metrics
        for name, _ in failures:
            metrics.inc("vllm_triage_handler_errors_total", handler=name)
        if not failures:
            await self.store.complete(delivery.id, worker)
            outcome = "done"
        else:
            github = self.service.github
            for _, error in failures:
                unauthorised = isinstance(error, gidgethub.BadRequest) and error.status_code == 401
                if unauthorised and github is not None and delivery.installation_id:
                    github.forget_token(delivery.installation_id)
            error_text = "; ".join(f"{name}: {describe(e)}" for name, e in failures)
            later = [e for _, e in failures if isinstance(e, RetryLater)]
            if later and len(later) == len(failures):
                await self.store.retry(delivery.id, worker, error_text, time.time() + max(e.wait for e in later),
                                       count_attempt=False)
                outcome = later[0].outcome
            elif delivery.attempts >= self.settings.max_attempts or all(permanent(e) for _, e in failures):
                await self.store.park(delivery.id, worker, error_text)
                log.error("delivery %s (%s.%s %s#%s) parked after %d attempts%s: %s", delivery.id, delivery.event,
                          delivery.action, delivery.repo, delivery.issue_number, delivery.attempts,
                          "" if delivery.attempts >= self.settings.max_attempts else " (retrying cannot fix it)",
                          error_text)
                outcome = "parked"
            else:
                await self.store.retry(delivery.id, worker, error_text, time.time() + self.backoff(delivery.attempts))
                outcome = "retry"
        metrics.inc("vllm_triage_deliveries_processed_total", outcome=outcome)
        log.info("delivery %s %s.%s %s#%s: %s in %.0f ms (attempt %d)", delivery.id, delivery.event, delivery.action,
                 delivery.repo, delivery.issue_number, outcome, (time.monotonic() - started) * 1000, delivery.attempts)
        return outcome
