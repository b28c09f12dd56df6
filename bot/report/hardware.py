"""Hardware and software around vLLM: torch / CUDA / ROCm / driver / GPUs / platform / OS / Python / transformers.

Read from collect_env first, then nvidia-smi output and log lines, then prose. Line by line, bounded lines.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from dataclasses import dataclass, field

import re2

from bot.report.collect_env import CollectEnv
from bot.report.versions import valid_version

MAX_PROSE_LINES = 5000

_SECRET_WORDS = ("SECRET", "TOKEN", "API", "ACCESS", "PASSWORD", "KEY", "CREDENTIAL", "AUTH")
_ENV_NAME_RE = re.compile(r"[A-Z][A-Z0-9_]{1,80}")


def is_env_var_name(name: str) -> bool:
    if name == "VERBOSE":
        return True
    return "_" in name and bool(_ENV_NAME_RE.fullmatch(name))


def is_secret(name: str) -> bool:
    return any(w in name.upper() for w in _SECRET_WORDS)


@dataclass
class Hardware:
    torch: str | None = None
    cuda: str | None = None
    rocm: str | None = None
    driver: str | None = None
    gpus: list[str] = field(default_factory=list)
    platform: str | None = None
    os: str | None = None
    python: str | None = None
    transformers: str | None = None


# ---- versions of other packages ------------------------------------------------------------------

_NUM_RE = re.compile(r"\d{1,4}(?:\.\d{1,6}){0,3}")
_TORCH_RE = re.compile(
    r"(?<![\w-])(?:py)?torch(?:\s{0,2}version)?\s{0,3}(?:==|=|:|\s)\s{0,3}v?(\d\.\d{1,2}[0-9A-Za-z.+]{0,30})",
    re.IGNORECASE)
_TRANSFORMERS_RE = re.compile(
    r"(?<![\w-])transformers(?:\s{0,2}version)?\s{0,3}(?:==|=|:|\s)\s{0,3}v?(\d\.\d{1,3}[0-9A-Za-z.+]{0,30})",
    re.IGNORECASE)
_PYTHON_RE = re.compile(r"(?<![\w/-])python\s{0,2}(?:version)?\s{0,3}[:=]?\s{0,3}v?(3\.\d{1,2}(?:\.\d{1,3})?)(?![\d.])",
                        re.IGNORECASE)
_PY_PATH_RE = re.compile(r"python(3\.\d{1,2})[/\\]")
_CUDA_RE = re.compile(
    r"(?<![\w-])cuda(?:\s{0,2}(?:toolkit|version|runtime))?\s{0,3}[:=]?\s{0,3}v?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?)(?![\d.])",
    re.IGNORECASE)
_SMI_RE = re.compile(r"Driver Version:\s*(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)(?:\s+CUDA Version:\s*(\d{1,2}\.\d{1,2}))?")
_DRIVER_RE = re.compile(r"driver(?:\s{0,2}version)?\s{0,3}[:=]?\s{0,3}(\d{3}\.\d{1,3}(?:\.\d{1,3})?)(?![\d.])",
                        re.IGNORECASE)
_ROCM_RE = re.compile(r"(?<![\w-])rocm(?:\s{0,2}version)?\s{0,3}[:=]?\s{0,3}v?(\d\.\d{1,2}(?:\.\d{1,6})?)(?![\d.])",
                      re.IGNORECASE)
_LOCAL_CU_RE = re.compile(r"\+cu(\d{2,3})")
_LOCAL_ROCM_RE = re.compile(r"\+rocm(\d\.\d{1,2}(?:\.\d{1,3})?)")


def _cu_tag(tag: str) -> str:
    """'121' -> '12.1', '118' -> '11.8', '128' -> '12.8', '92' -> '9.2'."""
    return f"{tag[:-1]}.{tag[-1]}"


def _first(rx: re.Pattern[str], lines: list[str], group: int = 1, need: str | None = None,
           low: str | None = None) -> str | None:
    """The first match in `lines` (only lines holding `need` when given). `low`: the lines joined by "\n" (none
    holding one), lower-case; the lines holding `need` are then found in it instead of lower-casing every line."""
    if need is not None and low is not None:
        k = prev = 0
        at = low.find(need)
        while at >= 0:
            k += low.count("\n", prev, at)
            m = rx.search(lines[k])
            if m and m.group(group):
                return m.group(group)
            prev = low.find("\n", at)
            if prev < 0:
                return None
            at = low.find(need, prev)
        return None
    for line in lines:
        if need is not None and need not in line.lower():
            continue
        m = rx.search(line)
        if m and m.group(group):
            return m.group(group)
    return None


def _num(value: str | None) -> str | None:
    if not value:
        return None
    m = _NUM_RE.search(value)
    return m.group(0) if m else None


# ---- GPUs ----------------------------------------------------------------------------------------

_GPU_RE = re.compile(
    r"(?<![\w.-])(?:(?P<n1>\d{1,2})\s?[x×*]\s?|(?P<n2>\d{1,2})\s)?"
    r"(?P<name>(?:(?:nvidia|geforce|tesla|quadro|amd|instinct|radeon|intel)\s){0,2}"
    r"(?:rtx\s?(?:pro\s?)?a?\d{4}(?:\s?(?:ti|super|ada|blackwell))?(?:\s\d{2}\s?gb)?"
    r"|gtx\s?\d{3,4}(?:\s?ti)?"
    r"|[ahb]\d00[gs]?(?:[- ](?:sxm\d?|pcie|nvl))?(?:[- ]\d{2,3}\s?gb)?"
    r"|l40s?|l20|l4|a10g?|a30|a40|a16|h20|t4|v100|p100|p40|k80|gh200|gb\d{2,3}"
    r"|mi\d{2,3}[a-z]?|arc\s?[ab]\d{3}|rx\s?\d{4}(?:\s?xtx?)?|gfx\d{3,4}[a-z]?"
    r"|[1-5]0[5-9]0(?:\s?(?:ti|super))?))"
    r"(?![\w])(?:\s?[x×*]\s?(?P<n3>\d{1,2})(?!\d))?",
    re.IGNORECASE,
)
_AMBIGUOUS = re.compile(r"(?:l4|l20|a10|a16|a30|a40|h20|t4|p40|k80|gfx\d+|[1-5]0[5-9]0)", re.IGNORECASE)
_SMI_ROW_RE = re.compile(r"^\|\s{0,6}(\d{1,2})\s{1,8}(\S.{1,40}?)\s{1,40}(?:On|Off)\s{0,4}\|")
_SMI_L_RE = re.compile(r"^\s*GPU\s(\d{1,3}):\s(.{2,80}?)\s\(UUID:")


def _gpus_from_smi(lines: list[str]) -> list[str]:
    table: list[str] = []
    listed: list[str] = []
    for line in lines:
        if line.startswith("|") and ("On" in line or "Off" in line):
            m = _SMI_ROW_RE.match(line)
            if m:
                table.append(m.group(2).strip())
                continue
        if "UUID" in line:
            m = _SMI_L_RE.match(line)
            if m:
                listed.append(m.group(2).strip())
    return table or listed


# What precedes and begins the name in every _GPU_RE match (after a count, a vendor word or nothing): a line without
# it cannot match. RE2 scans the whole text once instead of a backtracking search at every position of every line.
# A superset of Python's matching: there `ı`/`İ` match `i` and `\d` any decimal digit; RE2's `\w` is ASCII only.
_GPU_HINT = re2.compile(
    r"(?i)(?:^|[^\w.-]|[x×*])(?:rtx|gtx|[ahb]\p{Nd}00|l4|l20|a10|a30|a40|a16|h20|t4|v100|p100|p40|k80|gh200|"
    r"gb\p{Nd}\p{Nd}|m[iıİ]\p{Nd}\p{Nd}|arc|rx|gfx\p{Nd}|[1-5]0[5-9]0)"
)


def _prose_gpus(lines: list[str]) -> list[str]:
    """The GPUs the first line naming one names; only the lines holding a _GPU_HINT are tried."""
    text = "\n".join(lines)
    try:
        hints = list(_GPU_HINT.finditer(text))
    except UnicodeEncodeError:   # a lone surrogate: try every line
        return next((gpus for gpus in map(_line_gpus, lines) if gpus), [])
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    tried = -1
    for hint in hints:
        k = bisect.bisect_right(starts, hint.end() - 1) - 1
        if k > tried:
            tried = k
            gpus = _line_gpus(lines[k])
            if gpus:
                return gpus
    return []


def _line_gpus(line: str) -> list[str]:
    for m in _GPU_RE.finditer(line):
        name = " ".join(m.group("name").split())
        count_s = m.group("n1") or m.group("n3") or m.group("n2")
        bare = name.split()[-1] if name else ""
        has_vendor = len(name.split()) > 1 and not name.lower().startswith(("rtx", "gtx", "arc", "rx"))
        if _AMBIGUOUS.fullmatch(bare.replace(" ", "")) and not has_vendor and not (m.group("n1") or m.group("n3")):
            tail = line[m.end():m.end() + 14].lower()
            if "gpu" not in tail and "card" not in tail and "显卡" not in tail:
                continue
        count = int(count_s) if count_s else 1
        if not 1 <= count <= 64:
            count = 1
        return [name] * count
    return []


def _platform_of_gpus(gpus: list[str]) -> str | None:
    if not gpus:
        return None
    g = gpus[0].lower()
    if any(w in g for w in ("amd", "instinct", "radeon", "gfx", "mi1", "mi2", "mi3", "rx ")):
        return "rocm"
    if any(w in g for w in ("intel", "arc ", "data center gpu max")):
        return "xpu"
    return "cuda"


# ---- platform and OS -----------------------------------------------------------------------------

_PLATFORM_RE = re.compile(r"Automatically detected platform ([a-z]{2,10})")
_PLATFORMS = ("cuda", "rocm", "xpu", "tpu", "cpu")


def _platform_from_tag(version: str | None) -> str | None:
    if not version or "+" not in version:
        return None
    local = version.split("+", 1)[1].lower()
    for prefix, name in (("rocm", "rocm"), ("cpu", "cpu"), ("xpu", "xpu"), ("tpu", "tpu"), ("cu", "cuda")):
        if local.startswith(prefix) or f".{prefix}" in local:
            return name
    return None


_OS_WORDS = (
    ("wsl", "wsl"), ("microsoft-standard", "wsl"),
    ("windows 1", "windows"), ("windows server", "windows"), ("on windows", "windows"), ("win11", "windows"),
    ("win10", "windows"), ("microsoft windows", "windows"), ("windows machine", "windows"), ("windows os", "windows"),
    ("macos", "macos"), ("mac os", "macos"), ("macbook", "macos"), ("apple silicon", "macos"), ("darwin", "macos"),
    ("mac mini", "macos"), ("mac studio", "macos"), ("on mac", "macos"),
    ("ubuntu", "linux"), ("centos", "linux"), ("debian", "linux"), ("red hat", "linux"), ("rhel", "linux"),
    ("rocky linux", "linux"), ("fedora", "linux"), ("linux", "linux"), ("almalinux", "linux"),
)
_WIN_PATH_RE = re.compile(
    r"(?<![A-Za-z])[A-Z]:\\\\?(?:Users|Program|Python|ProgramData|AI|Windows)"
    # a traceback frame or an installed package under a drive letter is native Windows Python, whatever the folder
    r"|File \"[A-Z]:\\|(?<![A-Za-z])[A-Z]:\\[^\n\"]{0,200}\\(?:site-packages|Scripts)\\", re.IGNORECASE)


def _os_from_collect_env(ce: CollectEnv) -> str | None:
    plat = (ce.get("python_platform") or "").lower()
    osv = (ce.get("os") or "").lower()
    if "microsoft" in plat or "wsl" in plat or "wsl" in osv:
        return "wsl"
    if plat.startswith("windows") or "windows" in osv:
        return "windows"
    if plat.startswith(("macos", "darwin")) or "macos" in osv or "mac os" in osv or "darwin" in osv:
        return "macos"
    if plat.startswith("linux") or osv:
        return "linux"
    return None


def _word_hit(low: str, word: str) -> bool:
    i = low.find(word)
    while i >= 0:
        before = low[i - 1] if i else " "
        after = low[i + len(word)] if i + len(word) < len(low) else " "
        if not before.isalpha() and not (after.isalpha() and word[-1].isalpha()):
            return True
        i = low.find(word, i + 1)
    return False


# every word _os_from_prose looks for (a Windows path also holds a backslash)
_OS_HINTS = (*(word for word, _ in _OS_WORDS), "/users/", "/usr/local/lib/python", "/home/", "dist-packages",
             "/opt/conda", "\\")


def _os_from_prose(lines: list[str], low: str | None = None) -> str | None:
    """`low`: the lines joined, lower-case (when none of the words is in it, nothing is read line by line)."""
    if low is not None and not any(hint in low for hint in _OS_HINTS):
        return None
    # a word absent from the whole text is in no line of it
    words = _OS_WORDS[2:] if low is None else tuple((w, name) for w, name in _OS_WORDS[2:] if w in low)
    drive = low is None or ":\\" in low   # every _WIN_PATH_RE match holds `:\`
    first: str | None = None
    path_hint: str | None = None
    for line in lines:
        low = line.lower()
        if "wsl" in low and (_word_hit(low, "wsl") or "wsl2" in low):
            return "wsl"
        if "microsoft-standard" in low:
            return "wsl"
        if first is None:
            for word, name in words:
                if word in low and _word_hit(low, word):
                    first = name
                    break
        if path_hint is None:
            if drive and _WIN_PATH_RE.search(line):
                path_hint = "windows"
            elif "/users/" in low and ("/opt/homebrew" in low or "/library/" in low or ".venv" in low
                                       or "site-packages" in low):
                path_hint = "macos"
            elif "/usr/local/lib/python" in low or "/home/" in low or "dist-packages" in low or "/opt/conda" in low:
                path_hint = "linux"
    return first or path_hint


# ---- assembling ----------------------------------------------------------------------------------

def read(title: str, lines: list[str], ce: CollectEnv, vllm_version: str | None,
         skip: list[bool] | None = None) -> Hardware:
    """skip marks the lines of a pasted collect_env dump: their labels are not prose."""
    hw = Hardware()
    kept = lines if skip is None else itertools.compress(lines, map(operator.not_, skip))
    prose = [title, *itertools.islice(kept, MAX_PROSE_LINES)]
    low = "\n".join(prose).lower()
    lines_low = low if "\n" not in title else None   # the prose lines joined, one a line (what _first reads)

    torch = ce.get("torch") or ce.pip.get("torch")
    if not torch:
        torch = _first(_TORCH_RE, prose, need="torch", low=lines_low)
    hw.torch = (torch.split()[0] if torch else None) or None
    if hw.torch and not valid_version(hw.torch):
        hw.torch = None

    cuda = _num(ce.get("cuda_build")) or _num(ce.get("cuda_runtime"))
    if not cuda and hw.torch:
        m = _LOCAL_CU_RE.search(hw.torch)
        cuda = _cu_tag(m.group(1)) if m else None
    smi_driver = smi_cuda = None
    for line in prose if "driver version" in low else ():
        if "Driver Version" in line:
            m = _SMI_RE.search(line)
            if m:
                smi_driver, smi_cuda = m.group(1), m.group(2)
                break
    if not cuda:
        cuda = smi_cuda or _first(_CUDA_RE, prose, need="cuda", low=lines_low)
    hw.cuda = cuda

    rocm = _num(ce.get("rocm_build")) and ce.get("rocm_build")
    rocm = rocm or ce.get("rocm")
    if rocm:
        rocm = rocm.split()[0]
    if not rocm:
        for v in (hw.torch, vllm_version):
            m = _LOCAL_ROCM_RE.search(v or "")
            if m:
                rocm = m.group(1)
                break
    if not rocm:
        rocm = _first(_ROCM_RE, prose, need="rocm", low=lines_low)
    hw.rocm = rocm

    hw.driver = _num(ce.get("driver")) or smi_driver or _first(_DRIVER_RE, prose, need="driver", low=lines_low)

    gpus = [g for g in ce.gpus if g]
    if not gpus and ce.get("intel_gpus"):
        gpus = [ce.get("intel_gpus") or ""]
    text = "\n".join(lines)   # a word absent from it is in no line
    hw.gpus = gpus or (_gpus_from_smi(lines) if "|" in text or "UUID" in text else []) or _prose_gpus(prose)

    hw.platform = _platform(ce, hw, lines, prose, vllm_version, low, text)
    hw.os = _os_from_collect_env(ce) or _os_from_prose(prose, low)

    py = ce.get("python")
    hw.python = _num(py) if py else (_first(_PYTHON_RE, prose, need="python", low=lines_low)
                                     or _first(_PY_PATH_RE, prose, need="python", low=lines_low))
    tf = ce.pip.get("transformers") or _first(_TRANSFORMERS_RE, prose, need="transformers", low=lines_low)
    hw.transformers = valid_version(tf) if tf else None
    return hw


_TITLE_TAG_RE = re.compile(r"\[(xpu|intel[ -]?gpu|rocm|amd|tpu|cpu)\]", re.IGNORECASE)
_TARGET_DEVICE_RE = re.compile(r"VLLM_TARGET_DEVICE=[\"']?(xpu|rocm|tpu|cpu)\b", re.IGNORECASE)
_TAG_PLATFORM = {"xpu": "xpu", "intel gpu": "xpu", "intel-gpu": "xpu", "intelgpu": "xpu", "rocm": "rocm",
                 "amd": "rocm", "tpu": "tpu", "cpu": "cpu"}


def _named_platform(title: str, lines: list[str]) -> str | None:
    """The platform the reporter names outright: a '[XPU]' tag in the title, or VLLM_TARGET_DEVICE in a command.
    It outranks a GPU name in the prose, which may be another machine ("works on an MI300X, fails on the Arc")."""
    m = _TITLE_TAG_RE.search(title)
    if m:
        return _TAG_PLATFORM.get(m.group(1).lower())
    if "VLLM_TARGET_DEVICE" not in "\n".join(lines).upper():   # in no line then
        return None
    for line in lines:
        if "VLLM_TARGET_DEVICE" in line.upper():
            m = _TARGET_DEVICE_RE.search(line)
            if m:
                return m.group(1).lower()
    return None


_PLATFORM_WORDS = ("rocm", "tpu", "xpu", "cpu backend", "vllm_target_device=cpu", "cpu-only", "cpu only")


def _platform(ce: CollectEnv, hw: Hardware, lines: list[str], prose: list[str], vllm_version: str | None,
              prose_low: str, text: str) -> str | None:
    """`text`: the lines joined."""
    for line in lines if "detected platform" in text else ():
        if "detected platform" in line:
            m = _PLATFORM_RE.search(line)
            if m and m.group(1) in _PLATFORMS:
                return m.group(1)
    if ce.get("rocm_build"):
        return "rocm"
    xpu_build = ce.get("xpu_build")
    if xpu_build or (ce.get("xpu_available") or "").lower() in ("true", "yes"):
        return "xpu"
    tagged = _platform_from_tag(hw.torch) or _platform_from_tag(vllm_version)
    if tagged:
        return tagged
    if ce.get("cuda_build") or (ce.get("cuda_available") or "").lower() in ("true", "yes"):
        return "cuda"
    if "cuda_build" in ce.fields and ce.strong >= 3:
        return "cpu"   # a torch without CUDA, ROCm or XPU
    named = _named_platform(prose[0] if prose else "", lines)
    if named:
        return named
    if hw.rocm:
        return "rocm"
    by_gpu = _platform_of_gpus(hw.gpus)
    if by_gpu:
        return by_gpu
    # `prose_low`: the prose joined, lower-case; a word absent from it is in no line
    for line in prose if any(w in prose_low for w in _PLATFORM_WORDS) else ():
        low = line.lower()
        if "rocm" in low and _word_hit(low, "rocm"):
            return "rocm"
        if "tpu" in low and _word_hit(low, "tpu"):
            return "tpu"
        if "xpu" in low and _word_hit(low, "xpu"):
            return "xpu"
        if "cpu backend" in low or "vllm_target_device=cpu" in low or "cpu-only" in low or "cpu only" in low:
            return "cpu"
    if hw.cuda or hw.driver:
        return "cuda"
    return None
