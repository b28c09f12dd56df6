from dupes_reports import ENV_DUMP, finding, pp_draft_report, report

from bot.dupes.document import build_doc, notable_flags
from bot.dupes.text import clean_title, meaningful_lines, tokens


def test_template_prefixes_and_placeholder_titles():
    assert clean_title("[Bug]: Qwen3 fails with PP") == "Qwen3 fails with PP"
    assert clean_title("[Feature][Hardware][AMD]: Support gfx1151 APUs") == "Support gfx1151 APUs"
    assert clean_title("[Usage] how to set dtype") == "how to set dtype"
    assert clean_title("Bug: crash on start") == "crash on start"
    for empty in ("[Bug]:", "Title", "[Doc]: ", "", "[Bug]: Make sure you already searched for relevant issues, and"):
        assert clean_title(empty) == ""


def test_env_dump_logs_and_traceback_bodies_are_not_text():
    description = ENV_DUMP + """
I start the server and it crashes when loading the draft model.

(APIServer pid=3181) INFO 09-12 10:01:02 [api_server.py:1885] vLLM API server version 0.11.0
(EngineCore_DP0 pid=3302) ERROR 09-12 10:01:09 [core.py:708] Traceback (most recent call last):
(EngineCore_DP0 pid=3302) ERROR 09-12 10:01:09 [core.py:708]   File "/usr/lib/vllm/v1/core.py", line 699, in run
(EngineCore_DP0 pid=3302) ERROR 09-12 10:01:09 [core.py:708]     engine_core = EngineCoreProc(*args, **kwargs)
(EngineCore_DP0 pid=3302) ERROR 09-12 10:01:09 [core.py:708] ValueError: draft model failed to load
Traceback (most recent call last):
  File "/home/alice/venv/lib/python3.12/site-packages/vllm/config/model.py", line 10, in verify
    raise ValueError(msg)
                     ^^^
"""
    kept = meaningful_lines(description)
    assert "crashes when loading the draft model" in kept
    assert "ValueError: draft model failed to load" in kept
    for noise in ("Ubuntu", "pip3", "vLLM Version", "api_server", "EngineCoreProc", "alice", "raise ValueError", "^^^"):
        assert noise not in kept


def test_tokens_drop_stopwords_urls_numbers_and_hex():
    toks = tokens("The tokenizer at https://huggingface.co/org/model fails 1234 times deadbeef12345678 parsers")
    assert toks == ["tokenizer", "fail", "time", "parser"]
    assert tokens("RTX 5090", numbers=True) == ["rtx", "5090"]


def test_notable_flags_skip_defaults_and_common_flags():
    r = report("x", flags={"model": "m", "port": 8000, "tensor_parallel_size": 1, "pipeline_parallel_size": 2,
                           "speculative_config": {"method": "mtp"}, "enforce_eager": False})
    assert notable_flags(r) == ("pipeline_parallel_size", "speculative_config")


def test_document_fields_and_keys():
    doc = build_doc(pp_draft_report(), (finding("pp-with-draft-model-without-pp"),))
    assert doc.vector["pipeline"] > 0 and doc.vector["speculative"] > 0
    assert doc.vector["flag_speculative_config"] > 0
    assert "rule:pp-with-draft-model-without-pp" in doc.keys
    assert any(k.startswith("msg:") for k in doc.keys) and any(k.startswith("frm:") for k in doc.keys)
    # the title weighs more than the same word in the description
    title_only = build_doc(report("[Bug]: xgrammar crash", "something else entirely"))
    body_only = build_doc(report("[Bug]: something else entirely", "xgrammar crash"))
    assert title_only.vector["xgrammar"] > body_only.vector["xgrammar"]


def test_a_pasted_screenshot_tag_is_markup_but_a_special_token_is_a_word():
    line = ('<img width="1215" height="454" alt="Image" src="https://github.com/user-attachments/assets/1" /> '
            "the answer lacks the opening <think> tag and ends with </s>")
    assert tokens(line) == ["answer", "lack", "open", "think", "tag", "end"]
