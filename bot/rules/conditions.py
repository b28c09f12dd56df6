"""Compiled match conditions. Each `check(texts)` returns a Hit (evidence, captures, matched exception) or None."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import re2

from bot.decision import Evidence
from bot.report.errors import rank
from bot.report.model import ExceptionInfo
from bot.rules.regex import Pattern, bounded, line_around
from bot.rules.texts import Texts
from bot.rules.versions import VersionRange, parse_version


@dataclass(frozen=True)
class Hit:
    evidence: tuple[Evidence, ...] = ()
    captures: dict[str, str] = field(default_factory=dict)
    exception: ExceptionInfo | None = None
    confidence: float | None = None      # a cap on the rule's confidence (a `flags_only` branch); None: no cap

    def merged(self, other: Hit) -> Hit:
        captures = dict(other.captures)
        captures.update(self.captures)  # the earlier condition's capture wins
        caps = [c for c in (self.confidence, other.confidence) if c is not None]
        return Hit(self.evidence + other.evidence, captures, self.exception or other.exception,
                   min(caps) if caps else None)


class Condition:
    def check(self, t: Texts) -> Hit | None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def patterns(self) -> tuple[Pattern, ...]:
        return ()

    def sources(self) -> tuple[tuple[Pattern, str], ...]:
        """(pattern, joined text it is searched in) pairs, for the per-report prefilter."""
        return ()


def _ev(cond: Condition, matched: str, where: str) -> tuple[Evidence, ...]:
    return (Evidence(cond.describe(), bounded(matched), where),)


# ---------------------------------------------------------------- combinators

@dataclass(frozen=True)
class All(Condition):
    items: tuple[Condition, ...]

    def check(self, t: Texts) -> Hit | None:
        hit = Hit()
        for cond in self.items:
            h = cond.check(t)
            if h is None:
                return None
            hit = hit.merged(h)
        return hit

    def describe(self) -> str:
        return "all(" + ", ".join(c.describe() for c in self.items) + ")"

    def sources(self) -> tuple[tuple[Pattern, str], ...]:
        return tuple(s for c in self.items for s in c.sources())

    def patterns(self) -> tuple[Pattern, ...]:
        return tuple(p for c in self.items for p in c.patterns())


@dataclass(frozen=True)
class Any_(Condition):
    items: tuple[Condition, ...]

    def check(self, t: Texts) -> Hit | None:
        capped: Hit | None = None
        for cond in self.items:
            h = cond.check(t)
            if h is not None:
                if h.confidence is None:
                    return h
                if capped is None or (capped.confidence or 0) < h.confidence:
                    capped = h   # weaker evidence: kept unless a branch with full evidence holds
        return capped

    def describe(self) -> str:
        return "any(" + ", ".join(c.describe() for c in self.items) + ")"

    def sources(self) -> tuple[tuple[Pattern, str], ...]:
        return tuple(s for c in self.items for s in c.sources())

    def patterns(self) -> tuple[Pattern, ...]:
        return tuple(p for c in self.items for p in c.patterns())


@dataclass(frozen=True)
class Not(Condition):
    item: Condition

    def check(self, t: Texts) -> Hit | None:
        return Hit() if self.item.check(t) is None else None

    def describe(self) -> str:
        return f"not {self.item.describe()}"

    def sources(self) -> tuple[tuple[Pattern, str], ...]:
        return self.item.sources()

    def patterns(self) -> tuple[Pattern, ...]:
        return self.item.patterns()


# ---------------------------------------------------------------- exceptions, frames, logs, text

@dataclass(frozen=True)
class ExceptionCond(Condition):
    types: tuple[str, ...] = ()          # short names
    message: Pattern | None = None
    where: str = "any"                   # root | any
    title: bool = True                   # a title that states the message without a (contrary) type also counts

    @property
    def _messages(self) -> str:
        return "messages" if self.title else "messages:own"

    def check(self, t: Texts) -> Hit | None:
        excs = t.report.exceptions
        if self.message is not None and not t.may_match(self.message, self._messages):
            return None
        candidates = excs[-1:] if self.where == "root" else tuple(reversed(excs))
        for exc in candidates:
            if self.types and exc.short_type not in self.types:
                continue
            if self.message is None:
                return Hit(_ev(self, f"{exc.type}: {exc.first_line}", "exception"), {}, exc)
            data = t.message(exc)
            found = self.message.search(data)
            if found is not None:
                start, end, captures = found
                return Hit(_ev(self, f"{exc.type}: {line_around(data, start, end)}", "exception"), captures, exc)
        if self.title and self.message is not None:
            return self._in_title(t)
        return None

    def _in_title(self, t: Texts) -> Hit | None:
        """The message stated in the title without its type ("[Bug]: No available memory for the cache blocks"),
        when the title names no exception of another type."""
        named = {e.short_type for e in t.report.exceptions if e.source == "title"}
        if self.types and named and not named & set(self.types):
            return None
        data = t.text("title:exact")
        found = self.message.search(data) if self.message is not None else None
        if found is None:
            return None
        start, end, captures = found
        return Hit(_ev(self, line_around(data, start, end), "title"), captures)

    def describe(self) -> str:
        name = "exception" if self.where == "any" else "root exception"
        if self.types:
            name += "[" + "|".join(self.types) + "]"
        return f"{name}.message ~ /{self.message.source}/" if self.message else name

    def patterns(self) -> tuple[Pattern, ...]:
        return (self.message,) if self.message else ()

    def sources(self) -> tuple[tuple[Pattern, str], ...]:
        return ((self.message, self._messages),) if self.message else ()


@dataclass(frozen=True)
class FrameCond(Condition):
    file: Pattern | None = None
    function: Pattern | None = None

    def check(self, t: Texts) -> Hit | None:
        if not all(t.may_match(p, "frames") for p in (self.file, self.function) if p is not None):
            return None
        for frame in t.frames:
            captures: dict[str, str] = {}
            ok = True
            for pattern, value in ((self.file, frame.file), (self.function, frame.function)):
                if pattern is None:
                    continue
                found = pattern.search_text(value or "")
                if found is None:
                    ok = False
                    break
                captures = {**found[1], **captures}
            if ok:
                return Hit(_ev(self, f"{frame.file}:{frame.line} in {frame.function}", "frame"), captures)
        return None

    def describe(self) -> str:
        parts = []
        if self.file:
            parts.append(f"file ~ /{self.file.source}/")
        if self.function:
            parts.append(f"function ~ /{self.function.source}/")
        return "frame(" + ", ".join(parts) + ")"

    def patterns(self) -> tuple[Pattern, ...]:
        return tuple(p for p in (self.file, self.function) if p)

    def sources(self) -> tuple[tuple[Pattern, str], ...]:
        return tuple((p, "frames") for p in (self.file, self.function) if p)


@dataclass(frozen=True)
class TextCond(Condition):
    """`log`, `error`, `title` and `text` conditions: a pattern over one joined text of the report."""

    kind: str           # the condition name, for evidence
    source: str         # log | error | title | description | body | any
    pattern: Pattern

    def check(self, t: Texts) -> Hit | None:
        found = t.search(self.pattern, self.source)
        if found is None:
            return None
        start, end, captures = found
        base = self.source.partition(":")[0]
        where = {"any": "body", "description": "body"}.get(base, base)
        return Hit(_ev(self, line_around(t.text(self.source), start, end), where), captures)

    def describe(self) -> str:
        if self.kind == "text":
            return f"text[{self.source}] ~ /{self.pattern.source}/"
        suffix = self.source.partition(":")[2]
        return f"{self.kind}{'[' + suffix + ']' if suffix else ''} ~ /{self.pattern.source}/"

    def patterns(self) -> tuple[Pattern, ...]:
        return (self.pattern,)

    def sources(self) -> tuple[tuple[Pattern, str], ...]:
        return ((self.pattern, self.source),)


# ---------------------------------------------------------------- values: flags, env, env vars

def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _as_text(value: Any) -> str:
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def values_equal(actual: Any, expected: Any) -> bool:
    """Loose equality of reported values: numbers numerically, booleans by words, text case-insensitively."""
    if isinstance(expected, bool):
        if isinstance(actual, bool):
            return actual is expected
        words = ("true", "1", "yes", "on") if expected else ("false", "0", "no", "off")
        return _as_text(actual).strip().lower() in words
    if isinstance(expected, int | float):
        n = _num(actual)
        return n is not None and n == float(expected)
    if isinstance(expected, str):
        return _as_text(actual).strip().lower() == expected.strip().lower()
    return actual == expected


@dataclass(frozen=True)
class ValueTests:
    """The tests shared by `flag`, `env` and `env_var`: every given test must hold."""

    present: bool | None = None
    eq: Any = None
    ne: Any = None
    in_: tuple[Any, ...] | None = None
    gt: float | None = None
    ge: float | None = None
    lt: float | None = None
    le: float | None = None
    matches: Pattern | None = None
    version: VersionRange | None = None
    has_eq: bool = False
    has_ne: bool = False

    def test(self, value: Any) -> tuple[bool, dict[str, str]]:
        """Tests other than `present`, on one known value."""
        if self.has_eq and not values_equal(value, self.eq):
            return False, {}
        if self.has_ne and values_equal(value, self.ne):
            return False, {}
        if self.in_ is not None and not any(values_equal(value, v) for v in self.in_):
            return False, {}
        if any(b is not None for b in (self.gt, self.ge, self.lt, self.le)):
            n = _num(value)
            if n is None:
                return False, {}
            if (self.gt is not None and not n > self.gt) or (self.ge is not None and not n >= self.ge) \
                    or (self.lt is not None and not n < self.lt) or (self.le is not None and not n <= self.le):
                return False, {}
        if self.version is not None:
            v = parse_version(value)
            if v is None or not self.version.contains(v):
                return False, {}
        captures: dict[str, str] = {}
        if self.matches is not None:
            found = self.matches.search_text(_as_text(value))
            if found is None:
                return False, {}
            captures = found[1]
        return True, captures

    def describe(self) -> str:
        parts = []
        if self.present is not None:
            parts.append("present" if self.present else "absent")
        if self.has_eq:
            parts.append(f"== {self.eq!r}")
        if self.has_ne:
            parts.append(f"!= {self.ne!r}")
        if self.in_ is not None:
            parts.append(f"in {list(self.in_)!r}")
        for op, b in ((">", self.gt), (">=", self.ge), ("<", self.lt), ("<=", self.le)):
            if b is not None:
                parts.append(f"{op} {b:g}")
        if self.version is not None:
            parts.append(f"version {self.version}")
        if self.matches is not None:
            parts.append(f"~ /{self.matches.source}/")
        return " ".join(parts)

    @property
    def only_presence(self) -> bool:
        return not (self.has_eq or self.has_ne or self.in_ is not None or self.matches or self.version
                    or any(b is not None for b in (self.gt, self.ge, self.lt, self.le)))


def _check_values(cond: Condition, tests: ValueTests, values: tuple[Any, ...], where: str,
                  if_unknown: bool = False) -> Hit | None:
    """Shared logic: `values` are the known values (empty = unknown/absent); any one value passing all tests wins."""
    if not values:
        if tests.present is False or (if_unknown and tests.present is None):
            return Hit(_ev(cond, "(not given)", where))
        return None
    if tests.present is False:
        return None
    for value in values:
        ok, captures = tests.test(value)
        if ok:
            return Hit(_ev(cond, _as_text(value), where), captures)
    return None


@dataclass(frozen=True)
class FlagCond(Condition):
    name: str
    path: tuple[str, ...]
    tests: ValueTests

    def check(self, t: Texts) -> Hit | None:
        found, value = t.flag(self.path)
        values = (value,) if found and value is not None else ()
        hit = _check_values(self, self.tests, values, "flag")
        if hit is not None and values:
            return Hit((Evidence(self.describe(), bounded(f"{self.name}={_as_text(value)}"), "flag"),), hit.captures)
        return hit

    def describe(self) -> str:
        return f"flag {self.name} {self.tests.describe()}".rstrip()

    def patterns(self) -> tuple[Pattern, ...]:
        return (self.tests.matches,) if self.tests.matches else ()


VERSION_FIELDS = ("vllm_version", "torch_version", "cuda_version", "rocm_version", "driver_version",
                  "python_version", "transformers_version")
TEXT_FIELDS = ("platform", "os", "gpu", "vllm_version_source", "vllm_commit")
NUMERIC_FIELDS = ("compute_capability", "gpu_count")
ENV_FIELDS = VERSION_FIELDS + TEXT_FIELDS + NUMERIC_FIELDS


@dataclass(frozen=True)
class EnvCond(Condition):
    field: str
    tests: ValueTests
    if_unknown: bool = False

    def _values(self, t: Texts) -> tuple[Any, ...]:
        env = t.report.environment
        if self.field == "gpu":
            return tuple(dict.fromkeys(env.gpus))
        if self.field == "compute_capability":
            return t.compute_capabilities
        if self.field == "gpu_count":
            return (env.gpu_count,) if env.gpus else ()
        value = getattr(env, self.field)
        return (value,) if value not in (None, "") else ()

    def check(self, t: Texts) -> Hit | None:
        return _check_values(self, self.tests, self._values(t), "env", self.if_unknown)

    def describe(self) -> str:
        return f"env {self.field} {self.tests.describe()}".rstrip()

    def patterns(self) -> tuple[Pattern, ...]:
        return (self.tests.matches,) if self.tests.matches else ()


@dataclass(frozen=True, eq=False)
class EnvVarCond(Condition):
    name: str
    tests: ValueTests
    in_text: Any = None   # RE2 regexp finding `NAME=value` in the body

    @classmethod
    def build(cls, name: str, tests: ValueTests) -> EnvVarCond:
        options = re2.Options()
        options.log_errors = False
        regexp = re2.compile(rb"(?:^|[\s'\"])" + re2.escape(name.encode()) + rb"=([^\s'\"`]*)", options)
        return cls(name, tests, regexp)

    def check(self, t: Texts) -> Hit | None:
        env_vars = t.report.environment.env_vars
        if self.name in env_vars:
            values: tuple[Any, ...] = (env_vars[self.name],)
        else:
            key = (id(self.in_text), "body")
            if key not in t._searches:
                t._searches[key] = self.in_text.search(t.text("body")[:2_000_000])
            m = t._searches[key]
            values = (m.group(1).decode("utf-8", "replace"),) if m is not None else ()
        hit = _check_values(self, self.tests, values, "env")
        if hit is not None and values:
            return Hit((Evidence(self.describe(), bounded(f"{self.name}={values[0]}"), "env"),), hit.captures)
        return hit

    def describe(self) -> str:
        return f"env_var {self.name} {self.tests.describe()}".rstrip()

    def patterns(self) -> tuple[Pattern, ...]:
        return (self.tests.matches,) if self.tests.matches else ()


# ---------------------------------------------------------------- configuration as evidence

# conditions that read the reporter's configuration, never the failure: what a `flags_only` branch may hold
CONFIG_CONDITIONS = (FlagCond, EnvCond, EnvVarCond)


@dataclass(frozen=True)
class FlagsOnly(Condition):
    """A branch whose evidence is the configuration alone (flags, environment, model): it holds only when the
    report shows no error that could be the cause (the pasted log stops before it), and caps the finding's
    confidence at `confidence`."""

    item: Condition
    confidence: float

    def check(self, t: Texts) -> Hit | None:
        if _shows_a_cause(t):
            return None
        hit = self.item.check(t)
        if hit is None:
            return None
        note = Evidence("flags_only", "the configuration alone: the report shows no error", "flag")
        return Hit(hit.evidence + (note,), hit.captures, hit.exception, self.confidence)

    def describe(self) -> str:
        return f"flags_only[{self.confidence:g}]({self.item.describe()})"

    def patterns(self) -> tuple[Pattern, ...]:
        return self.item.patterns()


def _shows_a_cause(t: Texts) -> bool:
    """The report shows an error that is not only a wrapper or a warning (bot.report.errors.rank >= 2)."""
    return any(rank(e.type, e.message) >= 2 for e in t.report.exceptions) \
        or bool(t.report.error_lines)


# ---------------------------------------------------------------- kind, architecture, model

@dataclass(frozen=True)
class SiteCond(Condition):
    """The root cause's raise site, located in the source index (Report.sites): one of `sites`, each `file` or
    `file:qualname`, names it. A wrapper's site names no cause and never matches; without an index, nothing does."""

    sites: tuple[tuple[str, str | None], ...]   # (file, qualname or None for any function in it)

    def check(self, t: Texts) -> Hit | None:
        for site in t.report.sites:
            if site.wrapper:
                continue
            for file, qualname in self.sites:
                if site.file == file and (qualname is None or site.qualname == qualname):
                    return Hit(_ev(self, f"{site.file}:{site.line} in {site.qualname} (v{site.release})", "site"))
        return None

    def describe(self) -> str:
        return "site in " + " | ".join(f if q is None else f"{f}:{q}" for f, q in self.sites)


@dataclass(frozen=True)
class KindCond(Condition):
    kinds: tuple[str, ...]

    def check(self, t: Texts) -> Hit | None:
        if t.report.kind in self.kinds:
            return Hit(_ev(self, t.report.kind, "kind"))
        return None

    def describe(self) -> str:
        return "kind in " + "|".join(self.kinds)


@dataclass(frozen=True)
class ListPatternCond(Condition):
    """`architecture` and `model`: a pattern over a few short values."""

    kind: str
    pattern: Pattern

    def _values(self, t: Texts) -> tuple[str, ...]:
        r = t.report
        if self.kind == "architecture":
            return r.architectures
        models = [r.model] + [c.model for c in r.commands]
        flag = r.flags.get("model")
        if isinstance(flag, str):
            models.append(flag)
        return tuple(dict.fromkeys(m for m in models if m))

    def check(self, t: Texts) -> Hit | None:
        for value in self._values(t):
            found = self.pattern.search_text(value)
            if found is not None:
                return Hit(_ev(self, value, self.kind), found[1])
        return None

    def describe(self) -> str:
        return f"{self.kind} ~ /{self.pattern.source}/"

    def patterns(self) -> tuple[Pattern, ...]:
        return (self.pattern,)
