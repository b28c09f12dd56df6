"""Each condition type, the combinators, captures and evidence, on Reports built directly."""

from __future__ import annotations

import pytest
from rulekit import exc, frame, report, rule, ruleset

from bot.report.model import Command, Environment
from bot.rules.gpu import compute_capability

PP_MSG = "Pipeline parallelism is not supported for this model. Supported models implement the `SupportsPP` interface."


def fires(tmp_path, match, rep, **extra) -> bool:
    return bool(ruleset(tmp_path, rule(match=match, **extra)).evaluate(rep))


def finding(tmp_path, match, rep, **extra):
    (f,) = ruleset(tmp_path, rule(match=match, **extra)).evaluate(rep)
    return f


# ------------------------------------------------------------------ exception

def test_exception_type_and_message_with_evidence(tmp_path):
    rep = report(exceptions=(exc("NotImplementedError", PP_MSG),))
    f = finding(tmp_path, {"exception": {"type": "NotImplementedError", "message": "pipeline PARALLELISM is not"}}, rep)
    (ev,) = f.evidence
    assert ev.where == "exception"
    assert ev.matched.startswith("NotImplementedError: Pipeline parallelism is not supported")
    assert "NotImplementedError" in ev.condition and "pipeline PARALLELISM" in ev.condition


@pytest.mark.parametrize(("rule_type", "reported", "expected"), [
    ("OutOfMemoryError", "torch.OutOfMemoryError", True),
    ("torch.OutOfMemoryError", "OutOfMemoryError", True),
    (["ValueError", "OutOfMemoryError"], "torch.cuda.OutOfMemoryError", True),
    ("MemoryError", "torch.OutOfMemoryError", False),
])
def test_exception_short_type(tmp_path, rule_type, reported, expected):
    rep = report(exceptions=(exc(reported, "CUDA out of memory. Tried to allocate 2.00 GiB"),))
    assert fires(tmp_path, {"exception": {"type": rule_type}}, rep) is expected


def test_exception_where_root_versus_any(tmp_path):
    rep = report(exceptions=(exc("ValueError", "the real cause"),
                             exc("RuntimeError", "Engine core initialization failed. See root cause above.")))
    assert fires(tmp_path / "a", {"exception": {"message": "real cause"}}, rep)
    assert not fires(tmp_path / "b", {"exception": {"message": "real cause", "where": "root"}}, rep)
    assert fires(tmp_path / "c", {"exception": {"type": "RuntimeError", "where": "root"}}, rep)


def test_multiline_exception_message(tmp_path):
    rep = report(exceptions=(exc("ValueError", "first line\nsecond line with the detail"),))
    f = finding(tmp_path, {"exception": {"message": "with the (?P<what>detail)"}}, rep)
    assert f.captures == {"what": "detail"}


# ------------------------------------------------------------------ error, log, frame, text, title

def test_error_condition_covers_exception_lines_and_bare_error_lines(tmp_path):
    rep = report(exceptions=(exc("ValueError", "bad value here"),),
                 error_lines=("ERROR: Could not build wheels for vllm",))
    assert fires(tmp_path / "a", {"error": "ValueError: bad value"}, rep)
    assert fires(tmp_path / "b", {"error": "could not build wheels for (?P<pkg>\\w+)"}, rep)
    assert not fires(tmp_path / "c", {"error": "no such thing"}, rep)


def test_log_condition_evidence_is_the_matching_line(tmp_path):
    lines = tuple(f"INFO line {i}" for i in range(1000)) + ("WARNING # GPU blocks: 0, # CPU blocks: 512",)
    f = finding(tmp_path, {"log": "# GPU blocks: (?P<blocks>\\d+),"}, report(log_lines=lines))
    assert f.evidence[0].matched == "WARNING # GPU blocks: 0, # CPU blocks: 512"
    assert f.evidence[0].where == "log"
    assert f.captures == {"blocks": "0"}


def test_log_evidence_of_a_huge_line_is_bounded(tmp_path):
    line = "x" * 3_000 + " needle here " + "y" * 100_000
    f = finding(tmp_path / "a", {"log": "needle"}, report(log_lines=(line,)))
    assert "needle" in f.evidence[0].matched and len(f.evidence[0].matched) <= 240
    # a line is searched only up to MAX_LINE characters
    assert not fires(tmp_path / "b", {"log": "needle"}, report(log_lines=("x" * 60_000 + " needle",)))


def test_frame_condition(tmp_path):
    frames = (frame("/usr/lib/python3.12/asyncio/runners.py", "run"),
              frame("/usr/local/lib/python3.12/dist-packages/vllm/config/speculative.py", "_verify_args", 764))
    rep = report(exceptions=(exc("NotImplementedError", PP_MSG, frames),))
    f = finding(tmp_path / "a", {"frame": {"file": "vllm/config/speculative\\.py", "function": "_verify"}}, rep)
    assert f.evidence[0].matched.endswith("speculative.py:764 in _verify_args")
    assert not fires(tmp_path / "b", {"frame": {"file": "speculative\\.py", "function": "^run$"}}, rep)
    assert fires(tmp_path / "c", {"frame": {"function": "^run$"}}, rep)


def test_text_sources(tmp_path):
    rep = report(title="[Bug]: crash on startup with gemma", description="I run gemma on two cards",
                 body="I run gemma on two cards\nGPU 0: NVIDIA A100-SXM4-80GB")
    assert fires(tmp_path / "a", {"title": "crash on startup"}, rep)
    assert not fires(tmp_path / "b", {"title": "two cards"}, rep)
    assert fires(tmp_path / "c", {"text": {"pattern": "two cards"}}, rep)
    assert fires(tmp_path / "d", {"text": {"pattern": "crash on startup"}}, rep)     # any = title + description
    assert not fires(tmp_path / "e", {"text": {"pattern": "A100"}}, rep)           # env dump not in description
    assert fires(tmp_path / "f", {"text": {"pattern": "A100", "in": "body"}}, rep)
    assert not fires(tmp_path / "g", {"text": {"pattern": "crash", "in": "description"}}, rep)


def test_patterns_are_case_insensitive_unless_opted_out(tmp_path):
    rep = report(log_lines=("cuda out of memory",))
    assert fires(tmp_path / "a", {"log": "CUDA out of memory"}, rep)
    assert not fires(tmp_path / "b", {"log": "(?-i)CUDA out of memory"}, rep)


# ------------------------------------------------------------------ flags

FLAGS = {"pipeline_parallel_size": 4, "tensor_parallel_size": "2", "enforce_eager": True, "moe_backend": "Marlin",
         "speculative_config": {"method": "mtp", "num_speculative_tokens": 2},
         "compilation_config": '{"cudagraph_mode": "FULL", "level": 3}', "gpu_memory_utilization": 0.95}


@pytest.mark.parametrize(("test", "expected"), [
    ({"name": "pipeline_parallel_size", "gt": 1}, True),
    ({"name": "pipeline_parallel_size", "le": 1}, False),
    ({"name": "tensor_parallel_size", "ge": 2, "lt": 3}, True),         # numeric string
    ({"name": "tensor_parallel_size", "eq": 2}, True),
    ({"name": "moe_backend", "eq": "marlin"}, True),                    # case-insensitive
    ({"name": "moe_backend", "in": ["triton", "marlin"]}, True),
    ({"name": "moe_backend", "ne": "marlin"}, False),
    ({"name": "enforce_eager", "eq": True}, True),
    ({"name": "enforce_eager", "eq": False}, False),
    ({"name": "speculative_config", "present": True}, True),
    ({"name": "speculative_config.method", "eq": "mtp"}, True),
    ({"name": "speculative_config.num_speculative_tokens", "gt": 1}, True),
    ({"name": "speculative_config.model", "present": True}, False),
    ({"name": "speculative_config.model", "present": False}, True),
    ({"name": "compilation_config.cudagraph_mode", "eq": "full"}, True),  # JSON string decoded
    ({"name": "speculative_config", "matches": '"method": "mtp"'}, True),
    ({"name": "gpu_memory_utilization", "gt": 0.9}, True),
    ({"name": "data_parallel_size", "present": False}, True),
    ({"name": "data_parallel_size", "ne": 2}, False),                   # absent fails value tests
    ({"name": "kv_cache_dtype", "present": True}, False),
])
def test_flag_tests(tmp_path, test, expected):
    assert fires(tmp_path, {"flag": test}, report(flags=FLAGS)) is expected


def test_flag_evidence_names_flag_and_value(tmp_path):
    f = finding(tmp_path, {"flag": {"name": "speculative_config.method", "matches": "(?P<m>mtp|eagle)"}},
                report(flags=FLAGS))
    assert f.evidence[0].matched == "speculative_config.method=mtp" and f.evidence[0].where == "flag"
    assert f.captures == {"m": "mtp"}


# ------------------------------------------------------------------ environment

ENV = Environment(vllm_version="0.16.0rc1.dev136+gdad2d6a59", torch_version="2.9.0+cu128", cuda_version="12.8",
                  gpus=("NVIDIA GeForce RTX 5090",) * 2, platform="cuda", os="linux", python_version="3.12.3",
                  env_vars={"VLLM_USE_V1": "1", "CUDA_VISIBLE_DEVICES": "0,1"})


@pytest.mark.parametrize(("test", "expected"), [
    ({"field": "vllm_version", "version": "<0.16.0"}, True),     # a dev build of 0.16.0 predates 0.16.0
    ({"field": "vllm_version", "version": ">=0.15,<0.17"}, True),
    ({"field": "vllm_version", "version": ">=0.16.0"}, False),
    ({"field": "torch_version", "version": ">=2.9"}, True),       # local +cu128 ignored
    ({"field": "torch_version", "version": "==2.9.0"}, True),
    ({"field": "cuda_version", "version": "<12.8"}, False),
    ({"field": "platform", "eq": "cuda"}, True),
    ({"field": "platform", "in": ["rocm", "xpu"]}, False),
    ({"field": "os", "matches": "linux"}, True),
    ({"field": "gpu", "matches": "RTX 50\\d\\d"}, True),
    ({"field": "compute_capability", "ge": 12.0}, True),
    ({"field": "compute_capability", "lt": 8.0}, False),
    ({"field": "gpu_count", "ge": 2}, True),
    ({"field": "python_version", "version": ">=3.13"}, False),
    ({"field": "transformers_version", "present": False}, True),
    ({"field": "transformers_version", "version": ">=4.50"}, False),
    ({"field": "transformers_version", "version": ">=4.50", "if_unknown": True}, True),
    ({"field": "rocm_version", "present": True}, False),
])
def test_env_tests(tmp_path, test, expected):
    assert fires(tmp_path, {"env": test}, report(environment=ENV)) is expected


@pytest.mark.parametrize(("test", "expected"), [
    ({"name": "VLLM_USE_V1", "eq": "1"}, True),
    ({"name": "VLLM_USE_V1", "eq": "0"}, False),
    ({"name": "CUDA_VISIBLE_DEVICES", "matches": ","}, True),
    ({"name": "VLLM_WORKER_MULTIPROC_METHOD", "present": False}, True),
    ({"name": "VLLM_ATTENTION_BACKEND", "eq": "FLASHINFER"}, True),   # found in the text
    ({"name": "HF_TOKEN", "present": True}, False),
])
def test_env_var_tests(tmp_path, test, expected):
    rep = report(environment=ENV, body="VLLM_ATTENTION_BACKEND=FLASHINFER vllm serve my/model")
    assert fires(tmp_path, {"env_var": test}, rep) is expected


@pytest.mark.parametrize(("name", "cc"), [
    ("NVIDIA H100 80GB HBM3", 9.0), ("NVIDIA H20", 9.0), ("NVIDIA H200", 9.0), ("NVIDIA A100-SXM4-80GB", 8.0),
    ("NVIDIA A10G", 8.6), ("NVIDIA A10", 8.6), ("NVIDIA A40", 8.6), ("NVIDIA GeForce RTX 3090", 8.6),
    ("NVIDIA RTX A6000", 8.6), ("NVIDIA L4", 8.9), ("NVIDIA L40S", 8.9), ("NVIDIA GeForce RTX 4090", 8.9),
    ("NVIDIA RTX 6000 Ada Generation", 8.9), ("Tesla T4", 7.5), ("NVIDIA GeForce RTX 2080 Ti", 7.5),
    ("Tesla V100-SXM2-32GB", 7.0), ("NVIDIA B200", 10.0), ("NVIDIA GeForce RTX 5090", 12.0),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 12.0), ("NVIDIA GB10", 12.1), ("Tesla P100-PCIE-16GB", 6.0),
    ("Tesla P40", 6.1), ("AMD Instinct MI300X", None), ("Intel(R) Arc(TM) A770 Graphics", None), ("", None),
])
def test_compute_capability_table(name, cc):
    assert compute_capability(name) == cc


# ------------------------------------------------------------------ kind, architecture, model

def test_kind_architecture_model(tmp_path):
    rep = report(kind="installation", model="Qwen/Qwen3-Next-80B-A3B-Instruct",
                 architectures=("Qwen3NextForCausalLM", "Qwen3NextMTP"),
                 commands=(Command(raw="vllm serve other/model", entrypoint="vllm-serve", model="other/model"),))
    assert fires(tmp_path / "a", {"kind": "installation"}, rep)
    assert fires(tmp_path / "b", {"kind": ["bug", "installation"]}, rep)
    assert not fires(tmp_path / "c", {"kind": "bug"}, rep)
    f = finding(tmp_path / "d", {"architecture": "(?P<draft>\\w+MTP)$"}, rep)
    assert f.captures == {"draft": "Qwen3NextMTP"}
    assert fires(tmp_path / "e", {"model": "qwen3-next"}, rep)
    assert fires(tmp_path / "f", {"model": "^other/"}, rep)
    assert not fires(tmp_path / "g", {"model": "llama"}, rep)


# ------------------------------------------------------------------ combinators

def test_all_any_not(tmp_path):
    rep = report(exceptions=(exc("NotImplementedError", PP_MSG),), flags={"pipeline_parallel_size": 2})
    pp = {"exception": {"message": "Pipeline parallelism"}}
    spec = {"flag": {"name": "speculative_config", "present": True}}
    assert fires(tmp_path / "a", {"all": [pp, {"not": spec}]}, rep)
    assert not fires(tmp_path / "b", {"all": [pp, spec]}, rep)
    assert fires(tmp_path / "c", {"any": [spec, pp]}, rep)
    assert not fires(tmp_path / "d", {"not": {"any": [spec, pp]}}, rep)
    f = finding(tmp_path / "e", {"all": [pp, {"flag": {"name": "pipeline_parallel_size", "gt": 1}}]}, rep)
    assert [e.where for e in f.evidence] == ["exception", "flag"]


def test_first_capture_wins_and_captures_merge(tmp_path):
    rep = report(log_lines=("model foo size 7b",), exceptions=(exc("ValueError", "model bar"),))
    f = finding(tmp_path, {"all": [{"exception": {"message": "model (?P<name>\\w+)"}},
                                   {"log": "model (?P<name>\\w+) size (?P<size>\\w+)"}]}, rep)
    assert f.captures == {"name": "bar", "size": "7b"}
