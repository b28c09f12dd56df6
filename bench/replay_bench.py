"""Replay with a large history: throughput, per-stage latency, duplicate query cost and peak RSS.

    .venv/bin/python -m bench.replay_bench [--sizes 10000 100000] [--queries 1000] [--jobs 2] [--json OUT]
                                           [--export FILE]

One in-memory duplicate index grows through the sizes (the synthetic corpus of bench/corpus.py, history built
with `--jobs` worker processes: parse, rules, document). At each size three sets of new issues (generated
after the history, each from its own seed, so they never duplicate each other) are run:
  * latency: the pipeline stage by stage (parse, rules, labels, duplicates, render, index add), timed per issue;
  * replay: `bot.replay.replay` sequentially, then with `--jobs` workers (wall time and this process's CPU time).
The queries stay in the index afterwards (3 × queries extra issues in the next size's history).
With `--export FILE` (an issue export kept on your machine: real reports), the three sets are its issues instead,
split in three (each issue replayed once, renumbered after the history): the synthetic corpus repeats its
vocabulary, which keeps RE2's lazily built automata warm, so on real reports the rules and labels stages cost more.
Every rule template is compiled before the first measurement, as in a long-running process.
Peak RSS is this process's high-water mark (getrusage) after the largest size, plus the index's own growth.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import json
import multiprocessing
import resource
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from bench.corpus import Generator
from bot.comment import render_comment
from bot.dupes import DuplicateIndex
from bot.dupes.document import build_doc
from bot.export import ExportProblem, IssueRecord, read_export
from bot.labels import topic_labels
from bot.replay import ReplaySummary, replay
from bot.report import parse
from bot.rules import RuleSet, load_rules

QUERY_BASE = 10_000_000    # query issue numbers start here (after any history)
CHUNK = 2000               # issues generated and handed to the workers at a time (bounded memory)

_RULES: RuleSet | None = None


def _doc(issue: dict[str, Any]) -> tuple:
    assert _RULES is not None
    report = parse(issue["title"], issue["body"])
    doc = build_doc(report, _RULES.evaluate(report))
    return issue["number"], issue["title"], issue["state"], issue["created_at"], doc


def _chunks(gen: Generator, n: int, start: int) -> Iterator[list[dict[str, Any]]]:
    it = gen.issues(n, start=start)
    while True:
        chunk = [x for _, x in zip(range(CHUNK), it, strict=False)]
        if not chunk:
            return
        yield chunk


def grow(index: DuplicateIndex, gen: Generator, rules: RuleSet, start: int, n: int, jobs: int) -> float:
    """Add issues start .. start+n-1 of the corpus to the index; returns seconds."""
    global _RULES
    _RULES = rules
    began = time.perf_counter()
    pool = multiprocessing.get_context("fork").Pool(jobs) if jobs > 1 else None
    try:
        with index.batch():
            for chunk in _chunks(gen, n, start):
                rows = pool.imap(_doc, chunk, chunksize=16) if pool is not None else map(_doc, chunk)
                for number, title, state, created, doc in rows:
                    index.add_doc(number, doc, title=title, state=state, created_at=created)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    return time.perf_counter() - began


def records(seed: int, n: int, start: int) -> list[IssueRecord]:
    return [IssueRecord(number=i["number"], title=i["title"], body=i["body"], created_at=i["created_at"],
                        state=i["state"], url=i["html_url"]) for i in Generator(seed).issues(n, start=start)]


def export_records(path: str) -> list[IssueRecord]:
    """The export's issues in creation order (unreadable lines skipped, as replay does)."""
    issues = [i for i in read_export(path) if not isinstance(i, ExportProblem)]
    return sorted(issues, key=lambda i: (i.created_at, i.number))


def export_sets(issues: list[IssueRecord], queries: int, start: int) -> list[list[IssueRecord]]:
    """Three disjoint sets of at most `queries` issues each (every third issue, so each spans the export's dates),
    renumbered from `start` so that they never collide with the history's numbers."""
    return [[replace(issue, number=start + k * queries + i) for i, issue in enumerate(issues[k::3][:queries])]
            for k in range(3)]


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))] if s else 0.0


STAGES = ("parse", "rules", "labels", "duplicates", "render", "add")


def latency(index: DuplicateIndex, rules: RuleSet, issues: list[IssueRecord]) -> dict[str, dict[str, float]]:
    """Per stage: wall-clock p50/p99/mean and CPU-time (this process) p50/p99/mean, in ms."""
    times: dict[str, list[float]] = {s: [] for s in (*STAGES, "total")}
    cpu: dict[str, list[float]] = {s: [] for s in (*STAGES, "total")}
    wall, proc = time.perf_counter, time.process_time
    for issue in issues:
        marks = [(wall(), proc())]
        report = parse(issue.title, issue.body)
        marks.append((wall(), proc()))
        findings = rules.evaluate(report)
        marks.append((wall(), proc()))
        topic_labels(report, findings)
        marks.append((wall(), proc()))
        dups = index.search(report, findings, exclude=issue.number)
        marks.append((wall(), proc()))
        render_comment(report, findings, dups, report.needs_info)
        marks.append((wall(), proc()))
        index.add(issue.number, report, findings, state=issue.state, created_at=issue.created_at)
        marks.append((wall(), proc()))
        for k, stage in enumerate(STAGES):
            times[stage].append(marks[k + 1][0] - marks[k][0])
            cpu[stage].append(marks[k + 1][1] - marks[k][1])
        times["total"].append(marks[-1][0] - marks[0][0])
        cpu["total"].append(marks[-1][1] - marks[0][1])
    return {s: {"p50_ms": pct(v, 0.5) * 1000, "p99_ms": pct(v, 0.99) * 1000, "mean_ms": sum(v) / len(v) * 1000,
                "cpu_p50_ms": pct(cpu[s], 0.5) * 1000, "cpu_p99_ms": pct(cpu[s], 0.99) * 1000,
                "cpu_mean_ms": sum(cpu[s]) / len(cpu[s]) * 1000}
            for s, v in times.items()}


def throughput(index: DuplicateIndex, rules: RuleSet, issues: list[IssueRecord], jobs: int) -> dict[str, float]:
    summary = ReplaySummary()
    kwargs = {"jobs": jobs} if "jobs" in inspect.signature(replay).parameters else {}
    if jobs > 1 and not kwargs:
        return {}
    cpu = time.process_time()
    replay(issues, rules, index, lambda issue, result: None, summary, **kwargs)
    cpu = time.process_time() - cpu
    return {"issues": summary.issues, "seconds": summary.seconds, "per_s": summary.rate,
            "main_cpu_per_s": summary.issues / cpu if cpu > 0 else 0.0}


def rss_mb() -> float:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def templates_compiled(rules: RuleSet) -> int:
    """Generate every rule template's code now, as a long-running process has: each costs ~0.45 ms once per
    process on its first render, which over a few hundred real reports (a third of the rules fire) would pass for
    the rules stage's cost per issue. Returns how many were compiled (0 for a tree without lazy templates)."""
    compiled = 0
    for rule in rules.rules:
        for template in (rule.explanation, rule.workaround, rule.duplicate_key):
            compile_ = getattr(template, "compile", None)
            if compile_ is not None:
                compile_()
                compiled += 1
    return compiled


def run(sizes: list[int], queries: int, jobs: int, seed: int = 0, log=print,
        export: str | None = None) -> dict[str, Any]:
    rules = load_rules()
    templates_compiled(rules)
    real = export_records(export) if export else None
    gen = Generator(seed)
    index = DuplicateIndex()
    gc.collect()
    base_rss = rss_mb()
    out: dict[str, Any] = {"queries": queries, "jobs": jobs, "seed": seed, "sizes": {}, "export": export}
    have = 0
    build_s = 0.0
    for size in sorted(sizes):
        build_s += grow(index, gen, rules, have + 1, size - have, jobs)
        have = size
        gc.collect()
        log(f"  history {size:,}: built in {build_s:.0f} s ({size / build_s:.0f} issues/s with {jobs} workers)")
        row: dict[str, Any] = {"history": len(index), "build_s": build_s}
        start = QUERY_BASE + size * 10
        sets = export_sets(real, queries, start) if real is not None else \
            [records(seed + size + k, queries, start + (k - 1) * queries) for k in (1, 2, 3)]
        row["latency"] = latency(index, rules, sets[0])
        row["replay_1"] = throughput(index, rules, sets[1], 1)
        row["replay_n"] = throughput(index, rules, sets[2], jobs)
        row["rss_mb"] = rss_mb()
        row["index_rss_mb"] = rss_mb() - base_rss
        out["sizes"][size] = row
        lat = row["latency"]
        log(f"  history {size:,}: replay {row['replay_1']['per_s']:.0f}/s (1 process), "
            f"{row['replay_n'].get('per_s', 0):.0f}/s ({jobs} workers); duplicates p99 "
            f"{lat['duplicates']['p99_ms']:.2f} ms; RSS {row['rss_mb']:.0f} MB")
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--export", help="replay this export's issues (real reports) as the new issues")
    a = ap.parse_args()
    result = run(a.sizes, a.queries, a.jobs, a.seed, log=lambda m: print(m, file=sys.stderr), export=a.export)
    text = json.dumps(result, indent=2)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
