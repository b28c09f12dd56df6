from pathlib import Path

import pytest

from bot.report.logs import clean_log

FIXTURES = Path(__file__).parent.parent / "fixtures" / "logs"


def one(line: str):
    (entry,) = clean_log(line)
    return entry


def test_nested_process_tags_keep_the_innermost_process_and_level():
    e = one("(EngineCore_DP0 pid=8841) (Worker_TP3 pid=8862) ERROR 01-06 22:19:50 [multiproc_executor.py:822] "
            "Traceback (most recent call last):")
    assert e.text == "Traceback (most recent call last):"
    assert (e.process, e.pid, e.level, e.where) == ("Worker_TP3", 8862, "ERROR", "multiproc_executor.py:822")
    assert e.tags == ("EngineCore_DP0", "Worker_TP3")


def test_old_logger_header_without_bracket():
    e = one("(VllmWorkerProcess pid=40712) ERROR 10-27 06:58:31 multiproc_worker_utils.py:226]     raise RuntimeError(")
    assert e.text == "    raise RuntimeError("
    assert (e.process, e.level, e.where) == ("VllmWorkerProcess", "ERROR", "multiproc_worker_utils.py:226")


def test_header_without_timestamp_and_shortened_debug_path():
    assert one("(APIServer pid=1) ERROR [serving.py:830] openai_harmony.HarmonyError: x").text == \
        "openai_harmony.HarmonyError: x"
    e = one("DEBUG 10-06 18:54:29 [model_executor/.../fp8_utils.py:77] Using CUTLASS")
    assert (e.text, e.level) == ("Using CUTLASS", "DEBUG")


def test_ray_worker_tag_and_repeated_marker():
    e = one("(RayWorkerWrapper pid=48211, ip=10.20.0.12) INFO 06-12 10:41:19 [gpu_model_runner.py:1329] "
            "Starting to load model X... [repeated 7x across cluster]")
    assert e.text == "Starting to load model X..."
    assert (e.process, e.pid) == ("RayWorkerWrapper", 48211)


def test_rank_prefix_and_ansi_codes_and_caret_stripped_remains():
    e = one("[rank1]: Traceback (most recent call last):")
    assert (e.text, e.process) == ("Traceback (most recent call last):", "rank1")
    e = one("\x1b[1;36m(APIServer pid=77)\x1b[0;0m INFO 12-01 09:00:01 [api_server.py:1890] hello")
    assert (e.text, e.process) == ("hello", "APIServer")
    e = one("[1;36m(EngineCore_DP0 pid=120)[0;0m ERROR 12-01 09:00:09 [core.py:843] boom")
    assert (e.text, e.process, e.level) == ("boom", "EngineCore_DP0", "ERROR")


def test_code_with_brackets_is_not_mistaken_for_colour_codes():
    assert one("x = table[m] + row[0]").text == "x = table[m] + row[0]"


def test_compose_and_kubectl_timestamp_prefixes():
    log = clean_log((FIXTURES / "compose.md").read_text())
    texts = [e.text for e in log]
    assert "KeyError: 'invalid tool call parser: None (chose from { deepseek_v3,hermes,mistral })'" in texts
    assert not any(t.startswith("vllm-1") for t in texts)
    kube = clean_log((FIXTURES / "kubectl.log").read_text())
    assert kube[2].text == "RuntimeError: HIP error: invalid device function"
    assert kube[2].process == "EngineCore_0"
    assert kube[4].text == "Segmentation fault (core dumped)"


def test_one_entry_per_body_line_and_crlf():
    body = "a\r\nb\rc\n\nd"
    assert len(clean_log(body)) == len(body.splitlines())
    assert [e.text for e in clean_log("INFO 07-08 14:02:26 [utils.py:302] x\r\n")] == ["x"]


def test_markdown_quote_and_repl_prompt():
    assert one("> NameError: name 'vllm_ops' is not defined").text == "NameError: name 'vllm_ops' is not defined"
    assert one(">>> llm = LLM(model='x')").text == "llm = LLM(model='x')"


def test_a_pipe_in_prose_is_not_a_compose_prefix():
    assert one("Use A | B as needed").text == "Use A | B as needed"


@pytest.mark.parametrize("line", ["", "   ", "(", "(pid=", "INFO", "[rank", "2025-01-01T"])
def test_fragments_do_not_break(line):
    assert len(clean_log(line)) == len(line.splitlines())


def test_journald_prefix():
    e = one("Aug 17 18:42:18 gpu-host vllm[8052]: (APIServer pid=8052) RuntimeError: boom")
    assert (e.text, e.process) == ("RuntimeError: boom", "APIServer")
