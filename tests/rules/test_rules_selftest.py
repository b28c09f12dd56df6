"""`vllm-triage rules test` on a directory with good, broken and misbehaving rules."""

from __future__ import annotations

import io

import yaml
from rulekit import rule, write_rules

from bot.cli import main
from bot.rules.selftest import run_rule_tests


def test_reports_each_rule_and_fails_on_any_problem(tmp_path):
    good = rule(id="good-rule", examples={
        "match": [{"title": "[Bug]: x", "body": "Traceback (most recent call last):\n"
                   "  File \"/x/vllm/engine.py\", line 3, in run\n    go()\nValueError: sample failure happened\n"}],
        "no_match": [{"body": "ValueError: something else entirely"}]})
    wrong_example = rule(id="wrong-example", examples={
        "match": [{"body": "nothing to see"}], "no_match": [{"body": "ValueError: sample failure"}]})
    write_rules(tmp_path, good, wrong_example)
    (tmp_path / "broken-rule.yaml").write_text(yaml.safe_dump(rule(id="broken-rule", colour="red")))
    out = io.StringIO()
    assert run_rule_tests(str(tmp_path), out) == 1
    text = out.getvalue()
    assert "ok    " in text and "good-rule (2 examples)" in text
    assert "broken-rule.yaml: rule broken-rule: colour: unknown key" in text
    assert "wrong-example: examples.match[0]: expected a finding, got none" in text
    assert "wrong-example: examples.no_match[0]: expected no finding, got one" in text
    assert text.splitlines()[-1] == "1 passed, 2 failed"


def test_superseded_match_example_is_explained(tmp_path):
    write_rules(tmp_path, rule(id="generic"), rule(id="specific", supersedes=["generic"]))
    out = io.StringIO()
    assert run_rule_tests(str(tmp_path), out) == 1
    assert "generic: examples.match[0]: matches alone but is superseded by specific" in out.getvalue()


def test_cli_exit_status(tmp_path, capsys):
    write_rules(tmp_path, rule(id="good-rule"))
    assert main(["--rules", str(tmp_path), "rules", "test"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"
