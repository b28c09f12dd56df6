"""A deterministic stand-in for the core's decision, so the App's tests do not move when rules change.

Labels come from plain words of the title and body; the comment names the body's hash, so every edit of the
body changes the comment and a stale comment is easy to spot. The Report is the real parser's.
"""

from __future__ import annotations

import hashlib

from bot.comment import MARKER
from bot.decision import Decision
from bot.report import parse
from bot.triage import Triage

WORDS = {"rocm": "rocm", "cuda": "cuda", "oom": "memory", "tool": "tool-calling", "usage": "usage"}


def expected_labels(title: str, body: str) -> list[str]:
    text = f"{title}\n{body}".lower()
    labels = ["bug"] if title.lower().startswith("[bug]") else []
    labels += [label for word, label in WORDS.items() if word in text]
    if "collect_env" not in text:
        labels.append("needs-info")
    return labels


def expected_comment(number: int, body: str) -> str:
    digest = hashlib.sha256(body.encode()).hexdigest()[:12]
    return f"{MARKER}\nTriage of #{number}: body {digest}."


def fake_triage(number, title, body, rules, similar=None, **context) -> Triage:
    title, body = title or "", body or ""
    report = parse(title, body)
    duplicates = similar.search(report, (), exclude=number) if similar is not None else ()
    decision = Decision(labels=tuple(expected_labels(title, body)), duplicates=duplicates,
                        comment=expected_comment(number, body))
    return Triage(number, report, decision)
