"""Evidence beyond the body's traceback: the title (exceptions, error messages, keywords as people write them)
and the configuration alone (`flags_only` branches at a lower confidence)."""

from __future__ import annotations

import pytest
from rulekit import rule, ruleset

from bot.report import parse
from bot.rules import RuleError

NO_CACHE = {"exception": {"type": "ValueError", "message": "No available memory for the cache blocks"}}
NO_CACHE_EXAMPLES = {
    "match": [{"body": "ValueError: No available memory for the cache blocks. Try increasing "
                       "`gpu_memory_utilization`."}],
    "no_match": [{"body": "ValueError: something else"}],
}


def _one(rules, title: str, body: str):
    findings = rules.evaluate(parse(title, body))
    return findings[0] if findings else None


def test_an_error_message_stated_only_in_the_title_counts(tmp_path):
    rules = ruleset(tmp_path, rule(id="no-cache", match=NO_CACHE, examples=NO_CACHE_EXAMPLES))
    title = "[Bug]: No available memory for the cache blocks when serving Qwen2.5-72B on 2 x L40S"
    hit = _one(rules, title, "The log was too long to paste. It happens at start-up.")
    assert hit is not None and hit.rule == "no-cache"
    assert any(e.where == "title" for e in hit.evidence)


def test_a_title_naming_another_exception_type_does_not_count(tmp_path):
    rules = ruleset(tmp_path, rule(id="no-cache", match=NO_CACHE, examples=NO_CACHE_EXAMPLES))
    title = "[Bug]: RuntimeError: No available memory for the cache blocks"
    assert _one(rules, title, "It happens at start-up.") is None
    title = "[Bug]: ValueError: No available memory for the cache blocks"
    assert _one(rules, title, "It happens at start-up.") is not None


@pytest.mark.parametrize("opt_out", ["rule", "condition"])
def test_title_evidence_can_be_switched_off(tmp_path, opt_out):
    match = {"error": "out of memory"}
    data = rule(id="oom", match=match, examples={"match": [{"body": "torch.OutOfMemoryError: CUDA out of memory."}],
                                                 "no_match": [{"body": "ValueError: x"}]})
    title = "[Bug]: CUDA out of memory after the upgrade"
    assert _one(ruleset(tmp_path / "on", data), title, "It fails.") is not None
    if opt_out == "rule":
        data["title_evidence"] = False
    else:
        data["match"] = {"error": {"pattern": "out of memory", "title_evidence": False}}
    assert _one(ruleset(tmp_path / "off", data), title, "It fails.") is None


def test_text_and_title_conditions_read_words_as_people_write_them(tmp_path):
    data = rule(id="pp-words", match={"title": r"\bpipeline[-_ ]parallel\w*"},
                examples={"match": [{"title": "[Bug]: pipeline parallelism hangs", "body": "x"}],
                          "no_match": [{"title": "[Bug]: tensor parallelism hangs", "body": "x"}]})
    rules = ruleset(tmp_path / "fuzzy", data)
    for title in ("[Bug]: pipline paralelism hangs on two nodes", "[Bug]: pipeline-parallelism hangs",
                  "[Bug]: Pipeline Paralell hangs"):
        assert _one(rules, title, "x") is not None, title
    assert _one(rules, "[Bug]: tensor parallelism hangs", "x") is None
    data["match"] = {"title": {"pattern": r"\bpipeline[-_ ]parallel\w*", "exact": True}}
    assert _one(ruleset(tmp_path / "exact", data), "[Bug]: pipline paralelism hangs", "x") is None


def test_the_description_is_read_with_corrected_words_too(tmp_path):
    data = rule(id="spec", match={"text": r"\bspeculative decoding\b"},
                examples={"match": [{"body": "speculative decoding fails"}], "no_match": [{"body": "x"}]})
    rules = ruleset(tmp_path, data)
    assert _one(rules, "[Bug]: wrong tokens", "With specualtive decoding the output is garbled.") is not None


PP_SPEC = {
    "any": [
        {"all": [{"flag": {"name": "pipeline_parallel_size", "gt": 1}},
                 {"exception": {"message": "Pipeline parallelism is not supported"}}]},
        {"flags_only": {"confidence": 0.5, "match": {"all": [
            {"flag": {"name": "pipeline_parallel_size", "gt": 1}},
            {"flag": {"name": "speculative_config", "present": True}}]}}},
    ],
}
PP_SPEC_EXAMPLES = {
    "match": [{"body": "`vllm serve org/m -pp 2`\nNotImplementedError: Pipeline parallelism is not supported"}],
    "no_match": [{"body": "`vllm serve org/m -tp 2`"}],
}
COMMAND = "```\nvllm serve org/m -pp 2 --speculative-config '{\"method\": \"mtp\"}'\n```\n"


def test_a_flags_only_branch_fires_at_its_confidence_when_the_log_stops_early(tmp_path):
    rules = ruleset(tmp_path, rule(id="pp-spec", confidence=0.9, match=PP_SPEC, examples=PP_SPEC_EXAMPLES))
    hit = _one(rules, "[Bug]: the server exits", COMMAND + "```\nINFO 09-12 08:01:31 [core.py:1] Loading weights\n```")
    assert hit is not None and hit.confidence == 0.5
    assert any(e.condition == "flags_only" for e in hit.evidence)
    # the error itself is shown: the full branch holds, at the rule's confidence
    full = _one(rules, "[Bug]: the server exits",
                COMMAND + "```\nNotImplementedError: Pipeline parallelism is not supported for this model.\n```")
    assert full is not None and full.confidence == 0.9


def test_a_flags_only_branch_stays_silent_when_the_report_shows_another_cause(tmp_path):
    rules = ruleset(tmp_path, rule(id="pp-spec", confidence=0.9, match=PP_SPEC, examples=PP_SPEC_EXAMPLES))
    body = COMMAND + "```\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n```"
    assert _one(rules, "[Bug]: the server exits", body) is None
    wrapper = COMMAND + "```\nRuntimeError: Engine core initialization failed. See root cause above.\n```"
    assert _one(rules, "[Bug]: the server exits", wrapper) is not None   # a wrapper hides the cause: still fires


def test_a_flags_only_branch_may_not_read_text(tmp_path):
    bad = {"flags_only": {"confidence": 0.5, "match": {"all": [
        {"flag": {"name": "pipeline_parallel_size", "gt": 1}}, {"title": "pipeline"}]}}}
    with pytest.raises(RuleError) as info:
        ruleset(tmp_path, rule(id="bad", match=bad))
    assert "configuration only" in info.value.message
    with pytest.raises(RuleError):
        ruleset(tmp_path / "b", rule(id="bad", match={"flags_only": {"confidence": 0, "match": {
            "flag": {"name": "pipeline_parallel_size", "gt": 1}}}}))


def test_not_of_a_catch_all_that_reads_the_title_is_rejected(tmp_path):
    with pytest.raises(RuleError) as info:
        ruleset(tmp_path, rule(id="no-error", match={"all": [{"title": "stream"}, {"not": {"error": r"\S"}}]}))
    assert "title_evidence: false" in info.value.message
    ok = rule(id="no-error", match={"all": [{"title": "stream"},
                                            {"not": {"error": {"pattern": r"\S", "title_evidence": False}}}]},
              examples={"match": [{"title": "[Usage]: how to stream tokens", "body": "How?"}],
                        "no_match": [{"title": "[Usage]: how to stream tokens", "body": "ValueError: boom"}]})
    assert _one(ruleset(tmp_path / "ok", ok), "[Usage]: how to stream tokens", "How?") is not None
