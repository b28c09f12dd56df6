"""The App's raise-site index: the core process loads it once, read only (bot/app/core.py); the releases it lacks
are built in the background, in a process of their own, when the App starts.

The background build is bounded: the newest `VLLM_TRIAGE_SOURCES_BUILD` final releases at most (0 turns it off),
one release at a time, at a low priority, each release logged; webhooks are acknowledged and triaged meanwhile
(without the index, or with the releases built before). When it has stored a release, the core loads the index
again. `vllm-triage sources build` builds every release.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("vllm_triage.sources")
PACKAGE = "vllm"
BUILD_NICENESS = 15


@dataclass
class BuildOutcome:
    built: list[str] = field(default_factory=list)
    skipped: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)
    error: str | None = None   # the build could not start (no index reachable, no sdist)


def build_missing(database_url: str | None, data_dir: str, latest: int) -> BuildOutcome:
    """Build the newest `latest` final releases the store lacks (or holds from an older extractor). Runs in a
    child process of the server."""
    from bot.sources.build import PlanError, build, plan
    from bot.sources.sdists import IndexClient, SdistError, pip_index
    from bot.stores.sources import open_source_store

    with contextlib.suppress(OSError):
        os.nice(BUILD_NICENESS)
    outcome = BuildOutcome()
    store = open_source_store(database_url, data_dir)
    try:
        held = {r.version: r for r in store.releases(PACKAGE)}
        current = {v for v, r in held.items() if r.current}
        try:
            client = IndexClient(pip_index())
            todo, done = plan(client, PACKAGE, current, latest=latest)
        except (PlanError, SdistError, OSError) as e:
            outcome.error = str(e)
            return outcome
        outcome.skipped = len(done)

        def keep(result) -> None:
            if result.version in held:  # read by an older extractor
                store.remove_release(result.package, result.version)
            store.add_release(result)
            log.info("source index: built %s %s (%d sites, %.1f s)", result.package, result.version,
                     len(result.sites), result.seconds)

        summary = build(PACKAGE, todo, client.index, Path(data_dir) / "sources" / "sdists", keep, jobs=1)
        outcome.built = [b.version for b in summary.built]
        outcome.failed = summary.failed
        return outcome
    finally:
        store.close()


def _child(database_url: str | None, data_dir: str, latest: int, results) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        results.put(build_missing(database_url, data_dir, latest))
    except BaseException as e:  # reported to the server, which logs it; the App goes on without the releases
        results.put(BuildOutcome(error=f"{type(e).__name__}: {e}"))


class BackgroundBuild:
    """One run of `build_missing` in a child process, awaited without blocking the event loop; stopped (the child
    terminated) when the server stops first."""

    def __init__(self, database_url: str | None, data_dir: str, latest: int) -> None:
        self.args = (database_url, data_dir, latest)
        self.process: multiprocessing.process.BaseProcess | None = None

    async def run(self) -> BuildOutcome:
        context = multiprocessing.get_context("spawn")
        results = context.Queue(1)
        self.process = context.Process(target=_child, args=(*self.args, results), name="vllm-triage-sources-build")
        self.process.start()
        log.info("source index: building the newest %d releases it lacks, in the background (pid %s)",
                 self.args[2], self.process.pid)
        try:
            while self.process.is_alive() and results.empty():
                await asyncio.sleep(0.5)
            outcome = await asyncio.to_thread(results.get, True, 5.0)
        except Exception:  # the child died without an answer
            outcome = BuildOutcome(error=f"the build process exited with {self.process.exitcode}")
        finally:
            await asyncio.to_thread(self.process.join, 5.0)
            results.close()
        if outcome.error:
            log.warning("source index: not built: %s", outcome.error)
        for version, why in outcome.failed:
            log.warning("source index: %s %s not built: %s", PACKAGE, version, why)
        log.info("source index: %d releases built, %d already there, %d failed", len(outcome.built),
                 outcome.skipped, len(outcome.failed))
        return outcome

    def stop(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join(5.0)
