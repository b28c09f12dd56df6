"""Load-time validation: every broken rule names its file, its id and the offending field."""

from __future__ import annotations

import pytest
import yaml
from rulekit import BASE_RULE, rule, write_rules

from bot.rules import RuleError, load_rules

MATCH = BASE_RULE["match"]

BROKEN = [
    # (rule data, field, fragment of the message)
    (rule(colour="red"), "colour", "unknown key"),
    (rule(title=None), "title", "required"),
    (rule(examples=None), "examples", "required"),
    (rule(labels="memory"), "labels", "must be a list"),
    (rule(labels=["memory", "gpu-stuff"]), "labels[1]", "unknown label"),
    (rule(confidence="high"), "confidence", "must be a number"),
    (rule(confidence=1.5), "confidence", "between 0 and 1"),
    (rule(priority=1.5), "priority", "integer"),
    (rule(id="Sample_Rule"), "id", "kebab-case"),
    (rule(title="two\nlines"), "title", "one line"),
    (rule(match={"exception": {"type": "ValueError", "mesage": "x"}}), "match.exception.mesage", "unknown key"),
    (rule(match={"exceptoin": {"type": "ValueError"}}), "match.exceptoin", "unknown condition"),
    (rule(match={"exception": {}}), "match.exception", "give `type`, `message` or both"),
    (rule(match={"exception": {"type": "X", "where": "leaf"}}), "match.exception.where", "root or any"),
    (rule(match={"all": [MATCH, {"log": "a", "title": "b"}]}), "match.all[1]", "exactly one key"),
    (rule(match={"all": []}), "match.all", "non-empty list"),
    (rule(match={"any": [MATCH, {"log": "(unclosed"}]}), "match.any[1].log", "RE2 cannot compile"),
    (rule(match={"log": "(?=lookahead)x"}), "match.log", "RE2 cannot compile"),
    (rule(match={"log": "(a)\\1"}), "match.log", "RE2 cannot compile"),
    (rule(match={"log": ""}), "match.log", "empty pattern"),
    (rule(match={"log": ".*"}), "match.log", "matches the empty string"),
    (rule(match={"log": "x?"}), "match.log", "matches the empty string"),
    (rule(match={"log": "a{1000,}"}), "match.log", "exceeds"),
    (rule(match={"log": "\\pL{0,100}x"}), "match.log", "instructions"),
    (rule(match={"log": 42}), "match.log", "must be a string"),
    (rule(match={"text": {"pattern": "x", "in": "comments"}}), "match.text.in", "must be one of"),
    (rule(match={"flag": {"name": "tensor_parallel_size", "gt": "two"}}), "match.flag.gt", "must be a number"),
    (rule(match={"flag": {"name": "tensor_parallel_size"}}), "match.flag", "at least one test"),
    (rule(match={"flag": {"name": "Tensor Parallel", "present": True}}), "match.flag.name", "snake_case"),
    (rule(match={"flag": {"name": "x", "present": False, "eq": 1}}), "match.flag.present", "cannot be combined"),
    (rule(match={"flag": {"name": "x", "in": []}}), "match.flag.in", "non-empty list"),
    (rule(match={"env": {"field": "gpu_name", "present": True}}), "match.env.field", "unknown environment field"),
    (rule(match={"env": {"field": "vllm_version", "version": "newer than 0.5"}}), "match.env.version", "PEP 440"),
    (rule(match={"env": {"field": "platform", "version": ">=1"}}), "match.env.version", "applies to"),
    (rule(match={"env": {"field": "platform", "lt": 3}}), "match.env.lt", "numeric comparison"),
    (rule(match={"env": {"field": "os", "if_unknown": "yes", "eq": "linux"}}), "match.env.if_unknown", "true or false"),
    (rule(match={"env_var": {"name": "VLLM USE V1", "present": True}}), "match.env_var.name", "environment variable"),
    (rule(match={"kind": ["bug", "crash"]}), "match.kind[1]", "unknown kind"),
    (rule(match={"frame": {}}), "match.frame", "give `file`, `function` or both"),
    (rule(match={"not": [MATCH]}), "match.not", "exactly one key"),
    (rule(explanation="{% if flags.x %}unclosed"), "explanation", "does not parse"),
    (rule(workaround="use {{ flag.tp }}"), "workaround", "unknown template variable"),
    (rule(workaround="{% include 'x' %}"), "workaround", "include"),
    (rule(explanation=""), "explanation", "must not be empty"),
    (rule(affects="newer"), "affects", "PEP 440"),
    (rule(fixed_in=0.18), "fixed_in", "quoted version"),
    (rule(fixed_in="soon"), "fixed_in", "not a version"),
    (rule(fixed_in="0.18.0+cu128"), "fixed_in", "local part"),
    (rule(supersedes=["sample-rule"]), "supersedes", "itself"),
    (rule(supersedes=["no-such-rule"]), "supersedes[0]", "unknown rule"),
    (rule(examples={"match": [{"body": "x"}]}), "examples.no_match", "required"),
    (rule(examples={"match": [], "no_match": [{"body": "x"}]}), "examples.match", "non-empty list"),
    (rule(examples={"match": [{"text": "x"}], "no_match": [{"body": "y"}]}), "examples.match[0].text", "unknown key"),
    (rule(examples={"match": [{"body": ""}], "no_match": [{"body": "y"}]}), "examples.match[0].body", "not be empty"),
]


@pytest.mark.parametrize(("data", "field", "fragment"), BROKEN, ids=[b[1] + ":" + b[2] for b in BROKEN])
def test_broken_rule_names_file_id_and_field(tmp_path, data, field, fragment):
    (tmp_path / "sample-rule.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(RuleError) as info:
        load_rules(tmp_path)
    err = info.value
    assert err.file.endswith("sample-rule.yaml")
    assert err.field == field, str(err)
    assert fragment in err.message, str(err)
    assert str(err).startswith(f"{err.file}: rule ") and f": {field}: " in str(err)
    assert err.rule_id == data["id"]


def test_id_must_equal_file_name(tmp_path):
    (tmp_path / "other-name.yaml").write_text(yaml.safe_dump(rule()))
    with pytest.raises(RuleError) as info:
        load_rules(tmp_path)
    assert info.value.field == "id" and "other-name" in info.value.message


def test_duplicate_ids_across_yaml_and_yml(tmp_path):
    write_rules(tmp_path, rule())
    (tmp_path / "sample-rule.yml").write_text(yaml.safe_dump(rule()))
    with pytest.raises(RuleError, match="duplicate id"):
        load_rules(tmp_path)


def test_yaml_syntax_error_names_the_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("id: bad\ntitle: [unclosed\nlabels: []\n")
    with pytest.raises(RuleError) as info:
        load_rules(tmp_path)
    assert info.value.file.endswith("bad.yaml") and info.value.field.startswith("line ")


def test_file_must_hold_one_mapping(tmp_path):
    (tmp_path / "sample-rule.yaml").write_text("- just\n- a list\n")
    with pytest.raises(RuleError, match="must be a mapping"):
        load_rules(tmp_path)
    (tmp_path / "sample-rule.yaml").write_text(yaml.safe_dump(rule()) + "---\n" + yaml.safe_dump(rule()))
    with pytest.raises(RuleError, match="exactly one YAML document"):
        load_rules(tmp_path)


def test_supersedes_cycle_of_three_is_rejected_but_mutual_pair_is_not(tmp_path):
    a = rule(id="a-rule", supersedes=["b-rule"])
    b = rule(id="b-rule", supersedes=["a-rule"])
    load_rules(write_rules(tmp_path / "pair", a, b))
    c = rule(id="c-rule", supersedes=["a-rule"])
    a3 = rule(id="a-rule", supersedes=["b-rule"])
    b3 = rule(id="b-rule", supersedes=["c-rule"])
    with pytest.raises(RuleError, match="cycle"):
        load_rules(write_rules(tmp_path / "three", a3, b3, c))


def test_flag_names_are_normalised_from_cli_spelling(tmp_path):
    rs = load_rules(write_rules(tmp_path, rule(match={"flag": {"name": "--tensor-parallel-size", "gt": 1}})))
    assert rs.rules[0].match.name == "tensor_parallel_size"


def test_non_rule_files_are_ignored(tmp_path):
    write_rules(tmp_path, rule())
    (tmp_path / "README.md").write_text("# notes")
    assert [r.id for r in load_rules(tmp_path).rules] == ["sample-rule"]


def test_missing_directory(tmp_path):
    with pytest.raises(RuleError, match="not a directory"):
        load_rules(tmp_path / "nope")
