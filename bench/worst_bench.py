# ruff: noqa: E501  (a pasted log reads better unbroken)
"""Worst cases: a 25 MB body through the whole pipeline, a 1 MB log against all rules, and adversarial
strings for every rule regex (RE2) and every label regex (Python `re`, bounded inputs).

    .venv/bin/python -m bench.worst_bench [--quick]

Adversarial strings are built from each pattern's own literal runs (bench/rules_bench.py): every prefix of
every literal with its last character changed, back to back, so a search gets as far as it can and fails,
plus a very long line with the near-miss at its end. Times are per single search.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import time
from typing import Any

from bench.rules_bench import _LITERAL, _near_misses, adversarial_report
from bot import labels
from bot.dupes import DuplicateIndex
from bot.rules import load_rules
from bot.triage import triage

MB = 1_000_000

LOG_LINES = (
    "(APIServer pid=4012) INFO 08-14 10:21:{s:02d} [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: {n}.4 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.1%",
    "(EngineCore_DP0 pid=4188) INFO 08-14 10:21:{s:02d} [gpu_model_runner.py:2007] Model loading took {n}.2 GiB "
    "and 31.2 seconds",
    "(APIServer pid=4012) INFO:     127.0.0.1:{n} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "(EngineCore_DP0 pid=4188) WARNING 08-14 10:21:{s:02d} [cudagraph_dispatcher.py:101] cudagraph capture "
    "sizes {n} exceed max_num_seqs",
)
TRACEBACK = """(EngineCore_DP0 pid=4188) ERROR 08-14 10:22:01 [core.py:708] EngineCore failed to start.
(EngineCore_DP0 pid=4188) ERROR 08-14 10:22:01 [core.py:708] Traceback (most recent call last):
(EngineCore_DP0 pid=4188) ERROR 08-14 10:22:01 [core.py:708]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core
(EngineCore_DP0 pid=4188) ERROR 08-14 10:22:01 [core.py:708]     engine_core = EngineCoreProc(*args, **kwargs)
(EngineCore_DP0 pid=4188) ERROR 08-14 10:22:01 [core.py:708]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/core/kv_cache_utils.py", line 686, in check_enough_kv_cache_memory
(EngineCore_DP0 pid=4188) ERROR 08-14 10:22:01 [core.py:708]     raise ValueError(
(EngineCore_DP0 pid=4188) ERROR 08-14 10:22:01 [core.py:708] ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.47 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.
"""


def log_body(size: int) -> str:
    lines, total, i = [], 0, 0
    while total < size:
        line = LOG_LINES[i % len(LOG_LINES)].format(s=i % 60, n=i % 997)
        lines.append(line)
        total += len(line) + 1
        i += 1
    return ("### Your current environment\n\nvLLM Version: 0.10.1\n\n### 🐛 Describe the bug\n\n"
            "`vllm serve Qwen/Qwen3-32B --max-model-len 131072`\n\n```text\n" + "\n".join(lines) + "\n"
            + TRACEBACK + "```\n")


def _timed(fn, *args) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def whole_pipeline(size: int, rules) -> dict[str, Any]:
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    body = log_body(size)
    index = DuplicateIndex()
    seconds, result = _timed(triage, 1, "[Bug]: KV cache too small", body, rules, index)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"mb": len(body.encode()) / MB, "seconds": seconds, "peak_rss_growth_mb_with_body": (rss_after - rss_before) / 1024,
            "diagnoses": [f.rule for f in result.decision.findings],
            "root_cause": result.report.root_cause.type if result.report.root_cause else None}


def one_mb_log(rules) -> dict[str, Any]:
    from bot.report import parse

    body = log_body(MB)
    parse_s, report = _timed(parse, "[Bug]: KV cache too small", body)
    rules_s, findings = _timed(rules.evaluate, report)
    adv = adversarial_report(rules, MB)
    adv_s, _ = _timed(rules.evaluate, adv)
    return {"parse_s": parse_s, "rules_s": rules_s, "findings": [f.rule for f in findings],
            "adversarial_rules_s": adv_s, "adversarial_mb": len(adv.body) / MB}


def adversarial_text(source: str, size: int) -> str:
    fragments = [m.group(0) for m in _LITERAL.finditer(source)] or [re.sub(r"[^A-Za-z ]", "", source)[:40] or "x"]
    misses = [m for f in fragments for m in (_near_misses(f) if len(f) >= 6 else [f])] or ["x"]
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        chunk = " ".join(misses[(i + k) % len(misses)] for k in range(40)) + "\n"
        parts.append(chunk)
        total += len(chunk)
        i += 1
    parts.append("x" * (size // 4) + misses[0])  # one long line ending in a near miss
    return "".join(parts)


def every_regex(rules, size: int) -> dict[str, Any]:
    worst_rule = (0.0, "")
    count = 0
    total = 0.0
    for rule in rules.rules:
        for pattern in rule.match.patterns():
            data = adversarial_text(pattern.source, size).encode()
            seconds, _ = _timed(pattern.search, data)
            count += 1
            total += seconds
            worst_rule = max(worst_rule, (seconds, rule.id))
    worst_label = (0.0, "")
    label_count = 0
    # label regexes run with Python `re` over bounded texts: titles (1000), failure lines (2000), prose
    tables = (labels._MODEL, labels._FRAMES, labels._EXC_TYPES)   # (what it stands for, its compiled pattern, …)
    for rx in (*labels._WORD_MATCH.compiled, *labels._FAILURE_MATCH.compiled, *(e[1] for t in tables for e in t)):
        text = adversarial_text(rx.pattern, min(size, 64_000))
        seconds, _ = _timed(rx.search, text)
        label_count += 1
        worst_label = max(worst_label, (seconds, rx.pattern[:60]))
    return {"rule_patterns": count, "rule_bytes": size, "worst_rule_ms": worst_rule[0] * 1000,
            "worst_rule": worst_rule[1], "mean_rule_ms": total / max(count, 1) * 1000,
            "label_patterns": label_count, "worst_label_ms": worst_label[0] * 1000, "worst_label": worst_label[1]}


def run(quick: bool = False) -> dict[str, Any]:
    rules = load_rules()
    return {
        "body_25mb": whole_pipeline(5 * MB if quick else 25 * MB, rules),
        "log_1mb": one_mb_log(rules),
        "regexes": every_regex(rules, 100_000 if quick else MB),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    print(json.dumps(run(a.quick), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
