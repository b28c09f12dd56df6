"""Pure parser: issue title + body -> Report. No I/O; any input returns a Report."""

from __future__ import annotations

import re

from bot.report.cmdline import extract_commands, merge_flags, model_and_architectures, parse_non_default_args
from bot.report.collect_env import preamble_lines
from bot.report.entities import extract as entity_keys
from bot.report.environment import parse_environment
from bot.report.kind import detect_kind
from bot.report.logs import LogLine, clean_log
from bot.report.model import (
    KINDS_NEEDING_ENV,
    Command,
    Environment,
    ExceptionInfo,
    Frame,
    RaiseSite,
    Report,
    Section,
    Traceback,
)
from bot.report.prose import prose_lines
from bot.report.sections import description_text, split_sections
from bot.report.tracebacks import extract_all

__all__ = [
    "Command", "Environment", "ExceptionInfo", "Frame", "RaiseSite", "Report", "Section", "Traceback", "parse",
]

# Bodies above this are cut to head + tail: the command is near the top, the traceback near the end.
MAX_BODY = 2_000_000
_KEEP = MAX_BODY // 2


def _bounded(text: str | None) -> str:
    if not text:
        return ""
    if isinstance(text, bytes):  # defensive: exports sometimes carry bytes-ish junk
        text = text.decode("utf-8", "replace")
    text = text.replace("\x00", "")
    if len(text) > MAX_BODY:
        text = text[:_KEEP] + "\n…\n" + text[-_KEEP:]
    return text


def parse(title: str | None, body: str | None) -> Report:
    title = _bounded(title)[:1000].strip()
    body = _bounded(body)
    sections = split_sections(body)
    kind, kind_source, title_text = detect_kind(title, body, sections)
    log = clean_log(body)
    lines = tuple([entry.text for entry in log])
    errors = extract_all(_without_env_preamble(body, lines, log), title)
    tracebacks, exceptions, error_lines = errors.tracebacks, errors.exceptions, errors.error_lines
    commands = extract_commands(body, lines)
    nda = parse_non_default_args(lines)
    flags = merge_flags(commands, nda, where=lambda: (
        _offsets(body, commands), _error_offset(body, exceptions, error_lines)))
    model, architectures = model_and_architectures(lines, commands, nda)
    environment, placeholder = parse_environment(title, body, sections, lines)
    needs_info = _needs_info(kind, environment)
    description = description_text(body, sections)
    fields = dict(
        title=title,
        title_text=title_text,
        kind=kind,
        kind_source=kind_source,
        body=body,
        sections=sections,
        description=description,
        prose="\n".join(prose_lines(description)),
        environment=environment,
        environment_placeholder=placeholder,
        log_lines=lines,
        tracebacks=tracebacks,
        cut_frames=errors.cut_frames,
        exceptions=exceptions,
        error_lines=error_lines,
        commands=commands,
        non_default_args=nda,
        flags=flags,
        model=model,
        architectures=architectures,
        needs_info=needs_info,
    )
    # the entity keys read the rest of the report (two constructions cost less than dataclasses.replace)
    return Report(**fields, entities=entity_keys(Report(**fields)))


_QUIET_LEVELS = frozenset({"DEBUG", "INFO", "WARNING", "WARN"})
_QUIET = LogLine("", None, None)


def _without_env_preamble(body: str, lines: tuple[str, ...], log: tuple[LogLine, ...]) -> tuple[LogLine, ...]:
    """The log with collect_env's import-time log warnings blanked: they are not the report's error (a traceback
    of collect_env itself failing is kept)."""
    if "ollecting environment information" not in body:
        return log
    quiet = [i for i in preamble_lines(lines) if log[i].level in _QUIET_LEVELS]
    if not quiet:
        return log
    out = list(log)
    for i in quiet:
        out[i] = _QUIET
    return tuple(out)


def _offsets(body: str, commands: tuple[Command, ...]) -> tuple[int, ...]:
    """Where each command starts in the body (its first words, whatever the spacing), -1 when not found."""
    out = []
    start = 0
    for c in commands:
        words = [w[:200] for w in c.raw.split()[:8]]
        m = (_find_words(body, words, start) or _find_words(body, words, 0)) if words else None
        out.append(m[0] if m else -1)
        if m:
            start = m[1]
    return tuple(out)


# continuation backslashes and line breaks sit between the words of a multi-line command
_WORD_GAP = re.compile(r"[\s\\]+")


def _find_words(body: str, words: list[str], start: int) -> tuple[int, int] | None:
    """(start, end) of the first place at or after `start` where the words follow each other with only blanks and
    backslashes between them; the search of the words joined by _WORD_GAP, without compiling a pattern per command."""
    if any(w[:1] == "\\" for w in words[1:]):   # a gap could end inside such a word: let the regex backtrack
        m = re.compile(r"[\s\\]+".join(re.escape(w) for w in words)).search(body, start)
        return (m.start(), m.end()) if m else None
    first, rest = words[0], words[1:]
    at = body.find(first, start)
    while at >= 0:
        end = at + len(first)
        for w in rest:
            gap = _WORD_GAP.match(body, end)
            if gap is None or not body.startswith(w, gap.end()):
                break
            end = gap.end() + len(w)
        else:
            return at, end
        at = body.find(first, at + 1)
    return None


_ERROR_WORD = re.compile(r"^[^\n]{0,200}?\b(\w*Error|error|Exception)\b ?[:,]", re.MULTILINE)
# what every _ERROR_WORD match contains: only the lines holding it are tried
_ERROR_HINT = re.compile(r"(?:Error|error|Exception) ?[:,]")


def _error_offset(body: str, exceptions: tuple[ExceptionInfo, ...], error_lines: tuple[str, ...]) -> int | None:
    """Where the first traceback, exception or error line starts in the body."""
    found = [i for i in (body.find("Traceback (most recent call last)"),) if i >= 0]
    for text in [e.first_line for e in exceptions[:3]] + list(error_lines[:3]):
        line = text.strip()[:80]
        i = body.find(line) if line else -1
        if i >= 0:
            found.append(i)
    at = _error_word(body)   # "Value error, …" and other error lines the log parser does not keep
    if at is not None:
        found.append(at)
    return min(found) if found else None


def _error_word(body: str) -> int | None:
    """`_ERROR_WORD.search(body).start()`, trying the pattern only at the starts of lines that hold a hint."""
    pos = 0
    while (hint := _ERROR_HINT.search(body, pos)) is not None:
        nl = body.rfind("\n", pos, hint.start())
        line = nl + 1 if nl >= 0 else pos
        if _ERROR_WORD.match(body, line):
            return line
        end = body.find("\n", hint.end())
        if end < 0:
            return None
        pos = end + 1
    return None


def _needs_info(kind: str, env: Environment) -> tuple[str, ...]:
    if kind in KINDS_NEEDING_ENV and not env.vllm_version:
        return ("environment",)
    return ()
