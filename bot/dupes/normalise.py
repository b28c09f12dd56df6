"""Error-message normalisation for signatures (Socorro / Sentry style): variable parts -> typed placeholders.

Pure and linear-time: every pattern is a single character class run or an anchored alternation, no nested
quantifiers, and input lines are cut to MAX_LINE before any regex runs.
"""

from __future__ import annotations

import re

MAX_LINE = 400          # characters of one message line that are looked at
MAX_SIGNATURE = 160     # characters of a normalised message kept in a signature

# Order matters: the more specific shapes go first so a path is not eaten as a number.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"https?://\S+"), "<url>"),
    # quoted values: '...', "...", `...` (bounded, no nesting)
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`"), "<q>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "<hex>"),
    (re.compile(r"\b[0-9a-f]{12,64}\b"), "<hex>"),
    # Windows and POSIX paths with at least two components after a slash; relative ones (`vllm/vllm/_C.abi3.so`)
    # need three in all, since `org/name` is a model id (below)
    (re.compile(r"[A-Za-z]:\\[^\s,;:'\"()]+"), "<path>"),
    (re.compile(r"(?:~|\.{1,2}|\b[\w.+@-]+)?/[\w.+@-]+(?:/[\w.+@-]+)+/?"), "<path>"),
    # HF model ids org/name (after paths, which need two slashes or a leading one)
    (re.compile(r"\b[\w.-]+/[\w.-]+\b"), "<model>"),
    # architectures and model classes: FooForCausalLM, BarForConditionalGeneration, ...MTP
    (re.compile(r"\b\w*For(?:CausalLM|ConditionalGeneration|SequenceClassification|Embedding)\w*\b"), "<arch>"),
    (re.compile(r"\b(?:rank|pid|device|gpu|cuda:|GPU|Device|Rank)\s?\d+\b"), "<rank>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes|B)\b"), "<size>"),
    # version-ish and plain numbers, including 1e-5, 3.14, 12_000, -1
    (re.compile(r"(?<![\w<])-?\d[\d_.]*(?:e-?\d+)?"), "<num>"),
    # identifiers mixing letters and digits: model families and arch names (qwen2, gemma3, gfx942, sm_120)
    (re.compile(r"\b[A-Za-z_]+\d[\w]*\b"), "<id>"),
)
_SPACE = re.compile(r"\s+")


def normalise_message(message: str) -> str:
    """The first line of an exception message with the variable parts replaced by typed placeholders."""
    line = message.strip().split("\n", 1)[0][:MAX_LINE]
    for pattern, placeholder in _PATTERNS:
        line = pattern.sub(placeholder, line)
    line = _SPACE.sub(" ", line).strip(" .:")
    return line[:MAX_SIGNATURE]


def short_type(exc_type: str) -> str:
    """`torch.OutOfMemoryError` -> `OutOfMemoryError`."""
    return exc_type.strip().rsplit(".", 1)[-1]
