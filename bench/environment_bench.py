"""Speed of the environment side of the parser: sections, kind, description and environment. Prints a table.

    .venv/bin/python bench/environment_bench.py [--runs N]

Bodies: a typical bug report (banner-format collect_env + log), the same repeated to ~2 MB (the parser's body
limit), and adversarial ~2 MB bodies aimed at the version / GPU / dump scanners (near-miss version words,
'works on' versions that never settle, giant lines, lone `[`/`(` runs, binary junk). Time per MB should stay flat.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.report.environment import parse_environment  # noqa: E402
from bot.report.kind import detect_kind  # noqa: E402
from bot.report.sections import description_text, split_sections  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "env" / "banner_h100.md"
MB = 1_000_000


def _bodies() -> dict[str, str]:
    typical = FIXTURE.read_text()
    rng = random.Random(7)
    junk = bytes(rng.getrandbits(8) for _ in range(2 * MB)).decode("utf-8", "replace")
    return {
        "typical": typical,
        "typical x ~2MB": typical * (2 * MB // len(typical)),
        "near-miss versions": ("vllm-ascend 0.9 vllm_x 0.1.2B v0. vLLM version: N/A 0.6B Qwen3-0.6B rtx 40 x\n"
                               * (2 * MB // 75)),
        "unsettled 'works on'": "It works on vllm 0.8.5 fine\n" * (2 * MB // 28),
        "dump-shaped lines": ("PyTorch version: 2.5\nArchitecture:   x86_64\nfoo bar\n" * (2 * MB // 48)),
        "giant lines": ("(" * 500_000 + "vllm " * 100_000 + "\n") * 2,
        "binary junk": junk,
    }


def _run(title: str, body: str) -> None:
    sections = split_sections(body)
    detect_kind(title, body, sections)
    description_text(body, sections)
    parse_environment(title, body, sections, tuple(body.splitlines()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"{'body':24} {'MB':>6} {'median s':>9} {'s/MB':>7}")
    for name, body in _bodies().items():
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            _run("[Bug]: engine fails to start", body)
            times.append(time.perf_counter() - start)
        size = max(len(body) / MB, 1e-6)
        med = statistics.median(times)
        print(f"{name:24} {size:6.2f} {med:9.3f} {med / size:7.3f}")


if __name__ == "__main__":
    main()
