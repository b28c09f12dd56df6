"""The parts of a report that carry meaning, as tokens: cleaned title, description prose, error lines.

Pure. Everything is processed line by line with bounded line length; patterns have no nested quantifiers.
"""

from __future__ import annotations

import re
from functools import lru_cache

MAX_LINE = 500            # characters of one line that are tokenised
MAX_BODY_TOKENS = 600     # tokens kept from the description (the problem statement comes first)
MAX_ERROR_TOKENS = 200

# `[Bug]: `, `[Usage] `, `[Feature][CPU Backend]:`, `Bug:` at the start of a title
_BRACKET_PREFIX = re.compile(r"^\s*\[[^\]\n]{0,40}\]\s*:?\s*")
_WORD_PREFIX = re.compile(
    r"^\s*(?:bug|usage|installation|feature|doc|docs|misc|performance|rfc|new model|question|help)\s*[:：-]\s*",
    re.IGNORECASE,
)
# titles that carry nothing: the form's default, placeholders, the checklist sentence pasted as a title
_EMPTY_TITLES = {"", "title", "bug", "issue", "error", "help", "question", "untitled", "no title"}
_CHECKLIST = "make sure you already searched for relevant issues"

# lines that are environment dumps, template text or banners, not the reporter's words
_NOISE_LINE = re.compile(
    r"^\s*(?:"
    r"\[(?:pip3?|conda)\]"                                  # pip / conda package lists
    r"|={5,}|-{5,}|```|~~~"                                 # banners, fences
    r"|<\/?(?:details|summary|code|br)\b"                   # HTML wrappers
    r"|- \[[ xX]\]"                                         # checklist boxes
    r"|#{1,6} "                                             # headings (the form's labels)
    r"|_No response_"
    r"|(?:Your output of|The output of|Collecting environment information)"
    r"|(?:OS|GCC version|Clang version|CMake version|Libc version|PyTorch version|Is debug build"
    r"|CUDA used to build|ROCM used to build|XPU used to build|Python version|Python platform"
    r"|Is CUDA available|CUDA runtime version|CUDA_MODULE_LOADING|GPU models and configuration"
    r"|Nvidia driver version|cuDNN version|HIP runtime version|MIOpen runtime version"
    r"|Is XNNPACK available|ROCM Version|Neuron SDK Version|vLLM Version|vLLM Build Flags|CUDA Archs"
    r"|GPU Topology|Legend|Architecture|CPU op-mode|Byte Order|Address sizes|CPU\(s\)|On-line CPU"
    r"|Vendor ID|Model name|CPU family|Thread\(s\) per core|Core\(s\) per|Socket\(s\)|Stepping|BogoMIPS"
    r"|Flags|Virtualization|L1d cache|L1i cache|L2 cache|L3 cache|NUMA node|Vulnerability|Hypervisor"
    r"|CPU max MHz|CPU min MHz|Frequency boost|Caching allocator config)\b\s*[\w()/ -]{0,40}:"
    r"|GPU\d+\s|NIC\d+\s|[A-Z]{1,4}\s+= Connection"         # nvidia-smi topo
    r"|(?:System Info|PyTorch Info|Python Environment|CUDA / GPU Info|Intel XPU / GPU Info|CPU Info"
    r"|Versions of relevant libraries|vLLM Info|Environment Variables)\s*$"
    r"|Traceback \(most recent call last\)"
    r"|\^+\s*$|~+\s*$"
    r")"
)
# what a log viewer prepends: timestamps, `(Worker_TP0 pid=12)` tags, `[rank0]:`, logger headers
_LOG_PREFIX = re.compile(
    r"^\s*(?:\d{4}-\d\d-\d\d[ T][\d:.,]{5,15}Z?\s+)?"
    r"(?:\([\w .=,-]{1,80}\)\s*|\[rank\d{1,5}\]:\s*)*"
    r"(?:(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+"
    r"\[?[\w./-]{1,80}:\d{1,6}\]\s?)?"
)
_FRAME = re.compile(r'^\s*File "[^"\n]{1,400}", line \d+')
_EXCEPTION_LINE = re.compile(r"^\s*[A-Za-z_][\w.]{0,80}(?:Error|Exception|Exit|Interrupt)\b")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]{1,40}|\d{2,5}")
_URL = re.compile(r"(?:https?://|www\.)\S+")
# an HTML tag with attributes, as GitHub's editor writes a pasted screenshot (`<img width="1215" height="454"
# alt="Image" src=…>`): its attribute names are markup, not the reporter's words (`<think>`, `</s>` are kept)
_HTML_TAG = re.compile(r"<[A-Za-z][\w-]{0,20}\s[^<>\n]{0,500}>")
_HEXLIKE = re.compile(r"^[0-9a-f]*\d[0-9a-f]*$")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can cannot could did do does doing don down during each else even ever few for from further get got
had has have having he her here hers him his how however i if in into is isn it its itself just like me might
more most much must my need no nor not now of off on once only or other our out over own same see seem she
should so some such than that the their them then there these they this those through to too under until up
upon us use used using very via was way we were what when where which while who whom why will with would yet
you your yours hi hello thanks thank please anyone someone something any however also still already
trying tried try want wanted able following follows follow run running ran seems seemed get getting
""")

# Words of the issue forms and of every environment dump: never evidence of a shared root cause.
BOILERPLATE = _words("""
bug describe current environment output collect env py python vllm issue report reproduce
expected behavior behaviour actual steps version versions info information submitting new
searched relevant asked chatbot living bottom right corner documentation page frequently questions lots
response details summary code text shell bash console log logs error errors
""")

_DROP = STOPWORDS | BOILERPLATE
# Boilerplate of a description (a dump's "Python version", a fence's `bash`, `text`, `console`) that, in a title,
# names what the report is about: "Support Python 3.12", "code llama", "text embeddings", "disable the logs"
TITLE_NAMES = _words("python code text shell bash console log logs")
_TITLE_DROP = _DROP - TITLE_NAMES


# "2.5" in "Qwen2.5-VL" or "Python 3.12" is one version, not two tokens ("qwen2" and a dropped "5")
_VERSION_DOT = re.compile(r"(?<=[A-Za-z0-9])\.(?=\d)")
# a name and its version written apart ("Gemma-2", "Qwen 2.5", "Python 3.12") are written as one ("Gemma2",
# "Qwen2.5", "Python3.12"; "Gemma 3n" as "Gemma3n", a letter that is no size unit): a one-digit version is no token
# of its own and would be lost; not vLLM's own release
_NOT_NAME = r"(?!(?i:vllm|version|v|release)[-\s])"
_NAME_SPACE_VERSION = re.compile(
    r"(?<![\w.-])" + _NOT_NAME + r"(?:([A-Za-z]{2,21})(?:-|\s(?=\d{1,2}\.\d))|([A-Z][a-z]{1,20})\s)"
    r"(\d{1,2}(?:\.\d{1,2})?(?:[ac-jln-z](?![\w.]))?)(?![\w.])(?!-\d)"
    r"|(?<![\w.-])" + _NOT_NAME + r"([A-Za-z]{2,21})-(\d{1,2}(?:\.\d{1,2})?)(?=-)")


def _joined(m: re.Match[str]) -> str:
    return (m.group(1) or m.group(2) or m.group(4)) + (m.group(3) or m.group(5))


def joined_versions(title: str) -> str:
    """A title with each version written as one token with its name: "Qwen2.5-VL" -> "Qwen25-VL", "Python 3.12" ->
    "Python312", "gemma-2-9b" -> "gemma2-9b"."""
    if any(c.isdigit() for c in title):
        title = _NAME_SPACE_VERSION.sub(_joined, title)
    return _VERSION_DOT.sub("", title) if "." in title else title


def clean_title(title: str) -> str:
    """The title without template prefixes; "" for placeholder titles and the pasted checklist sentence."""
    text = title.strip()[:MAX_LINE]
    for _ in range(4):
        stripped = _BRACKET_PREFIX.sub("", text, count=1)
        stripped = _WORD_PREFIX.sub("", stripped, count=1)
        if stripped == text:
            break
        text = stripped
    low = text.lower().strip(" .:!?-_")
    if low in _EMPTY_TITLES or low.startswith(_CHECKLIST):
        return ""
    return text.strip()


def stem(token: str) -> str:
    """A deliberately light stemmer: plural and -ing/-ed endings, nothing that merges unrelated words."""
    if len(token) > 5 and token.endswith("ing"):
        return token[:-3]
    if len(token) > 5 and token.endswith("ed") and not token.endswith("eed"):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


@lru_cache(maxsize=200_000)
def _term(raw: str, title: bool = False) -> str:
    """The index term for one word token ("" = dropped); cached, the vocabulary repeats a lot."""
    low = raw.lower()
    if low in (_TITLE_DROP if title else _DROP) or (len(low) >= 8 and _HEXLIKE.match(low)):
        return ""
    return stem(low)


def tokens(text: str, *, numbers: bool = False, limit: int | None = None, title: bool = False) -> list[str]:
    """Lowercased, stemmed word tokens; stop words, boilerplate (but a title's TITLE_NAMES), URLs and hex-ish
    noise dropped."""
    out: list[str] = []
    for line in text.split("\n"):
        if "<" in line:
            line = _HTML_TAG.sub(" ", line[:MAX_LINE])
        if "://" in line or "www." in line:
            line = _URL.sub(" ", line[:MAX_LINE])
        for raw in _TOKEN.findall(line[:MAX_LINE]):
            if raw[0].isdigit():
                if numbers:
                    out.append(raw)
                continue
            term = _term(raw, title)
            if term:
                out.append(term)
        if limit is not None and len(out) >= limit:
            return out[:limit]
    return out


def words_and_terms(line: str) -> list[tuple[str, str]]:
    """(word as written, index term) of one title line, numbers included: `tokens` keeping what each term reads."""
    line = _URL.sub(" ", line[:MAX_LINE]) if "://" in line or "www." in line else line[:MAX_LINE]
    out: list[tuple[str, str]] = []
    for raw in _TOKEN.findall(line):
        term = raw if raw[0].isdigit() else _term(raw, True)
        if term:
            out.append((raw, term))
    return out


def is_error_text(line: str) -> bool:
    """An error line worth indexing: not a frame, a source line, a caret marker or a banner."""
    line = line[:MAX_LINE]
    stripped = line[_LOG_PREFIX.match(line).end():]  # type: ignore[union-attr]
    return bool(stripped.strip()) and not _FRAME.match(stripped) and not _NOISE_LINE.match(stripped) \
        and not stripped.startswith((" ", "\t"))


def meaningful_lines(text: str) -> str:
    """Description lines minus environment dumps, template text, log noise and traceback bodies.

    Log lines (with a process tag or logger header) and traceback frames are dropped: the error itself
    reaches the index through the report's exceptions; only exception lines are kept from logs."""
    kept: list[str] = []
    after_frame = False
    for raw in text.split("\n"):
        raw = raw[:MAX_LINE]
        prefix = _LOG_PREFIX.match(raw)
        assert prefix is not None  # every part of the pattern is optional
        logged = prefix.end() > len(raw) - len(raw.lstrip())
        line = raw[prefix.end():] if logged else raw
        if _FRAME.match(line):
            after_frame = True
            continue
        if after_frame:
            after_frame = False
            if line.startswith(" ") and not _EXCEPTION_LINE.match(line):
                continue                      # the source line printed under a frame
        if not line.strip() or _NOISE_LINE.match(line):
            continue
        if logged and not _EXCEPTION_LINE.match(line):
            continue
        kept.append(line)
    return "\n".join(kept)
