"""The pure side of the server: rules, the duplicate index of each repository, the raise-site index, and triage.

It runs in a child process by default (`VLLM_TRIAGE_CORE=process`): triage is CPU-bound Python, and in a
thread it would hold the GIL while the event loop has webhooks to acknowledge. The child is the only user
of the duplicate indexes. `thread` runs it on one thread of the server process instead (tests, debugging).
The raise-site index is loaded once, read only, when the core starts (and again after a background build,
`reload_sources`); without one, triage works without raise sites.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any, Concatenate, ParamSpec, TypeVar

from bot.app.lifeline import follow_parent
from bot.decision import Candidate, Finding
from bot.dupes import DuplicateIndex
from bot.report import Report
from bot.rules import DEFAULT_RULES_DIR, RuleSet, load_rules
from bot.sources.index import SourceIndex
from bot.stores.dupes import open_repo_index
from bot.stores.sources import load_index
from bot.triage import Triage, analyse

log = logging.getLogger("vllm_triage.core")
P = ParamSpec("P")
R = TypeVar("R")


CONFIRMED = "confirmed by a maintainer"


class Excluding:
    """The duplicate index with the maintainers' feedback: candidates rejected with /not-duplicate (or on the
    dashboard) are never suggested; those confirmed with /duplicate are linked first, whatever their score."""

    def __init__(self, index: DuplicateIndex, excluded: set[int], confirmed: tuple[int, ...] = ()) -> None:
        self.index, self.excluded, self.confirmed = index, excluded, tuple(dict.fromkeys(confirmed))

    def search(self, report: Report, findings: tuple[Finding, ...], *, exclude: int | None = None,
               limit: int = 3) -> tuple[Candidate, ...]:
        return self.similar(report, findings, exclude=exclude, limit=limit)[0]

    def similar(self, report: Report, findings: tuple[Finding, ...], *, exclude: int | None = None,
                limit: int = 3) -> tuple[tuple[Candidate, ...], tuple[Candidate, ...]]:
        more = limit + len(self.excluded) + len(self.confirmed)
        linked, related = self.index.similar(report, findings, exclude=exclude, limit=more)
        found = {c.number: c for c in (*linked, *related)}
        first: list[Candidate] = []
        for number in self.confirmed:
            if number in self.excluded or number == exclude:
                continue
            c = found.get(number)
            c = replace(c, reason=f"{CONFIRMED}; {c.reason}") if c is not None else self.index.candidate(number,
                                                                                                    CONFIRMED)
            if c is not None:
                first.append(c)
        skip = self.excluded | {c.number for c in first}
        linked = (*first, *(c for c in linked if c.number not in skip))
        return (tuple(linked[:limit]), tuple(c for c in related if c.number not in skip)[:limit])


MAX_RULE_VARIANTS = 32   # rule sets less some suppressed rules, kept for the next issue that suppresses the same


class Core:
    def __init__(self, rules_dir: str | None, data_dir: str, triage_fn: Callable[..., Triage],
                 database_url: str | None = None) -> None:
        self.rules = load_rules(rules_dir or DEFAULT_RULES_DIR)
        self.data_dir = data_dir
        self.database_url = database_url  # postgresql://…: the replicas share one index there
        self.triage_fn = triage_fn
        self.indexes: dict[str, DuplicateIndex] = {}
        self.sources: SourceIndex | None = None
        self._without: dict[frozenset[str], RuleSet] = {}
        self.reload_sources()

    def reload_sources(self) -> int:
        """Load the raise-site index (read only) from the store; returns how many releases it holds (0: none)."""
        try:
            self.sources = load_index(self.database_url, self.data_dir)
        except Exception as e:  # a broken or unreachable index: triage goes on without one
            log.warning("source index not loaded: %s: %s", type(e).__name__, e)
            return len(self.sources.releases) if self.sources is not None else 0
        if self.sources is None:
            log.info("no source index: raise sites are not located (`vllm-triage sources build`)")
            return 0
        log.info("source index loaded: %d releases, %d sites", len(self.sources.releases), len(self.sources))
        return len(self.sources.releases)

    def index(self, repo: str) -> DuplicateIndex:
        index = self.indexes.get(repo)
        if index is None:
            index = self.indexes[repo] = open_repo_index(self.database_url, self.data_dir, repo)
        return index

    def rule_count(self) -> int:
        """How many rules this core loaded. The first call to a core starts it (its process, by default) and
        loads the rules: `CoreRunner.start` calls this to wait for that before the worker starts."""
        return len(self.rules.rules)

    def triage(self, repo: str, issue: Any, rejected: set[int], duplicates: bool,
               suppressed: set[str] = frozenset(), confirmed: tuple[int, ...] = ()) -> Triage:
        index = self.index(repo)
        similar = (Excluding(index, rejected, confirmed) if rejected or confirmed else index) if duplicates else None
        rules = self.rules
        if suppressed:  # rules a maintainer switched off for this issue
            rules = self.rules_without(frozenset(suppressed))
        result = self.triage_fn(issue.number, issue.title, issue.body, rules, similar, sources=self.sources,
                                created_at=issue.created_at or None)
        index.add(issue.number, result.report, result.decision.findings, state=issue.state,
                  created_at=issue.created_at, url=issue.url,
                  duplicate_of=confirmed[-1] if confirmed else None)   # a confirmed link survives an edit
        return result

    def rules_without(self, suppressed: frozenset[str]) -> RuleSet:
        """The rules less `suppressed`, built once per set of ids: a RuleSet builds its prefilter and keywords
        (~0.4 s of CPU)."""
        rules = self._without.get(suppressed)
        if rules is None:
            if len(self._without) >= MAX_RULE_VARIANTS:
                self._without.clear()
            rules = RuleSet(tuple(r for r in self.rules.rules if r.id not in suppressed))
            self._without[suppressed] = rules
        return rules

    def index_closed(self, repo: str, issue: Any) -> None:
        analysis = analyse(issue.title, issue.body, self.rules, self.sources, issue.created_at or None)
        self.index(repo).add(issue.number, analysis.report, analysis.findings, state="closed",
                             created_at=issue.created_at, url=issue.url)

    def mark_duplicate(self, repo: str, number: int, of: int) -> None:
        self.index(repo).mark_duplicate(number, of)

    def close(self) -> None:
        for index in self.indexes.values():
            index.close()
        self.indexes.clear()


_CORE: Core | None = None  # the child process's Core


# Triage is CPU work that may lag; acknowledging webhooks may not. The core process yields the CPU to the
# server process (the intake) when both want it.
CORE_NICENESS = 10


def _init(rules_dir: str | None, data_dir: str, triage_fn: Callable[..., Triage], database_url: str | None = None,
          server_pid: int | None = None) -> None:
    global _CORE
    with contextlib.suppress(OSError):
        os.nice(CORE_NICENESS)
    if server_pid is not None:
        follow_parent(server_pid, lambda: os._exit(0))  # nothing to finish: the server re-runs what was lost
    _CORE = Core(rules_dir, data_dir, triage_fn, database_url)


def _in_child(method: Callable[Concatenate[Core, P], R], *args: P.args) -> R:
    assert _CORE is not None
    return method(_CORE, *args)


class CoreRunner:
    """The server's handle on its Core: each method runs the Core method of the same name in the core's process
    (or thread) and waits for it without blocking the event loop."""

    def __init__(self, kind: str, rules_dir: str | None, data_dir: str, triage_fn: Callable[..., Triage],
                 database_url: str | None = None) -> None:
        self.kind = kind
        self._args = (rules_dir, data_dir, triage_fn, database_url)
        self._local: Core | None = None
        self._executor = self._new_executor()

    def _new_executor(self) -> Executor:
        if self.kind == "process":
            return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_init,
                                       initargs=(*self._args, os.getpid()))
        return ThreadPoolExecutor(1, thread_name_prefix="vllm-triage-core")

    def _in_thread(self, method: Callable[Concatenate[Core, P], R], *args: P.args) -> R:
        if self._local is None:
            self._local = Core(*self._args)
        return method(self._local, *args)

    async def _run(self, method: Callable[Concatenate[Core, P], R], *args: P.args) -> R:
        loop = asyncio.get_running_loop()
        if self.kind != "process":
            return await loop.run_in_executor(self._executor, self._in_thread, method, *args)
        try:
            return await loop.run_in_executor(self._executor, _in_child, method, *args)
        except BrokenProcessPool:
            log.error("the core process died; starting a new one")
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = self._new_executor()
            raise

    async def start(self) -> int:
        """Start the core and wait until it has loaded the rules; returns how many."""
        return await self._run(Core.rule_count)

    async def triage(self, repo: str, issue: Any, rejected: set[int], duplicates: bool,
                     suppressed: set[str] = frozenset(), confirmed: tuple[int, ...] = ()) -> Triage:
        return await self._run(Core.triage, repo, issue, rejected, duplicates, suppressed, confirmed)

    async def reload_sources(self) -> int:
        return await self._run(Core.reload_sources)

    async def index_closed(self, repo: str, issue: Any) -> None:
        await self._run(Core.index_closed, repo, issue)

    async def mark_duplicate(self, repo: str, number: int, of: int) -> None:
        await self._run(Core.mark_duplicate, repo, number, of)

    async def close(self) -> None:
        try:
            await self._run(Core.close)
        finally:
            self._executor.shutdown(wait=True, cancel_futures=True)
