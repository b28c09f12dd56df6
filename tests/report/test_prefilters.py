"""The parser's cheap pre-checks (a substring test before a regex) never change what the regex would find."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.report import _ERROR_WORD, _error_word
from bot.report.cmdline import _PROMPT, _STARTS
from bot.report.collect_env import LABELS, label_of
from bot.report.errors import ANCHORS, has_anchor
from bot.report.hardware import _os_from_prose
from bot.report.tracebacks import _is_error_line, _parse_exc_line

# pieces that make the patterns fire, glued at random
PIECES = ["Error", "error", "Exception", "ValueError", ":", ",", " ", "\n", "\t", "x", "_", "é", "ERROR", "FAILED",
          "CUDA error: ", "fatal error: ", "Killed", "× ", "core dumped", "Segmentation fault", "undefined symbol: ",
          "cannot open shared object file", "Engine core initialization failed", "WorkerProc hit an exception",
          "vllm serve", "docker run", "podman", "vllm chat", "api_server", "vllm.entrypoints.openai.", "$ ", "# ",
          "PS C:\\> ", "user@host:~$ ", "(venv) ", "C:\\Users\\me> ", "a" * 210, "RuntimeError", "(", ")",
          "torch.OutOfMemoryError", "PyTorch version", "OS", "  ", "Is debug build", "HIP error: ",
          "vllm serve: error: ", "error[E0425]:", "CMake Error", "ninja: build stopped", "nvcc fatal", "╰─> ",
          "Fatal Python error", ".cu(42)", ": error: ", ".cpp:12:5: ", "fatal ", "ops", " 1"]
# every kind of error line as one alternation: what _is_error_line answers
_ERROR_LINE = re.compile(
    r"(?:^[\w.-]{1,60}(?: [\w.-]{1,30}){0,2}: error: |"
    r"^(?:(?:ERROR|error)(?:\[[\w-]{1,20}\])? ?:|FAILED:? |CMake Error|ninja: build stopped|Fatal Python error|"
    r"nvcc fatal|× |╰─> )|fatal error: |\bCUDA error: |\bHIP error: |Segmentation fault|core dumped|"
    r"\.(?:cu|cuh|c|cc|cpp|cxx|h|hpp)(?:\(\d{1,6}\)|:\d{1,6}(?::\d{1,4})?): (?:fatal )?error: |"
    r"undefined symbol: |\bcannot open shared object file\b|\bKilled\s*$)"
)
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_error_word_is_the_first_match_of_the_whole_pattern(text):
    m = _ERROR_WORD.search(text)
    assert _error_word(text) == (m.start() if m else None)


def test_error_word_on_a_body():
    body = "intro\nno hint here\n" + "x" * 250 + " ValueError: far\n  raise ValueError: near\nend"
    assert _error_word(body) == body.index("  raise")
    assert _error_word("nothing to see\n") is None


@settings(max_examples=400, deadline=None)
@given(texts)
def test_error_line_check_agrees_with_the_pattern(text):
    assert _is_error_line(text) == bool(_ERROR_LINE.search(text[:1000]))


def test_error_line_kinds():
    for line in ("vllm serve: error: unrecognized arguments: --foo", "error[E0425]: cannot find value",
                 "attention.cu(42): error: identifier undefined", "ops.cpp:12:5: fatal error: x.h: missing",
                 "RuntimeError: CUDA error: out of memory", "Killed  ", "ninja: build stopped: subcommand failed"):
        assert _is_error_line(line) and _ERROR_LINE.search(line)
    for line in ("ERROR LOG below", "the error output", "my.cu file has an error: here", "Killed it yesterday"):
        assert not _is_error_line(line) and not _ERROR_LINE.search(line)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_anchor_check_agrees_with_the_list(text):
    assert has_anchor(text) == any(a in text for a in ANCHORS)


def test_every_anchor_holds_a_word_of_the_cheap_check():
    for anchor in ANCHORS:   # has_anchor looks for these two words first: a new anchor must hold one
        assert "Engine" in anchor or "WorkerProc" in anchor, anchor
        assert has_anchor(f"x {anchor} y")


@settings(max_examples=300, deadline=None)
@given(texts)
def test_exception_line_without_colon(text):
    line = text.replace("\n", " ")
    exc = re.compile(r"(?P<type>[A-Za-z_]\w{0,120}(?:\.[A-Za-z_]\w{0,120}){0,10})"
                     r"(?:\((?P<inner>[A-Za-z_][\w.]{0,200})\))?(?::[ \t]?(?P<msg>.*)|[ \t]*)$")
    if _parse_exc_line(line, lenient=True) is not None:
        assert exc.match(line)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_command_words_are_in_every_match(text):
    for pattern, _, words in _STARTS:
        if pattern.search(text):
            assert any(w in text for w in words), pattern.pattern
    if _PROMPT.match(text.lstrip()):
        assert "$" in text or "#" in text or ">" in text


def test_label_first_letters_cover_every_label():
    for label, key in LABELS.items():
        assert label_of(f"{label.title()}: x") == (key, "x")
        assert label_of(f"  {label}    : y") == (key, "y")
    assert label_of("Zebra version: 1") is None


def test_os_from_prose_with_and_without_the_joined_text():
    cases = [["Ubuntu 22.04 box"], ["running on WSL2"], ["C:\\Users\\me\\venv"], ["File \"D:\\x\\y.py\""],
             ["/home/me/venv/lib"], ["nothing here"], ["I use a Mac mini"], []]
    for lines in cases:
        assert _os_from_prose(lines, "\n".join(lines).lower()) == _os_from_prose(lines)


GAP_PIECES = ["vllm", "serve", "--tp", "2", " ", "\\", "\n", "  ", "\\\n", "x", "\t", "\u3000", "\\x"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(GAP_PIECES), max_size=25).map("".join),
       st.lists(st.sampled_from(["vllm", "serve", "--tp", "2", "\\x", "x"]), min_size=1, max_size=4),
       st.integers(min_value=0, max_value=40))
def test_command_words_found_like_the_joined_pattern(body, words, start):
    from bot.report import _find_words

    m = re.compile(r"[\s\\]+".join(re.escape(w) for w in words)).search(body, start)
    assert _find_words(body, words, start) == ((m.start(), m.end()) if m else None)


GPU_PIECES = ["A100", "a100", "H100 ", "NVIDIA ", "GeForce ", "RTX 4090", "rtx", "MI300X", "mı250", "Mİ210", "L4",
              "l4 GPU", "T4", "t4 card", "\u212a80", "4090", "5090 ti", "8x", "2 ", "× 4", "*", "x", "search", "arc ",
              "Arc A770", "gfx942", "gfx٩٠٨", "a١00", "-", ".", "_", "é", " ", "\n", "\t", "\u3000", "显卡", "gb200",
              "GH200", "v100", "p40", "k80", "h20", "a10g", "rx 7900 xtx", "Instinct ", "intel ", "0"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(GPU_PIECES), max_size=12).map("".join), max_size=6))
def test_prose_gpus_tries_the_same_lines_as_every_line(lines):
    from bot.report.hardware import _line_gpus, _prose_gpus

    every_line = next((gpus for gpus in map(_line_gpus, lines) if gpus), [])
    assert _prose_gpus(lines) == every_line


PAREN_PIECES = ["LLM(", "(", ")", "[", "]", "{", "}", "'", '"', "\\", "\\'", "#", "\n", "x", " ", "a=1", "é"]


def _paren_matches_char_by_char(text: str, opens: list[int], limit: int) -> dict[int, int]:
    matches: dict[int, int] = {}
    wanted = set(opens)
    stack: list[int] = []
    quote: str | None = None
    pos = 0
    for start in opens:
        if start >= pos:
            pos, stack, quote = start, [], None
        end = min(len(text), start + limit)
        i = pos
        while i < end:
            c = text[i]
            if quote:
                if c == "\\":
                    i += 2
                    continue
                if c == quote or c == "\n":
                    quote = None
            elif c in "'\"":
                quote = c
            elif c == "#":
                nl = text.find("\n", i, end)
                i = nl if nl != -1 else end
                continue
            elif c in "([{":
                stack.append(i)
            elif c in ")]}" and stack:
                o = stack.pop()
                if o in wanted:
                    matches[o] = i
            i += 1
        pos = max(pos, end)
    return matches


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(PAREN_PIECES), max_size=40).map("".join), st.sampled_from([6, 15, 20_000]))
def test_paren_matches_skipping_to_the_next_event_char_by_char(text, limit):
    from bot.report.cmdline import _paren_matches

    opens = [i for i, c in enumerate(text) if c == "("]
    assert _paren_matches(text, opens, limit) == _paren_matches_char_by_char(text, opens, limit)


def test_prose_gpus_with_a_lone_surrogate():
    from bot.report.hardware import _prose_gpus

    assert _prose_gpus(["junk \udcff here", "2x A100 GPUs"]) == ["A100", "A100"]


LOG_PIECES = ["(APIServer pid=12)", "(VllmWorker rank=0 pid=7)", "(EngineCore_DP0 pid=3, ip=10.0.0.1)", " ", "\t",
              "INFO", "WARN", "ERROR", "DEBUG", " 05-14 11:49:08", ".123", " [core.py:648]", " [core.py:", "648]",
              "[rank0]: ", "2025-01-02 03:04:05 ", "(", ")", "pid=", "x", "File \"a.py\", line 1", ">", "| ", "\x1b[0m"]


# a tag, a header and the rest in the order of a log line, each part possibly missing or cut
LOG_LINES = st.tuples(
    st.sampled_from(["", " ", "(APIServer pid=12)", "(VllmWorker rank=0 pid=7) ", "(Worker pid=1, ip=10.0.0.1)",
                     "(x pid=)"]),
    st.sampled_from(["", "INFO", "WARN", "ERROR", "CRITICAL", "info"]),
    st.sampled_from(["", " 05-14 11:49:08", " 05-14 11:49:08.123", " 05-14"]),
    st.sampled_from(["", " [core.py:648]", " [core.py:648] ", " [core.py:", " core.py:648]", "]"]),
    st.lists(st.sampled_from(LOG_PIECES), max_size=6).map("".join),
).map("".join)


@settings(max_examples=500, deadline=None)
@given(LOG_LINES)
def test_tag_and_header_at_once_like_one_by_one(line):
    from unittest import mock

    from bot.report import logs

    fast = logs._clean_one(line, frozenset())
    with mock.patch.object(logs, "_TAGGED", re.compile(r"(?!)")):
        assert logs._clean_one(line, frozenset()) == fast


@settings(max_examples=400, deadline=None)
@given(texts)
def test_no_exception_line_without_a_colon_or_a_parenthesis(text):
    if ":" not in text and "(" not in text:
        assert _parse_exc_line(text, lenient=False) is None


ENV_PIECES = ["PyTorch version", "OS", "Is debug build", "  ", ":", " 2.1", "=" * 10, "==", "[pip3] torch==2.1",
              "[conda] x 1", "ROCM Version:", "Collecting environment information", "GPU 0: A100", "X = Self",
              "CPU(s):   ", "A", "FOO_BAR=1", "/usr/lib/x.so", "x", " ", "vLLM Version", "cpu:", "\t"]


@settings(max_examples=800, deadline=None)
@given(st.tuples(st.sampled_from(["", "İ", "K", "(x pid=1) ", "c", "Z", "==", "["]) | st.text(max_size=2),
                 st.lists(st.sampled_from(ENV_PIECES), max_size=6).map("".join)).map("".join))
def test_strong_marker_check_is_the_strong_half_of_envish(text):
    from bot.report.collect_env import _envish, _strong

    s = text.strip()
    if s:
        assert _strong(s) == _envish(s)[1]


EXC_PIECES = ["ValueError", "torch", ".", "_", ":", " ", "\t", "(", ")", "RayTaskError", "x", "a" * 125, "\n", "é",
              "msg", "1"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(EXC_PIECES), max_size=12).map("".join))
def test_exception_line_type_matched_possessively_like_with_backtracking(text):
    from bot.report.errors import EXC_LINE

    backtracking = re.compile(EXC_LINE.pattern.replace("}+", "}"))
    assert backtracking.pattern != EXC_LINE.pattern
    m, b = EXC_LINE.match(text), backtracking.match(text)
    assert (m and m.groupdict()) == (b and b.groupdict())


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(ENV_PIECES), max_size=6).map("".join))
def test_collect_env_lines_without_colon_equals_or_bracket_hold_no_field(text):
    from bot.report.collect_env import _ENV_VAR_RE, _PIP_RE, is_banner

    line = text.replace(":", " ").replace("=", " ").replace("[", " ")
    assert label_of(line) is None and not is_banner(line)
    assert not _PIP_RE.match(line) and not _ENV_VAR_RE.match(line.strip())


TB_LINES = ["Traceback (most recent call last):", '  File "/x/vllm/engine/a.py", line 3, in f', "    f(x)",
            "ValueError: bad value", "RuntimeError:", "  the message below", "```", "~~~", "",
            "EngineCore failed to start.", "During handling of the above exception, another exception occurred:",
            "ERROR: something", "prose with a colon: here", "RayTaskError(ValueError): x", "E   KeyError: 'a'",
            "  | ValueError: in a group", "Exception Group Traceback (most recent call last):", "x" * 4010 + "File ",
            "torch.OutOfMemoryError: CUDA out of memory", "Segmentation fault (core dumped)",
            "WorkerProc hit an exception"]
TB_PREFIXES = ["", "(EngineCore_DP0 pid=7) ERROR 05-14 11:49:08 [core.py:648] ",
               "(APIServer pid=1) INFO 05-14 11:49:08 [api.py:1] ", "(Worker pid=2) ", "> "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TB_PREFIXES), st.sampled_from(TB_LINES)).map("".join), max_size=30))
def test_traceback_reader_skipping_idle_lines_like_feeding_every_line(lines):
    from bot.report.logs import clean_log
    from bot.report.tracebacks import _Extractor

    log = clean_log("\n".join(lines))
    fast, every = _Extractor(log), _Extractor(log)
    fast.run()
    for i, entry in enumerate(log):
        every.feed(i, entry)
    for key in list(every.open):
        every._finish(key)
    assert (fast.tracebacks, fast.found, fast.error_lines, fast.anchor, fast.in_fence, fast.cut_frames) == (
        every.tracebacks, every.found, every.error_lines, every.anchor, every.in_fence, every.cut_frames)


@settings(max_examples=400, deadline=None)
@given(st.lists(LOG_LINES | st.sampled_from(["\x1b[0;36m", "^[[31m", "[1;2m", "m", "\r", "\x1b", "\x0b"]), max_size=8)
       .map("\n".join))
def test_log_without_an_ansi_code_cleaned_like_with_the_substitution(body):
    from bot.report import logs

    groups = "Exception Group Traceback" in body
    every = tuple(logs._clean_one(raw, frozenset(), groups, True) for raw in body.splitlines())
    assert logs.clean_log(body) == every


# the command patterns as first written, their lookbehind in front
_STARTS_LOOKBEHIND_FIRST = (
    r"(?<![\w./-])vllm[ \t]+serve(?![\w-])",
    r"-m[ \t]+vllm\.entrypoints\.cli\.main[ \t]+serve(?![\w-])",
    r"(?<![\w./-])vllm[ \t]+bench[ \t]+[\w-]{1,40}",
    r"(?<![\w./-])vllm\.entrypoints\.(?:openai\.)?api_server(?![\w.])",
    r"(?<![\w-])benchmark_(?:serving|throughput|latency|prefix_caching)\.py(?![\w.])",
    r"(?<![\w./-])vllm[ \t]+(?:chat|complete|run-batch)(?![\w-])",
    r"(?<![\w./-])vllm\.entrypoints\.openai\.run_batch(?![\w.])",
    r"(?<![\w./-])(?:docker|podman|nerdctl)[ \t]+(?:container[ \t]+)?run(?![\w-])",
)
COMMAND_PIECES = ["vllm", " ", "\t", "serve", "bench", "x", ".", "/", "-", "_", "é", "docker", "podman", "nerdctl",
                  "run", "container", "vllm.entrypoints.", "openai.", "api_server", "run_batch", "benchmark_",
                  "serving.py",
                  "chat", "complete", "run-batch", "-m", "cli.main", "1"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(COMMAND_PIECES), max_size=14).map("".join))
def test_command_patterns_find_what_their_lookbehind_first_forms_find(text):
    assert len(_STARTS) == len(_STARTS_LOOKBEHIND_FIRST)
    for (pattern, _, _), first in zip(_STARTS, _STARTS_LOOKBEHIND_FIRST, strict=True):
        m, f = pattern.search(text), re.search(first, text)
        assert (m and m.span()) == (f and f.span()), (pattern.pattern, text)


def _label_of_normalised(line: str) -> tuple[str, str] | None:
    """label_of without its look-up of the label as printed: every label normalised first."""
    from bot.report.collect_env import MAX_LINE

    i = line.find(":", 0, 60)
    if i <= 0:
        return None
    label = line[:i]
    if len(label) - len(label.lstrip()) > 4:
        return None
    key = LABELS.get(" ".join(label.split()).lower())
    return None if key is None else (key, line[i + 1:MAX_LINE].strip())


@settings(max_examples=800, deadline=None)
@given(st.tuples(st.sampled_from(["", " ", "     ", "\t", "İ", "K", "\u00a0"]),
                 st.lists(st.sampled_from(ENV_PIECES + ["pytorch  VERSION", "Is\tdebug build", "OS ", "K"]),
                          max_size=5).map("".join)).map("".join))
def test_label_read_as_printed_like_normalised(line):
    assert label_of(line) == _label_of_normalised(line)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(EXC_PIECES + [" ", "E", "Error", ": ", "RuntimeError"]), max_size=12).map("".join))
def test_no_exception_line_with_a_blank_before_its_colon_and_parenthesis(text):
    sp = text.find(" ")
    if sp >= 0 and text.find(":", 0, sp) < 0 and text.find("(", 0, sp) < 0:
        assert _parse_exc_line(text, lenient=False) is None


PROSE_PIECES = ["INFO", "info", "(x pid=1)", "[rank0]", "2024-01-01 12", "05-14 11:49", "File \"", "Traceback (",
                "ValueError:", "valueerror", "$ ", ">>> ", "#1 ", "+ ", "---", "|||", "===", "[pip3]", "numpy==1.2",
                "torch 2.1", "FOO_BAR=1", "export ", "vllm serve", "python3 -m x", "docker run", "pip install",
                "torchrun", "ray start", " ", "\t", "x", "sudo ", "İ", "K", "^^^", "During handling", "uv pip3 install"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PROSE_PIECES), max_size=6).map("".join))
def test_one_not_prose_pattern_like_the_four(line):
    from bot.report.prose import _COMMAND, _ENV_VAR, _LOG_LINE, _NOT_PROSE, _PIP_LINE

    four = _LOG_LINE.match(line) or _PIP_LINE.match(line) or _ENV_VAR.match(line) or _COMMAND.match(line)
    assert bool(_NOT_PROSE.match(line)) == bool(four)


HW_PIECES = ["torch", "Torch", "TORCH ", "2.1.0", "cuda", " 12.1", "python3.10/", "Python ", "3.11", "driver ",
             "535.1", "rocm", "6.2", "transformers", "==4.45.0", " ", "x", ":", "İ", "/", "-", "version"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(HW_PIECES), max_size=6).map("".join), min_size=1, max_size=6))
def test_first_match_found_through_the_joined_text_like_line_by_line(lines):
    from bot.report import hardware

    low = "\n".join(lines).lower()
    for rx, need in ((hardware._TORCH_RE, "torch"), (hardware._CUDA_RE, "cuda"), (hardware._PYTHON_RE, "python"),
                     (hardware._PY_PATH_RE, "python"), (hardware._DRIVER_RE, "driver"),
                     (hardware._TRANSFORMERS_RE, "transformers")):
        assert hardware._first(rx, lines, need=need, low=low) == hardware._first(rx, lines, need=need)
