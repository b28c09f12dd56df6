"""Every benchmark in one command; prints the results table and writes it to bench/results/latest.md.

    .venv/bin/python -m bench                 # full run: 10k and 100k history (~15 min on 2 cores)
    .venv/bin/python -m bench --quick         # smoke run (< 60 s): small sizes, fewer deliveries
    .venv/bin/python -m bench --sizes 10000   # choose the history sizes
    .venv/bin/python -m bench --only replay worst
    .venv/bin/python -m bench --baseline /tmp/old   # also run the replay section on an older tree, same corpus
    .venv/bin/python -m bench --only replay --export issues.jsonl   # real reports as the new issues

Sections: replay (bench/replay_bench.py: throughput, per-stage latency, duplicate query cost, RSS), app
(bench/app_bench.py: webhook ack at 50/200 concurrent deliveries, end to end on the fake GitHub), worst
(bench/worst_bench.py), components (the per-module benches: environment, logs, rules, dupes with SQLite).
`--baseline DIR` takes a checkout of an older commit (`git archive <commit> | tar -x -C DIR`) and imports
its `bot` package for a second replay run, so before/after ratios come from one run on one machine.
`--export FILE` replays an issue export's reports (real ones, kept on your machine) as the new issues over the
synthetic history: the synthetic corpus understates the rules and labels stages on real text.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SECTIONS = ("replay", "app", "worst", "components")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_replay(sizes: list[int], queries: int, jobs: int, seed: int, tree: str | None = None,
               export: str | None = None) -> dict[str, Any]:
    """bench.replay_bench in a fresh process (its own peak RSS), importing `bot` from `tree` when given."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    code = ("import sys\n"
            + (f"sys.path.insert(0, {tree!r})\nimport bot\nsys.path.insert(0, {str(ROOT)!r})\n" if tree else "")
            + "import json\nfrom bench.replay_bench import run\n"
            f"r = run({sizes!r}, {queries}, {jobs}, {seed}, log=lambda m: print(m, file=sys.stderr, flush=True), "
            f"export={export!r})\n"
            f"r['bot'] = bot.__file__ if 'bot' in dir() else None\n"
            f"open({out!r}, 'w').write(json.dumps(r))\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONHASHSEED": "0"})
    result = json.loads(Path(out).read_text())
    os.unlink(out)
    return {"sizes": {int(k): v for k, v in result["sizes"].items()},
            **{k: v for k, v in result.items() if k != "sizes"}}


def run_components(quick: bool, sizes: list[int]) -> dict[str, str]:
    """The per-module benchmarks' own tables, verbatim."""
    commands = {
        "environment parser (bench/environment_bench.py)": ["bench/environment_bench.py", "--runs", "1"],
        "log / traceback / command parser (bench/logs_bench.py)": ["bench/logs_bench.py"],
        "rules engine (bench/rules_bench.py)": ["bench/rules_bench.py", "--runs", "5" if quick else "30"],
        "duplicate index, memory and SQLite stores (bench/dupes_bench.py)":
            ["-m", "bench.dupes_bench", "--sizes", str(min(sizes)), "--queries", "200" if quick else "1000"],
    }
    out = {}
    for name, args in commands.items():
        log(f"components: {name}")
        done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=3600)
        out[name] = (done.stdout.strip() or done.stderr.strip()[-2000:])
    return out


def _ms(x: float) -> str:
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def _goal(ok: bool | None) -> str:
    return "" if ok is None else (" ✅" if ok else " ❌")


def table(r: dict[str, Any]) -> str:
    lines = ["| measure | goal | result |", "|---|---|---|"]
    rep = r.get("replay")
    if rep:
        sizes = sorted(rep["sizes"])
        for size in sizes:
            row = rep["sizes"][size]
            goal = 500 if size <= 10_000 else 200
            best = max(row["replay_1"]["per_s"], row["replay_n"].get("per_s", 0))
            cpu_rate = 1000 / row["latency"]["total"]["cpu_mean_ms"] if "cpu_mean_ms" in row["latency"]["total"] else 0
            lines.append(f"| replay throughput, {size:,} history (1 process / {rep['jobs']} workers, wall) "
                         f"| ≥ {goal}/s "
                         f"| {row['replay_1']['per_s']:.0f} / {row['replay_n'].get('per_s', 0):.0f} issues/s"
                         f"{_goal(best >= goal)}; CPU-bound rate of one process {cpu_rate:.0f}/s |")
        for size in sizes:
            lat = rep["sizes"][size]["latency"]
            parts = " · ".join(f"{s} {_ms(lat[s]['p50_ms'])} / {_ms(lat[s]['p99_ms'])}"
                               for s in ("parse", "rules", "labels", "duplicates", "render"))
            lines.append(f"| per-issue latency p50 / p99 ms (wall), {size:,} history | — | {parts}; "
                         f"total {_ms(lat['total']['p50_ms'])} / {_ms(lat['total']['p99_ms'])} |")
            if "cpu_p50_ms" in lat["total"]:
                parts = " · ".join(f"{s} {_ms(lat[s]['cpu_p50_ms'])} / {_ms(lat[s]['cpu_p99_ms'])}"
                                   for s in ("parse", "rules", "labels", "duplicates", "render"))
                lines.append(f"| … CPU time p50 / p99 ms, {size:,} history | — | {parts}; "
                             f"total {_ms(lat['total']['cpu_p50_ms'])} / {_ms(lat['total']['cpu_p99_ms'])} |")
        cpu_key = "cpu_p99_ms" if "cpu_p99_ms" in rep["sizes"][sizes[0]]["latency"]["duplicates"] else "p99_ms"
        dc = [rep["sizes"][s]["latency"]["duplicates"][cpu_key] for s in sizes]
        lines.append(f"| duplicate query p99, CPU time ({' / '.join(f'{s:,}' for s in sizes)}), growth | ≤ 10 ms, ≤ 2× "
                     f"| {' / '.join(_ms(v) + ' ms' for v in dc)}"
                     + (f", {dc[-1] / dc[0]:.2f}×" if len(dc) > 1 and dc[0] > 0 else "")
                     + f"{_goal(dc[-1] <= 10 and (dc[-1] / dc[0] if dc[0] > 0 else 1) <= 2)} |")
        d = [(s, rep["sizes"][s]["latency"]["duplicates"]["p99_ms"]) for s in sizes]
        growth = d[-1][1] / d[0][1] if len(d) > 1 and d[0][1] > 0 else None
        lines.append(f"| duplicate query p99, wall ({' / '.join(f'{s:,}' for s, _ in d)}), growth | ≤ 10 ms at 100k, "
                     f"≤ 2× | {' / '.join(_ms(v) + ' ms' for _, v in d)}"
                     + (f", {growth:.2f}×" if growth else "") + f"{_goal(d[-1][1] <= 10 and (growth or 1) <= 2)} |")
        big = sizes[-1]
        lines.append(f"| peak RSS with {rep['sizes'][big]['history']:,} issues indexed (index alone) | ≤ 400 MB "
                     f"| {rep['peak_rss_mb']:.0f} MB ({rep['sizes'][big]['index_rss_mb']:.0f} MB)"
                     f"{_goal(rep['peak_rss_mb'] <= 400)} |")
    app = r.get("app")
    if app:
        for a in app["ack"]:
            client = f", {a['client']}" if "client" in a else ""
            rate = f", {a['per_second']:,.0f}/s" if "per_second" in a else ""
            processes = a.get("processes", 1)
            how = "one process" if processes == 1 else f"{processes} intake processes"
            lines.append(f"| webhook ack p50 / p99, {a['concurrency']} concurrent signed deliveries "
                         f"({a['deliveries']}, loopback{client}, {how}) | p99 ≤ 50 ms | {_ms(a['p50_ms'])} / "
                         f"{_ms(a['p99_ms'])} ms{rate}{_goal(a['p99_ms'] <= 50)} |")
        e = app["e2e"]
        lines.append(f"| delivery → labels + comment on the fake GitHub, p50 / p99: one at a time "
                     f"({e['sequential']['completed']}/{e['sequential']['issues']}) | — | "
                     f"{_ms(e['sequential']['p50_ms'])} / {_ms(e['sequential']['p99_ms'])} ms |")
        lines.append(f"| … burst of {e['burst']['issues']} at once ({e['burst']['completed']} completed) | — | "
                     f"{_ms(e['burst']['p50_ms'])} / {_ms(e['burst']['p99_ms'])} ms, all done in "
                     f"{e['burst']['seconds']:.1f} s |")
    w = r.get("worst")
    if w:
        b = w["body_25mb"]
        lines.append(f"| worst: {b['mb']:.0f} MB body, whole pipeline | — | {b['seconds']:.2f} s "
                     f"(root cause {b['root_cause']}, {len(b['diagnoses'])} diagnosis) |")
        g = w["log_1mb"]
        lines.append(f"| worst: 1 MB log, parse / all rules; adversarial 1 MB report, all rules | — | "
                     f"{g['parse_s'] * 1000:.0f} / {g['rules_s'] * 1000:.0f} ms; "
                     f"{g['adversarial_rules_s'] * 1000:.0f} ms |")
        x = w["regexes"]
        lines.append(f"| worst: adversarial string for every rule regex ({x['rule_patterns']} patterns × "
                     f"{x['rule_bytes'] / 1e6:g} MB, RE2) | linear | worst {_ms(x['worst_rule_ms'])} ms "
                     f"({x['worst_rule']}), mean {_ms(x['mean_rule_ms'])} ms |")
        lines.append(f"| worst: every label regex ({x['label_patterns']}, Python re, 64 KB) | no backtracking | "
                     f"worst {_ms(x['worst_label_ms'])} ms |")
    return "\n".join(lines)


def stage_table(rep: dict[str, Any], base: dict[str, Any] | None) -> str:
    stages = ("parse", "rules", "labels", "duplicates", "render", "add", "total")
    lines = ["| history | stage | mean ms | p50 ms | p99 ms | CPU mean ms |"
             + (" before: CPU mean ms | speed-up (CPU) |" if base else ""),
             "|---|---|---|---|---|---|" + ("---|---|" if base else "")]
    for size, row in sorted(rep["sizes"].items()):
        for s in stages:
            v = row["latency"][s]
            line = (f"| {size:,} | {s} | {_ms(v['mean_ms'])} | {_ms(v['p50_ms'])} | {_ms(v['p99_ms'])} "
                    f"| {_ms(v.get('cpu_mean_ms', 0))} |")
            if base and size in base["sizes"]:
                b = base["sizes"][size]["latency"][s]
                line += (f" {_ms(b['cpu_mean_ms'])} | {b['cpu_mean_ms'] / v['cpu_mean_ms']:.2f}× |"
                         if v.get("cpu_mean_ms") else " | |")
            lines.append(line)
        if base and size in base["sizes"]:
            b1 = base["sizes"][size]["replay_1"]
            lines.append(f"| {size:,} | replay, 1 process (issues/s, wall; CPU) | {row['replay_1']['per_s']:.0f} | | | "
                         f"{row['replay_1']['main_cpu_per_s']:.0f} | {b1['main_cpu_per_s']:.0f} (wall "
                         f"{b1['per_s']:.0f}) | {row['replay_1']['main_cpu_per_s'] / b1['main_cpu_per_s']:.2f}× |")
            bn = base["sizes"][size].get("replay_n") or {}
            before, what = (bn["per_s"], f"{rep['jobs']} workers") if bn.get("per_s") else (b1["per_s"], "1 process")
            lines.append(f"| {size:,} | replay, {rep['jobs']} workers (issues/s) | {row['replay_n']['per_s']:.0f} "
                         f"| | | | {before:.0f} ({what}, wall) | {row['replay_n']['per_s'] / before:.2f}× (wall) |")
    return "\n".join(lines)


def machine() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = "?"
    return (f"{time.strftime('%Y-%m-%d %H:%M')} · commit {commit} · Python {platform.python_version()} · "
            f"{os.cpu_count()} CPUs · load average {os.getloadavg()[0]:.1f} at the end")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: small sizes and counts (< 60 s)")
    ap.add_argument("--sizes", type=int, nargs="+", help="history sizes (default 10000 100000; quick: 1000 3000)")
    ap.add_argument("--queries", type=int, help="new issues per measurement (default 1000; quick: 100)")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes for replay and history building")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these sections")
    ap.add_argument("--baseline", metavar="DIR", help="an older checkout: replay it too, same corpus, for ratios")
    ap.add_argument("--export", metavar="FILE", help="new issues from this issue export (real reports) instead of "
                    "the synthetic corpus")
    ap.add_argument("--out", default=str(RESULTS / "latest.md"))
    a = ap.parse_args(argv)
    if a.export and not os.access(a.export, os.R_OK):
        ap.error(f"--export {a.export}: not a readable file")
    export = os.path.abspath(a.export) if a.export else None
    sizes = a.sizes or ([1000, 3000] if a.quick else [10_000, 100_000])
    queries = a.queries or (100 if a.quick else 1000)
    sections = a.only or (("replay", "app", "worst") if a.quick else SECTIONS)
    started = time.perf_counter()
    results: dict[str, Any] = {}
    if "replay" in sections:
        log(f"replay: history {', '.join(f'{s:,}' for s in sizes)}, {queries} new issues per measurement"
            + (f" from {export}" if export else ""))
        results["replay"] = run_replay(sizes, queries, a.jobs, a.seed, export=export)
        if a.baseline:
            log(f"replay (baseline {a.baseline})")
            results["baseline"] = run_replay(sizes, queries, a.jobs, a.seed, tree=a.baseline, export=export)
    if "app" in sections:
        from bench import app_bench

        log("app: webhook ack at 50 and 200 concurrent deliveries (1 and 2 intake processes), end to end")
        deliveries = 100 if a.quick else 2000
        results["app"] = {"ack": [app_bench.ack(c, deliveries, processes=n) for n in (1, 2) for c in (50, 200)],
                          "e2e": app_bench.e2e(5 if a.quick else 30, 12 if a.quick else 200)}
    if "worst" in sections:
        from bench import worst_bench

        log("worst cases")
        results["worst"] = worst_bench.run(quick=a.quick)
    components = run_components(a.quick, sizes) if "components" in sections else {}

    parts = [f"# vllm-triage benchmarks{' (quick)' if a.quick else ''}", "", machine(), "",
             f"`python -m bench {' '.join(argv if argv is not None else sys.argv[1:])}`".replace(" `", "`"), "",
             table(results)]
    if export and "replay" in results:
        first = results["replay"]["sizes"][min(results["replay"]["sizes"])]["replay_n"].get("issues", 0)
        parts[-1:-1] = [f"New issues: the reports of `{os.path.basename(export)}` ({first} per measurement, each "
                        "replayed once), not the synthetic corpus.", ""]
    if "replay" in results:
        parts += ["", "## Per-stage latency" + (" and before/after" if "baseline" in results else ""), "",
                  stage_table(results["replay"], results.get("baseline"))]
    for name, text in components.items():
        parts += ["", f"## {name}", "", "```text", text, "```"]
    parts += ["", f"_{time.perf_counter() - started:.0f} s in all._", ""]
    report = "\n".join(parts)
    print(report)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    (out.with_suffix(".json")).write_text(json.dumps(results, indent=2, default=str), encoding="utf-8")
    log(f"written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
