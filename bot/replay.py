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
from bot.decision import Finding
from bot.dupes.document import IssueDoc, build_doc, prebuilt
from bot.export import ExportProblem, IssueRecord, read_export
from bot.report import Report
from bot.rules import RuleSet
from bot.sources.index import SourceIndex
from bot.triage import Analysis, SimilarIssues, Triage, analyse, decide


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
    many worker processes, in order, and so does the comment's context; the duplicate search and the comment
    (which need the history) stay in this process. Same output; the reports handed to `on_result` then lack the
    parse's intermediate text (body, sections, description, prose, log lines, tracebacks, commands)."""
    start = time.perf_counter()
    with _long_lived_frozen(), _analyses(issues, rules, jobs, docs=index is not None, sources=sources) as analysed:
        for n, (issue, analysis, context) in enumerate(analysed, 1):
            result = decide(issue.number, analysis, index, context)
            on_result(issue, result)
            summary.add(result)
            if index is not None:
                index.add(issue.number, result.report, result.decision.findings, state=issue.state,
                          created_at=issue.created_at, url=issue.url)
            if progress is not None:
                progress(n)
    summary.seconds = time.perf_counter() - start
    return summary


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


Analysed = tuple[Analysis, IssueDoc | None, dict[str, Any]]   # what a worker sends per issue


# What the main process never reads of a report (the duplicate document and the comment's context are made in
# the worker): the parse's intermediate text, most of a pickled report. Results from workers carry the report
# without it.
_LEFT_IN_WORKER: dict[str, Any] = {"body": "", "sections": (), "description": "", "prose": None, "log_lines": (),
                                   "tracebacks": (), "cut_frames": (), "commands": (), "non_default_args": None}


def _analyse_one(issue: IssueRecord) -> Analysed:
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


def _chunk_from(inbox: Any, worker: Any) -> list[Analysed]:
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


def _in_order(issues: list[IssueRecord], inboxes: list[Any],
              workers: list[Any]) -> Iterator[tuple[IssueRecord, Analysis, dict[str, Any] | None]]:
    for c, start in enumerate(range(0, len(issues), CHUNK)):
        w = c % len(workers)
        batch = _chunk_from(inboxes[w], workers[w])
        for issue, result in zip(issues[start:start + CHUNK], batch, strict=True):
            yield _received(issue, result)


def _received(issue: IssueRecord, result: Analysed) -> tuple[IssueRecord, Analysis, dict[str, Any] | None]:
    analysis, doc, context = result
    if doc is not None:
        prebuilt(analysis.report, analysis.findings, doc)
    return issue, analysis, context


@contextmanager
def _analyses(issues: Iterable[IssueRecord], rules: RuleSet, jobs: int, docs: bool = False,
              sources: SourceIndex | None = None
              ) -> Iterator[Iterator[tuple[IssueRecord, Analysis, dict[str, Any] | None]]]:
    """(issue, analysis, comment context) in order; with workers, each also builds the issue's comment context
    and, when `docs`, its duplicate document (without workers, decide builds the comment context).

    Worker w analyses chunks w, w + jobs, … and sends each as one message on its own queue; this process reads
    the queues in turn, in its own thread (no pool threads competing with the duplicate search for the GIL)."""
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield ((issue, analyse(issue.title, issue.body, rules, sources, issue.created_at), None) for issue in issues)
        return
    global _WORKER_RULES, _WORKER_SOURCES, _WORKER_DOCS, _WORKER_ISSUES
    _WORKER_RULES = rules  # compiled RE2 patterns do not pickle: workers inherit them by forking
    _WORKER_SOURCES = sources
    _WORKER_DOCS = docs
    _WORKER_ISSUES = issues = list(issues)
    ctx = multiprocessing.get_context("fork")
    inboxes = [ctx.Queue(AHEAD) for _ in range(jobs)]
    workers = [ctx.Process(target=_work, args=(w, jobs, inboxes[w]), daemon=True) for w in range(jobs)]
    try:
        for worker in workers:
            worker.start()
        yield _in_order(issues, inboxes, workers)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
            if worker.pid is not None:
                worker.join()
        for inbox in inboxes:
            inbox.close()
        _WORKER_RULES = None
        _WORKER_SOURCES = None
        _WORKER_DOCS = False
        _WORKER_ISSUES = []


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
