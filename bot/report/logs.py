"""Log cleaning: ANSI codes, nested process tags, logger headers, compose/journald/timestamp/CI-gutter prefixes, \\r.

`clean_log` returns one `LogLine` per body line (same count and order as `body.splitlines()`), so
an index into the log is an index into the body. Every pattern here is anchored at the start of the
line (or the end, for Ray's `[repeated Nx]`) and has no nested unbounded quantifiers.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

LEVELS = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL")


class LogLine(NamedTuple):  # a tuple: one is made per body line, and a tuple is made ~3x faster than a dataclass
    text: str               # the line with every prefix stripped
    process: str | None     # innermost process tag, e.g. "Worker_TP7", "RayWorkerWrapper"
    level: str | None       # INFO | WARNING | ERROR | … when a logger header was present
    pid: int | None = None  # pid of the innermost process tag
    where: str | None = None  # the logger's "file.py:N" when a logger header was present
    tags: tuple[str, ...] = ()  # every process tag, outermost first

    @property
    def stream(self) -> tuple[str | None, int | None]:
        """What separates interleaved output of several processes."""
        return (self.process, self.pid)


# a LogLine made without the Python-level __new__ of a NamedTuple (one is made per body line)
_new = tuple.__new__

# \x1b[...m and friends; the caret-stripped remains "[0;36m" only with the SGR terminator "m".
_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[A-Za-z]|\x1b[()][0-9A-B]|\x1b|\^\[\[[0-9;]{0,32}m|\[\d{1,3}(?:;\d{1,3}){0,8}m")
_BRACKET_DIGIT = re.compile(r"\[\d")
_PROC = re.compile(
    r"\((?P<name>[A-Za-z_][\w .=:/-]{0,80}?)? ?pid=(?P<pid>\d{1,10})"
    r"(?:, ip=[0-9A-Fa-f.:]{1,64})?(?:, node=\w{1,64})?\)[ \t]?"
)
_HEADER_NEW = re.compile(
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)"
    r"(?: \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})?)? \[(?P<where>[\w./<>-]{1,200}:\d{1,7})\][ \t]?"
)
_HEADER_OLD = re.compile(
    r"(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? "
    r"(?P<where>[\w.<>-]{1,200}:\d{1,7})\][ \t]?"
)
_SYSLOG = re.compile(r"[A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d [\w.-]{1,64} [\w./@-]{1,64}(?:\[\d{1,10}\])?:[ \t]?")
_RANK = re.compile(r"\[rank\d{1,6}\]:[ \t]?")
_ISO_TIME = re.compile(
    r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]?[ \t]+"
)
# `[ERROR] ` after a timestamp (Python logging with a bracketed level), `1234 | ` (a CI log's line gutter)
_BRACKET_LEVEL = re.compile(r"\[(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\][ \t]?")
_LINE_GUTTER = re.compile(r"\d{1,7}[ \t]{1,4}\|[ \t]?")
_COMPOSE = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]{0,63})[ \t]+\|[ \t]?")
_REPEATED = re.compile(r"[ \t]*\[repeated \d{1,9}x across cluster\][ \t]*$")
_QUOTE = re.compile(r"(?:>[ \t]?){1,8}(?=\S)")

# the gutter of an ExceptionGroup traceback: `  + Exception Group Traceback …`, `  | File …`, `    | ValueError: …`
_GUTTER = re.compile(r"[ \t]{0,40}[|+](?:[ \t]|$)")

_MAX_STRIPS = 12

# the usual vLLM log line's process tag and logger header at once: what the loop below strips in two steps (the
# atomic groups keep the match of each pattern on its own)
_TAGGED = re.compile(f"(?>{_PROC.pattern})(?>{_HEADER_NEW.pattern})")


def _compose_names(raw_lines: list[str]) -> frozenset[str]:
    """docker compose prefixes (`vllm-1  | `): a name counts when it recurs, or looks like a service."""
    seen: Counter[str] = Counter()
    for line in raw_lines:
        m = _COMPOSE.match(line) if "|" in line else None
        if m:
            seen[m.group("name")] += 1
    return frozenset(
        name for name, n in seen.items()
        if n >= 3 or (n >= 1 and ("vllm" in name.lower() or re.search(r"[-_]\d+$", name)))
    )


def _clean_one(line: str, compose: frozenset[str], groups: bool = False, ansi: bool = True) -> LogLine:
    """`ansi`: whether the text the line comes from may hold an ANSI code (False: none was found in it)."""
    if ansi and ("\x1b" in line or "[" in line):
        line = _ANSI.sub("", line) if ("\x1b" in line or "m" in line) else line
    body = line.lstrip(" \t")
    c = body[:1]
    if not (compose or c in ("(", "[", ">") or c.isdigit() or (groups and c in "|+")
            or (c.isupper() and (body.startswith(LEVELS) or body[3:4] == " "))):
        # no prefix pattern can match here (each needs one of these first characters): prose, dumps, frames
        if line.endswith("cluster]"):
            line = _REPEATED.sub("", line)
        return _new(LogLine, (line.rstrip(), None, None, None, None, ()))
    tags: list[tuple[str, int | None]] = []
    level = where = None
    stripped_any = False
    done = 0
    m = _TAGGED.match(body) if c == "(" else None
    if m:
        name, pid, level, where = m.group("name", "pid", "level", "where")
        name = (name or "").strip()
        if level == "WARN":
            level = "WARNING"
        body = body[m.end():]
        c = body[:1]
        if not (c in ("(", "[", ">") or c.isdigit() or body.startswith(LEVELS) or (groups and c in " \t|+")):
            # what follows starts no other prefix (the usual message): the line is read
            if body.endswith("cluster]"):
                body = _REPEATED.sub("", body)
            return _new(LogLine, (body.rstrip(), name or None, level, int(pid), where, (name,)))
        tags.append((name, int(pid)))
        stripped_any = True
        done = 2
    for _ in range(_MAX_STRIPS - done):
        m = _PROC.match(body) if body[:1] == "(" else None
        if m:
            name = (m.group("name") or "").strip()
            tags.append((name, int(m.group("pid"))))
            body = body[m.end():]
            stripped_any = True
            continue
        if body.startswith(LEVELS):
            m = _HEADER_NEW.match(body) or _HEADER_OLD.match(body)
            if m:
                level = "WARNING" if m.group("level") == "WARN" else m.group("level")
                where = m.group("where")
                body = body[m.end():]
                stripped_any = True
                continue
        if body.startswith("[rank"):
            m = _RANK.match(body)
            if m:
                if not tags:  # torchrun's per-rank prefix separates interleaved ranks like a process tag
                    tags.append((m.group(0).strip(" \t:[]"), None))
                body = body[m.end():]
                stripped_any = True
                continue
        if body[:1].isupper() and not stripped_any:
            m = _SYSLOG.match(body)
            if m:
                body = body[m.end():]
                stripped_any = True
                continue
        if body[:1].isdigit() or body.startswith("["):
            m = _ISO_TIME.match(body)
            if m:
                body = body[m.end():]
                stripped_any = True
                continue
            m = _BRACKET_LEVEL.match(body) if body[:1] == "[" else _LINE_GUTTER.match(body)
            if m:
                if body[:1] == "[":
                    level = "WARNING" if m.group("level") == "WARN" else m.group("level")
                body = body[m.end():]
                stripped_any = True
                continue
        if compose and not stripped_any:
            m = _COMPOSE.match(body)
            if m and m.group("name") in compose:
                body = body[m.end():]
                stripped_any = True
                continue
        if body.startswith(">"):
            m = _QUOTE.match(body)
            if m:
                body = body[m.end():]
                stripped_any = True
                continue
        if groups and body[:1] in " \t|+":
            m = _GUTTER.match(body)
            if m:
                body = body[m.end():]
                stripped_any = True
        break
    text = body if stripped_any else line
    if text.endswith("cluster]"):
        text = _REPEATED.sub("", text)
    process, pid = tags[-1] if tags else (None, None)
    process = process or None
    return _new(LogLine, (text.rstrip(), process, level, pid, where, tuple([name for name, _ in tags])))


def clean_log(body: str) -> tuple[LogLine, ...]:
    if not body:
        return ()
    raw_lines = body.splitlines()
    compose = _compose_names(raw_lines) if "|" in body else frozenset()
    # splitlines() already breaks on "\r", so "\r\n"-joined logger continuations come out clean.
    groups = "Exception Group Traceback" in body
    # what every _ANSI match holds (an escape, a caret form, a bracket before a digit), tested on the whole body:
    # without one no line needs the substitution
    ansi = "\x1b" in body or "^[[" in body or _BRACKET_DIGIT.search(body) is not None
    return tuple([_clean_one(raw, compose, groups, ansi) for raw in raw_lines])
