"""Speed of the log side of the parser: log cleaning, tracebacks, command lines and flags. Prints a table.

    .venv/bin/python bench/logs_bench.py [--runs N]

Bodies: the seed-shaped report, interleaved worker logs repeated to ~2 MB (the parser's body limit), and
adversarial ~2 MB bodies aimed at the prefix stripper, the traceback state machine and the command reader
(prefix-only lines, tracebacks that never end, thousands of unclosed `LLM(` calls, a giant `non-default args`
line, giant lines, binary junk). Time per MB should stay flat.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.body_timing import MB, binary_junk, time_bodies  # noqa: E402
from bot.report.cmdline import (  # noqa: E402
    extract_commands,
    merge_flags,
    model_and_architectures,
    parse_non_default_args,
)
from bot.report.logs import clean_log  # noqa: E402
from bot.report.tracebacks import extract_errors  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "logs"


def _bodies() -> dict[str, str]:
    seed = (FIXTURES / "seed_shape.md").read_text()
    workers = (FIXTURES / "engine_core_nested.log").read_text()
    return {
        "seed-shaped report": seed,
        "worker logs x ~2MB": workers * (2 * MB // len(workers)),
        "prefix-only lines": "(A pid=1) (B pid=2) [rank0]: vllm-1  | INFO 01-01 00:00:00 [x.py:1] \n" * (2 * MB // 70),
        "endless traceback": "Traceback (most recent call last):\n" + '  File "a.py", line 1, in f\n' * (2 * MB // 29),
        "unclosed LLM( calls": "llm = LLM(model='m', tensor_parallel_size=(\n" * (2 * MB // 45),
        "giant non-default args": "non-default args: {" + "'k': [1, 2], " * (2 * MB // 14) + "\n",
        "giant lines": ("(" * 500_000 + "vllm serve " * 50_000 + "\n") * 2,
        "binary junk": binary_junk(11),
    }


def _run(title: str, body: str) -> None:
    log = clean_log(body)
    lines = tuple(entry.text for entry in log)
    extract_errors(log, title)
    commands = extract_commands(body, lines)
    nda = parse_non_default_args(lines)
    merge_flags(commands, nda)
    model_and_architectures(lines, commands, nda)


def main() -> None:
    time_bodies(_bodies(), _run)


if __name__ == "__main__":
    main()
