"""Topic labels: from what the issue is about (failure, flags, title, platform, kind, rules), never from words
that merely appear in an environment dump, a pip list or an engine-config log line."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from bot import labels as lab
from bot.decision import Finding
from bot.labels import TOPICS, repo_labels, topic_labels
from bot.report import parse
from bot.report.model import Environment, ExceptionInfo, Frame, RaiseSite, Report

CUDA_ENV = """\
### Your current environment

<details>
<summary>The output of <code>python collect_env.py</code></summary>

```text
Collecting environment information...
==============================
        System Info
==============================
OS                           : Ubuntu 22.04.4 LTS (x86_64)
GCC version                  : (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0
==============================
       PyTorch Info
==============================
PyTorch version              : 2.8.0+cu128
Is debug build               : False
CUDA used to build PyTorch   : 12.8
ROCM used to build PyTorch   : N/A
==============================
       CUDA / GPU Info
==============================
Is CUDA available            : True
CUDA runtime version         : 12.8.93
GPU models and configuration :
GPU 0: NVIDIA L40S
GPU 1: NVIDIA L40S
Nvidia driver version        : 565.57.01
cuDNN version                : Could not collect
HIP runtime version          : N/A
MIOpen runtime version       : N/A
==============================
Versions of relevant libraries
==============================
[pip3] flashinfer-python==0.2.8
[pip3] numpy==2.2.6
[pip3] torch==2.8.0+cu128
[pip3] transformers==4.56.1
[pip3] triton==3.4.0
[pip3] xgrammar==0.1.23
[pip3] lora-helper==0.3.0
[conda] Could not collect
==============================
         vLLM Info
==============================
ROCM Version                 : Could not collect
vLLM Version                 : 0.11.0
vLLM Build Flags:
  CUDA Archs: Not Set; ROCm: Disabled
==============================
     Environment Variables
==============================
VLLM_USE_V1=1
VLLM_ROCM_USE_AITER=0
VLLM_USE_FLASHINFER_MOE_FP8=0
NCCL_CUMEM_ENABLE=0
```

</details>
"""

ENGINE_CONFIG_LOG = (
    "(EngineCore_DP0 pid=412) INFO 09-30 08:14:02 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with "
    "config: model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=None, tokenizer='meta-llama/"
    "Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=131072, tensor_parallel_size=2, "
    "pipeline_parallel_size=1, quantization=None, enforce_eager=False, kv_cache_dtype=auto, "
    "structured_outputs_config=StructuredOutputsConfig(backend='auto'), enable_prefix_caching=True"
)


def bug(title: str, description: str, env: str = CUDA_ENV) -> Report:
    return parse(title, f"{env}\n### 🐛 Describe the bug\n\n{description}\n")


def test_seed_shaped_pp_with_mtp() -> None:
    r = bug("[Bug]: Qwen3-Next fails to start with -pp 2 and MTP", """\
```bash
vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --pipeline-parallel-size 2 \\
  --speculative-config '{"method": "qwen3_next_mtp", "num_speculative_tokens": 2}'
```
```
(APIServer pid=2211) Traceback (most recent call last):
(APIServer pid=2211)   File "/usr/local/lib/python3.12/dist-packages/vllm/config/model.py", line 1068, in verify
(APIServer pid=2211)     raise NotImplementedError(
(APIServer pid=2211) NotImplementedError: Pipeline parallelism is not supported for this model. Supported models \
implement the `SupportsPP` interface.
```""")
    got = topic_labels(r, ())
    assert {"pipeline-parallel", "speculative-decoding"} <= set(got)
    assert not {"quantization", "rocm", "structured-output", "lora", "moe"} & set(got)


def test_env_dump_pip_list_and_engine_config_give_no_labels() -> None:
    """The incumbent labeller's classic false positives: quantization=None, rocm lines of a CUDA box, xgrammar
    in [pip3], VLLM_ROCM_* / *_MOE_* env vars."""
    r = bug("[Bug]: server returns empty responses after a few requests", f"""\
After ~20 requests the server answers with empty strings.

```
{ENGINE_CONFIG_LOG}
(APIServer pid=400) INFO 09-30 08:15:10 [api_server.py:1971] Starting vLLM API server 0 on http://0.0.0.0:8000
```
""")
    assert r.environment.platform == "cuda"
    assert topic_labels(r, ()) == ()


def test_words_pasted_outside_the_env_section_are_not_prose() -> None:
    description = (
        "Here is my pip freeze:\n\nxgrammar==0.1.23\nbitsandbytes==0.45.0\n[pip3] outlines==0.1.11\n"
        "ROCM Version: Could not collect\nHIP runtime version: N/A\nVLLM_ROCM_USE_AITER=0\n"
        + ENGINE_CONFIG_LOG + "\n\nThe model answers slowly sometimes but mostly it just works."
    )
    prose = "\n".join(lab.prose_lines(description))
    assert "xgrammar" not in prose and "bitsandbytes" not in prose and "outlines" not in prose
    assert "ROCM" not in prose and "HIP" not in prose and "quantization" not in prose
    assert "answers slowly" in prose


def test_rocm_platform_labels_a_bug_on_rocm() -> None:
    rocm_env = CUDA_ENV.replace("2.8.0+cu128", "2.8.0+rocm6.4").replace(
        "CUDA used to build PyTorch   : 12.8", "CUDA used to build PyTorch   : N/A").replace(
        "ROCM used to build PyTorch   : N/A", "ROCM used to build PyTorch   : 6.4.43483").replace(
        "GPU 0: NVIDIA L40S\nGPU 1: NVIDIA L40S", "AMD Instinct MI300X (gfx942:sramecc+:xnack-)").replace(
        "ROCM Version                 : Could not collect", "ROCM Version                 : 6.4.43483")
    r = bug("[Bug]: engine dies during warmup", "RuntimeError: HIP error: invalid device function", rocm_env)
    assert r.environment.platform == "rocm"
    assert "rocm" in topic_labels(r, ())


def test_kind_labels() -> None:
    inst = parse("[Installation]: pip install fails on aarch64", "### How you are installing vllm\n\n"
                 "```sh\npip install vllm\n```\nERROR: Could not build wheels for vllm\n")
    assert "installation" in topic_labels(inst, ())
    model = parse("[New Model]: Support FooLM-7B", "### The model to consider.\n\nhttps://huggingface.co/foo/FooLM-7B\n")
    assert topic_labels(model, ()) == ("new-model",)
    perf = parse("[Performance]: decode got worse after upgrading", "### Report of performance regression\n\n"
                 "Output tokens/s dropped from 2400 to 1800 on the same H100.\n")
    assert "performance" in topic_labels(perf, ())


def test_installation_template_yields_to_a_diagnosis_of_something_else() -> None:
    r = parse("[Installation]: ValueError: No supported config format found in my-org/private-model",
              "```\nValueError: No supported config format found in my-org/private-model\n```\n")
    assert "installation" in topic_labels(r, ())
    gated = Finding("config-not-found", "t", (), 0.9, "e", "w")
    assert "installation" not in topic_labels(r, (gated,))
    build = Finding("build-fails", "t", ("installation",), 0.9, "e", "w")
    assert "installation" in topic_labels(r, (build,))
    unsure = Finding("rule-b", "t", ("frontend",), 0.3, "e", "w")
    assert "installation" in topic_labels(r, (unsure,))


def test_finding_labels_are_used_when_confident() -> None:
    r = bug("[Bug]: crash on start", "ValueError: something odd")
    sure = Finding("rule-a", "t", ("structured-output",), 0.8, "e", "w")
    unsure = Finding("rule-b", "t", ("lora",), 0.3, "e", "w")
    assert topic_labels(r, (sure, unsure)) == ("structured-output",)


def test_failure_and_frames_of_the_root_cause() -> None:
    def report(exc: ExceptionInfo, **kw) -> Report:
        return Report(title="[Bug]: crash", title_text="crash", kind="bug", kind_source="title", body="",
                      exceptions=(exc,), **kw)

    def frames(*paths: str) -> tuple[Frame, ...]:
        return tuple(Frame(p, 1, "f", "/vllm/" in p) for p in paths)

    spec = ExceptionInfo("AttributeError", "'EagleProposer' object has no attribute 'positions'",
                         frames("/x/vllm/v1/engine/core.py", "/x/vllm/v1/spec_decode/eagle.py"))
    assert "speculative-decoding" in topic_labels(report(spec), ())
    lora = ExceptionInfo("ValueError", "rank 64 is greater than max_lora_rank 16",
                         frames("/x/vllm/lora/peft_helper.py"))
    assert "lora" in topic_labels(report(lora), ())
    oom = ExceptionInfo("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB.",
                        frames("/x/vllm/v1/worker/gpu_model_runner.py", "/x/torch/nn/modules/module.py"))
    assert topic_labels(report(oom), ()) == ("memory",)
    compile_err = ExceptionInfo("torch._dynamo.exc.BackendCompilerFailed", "backend='inductor' raised: ...",
                                frames("/x/vllm/compilation/backends.py", "/x/torch/_inductor/compile_fx.py"))
    assert "torch.compile" in topic_labels(report(compile_err), ())
    # a frame in the OpenAI server on the way to somewhere else is not a frontend problem
    through = ExceptionInfo("ValueError", "boom", frames("/x/vllm/entrypoints/openai/api_server.py",
                                                         "/x/vllm/v1/engine/core.py"))
    assert topic_labels(report(through), ()) == ()


def test_a_flag_alone_is_not_the_topic() -> None:
    r = bug("[Bug]: OOM while loading Llama-3.1-70B", """\
```
vllm serve meta-llama/Llama-3.1-70B-Instruct -pp 2 --enable-lora --quantization fp8 --tool-call-parser hermes
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 44.39 GiB
```""")
    got = topic_labels(r, ())
    assert "memory" in got
    assert not {"pipeline-parallel", "lora", "tool-calling"} & set(got)


def test_flag_plus_failure_mention() -> None:
    r = bug("[Bug]: adapter fails to load", """\
```
vllm serve Qwen/Qwen2.5-7B-Instruct --enable-lora --lora-modules sql=/adapters/sql
ValueError: While loading /adapters/sql, expected target modules in ['q_proj'] but received ['lm_head']
```""")
    assert r.flags.get("enable_lora")
    assert "lora" not in topic_labels(r, ())  # the flag alone, the failure does not say LoRA
    r2 = bug("[Bug]: adapter fails to load", """\
```
vllm serve Qwen/Qwen2.5-7B-Instruct --enable-lora --lora-modules sql=/adapters/sql
ValueError: LoRA rank 64 is greater than max_lora_rank 16.
```""")
    assert "lora" in topic_labels(r2, ())


@pytest.mark.parametrize(("title", "want", "not_want"), [
    ("[Usage]: How to use tool calling with Qwen3 and the hermes parser", {"tool-calling"}, set()),
    ("[Bug]: guided_json ignores maxItems in the json schema", {"structured-output"}, set()),
    ("[Bug]: Qwen2.5-VL-7B crashes when the image is large", {"multi-modality"}, set()),
    ("[Bug]: RuntimeError: CUDA error: no kernel image is available for execution on the device",
     {"nvidia-compat"}, {"multi-modality"}),
    ("[Bug]: the ROCm container image aborts with a HIP error on MI210", {"rocm"}, {"multi-modality"}),
    ("[Bug]: EAGLE-3 speculative decoding lowers acceptance rate", {"speculative-decoding"}, set()),
    ("[Bug]: GPTQ-Int4 MoE checkpoint crashes while loading", {"quantization", "moe"}, set()),
    ("[Usage]: multi-node serving over a Ray cluster of two 8-GPU boxes", {"multi-node", "ray"}, set()),
    ("[Bug]: High CPU usage of the API server process", set(), {"cpu"}),
    ("[Bug]: cannot launch the server on an M1 Mac (Apple silicon)", {"cpu"}, set()),
    ("[Usage]: 部署Qwen3-8B时No available memory for the cache blocks", {"memory"}, {"kv-cache"}),
    ("[Bug]: Mixtral-8x7B slower than expected", {"performance"}, set()),
    ("[Feature]: Support prefix caching for Mamba models", {"kv-cache"}, set()),
    # the old switch that put the workers on Ray; expert parallelism's all-to-all kernels; DeepGEMM's FP8 kernels
    ("[Bug]: with worker_use_ray and tensor_parallel_size 2 the process hangs", {"ray"}, set()),
    ("[Bug]: all2all hangs with DeepEP on two nodes", {"moe"}, set()),
    ("[Bug]: DeepGEMM fails at start-up with Qwen3", {"quantization"}, set()),
    # nodes x GPUs per node, or more data-center GPUs than a node holds
    ("[Bug]: DeepSeek-R1 on 2 * 8 H100 fails to start", {"multi-node"}, set()),
    ("[Usage]: how to serve DeepSeek-R1 on H800*16", {"multi-node"}, set()),
    ("[Bug]: Qwen2.5-72B on 8xH100 fails to start", set(), {"multi-node"}),
    ("[Usage]: how to run DeepSeek-V3 on 2 H100 nodes?", {"multi-node"}, set()),
    ("[Usage]: tensor parallel across multiple single-GPU machines?", {"multi-node"}, set()),
    ("[Bug]: the server hangs on a node with 8 GPUs", set(), {"multi-node"}),
    # more GPUs than a node holds by the title's tensor and pipeline parallel sizes
    ("[Bug]: deploying DeepSeek-R1 with pp=2, tp=16 hangs", {"multi-node"}, set()),
    ("[Bug]: timeouts with tp=8, pp=4 since 0.10.2", {"multi-node"}, set()),
    ("[Bug]: tensor-parallel-size 16 fails at start-up", {"multi-node"}, set()),
    ("[Bug]: Qwen3-32B with tp=4, pp=2 gives wrong answers", set(), {"multi-node"}),
    # building vLLM is installing it
    ("[Bug]: build vllm on a Mac: libc++abi error", {"installation"}, set()),
    ("[Bug]: compiling the source code fails for ROCm 6.2", {"installation"}, set()),
    # the OpenAI server misnamed; how fast something loads
    ("[Bug]: requests to the OpenAPI server return 500 with the CPU backend", {"frontend"}, set()),
    ("[Bug]: model loading speed dropped by half since 0.9", {"performance"}, set()),
    # quantization formats and toolkits beyond the common ones
    ("[Feature]: support HQQ checkpoints", {"quantization"}, set()),
    ("[Feature]: serve optimum-quanto checkpoints", {"quantization"}, set()),
    ("[Feature]: upstream the Quark format", {"quantization"}, set()),
    # a deployment over several machines, asked in Chinese
    ("[Usage]: 如何用vllm进行多机部署？", {"multi-node"}, set()),
    # the request's generation parameters; metrics the server no longer exports
    ("[Usage]: same generate params give different results than transformers", {"frontend"}, set()),
    ("[Bug]: missing metrics in the V1 engine", {"frontend"}, set()),
    # a crash during a benchmark: the benchmark was only the load
    ("[Bug]: the engine dies (EngineDeadError) during a high-concurrency benchmark", set(), {"performance"}),
    ("[Bug]: benchmark_serving.py reports half the throughput of 0.9", {"performance"}, set()),
    ("[Bug]: benchmark_latency.py hangs with --n 2", {"performance"}, set()),
    # the OpenAI server's request objects, its 4xx answers, its handlers in an error
    ("[Bug]: invalid ChatCompletionRequest body gives a 500", {"frontend"}, set()),
    ("[Bug]: 400 error when sending many requests at once", {"frontend"}, set()),
    ("[Bug]: TypeError: create_chat_completion() missing 1 required keyword-only argument", {"frontend"}, set()),
    # a title mostly in CJK is no placeholder: it is read, not replaced by the description's first line
    ("[Bug]: 使用2 * 8 A100部署Qwen3报错", {"multi-node"}, set()),
    # several GPUs used another way than tensor parallelism
    ("[Usage]: how to run data parallelism with multiple GPUs?", set(), {"tensor-parallel"}),
    ("[Usage]: pipeline-parallel-size 4 but only one of the GPUs is busy", {"pipeline-parallel"}, {"tensor-parallel"}),
    ("[Usage]: start the server on multiple GPUs with torchrun", set(), {"tensor-parallel"}),
    ("[Bug]: tensor parallel and data parallel on multiple GPUs hang", {"tensor-parallel"}, set()),
    ("[Bug]: the server hangs on multiple GPUs", {"tensor-parallel"}, set()),
    # the Ray executor's own class names
    ("[Bug]: generation hangs with RayDistributedExecutor after a few hours", {"ray"}, set()),
    ("[Bug]: RayWorkerWrapper dies at start-up", {"ray"}, set()),
    # a MiniCPM vision/omni model with its version between the name and the V/O
    ("[New Model]: please support MiniCPM-4.5V", {"multi-modality"}, set()),
    ("[Bug]: minicpm-4o crashes with a long prompt", {"multi-modality"}, set()),
    # the offline API named, asked about another feature: that feature's question
    ("[Usage]: how to do offline inference with pipeline parallelism on two nodes", {"pipeline-parallel"},
     {"frontend"}),
    ("[Feature]: data parallel in offline inference", set(), {"frontend"}),
    # ...and what is asked of that API is the frontend's
    ("[Usage]: streaming tokens in offline inference", {"frontend"}, set()),
    ("[Usage]: an OpenAI-like chat API in offline inference", {"frontend"}, set()),
    # a project named after a model family is not that model
    ("[Feature]: accept llama.cpp grammars for constrained output", {"structured-output"}, {"new-model"}),
    ("Add support for Llama-cpp-python grammar", set(), {"new-model"}),
    ("[Feature]: new model support needed", {"new-model"}, set()),
    # giving the model an image is a multimodal input; a vision encoder in the model's name
    ("[Usage]: sending an image to the chat endpoint", {"multi-modality"}, set()),
    ("[New Model]: org/GeoChat-7B-CLIP-ViT", {"multi-modality"}, set()),
    ("[Feature]: SigLIP 2 vision tower", {"multi-modality"}, set()),
    # a vision-language model written apart, the title about a feature it went through
    ("[Bug]: json schema is ignored with qwen 2.5 vl", {"structured-output"}, {"multi-modality"}),
    ("[Bug]: qwen 2.5 vl crashes at start-up", {"multi-modality"}, set()),
    # how long the server takes to come up; vLLM's own compile integration
    ("[RFC]: cold start improvements", {"performance"}, set()),
    ("[Performance]: startup time of 60 s on every pod", {"performance"}, set()),
    ("[Feature]: reduce vLLM-compile overhead", {"torch.compile"}, set()),
    # how much GPU memory the server takes
    ("[Bug]: Consuming gpu memory extremely when run server with docker", {"memory"}, set()),
    ("[Usage]: vllm occupies all of the VRAM for a 1B model", {"memory"}, set()),
    # a model that fails to load for lack of memory is the memory's question, not the model's
    ("[Bug]: unable to load Mistral on this instance, likely memory issue", {"memory"}, {"new-model"}),
    # a family and its version asked for
    ("[Feature]: deepseek v4 support", {"new-model"}, set()),
    ("[Feature]: Qwen3-Next support", {"new-model"}, set()),
    ("[Feature]: Llama 3.3 tool calling support", {"tool-calling"}, {"new-model"}),
    ("[Bug]: Qwen2.5 support for tool calls is broken", {"tool-calling"}, {"new-model"}),
    # the chat endpoint failing, with a quantized checkpoint that only went through it
    ("[Bug]: org/Mistral-Small-24B-Instruct-int4-awq-sym, VLLM Chat error", {"frontend"}, {"quantization"}),
    ("[Bug]: Yi-34B-Chat fails to load", {"new-model"}, {"frontend"}),
    # the KV cache's data type is the KV cache's question, however it is written
    ("[Bug]: FP8 kvcache causes RuntimeError in v1 engine", {"kv-cache"}, {"quantization"}),
    ("[Bug]: [V1] wrong output when using kv cache fp8", {"kv-cache"}, {"quantization"}),
    ("[Bug]: setting kv_cache_dtype to fp8 or fp8_e4m3 crashes", {"kv-cache"}, {"quantization"}),
    # a model that no longer works is that model's report; a cut traceback in the multimodal processing says where
    ("[Bug]: org/Devstral-Small-2-24B-Instruct no longer working in 0.22.1", {"new-model"}, set()),
    ("[Bug]: Qwen3 tool calling not working with the hermes parser", {"tool-calling"}, {"new-model"}),
    # batched inference through the offline API, unless the title is about what it ran with
    ("[Usage]: are there batch size limits for offline batch inference?", {"frontend"}, set()),
    ("[Usage]: offline batched inference with pipeline parallelism hangs", {"pipeline-parallel"}, {"frontend"}),
    # the OpenVINO backend runs on the CPU; a load that takes forever is slow
    ("[Installation]: cannot install vllm with openvino backend", {"cpu", "installation"}, set()),
    ("[Bug]: vLLM takes forever to load a locally stored 7B model", {"performance"}, set()),
    # the token counts an answer reports
    ("[Feature]: Add reasoning token usage", {"frontend"}, set()),
    ("[Bug]: The `prompt_tokens_details` in `usage` is always `None`.", {"frontend"}, set()),
    ("[Usage]: how to view generated tokens in vllm serve", {"frontend"}, set()),
    # a model whose tokenizer class fails
    ("[Bug]: MistralTokenizer not working when using Mistral Small 3.1 in HF format", {"new-model"}, set()),
    # request tracing is observability, as metrics are
    ("[Feature]: Add OpenTelemetry distributed tracing", {"frontend"}, set()),
    ("[Feature]: more exhaustive tracing", {"frontend"}, set()),
    ("[Bug]: Dynamo tracing takes 60 s at start-up", {"torch.compile"}, {"frontend"}),
    # a B200 named failing, a model broken on Blackwell, FP4 not used there: the GPU's question
    ("[Bug]: gpt-oss broken on main on blackwell", {"nvidia-compat"}, {"moe"}),
    ("[Bug]: model crashes on NVIDIA B200 at start-up", {"nvidia-compat"}, set()),
    ("[Bug]: FP4 not leveraged on RTX PRO 6000 (Blackwell)", {"nvidia-compat", "quantization"}, set()),
    # a platform and an engine class are not models that fail themselves
    ("[Bug]: WSL2: GPUModelRunnerV2 requires UVA, so GPU serving fails at startup", set(), {"new-model"}),
])
def test_title_words(title: str, want: set[str], not_want: set[str]) -> None:
    got = set(topic_labels(parse(title, "### 🐛 Describe the bug\n\nSee title.\n"), ()))
    assert want <= got, got
    assert not (not_want & got), got


def test_a_weak_word_in_the_description_is_not_enough() -> None:
    r = bug("[Bug]: wrong answers after upgrade", "I send an image of the dashboard below, the answers are wrong "
                                                 "since 0.11. We also use Ray elsewhere in the company.")
    assert topic_labels(r, ()) == ()


def test_the_same_word_in_the_title_is_enough() -> None:
    assert "ray" in topic_labels(bug("[Bug]: workers hang with the Ray executor", "It hangs."), ())


def test_repo_labels_mapping() -> None:
    assert repo_labels(("new-model", "torch.compile", "rocm"), {"new-model": "new model", "rocm": "rocm"}) == (
        "new model", "torch.compile", "rocm")
    assert repo_labels(("a", "b"), {"a": "x", "b": "x"}) == ("x",)
    assert repo_labels(("a",), None) == ("a",)


def test_taxonomy_is_one_list_used_everywhere() -> None:
    tables = [*lab.WORDS, *lab.FAILURE, *lab.EXCEPTION_TYPES, *lab.FRAMES, *lab.FLAGS, *lab.MODEL]
    assert {t.topic for t in tables} <= set(TOPICS)
    assert {t for t, _ in lab.PLATFORMS.values()} | set(lab.KINDS.values()) <= set(TOPICS)
    docs = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
    section = docs.read_text(encoding="utf-8").split("## Labels (default taxonomy)", 1)[1]
    listed = re.findall(r"[a-z][a-z.-]+[a-z]", section.split("`", 2)[1])
    assert tuple(listed) == TOPICS


@pytest.mark.timeout(30)
def test_patterns_stay_linear_on_hostile_text() -> None:
    hostile = ("a" * 5000 + " ") * 20 + "speculative " * 2000 + "(" * 5000
    r = Report(title=hostile[:1000], title_text=hostile[:1000], kind="bug", kind_source="title", body=hostile,
               description=hostile, exceptions=(ExceptionInfo("ValueError", hostile),),
               environment=Environment(platform="cuda"))
    topic_labels(r, ())


def test_every_rule_label_is_in_the_taxonomy() -> None:
    from bot.rules import load_rules

    rules = load_rules()
    used = {label for rule in rules.rules for label in rule.labels}
    assert used <= set(lab.ALL_LABELS), used - set(lab.ALL_LABELS)


def test_a_placeholder_title_borrows_the_first_line_of_the_description() -> None:
    r = parse("Title", "**Speculative decoding with EAGLE breaks pipeline parallelism (PP=2)**\n\n"
                       "Both work alone, but not together.\n")
    assert {"speculative-decoding", "pipeline-parallel"} <= set(topic_labels(r, ()))
    r2 = parse("[Bug]: speculative decoding with EAGLE is slow", "Title\n")
    assert "pipeline-parallel" not in topic_labels(r2, ())


def _labels(title: str, body: str) -> tuple[str, ...]:
    return topic_labels(parse(title, body), ())


def test_tp_or_pp_of_one_is_not_parallelism():
    got = _labels("[Bug]: [ROCm] MI325X hard crash with TP=1 after warmup", "Single GPU, TP=1 and PP = 1.")
    assert "tensor-parallel" not in got and "pipeline-parallel" not in got
    assert "tensor-parallel" in _labels("[Bug]: hang with TP=4 on 4xL40S", "nccl hangs")


def test_a_deployment_over_several_nodes_is_multi_node_but_gpus_per_node_is_not():
    body = "I'm serving Llama-3.1-405B across two nodes with 8 H100 each, pipeline parallel size 2."
    assert "multi-node" in _labels("[Feature]: support PP for my model", body)
    assert "multi-node" not in _labels("ValueError: The number of GPUs per node is not divisible by the TP size",
                                       "3x A6000 in one box")
    assert "multi-node" not in _labels("[RFC]: vLLM roadmap for the third quarter",
                                       "We want multi-node scale-out to be first class.")


def test_more_gpus_than_a_node_holds_by_the_flags_is_multi_node():
    def run(flags: str, title: str = "[Usage]: best practice to deploy DeepSeek-V3?") -> tuple[str, ...]:
        return topic_labels(parse(title, f"I start the server with\n```\nvllm serve x {flags}\n```\n"), ())
    assert "multi-node" in run("--tensor-parallel-size 16")
    assert "multi-node" in run("--tensor-parallel-size 8 --pipeline-parallel-size 2")
    assert "multi-node" not in run("--tensor-parallel-size 8")
    assert "multi-node" not in run("--tensor-parallel-size 4 --pipeline-parallel-size 2")
    # a title about a feature the deployment only went through is that feature's
    assert "multi-node" not in run("--tensor-parallel-size 16", "[Bug]: tool calls are lost with the hermes parser")


def test_data_parallel_across_nodes_is_multi_node_by_its_flags():
    for flags in ("--data-parallel-size 16 --data-parallel-size-local 8 --data-parallel-address 10.0.0.1",
                  "--data-parallel-size 4 --data-parallel-start-rank 2 --headless"):
        r = bug("[Bug]: DeepEP crashes on the first request", f"```\nvllm serve org/m {flags}\n```\nIt crashes.")
        assert "multi-node" in topic_labels(r, ()), flags
    r = bug("[Bug]: DeepEP crashes on the first request", "```\nvllm serve org/m --data-parallel-size 8\n```\n")
    assert "multi-node" not in topic_labels(r, ())


def test_starting_a_ray_cluster_is_ray():
    assert "ray" in _labels("[Bug]: the second node never joins",
                            "I run ray start --head on the first machine and then vllm serve with TP 16.")
    assert "ray" not in _labels("[Bug]: the second node never joins", "I start the array of workers first.")


def test_placement_group_in_the_title_is_ray():
    assert "ray" in _labels("[Bug]: Placement group creation hangs with 2 nodes", "")


def test_no_kernel_image_on_amd_is_not_an_nvidia_question():
    body = ("Platform: AMD MI300X, image rocm/vllm:latest\n\n```\ntorch.AcceleratorError: HIP error: no kernel image "
            "is available for execution on the device\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3\n```\n")
    got = _labels("[Bug]: crash at startup", body)
    assert "nvidia-compat" not in got
    cuda = "```\nRuntimeError: CUDA error: no kernel image is available for execution on the device\n```\n"
    assert "nvidia-compat" in _labels("[Bug]: crash at startup on my GTX 1080", cuda)


def test_fused_moe_failure_guided_generation_and_mm_limit_titles():
    body = ("```\n(Worker_TP1 pid=77) ERROR 03-02 10:00:01 [multiproc_executor.py:600] AssertionError: FusedMoE "
            "cutlass kernels are only supported for Llama4\n```\n")
    assert "moe" in _labels("[Bug]: DeepSeek-V3 fails with a new env var", body)
    assert "structured-output" in _labels("[Bug]: Guided generation returns 500 for Mistral", "")
    assert "multi-modality" in _labels("[Feature]: softer limit-mm-per-prompt check", "")
    assert "tensor-parallel" in _labels("[Feature]: allow non-divisible attention heads", "")


def test_a_pasted_command_line_is_not_what_the_report_is_about():
    body = ("vllm serve org/Phi-4-mini-instruct-bnb-4bit --quantization bitsandbytes --max-model-len 4096\n\n"
            "Tool calls come back as plain text instead of tool_calls.")
    got = _labels("[Bug]: auto tool call does not work for phi-4-mini", body)
    assert "quantization" not in got and "tool-calling" in got


@pytest.mark.parametrize(("title", "body", "want", "not_want"), [
    ("[Bug]: CPU backend segfaults during warmup on an AMD 7840U laptop", "torch 2.10.0+cpu", {"cpu"}, {"rocm"}),
    ("[Bug]: AMD Ryzen 9 host: engine exits during profiling", "", set(), {"rocm"}),
    ("[Bug]: AMD MI250 crashes in paged attention", "", {"rocm"}, set()),
    ("[Bug]: When using tp for serving, worker 3 dies", "", {"tensor-parallel"}, set()),
    ("Error. RayWorkerWrapper hangs forever with 4 GPUs", "", {"ray"}, set()),
    ("[Bug]: NixlConnector handshake times out between prefill and decode", "", {"kv-cache"}, set()),
    ("[Bug]: P/D disaggregation with two LMCache instances drops requests", "", {"kv-cache"}, set()),
    ("[Bug]: Cannot load a NVFP4A16 checkpoint on H200", "", {"quantization"}, set()),
    ("[Feature]: support gemma-4 vision", "", {"new-model"}, set()),
    ("[Feature]: is the new Qwen4-VL supported?", "", {"new-model", "multi-modality"}, set()),
    ("[New Model]: MiniCPM-V-4 and MiniCPM-o-3", "", {"multi-modality"}, set()),
    ("[Usage]: Can't support Phi-4 with more than 2 GPUs", "", set(), {"new-model"}),
    ("[Feature]: Pipeline parallel support for Llama-4 Scout", "", {"pipeline-parallel"}, {"new-model"}),
    ("[Bug]: docker cpu image fails with illegal instruction", "", {"cpu"}, set()),
    ("[Feature]: make gpu_memory_utilization accept absolute GiB", "", {"memory"}, set()),
])
def test_subject_words_in_titles(title: str, body: str, want: set[str], not_want: set[str]) -> None:
    got = set(_labels(title, body))
    assert want <= got, got
    assert not (not_want & got), got


def test_the_server_start_up_wrapper_is_not_a_frontend_failure():
    body = """```
  File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/api_server.py", line 230, in build_client
    raise RuntimeError(
RuntimeError: Engine process failed to start. See stack trace for the root cause.
```"""
    assert "frontend" not in _labels("[Bug]: Qwen3-32B does not start on 2x A10", body)
    chat = """```
  File "/opt/venv/lib/python3.12/site-packages/vllm/entrypoints/openai/serving_chat.py", line 688, in stream_gen
    delta_message = tool_parser.extract_tool_calls_streaming(
AttributeError: 'NoneType' object has no attribute 'group'
```"""
    assert "frontend" in _labels("[Bug]: streaming chat crashes", chat)


@pytest.mark.parametrize(("title", "want"), [
    ("[Bug]: pipline paralelism with 2 nodes hangs at start", {"pipeline-parallel"}),
    ("[Bug]: qunatization of Qwen2.5-7B fails", {"quantization"}),
    ("[Usage]: is specualtive decoding supported for this model", {"speculative-decoding"}),
    ("[Bug]: multi modal requests return empty text", {"multi-modality"}),
    ("[Bug]: torch-compile fails after upgrade", {"torch.compile"}),
])
def test_titles_with_misspelt_or_differently_joined_keywords(title: str, want: set[str]) -> None:
    got = set(topic_labels(parse(title, "### 🐛 Describe the bug\n\nSee title.\n"), ()))
    assert want <= got, got


@pytest.mark.parametrize(("title", "want", "not_want"), [
    ("[Bug]: the qwen3 reasoning parser drops the first think token", {"frontend"}, {"tool-calling"}),
    ("[Usage]: SamplingParams ignores min_tokens", {"frontend"}, set()),
    ("[Bug]: /metrics reports no prometheus counters", {"frontend"}, set()),
    ("[Bug]: Qwen/Qwen3-30B-A3B produces garbage with fp8 on two nodes", {"moe", "quantization"}, set()),
    # (an MoE model that fails to load itself is that model's report)
    ("[Bug]: Llama-4-Maverick-17B-128E-Instruct crashes at load", {"new-model"}, {"moe"}),
    ("[Bug]: MiniCPM-V_2_6 crashes with two images", {"multi-modality"}, set()),
    ("[Usage]: how to serve multiple models on one server", {"frontend"}, set()),
    # what the server answers: reasoning effort asked for, fields that came back null, the usage counts
    ("[Usage]: how do I set reasoning_effort to high for gpt-oss?", {"frontend"}, {"moe"}),
    ("[Bug]: chat completion returns content=null with completion_tokens > 0", {"frontend"}, set()),
    ("[Bug]: streaming returns tool_calls = None with finish_reason stop", {"tool-calling"}, {"frontend"}),
    # the KV cache's type as the flag sets it, a quantized model id in a memory title, vLLM's CPU image by name, an
    # installation that went right
    ("[Bug]: 2 x Arc B60 + gemma-3-12b: kv-cache-dtype fp8 problem", {"kv-cache"}, {"quantization"}),
    ("[Bug]: CUDA out of memory with Qwen2.5-VL-32B-GPTQ-Int4 and two images", {"memory"}, {"quantization"}),
    ("[Installation]: docker run vllm-cpu-release-repo:v0.11.0 fails on arm64", {"cpu"}, set()),
    ("[Bug]: installed vLLM successfully on a MI250 but inference hangs", {"rocm"}, {"installation"}),
    # an image built for a platform is an installation; the official pre-built one is only what ran
    ("[Feature]: a freshly built docker image for aarch64 hosts", {"installation"}, set()),
    ("[Bug]: the official pre-built image prints a warning at start", set(), {"installation"}),
    ("[Usage]: a question about GPU memory allocation with max-num-seqs", {"memory"}, set()),
])
def test_topic_definitions_in_titles(title: str, want: set[str], not_want: set[str]) -> None:
    body = "### 🐛 Describe the bug\n\nSee title.\n```\nvllm serve Qwen/Qwen3-30B-A3B\n```\n"
    got = set(topic_labels(parse(title, body), ()))
    assert want <= got, got
    assert not (not_want & got), got


def test_flags_that_are_the_subject_carry_their_topic_alone() -> None:
    cases = [
        ("--device cpu", "cpu"), ("--enable-expert-parallel", "moe"), ("--cpu-offload-gb 20", "memory"),
    ]
    for flag, topic in cases:
        r = bug("[Bug]: the server exits at start", f"```\nvllm serve meta-llama/Llama-3.1-8B-Instruct {flag}\n```\n"
                                                      "It exits without an error.")
        assert topic in topic_labels(r, ()), flag
    # a flag that only says what was run still needs other evidence
    r = bug("[Bug]: the server exits at start", "```\nvllm serve org/m --enable-lora\n```\nIt exits.")
    assert "lora" not in topic_labels(r, ())
    # a title about a feature the deployment only went through is that feature's report
    cmd = ("```\nvllm serve org/big-model --enable-expert-parallel --tool-call-parser hermes "
           "--enable-auto-tool-choice\n```")
    got = topic_labels(bug("[Bug]: tool calls stay in the content instead of tool_calls", cmd + "\nSometimes."), ())
    assert "tool-calling" in got and "moe" not in got, got


def test_a_cpu_run_is_the_cpu_topic() -> None:
    log = ("```\nINFO 05-01 10:00:00 [__init__.py:239] Automatically detected platform cpu.\n"
           "RuntimeError: Failed to infer device type\n```")
    assert "cpu" in topic_labels(parse("[Bug]: server does not start", log), ())
    mac = parse("[Bug]: install fails", "### Your current environment\n\n```text\nOS: macOS 15.1 (arm64)\n"
                "Python platform: macOS-15.1-arm64-arm-64bit\n```\n### 🐛 Describe the bug\n\npip install fails.")
    assert mac.environment.os == "macos"
    assert "cpu" in topic_labels(mac, ())


def test_the_platform_the_title_names_is_where_it_ran() -> None:
    log = ("```\nINFO 03-02 10:00:00 [__init__.py:239] Automatically detected platform tpu.\n"
           "ValueError: bfloat16 is not supported by this library\n```")
    tpu = topic_labels(parse("[Bug]: the server does not start", log), ())
    assert "tpu" in tpu
    cpu = topic_labels(parse("[Bug]: vllm forces bfloat16 in cpu mode", log), ())
    assert "cpu" in cpu and "tpu" not in cpu, cpu


def site(file: str, qualname: str, message: str = "boom", **kw) -> RaiseSite:
    return RaiseSite(id=file + qualname, file=file, line=10, end_line=10, qualname=qualname, kind="raise",
                     type="ValueError", message=message, release="0.17.0", at_release=True, reporter_release="0.17.0",
                     first="0.10.0", last="0.17.0", releases=8, newest="0.17.0", raised_after=False, of="title",
                     by="message", **kw)


def test_the_raise_site_is_topic_evidence_by_its_path_and_function() -> None:
    r = bug("[Bug]: server crashes at start", "It stops with an error about the number of tokens.")
    assert topic_labels(r, ()) == ()

    def labels(*sites: RaiseSite) -> tuple[str, ...]:
        return topic_labels(replace(r, sites=sites), ())

    assert labels(site("vllm/v1/spec_decode/eagle.py", "EagleProposer.propose")) == ("speculative-decoding",)
    assert labels(site("vllm/model_executor/layers/quantization/fp8.py", "Fp8LinearMethod.create_weights")) == (
        "quantization",)
    assert labels(site("vllm/v1/core/kv_cache_utils.py", "check_enough_kv_cache_memory")) == ("kv-cache",)
    # the same file raises for several features: the function tells them apart
    assert labels(site("vllm/config.py", "SpeculativeConfig.__post_init__")) == ("speculative-decoding",)
    assert labels(site("vllm/config/lora.py", "LoRAConfig.verify_with_model_config")) == ("lora",)
    assert labels(site("vllm/config.py", "ModelConfig._verify_quantization")) == ()
    # collectives are shared by every parallelism: not enough on their own
    assert labels(site("vllm/distributed/parallel_state.py", "GroupCoordinator.all_reduce")) == ()


def test_a_wrapper_site_says_nothing_and_tied_sites_give_what_they_agree_on() -> None:
    r = bug("[Bug]: server crashes at start", "It stops with an error.")
    spec = site("vllm/v1/spec_decode/eagle.py", "EagleProposer.propose")
    wrapper = site("vllm/v1/spec_decode/eagle.py", "EagleProposer.load_model", wrapper=True)
    assert topic_labels(replace(r, sites=(wrapper,)), ()) == ()
    assert topic_labels(replace(r, sites=(spec, wrapper)), ()) == ()
    lora = site("vllm/lora/models.py", "LoRAModel.from_local_checkpoint")
    assert topic_labels(replace(r, sites=(spec, lora)), ()) == ()
    medusa = site("vllm/v1/spec_decode/medusa.py", "MedusaProposer.propose")
    assert topic_labels(replace(r, sites=(spec, medusa)), ()) == ("speculative-decoding",)
    # a logged error is a handler reporting what it caught
    assert topic_labels(replace(r, sites=(replace(spec, kind="log"),)), ()) == ()
    # a tool parser's error is tool calling, not the OpenAI server's
    parser = site("vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py", "Hermes2ProToolParser.extract")
    assert topic_labels(replace(r, sites=(parser,)), ()) == ("tool-calling",)


def test_a_site_and_the_traceback_that_shows_it_count_once() -> None:
    frames = (Frame("/x/vllm/distributed/parallel_state.py", 5, "all_reduce", True),)
    exc = ExceptionInfo("RuntimeError", "unhandled system error", frames)
    r = Report(title="[Bug]: crash", title_text="crash", kind="bug", kind_source="title", body="", exceptions=(exc,),
               sites=(site("vllm/distributed/parallel_state.py", "GroupCoordinator.all_reduce"),))
    assert lab.topic_scores(r, ())["tensor-parallel"] == {"frame": 0.5}


@pytest.mark.parametrize(("title", "body"), [
    ("[Bug]: 400 Bad Request", "The client gets an error and the log shows nothing else."),
    ("[Bug]: the server answers my UI with errors", """```
INFO:     10.0.0.7:40112 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request
```"""),
    ("[Usage]: usage info missing while stream equal to True", "The chunks all have usage=None."),
    ("[Bug]: The base model does not stop based on the passed stop words", "It runs to max_tokens."),
    ("[Bug]: some routes can be reached without authorization", "I set VLLM_API_KEY and /tokenize still answers."),
    ("[Bug]: `http_*` metrics missing when running the V0 engine", "curl localhost:8000/metrics shows other ones."),
    ("[Bug]: Temperature is ignored in the new release", "Whatever I send, the answer is the same."),
    ("[Usage]: chat 接口有问题，completion接口正常", "按照官方文档调用。"),
    ("[Bug]: reasoning_content is null and the thinking goes into content", "With the R1 distill model."),
    ("[Bug]: the api_server started but can't be accessed from another machine", "It listens on port 8000."),
    ("[Bug]: API returns a single result despite n=8", "Only one choice comes back."),
    ("[Usage]: more than 1 completion per prompt with sampling?", "How do I get several answers?"),
    # the server's failed answer is what the title reports
    ("[Bug]: Exception in ASGI application after an hour of traffic", "The log shows a long traceback."),
    ("[Bug]: several routes answer 500 Internal Server Error", "Health works."),
])
def test_request_surface_in_titles_and_logs_is_frontend(title: str, body: str) -> None:
    assert "frontend" in _labels(title, f"### 🐛 Describe the bug\n\n{body}\n")


@pytest.mark.parametrize(("title", "body", "want"), [
    ("[Bug]: cannot start Mistral-Small NVFP4 on my 5090", "It exits during start-up.", True),
    ("[Usage]: an error occurs running vLLM on an RTX PRO 6000", "Any model.", True),
    ("[Bug]: Blackwell: the FP8 model fails at start-up", "Since the upgrade.", True),
    # the card named, but the failure is memory: another question
    ("[Usage]: unable to run a 32B model on the RTX 5090", "I always get OOM, whatever gpu-memory-utilization.", False),
    # a port, not a card
    ("[Bug]: the server on port 5090 fails to answer", "curl hangs.", False),
    ("[Bug]: RTX 5090 throughput is lower than on the 4090", "Same flags.", False),
])
def test_a_blackwell_card_failing_to_run_is_nvidia_compat(title: str, body: str, want: bool) -> None:
    got = _labels(title, f"### 🐛 Describe the bug\n\n{body}\n")
    assert ("nvidia-compat" in got) is want, got


def test_a_switched_off_ray_option_is_not_ray() -> None:
    assert "ray" not in _labels("[Bug]: the server hangs at start-up",
                                "### 🐛 Describe the bug\n\nI run it with worker_use_ray=False and TP 1.\n")


def test_a_500_only_in_the_description_is_not_enough() -> None:
    assert "frontend" not in _labels("[Bug]: the engine dies after an hour",
                                     "### 🐛 Describe the bug\n\nThe client then gets 500 Internal Server Error.\n")


def _crash(exc: ExceptionInfo) -> Report:
    return Report(title="[Bug]: crash", title_text="crash", kind="bug", kind_source="title", body="", exceptions=(exc,))


def _frames(*paths: str) -> tuple[Frame, ...]:
    return tuple(Frame(p, 1, "f", "/vllm/" in p) for p in paths)


def test_where_the_server_failed_the_request_is_frontend() -> None:
    refused = ExceptionInfo("openai.BadRequestError", "Error code: 400 - {'object': 'error', 'message': 'bad'}",
                            _frames("/home/u/.venv/lib/python3.11/site-packages/openai/_base_client.py"))
    assert "frontend" in topic_labels(_crash(refused), ())
    template = ExceptionInfo("jinja2.exceptions.TemplateSyntaxError", "expected token 'end of print statement'", ())
    assert "frontend" in topic_labels(_crash(template), ())
    # a traceback cut before its exception line still shows where the request failed
    cut = bug("[Bug]: chat error with a mistral checkpoint", """```
ERROR 04-08 07:13:28 [serving_chat.py:198] Error in preprocessing prompt inputs
ERROR 04-08 07:13:28 [serving_chat.py:198] Traceback (most recent call last):
ERROR 04-08 07:13:28 [serving_chat.py:198]   File "/v/vllm/entrypoints/openai/serving_chat.py", line 181, in create
ERROR 04-08 07:13:28 [serving_chat.py:198]     ) = await self._preprocess_chat(
ERROR 04-08 07:13:28 [serving_chat.py:198]   File "/v/vllm/entrypoints/chat_utils.py", line 1175, in apply_template
ERROR 04-08 07:13:28 [serving_chat.py:198]     return tokenizer.apply_chat_templa
```""")
    assert "frontend" in topic_labels(cut, ())
    # a reasoning parser shapes the server's answer: frontend, not tool calling
    parser = ExceptionInfo("IndexError", "list index out of range",
                           _frames("/x/vllm/entrypoints/openai/serving_chat.py",
                                  "/x/vllm/reasoning/deepseek_r1_reasoning_parser.py"))
    got = topic_labels(_crash(parser), ())
    assert "frontend" in got and "tool-calling" not in got


@pytest.mark.parametrize("title", [
    "[Bug]: response_format json_object returns prose", "[Feature]: structural tag support for the guidance backend",
    "[Usage]: constrained decoding with a lark grammar",
])
def test_structured_output_as_people_name_it(title: str) -> None:
    assert "structured-output" in _labels(title, "### 🐛 Describe the bug\n\nSee title.\n")


def test_a_scripts_own_n_flag_is_not_the_request_parameter() -> None:
    assert "frontend" not in _labels("benchmark_latency.py hangs with --batch-size=1 and --n=2", "It never returns.")


def test_an_engine_crash_reached_through_the_api_is_not_frontend() -> None:
    # the request handler is the innermost vLLM frame, but the engine died under it
    crash = ExceptionInfo("RuntimeError", "CUDA error: an illegal memory access was encountered",
                          _frames("/x/vllm/entrypoints/openai/serving_chat.py"))
    assert "frontend" not in topic_labels(_crash(crash), ())
    dead = bug("[Bug]: the server dies after a while", """\
I send requests with curl to /v1/chat/completions and after a while the server dies.
```
INFO:     127.0.0.1:50000 - "POST /v1/chat/completions HTTP/1.1" 200 OK
ERROR 11-03 23:14:01 [serving_chat.py:1145]   File "/v/vllm/entrypoints/openai/serving_chat.py", line 574, in gen
ERROR 11-03 23:14:01 [serving_chat.py:1145]     async for res in result_generator:
ERROR 11-03 23:14:01 [serving_chat.py:1145] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.
```""")
    assert "frontend" not in topic_labels(dead, ())
    hub = _labels("[Bug]: 401 Unauthorized for url when loading a gated model",
                  "huggingface_hub.errors.GatedRepoError: 401 Client Error.")
    assert "frontend" not in hub


@pytest.mark.parametrize(("title", "want", "not_want"), [
    # streaming is how the tool call went: the report is about the tool parser, not the OpenAI server
    ("[Bug]: the granite tool parser loses the second tool call's arguments (streaming)", {"tool-calling"},
     {"frontend"}),
    ("[Bug]: streaming output of function calling breaks for Qwen2.5", {"tool-calling"}, {"frontend"}),
    ("[Bug]: with stream=True the mistral model returns tool_calls = None", {"tool-calling"}, {"frontend"}),
    # streaming itself is the subject
    ("[Bug]: streaming output stops after the first chunk with Llama-3.1", {"frontend"}, set()),
    ("[Bug]: with stream=True the usage field is missing", {"frontend"}, {"tool-calling"}),
])
def test_streaming_qualifies_a_tool_call(title: str, want: set[str], not_want: set[str]) -> None:
    got = set(_labels(title, "### 🐛 Describe the bug\n\nSee the title."))
    assert want <= got and not (not_want & got), got


def test_a_cut_traceback_in_the_multimodal_processing_is_multi_modality():
    body = """```
(APIServer pid=3)     mm_budget = MultiModalBudget(vllm_config, mm_registry)
(APIServer pid=3)   File "/usr/lib/python3/vllm/multimodal/encoder_budget.py", line 87, in __init__
(APIServer pid=3)     all_mm_max_toks_per_item = get_mm_max_toks_per_item(
(APIServer pid=3)   File "/usr/lib/python3/vllm/multimodal/registry.py", line 256, in get_dummy_mm_inputs
(APIServer pid=3)     mm_inputs = processor.apply(
```"""
    assert "multi-modality" in topic_labels(parse("[Bug]: server fails at start-up since 0.22", body), ())
