"""Report shapes the parser reads: versions in title tags, with a spaced suffix, in lists and as the one that worked;
argparse error lines; exceptions shown by their repr; bracketed log levels and CI gutters; placeholders in commands."""

from __future__ import annotations

import pytest

from bot.dupes.signature import signatures
from bot.report import parse

ENV_PLACEHOLDER = """### Your current environment

<details>
<summary>The output of <code>python collect_env.py</code></summary>

```text
Your output of `python collect_env.py` here
```

</details>

### 🐛 Describe the bug

"""


@pytest.mark.parametrize(("title", "prose", "version"), [
    ("[Bug][v0.8.5]: the server hangs after the first request", "It hangs.", "0.8.5"),
    ("[Bug]: tool calls come back empty [v0.9.2]", "Empty.", "0.9.2"),
    ("[Bug]: v0.13 rejects --max-model-len 32k", "It says invalid int value.", "0.13"),
    ("[Bug]: startup fails", "I am on vllm 0.5.0 post1 with two A100s.", "0.5.0.post1"),
    ("[Bug]: startup fails", "Reproduced on vLLM 0.10.0 rc1 and on main.", "0.10.0rc1"),
    ("[Bug]: hang", "Confirmed on 0.9.2, 0.10.0 and 0.10.1: the server hangs at the second request.", "0.9.2"),
    ("[Bug]: hang", "With vLLM 0.10.1 the server crashes on start. Downgrading to 0.9.2 works.", "0.10.1"),
    ("[Bug]: hang", "Downgrading to vllm 0.9.2 works, but vllm 0.10.1 crashes on start.", "0.10.1"),
    ("[Bug]: hang", "It worked on 0.8.4, 0.8.5 and 0.9.0, now fails on 0.10.1 with the same command.", "0.10.1"),
    ("[Bug]: hang", "I am using the latest vllm, i.e., version 0.10.2, and the logprobs are missing.", "0.10.2"),
])
def test_versions_as_people_write_them(title: str, prose: str, version: str) -> None:
    assert parse(title, ENV_PLACEHOLDER + prose).environment.vllm_version == version


def test_a_version_range_in_the_title_is_about_the_later_one() -> None:
    r = parse("[Performance]: TTFT regression between v0.7.3 and v0.8.0", ENV_PLACEHOLDER + "Slower.")
    assert r.environment.vllm_version == "0.8.0"


def test_argparse_errors_are_error_lines_with_a_signature() -> None:
    body = ENV_PLACEHOLDER + """```
$ vllm serve Qwen/Qwen3-8B --enable-reasoning --reasoning-parser deepseek_r1
usage: vllm serve [-h] [--model MODEL] [--tokenizer TOKENIZER]
vllm serve: error: unrecognized arguments: --enable-reasoning
```"""
    r = parse("[Bug]: the server does not start", body)
    assert r.error_lines == ("vllm serve: error: unrecognized arguments: --enable-reasoning",)
    assert any("unrecognized arguments" in s.message for s in signatures(r))
    r2 = parse("[Bug]: bad value", "```\napi_server.py: error: argument --max-model-len: invalid int value: '32k'\n```")
    assert r2.error_lines and r2.error_lines[0].startswith("api_server.py: error: argument --max-model-len")


def test_exception_types_inside_a_repr() -> None:
    r = parse('[Bug]: Deploy a 70B model ,ValueError("type fp8e4nv not supported in this architecture")',
              ENV_PLACEHOLDER + "It fails while loading.")
    assert [(e.type, e.source) for e in r.exceptions] == [("ValueError", "title")]
    assert r.exceptions[-1].message.startswith("type fp8e4nv not supported")
    r2 = parse("[Bug]: import fails", ENV_PLACEHOLDER + "Starting the server failed with "
               "ImportError('libcudart.so.12: cannot open shared object file') right after the banner.")
    assert [e.type for e in r2.exceptions] == ["ImportError"]
    assert r2.exceptions[0].message.startswith("libcudart.so.12")
    # the other quote inside the message does not end it
    r3 = parse("[Bug]: first request fails", ENV_PLACEHOLDER + "```\nERROR 05-02 10:00:00 [engine.py:160] "
               "NotImplementedError(\"Could not run 'vllm::rms_norm' with arguments from the 'CPU' backend.\")\n```")
    assert r3.root_cause is not None
    assert r3.root_cause.message == "Could not run 'vllm::rms_norm' with arguments from the 'CPU' backend."


def test_an_exception_named_in_the_title_is_kept_when_the_body_quotes_another() -> None:
    r = parse("[Bug]: KeyError: 'model_type' when loading a local checkpoint",
              ENV_PLACEHOLDER + "The loader says `OSError: config.json not found` first, then fails.")
    types = [e.type for e in r.exceptions]
    assert "KeyError" in types and "OSError" in types
    assert r.root_cause is not None and r.root_cause.type == "KeyError"


def test_bracketed_levels_after_a_date_and_ci_gutters_are_log_prefixes() -> None:
    body = ENV_PLACEHOLDER + """```
2025-06-01 10:00:00 [ERROR] (APIServer pid=12) Traceback (most recent call last):
2025-06-01 10:00:00 [ERROR] (APIServer pid=12)   File "/usr/lib/vllm/entrypoints/cli/main.py", line 54, in main
2025-06-01 10:00:00 [ERROR] (APIServer pid=12)     args.dispatch_function(args)
2025-06-01 10:00:00 [ERROR] (APIServer pid=12) ValueError: max_model_len (131072) is greater than the derived max
```"""
    r = parse("[Bug]: crash", body)
    assert r.exceptions[-1].type == "ValueError" and len(r.exceptions[-1].frames) == 1
    assert r.exceptions[-1].frames[0].is_vllm
    ci = """```
[2025-06-01T10:00:00Z] 1234 | Traceback (most recent call last):
[2025-06-01T10:00:00Z] 1235 |   File "/vllm-workspace/tests/entrypoints/test_chat.py", line 10, in test_chat
[2025-06-01T10:00:00Z] 1236 |     assert out.choices
[2025-06-01T10:00:00Z] 1237 | AssertionError: no choices
```"""
    r = parse("[CI Failure]: entrypoints test", ci)
    assert r.exceptions[-1].type == "AssertionError" and len(r.exceptions[-1].frames) == 1


def test_a_placeholder_in_a_command_does_not_stop_the_flags() -> None:
    body = ENV_PLACEHOLDER + """```bash
vllm serve <your-model> --tensor-parallel-size 2 --pipeline-parallel-size 2 \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}'
```"""
    r = parse("[Bug]: pp with mtp fails", body)
    assert r.flags["pipeline_parallel_size"] == 2
    assert r.flags["speculative_config"]
    assert r.model is None and r.commands[0].model is None
    r2 = parse("[Bug]: x", "```\nvllm serve /models/<MODEL_NAME> --max-model-len <LEN> --enable-expert-parallel\n```")
    assert r2.flags["enable_expert_parallel"] is True
    r3 = parse("[Bug]: x", "```\nvllm serve org/m --port 8000 > server.log 2>&1\n```")
    assert r3.flags["port"] == 8000 and "server.log" not in str(r3.flags)


_NO_CUDA_OPS_DUMP = """### Your current environment

```text
Collecting environment information...
WARNING 03-14 10:02:11 _custom_ops.py:14] Failed to import from vllm._C with ModuleNotFoundError("No module \
named 'vllm._C'")
/opt/venv/lib/python3.10/site-packages/vllm/usage/usage_lib.py:19: RuntimeWarning: Failed to read commit hash:
No module named 'vllm.commit_id'
PyTorch version: 2.4.0+cpu
Is CUDA available: False
vLLM Version: 0.6.3
```

### 🐛 Describe the bug

The server starts on my CPU-only host, but every request hangs.
"""


def test_collect_env_import_warnings_are_not_the_reports_error():
    r = parse("[Bug]: requests hang on a CPU-only host", _NO_CUDA_OPS_DUMP)
    assert r.exceptions == ()
    assert r.environment.vllm_version == "0.6.3"


def test_a_traceback_of_collect_env_itself_failing_is_kept():
    body = ("### Your current environment\n\n```text\nCollecting environment information...\n"
            "Traceback (most recent call last):\n  File \"collect_env.py\", line 273, in get_vllm_version\n"
            "    from vllm import __version__\nImportError: cannot import name '__version__' from 'vllm'\n```\n")
    r = parse("[Installation]: vllm cannot be imported", body)
    assert [e.short_type for e in r.exceptions] == ["ImportError"]


def test_an_error_after_the_dump_is_still_the_reports_error():
    body = _NO_CUDA_OPS_DUMP + "```\nImportError: libcudart.so.12: cannot open shared object file\n```\n"
    r = parse("[Bug]: import fails", body)
    assert [e.short_type for e in r.exceptions] == ["ImportError"]
