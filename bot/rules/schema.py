"""Strict validation of one rule file into a `Rule`: unknown keys, wrong types and bad values are RuleErrors.

The contract is docs/rules.md; keep both in step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import re2
from packaging.version import Version

from bot.labels import ALL_LABELS
from bot.report.model import KINDS
from bot.rules.conditions import (
    ENV_FIELDS,
    NUMERIC_FIELDS,
    VERSION_FIELDS,
    All,
    Any_,
    Condition,
    EnvCond,
    EnvVarCond,
    ExceptionCond,
    FlagCond,
    FlagsOnly,
    FrameCond,
    KindCond,
    ListPatternCond,
    Not,
    SiteCond,
    TextCond,
    ValueTests,
)
from bot.rules.errors import RuleError
from bot.rules.regex import Pattern, PatternError
from bot.rules.render import compile_template
from bot.rules.versions import VersionRange, release_version

LABELS = frozenset(ALL_LABELS)

RULE_KEYS = {
    "id": True, "title": True, "labels": True, "confidence": False, "priority": False, "supersedes": False,
    "match": True, "explanation": True, "workaround": True, "references": False, "affects": False,
    "fixed_in": False, "raised_in": False, "duplicate_key": False, "examples": True, "title_evidence": False,
}
EXAMPLE_KEYS = {"title": False, "body": True}
TEXT_IN = ("title", "description", "body", "any")
MAX_EXAMPLE_BODY = 200_000

_ID = re2.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_FLAG = re2.compile(r"^[a-z0-9_]+(?:\.[A-Za-z0-9_\-]+)*$")
_ENV_VAR = re2.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Example:
    title: str
    body: str


@dataclass(frozen=True, eq=False)
class Rule:
    id: str
    file: str
    title: str
    labels: tuple[str, ...]
    match: Condition
    explanation: Any
    workaround: Any
    confidence: float = 0.8
    priority: int = 0
    supersedes: tuple[str, ...] = ()
    references: tuple[str, ...] = ()
    affects: VersionRange | None = None
    fixed_in: Version | None = None
    raised_in: str | None = None
    duplicate_key: Any = None          # compiled template, see render.duplicate_key
    examples_match: tuple[Example, ...] = ()
    examples_no_match: tuple[Example, ...] = ()
    source: dict[str, Any] = field(default_factory=dict, repr=False)


class _Checker:
    """Validates one file; every error names the file, the rule id and a dotted field path."""

    def __init__(self, file: str, rule_id: str | None) -> None:
        self.file, self.rule_id = file, rule_id
        self.title_evidence = True   # the rule's `title_evidence`: error, log and exception conditions read the title

    def fail(self, where: str, message: str) -> RuleError:
        return RuleError(self.file, self.rule_id, where, message)

    def mapping(self, value: Any, where: str, keys: dict[str, bool]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping, not {_tname(value)}")
        for key in value:
            if not isinstance(key, str) or key not in keys:
                raise self.fail(f"{where}.{key}" if where else str(key),
                                f"unknown key; expected one of {', '.join(sorted(keys))}")
        for key, required in keys.items():
            if required and key not in value:
                raise self.fail(f"{where}.{key}" if where else key, "required key is missing")
        return value

    def string(self, value: Any, where: str, *, empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"must be a string, not {_tname(value)}")
        if not empty and not value.strip():
            raise self.fail(where, "must not be empty")
        return value

    def strings(self, value: Any, where: str, *, allow_single: bool = False) -> tuple[str, ...]:
        if allow_single and isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list, not {_tname(value)}")
        return tuple(self.string(v, f"{where}[{i}]") for i, v in enumerate(value))

    def number(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, f"must be a number, not {_tname(value)}")
        return float(value)

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"must be true or false, not {_tname(value)}")
        return value

    def pattern(self, value: Any, where: str) -> Pattern:
        try:
            return Pattern.compile(value)
        except PatternError as e:
            raise self.fail(where, str(e)) from None

    def scalar(self, value: Any, where: str) -> Any:
        if isinstance(value, dict | list) or value is None:
            raise self.fail(where, f"must be a string, number or boolean, not {_tname(value)}")
        return value

    # ------------------------------------------------------------ conditions

    def condition(self, value: Any, where: str) -> Condition:
        if not isinstance(value, dict) or len(value) != 1:
            got = f"a mapping with {len(value)} keys" if isinstance(value, dict) else _tname(value)
            raise self.fail(where, f"a condition is a mapping with exactly one key, not {got}")
        ((name, arg),) = value.items()
        builder = _CONDITIONS.get(name) if isinstance(name, str) else None
        if builder is None:
            raise self.fail(f"{where}.{name}", f"unknown condition; expected one of {', '.join(sorted(_CONDITIONS))}")
        return builder(self, arg, f"{where}.{name}")

    def c_list(self, arg: Any, where: str) -> tuple[Condition, ...]:
        if not isinstance(arg, list) or not arg:
            raise self.fail(where, "must be a non-empty list of conditions")
        return tuple(self.condition(c, f"{where}[{i}]") for i, c in enumerate(arg))

    def c_exception(self, arg: Any, where: str) -> Condition:
        m = self.mapping(arg, where, {"type": False, "message": False, "where": False, "title_evidence": False})
        if "type" not in m and "message" not in m:
            raise self.fail(where, "give `type`, `message` or both")
        types = tuple(t.rsplit(".", 1)[-1] for t in self.strings(m["type"], f"{where}.type", allow_single=True)) \
            if "type" in m else ()
        if "type" in m and not types:
            raise self.fail(f"{where}.type", "must name at least one exception type")
        message = self.pattern(m["message"], f"{where}.message") if "message" in m else None
        scope = m.get("where", "any")
        if scope not in ("root", "any"):
            raise self.fail(f"{where}.where", f"must be root or any, not {scope!r}")
        return ExceptionCond(types, message, scope, self._title(m, where))

    def _title(self, m: dict[str, Any], where: str) -> bool:
        if "title_evidence" in m:
            return self.boolean(m["title_evidence"], f"{where}.title_evidence")
        return self.title_evidence

    def c_machine_text(self, kind: str, arg: Any, where: str) -> Condition:
        """`error` (a bare regex, or `{pattern, title_evidence}`) and `log` (a bare regex: a log line is printed by
        vLLM, a title is written by a person, so `log` never reads the title)."""
        if kind == "log":
            return TextCond(kind, "log:own", self.pattern(arg, where))
        if isinstance(arg, str):
            return TextCond(kind, kind if self.title_evidence else f"{kind}:own", self.pattern(arg, where))
        if not isinstance(arg, dict):
            raise self.fail(where, f"must be a string (a regex) or a mapping, not {_tname(arg)}")
        m = self.mapping(arg, where, {"pattern": True, "title_evidence": False})
        source = kind if self._title(m, where) else f"{kind}:own"
        return TextCond(kind, source, self.pattern(m["pattern"], f"{where}.pattern"))

    def c_title(self, arg: Any, where: str) -> Condition:
        if isinstance(arg, str):
            return TextCond("title", "title", self.pattern(arg, where))
        if not isinstance(arg, dict):
            raise self.fail(where, f"must be a string (a regex) or a mapping, not {_tname(arg)}")
        m = self.mapping(arg, where, {"pattern": True, "exact": False})
        exact = self.boolean(m["exact"], f"{where}.exact") if "exact" in m else False
        return TextCond("title", "title:exact" if exact else "title", self.pattern(m["pattern"], f"{where}.pattern"))

    def c_not(self, arg: Any, where: str) -> Condition:
        item = self.condition(arg, where)
        if _catch_all_with_title(item):
            raise self.fail(where, "`not` of a pattern that matches any text also reads the title, so it never holds "
                                   "for a report with a title: to say 'the body shows no error' add "
                                   "`title_evidence: false` to the inner condition")
        return Not(item)

    def c_flags_only(self, arg: Any, where: str) -> Condition:
        m = self.mapping(arg, where, {"confidence": True, "match": True})
        confidence = self.number(m["confidence"], f"{where}.confidence")
        if not 0 < confidence <= 1:
            raise self.fail(f"{where}.confidence", f"must be above 0 and at most 1, not {confidence}")
        item = self.condition(m["match"], f"{where}.match")
        bad = _not_config(item)
        if bad:
            raise self.fail(f"{where}.match", f"a flags_only branch reads the configuration only (flag, env, env_var, "
                                              f"kind, model, architecture), not {bad}")
        return FlagsOnly(item, confidence)

    def c_frame(self, arg: Any, where: str) -> Condition:
        m = self.mapping(arg, where, {"file": False, "function": False})
        if not m:
            raise self.fail(where, "give `file`, `function` or both")
        return FrameCond(self.pattern(m["file"], f"{where}.file") if "file" in m else None,
                         self.pattern(m["function"], f"{where}.function") if "function" in m else None)

    def c_text(self, arg: Any, where: str) -> Condition:
        if isinstance(arg, str):
            return TextCond("text", "any", self.pattern(arg, where))
        m = self.mapping(arg, where, {"pattern": True, "in": False, "exact": False})
        source = m.get("in", "any")
        if source not in TEXT_IN:
            raise self.fail(f"{where}.in", f"must be one of {', '.join(TEXT_IN)}, not {source!r}")
        if "exact" in m and self.boolean(m["exact"], f"{where}.exact"):
            source += ":exact"
        return TextCond("text", source, self.pattern(m["pattern"], f"{where}.pattern"))

    def value_tests(self, m: dict[str, Any], where: str, *, numeric: bool, version: bool) -> ValueTests:
        kw: dict[str, Any] = {}
        if "present" in m:
            kw["present"] = self.boolean(m["present"], f"{where}.present")
        if "eq" in m:
            kw["eq"], kw["has_eq"] = self.scalar(m["eq"], f"{where}.eq"), True
        if "ne" in m:
            kw["ne"], kw["has_ne"] = self.scalar(m["ne"], f"{where}.ne"), True
        if "in" in m:
            if not isinstance(m["in"], list) or not m["in"]:
                raise self.fail(f"{where}.in", "must be a non-empty list")
            kw["in_"] = tuple(self.scalar(v, f"{where}.in[{i}]") for i, v in enumerate(m["in"]))
        for op in ("gt", "ge", "lt", "le"):
            if op in m:
                if not numeric:
                    raise self.fail(f"{where}.{op}", "numeric comparison is not available for this field")
                kw[op] = self.number(m[op], f"{where}.{op}")
        if "matches" in m:
            kw["matches"] = self.pattern(m["matches"], f"{where}.matches")
        if "version" in m:
            if not version:
                raise self.fail(f"{where}.version", f"`version` applies to {', '.join(VERSION_FIELDS)} only")
            try:
                kw["version"] = VersionRange(m["version"])
            except ValueError as e:
                raise self.fail(f"{where}.version", str(e)) from None
        tests = ValueTests(**kw)
        if tests.present is False and not tests.only_presence:
            raise self.fail(f"{where}.present", "`present: false` cannot be combined with value tests")
        if tests.present is None and tests.only_presence:
            raise self.fail(where, "give at least one test (present, eq, ne, in, gt, ge, lt, le, matches, version)")
        return tests

    def c_flag(self, arg: Any, where: str) -> Condition:
        keys = dict.fromkeys(("present", "eq", "ne", "in", "gt", "ge", "lt", "le", "matches"), False)
        m = self.mapping(arg, where, {"name": True, **keys})
        raw = self.string(m["name"], f"{where}.name")
        head, _, rest = raw.strip().lstrip("-").partition(".")
        name = head.replace("-", "_") + ("." + rest if rest else "")
        if _FLAG.search(name) is None:
            raise self.fail(f"{where}.name", f"{raw!r} is not a snake_case flag name (dotted path allowed)")
        tests = self.value_tests(m, where, numeric=True, version=False)
        return FlagCond(name, tuple(name.split(".")), tests)

    def c_env(self, arg: Any, where: str) -> Condition:
        keys = dict.fromkeys(("version", "in", "matches", "present", "eq", "ne", "gt", "ge", "lt", "le",
                              "if_unknown"), False)
        m = self.mapping(arg, where, {"field": True, **keys})
        env_field = m["field"]
        if env_field not in ENV_FIELDS:
            raise self.fail(f"{where}.field", f"unknown environment field {env_field!r}; expected one of "
                                              f"{', '.join(ENV_FIELDS)}")
        tests = self.value_tests(m, where, numeric=env_field in NUMERIC_FIELDS,
                                 version=env_field in VERSION_FIELDS)
        if_unknown = self.boolean(m["if_unknown"], f"{where}.if_unknown") if "if_unknown" in m else False
        return EnvCond(env_field, tests, if_unknown)

    def c_env_var(self, arg: Any, where: str) -> Condition:
        keys = dict.fromkeys(("present", "eq", "ne", "in", "matches"), False)
        m = self.mapping(arg, where, {"name": True, **keys})
        name = self.string(m["name"], f"{where}.name")
        if _ENV_VAR.search(name) is None:
            raise self.fail(f"{where}.name", f"{name!r} is not an environment variable name")
        return EnvVarCond.build(name, self.value_tests(m, where, numeric=False, version=False))

    def c_site(self, arg: Any, where: str) -> Condition:
        names = self.strings(arg, where, allow_single=True)
        if not names:
            raise self.fail(where, "must name at least one site")
        sites: list[tuple[str, str | None]] = []
        for i, name in enumerate(names):
            file, _, qualname = name.partition(":")
            if _SITE_FILE.fullmatch(file) is None or (qualname and _QUALNAME.fullmatch(qualname) is None):
                raise self.fail(f"{where}[{i}]", f"{name!r} is not `path/to/module.py` or "
                                                 "`path/to/module.py:Class.function`")
            sites.append((file, qualname or None))
        return SiteCond(tuple(sites))

    def c_kind(self, arg: Any, where: str) -> Condition:
        kinds = self.strings(arg, where, allow_single=True)
        for i, k in enumerate(kinds):
            if k not in KINDS:
                raise self.fail(f"{where}[{i}]", f"unknown kind {k!r}; expected one of {', '.join(KINDS)}")
        if not kinds:
            raise self.fail(where, "must name at least one kind")
        return KindCond(kinds)


_SITE_FILE = re.compile(r"[A-Za-z_][\w.-]*(/[\w.-]+)*\.py")
_QUALNAME = re.compile(r"[A-Za-z_<][\w<>]*(\.[A-Za-z_<][\w<>]*)*")


def _machine_text(kind: str):
    def build(self: _Checker, arg: Any, where: str) -> Condition:
        return self.c_machine_text(kind, arg, where)
    return build


_UNRELATED = (b"x", b"How do I stream tokens from the LLM class?", b"Q")


def _catch_all_with_title(cond: Condition) -> bool:
    """An `error`/`log`/`exception` condition that reads the title and whose pattern matches any text at all."""
    if isinstance(cond, TextCond) and cond.source == "error":
        pattern = cond.pattern
    elif isinstance(cond, ExceptionCond) and cond.title and cond.message is not None:
        pattern = cond.message
    else:
        return False
    return all(pattern.search(text) is not None for text in _UNRELATED)


def _not_config(cond: Condition) -> str | None:
    """The first condition in `cond` that reads something other than the configuration, described; None if none."""
    if isinstance(cond, All | Any_):
        return next((bad for c in cond.items if (bad := _not_config(c))), None)
    if isinstance(cond, Not):
        return _not_config(cond.item)
    if isinstance(cond, FlagCond | EnvCond | EnvVarCond | KindCond | ListPatternCond):
        return None
    return cond.describe()


def _list_pattern(kind: str):
    def build(self: _Checker, arg: Any, where: str) -> Condition:
        return ListPatternCond(kind, self.pattern(arg, where))
    return build


_CONDITIONS = {
    "all": lambda self, arg, where: All(self.c_list(arg, where)),
    "any": lambda self, arg, where: Any_(self.c_list(arg, where)),
    "not": lambda self, arg, where: self.c_not(arg, where),
    "exception": _Checker.c_exception,
    "error": _machine_text("error"),
    "frame": _Checker.c_frame,
    "log": _machine_text("log"),
    "text": _Checker.c_text,
    "title": _Checker.c_title,
    "flags_only": _Checker.c_flags_only,
    "flag": _Checker.c_flag,
    "env": _Checker.c_env,
    "env_var": _Checker.c_env_var,
    "kind": _Checker.c_kind,
    "site": _Checker.c_site,
    "architecture": _list_pattern("architecture"),
    "model": _list_pattern("model"),
}


def _tname(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def build_rule(data: Any, file: str, expected_id: str) -> Rule:
    """Validate one parsed YAML document. `expected_id` is the file name without `.yaml`."""
    rule_id = data.get("id") if isinstance(data, dict) and isinstance(data.get("id"), str) else None
    c = _Checker(file, rule_id)
    m = c.mapping(data, "", RULE_KEYS)
    rule_id = c.string(m["id"], "id")
    if _ID.search(rule_id) is None:
        raise c.fail("id", f"{rule_id!r} is not kebab-case (lowercase letters, digits, single dashes)")
    if rule_id != expected_id:
        raise c.fail("id", f"must equal the file name {expected_id!r}")
    title = c.string(m["title"], "title")
    if "\n" in title.strip():
        raise c.fail("title", "must be one line")
    labels = c.strings(m["labels"], "labels")
    for i, label in enumerate(labels):
        if label not in LABELS:
            raise c.fail(f"labels[{i}]", f"unknown label {label!r}; the taxonomy is in docs/rules.md")
    if len(set(labels)) != len(labels):
        raise c.fail("labels", "lists a label twice")
    confidence = c.number(m.get("confidence", 0.8), "confidence")
    if not 0 <= confidence <= 1:
        raise c.fail("confidence", f"must be between 0 and 1, not {confidence}")
    if "title_evidence" in m:
        c.title_evidence = c.boolean(m["title_evidence"], "title_evidence")
    priority = m.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise c.fail("priority", f"must be an integer, not {_tname(priority)}")
    supersedes = c.strings(m.get("supersedes", []), "supersedes")
    if rule_id in supersedes:
        raise c.fail("supersedes", "a rule cannot supersede itself")
    match = c.condition(m["match"], "match")
    templates = {}
    for key in ("explanation", "workaround"):
        template, error = compile_template(m[key])
        if error:
            raise c.fail(key, error)
        templates[key] = template
    references = c.strings(m.get("references", []), "references")
    affects = None
    if "affects" in m:
        try:
            affects = VersionRange(m["affects"])
        except ValueError as e:
            raise c.fail("affects", str(e)) from None
    fixed_in = None
    if "fixed_in" in m:
        if not isinstance(m["fixed_in"], str):
            raise c.fail("fixed_in", f"must be a quoted version string such as '0.18.0', not {_tname(m['fixed_in'])}")
        try:
            fixed_in = release_version(m["fixed_in"])
        except ValueError as e:
            raise c.fail("fixed_in", str(e)) from None
    raised_in = c.string(m["raised_in"], "raised_in") if "raised_in" in m else None
    duplicate_key = None
    if "duplicate_key" in m:
        source = c.string(m["duplicate_key"], "duplicate_key")
        if "\n" in source.strip() or len(source) > 200:
            raise c.fail("duplicate_key", "must be one short line (a template such as '{{ captures.arch }}')")
        if "{{" not in source:
            raise c.fail("duplicate_key", "must interpolate something from the match, e.g. '{{ captures.arch }}'; "
                                          "a constant key says nothing the rule id does not")
        duplicate_key, error = compile_template(source)
        if error:
            raise c.fail("duplicate_key", error)
    ex = c.mapping(m["examples"], "examples", {"match": True, "no_match": True})
    examples = {}
    for key in ("match", "no_match"):
        items = ex[key]
        if not isinstance(items, list) or not items:
            raise c.fail(f"examples.{key}", "must be a non-empty list of {title?, body}")
        parsed = []
        for i, item in enumerate(items):
            where = f"examples.{key}[{i}]"
            e = c.mapping(item, where, EXAMPLE_KEYS)
            body = c.string(e["body"], f"{where}.body")
            if len(body) > MAX_EXAMPLE_BODY:
                raise c.fail(f"{where}.body", f"longer than {MAX_EXAMPLE_BODY} characters")
            title_text = c.string(e["title"], f"{where}.title") if "title" in e else ""
            parsed.append(Example(title_text, body))
        examples[key] = tuple(parsed)
    return Rule(
        id=rule_id, file=file, title=title.strip(), labels=labels, match=match,
        explanation=templates["explanation"], workaround=templates["workaround"],
        confidence=confidence, priority=priority, supersedes=supersedes, references=references,
        affects=affects, fixed_in=fixed_in, raised_in=raised_in, duplicate_key=duplicate_key,
        examples_match=examples["match"], examples_no_match=examples["no_match"], source=m,
    )
