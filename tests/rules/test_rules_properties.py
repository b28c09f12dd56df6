"""Properties of the rule engine and of the whole pipeline on arbitrary input (Hypothesis).

  * `RuleSet.evaluate` never raises, whatever the report (random text, fragments of the rules' own patterns,
    prefixed log lines, huge flags);
  * the work it does in Python grows no faster than the input (lines executed, not wall-clock time);
  * the comment of a full triage (real rules, so captures from the issue reach the templates) never carries a
    live @mention, raw HTML or a second marker.
"""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.comment import MARKER
from bot.report import parse
from bot.rules import load_rules
from bot.triage import triage

RULES = load_rules()
_LITERAL = re.compile(r"[A-Za-z][A-Za-z0-9_ ,.'`:=/()-]{5,60}")
# literal runs of every rule pattern: random text built from them gets rules to fire with hostile captures
FRAGMENTS = sorted({m.group(0) for rule in RULES.rules for p in rule.match.patterns()
                    for m in _LITERAL.finditer(p.source)})
HOSTILE = ["@octocat", "@vllm-project/maintainers", "<img src=x onerror=alert(1)>", "<script>", "</details>",
           "<!--", MARKER, "```", "`", "&#64;x", "\u202e", "](javascript:x)", "|", "\n", " ",
           "--tensor-parallel-size 3",
           "(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [core.py:1] ", "Traceback (most recent call last):\n",
           '  File "/x/vllm/engine/arg_utils.py", line 1, in f\n', "ValueError: ", "vllm serve m ",
           "vLLM Version: 0.9.0\n", "GPU 0: NVIDIA GeForce RTX 5090\n"]
pieces = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(HOSTILE), st.text(max_size=40)),
                  max_size=40).map("".join)
SLOW = dict(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)


@settings(max_examples=150, **SLOW)
@given(title=st.one_of(st.text(max_size=200), pieces), body=st.one_of(st.text(), pieces))
def test_evaluate_never_raises(title, body):
    findings = RULES.evaluate(parse(title, body))
    assert all(0 <= f.confidence <= 1 and f.rule for f in findings)


@settings(max_examples=100, **SLOW)
@given(title=pieces, body=pieces, capture=pieces)
def test_full_triage_comment_cannot_ping_inject_or_fake_the_marker(title, body, capture):
    # the capture lands where rules read their values: the exception message and a flag
    text = f"{body}\n```\nvllm serve x --max-model-len {capture[:200]}\nValueError: {capture}\n```\n"
    out = triage(1, title, text, RULES).decision.comment
    if out is None:
        return
    assert out.startswith(MARKER) and out.count(MARKER) == 1
    rest = out.replace(MARKER, "", 1)
    for tag in ("<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>"):
        rest = rest.replace(tag, "")
    assert not re.search(r"<[A-Za-z/!?]", rest), rest
    assert not re.search(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]", out)
    assert len(out) < 65_536


def _lines_executed(title: str, body: str) -> int:
    report = parse(title, body)
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if "/bot/rules/" in frame.f_code.co_filename.replace("\\", "/"):
            if event == "line":
                count += 1
            return tracer
        return None

    sys.settrace(tracer)
    try:
        RULES.evaluate(report)
    finally:
        sys.settrace(None)
    return count


@pytest.mark.parametrize("unit", [
    "\n".join(FRAGMENTS[:40]) + "\n",
    "(EngineCore_DP0 pid=1) ERROR 01-01 00:00:00 [core.py:1] " + " ".join(FRAGMENTS[40:80]) + "\n",
    "Traceback (most recent call last):\n" + '  File "/x/vllm/v1/engine/core.py", line 1, in f\n' * 20
    + "ValueError: " + " ".join(FRAGMENTS[:20]) + "\n\n",
])
def test_rule_work_grows_no_faster_than_the_input(unit):
    small = _lines_executed("[Bug]: t", unit * 3)
    large = _lines_executed("[Bug]: t", unit * 12)
    assert large <= small * 4 * 1.5 + 2000
