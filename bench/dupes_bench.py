"""Benchmark of the duplicate index on the synthetic corpus (bench/corpus.py).

    .venv/bin/python -m bench.dupes_bench [--sizes 10000 100000] [--stores memory sqlite] [--queries 1000]

1. The corpus of each size is generated from the seed and parsed once; the per-issue documents are written
   to a temporary pickle stream (parse and document build are timed here).
2. For each store and size a fresh process reads that stream and builds the index in one batch
   (`index.batch()` + `add_doc`), then runs the queries: new issues generated after the corpus, each timed
   through `search_doc(build_doc(report))`, i.e. everything `search()` does after parsing.
   Peak RSS is that process's own (getrusage), so it covers the store plus the query reports.
Build rate = issues / (document build + store insert). Cost growth = p99 at the largest size / p99 at the
smallest. Wall-clock figures are given with CPU-time ones (time.process_time) beside them: on a shared
2-core machine other processes inflate wall time, CPU time shows the index's own cost.
Planted duplicates (same catalogue failure) give a sanity check of the links. The chronological view (replay
over a reused index: `search_doc(..., before=(created_at, number))`) is timed on 500 issues of the history.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import Generator
from bot.dupes import DuplicateIndex, MemoryIndexStore
from bot.dupes.document import IssueDoc, build_doc
from bot.report import parse
from bot.stores.dupes.sqlite import SqliteIndexStore

CHRONO_QUERIES = 500


def prepare(size: int, queries: int, seed: int, workdir: Path) -> dict:
    """Generate, parse and turn the corpus into documents; write them and the query reports to workdir."""
    gen = Generator(seed)
    parse_s = doc_s = doc_cpu = 0.0
    failures: dict[int, str | None] = {}
    groups: dict[int, str] = {}
    with open(workdir / f"docs-{size}.pickle", "wb") as f:
        for issue in gen.issues(size):
            t0 = time.perf_counter()
            report = parse(issue["title"], issue["body"])
            t1, c1 = time.perf_counter(), time.process_time()
            doc = build_doc(report)
            t2, c2 = time.perf_counter(), time.process_time()
            parse_s += t1 - t0
            doc_s += t2 - t1
            doc_cpu += c2 - c1
            failures[issue["number"]] = planted(issue)
            if issue["synthetic"].get("group"):
                groups[issue["number"]] = issue["synthetic"]["group"]
            pickle.dump((issue["number"], issue["title"], issue["state"], issue["created_at"], doc), f)
    query_reports = []
    for issue in gen.issues(queries, start=size + 1, failure_share=0.5, request_share=0.3):
        query_reports.append((issue["number"], planted(issue), issue["synthetic"].get("group"),
                              parse(issue["title"], issue["body"])))
    with open(workdir / f"queries-{size}.pickle", "wb") as f:
        pickle.dump({"queries": query_reports, "failures": failures, "groups": groups}, f)
    return {"size": size, "parse_per_s": size / parse_s, "doc_per_s": size / doc_s, "doc_seconds": doc_s,
            "doc_cpu": doc_cpu}


def planted(issue: dict) -> str | None:
    """What makes two synthetic issues duplicates: the same catalogue failure, or the same request."""
    syn = issue["synthetic"]
    if syn.get("failure"):
        return syn["failure"]
    return "request:" + syn["request"] if syn.get("request") else None


def run_child(store_kind: str, size: int, workdir: Path, doc_seconds: float, doc_cpu: float) -> dict:
    path = workdir / f"index-{size}.sqlite3"
    if path.exists():
        path.unlink()
    store = MemoryIndexStore() if store_kind == "memory" else SqliteIndexStore(path)
    index = DuplicateIndex(store)
    insert_s = insert_cpu = 0.0
    every = max(1, size // CHRONO_QUERIES)
    chrono: list[tuple[int, str, IssueDoc]] = []   # indexed issues queried as replay does over a full index
    with open(workdir / f"docs-{size}.pickle", "rb") as f, index.batch():
        while True:
            try:
                number, title, state, created, doc = pickle.load(f)
            except EOFError:
                break
            if number % every == 0:
                chrono.append((number, created, doc))
            t0, c0 = time.perf_counter(), time.process_time()
            index.add_doc(number, doc, title=title, state=state, created_at=created)
            insert_s += time.perf_counter() - t0
            insert_cpu += time.process_time() - c0
    with open(workdir / f"queries-{size}.pickle", "rb") as f:
        data = pickle.load(f)
    failures, groups = data["failures"], data["groups"]
    latencies = []
    cpu = []
    n_planted = linked = correct = links = 0
    req = {"planted": 0, "linked": 0, "links": 0, "correct": 0, "near_miss_links": 0, "queries": 0}
    for number, failure, group, report in data["queries"]:
        t0, c0 = time.perf_counter(), time.process_time()
        found = index.search_doc(build_doc(report), exclude=number)
        latencies.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if failure is not None:
            n_planted += 1
            linked += bool(found)
        links += len(found)
        good = sum(1 for s in found if failure is not None and failures.get(s.candidate.number) == failure)
        correct += good
        if group is not None:   # a request or a question
            req["queries"] += 1
            req["planted"] += failure is not None
            req["linked"] += failure is not None and bool(found)
            req["links"] += len(found)
            req["correct"] += good
            req["near_miss_links"] += sum(1 for s in found if groups.get(s.candidate.number) == group
                                          and failures.get(s.candidate.number) != failure)
    # the chronological view: an issue of the history searched among the issues created before it only
    chrono_wall, chrono_cpu = [], []
    for number, created, doc in chrono:
        t0, c0 = time.perf_counter(), time.process_time()
        index.search_doc(doc, exclude=number, before=(created, number))
        chrono_wall.append(time.perf_counter() - t0)
        chrono_cpu.append(time.process_time() - c0)
    for values in (latencies, cpu, chrono_wall, chrono_cpu):
        values.sort()

    def pct(p: float, values: list[float] = latencies) -> float:
        return values[min(len(values) - 1, int(p * len(values)))] * 1000

    disk = path.stat().st_size + sum(p.stat().st_size for p in workdir.glob(f"index-{size}.sqlite3-*")) \
        if store_kind == "sqlite" else 0
    index.close()
    return {
        "store": store_kind, "size": size, "build_per_s": size / (doc_seconds + insert_s),
        "insert_per_s": size / insert_s, "p50_ms": pct(0.50), "p95_ms": pct(0.95), "p99_ms": pct(0.99),
        "max_ms": latencies[-1] * 1000, "cpu_build_per_s": size / (doc_cpu + insert_cpu),
        "cpu_p50_ms": pct(0.50, cpu), "cpu_p99_ms": pct(0.99, cpu),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "disk_mb": disk / 2**20, "planted_linked": linked / n_planted if n_planted else None,
        "request_linked": req["linked"] / req["planted"] if req["planted"] else None,
        "request_precision": req["correct"] / req["links"] if req["links"] else None,
        "request_near_miss_links": req["near_miss_links"], "request_queries": req["queries"],
        "link_precision": correct / links if links else None, "queries": len(latencies),
        "chrono_p50_ms": pct(0.50, chrono_wall), "chrono_p99_ms": pct(0.99, chrono_wall),
        "chrono_cpu_p99_ms": pct(0.99, chrono_cpu),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--stores", nargs="+", default=["memory", "sqlite"], choices=["memory", "sqlite"])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        store, size, workdir, doc_s, doc_cpu = a.child
        print(json.dumps(run_child(store, int(size), Path(workdir), float(doc_s), float(doc_cpu))))
        return

    results = []
    with tempfile.TemporaryDirectory(prefix="dupes-bench-") as tmp:
        workdir = Path(tmp)
        prepared = {}
        for size in a.sizes:
            prepared[size] = prepare(size, a.queries, a.seed, workdir)
            p = prepared[size]
            print(f"corpus {size}: parse {p['parse_per_s']:.0f} issues/s, document {p['doc_per_s']:.0f} issues/s",
                  file=sys.stderr)
        for store in a.stores:
            for size in a.sizes:
                p = prepared[size]
                child = [store, str(size), tmp, str(p["doc_seconds"]), str(p["doc_cpu"])]
                out = subprocess.run([sys.executable, "-m", "bench.dupes_bench", "--child", *child], check=True,
                                     capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
                row = json.loads(out.stdout.strip().splitlines()[-1])
                row["parse_per_s"] = prepared[size]["parse_per_s"]
                results.append(row)
                print(f"  {store:6s} {size:>7d}: build {row['build_per_s']:.0f}/s, p99 {row['p99_ms']:.2f} ms",
                      file=sys.stderr)
    print(table(results))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=2))


def table(rows: list[dict]) -> str:
    lines = ["| store | issues | build issues/s (CPU) | query p50 / p95 / p99 ms | p99 CPU ms | peak RSS MB | "
             "disk MB | planted dups linked | link precision |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['store']} | {r['size']:,} | {r['build_per_s']:,.0f} ({r['cpu_build_per_s']:,.0f}) | "
                     f"{r['p50_ms']:.2f} / {r['p95_ms']:.2f} / {r['p99_ms']:.2f} | {r['cpu_p99_ms']:.2f} | "
                     f"{r['peak_rss_mb']:.0f} | {r['disk_mb']:.0f} | {r['planted_linked']:.2f} | "
                     f"{r['link_precision']:.2f} |")
    lines.append("\nrequests and questions among the queries (planted: an earlier report of the same request; "
                 "near-miss links: to the same group, another request)")
    for r in rows:
        lines.append(f"  {r['store']} {r['size']:,}: {r['request_queries']} queries, planted linked "
                     f"{r['request_linked'] or 0:.2f}, link precision {r['request_precision'] or 0:.2f}, "
                     f"near-miss links {r['request_near_miss_links']}")
    lines.append("\nchronological view (an indexed issue searched among earlier issues only, `before=`, as replay "
                 "over a reused index): p50 / p99 ms wall (p99 CPU)")
    for r in rows:
        lines.append(f"  {r['store']} {r['size']:,}: {r['chrono_p50_ms']:.2f} / {r['chrono_p99_ms']:.2f} "
                     f"({r['chrono_cpu_p99_ms']:.2f})")
    by_store: dict[str, list[dict]] = {}
    for r in rows:
        by_store.setdefault(r["store"], []).append(r)
    for store, rs in by_store.items():
        rs.sort(key=lambda r: r["size"])
        if len(rs) > 1:
            lines.append(f"\n{store}: p99 growth {rs[0]['size']:,} -> {rs[-1]['size']:,} issues: "
                         f"{rs[-1]['p99_ms'] / rs[0]['p99_ms']:.2f}x")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
