"""Properties of `parse(title, body)` over hostile input: it never raises, and its work grows with input size.

Time is bounded without wall-clock asserts: every regex of the log/traceback/command parser is checked to have
no nested unbounded quantifier (the cause of catastrophic backtracking), and the number of Python lines
executed is counted for an input and for the same input four times over.
"""

from __future__ import annotations

import re
import sys
from re import _constants as sre_constants  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bot.report.cmdline
import bot.report.errors
import bot.report.logs
import bot.report.shell
import bot.report.tracebacks
from bot.report import Report, parse

PREFIXES = [
    "", "(APIServer pid=1) ", "(EngineCore_DP0 pid=8841) (Worker_TP3 pid=8862) ", "[rank0]: ",
    "(RayWorkerWrapper pid=123, ip=10.0.0.1) ", "(VllmWorkerProcess pid=9) ", "vllm-1  | ",
    "2025-07-08T14:02:26.517Z ", "INFO 07-08 14:02:26 [utils.py:302] ", "ERROR 07-08 14:02:26 llm_engine.py:72] ",
    "\x1b[0;36m", "[0;36m", "> ", ">>> ", "E   ", "    ", "```", "**",
]
FRAGMENTS = [
    "Traceback (most recent call last):", '  File "/usr/lib/python3/dist-packages/vllm/config/model.py", line 10, in f',
    '  File "C:\\x\\vllm\\a.py", line 2, in <module>', "    raise ValueError(", "    ^^^^^^^^^^",
    "ValueError: bad", "torch.OutOfMemoryError: CUDA out of memory.", "RuntimeError:", "KeyError: 'x'",
    "ray.exceptions.RayTaskError(ValueError): ray::RayWorkerWrapper.execute_method()",
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
    "RuntimeError: Engine core initialization failed. See root cause above.", "EngineCore failed to start.",
    "vllm serve Qwen/Qwen3-8B -tp 2 --max-model-len=4096 \\", "  --speculative-config '{\"method\": \"mtp\"",
    "python -m vllm.entrypoints.openai.api_server --model m --enforce-eager ^",
    "docker run --gpus all vllm/vllm-openai:latest --model x -pp 2",
    "command:", "  - --model", "  - m", "args: [\"--model\", \"x\"", "llm = LLM(model='m', tensor_parallel_size=2",
    ")", "non-default args: {'model': 'm', 'tensor_parallel_size': 4", "args: Namespace(model='m', port=8",
    "Resolved architecture: LlamaForCausalLM", "  █▄█▀ █  model   /m", "ERROR: Could not build wheels for vllm",
    "fatal error: Python.h: No such file or directory", "Segmentation fault (core dumped)",
    "[repeated 7x across cluster]",
    "### 🐛 Describe the bug", "<details>", "_No response_", "vLLM Version: 0.9.1", "(", "[", "'", '"', "`", "\\",
    "{", "((((((((((", "[[[[[[[[", "a" * 300, "-" * 200, " " * 100, "\t",
]

line_strategy = st.builds(lambda p, f, tail: p + f + tail, st.sampled_from(PREFIXES), st.sampled_from(FRAGMENTS),
                          st.text(max_size=30))
body_strategy = st.lists(line_strategy, max_size=60).map("\n".join)


def check(report: Report) -> None:
    assert isinstance(report, Report)
    assert all(isinstance(line, str) for line in report.log_lines)
    for exc in report.exceptions:
        assert exc.type and isinstance(exc.message, str)
    for tb in report.tracebacks:
        assert tb.chain
    for cmd in report.commands:
        assert isinstance(cmd.flags, dict)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.text(), st.text())
def test_random_text_never_raises(title, body):
    check(parse(title, body))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.text(max_size=200), body_strategy)
def test_mixed_fragments_never_raise(title, body):
    check(parse(title, body))


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=4000))
def test_invalid_utf8_decoded_with_replacement(data):
    text = data.decode("utf-8", "replace")
    check(parse(text[:100], text))


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
          deadline=None)
@given(st.sampled_from(FRAGMENTS), st.sampled_from(PREFIXES), st.integers(min_value=10_000, max_value=200_000))
def test_huge_lines(fragment, prefix, size):
    line = prefix + (fragment + " ") * (size // (len(fragment) + 1))
    check(parse(line[:5000], line))


@pytest.mark.parametrize("flag", ["--.", "--...", "-.", "--.=3", "--no-."])
def test_flag_names_of_dots_only_are_ignored(flag):
    # found by bench/fuzz_atheris.py: `--.` crashed the whole parse
    report = parse("[Bug]: t", f"```\nvllm serve m {flag} 3 --max-model-len 4096\n```")
    assert report.flags.get("max_model_len") == 4096


def test_none_and_empty():
    check(parse(None, None))
    check(parse("", ""))


def test_five_megabyte_body_with_a_one_megabyte_line():
    sample = "\n".join(p + f for p in PREFIXES[:8] for f in FRAGMENTS)
    body = (sample + "\n") * (4_000_000 // len(sample)) + "x(" * 500_000 + "\n" + sample
    assert len(body) > 5_000_000
    report = parse("[Bug]: big", body)
    check(report)
    assert report.exceptions


# -- bounded time ---------------------------------------------------------------------------------

MODULES = [bot.report.logs, bot.report.tracebacks, bot.report.cmdline, bot.report.shell, bot.report.errors]


def _patterns():
    for module in MODULES:
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                yield f"{module.__name__}.{name}", value.pattern


def _nested_unbounded(tree, inside_unbounded: bool = False) -> bool:
    for op, arg in tree:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            lo, hi, sub = arg
            unbounded = hi == sre_constants.MAXREPEAT
            if inside_unbounded and hi > 1:
                return True
            if _nested_unbounded(sub, inside_unbounded or unbounded):
                return True
        elif op == sre_constants.SUBPATTERN:
            if _nested_unbounded(arg[-1], inside_unbounded):
                return True
        elif op == sre_constants.BRANCH:
            if any(_nested_unbounded(branch, inside_unbounded) for branch in arg[1]):
                return True
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT) and _nested_unbounded(arg[1], inside_unbounded):
            return True
    return False


@pytest.mark.parametrize(("name", "pattern"), list(_patterns()))
def test_no_regex_can_backtrack_catastrophically(name, pattern):
    assert not _nested_unbounded(sre_parse.parse(pattern)), name


def test_pattern_check_catches_nested_quantifiers():
    assert _nested_unbounded(sre_parse.parse(r"(a+)+$"))
    assert _nested_unbounded(sre_parse.parse(r"(?:\w*,)*x"))
    assert not _nested_unbounded(sre_parse.parse(r"(?:\d{1,3};){0,8}m"))


def _lines_executed(title: str, body: str) -> int:
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename.endswith(("logs.py", "tracebacks.py", "cmdline.py", "shell.py", "errors.py")):
            if event == "line":
                count += 1
            return tracer
        return None

    sys.settrace(tracer)
    try:
        parse(title, body)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("unit", [
    "\n".join(p + f for p in PREFIXES[:6] for f in FRAGMENTS),
    "Traceback (most recent call last):\n" + '  File "a.py", line 1, in f\n' * 40 + "ValueError: x\n",
    "vllm serve m \\\n" + "  --max-model-len 4096 \\\n" * 50 + "\n",
    "llm = LLM(model='m',\n" + "    tensor_parallel_size=2,\n" * 50,
    "non-default args: {" + "'k': 1, " * 200 + "\n",
])
def test_work_grows_linearly_with_input(unit):
    small = _lines_executed("t", unit * 3)
    large = _lines_executed("t", unit * 12)
    assert large <= small * 4 * 1.5 + 1000
