"""Speed of the environment side of the parser: sections, kind, description and environment. Prints a table.

    .venv/bin/python bench/environment_bench.py [--runs N]

Bodies: a typical bug report (banner-format collect_env + log), the same repeated to ~2 MB (the parser's body
limit), and adversarial ~2 MB bodies aimed at the version / GPU / dump scanners (near-miss version words,
'works on' versions that never settle, giant lines, lone `[`/`(` runs, binary junk). Time per MB should stay flat.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.body_timing import MB, binary_junk, time_bodies  # noqa: E402
from bot.report.environment import parse_environment  # noqa: E402
from bot.report.kind import detect_kind  # noqa: E402
from bot.report.sections import description_text, split_sections  # noqa: E402

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "env" / "banner_h100.md"


def _bodies() -> dict[str, str]:
    typical = FIXTURE.read_text()
    return {
        "typical": typical,
        "typical x ~2MB": typical * (2 * MB // len(typical)),
        "near-miss versions": ("vllm-ascend 0.9 vllm_x 0.1.2B v0. vLLM version: N/A 0.6B Qwen3-0.6B rtx 40 x\n"
                               * (2 * MB // 75)),
        "unsettled 'works on'": "It works on vllm 0.8.5 fine\n" * (2 * MB // 28),
        "dump-shaped lines": ("PyTorch version: 2.5\nArchitecture:   x86_64\nfoo bar\n" * (2 * MB // 48)),
        "giant lines": ("(" * 500_000 + "vllm " * 100_000 + "\n") * 2,
        "binary junk": binary_junk(7),
    }


def _run(title: str, body: str) -> None:
    sections = split_sections(body)
    detect_kind(title, body, sections)
    description_text(body, sections)
    parse_environment(title, body, sections, tuple(body.splitlines()))


def main() -> None:
    time_bodies(_bodies(), _run)


if __name__ == "__main__":
    main()
