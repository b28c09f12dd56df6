"""`duplicate_key`: which root cause of a rule a report has, validated at load and rendered at match time."""

from __future__ import annotations

import pytest
from rulekit import rule, ruleset, write_rules

from bot.report import parse
from bot.rules import RuleError, load_rules
from bot.rules.selftest import run_checks

ARCH_MATCH = {"text": {"pattern": r"Model architectures \[(?P<archs>[^\]\n]{1,200})\] (are|is) not supported",
                       "in": "body"}}
ARCH_EXAMPLES = {
    "match": [{"body": "ValueError: Model architectures ['FooForCausalLM'] are not supported for now."}],
    "no_match": [{"body": "ValueError: Model architectures failed to be inspected."}],
}


def arch_rule(**changes):
    return rule(**{"id": "arch-rule", "match": ARCH_MATCH, "examples": ARCH_EXAMPLES, **changes})


@pytest.mark.parametrize(("key", "fragment"), [
    ("archs", "must interpolate"),
    ("{{ captures.archs }}\n{{ flags.x }}", "one short line"),
    ("{{ capture.archs }}", "unknown template variable"),
    ("{{ captures.archs ", "does not parse"),
    (3, "must be a string"),
])
def test_invalid_duplicate_key_is_refused_at_load(tmp_path, key, fragment):
    write_rules(tmp_path / "rules", arch_rule(duplicate_key=key))
    with pytest.raises(RuleError) as err:
        load_rules(tmp_path / "rules")
    assert "duplicate_key" in str(err.value)
    assert fragment in str(err.value)


def test_key_is_rendered_and_normalised(tmp_path):
    rules = ruleset(tmp_path, arch_rule(duplicate_key="{{ captures.archs }}"))
    (finding,) = rules.evaluate(parse("[Bug]: cannot load my model", """\
### 🐛 Describe the bug

```
(APIServer pid=47) ERROR 03-02 10:11:12 [core.py:7] ValueError: Model architectures [ 'Qwen9MoeLM' ] are not supported
```
"""))
    assert finding.duplicate_key == "qwen9moelm"


def test_same_architecture_in_other_spelling_gives_the_same_key(tmp_path):
    rules = ruleset(tmp_path, arch_rule(duplicate_key="{{ captures.archs }}"))
    a = rules.evaluate(parse("", 'ValueError: Model architectures ["BarModel"] are not supported for now.'))
    b = rules.evaluate(parse("", "ValueError: Model architectures ['BarModel'] are not supported for now."))
    assert a[0].duplicate_key == b[0].duplicate_key == "barmodel"


def test_without_duplicate_key_the_finding_has_none(tmp_path):
    rules = ruleset(tmp_path, arch_rule())
    (finding,) = rules.evaluate(parse("", "ValueError: Model architectures ['BazLM'] are not supported for now."))
    assert finding.duplicate_key is None


def test_key_naming_a_missing_capture_is_none_not_empty(tmp_path):
    rules = ruleset(tmp_path, arch_rule(duplicate_key="{{ captures.something_else }}"))
    (finding,) = rules.evaluate(parse("", "ValueError: Model architectures ['BazLM'] are not supported for now."))
    assert finding.duplicate_key is None


def test_rules_test_fails_a_match_example_whose_key_renders_empty(tmp_path):
    examples = {"match": ARCH_EXAMPLES["match"] + [{"title": "[Bug]: Model architectures are not supported",
                                                     "body": "ValueError: Model architectures [] are not supported"}],
                "no_match": ARCH_EXAMPLES["no_match"]}
    write_rules(tmp_path / "rules", arch_rule(duplicate_key="{{ captures.archs }}",
                                              match={"any": [ARCH_MATCH, {"title": "architectures are not supported"}]},
                                              examples=examples))
    (result,) = run_checks(tmp_path / "rules")
    assert not result.ok
    assert any("duplicate_key renders empty" in p for p in result.problems)


def _key(rules, rule_id: str, title: str, body: str) -> str | None:
    (finding,) = [f for f in rules.evaluate(parse(title, body)) if f.rule == rule_id]
    return finding.duplicate_key


def test_symptom_rules_key_their_root_cause_by_release_or_flag():
    rules = load_rules()
    hang = "```\nvllm serve org/model-14b --tensor-parallel-size 2\n```\nIt is stuck after loading the weights.\n"
    old = _key(rules, "tp-startup-hang-pcie-p2p", "[Bug]: TP=2 hangs", hang + "vllm==0.5.1\n")
    same = _key(rules, "tp-startup-hang-pcie-p2p", "[Bug]: hangs with tensor parallel", hang + "vllm 0.5.3.post1\n")
    later = _key(rules, "tp-startup-hang-pcie-p2p", "[Bug]: TP=2 hangs", hang + "vllm==0.8.4\n")
    assert old == same == "0.5" and later == "0.8"
    flag = "```\nvllm: error: unrecognized arguments: {}\n```\n"
    a = _key(rules, "cli-flag-unrecognized", "[Usage]: flag rejected", flag.format("--lora-path /x"))
    b = _key(rules, "cli-flag-unrecognized", "[Usage]: flag rejected", flag.format("--lora-path=/y"))
    c = _key(rules, "cli-flag-unrecognized", "[Usage]: flag rejected", flag.format("--api-key k"))
    assert a == b == "--lora-path" and c == "--api-key"


def test_a_wheel_for_another_cuda_is_keyed_by_the_cuda_major_release():
    rules = load_rules()
    body = "### How you are installing vllm\n\nIs there a wheel for {} of this release?\n"
    old = _key(rules, "faq-vllm-for-cuda-version", "[Installation]: vllm for CUDA 11.8", body.format("cu118"))
    also_old = _key(rules, "faq-vllm-for-cuda-version", "[Installation]: wheel request", body.format("cuda 11.8"))
    new = _key(rules, "faq-vllm-for-cuda-version", "[Installation]: cu128 wheel", body.format("cu128"))
    assert old == also_old == "11" and new == "12"


def test_no_platform_found_is_keyed_by_the_platform_the_reporter_targets():
    rules = load_rules()
    error = "```\nRuntimeError: Failed to infer device type\n```\n"
    tpu = _key(rules, "failed-to-infer-device-type", "[Bug]: vLLM on TPU fails at start-up", error)
    cpu = _key(rules, "failed-to-infer-device-type", "[Usage]: does the pip package run on a CPU?", error)
    gpu = _key(rules, "failed-to-infer-device-type", "[Bug]: the server does not start in docker", error)
    assert (tpu, cpu, gpu) == ("tpu", "cpu", "cuda")


def test_an_unexplained_400_without_a_model_does_not_agree_with_one_for_a_named_model():
    rules = load_rules()
    log = '```\nINFO:     127.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n```\n'
    named = _key(rules, "faq-bad-request-reason-in-response", "[Bug]: 400 Bad Request",
                 log + "```\nvllm serve Qwen/Qwen2.5-7B-Instruct\n```\n")
    unnamed = _key(rules, "faq-bad-request-reason-in-response", "[Bug]: 400 Bad Request", log)
    assert named == "qwen/qwen2.5-7b-instruct" and unnamed == "unnamed model"
