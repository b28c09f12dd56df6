"""Rule evaluation speed: all shipped rules over typical and adversarial reports. Prints a table.

    .venv/bin/python bench/rules_bench.py [--rules DIR] [--runs N]

Reports are built directly (the parser is timed by its own benchmark), so this measures `RuleSet.evaluate`
alone: joining/encoding the texts once per report, the RE2 searches and the templates of the rules that fire.
The adversarial body is ~1 MB: every literal fragment of every rule pattern repeated as a near-miss
(prefixes with the last character changed), very long lines, nested prefixes and a huge JSON flag.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import re2  # noqa: E402

from bot.report.model import Environment, ExceptionInfo, Frame, Report, Traceback  # noqa: E402
from bot.rules import DEFAULT_RULES_DIR, RuleSet, load_rules  # noqa: E402

_LITERAL = re2.compile(r"[A-Za-z][A-Za-z0-9_ ,.'`:=/-]{5,}")


def _fragments(rules: RuleSet) -> list[str]:
    """Literal runs from every rule pattern: the text an attacker would repeat to make searches work hard."""
    found: list[str] = []
    for rule in rules.rules:
        for pattern in rule.match.patterns():
            found += [m.group(0) for m in _LITERAL.finditer(pattern.source)]
    return found or ["Pipeline parallelism is not supported"]


def _near_misses(fragment: str) -> list[str]:
    """Each prefix of the fragment with its last character changed, so a search gets far before it fails."""
    out = []
    for n in range(6, len(fragment) + 1, max(1, len(fragment) // 6)):
        prefix = fragment[:n]
        out.append(prefix[:-1] + ("#" if prefix[-1] != "#" else "%"))
    return out


def _report(lines: list[str], exceptions: tuple[ExceptionInfo, ...] = (), flags: dict | None = None,
            env: Environment | None = None, title: str = "[Bug]: engine fails to start") -> Report:
    body = "\n".join(lines)
    return Report(title=title, title_text=title[7:], kind="bug", kind_source="title", body=body, description=body,
                  environment=env or Environment(), log_lines=tuple(lines),
                  tracebacks=(Traceback(chain=exceptions),) if exceptions else (), exceptions=exceptions,
                  error_lines=tuple(line for line in lines if line.startswith("ERROR"))[:60],
                  flags=flags or {}, architectures=("LlamaForCausalLM",), model="meta-llama/Llama-3.1-8B-Instruct")


def _frames(n: int) -> tuple[Frame, ...]:
    return tuple(Frame(f"/usr/local/lib/python3.12/dist-packages/vllm/module_{i}.py", i, f"fn_{i}", True)
                 for i in range(n))


def typical_report() -> Report:
    env = Environment(vllm_version="0.17.1", torch_version="2.9.1+cu129", cuda_version="12.9",
                      gpus=("NVIDIA H100 80GB HBM3",) * 8, platform="cuda", os="linux")
    lines = [f"(APIServer pid=1) INFO 04-18 09:12:{i % 60:02d} [core.py:{i}] step {i} took 0.0{i % 9}s"
             for i in range(300)]
    exc = ExceptionInfo("ValueError", "The model's max seq len (131072) is larger than the maximum number of tokens "
                        "that can be stored in KV cache (65536).", _frames(25))
    flags = {"tensor_parallel_size": 8, "max_model_len": 131072, "gpu_memory_utilization": 0.9}
    return _report(lines, (exc,), flags, env)


def adversarial_report(rules: RuleSet, size: int = 1_000_000) -> Report:
    lines: list[str] = []
    total = 0
    fragments = _fragments(rules)
    misses = [m for f in fragments for m in _near_misses(f)]
    i = 0
    while total < size:
        kind = i % 4
        if kind == 0:    # a long line of near-misses back to back
            line = " ".join(misses[(i * 7 + k) % len(misses)] for k in range(60))
        elif kind == 1:  # nested prefixes
            fragment = fragments[i % len(fragments)]
            line = "".join(fragment[:n] for n in range(1, len(fragment)))
        elif kind == 2:  # a very long line with a near-miss at its end
            line = "x" * 20_000 + misses[i % len(misses)]
        else:
            line = f"(EngineCore_DP0 pid={i}) ERROR 04-18 09:12:03 [core.py:1] " + misses[(i * 3) % len(misses)]
        lines.append(line)
        total += len(line) + 1
        i += 1
    message = " ".join(misses)[:60_000]
    excs = tuple(ExceptionInfo("RuntimeError", message, _frames(200)) for _ in range(5))
    flags = {"speculative_config": "{" + ", ".join(f'"k{j}": "{misses[j % len(misses)]}"' for j in range(500)) + "}",
             "pipeline_parallel_size": 2}
    env = Environment(vllm_version="0.16.0rc1.dev136+gdad2d6a59", gpus=("NVIDIA GeForce RTX 5090",) * 4)
    return _report(lines, excs, flags, env, title="[Bug]: " + " ".join(misses)[:900])


def time_it(rules: RuleSet, report: Report, runs: int) -> tuple[float, float, float, int]:
    samples = []
    findings = 0
    for _ in range(runs):
        start = time.perf_counter()
        findings = len(rules.evaluate(report))
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    p99 = samples[min(len(samples) - 1, int(round(0.99 * (len(samples) - 1))))]
    return statistics.median(samples), p99, max(samples), findings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default=str(DEFAULT_RULES_DIR))
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    rules = load_rules(args.rules)
    load_ms = (time.perf_counter() - start) * 1000
    cases = [
        ("typical (300 log lines, 1 traceback)", typical_report()),
        ("empty report", _report([])),
        ("adversarial 1 MB", adversarial_report(rules)),
        ("adversarial 2 MB", adversarial_report(rules, 2_000_000)),
    ]
    print(f"{len(rules.rules)} rules, loaded and compiled in {load_ms:.0f} ms; {args.runs} runs per case\n")
    print(f"{'case':40s} {'body':>9s} {'p50 ms':>8s} {'p99 ms':>8s} {'max ms':>8s} {'findings':>9s}")
    worst = 0.0
    for name, report in cases:
        p50, p99, top, n = time_it(rules, report, args.runs)
        worst = max(worst, p99)
        print(f"{name:40s} {len(report.body) / 1e6:8.2f}M {p50:8.2f} {p99:8.2f} {top:8.2f} {n:9d}")
    print(f"\nworst p99: {worst:.1f} ms (goal: well under 100 ms for a 1 MB body)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
