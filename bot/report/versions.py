"""vLLM version strings in free text: tokens, the contexts that name vLLM, and which one the report is about.

Everything works on one line at a time (callers cap the length); patterns have no nested quantifiers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A version-ish token: digits, then letters/digits/dots/plus. Validated afterwards on the short token.
_TOKEN_RE = re.compile(r"\d{1,4}\.[0-9A-Za-z.+]{1,80}")
_VALID_RE = re.compile(
    r"(\d{1,4}(?:\.\d{1,5}){1,3}(?:\.?(?:post|dev|rc|a|b)\d{0,6}){0,3}(?:\.d\d{8})?(?:\+[0-9A-Za-z]{1,40}(?:\.[0-9A-Za-z]{1,40}){0,4})?)"
)
_SHA_RE = re.compile(r"\+g([0-9a-f]{7,40})")

# words that may sit between "vllm" and its version: "vLLM version: 0.6.3", "vllm docker image v0.9.0"
_FILLER = frozenset({
    "version", "versions", "ver", "is", "was", "release", "docker", "image", "container", "server", "engine",
    "openai", "nightly", "build", "package", "wheel", "pypi", "tag", "from", "of", "on", "at", "=", "==", ":", "v",
    "api", "main", "branch", "latest", "stable", "upgraded", "installed", "to", "with", "版本", "版本号", "的版本",
    "i.e", "ie", "e.g", "namely", "currently", "now",
})
# a word right before a bare "v0.x.y" / "0.x.y" that keeps it a plausible vLLM version
_BARE_OK_BEFORE = frozenset({
    "", "on", "in", "with", "using", "use", "of", "from", "to", "at", "and", "or", "vs", "vs.", "since", "after",
    "before", "between", "for", "latest", "release", "tag", "docker", "image", "container", "upgrade",
    "upgraded", "upgrading", "downgrade", "downgraded", "downgrading", "the", "&", "/", "~", "-", "->", "=>", "still",
    "v1", "v0", "nightly", "main", "now", "currently", "but", "is", "was", "are", "vllm",
    "new", "old", "current", "previous", "tried", "both", "also", "until", "build", "commit", "running",
    # vLLM's own docker images named without their registry path: "on vllm-openai v0.8.3"
    "vllm-openai", "vllm-openai-rocm", "vllm-tpu", "vllm/vllm-openai", "vllm/vllm-tpu",
})
# packages whose 0.x versions show up in vLLM reports
OTHER_PACKAGES = frozenset({
    "xgrammar", "flashinfer", "flashinfer-python", "outlines", "lm-eval", "lm_eval", "tokenizers", "xformers",
    "peft", "accelerate", "safetensors", "bitsandbytes", "huggingface-hub", "huggingface_hub", "vllm-ascend",
    "vllm_ascend", "sglang", "lmdeploy", "guidance", "llguidance", "triton", "ray", "deepspeed", "mistral_common",
    "mistral-common", "openai", "fastapi", "uvicorn", "pydantic", "gguf", "compressed-tensors", "autoawq", "auto-gptq",
    "optimum", "trl", "datasets", "numpy", "torch", "pytorch", "transformers", "cuda", "python", "rocm", "driver",
    "tensorrt-llm", "tgi", "ollama", "llama.cpp", "nccl", "cudnn", "jax", "libtpu", "torchvision", "torchaudio",
})
_PREV_MARKERS = ("work", "fine", "ok ", "okay", "good", "previous", "prior", "older", "old:", "old ", "downgrad",
                 "roll back", "rollback", "rolled back", "revert", "from", "between", "before", "earlier",
                 "used to", "last working", "was working", "fixed in", "fix in", "resolved in")
_NEG_MARKERS = ("not ", "n't", "no longer", "never", "fail", "broke", "error", "crash", "issue", "problem", "bug")
# say the version did not have the problem, whatever negation they contain
_NO_PROBLEM = ("doesn't happen", "does not happen", "didn't happen", "did not happen", "doesn't exist",
               "does not exist", "didn't exist", "did not exist", "not reproduce", "not present", "no such",
               "no problem", "without this", "without the", "without any")
_CURRENT = ("latest", "new:", "current", "now ", "still", "upgrade to", "upgraded to", "upgrading to", "updated to",
            "updating to", "switched to", "switching to", "moved to", "moving to", "since ")
_TRANSITIONS = frozenset({"->", "-->", "=>", "→", "to", "~>"})
# a number followed by one of these is a measurement ("vLLM - 7.5 tok/s", "vllm: 0.8 s"), not a version
# a release suffix written apart: "0.5.0 post1", "0.6.4 rc1"
_SPACED_SUFFIX = re.compile(r"[ ](post|rc|dev)(\d{1,4})\b", re.IGNORECASE)
# where a new clause starts: what was said before it does not describe the version after it
_CLAUSE = re.compile(r".*(?:,|;|\.\s|\bbut\b|\bwhile\b|\bwhereas\b|\bhowever\b)", re.DOTALL)
_LIST_SEP = re.compile(r"\s{0,3}(?:,|/|&|\band\b|\bor\b|,\s{0,3}and\b)\s{0,3}(?:vllm\s{1,3})?v?", re.IGNORECASE)
_UNIT_RE = re.compile(r"\s{0,2}(?:%|x\b|(?:tok|tokens?|t|it|req|requests?|seq)/s|(?:tok|tokens?|t/s|tps|qps|rps|"
                      r"s|sec|secs|seconds?|ms|min|minutes?|h|hours?|gb|gib|mb|mib|kb|times)\b)", re.IGNORECASE)


def valid_version(token: str) -> str | None:
    """The leading PEP 440-ish version in token, or None. `0.6.3.` -> `0.6.3`; `0.6B` -> None."""
    token = token[:120].rstrip(".")
    m = _VALID_RE.match(token)
    if not m:
        return None
    v = m.group(1)
    rest = token[len(v):]
    if rest and (rest[0].isdigit() or rest[0] == "+"):
        return None
    if rest and rest[0].isalpha() and v.count(".") < 2:
        return None   # "0.6B", "1.5x" style sizes; a typo such as "0.6.4.post1v" keeps its version
    return v


def with_spaced_suffix(line: str, version: str, end: int) -> tuple[str, int]:
    """`0.5.0` followed by ` post1` in the line -> (`0.5.0.post1`, the new end)."""
    if not re.search(r"(post|rc|dev)\d", version):
        m = _SPACED_SUFFIX.match(line, end)
        if m:
            kind = m.group(1).lower()
            return version + ("." if kind != "rc" else "") + kind + m.group(2), m.end()
    return version, end


def commit_of(version: str) -> str | None:
    m = _SHA_RE.search(version)
    return m.group(1) if m else None


@dataclass(frozen=True)
class Mention:
    version: str
    start: int             # offset in the line
    end: int
    anchored: bool         # "vllm" (or an image/pip context) names it, not only its shape


def _is_vllm_word(line: str, i: int) -> bool:
    """line[i:i+4] is 'vllm' as a word of its own (not vllm-ascend, vllm_flash_attn, vllm.entrypoints)."""
    if i > 0 and (line[i - 1].isalnum() or line[i - 1] == "_"):
        return False
    j = i + 4
    if j < len(line):
        c = line[j]
        if (c.isascii() and c.isalpha()) or c == "_":
            return False
        if c in "-." and j + 1 < len(line) and (line[j + 1].isascii() and line[j + 1].isalpha()
                                                and line[j + 1] not in "vV"):
            return False   # vllm-ascend, vllm.entrypoints, but not vllm-v0.9
        if c == "/" and j + 1 < len(line) and line[j + 1].isalpha():
            return False   # vllm/vllm-openai (image tags are read elsewhere), vllm/model_executor
    return True


def _version_after(line: str, pos: int) -> tuple[str, int, int] | None:
    """The version that follows position pos within a few filler words, e.g. ' version: v0.6.3'."""
    i = pos
    n = min(len(line), pos + 60)
    words = 0
    while i < n:
        c = line[i]
        if c in " \t=:-_@,(\"'`*：（":
            i += 1
            continue
        if c in "vV" and i + 1 < n and line[i + 1].isdigit():
            i += 1
            c = line[i]
        if c.isdigit():
            m = _TOKEN_RE.match(line, i, min(len(line), i + 120))
            if not m:
                return None
            v = valid_version(m.group(0))
            if not v or _UNIT_RE.match(line, i + len(v), i + len(v) + 12):
                return None
            v, end = with_spaced_suffix(line, v, i + len(v))
            return v, i, end
        j = i
        while j < n and (line[j].isalpha() or line[j] == "."):
            j += 1
        word = line[i:j].lower().rstrip(".")
        if j == i or word not in _FILLER:
            return None
        words += 1
        if words > 3:
            return None
        i = j
    return None


def vllm_mentions(line: str) -> list[Mention]:
    """Versions named next to the word vLLM: 'vLLM 0.6.3', 'vllm==0.5.4', 'vllm version: v0.9.2', 'vllm-0.6.1',
    'VLLM_VERSION=0.8.5'."""
    out: list[Mention] = []
    low = line.lower()
    i = low.find("vllm")
    while i >= 0 and len(out) < 20:
        if low.startswith("_version", i + 4) and (i == 0 or not (low[i - 1].isalnum() or low[i - 1] == "_")):
            hit = _version_after(line, i + 12)
            if hit:
                out.append(Mention(hit[0], hit[1], hit[2], True))
        elif _is_vllm_word(low, i):
            hit = _version_after(line, i + 4)
            if hit:
                out.append(Mention(hit[0], hit[1], hit[2], True))
        i = low.find("vllm", i + 4)
    return out


_OPENERS = " \t`'\"([{*"
_WORD_PUNCT = "`'\"()[]{}*:,;"


def _word_before(line: str, start: int) -> str:
    """The word before a version at start (a leading 'v' skipped), quotes and colons dropped."""
    k = start
    if k > 0 and line[k - 1] in "vV":
        k -= 1
    while k > 0 and line[k - 1] in _OPENERS:
        k -= 1
    m = k
    while m > 0 and not line[m - 1].isspace() and k - m < 40:
        m -= 1
    return line[m:k].strip(_WORD_PUNCT)


def bare_mentions(line: str, *, need_v: bool, lenient_v: bool = False) -> list[Mention]:
    """Versions without the word vLLM: 'on v0.9.2', '0.11.0 breaks…'. Only 0.x (every vLLM release so far).

    lenient_v: a 'v0.x.y' counts whatever word precedes it unless that word names another package (titles).
    """
    out: list[Mention] = []
    for m in _TOKEN_RE.finditer(line):
        s = m.start()
        if s > 0 and (line[s - 1].isalnum() and line[s - 1] not in "vV"):
            continue
        if s > 1 and line[s - 1] in "vV" and (line[s - 2].isalnum() or line[s - 2] in "_-."):
            continue
        if s > 0 and line[s - 1] in "-_.=/:+" and not (s > 1 and line[s - 2] == " "):
            continue   # Qwen3-0.6B, torch==2.4, pkg/0.1.2
        has_v = s > 0 and line[s - 1] in "vV"
        if need_v and not has_v:
            continue
        v = valid_version(m.group(0))
        if not v or not v.startswith("0.") or v.startswith("0.0."):
            continue   # every vLLM release is 0.1 or later; 0.0.x is another package
        if not has_v and v.count(".") < 2:
            continue
        written = _word_before(line, s)
        before = written.lower()
        ok = before in _BARE_OK_BEFORE or before.endswith(("vllm", "/")) or (has_v and before == "version")
        if not ok and out and _LIST_SEP.fullmatch(line, out[-1].end, s - has_v):
            ok = True   # the next version of a list: "0.8.4, 0.8.5 and 0.9.0"
        if not ok and before == "version":   # "the latest version 0.10.2", "i.e., version 0.10.2"
            ahead = _word_before(line, line.rfind(written, 0, s)).lower()
            ok = bool(ahead) and (ahead in _BARE_OK_BEFORE or ahead in ("i.e.", "e.g.", "my", "our", "this"))
        if not ok and has_v and _SHA_RE.search(v) and before not in OTHER_PACKAGES:
            ok = True   # a build of a commit, as vLLM's dev builds name themselves: "reporting `v0.9.1.dev5+g1a2b3c4`"
        if not ok and lenient_v and has_v and v.count(".") >= 2:
            # a lowercase word, or a capitalised verb opening the title ("Missing v0.12.0 wheel …"), not a name
            first = not line[:max(0, line.rfind(written, 0, s))].strip(" \t`'\"([{*:")
            verb = first and written.istitle() and before.endswith(("ing", "ed"))
            ok = (written.isascii() and written.isalpha() and (written.islower() or verb)
                  and before not in OTHER_PACKAGES)
        if not ok:
            continue
        v, end = with_spaced_suffix(line, v, s + len(v))
        out.append(Mention(v, s, end, False))
    return out


def _any(words: tuple[str, ...] | frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))


_PREV_RX = _any(_PREV_MARKERS)
_NEG_RX = _any(_NEG_MARKERS)
_NO_PROBLEM_RX = _any(_NO_PROBLEM)
_CURRENT_RX = _any(_CURRENT)
_RANGE_RX = _any(("between", "from", "vs", "versus", "compared"))
_OK_AFTER_RX = _any(("work", "fine", " ok", "good", "was ok"))


def is_previous(context_before: str, context_after: str) -> bool:
    """The mention is a version the user says worked / came before ('works on 0.8.5', 'from 0.8.5 to …')."""
    b = context_before[-50:].lower()
    clause = _CLAUSE.match(b)
    if clause:
        b = b[clause.end():]   # "0.9.2 works, but vllm 0.10.1 crashes": the clause of 0.10.1 starts at "but"
    a = context_after[:40].lower()
    if a.strip(" ,.") in _TRANSITIONS:
        return True   # "0.8.5 -> 0.9.0", "upgrade 0.8.5 to 0.9.0": the later one is current
    if _CURRENT_RX.search(b):
        return False
    if _NO_PROBLEM_RX.search(b) or _NO_PROBLEM_RX.search(a):
        return True
    if _PREV_RX.search(b) and not _NEG_RX.search(b):
        return True
    return bool(_OK_AFTER_RX.search(a)) and not _NEG_RX.search(a)


def classify(line: str, mentions: list[Mention]) -> list[tuple[Mention, bool]]:
    """Each mention with whether it is a 'previous' (working / older) version, judged on the text around it."""
    mentions = sorted(mentions, key=lambda m: m.start)
    out: list[tuple[Mention, bool]] = []
    head = 0   # where the list the current mention belongs to starts
    for k, m in enumerate(mentions):
        lo = mentions[k - 1].end if k else 0
        hi = mentions[k + 1].start if k + 1 < len(mentions) else len(line)
        if k and _LIST_SEP.fullmatch(line, lo, m.start):
            # "works on 0.8.5, 0.9.0 and 0.9.1": one list, one judgement; "between 0.6.3 and 0.6.4" is a range
            opening = line[mentions[head - 1].end if head else 0:mentions[head].start].lower()
            if not _RANGE_RX.search(opening[-30:]):
                out.append((m, out[-1][1]))
                continue
        else:
            head = k
        out.append((m, is_previous(line[lo:m.start], line[m.end:hi])))
    return out
