"""Startup CPU: what a fresh process spends before it triages its first issue (replay) or is ready (the App).

    .venv/bin/python -m bench.startup_bench [--repeat 5] [--json OUT]

Every run is a fresh interpreter with this tree's `bot` first on the path; it reads its own CPU time
(`time.process_time`, user + system) after each step, so a loaded machine moves the figures far less than wall
time. Two kinds of process:

  * replay: interpreter start, `import bot.triage, bot.replay` (parser, labels, entities, rules engine,
    duplicates), `load_rules()`, then the first issue triaged (a sample report: what is built on first use);
  * app: interpreter start, `import bot.app.server` (aiohttp, the dashboard, the stores), then the App's core
    ready (`bot.app.core.Core` with an empty data directory: the rules loaded, no source index).

Prints the median and the fastest of `--repeat` runs per step, in ms of CPU. Without a bytecode cache of `bot`
(an editable install under PYTHONDONTWRITEBYTECODE, before `python -m compileall bot`) every process compiles
the modules from source, ~0.1-0.2 s of the imports: the bench says when that is the case.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

_CHILD = {
    "replay": """
import json, sys, time
P = time.process_time
marks = {"interpreter": P()}
import bot.triage, bot.replay
marks["imports"] = P()
from bot.rules import load_rules
rules = load_rules()
marks["rules"] = P()
from bot.triage import triage
body = open(sys.argv[1], encoding="utf-8").read()
triage(1, "vLLM serve fails: CUDA out of memory", body, rules)
marks["first issue"] = P()
print(json.dumps(marks))
""",
    "app": """
import json, sys, tempfile, time
P = time.process_time
marks = {"interpreter": P()}
import bot.app.server
marks["imports"] = P()
from bot.app.core import Core
from bot.triage import triage
with tempfile.TemporaryDirectory() as data:
    core = Core(None, data, triage)
    core.rule_count()
    marks["core ready"] = P()
print(json.dumps(marks))
""",
}

SAMPLE = ROOT / "tests" / "fixtures"


def _sample() -> Path:
    """A report with a traceback, from the test fixtures (any .log file will do)."""
    logs = sorted(SAMPLE.rglob("*.log"))
    if not logs:
        raise SystemExit("no .log fixture under tests/fixtures")
    return logs[0]


def one(kind: str, sample: Path) -> dict[str, float]:
    """Cumulative CPU seconds at each step of one fresh process of `kind`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _CHILD[kind], str(sample)], check=True, env=env, cwd=ROOT,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(repeat: int, log: Any = print) -> dict[str, Any]:
    sample = _sample()
    result: dict[str, Any] = {"repeat": repeat, "bytecode_cache": (ROOT / "bot" / "__pycache__").is_dir()}
    for kind in _CHILD:
        runs = [one(kind, sample) for _ in range(repeat)]
        steps: dict[str, dict[str, float]] = {}
        previous = None
        for step in runs[0]:
            spent = [r[step] - (r[previous] if previous else 0.0) for r in runs]
            steps[step] = {"median_ms": statistics.median(spent) * 1000, "min_ms": min(spent) * 1000}
            previous = step
        totals = [r[previous] for r in runs] if previous else [0.0]
        steps["total"] = {"median_ms": statistics.median(totals) * 1000, "min_ms": min(totals) * 1000}
        result[kind] = steps
        log(f"{kind}: " + " · ".join(f"{s} {v['median_ms']:.0f} (min {v['min_ms']:.0f})" for s, v in steps.items())
            + " ms CPU")
    if not result["bytecode_cache"]:
        log("bot/ has no bytecode cache: the imports include compiling its modules from source")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.startup_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        print("startup_bench: --repeat must be at least 1", file=sys.stderr)
        return 2
    result = run(a.repeat)
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
