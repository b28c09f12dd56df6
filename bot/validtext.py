"""Text from outside made valid Unicode that every later step can encode and store.

JSON may carry a lone UTF-16 surrogate (`"\\ud83d"` without its partner) or a NUL (`"\\u0000"`): Python
decodes both into a `str` that UTF-8 cannot encode (hashing, HTML, logs) or PostgreSQL cannot store.
`valid_text` replaces each with U+FFFD. It runs where text enters: webhook payloads and GitHub's API
answers (bot/app/payload.py, bot/app/github.py) and issue exports (bot/export.py).
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_INVALID = re.compile("[\x00\ud800-\udfff]")
# how either can appear in JSON text (raw UTF-8 cannot encode a surrogate; JSON forbids a raw NUL in a string)
_ESCAPE = re.compile(r"\\u(?:[dD][89abcdefABCDEF]|0000)")


def valid_str(text: str) -> str:
    return _INVALID.sub(REPLACEMENT, text) if _INVALID.search(text) else text


def may_hold_invalid(json_text: str | bytes) -> bool:
    """False when decoding this JSON text cannot produce invalid text (a quick scan before a walk)."""
    if isinstance(json_text, bytes):
        return re.search(rb"\\u(?:[dD][89abcdefABCDEF]|0000)", json_text) is not None
    return _ESCAPE.search(json_text) is not None


def valid_text(value: Any) -> Any:
    """`value` (decoded JSON) with every string, keys included, made valid; containers are changed in place.
    Iterative: nesting as deep as the decoder allows cannot exhaust the stack here."""
    if isinstance(value, str):
        return valid_str(value)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in list(item):
                child = item[key]
                if isinstance(child, str):
                    child = item[key] = valid_str(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
                if isinstance(key, str) and _INVALID.search(key):
                    item[valid_str(key)] = item.pop(key)
        elif isinstance(item, list):
            for i, child in enumerate(item):
                if isinstance(child, str):
                    item[i] = valid_str(child)
                elif isinstance(child, dict | list):
                    stack.append(child)
    return value
