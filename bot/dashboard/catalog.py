"""The error catalog: one entry per rule, in the shape of an error-explainer page — the error message, what it
means, where vLLM raises it (file and version range), solutions, an example fix, when it happens, related errors.

Pure: built from the RuleSet alone (the issues a rule matched are added by the caller). The message and the
example fix come from the rule's own first `match` example, parsed and evaluated like a real report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bot.report import parse
from bot.rules import Rule, RuleSet, evaluate_rule
from bot.rules.conditions import All, Any_, Not
from bot.rules.render import render, template_context

VLLM_REPO = "https://github.com/vllm-project/vllm"
_ISSUE_REF = re.compile(r"([\w.-]{1,100})/([\w.-]{1,100})#(\d{1,9})")
_PATH = re.compile(r"vllm/[\w./-]{1,200}\.(?:py|cu|cpp|h|cuh)")
MAX_RELATED = 6


@dataclass(frozen=True)
class Reference:
    text: str
    url: str | None


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    title: str
    labels: tuple[str, ...]
    confidence: float
    message: str | None                  # the error as vLLM prints it (from the rule's first example)
    meaning: str                         # Markdown: the explanation for a report that gave no details
    solutions: str                       # Markdown: the workaround for a report that gave no details
    texts_from_example: bool             # ... or, when those read badly, as computed for the example report
    raised_in: str | None
    source_url: str | None               # the file on GitHub, when raised_in names one
    affects: str | None                  # PEP 440 range of affected versions
    fixed_in: str | None
    trigger: dict[str, Any]              # the match condition as a tree of {op, text, children}
    example_title: str
    example_command: str | None          # "before": the command of the example report
    example_fix: str                     # "after": the workaround computed from the example's own flags
    example_error: str | None
    supersedes: tuple[str, ...]
    superseded_by: tuple[str, ...]
    related: tuple[tuple[str, str], ...]  # (rule id, title)
    references: tuple[Reference, ...] = field(default=())

    def as_json(self, matched: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        out = {
            "id": self.id, "title": self.title, "labels": list(self.labels), "confidence": self.confidence,
            "message": self.message, "meaning": self.meaning, "solutions": self.solutions,
            "texts_from_example": self.texts_from_example,
            "raised_in": self.raised_in, "source_url": self.source_url, "affects": self.affects,
            "fixed_in": self.fixed_in, "when": self.trigger,
            "example_fix": {"title": self.example_title, "before": self.example_command, "after": self.example_fix,
                            "error": self.example_error},
            "supersedes": list(self.supersedes), "superseded_by": list(self.superseded_by),
            "related": [{"id": rid, "title": title} for rid, title in self.related],
            "references": [{"text": r.text, "url": r.url} for r in self.references],
        }
        if matched is not None:
            out["matched_issues"] = matched
        return out


def reference(text: str) -> Reference:
    m = _ISSUE_REF.fullmatch(text.strip())
    if m:
        return Reference(text, f"https://github.com/{m.group(1)}/{m.group(2)}/issues/{m.group(3)}")
    if text.startswith("https://") and not any(c.isspace() for c in text):
        return Reference(text, text)
    return Reference(text, None)


def condition_tree(cond: Any) -> dict[str, Any]:
    if isinstance(cond, All):
        return {"op": "all of", "text": None, "children": [condition_tree(c) for c in cond.items]}
    if isinstance(cond, Any_):
        return {"op": "any of", "text": None, "children": [condition_tree(c) for c in cond.items]}
    if isinstance(cond, Not):
        return {"op": "not", "text": None, "children": [condition_tree(cond.item)]}
    return {"op": None, "text": cond.describe(), "children": []}


def _generic(rule: Rule, key: str) -> str:
    """The template rendered for a report that says nothing: what every reader of the catalog should see."""
    report = parse("", "")
    try:
        return render(getattr(rule, key), template_context(report, {}, {}, None))
    except Exception:
        return ""


_HOLE = re.compile(r"\w ,| \(\)|(?<!`)``(?!`)| ''")


def _reads_well(text: str) -> bool:
    """False when a value the template interpolates is missing ("rank , above", an empty code span)."""
    return bool(text.strip()) and _HOLE.search(text) is None


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z0-9_.]{4,}", text.lower()) if w not in _COMMON}


_COMMON = {"model", "models", "error", "fails", "failed", "vllm", "cannot", "without", "because", "which", "their"}


def _related(rule: Rule, rules: RuleSet) -> tuple[tuple[str, str], ...]:
    """Rules it supersedes or is superseded by, then rules sharing its labels, then its source file, then title
    words."""
    by_id = {r.id: r for r in rules.rules}
    picked: list[str] = [rid for rid in rule.supersedes if rid in by_id]
    picked += [r.id for r in rules.rules if rule.id in r.supersedes and r.id not in picked]
    labels = set(rule.labels)
    path = _PATH.search(rule.raised_in or "")
    words = _words(rule.title)

    def closeness(r: Rule) -> tuple[int, int, int]:
        other = _PATH.search(r.raised_in or "")
        same_file = int(bool(path and other and path.group(0) == other.group(0)))
        return len(labels & set(r.labels)), same_file, len(words & _words(r.title))

    scored = [(closeness(r), r.id) for r in rules.rules if r.id != rule.id and r.id not in picked]
    picked += [rid for score, rid in sorted(scored, key=lambda x: (tuple(-v for v in x[0]), x[1])) if any(score)]
    return tuple((rid, by_id[rid].title) for rid in picked[:MAX_RELATED])


def build_entry(rule: Rule, rules: RuleSet) -> CatalogEntry:
    example = rule.examples_match[0]
    report = parse(example.title, example.body)
    finding = evaluate_rule(rule, report)
    message = error = None
    if report.root_cause is not None:
        error = f"{report.root_cause.type}: {report.root_cause.first_line}"
    if finding is not None:
        hits = [e for e in finding.evidence if e.where in ("exception", "log", "error", "body", "title")]
        message = hits[0].matched if hits else None
    message = message or error or (report.error_lines[0] if report.error_lines else None)
    meaning, solutions = _generic(rule, "explanation"), _generic(rule, "workaround")
    from_example = finding is not None and not (_reads_well(meaning) and _reads_well(solutions))
    if from_example:
        meaning, solutions = finding.explanation, finding.workaround
    raised = rule.raised_in
    path = _PATH.search(raised) if raised else None
    return CatalogEntry(
        id=rule.id, title=rule.title, labels=rule.labels, confidence=rule.confidence,
        message=message, meaning=meaning, solutions=solutions, texts_from_example=from_example,
        raised_in=raised, source_url=f"{VLLM_REPO}/blob/main/{path.group(0)}" if path else None,
        affects=str(rule.affects) if rule.affects is not None else None,
        fixed_in=str(rule.fixed_in) if rule.fixed_in is not None else None,
        trigger=condition_tree(rule.match),
        example_title=example.title or report.title_text,
        example_command=report.commands[0].raw if report.commands else None,
        example_fix=finding.workaround if finding is not None else "",
        example_error=error,
        supersedes=rule.supersedes,
        superseded_by=tuple(r.id for r in rules.rules if rule.id in r.supersedes),
        related=_related(rule, rules),
        references=tuple(reference(r) for r in rule.references),
    )


class Catalog:
    """Entries built on first use and kept (rules do not change while the server runs)."""

    def __init__(self, rules: RuleSet) -> None:
        self.rules = rules
        self._entries: dict[str, CatalogEntry] = {}

    def entry(self, rule_id: str) -> CatalogEntry | None:
        entry = self._entries.get(rule_id)
        if entry is None:
            rule = self.rules.get(rule_id)
            if rule is None:
                return None
            entry = self._entries[rule_id] = build_entry(rule, self.rules)
        return entry

    def ids(self) -> list[str]:
        return sorted(r.id for r in self.rules.rules)
