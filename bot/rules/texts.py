"""The searchable texts of one report, joined and encoded once and shared by every rule."""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

from bot.report.model import ExceptionInfo, Frame, Report
from bot.rules.gpu import compute_capability
from bot.rules.regex import MAX_SEARCH_BYTES

# One log line longer than this is cut before joining: nothing a rule needs sits 8 KB into a line.
MAX_LINE = 8_000
# Exception messages are cut to this before searching.
MAX_MESSAGE = 64_000
# A JSON flag value longer than this stays a string.
MAX_JSON_FLAG = 20_000


class Texts:
    """Per-report cache: joined texts as UTF-8 bytes, derived values, and memoised pattern searches."""

    def __init__(self, report: Report, prefilter: Any = None, wording: Any = None) -> None:
        self.report = report
        self.prefilter = prefilter
        self.wording = wording          # bot.wording.Wording of the rule set's text patterns, or None
        self._possible: dict[str, Any] = {}
        self._bytes: dict[str, bytes] = {}
        self._parts: dict[str, list[str]] = {}
        self._machines: dict[str, str] = {}
        self._part_bits: dict[int, int | None] = {}
        self._searches: dict[tuple[int, str], Any] = {}
        self._flags: dict[str, Any] | None = None
        self._frames: tuple[Frame, ...] | None = None
        self._messages: dict[int, bytes] = {}
        self._title: str | None = None
        self._prose: tuple[str | None] | None = None

    def text(self, name: str) -> bytes:
        data = self._bytes.get(name)
        if data is None:
            data = self._build(name).encode("utf-8", "replace")[:MAX_SEARCH_BYTES]
            self._bytes[name] = data
        return data

    def prefiltered(self, name: str) -> Any:
        """The prefilter's result over text `name` (see Prefilter.run), computed once; None when unknown. The
        literals of each part of the text are found once, however many texts join it."""
        if self.prefilter is None:
            return None
        if name not in self._possible:
            if not self.prefilter.holds(name):
                self._possible[name] = None
                return None
            parts = self.parts(name)
            bits: int | None = self.prefilter.joined_bits if len(parts) > 1 else 0
            for part in parts:
                found = self._part_bits.get(id(part), -1)
                if found == -1:
                    found = self.prefilter.bits(part.encode("utf-8", "replace")[:MAX_SEARCH_BYTES])
                    self._part_bits[id(part)] = found
                if found is None:
                    bits = None
                    break
                bits |= found
            self._possible[name] = self.prefilter.run_joined(name, bits, lambda: self.text(name))
        return self._possible[name]

    def may_match(self, pattern: Any, name: str) -> bool:
        """False only when the prefilter's single pass over text `name` proved the pattern matches nowhere."""
        result = self.prefiltered(name)
        if result is None:
            return True
        matched, index = result
        slot = index.get(id(pattern))
        return slot is None or slot in matched

    def _build(self, name: str) -> str:
        return "\n".join(self.parts(name))

    def parts(self, name: str) -> list[str]:
        """The parts that, joined by line breaks, are the text `name`. Without a suffix, the title is evidence
        too: `error`, `log` and `messages` end with the title's line, and `title`, `description`, `body` and `any`
        are read with words corrected toward the rules' keywords (bot/wording.py). `NAME:own` is the report's own
        text only (`error:own`: the body's errors), `NAME:exact` the text as written."""
        parts = self._parts.get(name)
        if parts is None:
            parts = self._parts[name] = self._split(name)
        return parts

    def _split(self, name: str) -> list[str]:
        r = self.report
        base, _, variant = name.partition(":")
        if base in ("log", "error", "messages"):
            text = self._machines.get(base)
            if text is None:
                text = self._machines[base] = self._machine(base)
            title = r.title_text or r.title
            return [text, title] if variant != "own" and title else [text]
        if base == "frames":
            return ["\n".join(f"{f.file}\n{f.function or ''}" for f in self.frames)]
        if base == "title":
            parts = [r.title]
        elif base == "description":
            parts = [r.description or r.body]
        elif base == "body":
            parts = [r.body]
        elif base == "any":
            parts = [r.title, r.description or r.body]
        else:
            raise KeyError(name)
        if variant == "exact" or self.wording is None:
            return parts
        # the reporter's words as corrected, after the text as written: a keyword matches either
        fixed = [self.corrected_title] if base in ("title", "any") and self.corrected_title is not r.title else []
        if base != "title" and self.corrected_prose is not None:
            fixed.append(self.corrected_prose)
        return parts + fixed

    def _machine(self, name: str) -> str:
        r = self.report
        if name == "log":
            return _joined(r.log_lines)
        if name == "error":
            lines = [f"{e.type}: {e.message[:MAX_MESSAGE]}" for e in r.exceptions]
            if r.error_lines:
                lines.append(_joined(r.error_lines))
            return "\n".join(lines)
        return "\n".join(e.message[:MAX_MESSAGE] for e in r.exceptions)

    @property
    def corrected_prose(self) -> str | None:
        """The reporter's prose with words corrected, or None when correcting changed nothing."""
        if self._prose is None:
            prose = self.report.prose or ""
            corrected = prose if self.wording is None else self.wording.correct(prose)
            self._prose = (corrected if corrected is not prose else None,)
        return self._prose[0]

    @property
    def corrected_title(self) -> str:
        if self._title is None:
            title = self.report.title
            self._title = title if self.wording is None else self.wording.correct(title)
        return self._title

    def search(self, pattern: Any, name: str) -> Any:
        """`pattern.search(text(name))`, computed once per report and pattern."""
        key = (id(pattern), name)
        if key not in self._searches:
            self._searches[key] = pattern.search(self.text(name)) if self.may_match(pattern, name) else None
        return self._searches[key]

    def message(self, exc: ExceptionInfo) -> bytes:
        key = id(exc)
        data = self._messages.get(key)
        if data is None:
            data = exc.message[:MAX_MESSAGE].encode("utf-8", "replace")
            self._messages[key] = data
        return data

    @property
    def frames(self) -> tuple[Frame, ...]:
        if self._frames is None:
            seen: set[int] = set()
            frames: list[Frame] = []
            chains = [tb.chain for tb in self.report.tracebacks] + [self.report.exceptions]
            for chain in chains:
                for exc in chain:
                    for f in exc.frames:
                        if id(f) not in seen:
                            seen.add(id(f))
                            frames.append(f)
            self._frames = tuple(frames)
        return self._frames

    @property
    def flags(self) -> dict[str, Any]:
        """The report's flags with JSON-valued strings (`--speculative-config '{…}'`) decoded."""
        if self._flags is None:
            self._flags = {str(k): decode_json_value(v) for k, v in self.report.flags.items()}
        return self._flags

    def flag(self, path: tuple[str, ...]) -> tuple[bool, Any]:
        """(found, value) of a dotted flag path."""
        value: Any = self.flags
        for part in path:
            value = decode_json_value(value)
            if isinstance(value, dict):
                if part not in value:
                    alt = part.replace("_", "-")
                    if alt not in value:
                        return False, None
                    part = alt
                value = value[part]
            elif isinstance(value, list | tuple) and part.isdigit() and int(part) < len(value):
                value = value[int(part)]
            else:
                return False, None
        return True, value

    @cached_property
    def compute_capabilities(self) -> tuple[float, ...]:
        ccs = (compute_capability(g) for g in self.report.environment.gpus)
        return tuple(sorted({c for c in ccs if c is not None}))


def _joined(lines: tuple[str, ...]) -> str:
    """The lines joined, each cut to MAX_LINE (one pass of `max` finds that none needs cutting)."""
    if not lines or max(map(len, lines)) <= MAX_LINE:
        return "\n".join(lines)
    return "\n".join(line[:MAX_LINE] for line in lines)


def decode_json_value(value: Any) -> Any:
    if isinstance(value, str):
        s = value.strip()
        if len(s) >= 2 and len(s) <= MAX_JSON_FLAG and s[0] in "{[" and s[-1] in "}]":
            try:
                return json.loads(s)
            except ValueError:
                return value
    return value
