"""The output of vLLM's `collect_env.py`, both formats, read line by line.

Current format (2025-05 on): `=====` banners and `Label<padding>: value`.
Older PyTorch style: `Label: value`, where until 2024-11 the last `[conda]` line and `ROCM Version:` were glued.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_LINE = 2000

# label (lower-case, single spaces) -> key
LABELS: dict[str, str] = {
    "pytorch version": "torch",
    "is debug build": "debug",
    "cuda used to build pytorch": "cuda_build",
    "rocm used to build pytorch": "rocm_build",
    "xpu used to build pytorch": "xpu_build",
    "os": "os",
    "gcc version": "gcc",
    "clang version": "clang",
    "cmake version": "cmake",
    "libc version": "libc",
    "python version": "python",
    "python platform": "python_platform",
    "is cuda available": "cuda_available",
    "cuda runtime version": "cuda_runtime",
    "cuda_module_loading set to": "cuda_module_loading",
    "gpu models and configuration": "gpus",
    "nvidia driver version": "driver",
    "cudnn version": "cudnn",
    "hip runtime version": "hip",
    "miopen runtime version": "miopen",
    "is xnnpack available": "xnnpack",
    "is xpu available": "xpu_available",
    "xpu runtime version": "xpu_runtime",
    "intel gpu models": "intel_gpus",
    "rocm version": "rocm",
    "neuron sdk version": "neuron",
    "vllm version": "vllm",
    "vllm build flags": "build_flags",
    "gpu topology": "topology",
    "level zero driver version": "level_zero_driver",
    "vllm xpu kernels version": "vllm_xpu_kernels",
}

_LABEL_FIRST = frozenset(label[0] for label in LABELS)

# labels that only appear in a collect_env dump (used to recognise a pasted dump without headings)
STRONG_KEYS = frozenset({
    "torch", "debug", "cuda_build", "rocm_build", "xpu_build", "gcc", "clang", "cmake", "libc", "python_platform",
    "cuda_available", "cuda_runtime", "cuda_module_loading", "gpus", "driver", "cudnn", "hip", "miopen", "xnnpack",
    "xpu_available", "xpu_runtime", "intel_gpus", "rocm", "neuron", "vllm", "build_flags", "topology",
})

_PIP_RE = re.compile(r"^\s*\[(pip3?|conda)\]\s+(.*)$")
_GPU_LINE_RE = re.compile(r"^\s*GPU\s+(\d{1,3})\s*:\s*(.+?)\s*$")
_UUID_RE = re.compile(r"\s*\(UUID:[^)]*\)")
_ENV_VAR_RE = re.compile(r"^\s*(?:export\s+)?([A-Z][A-Z0-9_]{1,80})=(.{0,500})$")
_GLUED_ROCM = "ROCM Version:"
_SECRET_WORDS = ("SECRET", "TOKEN", "API", "ACCESS", "PASSWORD", "KEY", "CREDENTIAL")

NOT_COLLECTED = frozenset({"", "could not collect", "n/a", "none", "no cuda", "no xpu", "false", "no", "unknown"})


@dataclass
class CollectEnv:
    fields: dict[str, str] = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)
    pip: dict[str, str] = field(default_factory=dict)      # package name (lower) -> version, from [pip3]/[conda]
    env_vars: dict[str, str] = field(default_factory=dict)
    strong: int = 0                                         # how many collect_env-only labels were seen

    def get(self, key: str) -> str | None:
        value = self.fields.get(key)
        if value is None or value.strip().lower() in NOT_COLLECTED:
            return None
        return value.strip()


def split_glued(line: str) -> list[str]:
    """`[conda] Could not collectROCM Version: 6.2` -> two lines (the pre-2024-11 quirk)."""
    i = line.find(_GLUED_ROCM)
    if i > 0:
        return [line[:i], line[i:]]
    return [line]


def label_of(line: str) -> tuple[str, str] | None:
    """(key, value) when the line is a known collect_env `Label: value` line."""
    i = line.find(":", 0, 60)
    if i <= 0:
        return None
    label = line[:i]
    key = LABELS.get(label.rstrip().lower())   # the label as collect_env prints it: one dict look-up
    if key is not None:
        return key, line[i + 1:MAX_LINE].strip()
    first = label.lstrip()[:1]
    if first.lower() not in _LABEL_FIRST:
        return None
    if len(label) - len(label.lstrip()) > 4:
        return None
    key = LABELS.get(" ".join(label.split()).lower())
    if key is None:
        return None
    return key, line[i + 1:MAX_LINE].strip()


def preamble_lines(lines: list[str] | tuple[str, ...], max_lines: int = 40) -> list[int]:
    """Indices of what collect_env printed between "Collecting environment information..." and its first label.

    That is import-time output of the reporter's vLLM (a missing `vllm._C` on a build without CUDA ops, a commit
    hash it cannot read), not the failure the report is about.
    """
    out: list[int] = []
    for i, line in enumerate(lines):
        if not line.lstrip().lower().startswith("collecting environment information"):
            continue
        for j in range(i + 1, min(len(lines), i + 1 + max_lines)):
            s = lines[j][:MAX_LINE].strip()
            if s.startswith("### ") or label_of(s) is not None or is_banner(s):
                break
            out.append(j)
    return out


def is_banner(line: str) -> bool:
    s = line.strip()
    return len(s) >= 10 and not s.strip("=")


def _pip_entry(rest: str) -> tuple[str, str] | None:
    rest = rest.strip()
    if "==" in rest:
        name, _, ver = rest.partition("==")
        return name.strip().lower(), ver.strip().split()[0] if ver.strip() else ""
    parts = rest.split()
    if len(parts) >= 2 and parts[0] != "Could":
        return parts[0].lower(), parts[1]
    return None


def _secret(name: str) -> bool:
    return any(w in name for w in _SECRET_WORDS)


def parse_collect_env(lines: list[str]) -> CollectEnv:
    """Read every collect_env field found in the lines (first occurrence wins)."""
    out = CollectEnv()
    pending_gpus = False   # the GPU label had no value: the list follows, one `GPU n: name` per line
    in_env_vars = False
    for raw in lines:
        raw = raw[:MAX_LINE]
        for line in split_glued(raw) if _GLUED_ROCM in raw else (raw,):
            stripped = line.strip()
            if pending_gpus:
                g = _GPU_LINE_RE.match(stripped)
                if g:
                    out.gpus.append(_UUID_RE.sub("", g.group(2)).strip())
                    continue
                if not stripped:
                    continue
                pending_gpus = False
            if ":" not in line and "=" not in line and "[" not in line:
                # no label, banner, pip or variable line: only the heading of the variables can be one
                if stripped.lower() in ("environment variables", "environment variables:"):
                    in_env_vars = True
                continue
            lv = label_of(line)
            if lv is not None:
                key, value = lv
                if key in STRONG_KEYS:
                    out.strong += 1
                if key not in out.fields:
                    out.fields[key] = value
                    if key == "gpus":
                        if value and value.lower() not in NOT_COLLECTED:
                            g = _GPU_LINE_RE.match(value)
                            out.gpus.append(_UUID_RE.sub("", g.group(2) if g else value).strip())
                            pending_gpus = True   # a second `GPU 1:` line may follow
                        elif not value:
                            pending_gpus = True
                continue
            if len(stripped) >= 10 and not stripped.strip("="):  # is_banner
                continue
            low = stripped.lower()
            if low == "environment variables" or low == "environment variables:":
                in_env_vars = True
                continue
            p = _PIP_RE.match(line) if stripped[:1] == "[" else None
            if p:
                entry = _pip_entry(p.group(2))
                if entry and entry[0] not in out.pip:
                    out.pip[entry[0]] = entry[1]
                continue
            e = _ENV_VAR_RE.match(stripped) if "=" in stripped else None
            if e and (in_env_vars or out.strong >= 3) and not _secret(e.group(1)):
                out.env_vars.setdefault(e.group(1), e.group(2).strip())
    return out


# ---- recognising a pasted dump inside free text -------------------------------------------------

_LSCPU_RE = re.compile(r"^\s{0,4}[A-Z][A-Za-z0-9 ()/,.:_-]{0,50}:\s{2,40}\S")
_TOPO_RE = re.compile(r"^\s*(?:GPU\d+|NIC\d+|mlx\d|X\s+=|SYS\s+=|NODE\s+=|PHB\s+=|PXB\s+=|PIX\s+=|NV#\s+=|Legend:|"
                      r"NIC Legend:|GPU\d+\s|CPU Affinity|\t?GPU\d)")
_SOFT_STARTS = ("collecting environment information", "versions of relevant libraries", "cpu:", "cpu info",
                "system info", "pytorch info", "python environment", "cuda / gpu info", "vllm info",
                "intel xpu / gpu info", "environment variables", "cuda archs:", "probably one of the following",
                "architecture:", "vulnerability ", "flags:", "--compile time--", "--runtime--")


_NEUTRAL_STARTS = ("```", "~~~", "<details", "</details", "<summary", "</summary")


def line_is_envish(line: str) -> tuple[bool, bool]:
    """(part of a dump, strong collect_env marker)."""
    return _envish(line.strip())


def _envish(s: str) -> tuple[bool, bool]:
    """line_is_envish of a stripped line."""
    if not s:
        return True, False
    if "ROCM Version:" in s:
        return True, True
    lv = label_of(s)
    if lv is not None:
        return True, lv[0] in STRONG_KEYS
    if len(s) >= 10 and not s.strip("="):  # is_banner
        return True, True
    low = s.lower()
    first = s[0]
    if first == "[" and _PIP_RE.match(s):
        return True, True
    if low.startswith("collecting environment information"):
        return True, True
    if low.startswith(_SOFT_STARTS):
        return True, False
    # the first characters these patterns can start with (after the stripped blanks)
    if first in "GNmXSPLC" and (_GPU_LINE_RE.match(s) or _TOPO_RE.match(s)):
        return True, False
    if "A" <= first <= "Z" and ":" in s and _LSCPU_RE.match(s):
        return True, False
    if "=" in s and _ENV_VAR_RE.match(s):
        return True, False
    if s.startswith("/") and " " not in s:   # cuDNN library paths
        return True, False
    return False, False


# the first characters a strong marker other than the glued ROCm label can start with: a label's (either case),
# a banner's, a pip line's, "Collecting environment information"'s
_STRONG_FIRST = frozenset(_LABEL_FIRST | {c.upper() for c in _LABEL_FIRST} | set("=[cC"))


def _strong(s: str) -> bool:
    """_envish(s)[1] without the tests that only tell a weak dump line from prose."""
    if "ROCM Version:" in s:
        return True
    if s[0] not in _STRONG_FIRST:   # log lines, frames, prose in other words: no test below can pass
        return False
    lv = label_of(s)
    if lv is not None:
        return lv[0] in STRONG_KEYS
    if len(s) >= 10 and not s.strip("="):  # is_banner
        return True
    if s[0] == "[":
        return _PIP_RE.match(s) is not None
    return s.lower().startswith("collecting environment information")


def dump_spans(lines: list[str] | tuple[str, ...], min_strong: int = 3, max_gap: int = 2) -> list[tuple[int, int]]:
    """Index ranges [start, end) of collect_env-shaped blocks: runs of dump lines with >= min_strong markers.

    A run survives up to `max_gap` foreign lines (wrapped lscpu flags, odd topology rows); blank lines and
    fence / `<details>` wrappers are neutral; a `### ` heading ends it.
    """
    spans: list[tuple[int, int]] = []
    start = last = -1
    strong = gap = 0

    def close() -> None:
        if start >= 0 and strong >= min_strong:
            spans.append((start, last + 1))

    for i, raw in enumerate(lines):
        line = raw[:MAX_LINE]
        s = line.strip()
        if start >= 0 and line.startswith("### "):
            close()
            start = -1
            continue
        if not s or s.startswith(_NEUTRAL_STARTS):
            continue
        if start < 0:   # outside a run only a strong marker matters
            if _strong(s):
                start, last, strong, gap = i, i, 1, 0
            continue
        envish, is_strong = _envish(s)
        if envish:
            last, gap = i, 0
            strong += is_strong
            continue
        gap += 1
        if gap > max_gap:   # a strong line is envish: none starts a run here
            close()
            start = -1
    close()
    return spans
