"""Versions (affects / fixed_in), arbitration (supersedes, priority, order) and templates."""

from __future__ import annotations

import pytest
from rulekit import exc, report, rule, ruleset

from bot.report.model import Environment
from bot.rules.versions import VersionRange, parse_version

MATCH = {"exception": {"type": "ValueError", "message": "sample failure"}}


def sample(version: str | None = None, **kw):
    return report(exceptions=(exc("ValueError", "sample failure happened"),),
                  environment=Environment(vllm_version=version), **kw)


# ------------------------------------------------------------------ versions

@pytest.mark.parametrize(("spec", "version", "inside"), [
    (">=0.10,<0.17", "0.16.2", True),
    (">=0.10,<0.17", "0.17.0", False),
    ("<0.17.0", "0.17.0rc1.dev136+gdad2d6a59", True),   # a dev build of 0.17.0 predates 0.17.0
    (">=0.17.0", "0.17.0rc1.dev136+gdad2d6a59", False),
    (">=0.16", "0.16.0+cu128", True),
    ("<=0.16.0", "0.16.0+cu128", True),
    ("==0.6.*", "0.6.1.post2", True),
    ("!=0.8.5", "0.8.5.post1", True),
    ("~=0.8.0", "0.8.4", True),
])
def test_version_range(spec, version, inside):
    assert VersionRange(spec).contains(parse_version(version)) is inside


@pytest.mark.parametrize(("text", "public"), [
    ("v0.17.0", "0.17.0"), ("0.16.0rc1.dev136+gdad2d6a59 (git sha: dad2d6a59)", "0.16.0rc1.dev136"),
    ("main", None), ("", None), (None, None),
])
def test_parse_version(text, public):
    v = parse_version(text)
    assert (v.public if v else None) == public


@pytest.mark.parametrize(("version", "fires"), [
    ("0.14.1", False), ("0.15.0", True), ("0.16.3", True), ("0.17.0", False), (None, True), ("garbage", True),
])
def test_affects(tmp_path, version, fires):
    rs = ruleset(tmp_path, rule(affects=">=0.15,<0.17"))
    assert bool(rs.evaluate(sample(version))) is fires


@pytest.mark.parametrize(("version", "upgrade"), [
    ("0.17.1", "fixed in 0.18.0: upgrade from 0.17.1"),
    ("0.17.0rc2.dev5+g1234567", "fixed in 0.18.0: upgrade from 0.17.0rc2.dev5"),
    ("0.18.0rc1.dev136+gdad2d6a59", "may predate the fix"),    # dev build of the fixing release: cannot order
    (None, "fixed in 0.18.0: upgrade to 0.18.0 or later"),
    ("0.18.0", None),
    ("0.18.0+cu128", None),
    ("0.19.0rc1.dev3+gabc", None),
])
def test_fixed_in(tmp_path, version, upgrade):
    findings = ruleset(tmp_path, rule(fixed_in="0.18.0")).evaluate(sample(version))
    if upgrade is None:
        assert findings == ()
    else:
        (f,) = findings
        assert upgrade in f.upgrade


# ------------------------------------------------------------------ arbitration

def test_supersedes_drops_the_generic_rule(tmp_path):
    rs = ruleset(tmp_path, rule(id="generic"), rule(id="specific", supersedes=["generic"], confidence=0.6))
    assert [f.rule for f in rs.evaluate(sample())] == ["specific"]


def test_supersedes_only_when_the_specific_rule_fires(tmp_path):
    other = {"exception": {"message": "something else"}}
    rs = ruleset(tmp_path, rule(id="generic"), rule(id="specific", supersedes=["generic"], match=other))
    assert [f.rule for f in rs.evaluate(sample())] == ["generic"]


def test_supersedes_is_transitive_through_a_firing_rule(tmp_path):
    rs = ruleset(tmp_path, rule(id="a-rule", supersedes=["b-rule"]), rule(id="b-rule", supersedes=["c-rule"]),
                 rule(id="c-rule"))
    assert [f.rule for f in rs.evaluate(sample())] == ["a-rule"]


def test_mutual_supersedes_resolved_by_priority_then_id(tmp_path):
    rs = ruleset(tmp_path / "p", rule(id="a-rule", supersedes=["b-rule"]),
                 rule(id="b-rule", supersedes=["a-rule"], priority=5))
    assert [f.rule for f in rs.evaluate(sample())] == ["b-rule"]
    rs = ruleset(tmp_path / "q", rule(id="a-rule", supersedes=["b-rule"]), rule(id="b-rule", supersedes=["a-rule"]))
    assert [f.rule for f in rs.evaluate(sample())] == ["a-rule"]


def test_findings_sorted_by_confidence_then_priority_then_id(tmp_path):
    rs = ruleset(tmp_path, rule(id="low", confidence=0.4), rule(id="high", confidence=0.95),
                 rule(id="mid-b", confidence=0.7), rule(id="mid-a", confidence=0.7),
                 rule(id="mid-p", confidence=0.7, priority=3))
    assert [f.rule for f in rs.evaluate(sample())] == ["high", "mid-p", "mid-a", "mid-b", "low"]


def test_one_finding_per_rule_even_when_several_branches_match(tmp_path):
    match = {"any": [MATCH, {"exception": {"type": "ValueError"}}, {"title": "fails"}]}
    assert len(ruleset(tmp_path, rule(match=match)).evaluate(sample())) == 1


def test_finding_fields(tmp_path):
    rs = ruleset(tmp_path, rule(labels=["memory", "kv-cache"], confidence=0.7,
                                references=["vllm-project/vllm#1"]))
    (f,) = rs.evaluate(sample())
    assert (f.rule, f.title, f.labels, f.confidence, f.references) == (
        "sample-rule", "A sample failure", ("memory", "kv-cache"), 0.7, ("vllm-project/vllm#1",))
    assert f.explanation == "It failed." and f.workaround == "Do something else." and f.upgrade is None


def test_evaluate_on_an_empty_report(tmp_path):
    assert ruleset(tmp_path, rule()).evaluate(report()) == ()


# ------------------------------------------------------------------ templates

def render(tmp_path, template: str, rep=None, match=None):
    rs = ruleset(tmp_path, rule(explanation=template, match=match or MATCH))
    (f,) = rs.evaluate(rep or sample())
    return f.explanation


def test_missing_values_render_empty_and_chains_never_raise(tmp_path):
    out = render(tmp_path, "[{{ flags.speculative_config.method }}][{{ captures.nothing }}][{{ env.gpu }}]"
                           "{% if flags.pipeline_parallel_size %}pp{% endif %}")
    assert out == "[][][]"


def test_context_flags_env_captures_exception_report(tmp_path):
    rep = sample("0.17.0", flags={"pipeline_parallel_size": 4, "speculative_config": '{"method": "mtp"}'},
                 model="Qwen/Qwen3-Next-80B-A3B", architectures=("Qwen3NextForCausalLM",))
    rep = type(rep)(**{**rep.__dict__, "environment": Environment(vllm_version="0.17.0", gpus=("NVIDIA H100",))})
    out = render(tmp_path, "{{ flags.pipeline_parallel_size * 2 }} {{ flags.speculative_config.method }} "
                           "{{ env.vllm_version }} {{ env.gpu }} {{ env.compute_capability }} {{ captures.what }} "
                           "{{ exception.type }} {{ report.model }} {{ report.architecture }}",
                 rep, {"exception": {"message": "sample (?P<what>failure)"}})
    assert out == "8 mtp 0.17.0 NVIDIA H100 9.0 failure ValueError Qwen/Qwen3-Next-80B-A3B Qwen3NextForCausalLM"


def test_interpolated_issue_text_is_neutralised(tmp_path):
    rep = sample(flags={"served_model_name": "@maintainer <img src=x onerror=alert(1)> `x`\nline2"})
    out = render(tmp_path, "name: {{ flags.served_model_name }}", rep)
    assert "@maintainer" not in out and "<img" not in out and "`" not in out and "\n" not in out
    assert "maintainer" in out


def test_dict_flags_render_as_json(tmp_path):
    rep = sample(flags={"speculative_config": {"method": "mtp", "num_speculative_tokens": 2}})
    out = render(tmp_path, "--speculative-config '{{ flags.speculative_config }}'", rep)
    assert out == """--speculative-config '{"method": "mtp", "num_speculative_tokens": 2}'"""


def test_sandbox_blocks_unsafe_attributes_and_other_rules_survive(tmp_path):
    bad = rule(id="bad-template", explanation="A{{ report.__class__.__mro__ }}B")
    unsafe = rule(id="unsafe-call", explanation="{{ ''.__class__.__subclasses__() }}")
    bad2 = rule(id="raising-template", workaround="{{ flags.pipeline_parallel_size // 0 }}")
    rs = ruleset(tmp_path, bad, unsafe, bad2, rule(id="good-rule"))
    findings = {f.rule: f for f in rs.evaluate(sample(flags={"pipeline_parallel_size": 2}))}
    assert findings["good-rule"].explanation == "It failed."
    assert findings["bad-template"].explanation == "AB"                 # unsafe attributes are undefined
    assert findings["unsafe-call"].explanation == "A sample failure"    # the title stands in
    assert "SecurityError" in findings["unsafe-call"].evidence[-1].matched
    raising = findings["raising-template"]
    assert raising.workaround == "" and raising.evidence[-1].where == "render"
