"""The seed case: PP + an MTP draft without SupportsPP, the same error without speculative decoding, and Marlin MoE."""

from __future__ import annotations

from pathlib import Path

import pytest
from rulekit import exc, frame, report

from bot.report import parse
from bot.rules import DEFAULT_RULES_DIR, load_rules

FIXTURES = Path(__file__).parent / "fixtures"
PP_MSG = "Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` interface."
MOE_MSG = ("moe_backend='marlin' is not supported for unquantized MoE. "
           "Expected one of ['triton', 'flashinfer_trtllm', 'flashinfer_cutlass', 'aiter'].")


@pytest.fixture(scope="module")
def rules():
    return load_rules(DEFAULT_RULES_DIR)


def by_rule(findings):
    return {f.rule: f for f in findings}


def test_seed_shape_end_to_end(rules):
    rep = parse("[Bug]: Qwen3.5 MoE with PP and MTP fails", (FIXTURES / "pp_mtp_draft.md").read_text())
    found = by_rule(rules.evaluate(rep))
    assert "pp-with-draft-model-without-pp" in found and "moe-marlin-unquantized" in found
    assert "pp-model-not-supported" not in found          # superseded by the specific rule
    assert "pp-with-speculative-decoding" not in found
    pp = found["pp-with-draft-model-without-pp"]
    assert "speculative draft model" in pp.explanation and "not from your target model" in pp.explanation
    assert "`Qwen3_5MoeMTP`" in pp.explanation and "SupportsPP" in pp.explanation
    assert "target model (`Qwen3_5MoeForConditionalGeneration`) supports pipeline parallelism" in pp.explanation
    # the workaround is built from the reporter's own flags: TP 2 x PP 2 -> TP 4
    assert "`--tensor-parallel-size 4` instead of `--tensor-parallel-size 2 --pipeline-parallel-size 2`" \
        in pp.workaround
    assert """remove `--speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 3}'`""" \
        in pp.workaround
    assert {e.where for e in pp.evidence} >= {"exception", "frame"}
    moe = found["moe-marlin-unquantized"]
    assert "Remove `--moe-backend marlin`" in moe.workaround and "`--moe-backend triton`" in moe.workaround
    assert "Marlin MoE kernels only run quantized weights" in moe.explanation
    assert moe.captures["backend"] == "marlin"
    assert set(pp.labels) == {"pipeline-parallel", "speculative-decoding"} and moe.labels == ("moe",)


def test_same_error_without_speculative_config_is_the_target_model(rules):
    rep = parse("[Bug]: pipeline parallel not supported", (FIXTURES / "pp_target_unsupported.md").read_text())
    found = by_rule(rules.evaluate(rep))
    assert "pp-model-not-supported" in found and "pp-with-draft-model-without-pp" not in found
    f = found["pp-model-not-supported"]
    assert "`Step3p5ForCausalLM`" in f.explanation and "`SupportsPP`" in f.explanation
    assert "`--tensor-parallel-size 4` instead of `--pipeline-parallel-size 4`" in f.workaround
    assert "upgrade" in f.workaround.lower() and "0.17.1" in f.workaround


def _report(flags, frames=(), architectures=()):
    return report(exceptions=(exc("NotImplementedError", PP_MSG, frames),), flags=flags, architectures=architectures)


def test_constructed_reports_pp_with_draft(rules):
    spec = {"method": "mtp", "num_speculative_tokens": 1}
    found = by_rule(rules.evaluate(_report({"pipeline_parallel_size": 4, "speculative_config": spec},
                                           architectures=("Glm4MoeForCausalLM", "Glm4MoeMTP"))))
    assert "pp-with-draft-model-without-pp" in found and "pp-model-not-supported" not in found
    f = found["pp-with-draft-model-without-pp"]
    assert "`Glm4MoeMTP`" in f.explanation
    assert "`--tensor-parallel-size 4` instead of `--pipeline-parallel-size 4`" in f.workaround


def test_draft_detected_from_the_traceback_alone(rules):
    frames = (frame("/usr/local/lib/python3.12/dist-packages/vllm/config/speculative.py", "_verify_args"),
              frame("/usr/local/lib/python3.12/dist-packages/vllm/config/model.py", "verify_with_parallel_config"))
    found = by_rule(rules.evaluate(_report({}, frames)))
    assert "pp-with-draft-model-without-pp" in found and "pp-model-not-supported" not in found
    assert "--pipeline-parallel-size N" in found["pp-with-draft-model-without-pp"].workaround


@pytest.mark.parametrize("spec", [{"method": "ngram", "prompt_lookup_max": 4}, None])
def test_ngram_or_no_speculation_points_at_the_target(rules, spec):
    flags = {"pipeline_parallel_size": 2, **({"speculative_config": spec} if spec else {})}
    found = by_rule(rules.evaluate(_report(flags)))
    assert "pp-model-not-supported" in found and "pp-with-draft-model-without-pp" not in found


def test_moe_backend_other_than_marlin(rules):
    msg = "moe_backend='deep_gemm' is not supported for unquantized MoE. Expected one of ['triton', 'aiter']."
    found = by_rule(rules.evaluate(report(exceptions=(exc("ValueError", msg),), flags={"moe_backend": "deep_gemm"})))
    f = found["moe-marlin-unquantized"]
    assert "`deep_gemm` has no kernel for unquantized MoE layers" in f.explanation
    assert "['triton', 'aiter']" in f.explanation and "Remove `--moe-backend deep_gemm`" in f.workaround


@pytest.mark.parametrize(("rule", "title", "command", "error"), [
    ("pp-model-not-supported", "[Bug]: pipeline parallel not supported",
     "vllm serve /models/moe --tensor-parallel-size 1 --pipeline-parallel-size 4", PP_MSG),
    ("pp-with-draft-model-without-pp", "[Bug]: PP fails",
     "vllm serve /models/moe -tp 1 --pipeline-parallel-size 4 --speculative-config '{\"method\": \"mtp\"}'", PP_MSG),
    ("pp-with-speculative-decoding", "[Bug]: crash with PP=4 and MTP",
     "vllm serve /models/moe --tensor-parallel-size 1 -pp 4 --speculative-config '{\"method\": \"mtp\"}'",
     "RuntimeError: boom"),
])
def test_the_tp_workaround_replaces_an_explicit_tensor_parallel_size_of_one(rules, rule, title, command, error):
    """Told "`--tensor-parallel-size 4` instead of `--pipeline-parallel-size 4`", a reporter who passed
    `--tensor-parallel-size 1` would keep it beside the new one: the replaced part names it too."""
    raised = f"NotImplementedError: {error}" if error == PP_MSG else error
    body = f"```\n{command}\n```\n```\n(APIServer pid=1) {raised}\n```"
    found = by_rule(rules.evaluate(parse(title, body)))
    assert rule in found, sorted(found)
    assert "`--tensor-parallel-size 4` instead of `--tensor-parallel-size 1 --pipeline-parallel-size 4`" \
        in found[rule].workaround, found[rule].workaround
