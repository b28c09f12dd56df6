"""The error catalog: one entry per rule, in the shape of an error-explainer page — the error message, what it
means, where vLLM raises it (file and version range), solutions, an example fix, when it happens, related errors.

Pure: built from the RuleSet alone (the issues a rule matched are added by the caller). The rule's own `match`
examples are parsed and evaluated like real reports: the error message is the line its error condition matched
(never a reporter's title), or the message at its raise site when a `SiteMessages` source (the raise-site index,
bot/dashboard/sitelinks.py) is given, which also links the entry to the sites its examples' errors resolve to;
the example fix shows the example that has a command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.decision import Finding
from bot.report import Report, parse
from bot.rules import Rule, RuleSet, evaluate_rule
from bot.rules.conditions import All, Any_, ExceptionCond, FlagsOnly, Not, TextCond
from bot.rules.regex import line_around
from bot.rules.render import render, template_context
from bot.rules.schema import Example

VLLM_REPO = "https://github.com/vllm-project/vllm"
_ISSUE_REF = re.compile(r"([\w.-]{1,100})/([\w.-]{1,100})#(\d{1,9})")
_PATH = re.compile(r"vllm/[\w./-]{1,200}\.(?:py|cu|cpp|h|cuh)")
MAX_RELATED = 6


@dataclass(frozen=True)
class Reference:
    text: str
    url: str | None


@dataclass(frozen=True)
class SiteLink:
    """A raise site of the rule's error, from the raise-site index: its explainer page and where it is raised in the
    newest release that raises it."""

    id: str
    file: str
    qualname: str
    type: str | None
    version: str            # the newest indexed release that raises it
    line: int
    releases: str           # "0.11.0 – 0.33.0"
    url: str | None         # the line at that release's tag on GitHub
    page: str               # /dashboard/errors/<id>


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    title: str
    labels: tuple[str, ...]
    confidence: float
    message: str | None                  # the error the rule diagnoses (see error_message)
    message_from: str                    # site | example | pattern | none
    meaning: str                         # Markdown: the explanation for a report that gave no details
    solutions: str                       # Markdown: the workaround for a report that gave no details
    texts_from_example: bool             # ... or, when those read badly, as computed for the example report
    raised_in: str | None
    source_url: str | None               # the file on GitHub, when raised_in names one
    affects: str | None                  # PEP 440 range of affected versions
    fixed_in: str | None
    trigger: dict[str, Any]              # the match condition as a tree of {op, text, children}
    example_title: str
    example_command: str | None          # "before": the command of the example report (None: no example has one)
    example_fix: str                     # "after": the workaround computed from the example's own flags
    example_error: str | None
    supersedes: tuple[str, ...]
    superseded_by: tuple[str, ...]
    related: tuple[tuple[str, str], ...]  # (rule id, title)
    references: tuple[Reference, ...] = field(default=())
    errors: tuple[str, ...] = ()           # the errors the rule's conditions matched in its examples, best first
    sites: tuple[SiteLink, ...] = ()       # where vLLM raises them (the raise-site index; empty without it)

    @property
    def search_text(self) -> str:
        """What the catalog's search box looks in (lower case): id, title, error message, labels, raised_in."""
        return " ".join((self.id, self.title, self.message or "", " ".join(self.labels), self.raised_in or "")).lower()

    def matches(self, query: str = "", label: str | None = None) -> bool:
        """Every word of the query is in the search text, and the entry has the label (the page's script filters
        the same way as you type)."""
        text = self.search_text
        return all(w in text for w in query.lower().split()) and (not label or label in self.labels)

    def as_json(self, matched: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        out = {
            "id": self.id, "title": self.title, "labels": list(self.labels), "confidence": self.confidence,
            "message": self.message, "message_from": self.message_from, "meaning": self.meaning,
            "solutions": self.solutions, "texts_from_example": self.texts_from_example,
            "raised_in": self.raised_in, "source_url": self.source_url, "affects": self.affects,
            "fixed_in": self.fixed_in, "when": self.trigger,
            "example_fix": {"title": self.example_title, "before": self.example_command, "after": self.example_fix,
                            "error": self.example_error},
            "supersedes": list(self.supersedes), "superseded_by": list(self.superseded_by),
            "related": [{"id": rid, "title": title} for rid, title in self.related],
            "references": [{"text": r.text, "url": r.url} for r in self.references],
            "sites": [{"id": x.id, "file": x.file, "qualname": x.qualname, "type": x.type, "version": x.version,
                       "line": x.line, "releases": x.releases, "url": x.url, "page": x.page,
                       "api": f"/api/errors/{x.id}"} for x in self.sites],
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
    if isinstance(cond, FlagsOnly):
        return {"op": f"configuration only, confidence at most {cond.confidence:g}", "text": None,
                "children": [condition_tree(cond.item)]}
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


ERROR_KINDS = ("exception", "error line", "log line")   # where an example's error was read, best first
MAX_MESSAGE = 400


class SiteMessages(Protocol):
    """Where the catalog can read an error's message as vLLM's source writes it (the raise-site index): given the
    rule and the error line found in its examples, the message template at its site, or None; and the sites that
    raise the errors its examples show."""

    def message(self, rule: Rule, error: str | None) -> str | None: ...

    def links(self, rule: Rule, errors: tuple[str, ...]) -> tuple[SiteLink, ...]: ...


@dataclass(frozen=True)
class _Example:
    example: Example
    report: Report
    finding: Finding | None
    error: str | None        # the error in the example that the rule's conditions match (see _error_in)
    error_rank: int          # index in ERROR_KINDS, len(ERROR_KINDS) when there is none

    @property
    def command(self) -> str | None:
        return self.report.commands[0].raw if self.report.commands else None

    @property
    def traceback(self) -> bool:
        return self.report.root_cause is not None and bool(self.report.root_cause.frames)


def error_conditions(cond: Any) -> list[Any]:
    """The conditions of a match tree that can name an error (an exception, or a pattern over anything but the
    title), outside any `not`."""
    if isinstance(cond, All | Any_):
        return [c for item in cond.items for c in error_conditions(item)]
    if isinstance(cond, ExceptionCond) or (isinstance(cond, TextCond) and cond.source.partition(":")[0] != "title"):
        return [cond]
    return []


def _code_lines(body: str) -> list[str]:
    """The lines of a body's fenced code blocks (where reporters paste their logs), stripped."""
    out, fenced = [], False
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif fenced and line.strip():
            out.append(line.strip())
    return out


def _error_in(rule: Rule, report: Report, finding: Finding) -> tuple[str | None, int]:
    """The error of an example report that the rule matched: an exception its `exception` condition matched, else
    an exception or error line of the report (never its title) that one of its text patterns matches, else a
    pasted log line (in a code block) that its `log` or text condition matched."""
    for e in finding.evidence:
        if e.where == "exception":
            return e.matched, 0
    exceptions = [x for x in report.exceptions if x.source != "title"]
    texts = [(x, f"{x.type}: {x.message}", 0) for x in reversed(exceptions)]
    texts += [(None, line, 1) for line in report.error_lines]
    for cond in error_conditions(rule.match):
        if not isinstance(cond, TextCond):
            continue
        for exc, text, rank in texts:
            data = text.encode("utf-8", "replace")
            found = cond.pattern.search(data)
            if found is None:
                continue
            line = line_around(data, found[0], found[1], MAX_MESSAGE)
            if exc is not None and found[0] > len(f"{exc.type}: {exc.first_line}".encode()):
                line = f"{exc.type}: {exc.first_line}\n{line}"   # matched further down a long message
            return line, rank
    code = _code_lines(report.body)
    for e in finding.evidence:
        if e.where in ("log", "error", "body"):
            needle = e.matched.strip("…")
            if any(needle in line for line in code):
                return e.matched, 2
    return None, len(ERROR_KINDS)


def _examined(rule: Rule) -> list[_Example]:
    out = []
    for example in rule.examples_match:
        report = parse(example.title, example.body)
        finding = evaluate_rule(rule, report)
        error, rank = _error_in(rule, report, finding) if finding is not None else (None, len(ERROR_KINDS))
        out.append(_Example(example, report, finding, error, rank))
    return out


def _pattern_message(rule: Rule) -> str | None:
    """The error as the rule's first error condition describes it, when no example shows one."""
    for cond in error_conditions(rule.match):
        if isinstance(cond, ExceptionCond):
            kind = "|".join(cond.types) or "an exception"
            return f"{kind}: /{cond.message.source}/" if cond.message else kind
        if cond.kind in ("error", "log"):
            return f"/{cond.pattern.source}/"
    return None


def error_message(rule: Rule, examples: list[_Example], sites: SiteMessages | None = None
                  ) -> tuple[str | None, str]:
    """The error a rule diagnoses and where it was read: "site" (vLLM's source), "example" (the line the rule's
    error condition matched in its most complete example: an exception before an error line before a log line,
    then one with a traceback, then one with a command), "pattern" (the condition itself), or "none"."""
    shown = sorted((e for e in examples if e.error is not None),
                   key=lambda e: (e.error_rank, not e.traceback, e.command is None))
    error = shown[0].error if shown else None
    if sites is not None:
        message = sites.message(rule, error)
        if message:
            return message, "site"
    if error is not None:
        return error, "example"
    pattern = _pattern_message(rule)
    return (pattern, "pattern") if pattern else (None, "none")


def example_errors(examples: list[_Example]) -> tuple[str, ...]:
    """Every distinct error the rule matched in its examples, in the order error_message prefers them."""
    shown = sorted((e for e in examples if e.error is not None),
                   key=lambda e: (e.error_rank, not e.traceback, e.command is None))
    return tuple(dict.fromkeys(e.error for e in shown if e.error is not None))


def fix_example(examples: list[_Example]) -> _Example:
    """The example the "Example fix" shows: one the rule fires on, with a command if any has one, then with an
    error, then with a traceback (the first such example)."""
    return min(examples, key=lambda e: (e.finding is None, e.command is None, e.error is None, not e.traceback))


def build_entry(rule: Rule, rules: RuleSet, sites: SiteMessages | None = None) -> CatalogEntry:
    examples = _examined(rule)
    message, message_from = error_message(rule, examples, sites)
    shown = fix_example(examples)
    report, finding = shown.report, shown.finding
    error = f"{report.root_cause.type}: {report.root_cause.first_line}" if report.root_cause is not None else None
    meaning, solutions = _generic(rule, "explanation"), _generic(rule, "workaround")
    from_example = finding is not None and not (_reads_well(meaning) and _reads_well(solutions))
    if from_example:
        meaning, solutions = finding.explanation, finding.workaround
    raised = rule.raised_in
    path = _PATH.search(raised) if raised else None
    errors = example_errors(examples)
    return CatalogEntry(
        id=rule.id, title=rule.title, labels=rule.labels, confidence=rule.confidence,
        message=message, message_from=message_from, meaning=meaning, solutions=solutions,
        texts_from_example=from_example,
        raised_in=raised, source_url=f"{VLLM_REPO}/blob/main/{path.group(0)}" if path else None,
        affects=str(rule.affects) if rule.affects is not None else None,
        fixed_in=str(rule.fixed_in) if rule.fixed_in is not None else None,
        trigger=condition_tree(rule.match),
        example_title=shown.example.title or report.title_text,
        example_command=shown.command,
        example_fix=finding.workaround if finding is not None else "",
        example_error=shown.error or error,
        supersedes=rule.supersedes,
        superseded_by=tuple(r.id for r in rules.rules if rule.id in r.supersedes),
        related=_related(rule, rules),
        references=tuple(reference(r) for r in rule.references),
        errors=errors,
        sites=sites.links(rule, errors) if sites is not None else (),
    )


class Catalog:
    """Entries built on first use and kept (rules do not change while the server runs)."""

    def __init__(self, rules: RuleSet, sites: SiteMessages | None = None) -> None:
        self.rules = rules
        self.sites = sites
        self._entries: dict[str, CatalogEntry] = {}

    def entry(self, rule_id: str) -> CatalogEntry | None:
        entry = self._entries.get(rule_id)
        if entry is None:
            rule = self.rules.get(rule_id)
            if rule is None:
                return None
            entry = self._entries[rule_id] = build_entry(rule, self.rules, self.sites)
        return entry

    def ids(self) -> list[str]:
        return sorted(r.id for r in self.rules.rules)
