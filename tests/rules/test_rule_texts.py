"""Every rule's `explanation` and `workaround` read well whatever the report left out.

The texts go into the bot's public comment, so a value the reporter did not give must not leave a hole ("the adapter
has rank , above the configured ,", an empty code span, `--max-lora-rank ` with nothing after it). Each rule is
rendered through the engine's own renderer in these situations:

* `example` — each of the rule's `match` examples, parsed and evaluated with the whole shipped rule set (the texts
  of the finding the bot would post);
* `captures-only` — the captures and exception of that match, but no flags, no environment and an empty report;
* `exception-without-message` — the example's report, with the matched exception reduced to its type (what a
  title like "HarmonyError on gpt-oss" gives);
* `nothing-known` — no flags, environment, captures or exception at all.

`holes()` is the check; `test_holes_*` pin down what it catches and what it leaves alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict, replace

import pytest
import yaml
from jinja2 import Undefined

from bot.decision import Finding
from bot.report import parse
from bot.rules import DEFAULT_RULES_DIR, RULE_SUFFIXES, Rule, RuleSet, load_rules
from bot.rules.render import ENV, render, template_context
from bot.rules.texts import Texts

RULE_FILES = sorted(p for p in DEFAULT_RULES_DIR.iterdir() if p.suffix in RULE_SUFFIXES)
FIELDS = ("explanation", "workaround")

_FENCE = re.compile(r"^\s*(```|~~~)")
_TICKS = re.compile(r"`+")
_JINJA = re.compile(r"\{\{|\{%|%\}|\{#|#\}")  # `}}` alone closes nested JSON

# Holes in prose (code spans already taken out). Each pattern is what an empty `{{ value }}` leaves behind.
_PROSE: tuple[tuple[str, re.Pattern[str]], ...] = (
    # "rank , above", "capability .", "of ." — a separator right after a space; "..." and ".venv" are not holes
    ("dangling separator", re.compile(r"\S +[,.;:!?)\]](?![.\w/])")),
    ("opening bracket before nothing", re.compile(r"[(\[] +\S|[(\[][,.;:]")),
    ("empty brackets", re.compile(r"(?<![\w.\]])\(\s*\)|(?<![\w.])\[\s*\]|\]\(\s*\)")),
    ("doubled space", re.compile(r"\S {2,}\S")),
    ("trailing space before a line break", re.compile(r"\S +\n")),
    ("doubled separator", re.compile(r"[,;]\s*[,;.]")),
    ("assignment of nothing", re.compile(r"\w=(?:$|[\s,.;)\]])", re.M)),
    ("empty quotes", re.compile(r"(?<![\w'\"])(''|\"\")(?![\w'\"])")),
    ("missing value printed", re.compile(r"\bNone\b(?! of\b)|\bUndefined\b|\bnull\b|\bNaN\b|\{\s*\}|\[\s*\]")),
)
# Holes inside one inline code span (its content).
_IN_SPAN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("empty code span", re.compile(r"^\s*$")),
    ("code span padded with a space", re.compile(r"^ |(?<!^) $")),
    ("code span ends where a value belonged", re.compile(r"=\s*$|=[,)\]}]|:\s*[,}\]]|[^_]_$|[\w-]/[\w.-]+:$")),
    ("doubled space in a code span", re.compile(r"\S {2,}\S")),
    ("HTML entity in a code span (shown literally)", re.compile(r"&(?:lt|gt|amp|quot|#\d+);")),
    ("missing value printed", re.compile(r"\bNone\b|\bUndefined\b")),
)
# Holes in a fenced code block line (commands and configs): a flag or key followed by nothing.
_IN_FENCE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("trailing space in a code block", re.compile(r"\S +$")),
    ("flag without its value in a code block", re.compile(r"\s--[a-z0-9-]+ {2,}--")),
    ("assignment of nothing in a code block", re.compile(r"\w=(?:$|[ ,)\]])")),
    ("HTML entity in a code block (shown literally)", re.compile(r"&(?:lt|gt|amp|quot|#\d+);")),
    ("missing value printed", re.compile(r"\bUndefined\b")),
)


def holes(text: str) -> list[str]:
    """What in a rendered rule text looks like a value that was missing; [] when it reads well."""
    if not text.strip():
        return ["empty text"]
    problems: list[str] = []
    for m in _JINJA.finditer(text):
        problems.append(f"leftover Jinja syntax: {_around(text, m.start(), m.end())!r}")
    prose_lines: list[str] = []
    paragraph: list[str] = []
    in_fence = False
    for line in [*text.split("\n"), ""]:
        if _FENCE.match(line) or in_fence or not line.strip():
            problems += _span_holes("\n".join(paragraph), prose_lines)
            paragraph = []
        if _FENCE.match(line):
            in_fence = not in_fence
            prose_lines.append("")
        elif in_fence:
            problems += [f"{what}: {line.strip()!r}" for what, p in _IN_FENCE if p.search(line)]
            prose_lines.append("")
        elif line.strip():
            paragraph.append(line)
        else:
            prose_lines.append("")
    prose = "\n".join(prose_lines)
    for what, pattern in _PROSE:
        for m in pattern.finditer(prose):
            problems.append(f"{what}: {_around(prose, m.start(), m.end())!r}")
    return problems


def _code_spans(paragraph: str) -> Iterator[tuple[int, int, str | None]]:
    """(start, end, content) of each inline code span, Markdown's way: a run of n backticks up to the next run of
    exactly n (a span may wrap onto the next line); a run without a closing run is literal, content None."""
    pos = 0
    while (opening := _TICKS.search(paragraph, pos)) is not None:
        n = len(opening.group(0))
        closing = next((m for m in _TICKS.finditer(paragraph, opening.end()) if len(m.group(0)) == n), None)
        if closing is None:
            yield opening.start(), opening.end(), None
            pos = opening.end()
        else:
            yield opening.start(), closing.end(), paragraph[opening.end():closing.start()]
            pos = closing.end()


def _span_holes(paragraph: str, prose_lines: list[str]) -> list[str]:
    """Holes inside the paragraph's code spans; appends its prose, each span replaced by a placeholder word."""
    if not paragraph:
        return []
    problems = []
    prose, last = [], 0
    for start, end, content in _code_spans(paragraph):
        where = " ".join(paragraph[max(0, start - 30):end + 30].split())
        # a span stands in for its value in the prose checks: "`--tp` ," is still a dangling comma
        prose += [paragraph[last:start], "CODE"]
        last = end
        if content is None:
            problems.append(f"empty or unbalanced code span: {where!r}")
            continue
        content = content.replace("\n", " ")
        if len(content) > 2 and content[0] == content[-1] == " " and content.strip():
            content = content[1:-1]  # `` `x` `` : one space each side is the Markdown way to quote a backtick
        problems += [f"{what}: {paragraph[start:end]!r} in {where!r}" for what, p in _IN_SPAN if p.search(content)]
    prose.append(paragraph[last:])
    prose_lines += [line.lstrip(" \t") for line in "".join(prose).split("\n")]
    return problems


def _around(text: str, start: int, end: int, width: int = 40) -> str:
    return text[max(0, start - width):end + width].replace("\n", "⏎")


# --- the check itself -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "The adapter has rank , above the configured , so it cannot be loaded.",
    "Restart with `--max-lora-rank ` and retry.",
    "The architecture `` was removed in vLLM 0.10.",
    "Checkpoint quantized with ``, but `--quantization awq` was given.",
    "Your GPU () has compute capability .",
    "Use a model whose number of attention heads is a multiple of .",
    "Set `--tensor-parallel-size` to a divisor of the head count ( heads).",
    "Pass --max-model-len \nto the command.",
    "Pass `--max-model-len=` to the command.",
    "Set `max_lora_rank=, enable_lora=True`.",
    "The model  does not support pipeline parallelism.",
    "Upgrade from None to 0.11.",
    "Your flags {} conflict.",
    "The model '' is not a multimodal model.",
    "Use `vllm/vllm-openai:` instead.",
    "Install `gcc-&lt;N&gt;` first.",
    "Requested 4 GPUs, found  .",
    "```bash\nvllm serve --max-model-len \n```",
    "```bash\nvllm serve m --tensor-parallel-size  --enforce-eager\n```",
    "It failed with {{ captures.x }}.",
    "{% if x %}",
    "   \n",
])
def test_holes_are_caught(text):
    assert holes(text), text


@pytest.mark.parametrize("text", [
    "The adapter has rank 64, above the configured 16, so it cannot be loaded.",
    "Restart with `--max-lora-rank 64` (offline: `LLM(..., enable_lora=True, max_lora_rank=64)`).",
    "Pass `--enforce-eager`, or lower `--gpu-memory-utilization`.",
    "Run `nvidia-smi` and check `torch.cuda.is_available()`; see the [docs](https://docs.vllm.ai).",
    "Empty `{}` arguments and `delta.tool_calls[].function.arguments` are dropped.",
    "Install into `.venv` with `uv pip install -e .` ... then retry.",
    "None of your GPUs supports FP8.",
    "An undefined symbol in `_C.abi3.so` means the wheel and torch differ.",
    "- one\n  - nested item\n\n1. first step",
    "| flag | value |\n|---|---|\n| `--tp` | 2 |",
    "```bash\nvllm serve Qwen/Qwen3-8B \\\n    --tensor-parallel-size 2  # two GPUs\nexport VLLM_USE_V1=1\n```",
    "Version 0.9.2 (or later) works; 3.5 GiB is needed.",
    "`` `code` `` with a backtick inside is a span, not an empty one.",
])
def test_legitimate_text_passes(text):
    assert holes(text) == []


# --- the rule pack ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def shipped() -> RuleSet:
    return load_rules(DEFAULT_RULES_DIR)


def _mark_missing(value: object) -> object:
    if isinstance(value, Undefined) and value._undefined_hint:  # `{{ "," if not loop.last }}`: an empty branch
        return ""
    if value is None or isinstance(value, Undefined) or (isinstance(value, str | dict | list | tuple) and not value):
        return MISSING
    return ENV.finalize(value)


# The engine's environment, but a missing value prints a marker instead of nothing: an exact test for an unguarded
# `{{ value }}`, whatever the words around it.
STRICT = ENV.overlay(finalize=_mark_missing)
MISSING = "⟦missing⟧"


def unguarded_values(source: str, context: dict) -> list[str]:
    """Where the template prints a value the context does not have (rendered with the marker)."""
    try:
        text = render(STRICT.from_string(source), context)
    except Exception:  # a template that fails is reported by the real render
        return []
    return [f"a missing value is printed: {_around(text, m.start(), m.end())!r}"
            for m in re.finditer(re.escape(MISSING), text)]


def test_unguarded_values_are_found_and_guarded_ones_pass():
    context = template_context(parse("", ""), {"tensor_parallel_size": "2"}, {"rank": "64"}, None)
    assert unguarded_values("rank {{ captures.rank }}, max {{ captures.max_rank }}.", context)
    assert unguarded_values("on {{ env.gpu }}", context)
    assert unguarded_values("`--speculative-config` method {{ flags.speculative_config.method }}", context)
    assert unguarded_values("rank {{ captures.rank }}{% if captures.max_rank %}, max {{ captures.max_rank }}{% endif %}"
                            "; TP {{ flags.tensor_parallel_size }}, model {{ report.model or 'unknown' }}"
                            '{% for i in range(2) %}{{ i }}{{ "," if not loop.last }}{% endfor %}', context) == []


def _contexts(rule: Rule, ruleset: RuleSet) -> Iterator[tuple[str, dict, Finding | None]]:
    """(situation, template context, the engine's finding when there is one) for every situation."""
    empty = parse("", "")
    for i, example in enumerate(rule.examples_match):
        report = parse(example.title, example.body)
        finding = next((f for f in ruleset.evaluate(report) if f.rule == rule.id), None)
        if finding is None:  # test_rule_examples reports it; nothing to render here
            continue
        texts = Texts(report)
        hit = rule.match.check(texts)
        assert hit is not None
        yield f"example {i}", template_context(report, texts.flags, hit.captures, hit.exception), finding
        yield f"captures-only {i}", template_context(empty, {}, hit.captures, hit.exception), None
        if hit.exception is not None and hit.exception.message:  # e.g. an exception named only in the title
            bare = replace(hit.exception, message="", frames=())
            yield f"exception-without-message {i}", template_context(report, texts.flags, hit.captures, bare), None
    yield "nothing-known", template_context(empty, {}, {}, None), None


def _problems(rule: Rule, ruleset: RuleSet, sources: dict[str, str]) -> list[str]:
    problems = []
    for situation, context, finding in _contexts(rule, ruleset):
        for field in FIELDS:
            if finding is not None:
                failed = [e.matched for e in finding.evidence if e.where == "render" and field in e.condition]
                problems += [f"{situation}: {field} template failed: {m}" for m in failed]
                text = getattr(finding, field)
            else:
                try:
                    text = render(getattr(rule, field), context)
                except Exception as e:  # in the bot this empties the text and adds render evidence
                    problems.append(f"{situation}: {field} template failed: {type(e).__name__}: {e}")
                    continue
            problems += [f"{situation}: {field}: {p}" for p in holes(text)]
            problems += [f"{situation}: {field}: {p}" for p in unguarded_values(sources[field], context)]
    return problems


@pytest.mark.parametrize("path", RULE_FILES, ids=[p.stem for p in RULE_FILES])
def test_rule_texts_have_no_holes(shipped, path):
    rule = shipped.get(path.stem)
    assert rule is not None
    sources = yaml.safe_load(path.read_text(encoding="utf-8"))
    problems = _problems(rule, shipped, sources)
    assert not problems, f"{rule.file}:\n  " + "\n  ".join(dict.fromkeys(problems))


def test_interpolated_values_are_defused_without_html_entities():
    from bot.rules.render import _clean

    text = _clean("<img src=x> @alice `x`")
    assert "&lt;" not in text and "<img" not in text and "@alice" not in text and "`" not in text
    assert "img src=x" in text and "alice" in text


def test_the_exception_context_is_the_exception_as_a_dict_with_its_frames_read_when_asked():
    report = parse("[Bug]: it fails", 'Traceback (most recent call last):\n  File "/x/vllm/engine.py", line 3, in run\n'
                   "    start()\nValueError: bad value\nsecond line")
    exc = report.root_cause
    assert exc is not None and exc.frames
    context = template_context(report, {}, {}, None)
    template = ENV.from_string("{{ exception.short_type }}: {{ exception.first_line }} "
                               "{% for f in exception.frames %}{{ f.file }}:{{ f['line'] }}{% endfor %}")
    rendered = template.render(context)
    assert rendered == "ValueError: bad value /x/vllm/engine.py:3"
    assert dict(context["exception"]) == {**asdict(exc), "short_type": "ValueError", "first_line": "bad value"}
    assert ENV.from_string("{{ exception.nothing is undefined }}").render(context) == "true"
