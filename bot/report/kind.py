"""Report kind from the title prefix, the template's sections, or a guess."""

from __future__ import annotations

import re

from bot.report.model import Section

# `[Bug]:`, `[BUG]`, `[Feature Request] `, `[Bug/Design]`, `[Bug]：` (full-width colon), `Bug: …`
_BRACKET_RE = re.compile(r"^\s*[\[【]\s*([^\]】\n]{1,40}?)\s*[\]】]\s*[:：-]?\s*")
_BARE_RE = re.compile(r"^\s*(bug|feature request|feature|question|usage|installation|rfc|doc|docs)\s*[:：]\s*",
                      re.IGNORECASE)

_TAGS: dict[str, str] = {
    "bug": "bug", "bugs": "bug", "bug report": "bug", "bugfix": "bug", "regression": "bug",
    "usage": "usage", "question": "usage", "help": "usage", "help wanted": "usage",
    "installation": "installation", "install": "installation", "build": "installation",
    "feature": "feature", "feature request": "feature", "features": "feature", "enhancement": "feature",
    "feat": "feature", "new model": "new-model", "new-model": "new-model", "model": "new-model",
    "model request": "new-model", "performance": "performance", "perf": "performance",
    "rfc": "rfc", "doc": "docs", "docs": "docs", "documentation": "docs",
    "ci failure": "ci-failure", "ci-failure": "ci-failure", "ci": "ci-failure", "misc": "misc",
    "roadmap": "other", "tracking issue": "other", "tracker": "other", "release": "other",
}

# substrings of template headings (emoji dropped, lower-case) -> kind
_HEADING_KINDS = (
    ("describe the bug", "bug"),
    ("how you are installing vllm", "installation"),
    ("how would you like to use vllm", "usage"),
    ("the doc issue", "docs"),
    ("suggest a potential alternative/fix", "docs"),
    ("failing test", "ci-failure"),
    ("the feature, motivation and pitch", "feature"),
    ("the model to consider", "new-model"),
    ("the closest model vllm already supports", "new-model"),
    ("proposal to improve performance", "performance"),
    ("report of performance regression", "performance"),
    ("misc discussion on performance", "performance"),
    ("proposed change.", "rfc"),
    ("motivation.", "rfc"),
    ("anything you want to discuss about vllm", "misc"),
)

_INSTALL_WORDS = ("pip install", "install", "build from source", "building wheel", "build wheel", "wheel",
                  "setup.py", "compil", "cmake", "nvcc", "from source", "libcudart", "libcupti", "libtorch",
                  "undefined symbol", "uv pip", "conda install", "no matching distribution")
_FEATURE_STARTS = ("add ", "support ", "support for", "allow ", "enable ", "implement", "automatically ",
                   "make ", "expose ", "provide ", "introduce ", "feature request", "request:", "proposal")
_FEATURE_WORDS = ("support for", "please support", "add support", "feature request", "would be nice",
                  "would be great", "it would be helpful", "can you add", "could you add", "why not support",
                  "plan to support", "any plan", "request to support")
_QUESTION_STARTS = ("how ", "how's", "what ", "why ", "which ", "when ", "where ", "is it ", "is there ", "are there ",
                    "can i ", "can we ", "can vllm", "could ", "does ", "do ", "should ", "is vllm", "question")
_PERF_WORDS = ("slow", "throughput", "latency", "performance", "faster", "speed", "tokens/s", "ttft", "tpot")
_ERROR_WORDS = ("error", "fail", "crash", "hang", "exception", "not work", "doesn't work", "does not work",
                "can not", "cannot", "can't", "unable", "broken", "bug", "wrong", "incorrect", "segfault",
                "oom", "out of memory", "stuck", "killed")


def _strip_prefix(title: str) -> tuple[str | None, str]:
    m = _BRACKET_RE.match(title)
    if m:
        tag = " ".join(m.group(1).replace("_", " ").split()).lower()
        kind = _TAGS.get(tag)
        if kind is None:
            first = re.split(r"[/|,&+ ]", tag, maxsplit=1)[0]
            kind = _TAGS.get(first)
        if kind is not None:
            return kind, title[m.end():].strip()
        return None, title
    m = _BARE_RE.match(title)
    if m:
        return _TAGS.get(m.group(1).lower()), title[m.end():].strip()
    return None, title


def _heading_kind(sections: tuple[Section, ...]) -> str | None:
    for s in sections:
        h = "".join(c for c in s.heading if c.isascii()).strip().lower()
        for needle, kind in _HEADING_KINDS:
            if needle in h:
                return kind
    return None


def _has_traceback(body: str) -> bool:
    return "Traceback (most recent call last)" in body or "Error: " in body or "Exception: " in body


def _is_question(text: str) -> bool:
    t = text.strip().lower()
    return t.startswith(_QUESTION_STARTS) or t.endswith("?")


def _guess(title: str, body: str) -> str:
    t = " ".join(title.lower().split())
    head = body[:20000].lower()
    if any(w in t for w in _INSTALL_WORDS):
        return "installation"
    if t.startswith(_FEATURE_STARTS) or any(w in t for w in _FEATURE_WORDS):
        return "feature"
    if "support" in t and ("in the future" in t or "will you" in t or "will vllm" in t):
        return "feature"   # "PP support in the future?" asks for a feature, not how to use one
    if _is_question(t):
        return "usage"
    if any(w in t for w in _ERROR_WORDS):
        return "bug"
    if any(w in t for w in _PERF_WORDS) and not _has_traceback(body):
        return "performance"
    if _has_traceback(body):
        install_ctx = ("pip install" in head or "setup.py" in head or "building wheel" in head
                       or "failed to build" in head)
        return "installation" if install_ctx else "bug"
    if any(w in head for w in _FEATURE_WORDS):
        return "feature"
    if "?" in head[:2000] or any(head.lstrip().startswith(q) for q in _QUESTION_STARTS):
        return "usage"
    if any(w in head for w in _ERROR_WORDS):
        return "bug"
    return "other"


def detect_kind(title: str, body: str, sections: tuple[Section, ...]) -> tuple[str, str, str]:
    """Return (kind, source, title_without_prefix); source is title | template | guess."""
    title = title or ""
    body = body or ""
    kind, rest = _strip_prefix(title)
    if kind is not None:
        # The template prefix is sometimes wrong: a docs / misc report that carries a failure is a bug
        # (or a question about one).
        if kind == "docs" and _has_traceback(body[:200000]):
            return "bug", "title", rest
        if kind == "misc":
            # the retired Misc template mostly carried questions; read what it holds
            if _has_traceback(body[:200000]):
                return "bug", "title", rest
            if _is_question(rest) or "?" in body[:2000]:
                return "usage", "title", rest
            guessed = _guess(rest, body[:200000])
            return (guessed if guessed not in ("other", "bug") else "misc"), "title", rest
        return kind, "title", rest
    kind = _heading_kind(sections)
    if kind is not None:
        return kind, "template", rest
    return _guess(rest, body[:200000]), "guess", rest
