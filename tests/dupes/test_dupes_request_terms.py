"""Requests and questions whose titles ask about the same thing in other words (bot/dupes/request_terms.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from dupes_reports import FEATURE, USAGE

from bot.dupes.document import build_doc
from bot.dupes.request_terms import other_version, overlap, request_terms
from bot.dupes.scoring import DEFAULT_POLICY, asked_of, combine, compare, reason
from bot.report import parse

FILLER = [
    ("[Usage]: what does --max-num-seqs change for throughput?", USAGE.format("Batch sizes confuse me a lot.")),
    ("[Feature]: add a metric for queue time per request", FEATURE.format("Prometheus should export it too.")),
    ("[Usage]: how to set the chat template for a base model", USAGE.format("The template is missing.")),
    ("[Feature]: support the Mistral tokenizer mode", FEATURE.format("Some checkpoints ship only tekken.")),
    ("[Bug]: wrong output with temperature 0", "### 🐛 Describe the bug\n\nOutputs differ between runs.\n"),
]


@pytest.fixture
def index(index):
    """The shared empty index (tests/dupes/conftest.py) holding the filler reports."""
    for i, (title, body) in enumerate(FILLER):
        index.add(10 + i, parse(title, body), (), created_at="2025-01-01T00:00:00Z")
    return index


def add(index, number, title, body):
    index.add(number, parse(title, body), (), created_at="2025-02-01T00:00:00Z")


@pytest.mark.parametrize(("title", "terms"), [
    ("[Feature]: vllm support for Ascend NPU", ("ascend", "npu")),
    ("Request for Ascend NPU support", ("ascend", "npu")),
    ("Is it possible to add support for the Granite speech model?", ("granite", "speech")),
    ("[New Model]: Qwen2.5-VL", ("qwen25", "vl")),          # one version, not "qwen2" and a dropped "5"
    ("支持internlm2", ("internlm2",)),                        # the glossary's "support" is asking, not a subject
    ("[Usage]: how to abort a request?", ("abort",)),
])
def test_request_terms_drop_the_wording_of_asking(title, terms):
    assert request_terms(title) == terms


@pytest.mark.parametrize("title", [
    "[Installation]: vllm in WSL2 cannot find the GPU after pip install",
    "[Usage]: GPU memory use is still huge with a low --gpu-memory-utilization",
    "[Usage]: doesn't work on a Tesla P100",
    "[Usage]: granite speech output is garbled",
    "vllm推理报错",                                           # the glossary reads 报错 as "error"
])
def test_a_title_reporting_a_failure_asks_nothing(title):
    assert request_terms(title) == ()


def test_other_versions_of_one_name_are_other_requests():
    assert other_version(("qwen2", "vl"), ("qwen25", "vl"))
    assert other_version(("312",), ("313",))
    assert other_version(("exl2",), ("exl3",))
    assert not other_version(("qwen25", "vl"), ("qwen25", "vl", "instruct"))
    assert not other_version(("granite", "speech"), ("granite", "speech", "33"))
    assert overlap(("qwen2", "vl"), ("qwen25", "vl"), {"qwen2": 5.0, "qwen25": 5.0, "vl": 3.0}) == 0.0
    assert overlap(("312",), ("312",), {"312": 5.0}) == 0.0          # a number alone names nothing


def test_overlap_weighs_the_shared_words_by_idf():
    idf = {"prompt": 2.0, "lookup": 5.0, "decod": 3.0, "speculative": 2.5, "diverse": 5.0, "lora": 3.0,
           "beam": 4.0, "search": 3.0}
    assert overlap(("prompt", "lookup", "decod"), ("prompt", "lookup", "speculative", "decod"), idf) == \
        pytest.approx(10 / 12.5)
    assert overlap(("lora", "beam", "search"), ("diverse", "beam", "search"), idf) == pytest.approx(7 / 12)


def test_a_request_in_other_words_is_linked_with_its_subject_as_reason(index):
    add(index, 100, "[Feature]: Request for Granite Speech support",
        FEATURE.format("IBM released a speech model; serving it next to our chat models would simplify things."))
    found = index.search(parse("Is it possible to add the granite speech model?",
                               "We would like to transcribe calls with it."), (), exclude=200)
    assert [c.number for c in found] == [100]
    assert "both titles ask about granite speech" in found[0].reason


def test_a_question_filed_again_under_the_same_title_is_linked(index):
    title = "[Usage]: tokenizer mismatch between vocab size and embedding rows for custom checkpoints"
    add(index, 100, title, USAGE.format("The custom checkpoint resizes embedding rows after adding tokens."))
    found = index.search(parse(title, USAGE.format("Which size wins, the config's or the tokenizer's?")), (),
                         exclude=200)
    assert [c.number for c in found] == [100]
    assert "both titles ask about tokenizer mismatch vocab size embedding rows custom checkpoints" in found[0].reason


def test_another_version_of_the_requested_model_is_not_linked(index):
    add(index, 100, "[New Model]: Granite Speech 3.2", FEATURE.format("A speech model from IBM."))
    assert index.search(parse("[New Model]: Granite Speech 3.3", FEATURE.format("The new release.")), (),
                        exclude=200) == ()


def test_a_failure_report_gets_no_subject_signal(index):
    add(index, 100, "[Feature]: Request for Granite Speech support", FEATURE.format("A speech model from IBM."))
    bug = parse("[Bug]: granite speech", "### 🐛 Describe the bug\n\nThe output is empty for every request.\n")
    doc = build_doc(bug)
    assert doc.subject == ("granite", "speech")
    assert all(not m.subject for m, _ in index.candidates(doc, exclude=200))


def test_subject_needs_the_policy_overlap_and_vetoes_near_misses():
    a = build_doc(parse("[Feature]: support for Ascend NPU", FEATURE.format("Huawei accelerators.")))
    b = build_doc(parse("Request for Ascend NPU support", "Many of our customers use them."))
    idfs = {"ascend": 6.0, "npu": 6.0}
    m = compare(b, a, 0.1, asked=asked_of(b, idfs), idfs=idfs)
    assert m.subject == ("ascend", "npu") and m.subject_overlap == 1.0
    assert combine(m) == pytest.approx(0.7 * 0.1 * m.query_terms / 12 + DEFAULT_POLICY.w_subject)
    assert "both titles ask about ascend npu" in reason(m)
    assert compare(b, a, 0.1).subject == ()                           # not prepared: no subject signal
    bug = build_doc(parse("[Bug]: Ascend NPU", "### 🐛 Describe the bug\n\nIt hangs.\n"))
    assert asked_of(bug, idfs) is None                                # a failure report asks nothing
    assert combine(replace(m, entity_conflict=True)) == 0.0
    assert combine(replace(m, subject_overlap=DEFAULT_POLICY.min_subject - 0.01)) < DEFAULT_POLICY.threshold_for(m)


@pytest.mark.parametrize(("title", "terms"), [
    ("[New Model]: Granite-Speech-8B-Instruct", ("granite", "speech")),      # size and variant name no model
    ("is it support Granite-Speech-2B-Chat model ?", ("granite", "speech")),
    ("[New Model]: ibm-granite/granite-speech upstream support", ("granite", "speech", "upstream")),  # no org
    ("[Bug]: Issue with Granite Speech Model Support", ("granite", "speech")),
    ("[Usage]: how to acquire logits in vllm", ("logit",)),
    ("How to retrieve the hidden states?", ("hidden", "state")),              # generic verbs ask, name nothing
    ("[Usage]: deploying a reranker the same way as a chat model", ("reranker",)),
    ("[Usage]: How to use vllm serve for grammar sampling?", ("grammar", "sampl")),
    ("[Doc]: is function call mode supported", ("function", "call")),
    ("Which version of vLLM is required for Granite Speech?", ("granite", "speech")),
    ("Add support for AMD APU (gfx1150/gfx1151)", ("amd", "apu", "gfx1150", "gfx1151")),  # not a Hub id
])
def test_variants_sizes_hub_organisations_and_generic_verbs_are_not_the_subject(title, terms):
    assert request_terms(title) == terms


def test_a_request_filed_with_the_bug_form_is_a_request():
    doc = build_doc(parse("[Bug]: Granite Speech Support", "### 🐛 Describe the bug\n\nPlease add it.\n"))
    assert doc.kind == "feature" and doc.subject == ("granite", "speech")
    failing = build_doc(parse("[Bug]: Granite Speech support fails to load", "### 🐛 Describe the bug\n\nIt hangs.\n"))
    assert failing.kind == "bug" and failing.subject == ()


def test_a_request_filed_with_the_bug_form_is_linked_to_the_feature_request(index):
    add(index, 100, "[Feature]: Granite Speech Support",
        FEATURE.format("IBM released a speech model; serving it next to our chat models would simplify things."))
    found = index.search(parse("[Bug]: Granite Speech Support", "### 🐛 Describe the bug\n\nWhen will it work?\n"),
                         (), exclude=200)
    assert [c.number for c in found] == [100]


def test_a_language_version_asked_for_is_the_subject_and_another_version_is_not_linked(index):
    # "Python" is boilerplate of every environment dump, but in a title it names what is asked for
    assert request_terms("[Feature]: Support Python 3.12") == ("python312",)
    assert request_terms("Python 3.12 support?") == ("python312",)
    assert request_terms("python3.12 support") == ("python312",)
    add(index, 100, "[Feature]: Support Python 3.12", FEATURE.format("The new interpreter is out; wheels are missing."))
    found = index.search(parse("Support Python 3.12", "pip cannot find a build for this interpreter yet."), (),
                         exclude=200)
    assert [c.number for c in found] == [100]
    assert "both titles ask about python312" in found[0].reason
    assert index.search(parse("[Feature]: Support Python 3.13", FEATURE.format("Another interpreter release.")), (),
                        exclude=201) == ()


@pytest.mark.parametrize(("title", "terms"), [
    ("Support GPTQ quantization", ("gptq",)),                        # the kind of thing after its name
    ("[Feature]: Metal backend for Apple chips", ("metal", "apple")),
    ("[New Model]: Jamba architecture", ("jamba",)),
    ("Quantization support for LoRA adapters", ("quantization", "lora", "adapter")),   # first: what is asked
])
def test_a_category_after_the_name_it_classifies_is_not_the_subject(title, terms):
    assert request_terms(title) == terms


def test_a_request_naming_the_category_too_is_linked(index):
    add(index, 100, "[Feature]: GPTQ support", FEATURE.format("Many quantized checkpoints on the Hub use it."))
    found = index.search(parse("Support GPTQ quantization", "Quantized checkpoints would need less memory."), (),
                         exclude=200)
    assert [c.number for c in found] == [100]
    assert "both titles ask about gptq" in found[0].reason
    assert index.search(parse("[Feature]: GPTQ support for Mixtral MoE", FEATURE.format("A quantized MoE.")), (),
                        exclude=201) == ()


@pytest.mark.parametrize(("title", "terms"), [
    ("[New Model]: google/gemma-2-9b-it", ("gemma2",)),       # a one-digit version is no token of its own
    ("Gemma 2 support", ("gemma2",)),
    ("[New Model]: Gemma 3n support", ("gemma3n",)),          # a letter after the version, not a size: one term
    ("[New Model]: Qwen 7B", ("qwen",)),
    ("[New Model]: Qwen 2.5 VL", ("qwen25", "vl")),
    ("Support for vLLM 0.6.3 on CUDA 12.4", ("063", "cuda124")),   # vLLM's own release is no name's version
    ("run one model on 2 GPUs", ("one", "gpus")),
])
def test_a_name_and_its_version_written_apart_are_one_term(title, terms):
    assert request_terms(title) == terms


def test_a_versioned_family_is_not_linked_to_the_family_request(index):
    add(index, 100, "Add support for Gemma models", FEATURE.format("Google released open weights."))
    assert index.search(parse("[Feature]: Support for google/gemma-2-9b-it", FEATURE.format("The new generation.")),
                        (), exclude=200) == ()


def test_a_platform_named_by_a_synonym_shares_its_name_in_the_title_field():
    from bot.dupes.document import field_tokens
    assert "aarch64" in field_tokens(parse("[Feature]: please add an arm docker image", ""))["title"]
    assert "maco" in field_tokens(parse("[Feature]: Metal support", ""))["title"]
    assert field_tokens(parse("Bare metal server setup", ""))["title"] == ["bare", "metal", "server", "setup"]
    assert field_tokens(parse("[Installation]: Dockerfile for aarch64", ""))["title"] == ["dockerfile", "aarch64"]
