"""Diagnosis rules: YAML files under rules/, validated at load, evaluated against a Report.

`load_rules(dir)` validates every file strictly (see docs/rules.md) and compiles patterns and templates once;
`RuleSet.evaluate(report)` is pure and returns the findings, most confident first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from bot.decision import Evidence, Finding
from bot.paths import rules_dir
from bot.report.model import Report
from bot.rules.conditions import (
    All,
    Any_,
    Condition,
    EnvCond,
    ExceptionCond,
    FlagCond,
    FlagsOnly,
    FrameCond,
    KindCond,
    ListPatternCond,
    Not,
    SiteCond,
    TextCond,
)
from bot.rules.errors import RuleError
from bot.rules.prefilter import Prefilter, matches_anything, strong_literals
from bot.rules.render import duplicate_key, render, template_context
from bot.rules.schema import Rule, build_rule
from bot.rules.texts import Texts
from bot.rules.versions import is_unordered_dev_build, parse_version
from bot.wording import Wording, wording_of

__all__ = ["DEFAULT_RULES_DIR", "Rule", "RuleError", "RuleSet", "load_rules", "load_rule_file"]

DEFAULT_RULES_DIR = rules_dir()
RULE_SUFFIXES = (".yaml", ".yml")
MAX_RULE_FILE = 1_000_000
# libyaml's parser when PyYAML was built with it (the wheels are): pure-Python parsing was half the load time
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...] = ()
    _order: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _by_id: dict[str, Rule] = field(default_factory=dict, repr=False, compare=False)

    _prefilter: list[Prefilter] = field(default_factory=list, repr=False, compare=False)
    _wording: list[Wording] = field(default_factory=list, repr=False, compare=False)
    # rules that are always evaluated; per text: prefilter slot -> rules that slot makes possible; and the cheap
    # conditions checked as they are, each with the rules it makes possible
    _gates: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        ordered = sorted(self.rules, key=lambda r: (-r.priority, r.id))
        self._order.update({r.id: i for i, r in enumerate(ordered)})
        self._by_id.update({r.id: r for r in self.rules})
        # the prefilter holds the patterns the gates need; a condition's other patterns are searched when its rule
        # is evaluated, which the gates make rare
        gates = [gate(r.match) for r in self.rules]
        prefilter = Prefilter(n for g in gates for n in g or () if not isinstance(n, Condition))
        self._prefilter.append(prefilter)
        self._wording.append(wording_of(tuple(sorted({p.source for r in self.rules for p in text_patterns(r.match)}))))
        always: set[int] = set()
        by_text: dict[str, tuple[dict[int | None, list[int]], list[int]]] = {}
        checks: list[tuple[Condition, frozenset[int]]] = []
        for i, needs in enumerate(gates):
            if needs is None:
                always.add(i)
                continue
            for need in needs:
                if isinstance(need, Condition):
                    checks.append((need, frozenset((i,))))
                    continue
                pattern, source = need
                slots, every = by_text.setdefault(source, ({}, []))
                slots.setdefault(prefilter.slot(source, pattern), []).append(i)
                every.append(i)
        self._gates.update(always=frozenset(always), by_text=by_text, checks=checks)

    def get(self, rule_id: str) -> Rule | None:
        return self._by_id.get(rule_id)

    def evaluate(self, report: Report) -> tuple[Finding, ...]:
        texts = Texts(report, self._prefilter[0], self._wording[0])
        possible = self._possible(texts)
        fired: dict[str, Finding] = {}
        rules = self.rules
        for i in sorted(possible):   # the others: the prefilter proved their match cannot hold
            rule = rules[i]
            finding = evaluate_rule(rule, report, texts)
            if finding is not None:
                fired[rule.id] = finding
        dropped = self._superseded(fired)
        findings = [f for rid, f in fired.items() if rid not in dropped]
        findings.sort(key=lambda f: (-f.confidence, self._order.get(f.rule, 0), f.rule))
        return tuple(findings)

    def _possible(self, texts: Texts) -> set[int]:
        """Indexes of the rules whose gate (see `gate`) the prefilter leaves open: `Texts.may_match` of at least
        one of its patterns, computed from each text's matched slots instead of rule by rule."""
        possible = set(self._gates["always"])
        for source, (slots, every) in self._gates["by_text"].items():
            result = texts.prefiltered(source)
            if result is None:
                possible.update(every)
                continue
            possible.update(slots.get(None, ()))
            for slot in result[0]:
                possible.update(slots.get(slot, ()))
        for cond, rules in self._gates["checks"]:
            if not rules <= possible and cond.check(texts) is not None:
                possible.update(rules)
        return possible

    def _superseded(self, fired: dict[str, Finding]) -> set[str]:
        """Rules dropped because a firing rule supersedes them; in a mutual pair the higher priority wins."""
        by_id = self._by_id
        dropped: set[str] = set()
        for rid in fired:
            rule = by_id[rid]
            for other in rule.supersedes:
                if other not in fired:
                    continue
                mutual = rid in by_id[other].supersedes
                if not mutual or self._order[rid] < self._order[other]:
                    dropped.add(other)
        return dropped


PROSE_TEXTS = ("title", "description", "body", "any")


def text_patterns(cond: Condition) -> list[Any]:
    """The patterns of `text` and `title` conditions that read the reporter's words with typos corrected."""
    if isinstance(cond, TextCond):
        base, _, variant = cond.source.partition(":")
        return [cond.pattern] if base in PROSE_TEXTS and variant != "exact" else []
    if isinstance(cond, All | Any_):
        return [p for c in cond.items for p in text_patterns(c)]
    if isinstance(cond, Not | FlagsOnly):
        return text_patterns(cond.item)
    return []


@lru_cache(maxsize=512)
def rule_wording(rule: Rule) -> Wording:
    """The keywords of one rule, for evaluating it on its own (a RuleSet uses those of all its rules)."""
    return wording_of(tuple(sorted({p.source for p in text_patterns(rule.match)})))


# conditions cheap enough to check as they are when choosing the rules to evaluate: no search of the report's texts
CHEAP = (KindCond, EnvCond, FlagCond, SiteCond, ListPatternCond)

Need = tuple[Any, str] | Condition


def gate(cond: Condition) -> tuple[Need, ...] | None:
    """What `cond` needs, of which at least one must hold for it to hold: (pattern, text) pairs that must be able
    to match, or cheap conditions (CHEAP, an exception type) that must hold as they are; None: no such set."""
    if isinstance(cond, TextCond):
        return ((cond.pattern, cond.source),)
    if isinstance(cond, ExceptionCond):
        return cond.sources() or (cond,)
    if isinstance(cond, FrameCond):
        first = cond.file or cond.function
        return ((first, "frames"),) if first is not None else None
    if isinstance(cond, CHEAP):
        return (cond,)
    if isinstance(cond, FlagsOnly):
        return gate(cond.item)
    if isinstance(cond, All):
        gates = [g for g in map(gate, cond.items) if g is not None]
        return min(gates, key=lambda g: max(map(_cost, g))) if gates else None
    if isinstance(cond, Any_):
        gates = [gate(c) for c in cond.items]
        return None if any(g is None for g in gates) else tuple(p for g in gates if g for p in g)
    return None


def _cost(need: Need) -> int:
    """What a need costs and lets through, least first: a pattern with long literals, searched only in the few texts
    holding them; a condition checked as it is (an exception type, a flag); another pattern, which needs a pass of
    an RE2 Set over every text; a condition or a pattern that holds in most reports (kind: bug, `\\S`)."""
    if isinstance(need, KindCond):
        return 3
    if isinstance(need, Condition):
        return 1
    if strong_literals(need[0]):
        return 0
    return 3 if matches_anything(need[0]) else 2


def evaluate_rule(rule: Rule, report: Report, texts: Texts | None = None) -> Finding | None:
    """The finding of one rule on one report, or None."""
    texts = texts or Texts(report, wording=rule_wording(rule))
    upgrade: str | None = None
    version_text = report.environment.vllm_version
    version = parse_version(version_text)
    if rule.affects is not None and version is not None and not rule.affects.contains(version):
        return None
    if rule.fixed_in is not None:
        fixed = rule.fixed_in
        if version is None:
            upgrade = f"fixed in {fixed}: upgrade to {fixed} or later"
        elif is_unordered_dev_build(version, fixed):
            upgrade = (f"fixed in {fixed}: your development build ({version_text}) may predate the fix; "
                       f"upgrade to {fixed} or later")
        elif version.public and type(version)(version.public) < fixed:
            upgrade = f"fixed in {fixed}: upgrade from {version.public}"
        else:
            return None
    hit = rule.match.check(texts)
    if hit is None:
        return None
    evidence = list(hit.evidence)
    context = template_context(report, texts.flags, hit.captures, hit.exception)
    rendered = {}
    for key in ("explanation", "workaround"):
        try:
            rendered[key] = render(getattr(rule, key), context)
        except Exception as e:  # a template bug in one rule must not break the others
            rendered[key] = rule.title if key == "explanation" else ""
            evidence.append(Evidence(f"{key} template failed", f"{type(e).__name__}: {e}"[:200], "render"))
    key = None
    if rule.duplicate_key is not None:
        try:
            key = duplicate_key(rule.duplicate_key, context)
        except Exception as e:  # no key is safe: the rule then counts as one root cause, as without a key
            evidence.append(Evidence("duplicate_key template failed", f"{type(e).__name__}: {e}"[:200], "render"))
    confidence = rule.confidence if hit.confidence is None else min(rule.confidence, hit.confidence)
    return Finding(
        rule=rule.id, title=rule.title, labels=rule.labels, confidence=confidence,
        explanation=rendered["explanation"], workaround=rendered["workaround"], references=rule.references,
        evidence=tuple(evidence), captures=dict(hit.captures), upgrade=upgrade, duplicate_key=key,
    )


def load_rule_file(path: Path) -> Rule:
    file = _display(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise RuleError(file, None, "file", f"cannot read: {e.strerror}") from None
    if len(raw) > MAX_RULE_FILE:
        raise RuleError(file, None, "file", f"larger than {MAX_RULE_FILE} bytes")
    try:
        docs = list(yaml.load_all(raw.decode("utf-8"), Loader=YAML_LOADER))
    except UnicodeDecodeError:
        raise RuleError(file, None, "file", "not UTF-8") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "yaml"
        raise RuleError(file, None, where, f"YAML does not parse: {getattr(e, 'problem', None) or e}") from None
    if len(docs) != 1:
        raise RuleError(file, None, "file", f"must hold exactly one YAML document, found {len(docs)}")
    return build_rule(docs[0], file, path.stem)


def load_rules(directory: Path | str = DEFAULT_RULES_DIR) -> RuleSet:
    """Every rule file of `directory`, validated; raises the first RuleError."""
    root = Path(directory)
    if not root.is_dir():
        raise RuleError(str(directory), None, "directory", "not a directory")
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for path in sorted(p for p in root.iterdir() if p.suffix in RULE_SUFFIXES and p.is_file()):
        rule = load_rule_file(path)
        if rule.id in seen:
            raise RuleError(rule.file, rule.id, "id", f"duplicate id, also defined in {seen[rule.id]}")
        seen[rule.id] = rule.file
        rules.append(rule)
    check_references(rules)
    return RuleSet(tuple(rules))


def check_references(rules: list[Rule]) -> None:
    """`supersedes` names known rules and forms no cycle longer than a mutual pair."""
    by_id = {r.id: r for r in rules}
    for rule in rules:
        for i, other in enumerate(rule.supersedes):
            if other not in by_id:
                raise RuleError(rule.file, rule.id, f"supersedes[{i}]", f"unknown rule {other!r}")
    for rule in rules:
        stack, seen = [(rule.id, 0)], {rule.id}
        while stack:
            current, depth = stack.pop()
            for nxt in by_id[current].supersedes:
                if nxt == rule.id and depth >= 2:
                    raise RuleError(rule.file, rule.id, "supersedes",
                                    "forms a cycle of three or more rules; only a mutual pair is resolved by priority")
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, depth + 1))


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(DEFAULT_RULES_DIR.parent))
    except ValueError:
        return str(path)
