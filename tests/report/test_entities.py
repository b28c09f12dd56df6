"""Entity keys of reports that carry no error (bot/report/entities.py), on reports written in the issue forms' shape."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.report import entities, parse
from bot.report.entities import model_family, normalise_model, token_text


def keys(title: str, body: str = "") -> list[str]:
    return [e.key for e in parse(title, body).entities]


@pytest.mark.parametrize("name", ["microsoft/phi-4", "Phi-4", "phi4", "PHI-4-instruct", "https://huggingface.co/microsoft/phi-4"])
def test_model_ids_normalise_to_one_key(name):
    assert normalise_model(name.rsplit("huggingface.co/", 1)[-1]) == "phi4"


@pytest.mark.parametrize("name, key", [
    ("Qwen/Qwen2.5-7B-Instruct", "qwen25"),
    ("openbmb/MiniCPM-Llama3-V-2_5", "minicpmllama3v25"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtralv0.1".replace(".", "")),
    ("google/flan-t5-xl", "flant5"),
])
def test_sizes_and_variants_are_dropped(name, key):
    assert normalise_model(name) == key


@pytest.mark.parametrize("name, arch, moe", [
    ("google/flan-t5-large", "T5ForConditionalGeneration", False),
    ("lmsys/fastchat-t5-3b-v1.0", "T5ForConditionalGeneration", False),
    ("google/t5gemma-2b-2b", "T5GemmaForConditionalGeneration", False),
    ("mistralai/Mixtral-8x22B-v0.1", "MixtralForCausalLM", True),
    ("Qwen/Qwen3-30B-A3B", "Qwen3MoeForCausalLM", True),
    ("deepseek-ai/DeepSeek-V2-Lite", "DeepseekV2ForCausalLM", True),
])
def test_model_family_gives_the_architecture_class(name, arch, moe):
    assert model_family(name) == (arch, moe)


@pytest.mark.parametrize("name, key", [
    ("Gemma2ForCausalLM", "gemma2"),
    ("Qwen2VLForConditionalGeneration", "qwen2vl"),
    ("GPT2LMHeadModel", "gpt2"),
])
def test_a_generative_architecture_class_names_its_family(name, key):
    assert normalise_model(name) == key


def test_a_pooling_architecture_class_is_another_model():
    assert normalise_model("Qwen2_5_VLForEmbedding") != normalise_model("Qwen/Qwen2.5-VL-7B-Instruct")


def test_a_request_by_class_name_and_one_by_model_id_share_the_model_key():
    by_id = keys("[Feature]: Support for google/gemma-2-9b-it / gemma-2-27b-it",
                 "### 🚀 The feature, motivation and pitch\n\nThe new release would be nice to serve.\n")
    by_class = keys("[Feature]: need 'Gemma2ForCausalLM' support",
                    "### 🚀 The feature, motivation and pitch\n\nMy fine-tune uses this format.\n")
    assert "model=gemma2" in by_id and "model=gemma2" in by_class


@pytest.mark.parametrize("title", ["[Installation]: vllm 0.7 on Apple Device (Mac)",
                                   "[Installation]: pip install fails on my Mac"])
def test_mac_named_plainly_is_macos(title):
    assert "platform=macos" in keys(title, "### How you are installing vllm\n\n```sh\npip install vllm\n```\n")


@pytest.mark.parametrize("title", ["[Feature]: Metal backend support (Apple M1, M2)", "Can vllm support an M3 Max?"])
def test_apple_chips_are_no_requested_models(title):
    found = keys(title, "### 🚀 The feature, motivation and pitch\n\nMany of us develop on Macs.\n")
    assert not any(k.startswith("model=") for k in found)
    assert "model=minimaxm2" in keys("[New Model]: MiniMax-M2", "")          # a model named with M2 still is one


def test_unknown_family_has_no_architecture():
    assert model_family("acme/WidgetLM-7B") is None


def test_new_model_request_keys_the_model_and_its_architecture():
    body = ("### The model to consider.\n\nhttps://huggingface.co/google/flan-t5-xxl\n\n"
            "### The closest model vllm already supports.\n\n_No response_\n")
    assert keys("[New Model]: Flan-T5 XXL", body) == ["model=flant5", "arch=T5ForConditionalGeneration"]


def test_the_same_model_written_three_ways_gives_one_key():
    a = keys("[New Model]: microsoft/phi-4")
    b = keys("[New Model]: Phi-4")
    c = keys("[Feature]: please support phi4")
    assert "model=phi4" in a and "model=phi4" in b and "model=phi4" in c


def test_capability_on_a_model_keys_the_capability_and_the_architecture():
    got = keys("[Feature]: LoRA adapter support for Mixtral 8x7B",
               "### 🚀 The feature, motivation and pitch\n\nWe fine-tuned adapters and want to serve them.\n")
    assert got[:2] == ["cap:lora=MixtralForCausalLM", "cap:lora=moe"]


def test_capability_on_two_different_dense_models_gives_two_keys_of_one_group():
    a = parse("[Feature]: pipeline parallel support for Gemma 3", "").entities
    b = parse("[Feature]: pipeline parallel support for Mistral", "").entities
    assert [e.key for e in a] == ["cap:pp=Gemma3ForConditionalGeneration"]
    assert [e.key for e in b] == ["cap:pp=MistralForCausalLM"]
    assert a[0].group == b[0].group == "cap:pp"


def test_windows_install_and_wsl_install_are_different_platforms():
    win = keys("[Installation]: pip install vllm fails on Windows 11",
               "### How you are installing vllm\n\n```sh\npip install vllm\n```\n\nIt stops while building the wheel.")
    wsl = keys("[Installation]: pip install vllm fails in WSL2 on Windows 11",
               "### How you are installing vllm\n\n```sh\npip install vllm\n```\n")
    assert win[0] == "platform=windows" and "step=pip" in win
    assert wsl[0] == "platform=wsl"


def test_rocm_targets_come_from_gfx_names_and_product_names():
    a = keys("[Feature]: support for Radeon RX 7900 XTX", "Running ROCm 6.2 on Ubuntu.")
    b = keys("[Feature]: gfx1100 support", "")
    assert "gfx=gfx1100" in a and "gfx=gfx1100" in b
    assert "gfx=gfx906" in keys("[Feature]: AMD Instinct MI60 support", "")


def test_questions_key_the_api_use_they_ask_about():
    assert "topic:streaming=offline-llm" in keys(
        "[Usage]: how to stream tokens with the offline LLM class?", "I call llm.generate and get everything at once.")
    assert "topic:serving=several-models" in keys(
        "[Usage]: can one vllm server host several models at once?", "Like one endpoint with two models.")
    assert "topic:hidden-states=last" in keys(
        "[Usage]: get the last hidden state from a causal LM", "I want a sentence vector for retrieval.")
    assert "topic:model-source=local" in keys(
        "[Usage]: how do I load a model from a local directory?", "No internet on the cluster nodes.")


def test_a_framework_wrapper_is_another_question_than_vllms_own_class():
    body = ("```python\nfrom langchain_community.llms import VLLM\nllm = VLLM(model='x', streaming=True)\n```\n"
            "The text comes back in one piece.")
    assert "topic:streaming=integration" in keys("[Usage]: streaming output with vllm", body)


def test_hidden_states_of_every_layer_is_another_question():
    assert "topic:hidden-states=every-layer" in keys(
        "[Usage]: how to get hidden states of all layers", "I need the intermediate layer activations.")


def test_memory_question_with_utilisation_already_lowered_is_another_question():
    plain = keys("[Usage]: why does vllm take 90% of GPU memory for a small model?", "")
    lowered = keys("[Usage]: why does vllm still take so much GPU memory?",
                   "```\nvllm serve facebook/opt-125m --gpu-memory-utilization 0.2\n```\n")
    assert "topic:memory=preallocation" in plain
    assert "topic:memory=already-limited" in lowered


@pytest.mark.parametrize("title", [
    "[Usage]: how do I run a 70B model on 4 GPUs?",
    "How to split a model across two GPUs",
    "[Usage]: my server has multiple GPUs but only one is busy",
    "can vllm do model parallelism for a model that does not fit one card?",
])
def test_running_one_model_on_several_gpus_is_one_question(title):
    assert "topic:parallel=multi-gpu" in keys(title, "")


@pytest.mark.parametrize("title", [
    "[Usage]: tensor parallel across two single-GPU machines?",     # several machines: the multi-node question
    "[Bug]: server hangs when using multiple GPUs",                 # a failure, not the question
    "[Usage]: can't load Mixtral on 2 GPUs",
    "[Feature]: tensor parallelism with an uneven number of heads",  # not asked as a question
    "[Usage]: how to pick which GPU the model runs on?",            # another question (ask:select=gpu)
])
def test_several_gpus_named_by_another_question_or_a_failure_is_not_that_question(title):
    assert "topic:parallel=multi-gpu" not in keys(title, "")


def test_tool_calling_through_the_server_is_one_question_unless_asked_for_one_model():
    for title in ("[Usage]: how do I pass tools and tool_choice to the chat endpoint?",
                  "[Doc]: does vLLM support function calling?",
                  "[Feature]: support the tools parameter in the OpenAI server"):
        assert "topic:api=tool-calling" in keys(title, ""), title
    assert "topic:api=tool-calling" not in keys("[Feature]: function calling for Llama-3-70B-Instruct", "")
    assert "topic:api=tool-calling" not in keys("[Bug]: tool calls broken with streaming", "")
    assert "topic:api=tool-calling" not in keys("[Usage]: how to write a tool parser plugin?", "")
    # one option of it is another request
    assert "topic:api=tool-calling" not in keys("[Feature]: let tool_choice default to auto with auto tool choice", "")


def test_server_authentication_and_keys_per_user_are_two_questions():
    assert "topic:auth=server" in keys("[Usage]: can I protect the OpenAI server with an API key?", "")
    assert "topic:auth=server" in keys("Is authentication supported?", "Anyone can call my endpoint.")
    per_user = "Each user of our team should get their own key so we can revoke it."
    assert "topic:auth=per-user" in keys("[Feature]: several API keys", per_user)
    assert "topic:auth=server" not in keys("[Feature]: several API keys", per_user)


def test_a_family_named_alone_or_an_unsupported_architecture_class_is_the_requested_model():
    assert "model=baichuan" in keys("Support for baichuan models", "")
    assert "model=baichuan" in keys("Model architectures ['BaichuanForCausalLM'] are not supported for now.", "")
    assert "model=gemma3" in keys("[Feature]: is Gemma3ForConditionalGeneration supported?", "")
    # a sentence around a family is no model name
    assert not [k for k in keys("[Usage]: I want to try a mamba model", "") if k.startswith("model=")]


def test_an_arm64_image_asked_for_is_one_question_and_a_cpu_image_another():
    for title in ("[Feature]: please publish an ARM docker image", "[Installation]: Dockerfile for aarch64?",
                  "[Feature]: linux/arm64 build of the vllm-openai container"):
        got = keys(title, "")
        assert "topic:image=arm64" in got and "platform=aarch64" in got, title
    cpu = keys("[Feature]: a CPU docker image for arm64", "")
    assert "topic:image=arm64" not in cpu and "topic:image=cpu" in cpu
    assert "topic:image=cpu" in keys("[Feature]: Dockerfile.cpu for aarch64 servers", "")
    assert "topic:image=cpu" not in keys("[Usage]: docker image with cpu offload?", "")
    assert "topic:image=arm64" not in keys("[Installation]: arm64 docker build failed", "")   # a failure
    assert not [k for k in keys("[Feature]: docker image for GH200", "") if k.startswith("model=")]


def test_chat_through_the_offline_llm_class_is_one_question():
    assert "topic:chat=offline-llm" in keys("[Usage]: how to use chat with the LLM class?", "")
    assert "topic:chat=offline-llm" in keys("how to use the chat function", "I only find llm.generate for prompts.")
    assert "topic:chat=offline-llm" not in keys("[Usage]: which chat template does the server use?", "")


@pytest.mark.parametrize("title", ["Is there any way to support LLaVA?", "Does it support multi-modal LLM like LLaVa?"])
def test_a_family_named_among_asking_words_is_the_requested_model(title):
    assert "model=llava" in keys(title, "")


def test_several_prompts_in_one_server_request_is_not_the_batch_file_or_batch_size_question():
    assert "topic:batch=server-prompts" in keys("How to send a batch of prompts to the OpenAI server?", "")
    assert "topic:batch=server-prompts" in keys("API server batch request", "I want to pass a list of prompts.")
    assert "topic:batch=server-prompts" not in keys("[Usage]: what batch size does the server use?", "")
    assert "topic:batch=openai-batch" in keys("[Usage]: does the server have a batch API?", "")


def test_misspelt_keywords_are_tolerated():
    assert token_text("embeding modle") == " embedding model "
    assert token_text("streamming from the ofline LLM") == " streamming from the offline llm "   # stream~ matches
    assert "topic:streaming=offline-llm" in keys("[Usage]: streamming from the ofline LLM clas", "")
    assert "topic:serving=embedding-model" in keys("[Feature]: support for embeding models", "")
    assert token_text("unable") == " unable "   # not corrected into another word ("enable")


def test_a_bug_report_with_a_traceback_has_no_entity_keys():
    body = ("### 🐛 Describe the bug\n\nvllm serve crashes on Windows.\n\n```\nTraceback (most recent call last):\n"
            '  File "/x/vllm/engine/arg_utils.py", line 10, in create_engine_config\n'
            "ValueError: something went wrong here with the config\n```\n")
    assert parse("[Bug]: crash on start", body).entities == ()


def test_urls_and_snake_case_names_are_not_models():
    got = keys("[Feature]: expose `prompt_logprobs` in the OpenAI server",
               "See https://github.com/vllm-project/vllm/issues/1234 for context.")
    assert not any(k.startswith("model=") for k in got)
    assert "topic:output=logprobs" in got


def test_long_hostile_input_is_bounded():
    title = "[Feature]: " + "support " * 5000
    body = ("stream " * 200_000) + "\n" + ("a/b-1 " * 50_000)
    parse(title, body)   # finishes: the title, the lead and every pattern are bounded


@pytest.mark.parametrize("title", [
    "How to serve a model on Windows with WSL2?", "Does vLLM support ROCm on a gfx1100 card?",
    "[Usage]: how do I enable prefix caching with LoRA adapters", "Streaming usage stats in the chat completion",
    "[Bug]: server crashes", "run on CPU only", "Jetson Orin install fails", "the cpus are idle",
    "How can I set the system prompt and stop tokens?", "", "   ",
])
def test_first_word_groups_answer_as_the_one_alternation(title: str) -> None:
    from bot.report.entities import _PLATFORMS, TOPICS, _FirstWords, _Phrases
    for phrases in (tuple(p for t in TOPICS for p in t.all[0]), tuple(w for _, ws in _PLATFORMS for w in ws)):
        tokens = token_text(title)
        assert _FirstWords(phrases).search(tokens) == _Phrases(phrases).search(tokens)


def test_a_model_line_written_after_the_family_is_part_of_the_name():
    assert "model=qwen3omni" in keys("[Feature]: Qwen3 Omni Support")
    assert "model=qwen3embedding" in keys("[Feature]: support qwen3 embedding and reranker models")
    assert "model=qwen3" in keys("[Feature]: Qwen3 support please")


def test_a_bare_version_takes_the_name_before_it_and_a_bug_form_request_is_a_request():
    assert "model=kimik2" in keys("[New Model]: Kimi-K2-Instruct")
    assert "model=kimik2" in keys("[Bug]: Issue with Kimi K2 Model Support", "### 🐛 Describe the bug\n\nWhen?\n")


def test_a_number_format_is_not_a_requested_model():
    assert not [k for k in keys("[Feature]: native NVFP4 kernels on SM120") if k.startswith("model=")]


def test_asking_for_a_platform_to_be_supported_is_one_question():
    assert "platform=macos:question" in strengths("[Feature]: Metal support")
    assert "platform=windows:question" in strengths("Does vllm support Windows?")
    assert "platform=macos:area" in strengths("[Feature]: FP8 support on macOS")       # a capability there
    assert "platform=macos:area" in strengths("[Feature]: support the CPU backend on macOS x86")   # one on another
    assert "platform=windows:area" in strengths("Support ROCm on Windows")
    assert not [k for k in keys("[Usage]: deploy vllm on a bare metal server") if k.startswith("platform=")]


def strengths(title: str) -> list[str]:
    return [f"{e.key}:{e.strength}" for e in parse(title, "").entities]


_FIRSTS = sorted({first.strip() for fw in (entities._ANY_PLATFORM, entities._ANY_TOPIC) for first, _ in fw.groups})
_TOKEN_PIECES = [*_FIRSTS, *(f[:-1] for f in _FIRSTS[::3]), *(f + "s" for f in _FIRSTS[::4]), "2", "x", "llm", "é"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKEN_PIECES), max_size=12).map(lambda words: " " + " ".join(words) + " "))
def test_first_words_found_by_one_pass_as_by_a_test_each(tokens):
    for fw in (entities._ANY_PLATFORM, entities._ANY_TOPIC):
        each = any(first in tokens and pattern.search(tokens) is not None for first, pattern in fw.groups)
        assert fw.search(tokens) == each
