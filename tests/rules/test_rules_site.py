"""A rule may name the raise site of the root cause (`site:`), read from the source index; `rules test` checks
`raised_in` against the index and runs the examples with their raise sites located when one is built."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
import yaml
from rulekit import rule, write_rules

from bot.report import parse
from bot.rules import RuleError, RuleSet, load_rule_file, load_rules
from bot.rules.selftest import run_rule_tests
from bot.sources.locate import locate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from sources.small import small_index  # noqa: E402

ENV_2 = "### Your current environment\n\n```text\nvLLM Version                 : 2.0\n```\n\n"
PP_TITLE = "[Bug]: Pipeline parallelism is not supported for this model. Supported models implement the SupportsPP"
SITE = "vllm/config/model.py:ModelConfig.verify_with_parallel_config"
SITE_RULE = rule(id="pp-by-site", match={"site": SITE}, examples={
    "match": [{"title": PP_TITLE, "body": ENV_2 + "vllm serve some/model -pp 2 stops at start.\n"}],
    "no_match": [{"body": ENV_2 + "ValueError: something else entirely"}]})


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return small_index(tmp_path_factory.mktemp("sdists"))


def test_a_site_condition_names_a_module_and_optionally_its_function(tmp_path):
    path = write_rules(tmp_path, SITE_RULE) / "pp-by-site.yaml"
    assert load_rule_file(path).match.describe() == f"site in {SITE}"
    either = rule(id="pp-by-site", match={"site": ["vllm/config.py:ModelConfig.verify_with_parallel_config",
                                                   "vllm/config/model.py"]})
    path.write_text(yaml.safe_dump(either))
    assert load_rule_file(path).match.sites == (("vllm/config.py", "ModelConfig.verify_with_parallel_config"),
                                                ("vllm/config/model.py", None))


@pytest.mark.parametrize("bad", ["not a path", "vllm/config/model.py:Model Config", "vllm/config/model", [], 3])
def test_a_malformed_site_names_the_field(tmp_path, bad):
    (tmp_path / "pp-by-site.yaml").write_text(yaml.safe_dump(rule(id="pp-by-site", match={"site": bad})))
    with pytest.raises(RuleError) as info:
        load_rules(tmp_path)
    assert info.value.field.startswith("match.site")


def test_a_site_condition_matches_the_located_root_cause_only(tmp_path, index):
    rules = RuleSet((load_rule_file(write_rules(tmp_path, SITE_RULE) / "pp-by-site.yaml"),))
    body = ENV_2 + "vllm serve some/model -pp 2 stops at start.\n"
    assert rules.evaluate(parse(PP_TITLE, body)) == ()  # without the index, nothing names a site
    [finding] = rules.evaluate(locate(index, parse(PP_TITLE, body)))
    assert finding.rule == "pp-by-site" and finding.evidence[0].where == "site"
    assert finding.evidence[0].matched.startswith("vllm/config/model.py:") and "(v2.0)" in finding.evidence[0].matched
    wrapper = ENV_2 + "```\nRuntimeError: Engine core initialization failed. See root cause above.\n```\n"
    engine = rule(id="engine-site", match={"site": "vllm/engine.py"})
    engine_rules = RuleSet((load_rule_file(write_rules(tmp_path, engine) / "engine-site.yaml"),))
    located = locate(index, parse("[Bug]: it does not start", wrapper))
    assert located.site.wrapper and engine_rules.evaluate(located) == ()  # a wrapper's site names no cause


def test_rules_test_runs_site_rules_with_the_index_and_notes_without(tmp_path, index):
    write_rules(tmp_path, SITE_RULE)
    out = io.StringIO()
    assert run_rule_tests(str(tmp_path), out) == 0
    assert "note: no source index" in out.getvalue()
    out = io.StringIO()
    assert run_rule_tests(str(tmp_path), out, index) == 0
    assert "source index: 2 releases" in out.getvalue() and "ok    " in out.getvalue()
    # with the index, a match example the index does not resolve to the site fails
    wrong = rule(id="pp-by-site", match={"site": "vllm/moe.py"}, examples=SITE_RULE["examples"])
    write_rules(tmp_path, wrong)
    out = io.StringIO()
    assert run_rule_tests(str(tmp_path), out, index) == 1
    assert "examples.match[0]: with the source index: expected a finding, got none" in out.getvalue()


def test_rules_test_checks_raised_in_against_the_index(tmp_path, index):
    good = rule(id="good-place", raised_in="vllm/config/model.py (ModelConfig.verify_with_parallel_config)")
    module = rule(id="no-module", raised_in="vllm/nowhere.py")
    function = rule(id="no-function", raised_in="vllm/moe.py (map_unquantized_backend; vllm/engine.py check_it)")
    prose = rule(id="prose-only", raised_in="torch (the CUDA caching allocator), V0 and _SOME_CONSTANT")
    write_rules(tmp_path, good, module, function, prose)
    out = io.StringIO()
    assert run_rule_tests(str(tmp_path), out, index) == 0  # warnings, not failures
    text = out.getvalue()
    assert "warn  " + str(tmp_path / "no-module.yaml") + ": rule no-module: raised_in: no indexed release raises " \
           "anything in vllm/nowhere.py" in text
    assert "rule no-function: raised_in: no indexed release raises in check_it of vllm/engine.py" in text
    assert "map_unquantized_backend" not in text
    assert "good-place: raised_in" not in text and "prose-only: raised_in" not in text
    assert "2 `raised_in` not borne out by it" in text
