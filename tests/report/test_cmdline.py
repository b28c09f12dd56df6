from pathlib import Path

import pytest

from bot.report.cmdline import extract_commands, merge_flags, model_and_architectures, parse_non_default_args
from bot.report.logs import clean_log
from bot.report.shell import parse_flags, tokenize

FIXTURES = Path(__file__).parent.parent / "fixtures" / "logs"


def commands(body: str):
    return extract_commands(body, tuple(e.text for e in clean_log(body)))


def only(body: str):
    (cmd,) = commands(body)
    return cmd


@pytest.mark.parametrize("args", [
    ["-tp", "4"], ["--tensor-parallel-size=4"], ["--tensor_parallel_size", "4"], ["--tensor-parallel-size", "4"],
])
def test_flag_spellings_normalise_to_one_key(args):
    assert parse_flags(args) == ([], {"tensor_parallel_size": 4})


def test_short_aliases_booleans_numbers_and_json():
    positional, flags = parse_flags([
        "Qwen/Qwen3-8B", "-pp", "2", "-dp", "2", "-q", "fp8", "-O3", "--enforce-eager", "--no-enable-prefix-caching",
        "--gpu-memory-utilization", "0.85", "--speculative-config", '{"method":"mtp","num_speculative_tokens":1}',
        "--hf-overrides", "{'rope_scaling': {'factor': 4.0}}", "-ep", "--trust-remote-code", "true",
    ])
    assert positional == ["Qwen/Qwen3-8B"]
    assert flags == {
        "pipeline_parallel_size": 2, "data_parallel_size": 2, "quantization": "fp8", "compilation_config": 3,
        "enforce_eager": True, "enable_prefix_caching": False, "gpu_memory_utilization": 0.85,
        "speculative_config": {"method": "mtp", "num_speculative_tokens": 1},
        "hf_overrides": {"rope_scaling": {"factor": 4.0}}, "enable_expert_parallel": True, "trust_remote_code": True,
    }


def test_dotted_flags_nest():
    _, flags = parse_flags(["--compilation-config.cudagraph_mode", "FULL", "-cc.level=3", "--max-num-seqs", "8"])
    assert flags == {"compilation_config": {"cudagraph_mode": "FULL", "level": 3}, "max_num_seqs": 8}


def test_tokenizer_quotes_operators_and_broken_quotes():
    assert tokenize("a 'b c' \"d \\\" e\" > log 2>&1 &") == ["a", "b c", 'd " e', None, "log", None, "1", None]
    assert tokenize("--x '{\"a\": 1") == ["--x", '{"a": 1']


def test_vllm_serve_with_env_prefix_continuations_and_redirect():
    body = """```bash
CUDA_VISIBLE_DEVICES=0,1 nohup vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-32B \\
    --tensor-parallel-size 2 \\
    --max-model-len=32768 \\
    --enable-reasoning --reasoning-parser deepseek_r1 > server.log 2>&1 &
```"""
    cmd = only(body)
    assert cmd.entrypoint == "vllm-serve"
    assert cmd.model == "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B"
    assert cmd.flags == {"model": "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "tensor_parallel_size": 2,
                         "max_model_len": 32768, "enable_reasoning": True, "reasoning_parser": "deepseek_r1"}


def test_windows_caret_continuation_and_powershell_prompt():
    cmd = commands((FIXTURES / "windows.log").read_text())[0]
    assert cmd.entrypoint == "api-server"
    assert cmd.model == "C:\\models\\phi-3-mini"
    assert cmd.flags["dtype"] == "half" and cmd.flags["max_model_len"] == 4096


def test_api_server_module_forms():
    assert only("python3 -m vllm.entrypoints.api_server --model facebook/opt-125m --port 8001").entrypoint == \
        "api-server"
    cmd = only("$ python -m vllm.entrypoints.openai.api_server --model=/data/llama --served-model-name a b -tp 8")
    assert (cmd.model, cmd.flags["served_model_name"], cmd.flags["tensor_parallel_size"]) == \
        ("/data/llama", ["a", "b"], 8)


def test_vllm_bench():
    cmd = only("vllm bench serve --model Qwen/Qwen3-8B --dataset-name random --random-input-len 1024 --num-prompts 200")
    assert cmd.entrypoint == "vllm-bench"
    assert cmd.model == "Qwen/Qwen3-8B" and cmd.flags["num_prompts"] == 200


def test_docker_run_arguments_after_the_image():
    body = """docker run --runtime nvidia --gpus all -v ~/.cache/huggingface:/root/.cache/huggingface \\
  --env "HUGGING_FACE_HUB_TOKEN=$HF_TOKEN" -p 8000:8000 --ipc=host --rm \\
  vllm/vllm-openai:v0.8.5 --model google/gemma-3-27b-it --max-model-len 8192 -tp 2"""
    cmd = only(body)
    assert cmd.entrypoint == "docker"
    assert cmd.model == "google/gemma-3-27b-it"
    assert cmd.flags == {"model": "google/gemma-3-27b-it", "max_model_len": 8192, "tensor_parallel_size": 2}
    cmd = only("docker run --gpus all vllm/vllm-openai:latest Qwen/Qwen3-0.6B --enforce-eager")
    assert cmd.model == "Qwen/Qwen3-0.6B" and cmd.flags["enforce_eager"] is True


def test_compose_command_list_and_single_string():
    cmd = [c for c in commands((FIXTURES / "compose.md").read_text()) if c.entrypoint == "compose"][0]
    assert cmd.model == "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
    assert cmd.flags["tokenizer_mode"] == "mistral"
    assert cmd.flags["tensor_parallel_size"] == 2
    assert cmd.flags["limit_mm_per_prompt"] == {"image": 4}
    assert cmd.flags["enable_auto_tool_choice"] is True
    yaml_string = """services:
  vllm:
    image: vllm/vllm-openai:latest
    command: --model Qwen/Qwen2.5-7B-Instruct --gpu-memory-utilization 0.8 --enable-lora
"""
    cmd = only(yaml_string)
    assert (cmd.entrypoint, cmd.model, cmd.flags["gpu_memory_utilization"], cmd.flags["enable_lora"]) == \
        ("compose", "Qwen/Qwen2.5-7B-Instruct", 0.8, True)
    k8s = """        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "16384"]"""
    cmd = only(k8s)
    assert cmd.flags == {"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 16384}


def test_argument_lists_pasted_without_their_key_and_folded_command_scalars():
    # a Kubernetes container's `args:` items, pasted alone (quoted `--flag=value` items, or flags and their values)
    k8s = """Other details of the deployment:
```
        - '--gpu-memory-utilization=0.96'
        - '--tensor-parallel-size=2'
        - '--enable-chunked-prefill'
        - '--tool-call-parser=llama3_json'
```"""
    assert only(k8s).flags == {"gpu_memory_utilization": 0.96, "tensor_parallel_size": 2,
                               "enable_chunked_prefill": True, "tool_call_parser": "llama3_json"}
    values = "```\n- --model\n- Qwen/Qwen3-8B\n- --max-model-len\n- '8192'\n- --enforce-eager\n```"
    cmd = only(values)
    assert (cmd.model, cmd.flags) == ("Qwen/Qwen3-8B", {"model": "Qwen/Qwen3-8B", "max_model_len": 8192,
                                                         "enforce_eager": True})
    # prose bullets naming flags, or one flag, are not an argument list
    assert commands("I tried:\n- --max-model-len: lowering it did not help\n- --enforce-eager too\n") == ()
    assert commands("What I changed:\n- --enforce-eager\n\nnothing else helped") == ()
    # items under a key that is not an argument list's are that key's (ports, env), not arguments
    assert commands("    ports:\n      - --publish-all\n      - --foo\n") == ()
    # compose `command:` written as a plain scalar over the following, more indented lines
    folded = """```yaml
services:
  vllm:
    image: vllm/vllm-openai:latest
    command:
      --model /models/Qwen1.5-14B-Chat-GPTQ-Int4
      --tensor-parallel-size 4
      --quantization gptq
    ports:
      - "8007:8007"
```"""
    cmd = only(folded)
    assert (cmd.entrypoint, cmd.model) == ("compose", "/models/Qwen1.5-14B-Chat-GPTQ-Int4")
    assert cmd.flags["tensor_parallel_size"] == 4 and cmd.flags["quantization"] == "gptq"


def test_python_llm_keywords_are_read_without_evaluating():
    body = """```python
from vllm import LLM, SamplingParams

model_path = "/mnt/models/Llama-3-70B"
llm = LLM(
    model=model_path,
    tensor_parallel_size=4,  # four A100s
    gpu_memory_utilization=0.9,
    enforce_eager=True,
    max_model_len=8192,
    hf_overrides={"max_position_embeddings": 8192},
    dtype=torch.float16,
    seed=__import__("os").system("echo pwned"),
)
```"""
    cmd = only(body)
    assert cmd.entrypoint == "python-llm"
    assert cmd.model == "/mnt/models/Llama-3-70B"
    assert cmd.flags["tensor_parallel_size"] == 4 and cmd.flags["enforce_eager"] is True
    assert cmd.flags["hf_overrides"] == {"max_position_embeddings": 8192}
    assert cmd.flags["dtype"] == "torch.float16"
    assert cmd.flags["seed"] == "__import__('os').system('echo pwned')"


def test_engine_args_and_repl_and_broken_snippets():
    cmd = only(">>> args = AsyncEngineArgs(model='mistralai/Mistral-7B-v0.1', max_num_seqs=16)")
    assert cmd.flags == {"model": "mistralai/Mistral-7B-v0.1", "max_num_seqs": 16}
    assert commands("llm = LLM(model='x', tensor_parallel_size=") == ()
    assert commands("llm = LLM(model='x' tensor_parallel_size=2)") == ()


def test_prose_mentioning_vllm_serve_is_not_a_command():
    assert commands("When I run vllm serve and then send a request, it hangs.") == ()


def test_non_default_args_and_truncation():
    line = ("non-default args: {'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 4, "
            "'speculative_config': {'method': 'eagle3', 'model': 'x', 'num_speculative_tokens': 3}, 'api_key': '***'}")
    nda = parse_non_default_args((line,))
    assert nda["tensor_parallel_size"] == 4 and nda["speculative_config"]["method"] == "eagle3"
    cut = parse_non_default_args(("non-default args: {'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 4, "
                                  "'max_model_len': 327",))
    assert cut == {"model": "Qwen/Qwen3-32B", "tensor_parallel_size": 4}
    assert parse_non_default_args(("non-default args: {'model': <function f at 0x7f>",)) is None
    assert parse_non_default_args(("non-default args: __import__('os').system('x')",)) is None


def test_namespace_line():
    line = ("args: Namespace(host=None, port=8000, model='meta-llama/Llama-2-7b-hf', tensor_parallel_size=2, "
            "enforce_eager=False, served_model_name=None, middleware=[], ssl_cert_reqs=<VerifyMode.CERT_NONE: 0>)")
    nda = parse_non_default_args((line,))
    assert nda == {"port": 8000, "model": "meta-llama/Llama-2-7b-hf", "tensor_parallel_size": 2,
                   "enforce_eager": False, "middleware": []}
    cut = parse_non_default_args(("args: Namespace(host=None, port=8000, model='m', tensor_parallel_s",))
    assert cut == {"port": 8000, "model": "m"}


def test_merge_flags_commands_in_order_and_non_default_args_win():
    a = only("vllm serve org/m --max-model-len 4096 --tensor-parallel-size 2")
    b = only("vllm serve org/m --max-model-len 8192")
    assert merge_flags((a, b), {"tensor_parallel_size": 4}) == {
        "model": "org/m", "max_model_len": 8192, "tensor_parallel_size": 4}


def test_model_and_architectures_from_logs():
    lines = tuple(e.text for e in clean_log((FIXTURES / "engine_core_nested.log").read_text()))
    nda = parse_non_default_args(lines)
    assert model_and_architectures(lines, (), nda) == ("meta-llama/Llama-3.3-70B-Instruct", ("LlamaForCausalLM",))
    v0 = tuple(e.text for e in clean_log((FIXTURES / "v0_worker.log").read_text()))
    assert model_and_architectures(v0, (), None) == ("mistralai/Mistral-7B-Instruct-v0.3", ())
    logo = ("  █▄█▀ █     █     █     █  model   /data/Qwen3-8B", "Resolved architecture: Qwen3ForCausalLM",
            "Resolved architecture: Qwen3ForCausalLM")
    assert model_and_architectures(logo, (), None) == ("/data/Qwen3-8B", ("Qwen3ForCausalLM",))


def test_prose_word_after_vllm_serve_is_not_the_model():
    cmd = only("I start vllm serve with --max-model-len 4096 and it fails")
    assert cmd.model is None and cmd.flags == {"max_model_len": 4096}
    assert only("vllm serve $MODEL_PATH --port 8000").model == "$MODEL_PATH"


def test_dockerfile_exec_form_and_k8s_lists():
    cmd = only('ENTRYPOINT ["vllm", "serve", "Qwen/Qwen3-4B", "--max-model-len", "8192", "--enable-prefix-caching"]')
    assert (cmd.entrypoint, cmd.model, cmd.flags["max_model_len"], cmd.flags["enable_prefix_caching"]) == \
        ("docker", "Qwen/Qwen3-4B", 8192, True)
    k8s = """      containers:
        - name: vllm
          command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
          args:
            - "--model=/models/llama"
            - "--tensor-parallel-size"
            - "4"
"""
    (cmd,) = [c for c in commands(k8s) if c.flags]
    assert cmd.flags == {"model": "/models/llama", "tensor_parallel_size": 4}


def test_benchmark_scripts_and_other_entrypoints():
    cmd = only("python benchmarks/benchmark_throughput.py --model meta-llama/Llama-3.1-8B --input-len 512 -tp 2")
    assert (cmd.entrypoint, cmd.model) == ("vllm-bench", "meta-llama/Llama-3.1-8B")
    assert cmd.flags["tensor_parallel_size"] == 2
    cmd = only("vllm chat --url http://localhost:8000/v1 --model-name qwen")
    assert cmd.entrypoint == "other"


def test_several_attempts_flags_come_from_the_command_that_non_default_args_confirm():
    a = only("vllm serve org/m --dtype float16 --max-model-len 4096")
    b = only("vllm serve org/m --dtype bfloat16 --enforce-eager")
    flags = merge_flags((a, b), {"model": "org/m", "dtype": "float16"})
    assert flags == {"model": "org/m", "dtype": "float16", "max_model_len": 4096}


def test_several_attempts_without_a_log_take_the_command_before_the_error():
    a = only("vllm serve org/m --dtype float16")
    b = only("vllm serve org/m --enforce-eager")
    assert merge_flags((a, b), None, where=lambda: ((10, 300), 120)) == {"model": "org/m", "dtype": "float16"}
    assert merge_flags((a, b), None, where=lambda: ((10, 300), None)) == {"model": "org/m", "enforce_eager": True}


def test_offsets_are_computed_only_when_several_attempts_are_left_to_choose_from():
    a = only("vllm serve org/m --dtype float16")
    b = only("vllm serve org/m --enforce-eager")

    def unneeded() -> tuple[tuple[int, ...], int | None]:
        raise AssertionError("offsets computed without need")

    assert merge_flags((a,), None, where=unneeded) == {"model": "org/m", "dtype": "float16"}
    assert merge_flags((a, b), {"dtype": "float16"}, where=unneeded) == {"model": "org/m", "dtype": "float16"}


def test_parse_reads_the_flags_of_the_failing_attempt():
    from bot.report import parse

    body = """### 🐛 Describe the bug

First attempt:

vllm serve acme/orca-13b-awq -tp 2 --dtype bfloat16 --port 9001
Value error, torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]

Second attempt, other error:

vllm serve acme/orca-13b-awq -tp 2 --dtype float16 --port 9001 --enforce-eager
Value error, The model type 'orca' does not support float16. Reason: Numerical instability.
"""
    r = parse("[Bug]: AWQ Orca does not start with either dtype", body)
    assert r.flags["dtype"] == "bfloat16"
    assert "enforce_eager" not in r.flags
