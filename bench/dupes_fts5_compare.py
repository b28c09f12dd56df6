"""SQLite FTS5 + bm25() against the index's own inverted index in SQLite tables, on the synthetic corpus.

    .venv/bin/python -m bench.dupes_fts5_compare [--sizes 10000 100000] [--queries 1000] [--variants ...]

Variants (each built and queried in its own process, so peak RSS is its own):
  tables     the current store (bot/stores/dupes/sqlite.py SqliteIndexStore): `terms` / `postings` / `keys` / `issues`;
             stage 1 reads the postings of the query's rarest terms within a budget of 1,200 postings.
  fts5       an FTS5 table over the same fields, already tokenised by bot/dupes/text.py (title, error, body,
             flag; `detail=full`), column weights 3 / 2 / 1 / 1 in `bm25()`; stage 1 is
             `MATCH '<terms OR-ed>' ORDER BY rank LIMIT 16` over the same terms `tables` reads (the rarest,
             within the 1,200-posting budget); document frequencies come from an `fts5vocab` table.
             Exact keys (`keys`) and stage 2 (the existing scorer over the stored vectors) are as in `tables`.
  fts5-all   as fts5, but MATCH over every query term (FTS5 ranks the whole match set, no budget).
  fts5-col   as fts5 with `detail=column` (no positions: smaller, bm25 sees at most 1 hit per column).
  fts5-df    as fts5, with document frequencies from a `terms` table kept up to date on insert (fts5vocab
             counts a term's documents by reading its whole doclist): the MATCH cost alone.

Build = document build (parse excluded, the same for every variant) + inserts in one batch, then a WAL
checkpoint; disk = the database file after it. Queries are new issues generated after the corpus, each timed
through `search_doc(build_doc(report))`. Wall and CPU (time.process_time) time are both reported: the machine
is shared, CPU time is the variant's own cost. Top-k overlap: per query, |A ∩ B| / |A| between the 16 term
candidates of `tables` (A) and of the variant (B), and the same for the linked top 3 (queries where `tables`
links something). Planted duplicates (the same catalogue failure) give recall / precision of the links.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.corpus import Generator
from bot.dupes import DuplicateIndex, StoredIssue
from bot.dupes.document import IssueDoc, build_doc, field_tokens
from bot.dupes.index import RESCORE, budgeted_terms
from bot.report import parse
from bot.stores.dupes.sqlite import SqliteIndexStore

FIELD_NAMES = ("title", "error", "body", "flag")
VARIANTS = ("tables", "fts5", "fts5-all", "fts5-col", "fts5-df")


# -- the FTS5 variant -------------------------------------------------------------------------------------
class Fts5Store(SqliteIndexStore):
    """SqliteIndexStore's `issues` and `keys` tables plus an FTS5 table instead of `terms` / `postings`."""

    def __init__(self, path: str | Path, detail: str = "full", own_df: bool = False) -> None:
        super().__init__(path)
        self.own_df = own_df
        self._db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, error, body, flag, "
            f"tokenize=\"unicode61 tokenchars '_'\", detail={detail})")
        self._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS fts_vocab USING fts5vocab(fts, 'row')")
        self._db.execute("INSERT INTO fts(fts, rank) VALUES ('rank', 'bm25(3.0, 2.0, 1.0, 1.0)')")
        self.texts: dict[int, tuple[str, ...]] = {}   # number -> field texts, until written
        self.df_cpu = self.match_cpu = 0.0             # where a query's time goes

    def _write(self, issues: list[StoredIssue], fresh: bool = False) -> None:
        db = self._db
        if not fresh:
            for issue in issues:
                if self._exists(issue.number):
                    db.execute("DELETE FROM fts WHERE rowid = ?", (issue.number,))
                    db.execute("DELETE FROM keys WHERE number = ?", (issue.number,))
                elif not self._batching:
                    self._count += 1
        db.executemany("INSERT OR REPLACE INTO issues VALUES (?,?,?,?,?,?,?,?,?)", [
            (i.number, i.title, i.state, i.url, i.created_at, i.duplicate_of,
             json.dumps(i.vector, separators=(",", ":")), json.dumps(i.meta, separators=(",", ":")),
             json.dumps(list(i.keys))) for i in issues])
        db.executemany("INSERT OR IGNORE INTO keys VALUES (?,?)", [(k, i.number) for i in issues for k in i.keys])
        db.executemany("INSERT INTO fts(rowid, title, error, body, flag) VALUES (?,?,?,?,?)",
                       [(i.number, *self.texts.pop(i.number)) for i in issues])
        if self.own_df:
            df = Counter(t for i in issues for t in i.vector)
            db.executemany("INSERT INTO terms VALUES (?,?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
                           df.items())

    def df(self, terms: Sequence[str]) -> dict[str, int]:
        if self.own_df:
            return super().df(terms)
        self._flush()
        c0 = time.process_time()
        out: dict[str, int] = {}
        for chunk in self._chunks(list(terms)):
            marks = ",".join("?" * len(chunk))
            out.update(self._db.execute(f"SELECT term, doc FROM fts_vocab WHERE term IN ({marks})", tuple(chunk)))
        self.df_cpu += time.process_time() - c0
        return out

    def search_terms(self, terms: list[str], limit: int) -> list[tuple[int, float]]:
        self._flush()
        if not terms:
            return []
        match = " OR ".join(f'"{t}"' for t in terms)   # terms are [a-z0-9_] (bot/dupes/text.py)
        c0 = time.process_time()
        rows = self._db.execute("SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?",
                                (match, limit)).fetchall()
        self.match_cpu += time.process_time() - c0
        return rows


class RecordingIndex(DuplicateIndex):
    """Remembers the term candidates of the last query (the RESCORE best of stage 1)."""

    all_terms = False
    last_terms: list[int] = []

    def _term_candidates(self, doc: IssueDoc, dfs: dict[str, int], idfs: dict[str, float],
                         before: tuple[str, int] | None = None) -> dict[int, float]:
        if isinstance(self.store, Fts5Store):
            present = sorted((t for t in doc.vector if t in dfs), key=lambda t: (dfs[t], t))
            terms = present if self.all_terms else budgeted_terms(present, dfs)
            partial = {n: -rank for n, rank in self.store.search_terms(terms, RESCORE)}
        else:
            partial = super()._term_candidates(doc, dfs, idfs, before)
        self.last_terms = sorted(partial, key=lambda n: (-partial[n], n))[:RESCORE]
        return partial


# -- corpus -----------------------------------------------------------------------------------------------
def prepare(size: int, queries: int, seed: int, workdir: Path) -> dict[str, float]:
    gen = Generator(seed)
    doc_s = doc_cpu = 0.0
    failures: dict[int, str | None] = {}
    with open(workdir / f"docs-{size}.pickle", "wb") as f:
        for issue in gen.issues(size):
            report = parse(issue["title"], issue["body"])
            t0, c0 = time.perf_counter(), time.process_time()
            doc = build_doc(report)
            doc_s += time.perf_counter() - t0
            doc_cpu += time.process_time() - c0
            # the tokens build_doc made; recomputed here, outside the timing
            texts = tuple(" ".join(toks) for toks in field_tokens(report).values())
            failures[issue["number"]] = issue["synthetic"]["failure"]
            pickle.dump((issue["number"], issue["title"], issue["state"], issue["created_at"], doc, texts), f)
    query_reports = [(i["number"], i["synthetic"]["failure"], parse(i["title"], i["body"]))
                     for i in gen.issues(queries, start=size + 1, failure_share=0.6)]
    with open(workdir / f"queries-{size}.pickle", "wb") as f:
        pickle.dump({"queries": query_reports, "failures": failures}, f)
    return {"doc_seconds": doc_s, "doc_cpu": doc_cpu}


# -- one variant, one size (child process) ----------------------------------------------------------------
def run_child(variant: str, size: int, workdir: Path, doc_seconds: float, doc_cpu: float) -> dict[str, Any]:
    path = workdir / f"{variant}-{size}.sqlite3"
    for old in workdir.glob(f"{variant}-{size}.sqlite3*"):
        old.unlink()
    store = SqliteIndexStore(path) if variant == "tables" else \
        Fts5Store(path, detail="column" if variant == "fts5-col" else "full", own_df=variant == "fts5-df")
    index = RecordingIndex(store)
    index.all_terms = variant == "fts5-all"
    insert_s = insert_cpu = 0.0
    with open(workdir / f"docs-{size}.pickle", "rb") as f:
        t0, c0 = time.perf_counter(), time.process_time()
        with index.batch():
            while True:
                try:
                    number, title, state, created, doc, texts = pickle.load(f)
                except EOFError:
                    break
                if isinstance(store, Fts5Store):
                    store.texts[number] = texts
                index.add_doc(number, doc, title=title, state=state, created_at=created)
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        insert_s = time.perf_counter() - t0
        insert_cpu = time.process_time() - c0
    disk = sum(p.stat().st_size for p in workdir.glob(f"{variant}-{size}.sqlite3*"))

    with open(workdir / f"queries-{size}.pickle", "rb") as f:
        data = pickle.load(f)
    failures = data["failures"]
    wall: list[float] = []
    cpu: list[float] = []
    per_query = []
    planted = linked = correct = links = 0
    for number, failure, report in data["queries"]:
        t0, c0 = time.perf_counter(), time.process_time()
        found = index.search_doc(build_doc(report), exclude=number)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        per_query.append({"terms": index.last_terms, "linked": [s.candidate.number for s in found]})
        if failure is not None:
            planted += 1
            linked += bool(found)
        links += len(found)
        correct += sum(1 for s in found if failure is not None and failures.get(s.candidate.number) == failure)
    n_queries = len(data["queries"])
    df_ms = getattr(store, "df_cpu", 0.0) * 1000 / n_queries
    match_ms = getattr(store, "match_cpu", 0.0) * 1000 / n_queries
    index.close()
    (workdir / f"{variant}-{size}.json").write_text(json.dumps(per_query))
    wall.sort()
    cpu.sort()

    def pct(p: float, values: list[float]) -> float:
        return values[min(len(values) - 1, int(p * len(values)))] * 1000

    return {
        "variant": variant, "size": size,
        "build_per_s": size / (doc_seconds + insert_s), "cpu_build_per_s": size / (doc_cpu + insert_cpu),
        "p50_ms": pct(0.50, wall), "p99_ms": pct(0.99, wall), "cpu_p50_ms": pct(0.50, cpu),
        "cpu_p99_ms": pct(0.99, cpu), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "disk_mb": disk / 2**20, "planted_linked": linked / planted if planted else 0.0,
        "link_precision": correct / links if links else 0.0, "df_cpu_ms": df_ms, "match_cpu_ms": match_ms,
    }


def overlap(workdir: Path, variant: str, size: int) -> tuple[float, float]:
    """Mean share of `tables`' term candidates / linked top 3 that the variant also finds."""
    base = json.loads((workdir / f"tables-{size}.json").read_text())
    other = json.loads((workdir / f"{variant}-{size}.json").read_text())
    pairs = list(zip(base, other, strict=True))
    terms = [len(set(a["terms"]) & set(b["terms"])) / len(a["terms"]) for a, b in pairs if a["terms"]]
    top = [len(set(a["linked"]) & set(b["linked"])) / len(a["linked"]) for a, b in pairs if a["linked"]]
    return (sum(terms) / len(terms) if terms else 1.0), (sum(top) / len(top) if top else 1.0)


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| variant | issues | build issues/s wall (CPU) | query p50 / p99 ms wall | query p50 / p99 ms CPU | "
             "p99 CPU growth | peak RSS MB | disk MB | planted dups linked | link precision | "
             "overlap: term candidates / linked top 3 | mean CPU ms: fts5vocab df / MATCH |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    smallest = {}
    for r in sorted(rows, key=lambda r: r["size"]):
        smallest.setdefault(r["variant"], r)
    for r in rows:
        first = smallest[r["variant"]]
        growth = f"×{r['cpu_p99_ms'] / first['cpu_p99_ms']:.2f}" if first is not r else "–"
        fts = r["variant"] != "tables"
        ov = f"{r['overlap_terms']:.2f} / {r['overlap_linked']:.2f}" if fts else "–"
        split = f"{r.get('df_cpu_ms', 0):.2f} / {r.get('match_cpu_ms', 0):.2f}" if fts else "–"
        lines.append(
            f"| {r['variant']} | {r['size']:,} | {r['build_per_s']:,.0f} ({r['cpu_build_per_s']:,.0f}) | "
            f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f} | {r['cpu_p50_ms']:.2f} / {r['cpu_p99_ms']:.2f} | {growth} | "
            f"{r['peak_rss_mb']:.0f} | {r['disk_mb']:.0f} | {r['planted_linked']:.2f} | "
            f"{r['link_precision']:.2f} | {ov} | {split} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        variant, size, workdir, doc_s, doc_cpu = a.child
        print(json.dumps(run_child(variant, int(size), Path(workdir), float(doc_s), float(doc_cpu))))
        return
    print(f"sqlite {sqlite3.sqlite_version}", file=sys.stderr)
    variants = ["tables", *[v for v in a.variants if v != "tables"]]
    rows = []
    with tempfile.TemporaryDirectory(prefix="dupes-fts5-") as tmp:
        workdir = Path(tmp)
        for size in a.sizes:
            prep = prepare(size, a.queries, a.seed, workdir)
            print(f"corpus {size} ready", file=sys.stderr, flush=True)
            for variant in variants:
                child = [variant, str(size), tmp, str(prep["doc_seconds"]), str(prep["doc_cpu"])]
                out = subprocess.run([sys.executable, "-m", "bench.dupes_fts5_compare", "--child", *child],
                                     check=True, capture_output=True, text=True,
                                     env={**os.environ, "PYTHONHASHSEED": "0"})
                row = json.loads(out.stdout.strip().splitlines()[-1])
                if variant != "tables":
                    row["overlap_terms"], row["overlap_linked"] = overlap(workdir, variant, size)
                rows.append(row)
                print(f"  {variant:8s} {size:>7d}: build {row['cpu_build_per_s']:.0f}/s CPU, "
                      f"p99 {row['cpu_p99_ms']:.2f} ms CPU, disk {row['disk_mb']:.0f} MB, mean CPU ms in "
                      f"fts5vocab df {row['df_cpu_ms']:.2f} / MATCH {row['match_cpu_ms']:.2f}",
                      file=sys.stderr, flush=True)
            for p in workdir.glob(f"*-{size}.sqlite3*"):
                p.unlink()
    print(table(rows))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
