"""Issue-form sections (`### ` headings), template placeholders, and the description text."""

from __future__ import annotations

import re
from functools import lru_cache

from bot.report.collect_env import dump_spans
from bot.report.model import Section

# Headings of the vLLM issue forms, current and past (lower-case, emoji dropped). A `### ` line inside a code
# fence only counts as a heading when it is one of these (users leave fences open).
TEMPLATE_HEADINGS = frozenset({
    "your current environment", "your current environment (if you think it is necessary)",
    "describe the bug", "how you are installing vllm", "how would you like to use vllm",
    "before submitting a new issue...", "the doc issue", "suggest a potential alternative/fix",
    "name of failing test", "basic information", "describe the failing test", "history of failing test",
    "cc list.", "the feature, motivation and pitch", "alternatives", "additional context",
    "the model to consider.", "the closest model vllm already supports.",
    "what's your difficulty of supporting the model you want?", "proposal to improve performance",
    "report of performance regression", "misc discussion on performance", "motivation.", "proposed change.",
    "feedback period.", "any other things.", "anything you want to discuss about vllm.", "model input dumps",
    "placeholder",
})

_PLACEHOLDERS = (
    "your output of python collect_env.py here",
    "the output of python collect_env.py",
    "pip install -vvv vllm",
    "i want to run inference of a [specific model](put link here). i don't know how to integrate it with vllm.",
    "_no response_",
)
_WRAPPER_RE = re.compile(
    r"^\s*(?:<details>|</details>|<summary>.{0,120}</summary>|<details><summary>.{0,120}</summary>|"
    r"`{3,}[\w+-]{0,20}|~{3,}[\w+-]{0,20}|<br\s*/?>)\s*$", re.IGNORECASE)
_MAX_LINE = 2000


def _norm_heading(text: str) -> str:
    kept = text if text.isascii() else "".join(c for c in text if c.isascii())
    return " ".join(kept.split()).lower()


def is_template_heading(heading: str) -> bool:
    return _norm_heading(heading) in TEMPLATE_HEADINGS


def _norm_text(line: str) -> str:
    return " ".join(line.replace("`", "").replace("<code>", "").replace("</code>", "").split()).lower()


def is_placeholder(text: str) -> bool:
    """True when the text is only a template placeholder / `_No response_` / `<details>` wrapper."""
    if len(text) > 4000:
        return False
    for line in text.splitlines():
        if not line.strip() or _WRAPPER_RE.match(line[:_MAX_LINE]):
            continue
        n = _norm_text(line)
        if n in _PLACEHOLDERS:
            continue
        return False
    return True


def section_spans(lines: list[str] | tuple[str, ...]) -> list[tuple[str, int, int]]:
    """(heading, first text line, end) for every `### ` heading; fences hide headings unknown to the templates."""
    spans: list[tuple[str, int, int]] = []
    fence: str | None = None
    current: tuple[str, int] | None = None
    for i, line in enumerate(lines):
        if "```" in line or "~~~" in line:
            s = line[:_MAX_LINE].strip()
            if s.startswith("```") or s.startswith("~~~"):
                mark = s[:3]
                if fence is None:
                    fence = mark
                elif mark == fence and s.strip("`~ ") == "":
                    fence = None
                continue
        if not line.startswith("### "):
            continue
        heading = line[4:_MAX_LINE].strip()
        if fence is not None and not is_template_heading(heading):
            continue
        if fence is not None:
            fence = None   # a template heading closes any fence the user left open
        if current is not None:
            spans.append((current[0], current[1], i))
        current = (heading, i + 1)
    if current is not None:
        spans.append((current[0], current[1], len(lines)))
    return spans or _bare_heading_spans(lines)


def _bare_heading_spans(lines: list[str] | tuple[str, ...]) -> list[tuple[str, int, int]]:
    """Issue text copied from the rendered page has lost its `### `: take whole lines that are template headings,
    when at least two of them are present."""
    found = [(line.strip(), i) for i, line in enumerate(lines)
             if len(line) < 80 and line.strip() and is_template_heading(line.strip())]
    if len(found) < 2:
        return []
    return [(h, i + 1, found[k + 1][1] if k + 1 < len(found) else len(lines)) for k, (h, i) in enumerate(found)]


@lru_cache(maxsize=4)
def layout(body: str) -> tuple[tuple[str, ...], tuple[tuple[str, int, int], ...], tuple[tuple[int, int], ...]]:
    """(lines, section spans, collect_env dump spans) of a body; cached because several parts need them."""
    lines = body.splitlines()
    return tuple(lines), tuple(section_spans(lines)), tuple(dump_spans(lines))


def split_sections(body: str) -> tuple[Section, ...]:
    """Split on `### ` headings; mark `_No response_`, placeholders and empty wrappers as empty."""
    lines, spans, _ = layout(body)
    out = []
    for heading, start, end in spans:
        text = "\n".join(lines[start:end]).strip("\n")
        out.append(Section(heading=heading, text=text, empty=is_placeholder(text)))
    return tuple(out)


def is_env_heading(heading: str) -> bool:
    return "environment" in heading.lower()


def is_checklist_heading(heading: str) -> bool:
    return heading.lower().startswith("before submitting")


_CHECKLIST_RE = re.compile(r"^\s*[-*]\s*\[[ xX]\]\s*Make sure you already searched", re.IGNORECASE)


def description_text(body: str, sections: tuple[Section, ...]) -> str:
    """The body without the environment dump and the 'Before submitting' checklist."""
    lines, spans, dumps = layout(body)
    keep = [True] * len(lines)
    for heading, start, end in spans:
        if is_env_heading(heading) or is_checklist_heading(heading):
            for i in range(start - 1, end):
                keep[i] = False
        elif is_placeholder("\n".join(lines[start:end])):
            for i in range(start - 1, end):   # an unanswered field carries no meaning
                keep[i] = False
        elif is_template_heading(heading):
            keep[start - 1] = False
    for start, end in dumps:
        for i in range(start, end):
            keep[i] = False
    out = [line for i, line in enumerate(lines)
           if keep[i] and not ("[" in line and _CHECKLIST_RE.match(line[:_MAX_LINE]))]
    return "\n".join(_drop_empty_wrappers(out)).strip()


def _blank(lines: list[str]) -> bool:
    return all(not x.strip() or _WRAPPER_RE.match(x[:_MAX_LINE]) for x in lines)


def _drop_empty_wrappers(lines: list[str]) -> list[str]:
    """Remove fences and `<details>` wrappers left with nothing inside once a dump was cut out."""
    out: list[str] = []
    fence: int | None = None
    details: list[int] = []
    for line in lines:
        if "`" not in line and "~" not in line and "<" not in line:   # no fence, no `<details>`
            out.append(line)
            continue
        s = line[:_MAX_LINE].strip()
        if s.startswith(("```", "~~~")):
            if fence is None:
                fence = len(out)
            elif s.strip("`~ ") == "":
                if _blank(out[fence + 1:]):
                    del out[fence:]
                    fence = None
                    continue
                fence = None
            out.append(line)
            continue
        low = s.lower()
        if fence is None and low.startswith("<details"):
            details.append(len(out))
        elif fence is None and low.startswith("</details") and details:
            k = details.pop()
            if _blank(out[k + 1:]):
                del out[k:]
                continue
        out.append(line)
    if fence is not None and _blank(out[fence + 1:]):
        del out[fence:]
    return [] if _blank(out) else out
