"""Check that a speed change changes no output: replay the dev set, the samples and a synthetic corpus
with two trees.

    .venv/bin/python -m bench.same_output --ref /tmp/ref-tree [--issues 2000] [--seed 1] [--devset FILE]
                                          [--sources none DB …]

`--ref` is a checkout of the tree before the change (`git worktree add --detach /tmp/ref-tree main`). Each
tree's `bot` package is put first on PYTHONPATH and `python -m bot replay … --out` writes its JSON lines; the
two outputs must be byte-identical for every export and every `--sources` (the raise-site index: `none`, or an
SQLite file built by `vllm-triage sources build`). The synthetic corpus is `bench/corpus.py`'s, written once
per seed and size under the work directory. Exit status 0 when identical, 1 with the first differing line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import generate

ROOT = Path(__file__).resolve().parents[1]
DEVSET = Path("/work/shared/devset/issues.jsonl")


def corpus(work: Path, n: int, seed: int) -> Path:
    path = work / f"corpus-{seed}-{n}.jsonl"
    if not path.exists():
        with open(path, "w", encoding="utf-8") as f:
            for issue in generate(n, seed):
                f.write(json.dumps(issue, ensure_ascii=False) + "\n")
    return path


def replay(tree: Path, export: Path, out: Path, jobs: int, sources: str) -> float:
    """Replay `export` with the `bot` package of `tree`; returns the child's CPU seconds."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    before = os.times()
    subprocess.run([sys.executable, "-m", "bot", "replay", str(export), "--out", str(out), "--jobs", str(jobs),
                    "--sources", sources],
                   check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def first_difference(a: Path, b: Path) -> str | None:
    la, lb = a.read_bytes().splitlines(), b.read_bytes().splitlines()
    for k, (x, y) in enumerate(zip(la, lb, strict=False), 1):
        if x != y:
            return f"line {k} differs:\n  ref: {x[:400]!r}\n  new: {y[:400]!r}"
    if len(la) != len(lb):
        return f"line counts differ: ref {len(la)}, new {len(lb)}"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.same_output", description=__doc__.splitlines()[0])
    ap.add_argument("--ref", required=True, help="the tree before the change")
    ap.add_argument("--new", default=str(ROOT), help="the tree after the change (default: this one)")
    ap.add_argument("--issues", type=int, default=2000, help="synthetic issues (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--devset", default=str(DEVSET))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sources", nargs="+", default=["none"], help="raise-site indexes to replay with (default none)")
    ap.add_argument("--work", help="where the replays are written (default: a new temporary directory, so two runs "
                                   "at once never share their files)")
    a = ap.parse_args(argv)
    work = Path(a.work or tempfile.mkdtemp(prefix="same_output-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"replays written to {work}", file=sys.stderr)
    exports = [p for p in (Path(a.devset), ROOT / "samples" / "issues.jsonl") if p.exists()]
    exports.append(corpus(work, a.issues, a.seed))
    status = 0
    for e, export in enumerate(exports):
        for k, sources in enumerate(a.sources):
            what = f"{export.name} --sources {sources}"
            outs = {}
            for name, tree in (("ref", Path(a.ref)), ("new", Path(a.new))):
                outs[name] = work / f"{e}.{export.stem}.{k}.{name}.jsonl"
                started = time.perf_counter()
                cpu = replay(tree.resolve(), export, outs[name], a.jobs, sources)
                print(f"{what}: {name} replayed in {cpu:.1f} s CPU ({time.perf_counter() - started:.1f} s wall)",
                      file=sys.stderr)
            diff = first_difference(outs["ref"], outs["new"])
            lines = len(outs["new"].read_bytes().splitlines())
            print(f"{what}: {lines} lines, " + ("identical" if diff is None else f"DIFFERENT: {diff}"))
            status |= diff is not None
    return status


if __name__ == "__main__":
    raise SystemExit(main())
