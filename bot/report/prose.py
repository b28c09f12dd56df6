"""The reporter's own words: description lines outside code blocks, minus pasted logs, dumps, configs and commands.

Labels and rules read keywords here (never in an env dump or a log), and words as people write them are corrected
in this text only (`bot.wording`).
"""

from __future__ import annotations

import re

MAX_PROSE_LINE = 400

# lines of the description that are not the reporter's prose
_LOG_LINE = re.compile(
    r"^\s*(\([\w .=,-]{1,80} pid=\d+|\[rank\d+\]|(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\b|\d{4}-\d\d-\d\d[ T]\d|"
    r"\d\d-\d\d \d\d:\d\d|File \"|Traceback \(|During handling|The above exception|\^{3,}|\[(pip3?|conda)\]|"
    r"[\w.]+(Error|Exception|Warning|Exit|Interrupt)\b:?|\$ |>>> |#\d+ |\+ |[-+]{3,}|[|=]{3,})",
    re.IGNORECASE,
)
_CONFIG_PAIR = re.compile(r"\b\w+=(None|True|False|\d|'|\"|\{|\[|torch\.)")
_PIP_LINE = re.compile(r"^\s*[\w.-]{1,80}\s*(==|>=|<=|~=|@)\s*\S{1,80}\s*$|^\s*[\w.-]{1,80}\s+\d[\w.+-]{0,40}\s*$")
_ENV_LABELS = (
    "pytorch version", "is debug build", "cuda used to build", "rocm used to build", "xpu used to build", "os:",
    "gcc version", "clang version", "cmake version", "libc version", "python version", "python platform",
    "is cuda available", "cuda runtime version", "cuda_module_loading", "gpu models and configuration",
    "nvidia driver version", "cudnn version", "hip runtime version", "miopen runtime version", "is xnnpack",
    "rocm version", "neuron sdk", "vllm version", "vllm build flags", "cuda archs", "gpu topology", "cpu:",
    "architecture:", "model name:", "flags:", "vulnerability", "numa node", "l1d cache", "l2 cache", "l3 cache",
    "versions of relevant libraries", "is xpu available", "intel gpu models", "collecting environment information",
)
_ENV_VAR = re.compile(r"^\s*(export\s+)?[A-Z][A-Z0-9_]{2,}=")
# a pasted command line: what the reporter ran (read as flags), not what the report is about
_COMMAND = re.compile(r"^\s*(\$\s*)?(sudo\s+)?(vllm\s+(serve|bench)|python3?\s+(-m\s+)?[\w./-]+|docker\s+run|"
                      r"(uv\s+)?pip3?\s+install|torchrun|ray\s+start)\b")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
# a log, pip, variable or command line at once: one match per line instead of four
_NOT_PROSE = re.compile(
    f"(?i:{_LOG_LINE.pattern})|(?:{_PIP_LINE.pattern})|(?:{_ENV_VAR.pattern})|(?:{_COMMAND.pattern})")


def prose_lines(description: str) -> list[str]:
    """The reporter's own words: description lines outside code blocks, minus pasted logs/dumps/configs."""
    out: list[str] = []
    fence: str | None = None
    in_details_env = False
    for raw in description.split("\n"):
        line = raw.rstrip()
        m = _FENCE.match(line) if "```" in line or "~~~" in line else None
        if m:
            run = m.group(1)
            if fence is None:
                fence = run
            elif run[0] == fence[0] and len(run) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        low = line.strip().lower()
        if not low:
            continue
        if "collect_env" in low or "collect-env" in low:
            in_details_env = "<details" in low or "<summary" in low or in_details_env
            continue
        if in_details_env:
            if "</details>" in low:
                in_details_env = False
            continue
        if len(line) > MAX_PROSE_LINE or _NOT_PROSE.match(line):
            continue
        if low.startswith(_ENV_LABELS) or ("could not collect" in low):
            continue
        if len(_CONFIG_PAIR.findall(line)) >= 2:
            continue
        out.append(line)
    return out
