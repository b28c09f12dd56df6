"""What a question asks (bot/report/asks.py) and the Chinese glossary (bot/glossary.py), on reports written in the
issue forms' shape."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.dupes import DuplicateIndex, MemoryIndexStore
from bot.glossary import english, with_english
from bot.report import asks, parse
from bot.report.asks import frame, identifiers, is_question
from bot.report.entities import token_text

USAGE = "### Your current environment\n\n```text\nThe output of `python collect_env.py`\n```\n\n" \
        "### How would you like to use vllm\n\n{}\n"


def ask_keys(title: str, body: str = "") -> list[tuple[str, str]]:
    return [(e.key, e.strength) for e in parse(title, body).entities if e.key.startswith("ask:")]


@pytest.mark.parametrize("title", [
    "[Usage]: How do I run the server on the second GPU only?",
    "Can I choose which GPU the engine uses?",
    "[Usage]: pin the LLM class to one particular GPU",
    "how to pass a gpu id to LLM()",
    "[Bug]: setting CUDA_VISIBLE_DEVICES inside my script is ignored",
])
def test_ways_of_asking_for_one_gpu_give_one_key(title):
    assert ask_keys(title, USAGE.format("I have four cards and want to use one."))[0][0] == "ask:select=gpu"


@pytest.mark.parametrize("title, key", [
    ("[Usage]: release GPU memory after I am done with an LLM object", "ask:free=gpu-memory"),
    ("How to unload a model and load another one in the same process?", "ask:free=gpu-memory"),
    ("[Usage]: turn off the reasoning output of a thinking model", "ask:disable=thinking"),
    ("[Usage]: how to get prompt logprobs from the chat endpoint", "ask:get=logprobs"),
    ("[Usage]: how can I change max_num_seqs at runtime?", "ask:set=id:max_num_seqs"),
])
def test_actions_on_things(title, key):
    assert ask_keys(title, USAGE.format("Thanks."))[0][0] == key


@pytest.mark.parametrize("title, kind_body", [
    ("[Installation]: wheel for CUDA 12.1 with the latest release", "### How you are installing vllm\n\npip\n"),
    ("Is cu121 still supported by the prebuilt wheels?", ""),
    ("[Installation]: how to build against cuda12.1", "### How you are installing vllm\n\nfrom source\n"),
])
def test_a_cuda_version_asked_for_is_one_key_however_written(title, kind_body):
    assert ask_keys(title, kind_body) == [("ask:install=cuda:12.1", "question")]


def test_a_cuda_version_in_a_question_about_running_is_not_an_install_question():
    assert ask_keys("[Usage]: why does the server run out of memory on CUDA 12.1?", USAGE.format("8B model.")) \
        == []


@pytest.mark.parametrize("title, key", [
    ("[Usage]: how can I serve a model on a machine without internet access?", "ask:run=offline"),
    ("[Usage]: the usage field is missing from streamed chunks", "ask:get=usage"),
])
def test_running_offline_and_token_usage(title, key):
    assert ask_keys(title, USAGE.format("Thanks."))[0][0] == key


@pytest.mark.parametrize("title", [
    "[Usage]: offline batch inference over a jsonl file of chat requests",
    "How to do offline inference on two nodes?",
    "[Usage]: OpenAI-format (offline) batch generation with the LLM class",
])
def test_offline_inference_is_the_llm_class_not_running_without_internet(title):
    assert ("ask:run=offline", "question") not in ask_keys(title, USAGE.format("Thanks."))


@pytest.mark.parametrize("title", [
    "[Usage]: run vllm offline, the machine has no internet",
    "How to use vllm in offline mode?",
])
def test_running_offline_is_still_asked_in_its_other_wordings(title):
    assert ask_keys(title, USAGE.format("Thanks."))[0][0] == "ask:run=offline"


def test_a_model_release_is_not_freeing_memory():
    assert frame(token_text("Support for the new model release from last week")) is None


def test_a_title_without_a_question_lends_the_first_question_of_the_description():
    body = USAGE.format("I evaluate ten checkpoints in a loop. How can I free the GPU memory between them?")
    assert ask_keys("[Usage]: Out of memory with several checkpoints in a loop", body) == \
        [("ask:free=gpu-memory", "question")]


def test_a_failure_report_that_does_not_ask_keys_only_the_area():
    body = "### 🐛 Describe the bug\n\nAfter `del llm` the memory stays allocated, nvidia-smi shows 70 GB.\n"
    assert ask_keys("[Bug]: GPU memory not released after deleting the engine", body) == \
        [("ask:free=gpu-memory", "area")]


def test_identifiers_are_flags_and_snake_case_names_not_words_or_files():
    assert identifiers("set --max-model-len and HF_HUB_OFFLINE, not --model or config.json") == \
        ["max_model_len", "hf_hub_offline"]


def test_question_phrasing():
    assert is_question("[Usage]: How to serve two models?") and is_question("Is it possible to stream?")
    assert not is_question("[Bug]: server crashes at startup")


def test_glossary_gives_english_for_chinese_words_only():
    assert english("vllm推理如何指定某块gpu") == "inference how specify"
    assert english("plain English title") == ""
    assert with_english("多机部署") == "多机部署 multi node deploy"


def test_a_question_in_chinese_is_keyed_like_one_in_english():
    assert ask_keys("[Usage]: 如何指定显卡运行vllm？", USAGE.format("四张卡，只想用第二张。"))[0][0] == "ask:select=gpu"


def test_two_wordings_of_one_question_are_linked_and_another_question_is_not():
    index = DuplicateIndex(MemoryIndexStore())
    first = parse("How to specify which GPU vLLM should use?",
                  "I have several cards of different types and only want the server on the second one.")
    index.add(1, first, created_at="2024-01-01T00:00:00Z")
    index.add(2, parse("[Usage]: how to free GPU memory after deleting the LLM object",
                       USAGE.format("Calling del and gc.collect() keeps the memory taken.")),
              created_at="2024-01-02T00:00:00Z")
    again = parse("[Usage]: can I pin the engine to a certain GPU in my script?",
                  USAGE.format("The server always starts on GPU 0 but I need it on another card."))
    linked = index.search(again)
    assert [c.number for c in linked] == [1]
    assert "choose the GPU" in linked[0].reason


@pytest.mark.timeout(30)
def test_hostile_titles_and_descriptions_are_bounded():
    title = "how to free " + "gpu memory release model " * 2_000 + "CUDA_VISIBLE_DEVICES_" * 500
    body = USAGE.format("如何释放显存？" * 5_000 + " how to free memory?" * 5_000)
    keys = ask_keys(title, body)
    assert keys and keys[0][0] == "ask:free=gpu-memory"
    assert len(english("显存" * 100_000).split()) <= 2 * 20_000


@pytest.mark.parametrize("title, key", [
    ("How to abort a streaming request?", "ask:abort=request"),
    ("[Usage]: can I cancel a running generation from the client?", "ask:abort=request"),
    ("[Usage]: how to acquire the logits of every token", "ask:get=logits"),
    ("[Usage]: how to get the logits of a classification model", "ask:get=class-logits"),
])
def test_aborting_a_request_and_getting_logits(title, key):
    assert ask_keys(title, USAGE.format("Thanks."))[0][0] == key


def test_stopping_generation_at_a_word_is_not_aborting_a_request():
    assert ask_keys("How to stop generation at a newline?", USAGE.format("Thanks.")) == []


def test_a_question_in_the_description_is_narrowed_by_the_title():
    body = USAGE.format("How can I get the logits out of it?")
    assert ask_keys("[Feature]: logits for the sequence classification task", body)[0][0] == "ask:get=class-logits"


def test_a_model_name_run_into_chinese_is_a_word_of_its_own():
    assert with_english("支持internlm2") == "支持 internlm2 support"
    assert "model=internlm2" in [e.key for e in parse("支持internlm2", "").entities]
    assert "model=internlm2" in [e.key for e in parse("请适配internlm2模型", "").entities]


# the phrases' words, glued by the characters a token string and a raw title hold, so that matches are common
_ASK_WORDS = sorted({w for _, phrases in (*asks.ACTIONS, *asks.THINGS) for p in (*phrases, *asks.SELECTING,
                     *asks.INSTANCE) for w in p.rstrip("~").split()})
_PIECES = [*_ASK_WORDS, *(w[:-1] for w in _ASK_WORDS[::4]), *(w.upper() for w in _ASK_WORDS[::5]), " ", "  ", "_",
           "-", "s", "2", "\n", "é", "("]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14).map(lambda parts: "".join(
    p if i % 2 else f" {p} " for i, p in enumerate(parts))))
def test_the_first_word_gate_finds_every_match(text):
    """A phrase group searched only when its first words are in the gate text finds what searching finds."""
    gated = asks.gate(text)
    for words in (*(w for _, w in asks._ACTIONS), *(w for _, w in asks._THINGS), asks._INSTANCE, asks._SELECTING):
        assert words.positions(text, gated) == [text.count(" ", 0, m.start()) for m in words.pattern.finditer(text)]


def test_the_phrases_are_words_the_gate_reads():
    for _, phrases in (*asks.ACTIONS, *asks.THINGS):
        for p in phrases:
            assert re.fullmatch(r"[a-z]+( [a-z]+)*~?", p), p


@pytest.mark.parametrize("title", [
    "[Usage]: how to disable these http request logs",
    "[Usage]: How to turn off logging of the LLM class progress bar?",
    "[Doc]: how to turn off the throughput stats log printed every few seconds",
])
def test_turning_off_the_logs_is_only_an_area_several_logs_have_their_own_switch(title):
    assert ask_keys(title, USAGE.format("The console is flooded.")) == [("ask:disable=log", "area")]
    index = DuplicateIndex(MemoryIndexStore())
    index.add(1, parse("[Usage]: How to disable logging", USAGE.format("The offline class prints a progress bar.")),
              created_at="2024-01-01T00:00:00Z")
    assert index.search(parse(title, USAGE.format("The console is flooded."))) == ()
