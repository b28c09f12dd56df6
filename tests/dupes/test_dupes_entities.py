"""Duplicates among requests and questions: entity keys in scoring, near misses, stricter thresholds, related."""

from __future__ import annotations

import pytest
from dupes_reports import FEATURE, USAGE

from bot.dupes.document import build_doc
from bot.dupes.scoring import DEFAULT_POLICY, Match, combine, shared_entities
from bot.report import parse
from bot.report.model import Entity

FILLER = [
    ("[Usage]: what does --max-num-seqs change for throughput?", USAGE.format("Batch sizes confuse me a lot.")),
    ("[Feature]: add a metric for queue time per request", FEATURE.format("Prometheus should export it too.")),
    ("[Usage]: how to set the chat template for a base model", USAGE.format("The template is missing.")),
    ("[Bug]: wrong output with temperature 0", "### 🐛 Describe the bug\n\nOutputs differ between runs.\n"),
]


def add(index, number, title, body, day=1):
    index.add(number, parse(title, body), (), created_at=f"2025-01-{day:02d}T00:00:00Z")


def fill(index):
    for i, (title, body) in enumerate(FILLER):
        add(index, 10 + i, title, body)


def test_the_same_question_in_other_words_is_linked(index):
    fill(index)
    add(index, 100, "[Usage]: How can I stream tokens from LLM.generate in offline inference?",
        USAGE.format("Right now the whole completion comes back at the end."))
    found = index.search(parse("[Usage]: Streaming output with the Python API (offline)?",
                               USAGE.format("Is there an iterator over new tokens when using the LLM class?")),
                         (), exclude=200)
    assert [c.number for c in found] == [100]
    assert "both ask about streaming output from the offline LLM class" in found[0].reason


def test_the_same_question_through_another_api_is_a_near_miss(index):
    fill(index)
    add(index, 100, "[Usage]: How can I stream tokens from LLM.generate in offline inference?",
        USAGE.format("Right now the whole completion comes back at the end."))
    body = USAGE.format("```python\nfrom langchain_community.llms import VLLM\nllm = VLLM(model='m', streaming=True)\n"
                        "```\nStreaming with the offline model prints everything at the end.")
    assert index.search(parse("[Usage]: streaming output in offline inference", body), (), exclude=200) == ()


def test_one_model_on_several_gpus_asked_twice_is_linked_and_across_machines_is_not(index):
    fill(index)
    add(index, 100, "[Usage]: how to run one model on multiple GPUs?",
        USAGE.format("The model is too big for one card; can vLLM split it over the GPUs of my server?"))
    found = index.search(parse("[Usage]: I have two GPUs, how do I make the model use both GPUs?",
                               USAGE.format("Only GPU 0 is used when I start the server.")), (), exclude=200)
    assert [c.number for c in found] == [100]
    assert "running one model on several GPUs" in found[0].reason
    across = parse("[Usage]: how to run one model on GPUs of two machines?",
                   USAGE.format("Each machine has one GPU; can the model be split over both?"))
    assert index.search(across, (), exclude=201) == ()


def test_tool_calling_asked_as_a_question_finds_the_request_but_not_one_models(index):
    fill(index)
    add(index, 100, "[Feature]: support the tools and tool_choice parameters in the OpenAI server",
        FEATURE.format("Client libraries send tools; the server should pass them to the model."))
    found = index.search(parse("[Doc]: does vLLM support function calling?",
                               "### 📚 The doc issue\n\nI could not find whether the server accepts tools.\n"),
                         (), exclude=200)
    assert [c.number for c in found] == [100]
    assert "tool (function) calling" in found[0].reason
    one_model = parse("[Feature]: function calling for Llama-3-70B-Instruct",
                      FEATURE.format("Llama 3 70B can call tools; please support it."))
    assert index.search(one_model, (), exclude=201) == ()


def test_an_unsupported_architecture_finds_the_request_for_that_model(index):
    fill(index)
    add(index, 100, "Support for falcon models", FEATURE.format("Falcon-40B tops the leaderboard."))
    found = index.search(parse("Model architectures ['FalconForCausalLM'] are not supported for now.", ""),
                         (), exclude=200)
    assert [c.number for c in found] == [100]
    other = parse("Model architectures ['BloomForCausalLM'] are not supported for now.", "")
    assert index.search(other, (), exclude=201) == ()


def test_two_models_asking_for_the_same_capability_are_a_near_miss(index):
    fill(index)
    add(index, 100, "[Feature]: LoRA support for Gemma 3", FEATURE.format("We train LoRA adapters for Gemma 3."))
    query = parse("[Feature]: LoRA support for Mistral", FEATURE.format("We train LoRA adapters for Mistral."))
    linked, related = index.similar(query, (), exclude=200)
    assert linked == ()
    assert 100 not in [c.number for c in related]   # a near miss is not even "possibly related"


def test_the_same_requested_model_links_whatever_its_spelling(index):
    fill(index)
    add(index, 100, "[New Model]: microsoft/phi-4", "### The model to consider.\n\nhttps://huggingface.co/microsoft/phi-4\n")
    found = index.search(parse("[New Model]: Phi4 support", "### The model to consider.\n\nPhi4 from Microsoft\n"),
                         (), exclude=200)
    assert [c.number for c in found] == [100]
    assert "both request the model" in found[0].reason


def test_text_alone_does_not_link_a_question(index):
    fill(index)
    title = "[Usage]: tokenizer mismatch between vocab size and embedding rows for custom checkpoints"
    add(index, 100, title, USAGE.format("The custom checkpoint resizes embedding rows after adding tokens."))
    # the same description under a title that asks about something else (the title's subject: request_terms)
    query = parse("[Usage]: vocab size differs from the embedding matrix",
                  USAGE.format("The custom checkpoint resizes embedding rows after adding tokens."))
    linked, related = index.similar(query, (), exclude=200)
    assert linked == ()                  # wording alone cannot reach a question's threshold (w_text < 0.72)
    assert [c.number for c in related] == [100]   # but it is shown as possibly related


def test_possibly_related_stays_below_the_link_and_within_the_margin(index):
    fill(index)
    add(index, 100, "[Usage]: why does vllm take 90% of the GPU memory for a tiny model?",
        USAGE.format("A 125M model occupies almost the whole card."))
    linked, related = index.similar(parse("[Usage]: GPU memory usage is huge", USAGE.format("Why?")), (), exclude=200)
    for c in related:
        assert c.number not in {x.number for x in linked}
    scored = index.search_doc(build_doc(parse("[Usage]: GPU memory usage is huge", USAGE.format("Why?"))),
                              exclude=200, related=True)
    for s in scored:
        threshold = DEFAULT_POLICY.threshold_for(s.match)
        assert (s.candidate.score >= threshold) == s.linked
        if not s.linked:
            assert s.candidate.score >= threshold - DEFAULT_POLICY.related_margin - 1e-9


def e(key: str, strength: str = "question") -> Entity:
    return Entity(key, "reason", strength)


def test_shared_entities_near_miss_rules():
    # different models, one capability: a near miss
    shared, conflict = shared_entities((e("cap:lora=GemmaForCausalLM", "strong"),),
                                       (e("cap:lora=MistralForCausalLM", "strong"),))
    assert shared == () and conflict
    # two MoE models: the trait is shared, no near miss
    shared, conflict = shared_entities((e("cap:lora=MixtralForCausalLM", "strong"), e("cap:lora=moe")),
                                       (e("cap:lora=DeepseekV2ForCausalLM", "strong"), e("cap:lora=moe")))
    assert [x.key for x in shared] == ["cap:lora=moe"] and not conflict
    # different model ids of one architecture class are not a near miss
    shared, conflict = shared_entities((e("model=flant5", "strong"), e("arch=T5", "area")),
                                       (e("model=t5", "strong"), e("arch=T5", "area")))
    assert [x.key for x in shared] == ["arch=T5"] and not conflict
    # the same model, but one asks a further question: only the area is shared
    shared, _ = shared_entities((e("model=bgem3", "strong"), e("topic:embedding=sparse")),
                                (e("model=bgem3", "strong"),))
    assert shared[0].strength == "area"
    # strength is the weaker side's
    shared, _ = shared_entities((e("platform=windows", "question"),), (e("platform=windows", "area"),))
    assert shared[0].strength == "area"


def test_combine_weights_entities_by_strength_and_vetoes_near_misses():
    base = Match(text=0.1, kind="usage", query_has_error=False)
    assert combine(Match(text=0.1, kind="usage", query_has_error=False, entities=(e("t=x", "question"),))) \
        == pytest.approx(0.07 + 0.65)
    assert combine(Match(text=0.1, kind="usage", query_has_error=False, entities=(e("t=x", "strong"),))) \
        == pytest.approx(0.07 + 0.75)
    assert combine(Match(text=0.9, kind="usage", query_has_error=False, entity_conflict=True)) == 0.0
    assert DEFAULT_POLICY.threshold_for(base) == 0.72
    assert DEFAULT_POLICY.threshold_for(Match(text=0.1, kind="new-model", query_has_error=False)) == 0.7
    assert DEFAULT_POLICY.threshold_for(Match(text=0.1, kind="bug", query_has_error=False)) == 0.6
    assert DEFAULT_POLICY.threshold_for(Match(text=0.1, kind="usage", query_has_error=True)) == 0.6


def test_a_cpu_image_and_an_arm64_gpu_image_are_a_near_miss():
    cpu = parse("[Feature]: Dockerfile.cpu for aarch64", "Please provide a CPU-only image for my ARM server.")
    gpu = parse("[Installation]: Dockerfile for aarch64", "Is there a Dockerfile that builds vLLM on aarch64?")
    shared, conflict = shared_entities(cpu.entities, gpu.entities)
    assert "platform=aarch64" in {e.key for e in shared} and conflict
    m = Match(text=0.5, entities=shared, entity_conflict=conflict, kind="feature", query_has_error=False)
    assert combine(m) < DEFAULT_POLICY.threshold_for(m)
