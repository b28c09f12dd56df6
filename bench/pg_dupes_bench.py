"""Duplicate search with several replicas: the shared Postgres index vs per-replica copies vs Postgres full-text.

    TEST_DATABASE_URL=postgresql://… .venv/bin/python -m bench.pg_dupes_bench --size 5000 \\
        [--devset ISSUES.jsonl GOLD.jsonl SCORE.py]

1. Speed, on the synthetic corpus (bench/corpus.py): index build rate and search p50/p99 for the in-memory
   store and bot.dupes' SQLite file (what a per-replica copy would use) and for bot/stores/dupes/postgres.py (one
   index in Postgres that every replica reads and writes). A per-replica copy also pays a cold start:
   loading every document of the repository before its first search (the build time here).
2. Quality, on a labelled export (optional): the index over the Postgres store must score exactly like the
   in-memory one (same scorer), and Postgres full-text search (ts_rank_cd over title + body, OR of the
   query's lexemes, the best threshold for false-link <= 0.03) shows what the database's own ranking gives.
Scores come from the given score.py; the labelled files are only read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg

from bench.corpus import Generator
from bot.dupes import DuplicateIndex, MemoryIndexStore
from bot.dupes.document import build_doc
from bot.report import parse
from bot.stores.dupes.postgres import PostgresIndexes, migrate
from bot.stores.dupes.sqlite import SqliteIndexStore


def with_schema(url: str, schema: str) -> str:
    return url + ("&" if "?" in url else "?") + "options=" + quote(f"-csearch_path={schema}", safe="")


def fresh_schema(base: str) -> tuple[str, str]:
    schema = "bench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = with_schema(base, schema)

    migrate(url)
    return url, schema


def drop_schema(base: str, schema: str) -> None:
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def speed(base: str, size: int, queries: int) -> None:
    gen = Generator(7)
    t0 = time.perf_counter()
    docs = [(i, build_doc(parse(i["title"], i["body"]))) for i in gen.issues(size)]
    qdocs = [build_doc(parse(i["title"], i["body"])) for i in gen.issues(queries, start=size + 1)]
    print(f"corpus: {size} issues + {queries} queries parsed in {time.perf_counter() - t0:.1f}s")
    url, schema = fresh_schema(base)
    owner = PostgresIndexes(url)
    tmp = tempfile.mkdtemp()
    stores = {"memory (per-replica copy)": MemoryIndexStore(),
              "sqlite file (per-replica copy)": SqliteIndexStore(Path(tmp) / "dupes.sqlite3"),
              "postgres (shared)": owner.store("o/r")}
    try:
        for name, store in stores.items():
            index = DuplicateIndex(store)
            t0 = time.perf_counter()
            with index.batch():
                for issue, doc in docs:
                    index.add_doc(issue["number"], doc, title=issue["title"], created_at=issue["created_at"])
            build = time.perf_counter() - t0
            times = []
            for q in qdocs:
                t1 = time.perf_counter()
                index.search_doc(q, limit=3)
                times.append((time.perf_counter() - t1) * 1000)
            t2 = time.perf_counter()
            for issue, doc in docs[:50]:  # one issue edited: what each webhook's `add` costs outside a batch
                index.add_doc(issue["number"], doc, title=issue["title"], created_at=issue["created_at"])
            put_ms = (time.perf_counter() - t2) * 1000 / 50
            times.sort()
            print(f"{name:32s} build {size / build:7.0f} issues/s ({build:5.1f}s)  search p50 "
                  f"{statistics.median(times):6.1f} ms  p99 {times[int(len(times) * 0.99) - 1]:6.1f} ms  "
                  f"single add {put_ms:5.1f} ms")
    finally:
        owner.release()
        drop_schema(base, schema)


def score(score_py: str, issues: str, gold: str, rows: list[dict]) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    out = subprocess.run([sys.executable, score_py, "--issues", issues, "--gold", gold, "--pred", f.name, "--json"],
                         capture_output=True, text=True, check=True).stdout
    os.unlink(f.name)
    return json.loads(out)["dup"]


def quality(base: str, issues_path: str, gold: str, score_py: str) -> None:
    from bot.export import read_export
    from bot.rules import load_rules

    issues = sorted((i for i in read_export(issues_path) if hasattr(i, "number")),
                    key=lambda i: (i.created_at, i.number))
    rules = load_rules()
    url, schema = fresh_schema(base)
    owner = PostgresIndexes(url)
    try:
        memory, pg = DuplicateIndex(MemoryIndexStore()), DuplicateIndex(owner.store("o/r"))
        rows: dict[str, list[dict]] = {"memory": [], "postgres": []}
        for issue in issues:
            report = parse(issue.title, issue.body)
            findings = rules.evaluate(report)
            for name, index in (("memory", memory), ("postgres", pg)):
                found = index.search(report, findings, exclude=issue.number)
                rows[name].append({"number": issue.number, "duplicates": [{"number": c.number, "score": c.score}
                                                                          for c in found]})
                index.add(issue.number, report, findings, state=issue.state, created_at=issue.created_at)
        for name, r in rows.items():
            d = score(score_py, issues_path, gold, r)
            print(f"index over {name:8s}: R@3 {d['recall@3']}  false-link {d['false_link_rate']}  "
                  f"link-P {d['link_precision']}")
        print("identical rankings:", rows["memory"] == rows["postgres"])

        db = owner.connection()
        db.execute("CREATE TABLE fts (number BIGINT PRIMARY KEY, created TEXT, doc tsvector)")
        ranked: dict[int, list[tuple[float, int]]] = {}
        for issue in issues:
            text = f"{issue.title}\n{issue.title}\n{(issue.body or '')[:20000]}"
            lexemes = db.execute("SELECT array(SELECT lexeme FROM unnest(to_tsvector('english', %s)))",
                                 (text,)).fetchone()[0][:200]
            if lexemes:
                query = " | ".join("'" + lx.replace("'", "''") + "'" for lx in lexemes)
                hits = db.execute("SELECT ts_rank_cd(doc, to_tsquery('english', %s), 32) AS r, number FROM fts"
                                  " WHERE doc @@ to_tsquery('english', %s) ORDER BY r DESC LIMIT 3",
                                  (query, query)).fetchall()
                ranked[issue.number] = [(float(r), int(n)) for r, n in hits]
            db.execute("INSERT INTO fts VALUES (%s, %s, to_tsvector('english', %s))",
                       (issue.number, issue.created_at, text))
        best = None
        for threshold in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.99):
            r = [{"number": n, "duplicates": [{"number": m} for s, m in hits if s >= threshold]}
                 for n, hits in ranked.items()]
            d = score(score_py, issues_path, gold, r)
            print(f"postgres full-text, threshold {threshold}: R@3 {d['recall@3']}  false-link {d['false_link_rate']}")
            if (d["false_link_rate"] or 0) <= 0.03 and (best is None or d["recall@3"] > best[1]["recall@3"]):
                best = (threshold, d)
        if best is not None:
            print(f"postgres full-text, threshold {best[0]}: R@3 {best[1]['recall@3']}  "
                  f"false-link {best[1]['false_link_rate']}  link-P {best[1]['link_precision']}")
        else:
            print("postgres full-text: no threshold up to 0.99 keeps false-link <= 0.03")
    finally:
        owner.release()
        drop_schema(base, schema)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=5000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--devset", nargs=3, metavar=("ISSUES", "GOLD", "SCORE_PY"))
    args = ap.parse_args()
    base = os.environ.get("TEST_DATABASE_URL")
    if not base:
        sys.exit("set TEST_DATABASE_URL (bash .ci/start-postgres prints one)")
    if args.devset:
        quality(base, *args.devset)
    if args.size:
        speed(base, args.size, args.queries)


if __name__ == "__main__":
    main()
