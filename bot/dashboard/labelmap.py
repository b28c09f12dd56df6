"""vLLM's GitHub label names -> the bot's topics, for measuring the bot's labels against the maintainers'.

A label whose lower-cased name is a topic maps to itself; the table adds vLLM's other spellings. Labels that are
not topics (bug, usage, stale, model families, ...) are ignored.
"""

from __future__ import annotations

from bot.labels import ALL_LABELS

ALIASES = {
    "new model": "new-model",
    "model request": "new-model",
    "speculative decoding": "speculative-decoding",
    "spec-decode": "speculative-decoding",
    "structured output": "structured-output",
    "guided decoding": "structured-output",
    "tool calling": "tool-calling",
    "multimodal": "multi-modality",
    "multi-modal": "multi-modality",
    "intel gpu": "intel-gpu",
    "xpu": "intel-gpu",
    "torch compile": "torch.compile",
    "torch-compile": "torch.compile",
    "amd": "rocm",
}


def topic_of(label: str) -> str | None:
    name = label.strip().lower()
    if name in ALL_LABELS:
        return name
    return ALIASES.get(name)
