"""Every shipped rule file loads, and its own examples behave (through the real parser and the whole rule set)."""

from __future__ import annotations

import io

import pytest

from bot.rules import DEFAULT_RULES_DIR, RULE_SUFFIXES, load_rules
from bot.rules.selftest import check_examples, run_rule_tests

RULE_FILES = sorted(p for p in DEFAULT_RULES_DIR.iterdir() if p.suffix in RULE_SUFFIXES)


@pytest.fixture(scope="module")
def shipped():
    return load_rules(DEFAULT_RULES_DIR)


def test_there_are_rules():
    assert len(RULE_FILES) >= 3


@pytest.mark.parametrize("path", RULE_FILES, ids=[p.stem for p in RULE_FILES])
def test_rule_examples(shipped, path):
    rule = shipped.get(path.stem)
    assert rule is not None
    assert check_examples(rule, shipped) == []


def test_rules_test_command_output_and_status(tmp_path):
    out = io.StringIO()
    assert run_rule_tests(str(DEFAULT_RULES_DIR), out) == 0, out.getvalue()
    lines = out.getvalue().splitlines()
    assert lines[-1] == f"{len(lines) - 2} passed, 0 failed"
    assert lines[-2].startswith("note: no source index: `raised_in` not checked")
    assert all(line.startswith("ok    rules/") for line in lines[:-2])
