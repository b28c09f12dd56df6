from __future__ import annotations

from pathlib import Path

import pytest

from bot.report.sections import description_text, is_placeholder, split_sections

FIXTURES = Path(__file__).parent.parent / "fixtures" / "env"

BUG_TEMPLATE_UNTOUCHED = """### Your current environment

<details>
<summary>The output of <code>python collect_env.py</code></summary>

```text
Your output of `python collect_env.py` here
```

</details>


### 🐛 Describe the bug

Loading `Qwen/Qwen3-8B` with `--max-model-len 65536` fails:

```
ValueError: The model's max seq len (65536) is larger than the maximum number of tokens that can be stored in KV cache
```

### Before submitting a new issue...

- [x] Make sure you already searched for relevant issues, and asked the chatbot living at the \
bottom right corner of the [documentation page](https://docs.vllm.ai/en/latest/), which can answer lots of \
frequently asked questions.
"""


def test_split_bug_template():
    sections = split_sections(BUG_TEMPLATE_UNTOUCHED)
    assert [s.heading for s in sections] == [
        "Your current environment", "🐛 Describe the bug", "Before submitting a new issue...",
    ]
    env, bug, checklist = sections
    assert env.empty
    assert not bug.empty
    assert "max seq len (65536)" in bug.text
    assert not checklist.empty


@pytest.mark.parametrize("text", [
    "_No response_",
    "",
    "   \n\n",
    "```text\nThe output of `python collect_env.py`\n```",
    "```sh\npip install -vvv vllm\n```",
    "I want to run inference of a [specific model](put link here). I don't know how to integrate it with vllm.",
    "<details>\n<summary>The output of `python collect_env.py`</summary>\n\n```text\n"
    "Your output of `python collect_env.py` here\n```\n\n</details>",
    "<details>\n<summary>The output of <code>python collect_env.py</code></summary>\n\n```\n```\n</details>",
])
def test_placeholders(text):
    assert is_placeholder(text)


@pytest.mark.parametrize("text", [
    "vllm 0.8.5 on 2x A100",
    "```text\nPyTorch version: 2.5.1\n```",
    "pip install vllm==0.6.3",
    "I want to run inference of Qwen3 with tool calling.",
])
def test_not_placeholders(text):
    assert not is_placeholder(text)


def test_no_response_field_is_empty():
    body = "### 🚀 The feature, motivation and pitch\n\nAdd X.\n\n### Alternatives\n\n_No response_\n\n" \
           "### Additional context\n\n_No response_\n"
    sections = split_sections(body)
    assert [s.empty for s in sections] == [False, True, True]


def test_heading_inside_code_fence_is_not_a_section():
    body = "### 🐛 Describe the bug\n\n```markdown\n### Step 1\nrun it\n```\n\nmore text\n"
    sections = split_sections(body)
    assert len(sections) == 1
    assert "### Step 1" in sections[0].text


def test_template_heading_closes_an_unterminated_fence():
    body = "### Your current environment\n\n```text\nvLLM Version: 0.8.4\n\n### 🐛 Describe the bug\n\nboom\n"
    sections = split_sections(body)
    assert [s.heading for s in sections] == ["Your current environment", "🐛 Describe the bug"]


def test_free_form_body_has_no_sections():
    assert split_sections("It crashes when I run the server.\n\nTraceback ...") == ()


def test_description_drops_environment_and_checklist():
    body = (FIXTURES / "banner_h100.md").read_text()
    text = description_text(body, split_sections(body))
    assert "crashes during CUDA graph capture" in text
    assert "torch.OutOfMemoryError" in text
    assert "PyTorch version" not in text
    assert "NV18" not in text
    assert "Make sure you already searched" not in text
    assert "Describe the bug" not in text


def test_description_of_free_form_body_drops_pasted_dump_only():
    dump = (FIXTURES / "old_cuda_glued.md").read_text()
    start = dump.index("Collecting environment information")
    end = dump.index("```\n\n</details>")
    body = "The workers hang at NCCL init with TP=2.\n\n" + dump[start:end] + "\nAny idea what is wrong?\n"
    text = description_text(body, split_sections(body))
    assert text.startswith("The workers hang at NCCL init")
    assert text.rstrip().endswith("Any idea what is wrong?")
    assert "PyTorch version" not in text
    assert "ROCM Version" not in text
    assert "[pip3]" not in text


def test_description_keeps_a_short_mention_of_versions():
    body = "I use PyTorch 2.5 and vllm 0.6.3. It fails."
    assert description_text(body, split_sections(body)) == body


def test_description_drops_unanswered_fields():
    body = "### 🐛 Describe the bug\n\nIt fails.\n\n### Model Input Dumps\n\n_No response_\n"
    assert description_text(body, split_sections(body)) == "It fails."


@pytest.mark.timeout(30)
@pytest.mark.parametrize("body", ["", "\x00\udcff", "### \n" * 10000, "```\n" * 100001, "### a\n```\n" * 5000])
def test_hostile_bodies(body):
    sections = split_sections(body)
    description_text(body, sections)


def test_rendered_page_text_without_hashes():
    body = (
        "Your current environment\n\nThe output of python collect_env.py\n\n"
        "Your output of `python collect_env.py` here\n\n🐛 Describe the bug\n\nvllm serve fails with PP=4.\n"
    )
    sections = split_sections(body)
    assert [s.heading for s in sections] == ["Your current environment", "🐛 Describe the bug"]
    assert sections[0].empty
    assert description_text(body, sections) == "vllm serve fails with PP=4."


def test_one_bare_heading_like_line_is_not_a_section():
    assert split_sections("Alternatives\n\nwe tried X") == ()
