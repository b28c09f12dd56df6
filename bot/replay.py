"""Replay: run the whole pipeline over an exported issue list, offline, in creation order."""

from __future__ import annotations

import gc
import json
import multiprocessing
import queue
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TextIO

from bot.comment import comment_context
from bot.decision import Candidate, Finding
from bot.dupes.document import IssueDoc, build_doc, prebuilt
from bot.dupes.store import Mark
from bot.export import ExportProblem, IssueRecord, read_export
from bot.report import Report
from bot.rules import RuleSet
from bot.sources.index import SourceIndex
from bot.triage import Analysis, SimilarIssues, Triage, analyse, decide, decided


@dataclass
class ReplaySummary:
    issues: int = 0
    problems: list[ExportProblem] = field(default_factory=list)
    labels: Counter = field(default_factory=Counter)
    diagnoses: Counter = field(default_factory=Counter)
    needs_info: int = 0
    with_duplicates: int = 0
    commented: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.issues / self.seconds if self.seconds > 0 else 0.0

    def add(self, t: Triage) -> None:
        self.issues += 1
        self.labels.update(t.decision.labels)
        self.diagnoses.update(f.rule for f in t.decision.findings)
        self.needs_info += bool(t.decision.needs_info)
        self.with_duplicates += bool(t.decision.duplicates)
        self.commented += t.decision.comment is not None

    def render(self) -> str:
        lines = [f"{self.issues} issues in {self.seconds:.2f} s ({self.rate:.0f} issues/s); "
                 f"{self.needs_info} need info, {self.with_duplicates} with duplicates, {self.commented} commented"]
        if self.problems:
            lines.append(f"{len(self.problems)} export lines skipped:")
            lines += [f"  {p}" for p in self.problems[:20]]
        if self.labels:
            lines.append("labels:    " + ", ".join(f"{k} {v}" for k, v in self.labels.most_common()))
        if self.diagnoses:
            lines.append("diagnoses: " + ", ".join(f"{k} {v}" for k, v in self.diagnoses.most_common()))
        return "\n".join(lines)


class Indexer(SimilarIssues, Protocol):
    """What replay needs of the duplicate index (`DuplicateIndex`, or `ChronologicalIndex` over a stored one)."""

    def add(self, number: int, report: Report, findings: tuple[Finding, ...], **kwargs: Any) -> None: ...


class AsOfIndexer(Indexer, Protocol):
    """An index replay's workers can search as it was at each issue's turn (the in-memory store's)."""

    def mark(self) -> Mark | None: ...

    def as_of(self, mark: Mark) -> SimilarIssues: ...

    def holds_any(self, numbers: Iterable[int]) -> bool: ...


def load_sorted(path: str, problems: list[ExportProblem]) -> list[IssueRecord]:
    issues: list[IssueRecord] = []
    for item in read_export(path):
        if isinstance(item, ExportProblem):
            problems.append(item)
        else:
            issues.append(item)
    issues.sort(key=lambda i: (i.created_at, i.number))
    return issues


def replay(issues: Iterable[IssueRecord], rules: RuleSet, index: Indexer | None,
           on_result: Callable[[IssueRecord, Triage], None], summary: ReplaySummary,
           progress: Callable[[int], None] | None = None, jobs: int = 1,
           sources: SourceIndex | None = None) -> ReplaySummary:
    """Each issue is triaged as if just opened: the index holds only the issues created before it. `sources`: the
    raise-site index (read only; the workers inherit it by forking).

    With jobs > 1, parsing, rules, labels and the duplicate document (which need only the issue) run in that
    many worker processes, in order, and so does the comment's context. When the index can be read as it was
    at each issue's turn (in memory, every issue new to it), this process adds each window of issues to it and
    forked workers search it and finish the comments; otherwise the duplicate search and the comment stay in
    this process. Same output; the reports handed to `on_result` then lack the parse's intermediate text (body,
    sections, description, prose, log lines, tracebacks, commands)."""
    start = time.perf_counter()
    with _long_lived_frozen():
        if jobs > 1 and _forks() and index is not None and _readable_as_of(index, issues := list(issues)):
            triaged = _searched_in_workers(issues, rules, index, jobs, sources)  # type: ignore[arg-type]
        else:
            triaged = _decided_here(issues, rules, index, jobs, sources)
        with triaged as results:
            for n, (issue, result) in enumerate(results, 1):
                on_result(issue, result)
                summary.add(result)
                if progress is not None:
                    progress(n)
    summary.seconds = time.perf_counter() - start
    return summary


def _forks() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _readable_as_of(index: Indexer, issues: list[IssueRecord]) -> bool:
    """Whether `index` can be searched as of each issue's turn after adding them all: a store that keeps marks,
    and no issue that would replace one (a number held already or repeated)."""
    if getattr(index, "mark", None) is None or index.mark() is None:  # type: ignore[attr-defined]
        return False
    numbers = [issue.number for issue in issues]
    return len(set(numbers)) == len(numbers) and not index.holds_any(numbers)  # type: ignore[attr-defined]


def _add(index: Indexer, issue: IssueRecord, report: Report, findings: tuple[Finding, ...]) -> None:
    index.add(issue.number, report, findings, state=issue.state, created_at=issue.created_at, url=issue.url)


@contextmanager
def _decided_here(issues: Iterable[IssueRecord], rules: RuleSet, index: Indexer | None, jobs: int,
                  sources: SourceIndex | None) -> Iterator[Iterator[tuple[IssueRecord, Triage]]]:
    """Duplicates and comment in this process, each issue added to the index once handed on."""
    def triaged(analysed: Iterator[Analysed]) -> Iterator[tuple[IssueRecord, Triage]]:
        for issue, analysis, doc, context in analysed:
            if doc is not None:
                prebuilt(analysis.report, analysis.findings, doc)
            result = decide(issue.number, analysis, index, context)
            yield issue, result
            if index is not None:
                _add(index, issue, result.report, result.decision.findings)

    with _analyses(issues, rules, jobs, docs=index is not None, sources=sources) as analysed:
        yield triaged(analysed)


WINDOW = 1024     # issues added to the index before workers forked from this process search them


@contextmanager
def _searched_in_workers(issues: list[IssueRecord], rules: RuleSet, index: AsOfIndexer, jobs: int,
                         sources: SourceIndex | None) -> Iterator[Iterator[tuple[IssueRecord, Triage]]]:
    """The analyses come from workers as in `_decided_here`; this process adds a window of them to the index
    (remembering its mark before each), then forks `jobs` workers that search each issue of the window in the
    index as of its mark and render its comment (an issue's duplicates depend only on the issues before it)."""
    def triaged(analysed: Iterator[Analysed]) -> Iterator[tuple[IssueRecord, Triage]]:
        window: list[Searched] = []
        for issue, analysis, doc, context in analysed:
            mark = index.mark()
            assert doc is not None and mark is not None
            prebuilt(analysis.report, analysis.findings, doc)
            _add(index, issue, analysis.report, analysis.findings)
            window.append((issue, analysis, doc, context, mark))
            if len(window) == WINDOW:
                yield from _search_window(window, index, jobs)
                window = []
        if window:
            yield from _search_window(window, index, jobs)

    with _analyses(issues, rules, jobs, docs=True, sources=sources) as analysed:
        yield triaged(analysed)


YOUNG_OBJECTS = 50_000   # objects allocated (net) between two collections of the youngest generation; Python: 700


@contextmanager
def _long_lived_frozen() -> Iterator[None]:
    """The rules, the index and the modules outlive the replay: the garbage collector's full passes need not
    walk them for every few thousand objects an issue allocates (~15% of a process's CPU at 10k history).
    Frozen before the workers fork, so they (and their copy-on-write pages) are left alone there too.

    The young objects are collected every YOUNG_OBJECTS instead of every 700: the results a worker sends (a
    chunk unpickled at once) and the index's growth were walked again and again while still alive (the
    main process's collections ~0.13 -> ~0.05 ms per issue on the bench corpus; the workers' hardly collect)."""
    first = gc.get_freeze_count() == 0
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_OBJECTS), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if first:
            gc.unfreeze()


_WORKER_RULES: RuleSet | None = None
_WORKER_SOURCES: SourceIndex | None = None
_WORKER_DOCS = False
_WORKER_ISSUES: list[IssueRecord] = []
CHUNK = 16        # issues per message from a worker
AHEAD = 4         # messages a worker may have waiting before it pauses (bounded memory)


# What the main process never reads of a report (the duplicate document and the comment's context are made in
# the worker): the parse's intermediate text, most of a pickled report. Results from workers carry the report
# without it.
_LEFT_IN_WORKER: dict[str, Any] = {"body": "", "sections": (), "description": "", "prose": None, "log_lines": (),
                                   "tracebacks": (), "cut_frames": (), "commands": (), "non_default_args": None}


def _analyse_one(issue: IssueRecord) -> tuple[Analysis, IssueDoc | None, dict[str, Any]]:
    assert _WORKER_RULES is not None
    analysis = analyse(issue.title, issue.body, _WORKER_RULES, _WORKER_SOURCES, issue.created_at)
    report, findings = analysis.report, analysis.findings
    doc = build_doc(report, findings) if _WORKER_DOCS else None
    context = comment_context(report, findings, report.needs_info, issue.number, prerender=True)
    return replace(analysis, report=replace(report, **_LEFT_IN_WORKER)), doc, context


def _work(w: int, jobs: int, out: Any) -> None:
    """Worker w of `jobs`: chunks w, w + jobs, w + 2·jobs, … of the issue list it inherited by forking."""
    try:
        for start in range(w * CHUNK, len(_WORKER_ISSUES), jobs * CHUNK):
            out.put([_analyse_one(issue) for issue in _WORKER_ISSUES[start:start + CHUNK]])
    except BaseException:  # any failure is handed to the main process, which raises it
        out.put(("failed", traceback.format_exc()))


def _chunk_from(inbox: Any, worker: Any) -> list[Any]:
    while True:
        try:
            item = inbox.get(timeout=1.0)
        except queue.Empty:
            if not worker.is_alive() and inbox.empty():
                raise RuntimeError(f"replay worker {worker.pid} stopped (exit code {worker.exitcode})") from None
            continue
        if isinstance(item, tuple):
            raise RuntimeError("replay worker failed:\n" + item[1])
        return item


def _in_order(n: int, inboxes: list[Any], workers: list[Any]) -> Iterator[Any]:
    """The results of items 0 .. n-1, which worker w sends by chunks w, w + jobs, … (see `_work`)."""
    for c in range(0, (n + CHUNK - 1) // CHUNK):
        w = c % len(workers)
        yield from _chunk_from(inboxes[w], workers[w])


@contextmanager
def _workers(target: Callable[[int, int, Any], None], jobs: int) -> Iterator[tuple[list[Any], list[Any]]]:
    """`jobs` forked processes running target(w, jobs, queue w), each with its own queue; stopped on the way out."""
    ctx = multiprocessing.get_context("fork")
    inboxes = [ctx.Queue(AHEAD) for _ in range(jobs)]
    workers = [ctx.Process(target=target, args=(w, jobs, inboxes[w]), daemon=True) for w in range(jobs)]
    try:
        for worker in workers:
            worker.start()
        yield inboxes, workers
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            if worker.pid is not None:
                worker.join()
        for inbox in inboxes:
            inbox.close()


# (issue, analysis, duplicate document, comment context) as `_analyses` yields them
Analysed = tuple[IssueRecord, Analysis, IssueDoc | None, dict[str, Any] | None]


@contextmanager
def _analyses(issues: Iterable[IssueRecord], rules: RuleSet, jobs: int, docs: bool = False,
              sources: SourceIndex | None = None) -> Iterator[Iterator[Analysed]]:
    """(issue, analysis, duplicate document, comment context) in order; with workers, each also builds the
    issue's comment context and, when `docs`, its duplicate document (else None: built when searched).

    Worker w analyses chunks w, w + jobs, … and sends each as one message on its own queue; this process reads
    the queues in turn, in its own thread (no pool threads competing with the duplicate search for the GIL)."""
    if jobs <= 1 or not _forks():
        yield ((issue, analyse(issue.title, issue.body, rules, sources, issue.created_at), None, None)
               for issue in issues)
        return
    global _WORKER_RULES, _WORKER_SOURCES, _WORKER_DOCS, _WORKER_ISSUES
    _WORKER_RULES = rules  # compiled RE2 patterns do not pickle: workers inherit them by forking
    _WORKER_SOURCES = sources
    _WORKER_DOCS = docs
    _WORKER_ISSUES = issues = list(issues)
    try:
        with _workers(_work, jobs) as (inboxes, workers):
            yield ((issue, *result) for issue, result in zip(issues, _in_order(len(issues), inboxes, workers),
                                                              strict=True))
    finally:
        _WORKER_RULES = None
        _WORKER_SOURCES = None
        _WORKER_DOCS = False
        _WORKER_ISSUES = []


# One issue of a window searched by replay's workers: the issue, its analysis, duplicate document and comment
# context, and the index's mark before it was added.
Searched = tuple[IssueRecord, Analysis, IssueDoc, dict[str, Any] | None, Mark]
_SEARCH_WINDOW: list[Searched] = []
_SEARCH_INDEX: AsOfIndexer | None = None


def _search_one(item: Searched) -> tuple[tuple[Candidate, ...], tuple[Candidate, ...], str | None]:
    assert _SEARCH_INDEX is not None
    issue, analysis, doc, context, mark = item
    prebuilt(analysis.report, analysis.findings, doc)
    decision = decide(issue.number, analysis, _SEARCH_INDEX.as_of(mark), context).decision
    return decision.duplicates, decision.related, decision.comment


def _search(w: int, jobs: int, out: Any) -> None:
    """Search worker w of `jobs`: chunks w, w + jobs, … of the window it inherited by forking."""
    gc.freeze()   # what it inherited stays shared: its collections leave those pages alone
    try:
        for start in range(w * CHUNK, len(_SEARCH_WINDOW), jobs * CHUNK):
            out.put([_search_one(item) for item in _SEARCH_WINDOW[start:start + CHUNK]])
    except BaseException:  # any failure is handed to the main process, which raises it
        out.put(("failed", traceback.format_exc()))


def _search_window(window: list[Searched], index: AsOfIndexer, jobs: int) -> Iterator[tuple[IssueRecord, Triage]]:
    global _SEARCH_WINDOW, _SEARCH_INDEX
    _SEARCH_WINDOW, _SEARCH_INDEX = window, index
    try:
        _search_one(window[0])   # what every search loads lazily (NumPy, the comment's templates): once, before forking
        with _workers(_search, jobs) as (inboxes, workers):
            for (issue, analysis, _, _, _), found in zip(window, _in_order(len(window), inboxes, workers),
                                                         strict=True):
                yield issue, decided(issue.number, analysis, *found)
    finally:
        _SEARCH_WINDOW, _SEARCH_INDEX = [], None


def progress_bar(total: int, stream: TextIO = sys.stderr) -> Callable[[int], None]:
    width = 30

    def show(n: int) -> None:
        if n != total and n % max(1, total // 200):
            return
        filled = width * n // max(total, 1)
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {n}/{total}")
        if n == total:
            stream.write("\n")
        stream.flush()

    return show


def write_jsonl(out: TextIO) -> Callable[[IssueRecord, Triage], None]:
    def write(issue: IssueRecord, result: Triage) -> None:
        out.write(json.dumps(result.as_dict(), ensure_ascii=False) + "\n")

    return write


def print_readable(out: TextIO) -> Callable[[IssueRecord, Triage], None]:
    def show(issue: IssueRecord, result: Triage) -> None:
        d, r = result.decision, result.report
        out.write(f"#{issue.number} {issue.title[:100]}\n")
        out.write(f"  kind={r.kind} vllm={r.environment.vllm_version or '?'} "
                  f"labels={', '.join(d.labels) or '-'}\n")
        if r.root_cause:
            inferred = " (type inferred from the raise site)" if r.root_cause.inferred else ""
            out.write(f"  error: {r.root_cause.type}: {r.root_cause.first_line[:120]}{inferred}\n")
        for s in r.sites[:2]:
            out.write(f"  raised at: {s.file}:{s.line} in {s.qualname} ({s.release})\n")
        for f in d.findings:
            out.write(f"  diagnosis: {f.rule} ({f.confidence:.2f}) {f.title}\n")
        for c in d.duplicates:
            out.write(f"  duplicate of #{c.number} ({c.score:.2f}): {c.reason}\n")
        if d.needs_info:
            out.write(f"  needs info: {', '.join(d.needs_info)}\n")
        out.write("\n")

    return show
