"""`vllm-triage rules test`: lint every rule file and run every rule's examples.

Each file is loaded on its own so one broken file does not hide the others. Examples run through the real
parser and the whole rule set (so `supersedes` counts): a `match` example must yield the rule's finding, a
`no_match` example must not. With the raise-site index, examples run again with their root cause located in it,
and each rule's `raised_in` is checked against it. One line per rule, then `N passed, N failed`; exit status 1 on
any failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bot.rules import RULE_SUFFIXES, RuleSet, check_references, evaluate_rule, load_rule_file
from bot.rules.conditions import All, Any_, Condition, FlagsOnly, Not, SiteCond
from bot.rules.errors import RuleError
from bot.rules.schema import Example, Rule
from bot.sources.index import SourceIndex


@dataclass(frozen=True)
class RuleResult:
    file: str
    rule_id: str | None
    problems: tuple[str, ...]
    checked: int = 0
    warnings: tuple[str, ...] = ()   # raised_in that the source index does not bear out (not a failure)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_examples(rule: Rule, ruleset: RuleSet, sources: SourceIndex | None = None) -> list[str]:
    """Every example, as the bot reads it without the source index (it works without one); with `sources`, also
    with its root cause located in it. A rule that names a raise site (`site:`) may need the index to match: without
    one, its match examples are not held against it."""
    from bot.report import parse
    from bot.sources.locate import locate

    def located(title: str | None, body: str):
        return locate(sources, parse(title, body))

    problems: list[str] = []
    names_site = uses_site(rule.match)
    for key, examples, expect in (("match", rule.examples_match, True), ("no_match", rule.examples_no_match, False)):
        for i, example in enumerate(examples):
            where = f"examples.{key}[{i}]"
            problem = None if expect and names_site else _check_one(rule, ruleset, example, expect, parse)
            if problem is None and sources is not None:
                problem = _check_one(rule, ruleset, example, expect, located)
                problem = problem and f"with the source index: {problem}"
            if problem:
                problems.append(f"{where}: {problem}")
    return problems


def uses_site(cond: Condition) -> bool:
    if isinstance(cond, SiteCond):
        return True
    if isinstance(cond, All | Any_):
        return any(uses_site(c) for c in cond.items)
    if isinstance(cond, Not | FlagsOnly):
        return uses_site(cond.item)
    return False


_MODULE = re.compile(r"\bvllm/[\w/]+\.py\b")
_AFTER_MODULE = re.compile(r"\s*\(([^()]*)\)")
_FUNCTION = re.compile(r"(?<![\w./])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?![\w./(])")
_NOT_FUNCTION = re.compile(r"\.py$|^vllm\.|^torch\.|^transformers\.")


def check_raised_in(rule: Rule, sources: SourceIndex) -> list[str]:
    """What the source index does not bear out in `raised_in`: a vLLM module it names in which no indexed release
    raises anything, a function named in the parentheses right after a module (`vllm/config/model.py
    (ModelConfig.verify)`: an identifier with `_` or `.` and a lower-case letter, not a constant, a word, a module or
    a release) in which none raises there."""
    problems: list[str] = []
    text = rule.raised_in or ""
    for m in _MODULE.finditer(text):
        if not sources.sites_in(m.group(0)):
            problems.append(f"raised_in: no indexed release raises anything in {m.group(0)}")
    for m in _MODULE.finditer(text):
        after = _AFTER_MODULE.match(text, m.end())
        if after is None or not sources.sites_in(m.group(0)):
            continue
        module = m.group(0)
        # "(f; vllm/other.py g)": g belongs to the module named before it
        pieces = re.split(r"(\bvllm/[\w/]+\.py\b)", after.group(1))
        for piece in pieces:
            if _MODULE.fullmatch(piece):
                module = piece
                continue
            qualnames = {s.qualname for s in sources.sites_in(module)}
            for name in _FUNCTION.findall(piece):
                if not ("_" in name or "." in name) or not any(c.islower() for c in name) or \
                        _NOT_FUNCTION.search(name) or not qualnames:
                    continue
                if not any(q == name or q.endswith("." + name) for q in qualnames):
                    problems.append(f"raised_in: no indexed release raises in {name} of {module}")
    return problems


def _check_one(rule: Rule, ruleset: RuleSet, example: Example, expect: bool, read) -> str | None:
    try:
        report = read(example.title, example.body)
        findings = ruleset.evaluate(report)
    except Exception as e:  # a crash here is a bug elsewhere; report it against the example
        return f"evaluation crashed: {type(e).__name__}: {e}"
    mine = next((f for f in findings if f.rule == rule.id), None)
    if expect and mine is None:
        alone = evaluate_rule(rule, report)
        if alone is not None:
            others = [f.rule for f in findings if rule.id in _supersedes(ruleset, f.rule)]
            return f"matches alone but is superseded by {', '.join(others) or 'another rule'}"
        return "expected a finding, got none" + _hint(report)
    if not expect and mine is not None:
        return "expected no finding, got one: " + "; ".join(f"{e.condition} => {e.matched!r}" for e in mine.evidence)
    if mine is not None:
        failed = [e for e in mine.evidence if e.where == "render"]
        if failed:
            return f"template failed: {failed[0].matched}"
        if expect and rule.duplicate_key is not None and not mine.duplicate_key:
            return "duplicate_key renders empty: every match example must capture what the key names"
    return None


def _supersedes(ruleset: RuleSet, rule_id: str) -> tuple[str, ...]:
    rule = ruleset.get(rule_id)
    return rule.supersedes if rule else ()


def _hint(report) -> str:
    exc = report.root_cause
    parts = [f"parsed root exception: {exc.type}: {exc.first_line[:100]!r}" if exc else "parser found no exception"]
    if report.flags:
        parts.append("flags: " + ", ".join(sorted(report.flags)[:12]))
    return " (" + "; ".join(parts) + ")"


def run_checks(directory: str | Path, sources: SourceIndex | None = None) -> list[RuleResult]:
    root = Path(directory)
    if not root.is_dir():
        return [RuleResult(str(directory), None, ("not a directory",))]
    results: dict[str, RuleResult] = {}
    rules: list[Rule] = []
    for path in sorted(p for p in root.iterdir() if p.suffix in RULE_SUFFIXES and p.is_file()):
        try:
            rule = load_rule_file(path)
        except RuleError as e:
            results[str(path)] = RuleResult(e.file, e.rule_id, (f"{e.field}: {e.message}",))
            continue
        if any(r.id == rule.id for r in rules):
            results[str(path)] = RuleResult(rule.file, rule.id, ("id: duplicate id",))
            continue
        rules.append(rule)
        results[str(path)] = RuleResult(rule.file, rule.id, ())
    # cross-file checks: drop rules whose `supersedes` is broken, then run examples on the rest
    while True:
        try:
            check_references(rules)
            break
        except RuleError as e:
            bad = next(r for r in rules if r.id == e.rule_id)
            rules.remove(bad)
            results[_key(results, bad)] = RuleResult(e.file, e.rule_id, (f"{e.field}: {e.message}",))
    ruleset = RuleSet(tuple(rules))
    for rule in rules:
        key = _key(results, rule)
        checked = len(rule.examples_match) + len(rule.examples_no_match)
        warnings = tuple(check_raised_in(rule, sources)) if sources is not None else ()
        results[key] = RuleResult(rule.file, rule.id, tuple(check_examples(rule, ruleset, sources)), checked, warnings)
    return list(results.values())


def _key(results: dict[str, RuleResult], rule: Rule) -> str:
    return next(k for k, v in results.items() if v.file == rule.file)


def run_rule_tests(directory: str, out: TextIO, sources: SourceIndex | None = None) -> int:
    """`sources`: the raise-site index, when built: examples run with it too and `raised_in` is checked against it."""
    results = run_checks(directory, sources)
    passed = failed = warned = 0
    for r in results:
        label = f"{r.file}: rule {r.rule_id or '?'}"
        if r.ok:
            passed += 1
            out.write(f"ok    {label} ({r.checked} examples)\n")
        else:
            failed += 1
            out.write(f"FAIL  {label}: {r.problems[0]}\n")
            for problem in r.problems[1:]:
                out.write(f"      {label}: {problem}\n")
        for warning in r.warnings:
            warned += 1
            out.write(f"warn  {label}: {warning}\n")
    if not results:
        out.write(f"no rule files in {directory}\n")
    if sources is None:
        out.write("note: no source index: `raised_in` not checked, examples not run with located raise sites, "
                  "match examples of rules that name a site not held against them\n")
    else:
        out.write(f"source index: {len(sources.releases)} releases: examples also run with located raise sites; "
                  f"{warned} `raised_in` not borne out by it (warnings: a function that detects rather than raises "
                  "the error is named there too)\n")
    out.write(f"{passed} passed, {failed} failed\n")
    return 1 if failed else 0
