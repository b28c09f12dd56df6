"""`vllm-triage explain` as a rule author reads it: headings are not errors, commands are whole, no Python
`None`, and two unrelated errors are shown apart rather than as one cause chain."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from bot.explain import explain
from bot.rules import DEFAULT_RULES_DIR, load_rules

REPORT = Path(__file__).parent / "fixtures" / "reports" / "pp_mtp_two_errors.md"
TITLE = "[Bug]: MoE model does not work with pipeline parallelism"


@pytest.fixture(scope="module")
def text() -> str:
    return explain(TITLE, REPORT.read_text(), load_rules(DEFAULT_RULES_DIR))


def section(text: str, name: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(name))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def test_a_plain_heading_is_not_an_error_line(text):
    assert "error output" in REPORT.read_text()
    assert not any(line.strip() == "error output" for line in text.splitlines())


def test_the_command_is_whole_and_wrapped_between_words(text):
    command = next(line for line in REPORT.read_text().splitlines() if "--pipeline-parallel-size" in line)
    shown = " ".join(line.strip() for line in section(text, "commands:")[1:])
    for word in shlex.split(command, posix=False)[3:]:  # after `python3 -m`, as the parser keeps it
        assert re.search(rf"(?:^|\s){re.escape(word)}(?:\s|$)", shown), word


def test_no_python_none_and_no_model_shows_a_dash():
    out = explain("[Usage]: how do I enable prefix caching?", "How do I turn it on?", load_rules(DEFAULT_RULES_DIR))
    assert not re.search(r"\bNone\b", out)
    assert "model:        -" in out


def test_two_unrelated_errors_are_shown_apart_not_as_a_chain(text):
    assert "root cause" not in text.split("root cause:", 1)[0]  # no "(root cause last)" list of everything
    root = section(text, "root cause:")
    others = section(text, "other errors")
    assert len(root) == 1 and len(others) == 2
    both = "\n".join(root + others)
    assert "NotImplementedError: Pipeline parallelism is not supported" in both
    assert "ModuleNotFoundError: No module named 'flash_attn'" in both
    assert "traceback #1" in both and "traceback #2" in both


def test_the_tp_workaround_replaces_the_reporters_tensor_parallel_size(text):
    assert "`--tensor-parallel-size 4` instead of `--tensor-parallel-size 1 --pipeline-parallel-size 4`" in text


def test_a_wrapper_error_is_shown_as_one_not_as_an_unrelated_error():
    body = "\n".join([
        "```",
        "(EngineCore_DP0 pid=7) Traceback (most recent call last):",
        '(EngineCore_DP0 pid=7)   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/worker/gpu_worker.py", '
        "line 210, in determine_available_memory",
        "(EngineCore_DP0 pid=7)     raise ValueError(msg)",
        "(EngineCore_DP0 pid=7) ValueError: No available memory for the cache blocks.",
        "(APIServer pid=3) Traceback (most recent call last):",
        '(APIServer pid=3)   File "/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/utils.py", '
        "line 880, in wait_for_engine_startup",
        '(APIServer pid=3)     raise RuntimeError("Engine core initialization failed.")',
        "(APIServer pid=3) RuntimeError: Engine core initialization failed. See root cause above.",
        "```",
    ])
    out = explain("[Bug]: server does not start", body, load_rules(DEFAULT_RULES_DIR))
    assert section(out, "root cause:")[0].startswith("root cause:   ValueError: No available memory")
    wrappers = section(out, "wrapper errors")
    assert len(wrappers) == 2 and "RuntimeError: Engine core initialization failed" in wrappers[1]
    assert "other errors" not in out
