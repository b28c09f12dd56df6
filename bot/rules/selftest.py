"""`vllm-triage rules test`: lint every rule file and run every rule's examples.

Each file is loaded on its own so one broken file does not hide the others. Examples run through the real
parser and the whole rule set (so `supersedes` counts): a `match` example must yield the rule's finding, a
`no_match` example must not. One line per rule, then `N passed, N failed`; exit status 1 on any failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bot.rules import RULE_SUFFIXES, RuleSet, check_references, evaluate_rule, load_rule_file
from bot.rules.errors import RuleError
from bot.rules.schema import Example, Rule


@dataclass(frozen=True)
class RuleResult:
    file: str
    rule_id: str | None
    problems: tuple[str, ...]
    checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def check_examples(rule: Rule, ruleset: RuleSet) -> list[str]:
    from bot.report import parse

    problems: list[str] = []
    for key, examples, expect in (("match", rule.examples_match, True), ("no_match", rule.examples_no_match, False)):
        for i, example in enumerate(examples):
            where = f"examples.{key}[{i}]"
            problem = _check_one(rule, ruleset, example, expect, parse)
            if problem:
                problems.append(f"{where}: {problem}")
    return problems


def _check_one(rule: Rule, ruleset: RuleSet, example: Example, expect: bool, parse) -> str | None:
    try:
        report = parse(example.title, example.body)
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


def run_checks(directory: str | Path) -> list[RuleResult]:
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
        results[key] = RuleResult(rule.file, rule.id, tuple(check_examples(rule, ruleset)), checked)
    return list(results.values())


def _key(results: dict[str, RuleResult], rule: Rule) -> str:
    return next(k for k, v in results.items() if v.file == rule.file)


def run_rule_tests(directory: str, out: TextIO) -> int:
    results = run_checks(directory)
    passed = failed = 0
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
    if not results:
        out.write(f"no rule files in {directory}\n")
    out.write(f"{passed} passed, {failed} failed\n")
    return 1 if failed else 0
