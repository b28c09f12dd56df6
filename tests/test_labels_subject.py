"""Label evidence from what a report is about: the model that fails itself (new-model), a mixture-of-experts model it
names (moe), the CPU it runs on, and the near misses that name a model without being about it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import subject
from bot.labels import topic_labels
from bot.report import parse
from bot.subject import model_is_the_subject, moe_is_the_subject, named_models, without_model_kind

GPU_LOG = """\
```
INFO 03-02 10:11:12 [api_server.py:1090] vLLM API server version 0.9.1
INFO 03-02 10:11:20 [gpu_model_runner.py:1420] Loading model weights took 14.9 GiB
```
"""


def labels(title: str, description: str = "See the title.") -> set[str]:
    return set(topic_labels(parse(title, f"### 🐛 Describe the bug\n\n{description}\n\n{GPU_LOG}"), ()))


@pytest.mark.parametrize(("title", "description"), [
    # output wrong in kind, from a model the title names
    ("[Bug]: Falcon-40B-Instruct returns gibberish since the last upgrade", "Same prompt, same sampling params."),
    ("[Bug]: Phi-3-mini answers make no sense", "The output is garbled: random characters and half words."),
    ("[Bug]: the bloom model generates meaningless text", "Every prompt gives garbage."),
    ("[Bug]: GLM-4-32B-0414 output is empty", "The server returns 200 with no text."),
    ("[Bug]: Qwen2-7B-Instruct responses keep repeating the same sentence", "Until max_tokens."),
    ("[Bug]: Llama-3.1-405B-Instruct-FP8 only generates exclamation marks", "!!!!!!!!"),
    ("[Bug]: gemma3-27b-it shows degraded accuracy in vLLM v0.11.0", "lm_eval hellaswag drops by 3 points."),
    ("[Bug]: Llama-3.2-3B", "The outputs are inconsistent with Hugging Face transformers."),
    # the model's checkpoint does not load
    ("[Bug]: Baichuan2-13B-Chat fails to load", "It stops while reading the checkpoint."),
    ("[Bug]: error when loading InternLM2-20B", "Loading stops."),
    # it fails to start, run or deploy (on an AMD GPU or the CPU backend too)
    ("[Bug]: Can't start `vllm serve tiiuae/falcon-11B`", "The engine core exits during start-up."),
    ("[Bug]: Molmo-7B vllm serve engine process failed to start", "No traceback is shown."),
    ("[Bug]: fail to start InternVL3-38B with 0.10.1", "It exits after the processor is built."),
    ("[Bug]: Fail to run Jamba-1.5-Mini with CPU backend", "It stops while building the model."),
    ("[Bug]: MI250 cannot deploy Granite-3.1-8B", "The workers exit at start-up."),
    ("[Bug]: vllm 0.9.1 serve Mistral-Small-3.2 error", "The engine exits while building the model."),
    ("[Bug]: vllm部署Gemma-3-12b报错", "启动失败"),
    # its tokenizer
    ("[Bug]: Yi-34B-Chat fails to start with the slow tokenizer", "It exits during start-up."),
    # the title is the model's name and nothing else
    ("[Bug]: InternLM2-20B", "It stops after the weights are loaded."),
    # the reporter isolated the model
    ("[Bug]: wrong answers from Mistral-Nemo", "Other models work fine on the same server."),
    ("[Bug]: crash at start-up", "This does not happen when I load Llama-3.1-8B with the same flags."),
    ("[Bug]: strange completions from StarCoder2-7B",
     "With `transformers` directly the same prompt works as expected."),
    # a model request in any language
    ("[Usage]: 是否支持 glm-4-9b-chat?", "谢谢"),
    ("[Usage]: can vllm support a new model like my own MoE?", "It is not on the Hub."),
])
def test_the_model_itself_is_the_subject(title: str, description: str) -> None:
    assert "new-model" in labels(title, description)


@pytest.mark.parametrize(("title", "description"), [
    # the engine crashed while serving some model: the model is where it happened, not what failed
    ("[Bug]: CUDA error: an illegal memory access was encountered while serving Llama-3.1-70B-Instruct",
     "It happens after a few hours under load."),
    ("[Bug]: Qwen2.5-72B-Instruct OOM with max-model-len 32768", "torch.OutOfMemoryError: CUDA out of memory."),
    ("[Bug]: timeout after 60 seconds with Gemma-2-9B", "Requests hang."),
    ("[Bug]: CUDA illegal memory access errors when running Mixtral-8x7B", "After a few hundred requests."),
    ("[Bug]: the server hangs when serving Llama-3.1-8B on two nodes", "Nothing comes back after the first request."),
    # an old NVIDIA GPU the title names is that GPU's question; a library's version is not a model
    ("[Bug]: can not run falcon-7B on a V100", "It stops at start-up."),
    ("[Bug]: vllm deployment is failing because of the numpy2.0 upgrade", "ImportError at start-up."),
    # running a model and meeting some error says nothing of the model
    ("[Bug]: I run the model Falcon-H1-7B and get an error, single card", "See the log."),
    # a quantized checkpoint that fails to start is the quantization's report
    ("[Bug]: vllm 0.6.4 部署 Qwen2-VL-7B_awq_int4 报错", "启动失败"),
    ("[Bug]: fail to start Mistral-Large-Instruct-2411-GPTQ", "It exits while loading."),
    # a benchmark script's `hf` backend is not Hugging Face transformers running the model
    ("[Usage]: benchmark_throughput.py works with hf backend but not with vllm",
     "The vllm backend exits after loading the weights."),
    ("[Bug]: the server exits after loading the weights",
     "With hf backend the same benchmark works as expected, with the vllm backend it stops."),
    # a quantized checkpoint that does not load is about its quantization
    ("[Bug]: Qwen2.5-32B-Instruct-AWQ fails to load on 0.10.1", "It stops while reading the checkpoint."),
    # another server, not the model's reference implementation
    ("[Misc]: vLLM performs poorly compared to HF TGI with Qwen2-7B", "Throughput is half."),
    # an adapter, not the model
    ("[Bug]: LoRA adapter for Llama-3-8B fails to load", "The adapter was trained with PEFT."),
    # a tokenizer class is not a model
    ("[Bug]: AttributeError: Qwen2Tokenizer has no attribute lower", "After upgrading transformers."),
    # more than the model's name, in another script
    ("[Bug]: vllm 0.6.4 中 Qwen2-7B 的显存占用", "占用过高"),
    # lower accuracy through a quantization is about the quantization
    ("[Bug]: accuracy drop of Llama-3.1-8B with FP8", "GSM8K drops by 5 points."),
    ("[Bug]: vLLM inconsistently crashes on startup with Qwen2-7B", "Sometimes it works."),
    # wrong output through a feature the model went through is about that feature
    ("[Bug]: Qwen3-32B content is empty with the reasoning parser", "Everything ends up in reasoning_content."),
    ("[Bug]: gibberish from Llama-3.1-8B with guided_json", "The JSON is broken."),
    ("[Bug]: repeated requests to Llama-3-8B time out", "After 60 s."),
    # gibberish without any model named is not enough alone
    ("[Bug]: the output is gibberish", "Since the last release."),
    # a release or a GPU written like a model id names no model
    ("[Bug]: responses repeat the same sentence on v0.12.x, v0.11.1 is fine", "Same prompt, same flags."),
    ("[Bug]: garbled answers on the L40S-48G since the upgrade", "Same prompt, same flags."),
])
def test_a_model_named_without_being_the_subject(title: str, description: str) -> None:
    assert "new-model" not in labels(title, description)


@pytest.mark.parametrize(("title", "want"), [
    ("[Feature]: Add support for Qwen3-Next-80B", True),
    ("[Feature]: Inquiry about multi-modal support for InternVL3-8B", True),
    ("Add Mixtral 8x7B", True),
    # a feature asked for on a model is about the feature
    ("[Feature]: LoRA support for Mixtral-8x7B", False),
    ("[Feature]: linear adapter support for Gemma-2-9B", False),
    ("[Feature]: FP8 support for Llama-4-Scout", False),
    ("[Feature]: support TPU for Gemma-2-9B", False),
    # the model first, then the request word: not a request for the model
    ("[Bug]: Llama-3.1-8B server added latency after upgrade", False),
])
def test_a_request_for_a_model(title: str, want: bool) -> None:
    assert ("new-model" in labels(title, "Thanks.")) is want, labels(title, "Thanks.")


def test_the_checkpoint_does_not_fit_the_implementation() -> None:
    rope = ("```\nTraceback (most recent call last):\n"
            "  File \"/opt/venv/lib/python3.10/site-packages/vllm/config.py\", line 1400, "
            "in _get_and_verify_max_len\n    raise ValueError(msg)\n"
            "ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got "
            "{'factor': 8.0, 'rope_type': 'llama3'}\n```")
    assert "new-model" in labels("[Bug]: server does not start", rope)
    weights = "```\nValueError: There is no module or parameter named 'lm_head.weight' in LlamaForCausalLM\n```"
    assert "new-model" in labels("[Bug]: server does not start", weights)
    key = "```\nKeyError: 'layers.0.self_attn.qkv_proj.weight'\n```"
    assert "new-model" in labels("[Bug]: server does not start", key)
    assert "new-model" not in labels("[Bug]: server does not start", "```\nKeyError: 'type'\n```")


@pytest.mark.parametrize(("title", "want"), [
    ("[Bug]: Qwen3-235B-A22B crashes during start-up on 8xH100", True),
    ("[Bug]: DeepSeek-V3", True),
    ("[Bug]: Mixtral-8x22B gives empty output", True),
    # a feature the model only went through is the subject
    ("[Bug]: HarmonyError in tool calls with gpt-oss-120b", False),
    ("[Bug]: Qwen3-Next fails to start with -pp 2 and MTP", False),
    ("[Bug]: structured output ignores the schema with Qwen3-30B-A3B", False),
    # dense models
    ("[Bug]: vLLM serve Deepseek-R1-14B tensor parallelism failed", False),
    ("[Bug]: DeepSeek-R1-Distill-Qwen-32B crashes during start-up", False),
    # where it ran, how fast, or a fault of the engine it met is the subject (a quantized checkpoint still runs the
    # quantized expert kernels there)
    ("[Bug]: gpt-oss-20b does not run on the CPU backend", False),
    ("[Bug]: Deploy DeepSeek R1 671B on two nodes", False),
    ("[Usage]: how to run Kimi-K2 on 2 H200 nodes?", False),
    ("[Performance]: low throughput on 8x H100 with Qwen3-235B-A22B", False),
    ("[Bug]: illegal memory access when running Qwen3-Next-80B-A3B", False),
    ("[Bug]: EngineDeadError with GLM-4.6 under load", False),
    ("[Bug]: RTX 5090 cannot start gpt-oss-120b: no kernel image", False),
    ("[Bug]: RTX 5090 cannot run Qwen3-30B-A3B-NVFP4", True),
    ("[Bug]: Qwen3-30B-A3B-FP8 fails on two nodes", True),
    # the model failing to load or start itself is that model's report (a quantized one's still runs the experts)
    ("[Bug]: ERNIE-4.5-21B-A3B-PT loading error", False),
    ("[Bug]: vllm 0.13.0 fails to start Qwen3-VL-235B-A22B-Instruct", False),
    ("[Bug]: Llama-4-Maverick-17B-128E-Instruct-FP8 fails to start on MI300X", True),
    ("[Bug]: Qwen3-32B crashes during start-up", False),
    ("[Bug]: Llama-3.1-8B crashes during start-up", False),
    # experts are counted after the size ("17B-16E"); "H20-3e" is a GPU
    ("[Bug]: Llama-4-Scout-17B-16E-Instruct crashes during start-up", True),
    ("[Bug]: the server crashes on the new H20-3e cards", False),
])
def test_a_moe_model_in_the_title(title: str, want: bool) -> None:
    assert ("moe" in labels(title)) is want, labels(title)


def test_a_moe_model_named_only_in_the_description_is_not_enough() -> None:
    assert "moe" not in labels("[Bug]: the server stops after an hour", "I serve Qwen3-30B-A3B with default flags.")


@pytest.mark.parametrize(("title", "description", "want"), [
    ("[Usage]: Doesn't the pip package of vllm support CPU?", "My machine has no GPU.", True),
    ("[Usage]: startup fails in a CPU environment", "vllm serve fails.", True),
    ("[Bug]: CPU infrencing won't work for Mistral-7B", "It fails at the first request.", True),
    ("[Bug]: first request crashes (cpu)",
     "```\nNotImplementedError: Could not run 'vllm::gptq_gemm' with arguments from the 'CPU' backend.\n```", True),
    ("[Bug]: first request crashes",
     "```\nNotImplementedError: Could not run 'vllm::gptq_gemm' with arguments from the 'CPU' backend.\n```", False),
    # CPU memory, offloading and load are other topics
    ("[Feature]: offload the KV cache to CPU memory", "To serve longer contexts.", False),
    ("[Bug]: high CPU usage when idle", "One core at 100 %.", False),
    ("[Usage]: can a GPTQ model be served in CPU?", "No GPU here.", True),
    ("[Bug]: spikes in CPU usage during prefill", "Two cores at 100 %.", False),
])
def test_cpu_as_the_subject(title: str, description: str, want: bool) -> None:
    assert ("cpu" in labels(title, description)) is want


def test_a_cpu_build_of_vllm_is_the_cpu_backend() -> None:
    body = ("### Your current environment\n\n```\nTraceback (most recent call last):\n"
            "  File \"/opt/venv/bin/vllm\", line 8, in <module>\n"
            "    sys.exit(load_entry_point('vllm==0.8.1.dev42+g1a2b3c4d.cpu', 'console_scripts', 'vllm')())\n```")
    assert "cpu" in set(topic_labels(parse("[Bug]: the server stops at start-up", body), ()))


def test_a_performance_template_asking_about_memory_is_memory() -> None:
    got = set(topic_labels(parse("[Performance]: why does a 1B model take so much GPU memory?",
                                 "### Proposal to improve performance\n\nIt uses 70 GB of 80 GB."), ()))
    assert "memory" in got and "performance" not in got
    got = set(topic_labels(parse("[Performance]: generation speed halved after the upgrade",
                                 "### Report of performance regression\n\nFrom 60 to 30 tokens/s."), ()))
    assert "performance" in got


@pytest.mark.parametrize(("title", "want"), [
    # the model the title names fails, right after its name (also on a GPU the title names)
    ("[Bug]: vllm==0.11.0 Qwen3-Embedding-4B failed", True),
    ("[Bug]: Gemma-3-27B fails with the FlashInfer backend on RTX 5090", True),
    ("[Bug]: Qwen2.5-VL-7B-Instruct 推理报错", True),
    # a few words later it is what the reporter did with it; a release is not a model; a quantized checkpoint is the
    # quantization's report; a GPU the model cannot run on is the GPU's
    ("[Bug]: I run Llama-3.1-8B with my script and then get an error", False),
    ("[Bug]: Jetson Orin with vllm-0.8.1 error", False),
    ("[Bug]: Qwen3-8B-AWQ fails at start", False),
    ("[Bug]: cannot run Mistral-7B on a V100", False),
])
def test_a_model_that_fails_right_after_its_name(title: str, want: bool) -> None:
    assert ("new-model" in labels(title)) is want, labels(title)


def test_subject_helpers() -> None:
    assert named_models("[Bug]: vllm producing gibberish with stabilityai/StableBeluga-7B")
    assert not named_models("[Bug]: AttributeError: Qwen2Tokenizer has no attribute lower")
    assert model_is_the_subject("Starcoder output is noise (output gibberish)", "") == 1.0
    assert model_is_the_subject("vllm 0.9 image gives me gibberish", "") == 0.5
    assert model_is_the_subject("[Bug]: server hangs with Llama-3-8B", "") == 0.0
    assert moe_is_the_subject("[Bug]: Kimi-K2 crashes", set())
    assert not moe_is_the_subject("[Bug]: Kimi-K2 tool calls are broken", {"tool-calling"})
    assert not moe_is_the_subject("[Bug]: Kimi-K2 crashes on two nodes", set(), {"multi-node"})
    assert moe_is_the_subject("[Bug]: Kimi-K2 AWQ crashes on two nodes", {"quantization"}, {"multi-node"})


def test_an_installation_template_quoting_a_request_error_is_about_the_request() -> None:
    got = set(topic_labels(parse("max_tokens must be at least 1, got -160",
                                 "### How you are installing vllm\n\n```sh\npip install vllm\n```\n"), ()))
    assert "frontend" in got and "installation" not in got
    got = set(topic_labels(parse("[Installation]: pip install vllm fails on Python 3.13",
                                 "### How you are installing vllm\n\n```sh\npip install vllm\n```\n"), ()))
    assert "installation" in got


@pytest.mark.parametrize(("title", "want"), [
    ("[Usage]: Error when building the XPU image using Dockerfile", True),
    ("[Bug]: docker build fails at the flash-attn step", True),
    ("[Bug]: the server in my docker container crashes at start-up", False),
    ("[Bug]: image inputs are ignored by Qwen2-VL", False),
])
def test_building_the_image_is_installation(title: str, want: bool) -> None:
    assert ("installation" in labels(title)) is want


def test_a_multi_node_deployment_that_runs_on_ray_is_ray() -> None:
    log = ("```\n2025-01-10 10:00:00,000 INFO worker.py:1654 -- Connecting to existing Ray cluster at address: "
           "10.0.0.1:6379...\nINFO 01-10 10:00:01 [ray_utils.py:314] Using the existing placement group\n```")
    assert "ray" in labels("[Bug]: the server crashes at start-up on two nodes", log)
    # several nodes without Ray (data parallel over its own ranks)
    assert "ray" not in labels("[Bug]: the server crashes at start-up on two nodes",
                               "```\nvllm serve org/m --data-parallel-size 2 --data-parallel-address 10.0.0.1\n```")


def test_a_fused_moe_path_in_an_install_log_is_not_moe() -> None:
    body = ("```\nerror: could not create 'build\\bdist.win-amd64\\wheel\\vllm\\model_executor\\layers\\fused_moe"
            "\\configs\\E=128,N=384,device_name=X.json': path too long\n```")
    assert "moe" not in labels("[Installation]: pip install fails while copying files", body)


def test_ep_is_expert_parallelism() -> None:
    assert "moe" in labels("[Bug]: [DP/EP] DeepGEMM fails at start-up")
    assert "moe" not in labels("[Bug]: the server crashes at start-up",
                               "```\n(EngineCore_DP0 pid=1) INFO [parallel_state.py:1200] rank 0 in world size 1 is "
                               "assigned as DP rank 0, PP rank 0, TP rank 0, EP rank 0\n```")


@pytest.mark.parametrize(("title", "want"), [
    # the quantized checkpoint the title names is what fails
    ("[Bug]: Mistral-7B-Instruct-v0.3-AWQ fails to load on 0.9.2", True),
    ("[Bug]: RTX 5080 cannot run Qwen3-14B-NVFP4", True),
    ("[Bug]: Llama-3.1-8B-Instruct-GPTQ-Int4 returns empty text", True),
    ("[Bug]: vLLM cannot load my finetune saved as bnb-4bit", True),
    ("[Bug]: FP8 checkpoints crash on an A100", True),
    # a feature the quantized model only went through
    ("[Bug]: EAGLE speculative decoding crashes with Qwen3-32B-FP8 on long prompts", False),
    ("[Performance]: throughput regression since 0.11 with Llama-3.3-70B-Instruct-FP8", False),
    # a checkpoint named by its size and format, with a space between them
    ("[Performance]: Mixtral 8x22B AWQ on 4xL40S yields low throughput", False),
    ("[Bug]: Llama-3.3 70B FP8 fails to load on 0.10.0", True),
    ("[Bug]: LMCache connector fails with gemma-3-27b-it-AWQ", False),
    ("[Bug]: tool calls are never parsed for Qwen2.5-72B-Instruct-GPTQ-Int8", False),
    # the KV cache's data type is the KV cache's topic
    ("[Bug]: FP8 KV cache gives wrong answers with FlashInfer on H100", False),
    ("[Bug]: --kv-cache-dtype fp8_e4m3 kv scales are ignored", False),
])
def test_a_quantization_format_in_the_title(title: str, want: bool) -> None:
    assert ("quantization" in labels(title)) is want, labels(title)


def test_a_quantized_model_id_in_the_description_is_what_ran() -> None:
    description = "I serve Qwen2.5-32B-Instruct-AWQ behind nginx and the first request after an hour times out."
    assert "quantization" not in labels("[Bug]: the first request after an idle hour times out", description)
    # the served model restates what ran: with the description alone it is not enough, with a failure it adds up
    served = "I use AWQ quantization.\n\n```\nvllm serve Qwen/Qwen2.5-32B-Instruct-AWQ\n```"
    assert "quantization" not in labels("[Bug]: the first request after an idle hour times out", served)
    failure = served + "\n```\nRuntimeError: AWQ kernel failed: invalid configuration argument\n```"
    assert "quantization" in labels("[Bug]: the first request after an idle hour times out", failure)


@pytest.mark.parametrize(("title", "topic"), [
    ("[Misc]: vLLM performs consistently poorly compared to another server", "performance"),
    ("[Performance]: SGLang is 4x faster than vLLM on long prompts", "performance"),
    ("[Bug]: server fails to start on a Gaudi2 node", "intel-gpu"),
    ("[Bug]: TP=2 on two Arc Pro B60 cards hangs", "intel-gpu"),
])
def test_comparisons_and_intel_accelerators(title: str, topic: str) -> None:
    assert topic in labels(title)


@pytest.mark.timeout(30)
def test_subject_patterns_stay_linear_on_hostile_text() -> None:
    hostile = "a" * 100_000 + "Tokenizer " + "Qwen3-" * 5000 + " load " * 5000
    assert model_is_the_subject(hostile, hostile, set()) in (0.0, 0.5, 1.0)
    moe_is_the_subject(hostile, set())
    without_model_kind("Qwen-" * 20_000 + "VL" + "-7b" * 20_000)


@pytest.mark.parametrize(("title", "want"), [
    ("[Bug]: VLM crashes when the image is larger than 4K", True),
    ("[Feature]: support more vision language models on TPU", True),
    ("[Bug]: Qwen2.5-VL streaming stops after the first image", True),
    # a kind of model that only went through a feature of the server
    ("[Bug]: VLM streaming does not return the usage", False),
    ("[Bug]: tool calls are not parsed for vision models", False),
    # a vision-language model named by its id: the same
    ("[Bug]: Qwen2.5-VL-72B-Instruct fails to start", True),
    ("[Bug]: InternVL3-38B crashes on a batch of images", True),
    ("[Bug]: the reasoning parser splits the thinking of Qwen3-VL-8B-Thinking wrongly", False),
    ("[Bug]: tool calls from InternVL3-38B are never parsed", False),
    ("[Bug]: llava-1.5-7b ignores response_format json_schema", False),
])
def test_a_kind_of_model_in_the_title(title: str, want: bool) -> None:
    assert ("multi-modality" in labels(title)) is want, labels(title)


def test_the_title_models_kept_are_those_of_the_title_asked() -> None:
    from bot import subject
    from bot.report.entities import title_models

    titles = ["Qwen3-30B-A3B fails to load", "[Bug]: Llama-3-8B outputs gibberish", "DeepSeek-V3 on 2 nodes"]
    for title in (*titles, *titles[::-1], titles[0], titles[0]):
        assert subject._title_models(title) == tuple(title_models(title))
    assert [subject.names_moe_model(t) for t in titles] == [True, False, True]
    assert [subject.names_moe_model(t) for t in titles[::-1]] == [True, False, True]


PROSE_WORDS = ["the", "output", "outputs", "is", "are", "garbage", "gibberish", "empty", "blank", "response", "repeat",
               "repeated", "tokens", "lower", "accuracy", "drop", "different", "logprobs", "inconsistent", "results",
               "乱码", "é", "ſ", "\u212a", "\x0b", "\n", " ", "-", ":", "Output", "ACCURACY", "no", "wrong", "answer"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PROSE_WORDS), max_size=20).map(" ".join) | st.text(max_size=60))
def test_the_prose_is_searched_as_re_searches_it(prose: str) -> None:
    # wrong output and accuracy in the prose are found by one RE2 pass each: the same answers as the `re` patterns
    assert bool(subject._WRONG_IN_PROSE.matching(prose)) == bool(subject._WRONG.search(prose))
    assert bool(subject._ACCURACY_IN_PROSE.matching(prose)) == bool(subject._ACCURACY.search(prose))


_MOE_RE = re.compile(subject.MOE_MODELS, re.IGNORECASE | re.ASCII)
_MOE_PIECES = ["Qwen3", "30B", "A3B", "a3b", "8x7B", "17B", "128E", "H20", "3e", "DeepSeek", "R1", "V3", "Distill",
               "Llama", "4", "maverick", "MoE", "Next", "kimi", "K2", "GLM", "4.5", "4.5V", "gpt", "oss", "minimax",
               "M2",
               "olmoe", "phi", "3.5", "hunyuan", "grok", "dbrx", "jamba", "mixtral", "7b", "1.5b", "-", "_", " ", ".",
               "K", "ſ"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_MOE_PIECES), max_size=10).map("".join))
def test_moe_models_found_by_one_pass_as_by_the_pattern(title):
    assert bool(subject._MOE.matching(title)) == bool(_MOE_RE.search(title))
