"""The seed report's shape end to end: PP + MTP draft on a GLM-4.5 MoE checkpoint, logged through nohup."""

from pathlib import Path

from bot.report import parse

FIXTURES = Path(__file__).parent.parent / "fixtures" / "logs"
TITLE = "[Bug]: GLM-4.5-Air FP8 will not start with -pp 2 and MTP"


def report():
    return parse(TITLE, (FIXTURES / "seed_shape.md").read_text())


def test_flags_from_command_and_non_default_args():
    r = report()
    assert r.flags["pipeline_parallel_size"] == 2
    assert r.flags["tensor_parallel_size"] == 1          # only on the command line: it is vLLM's default
    assert r.flags["speculative_config"] == {"method": "mtp", "num_speculative_tokens": 1}
    assert r.flags["moe_backend"] == "triton"
    assert r.flags["distributed_executor_backend"] == "mp"
    assert r.non_default_args is not None and "tensor_parallel_size" not in r.non_default_args
    assert {c.entrypoint for c in r.commands} == {"api-server"}
    assert all(c.model == "/mnt/ckpt/GLM-4.5-Air-FP8" for c in r.commands)


def test_model_and_first_resolved_architecture():
    r = report()
    assert r.model == "/mnt/ckpt/GLM-4.5-Air-FP8"
    assert r.architectures == ("Glm4MoeForCausalLM", "Glm4MoeMTP")
    assert r.architecture == "Glm4MoeForCausalLM"


def test_root_cause_is_the_pipeline_parallel_error():
    r = report()
    root = r.root_cause
    assert root is not None
    assert root.type == "NotImplementedError"
    assert root.first_line.startswith("Pipeline parallelism is not supported for this model.")
    assert root.process == "APIServer"
    assert root.frames[-1].function == "verify_with_parallel_config" and root.frames[-1].is_vllm
    assert len(r.tracebacks) == 1 and r.tracebacks[0].process == "APIServer"
    assert [e.type for e in r.exceptions] == ["NotImplementedError"]


def test_log_lines_are_clean():
    r = report()
    assert not any(line.startswith("(APIServer") for line in r.log_lines)
    assert any(line.startswith("non-default args: {") for line in r.log_lines)
