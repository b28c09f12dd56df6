"""The table the parser-speed benchmarks print (bench/environment_bench.py, bench/logs_bench.py): each body
parsed `--runs` times, its size, median seconds and seconds per MB (which should stay flat as bodies grow)."""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

MB = 1_000_000
TITLE = "[Bug]: engine fails to start"


def binary_junk(seed: int, size: int = 2 * MB) -> str:
    """`size` random bytes decoded as UTF-8 with replacement characters."""
    rng = random.Random(seed)
    return bytes(rng.getrandbits(8) for _ in range(size)).decode("utf-8", "replace")


def time_bodies(bodies: dict[str, str], run: Callable[[str, str], None]) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"{'body':24} {'MB':>6} {'median s':>9} {'s/MB':>7}")
    for name, body in bodies.items():
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            run(TITLE, body)
            times.append(time.perf_counter() - start)
        size = max(len(body) / MB, 1e-6)
        med = statistics.median(times)
        print(f"{name:24} {size:6.2f} {med:9.3f} {med / size:7.3f}")
