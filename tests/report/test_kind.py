from __future__ import annotations

import pytest

from bot.report.kind import detect_kind
from bot.report.sections import split_sections


def kind_of(title: str, body: str = "") -> tuple[str, str, str]:
    return detect_kind(title, body, split_sections(body))


@pytest.mark.parametrize("title, kind, rest", [
    ("[Bug]: CUDA OOM with Qwen3", "bug", "CUDA OOM with Qwen3"),
    ("[BUG] CUDA OOM", "bug", "CUDA OOM"),
    ("[Bug] KV cache sizing ignores graph pool", "bug", "KV cache sizing ignores graph pool"),
    ("[Bug]:amd mi308x gpu fails", "bug", "amd mi308x gpu fails"),
    ("[Bug]：全角冒号", "bug", "全角冒号"),
    ("[Usage]: How to serve two models", "usage", "How to serve two models"),
    ("[Installation]: pip install fails", "installation", "pip install fails"),
    ("[Feature]: Support X", "feature", "Support X"),
    ("[Feature Request] Support X", "feature", "Support X"),
    ("[New Model]: VibeVoice-1.5B", "new-model", "VibeVoice-1.5B"),
    ("[Performance]: slow prefill", "performance", "slow prefill"),
    ("[RFC]: Redesign the scheduler", "rfc", "Redesign the scheduler"),
    ("[Doc]: Typo in quickstart", "docs", "Typo in quickstart"),
    ("[Docs] Feedback for `/en/latest/usage/faq.html`", "docs", "Feedback for `/en/latest/usage/faq.html`"),
    ("[CI Failure]: test_models flaky", "ci-failure", "test_models flaky"),
    ("[Roadmap] vLLM Roadmap Q3", "other", "vLLM Roadmap Q3"),
    ("[Bug]:", "bug", ""),
    ("[Bug/Design] PP with spec decode", "bug", "PP with spec decode"),
])
def test_title_prefix(title, kind, rest):
    assert kind_of(title) == (kind, "title", rest)


def test_unknown_bracket_is_not_a_prefix():
    kind, source, rest = kind_of("[Hardware][AMD] MI300 crash", "Traceback (most recent call last):\n")
    assert source == "guess"
    assert rest == "[Hardware][AMD] MI300 crash"
    assert kind == "bug"


def test_docs_title_with_traceback_is_a_bug():
    body = "### 📚 The doc issue\n\nTraceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad\n"
    assert kind_of("[Doc]: KeyError: 'model_type' when following the quickstart", body)[0] == "bug"


def test_misc_question_is_usage():
    body = "### Anything you want to discuss about vllm.\n\nCan a new adapter be added while the server runs?"
    assert kind_of("[Misc]: adding a LoRA to a live server?", body)[0] == "usage"


def test_misc_about_performance():
    body = "### Anything you want to discuss about vllm.\n\nThroughput dropped after the upgrade."
    assert kind_of("[Misc]: Performance regression between releases", body)[0] == "performance"


@pytest.mark.parametrize("headings, kind", [
    (["Your current environment", "🐛 Describe the bug"], "bug"),
    (["Your current environment", "How you are installing vllm"], "installation"),
    (["Your current environment", "How would you like to use vllm"], "usage"),
    (["🚀 The feature, motivation and pitch", "Alternatives"], "feature"),
    (["The model to consider.", "The closest model vllm already supports."], "new-model"),
    (["Proposal to improve performance", "Report of performance regression"], "performance"),
    (["Motivation.", "Proposed Change."], "rfc"),
    (["📚 The doc issue"], "docs"),
    (["Name of failing test", "🧪 Describe the failing test"], "ci-failure"),
])
def test_template_headings(headings, kind):
    body = "\n\n".join(f"### {h}\n\ntext" for h in headings)
    assert kind_of("Something happened", body)[:2] == (kind, "template")


@pytest.mark.parametrize("title, body, kind", [
    ("pip install error - nvcc too old for this wheel", "", "installation"),
    ("Building from source fails on CentOS 7", "", "installation"),
    ("ImportError: libcudart.so.11.0 on a fresh conda env", "", "installation"),
    ("Support for Ascend NPU hardware", "", "feature"),
    ("Add prompt_logprobs to the OpenAI server", "", "feature"),
    ("Why no support for the GTX 1080?", "", "feature"),
    ("How to pass max_num_seqs in the python API ?", "", "usage"),
    ("Serving across two machines", "Is there a way to spread one model over two machines with Ray?", "usage"),
    ("benchmark_latency.py will hang when n=2", "", "bug"),
    ("Qwen crash", "Traceback (most recent call last):\n  File \"a.py\"\nRuntimeError: x", "bug"),
    ("Generation is slow with long prompts", "", "performance"),
    ("Title", "Turning on both options at once does not work and the server just dies.", "bug"),
    ("Thanks", "Great project.", "other"),
])
def test_guesses(title, body, kind):
    assert kind_of(title, body)[:2] == (kind, "guess")


@pytest.mark.parametrize("title", ["", "[", "[" * 10000, "\x00", "[Bug" + "]" * 5000])
def test_hostile_titles(title):
    kind, source, _ = kind_of(title, "x")
    assert source in ("title", "template", "guess")


@pytest.mark.parametrize("title", ["expert parallel support in the future?", "Will you support Gaudi3 soon?"])
def test_asking_for_future_support_is_a_feature(title):
    assert detect_kind(title, "", split_sections(""))[0] == "feature"


def test_asking_how_to_use_a_supported_feature_stays_usage():
    assert detect_kind("How do I enable prefix caching?", "", split_sections(""))[0] == "usage"
