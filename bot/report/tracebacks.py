"""Python tracebacks (with chained exceptions), bare error lines, and the root cause.

Log lines are read once, in order. Output of different processes is kept apart by the process tag
(`LogLine.stream`), so tracebacks that several workers print at the same time are not mixed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.report.errors import (
    EXC_LINE,
    EXC_MENTION,
    EXC_REPR,
    canonical_builtin,
    has_anchor,
    looks_like_type,
    rank,
    repr_message,
    short_type,
)
from bot.report.logs import LogLine
from bot.report.model import ExceptionInfo, Frame, Traceback

_FRAME = re.compile(
    r'File ["“](?P<file>[^"“”]{1,2000})["”], line (?P<line>\d{1,9})(?:, in (?P<func>\S.{0,300}))?'
    # IPython 8: File /path/to/file.py:1161, in inner(*args, **kwargs)
    r"|File (?P<ipy_file>[^\s,]{1,2000}\.pyx?):(?P<ipy_line>\d{1,9}), in (?P<ipy_func>[\w<>.]{1,300})"
)
_IPYTHON_START = re.compile(r"[A-Za-z_][\w.]{0,200}[ \t]{2,}Traceback \(most recent call last\)")
_CHAIN = (
    "During handling of the above exception, another exception occurred",
    "The above exception was the direct cause of the following exception",
)
_PYTEST_E = re.compile(r"E {1,12}(?=\S)")
_DECOR = " \t*`\"'“”‘’>_~"
_MAX_LINE = 4000          # longer lines are looked at only up to here
_MAX_MESSAGE_LINES = 40
_MAX_MESSAGE_CHARS = 6000
_MAX_GAP = 14             # non-frame lines tolerated inside the frames of one traceback
_MAX_TRACEBACKS = 200
_MAX_FRAMES = 300         # frames kept per exception
_MAX_ERROR_LINES = 60

# the kinds of error line; each is tried only when the text holds its literal (one alternation of them all
# was tried at every position of the line)
_ERROR_LINES: tuple[tuple[str, re.Pattern[str] | None], ...] = (
    # argparse: `vllm serve: error: unrecognized arguments: --foo`, `api_server.py: error: argument --port: …`
    (": error: ", re.compile(r"^[\w.-]{1,60}(?: [\w.-]{1,30}){0,2}: error: ")),
    # `ERROR: …`, `error: …`, rustc's `error[E0425]: …`; a bare "error output" or "ERROR LOG" is a heading
    ("", re.compile(r"^(?:(?:ERROR|error)(?:\[[\w-]{1,20}\])? ?:|FAILED:? |CMake Error|ninja: build stopped|"
                    r"Fatal Python error|nvcc fatal|× |╰─> )")),
    ("fatal error: ", None),
    ("CUDA error: ", re.compile(r"\bCUDA error: ")),
    ("HIP error: ", re.compile(r"\bHIP error: ")),
    ("Segmentation fault", None),
    ("core dumped", None),
    # a compiler's diagnostic on a source line: `attention.cu(42): error: …`, `ops.cpp:12:5: error: …`
    ("error: ", re.compile(r"\.(?:cu|cuh|c|cc|cpp|cxx|h|hpp)(?:\(\d{1,6}\)|:\d{1,6}(?::\d{1,4})?): "
                           r"(?:fatal )?error: ")),
    ("undefined symbol: ", None),
    ("cannot open shared object file", re.compile(r"\bcannot open shared object file\b")),
    ("Killed", re.compile(r"\bKilled\s*$")),
)


def _is_error_line(text: str) -> bool:
    # every error line holds one of these words: most lines are rejected without a search
    if not ("rror" in text or "ERROR" in text or "FAILED" in text or "ninja" in text or "nvcc" in text
            or "fault" in text or "dumped" in text or "symbol" in text or "shared object" in text
            or "Killed" in text or "× " in text or "╰─> " in text):
        return False
    head = text[:1000]
    return any(needle in head and (rx is None or rx.search(head) is not None) for needle, rx in _ERROR_LINES)


_CODE_BEFORE = re.compile(r"(?:except|raise|import|class|catch|isinstance|\(|,)[ \t]*$")
_VLLM_PATH = re.compile(r"(?:^|/)vllm/(?!tests/|benchmarks/|examples/|csrc/|docs/)")


def is_vllm_file(path: str) -> bool:
    """The file lies inside a `vllm/` package directory (not vllm_ascend, not a checkout's tests)."""
    p = path.replace("\\\\", "/").replace("\\", "/")
    last = p.rfind("/vllm/")
    if last < 0:
        return p.startswith("vllm/")
    return bool(_VLLM_PATH.search(p[last:]))


@dataclass
class _Segment:
    frames: list[Frame] = field(default_factory=list)
    type: str | None = None
    message: list[str] = field(default_factory=list)
    line: int = 0
    ray: bool = False         # RayTaskError(Inner): a wrapper that names the inner type
    indent: int = 0           # indentation of the exception line


@dataclass
class _Open:
    process: str | None
    level: str | None
    where: str | None
    start: int
    done: list[ExceptionInfo] = field(default_factory=list)
    seg: _Segment = field(default_factory=_Segment)
    state: str = "frames"       # frames | message | after | chain
    gap: int = 0
    positions: list[int] = field(default_factory=list)
    wrapped: list[bool] = field(default_factory=list)


@dataclass
class _Found:
    exc: ExceptionInfo
    pos: int
    rank: int


def _strip_decor(text: str) -> str:
    """The line without the Markdown or quotes around it; a quote that closes one the message opened stays
    (`No module named 'flash_attn'`)."""
    core = text.lstrip(_DECOR)
    while core and core[-1] in _DECOR:
        last = core[-1]
        if (last in "'\"" and core.count(last) % 2 == 0) or (last == "’" and "‘" in core) or (
                last == "”" and "“" in core):
            break
        core = core[:-1]
    return core


def _parse_exc_line(text: str, *, lenient: bool) -> tuple[str, str, bool] | None:
    """(type, message, is_ray_wrapper) if the whole line is an exception line."""
    if len(text) > _MAX_LINE:
        text = text[:_MAX_LINE]
    if ":" not in text:
        # without a colon the whole line is the type (and a wrapped type): no blank inside
        core = text.rstrip(" \t")
        if " " in core or "\t" in core:
            return None
    m = EXC_LINE.match(text)
    if not m:
        return None
    type_, inner, msg = m.group("type"), m.group("inner"), m.group("msg")
    if inner:  # RayTaskError(ValueError): the inner type is what was raised
        if not (short_type(type_).startswith("Ray") or short_type(type_).endswith("Error")):
            return None
        if not looks_like_type(inner, lenient=True):
            return None
        return inner, (msg or "").strip(), True
    if not looks_like_type(type_, lenient=lenient):
        fixed = canonical_builtin(type_) if type_.lower().endswith("error") else None
        if fixed is None:
            return None
        type_ = fixed
    if msg is None and not lenient:
        return None
    return type_, (msg or "").strip(), False


class _Extractor:
    def __init__(self, log: tuple[LogLine, ...]):
        self.log = log
        self.open: dict[tuple[str | None, int | None], _Open] = {}
        self.tracebacks: list[Traceback] = []
        self.found: list[_Found] = []
        self.error_lines: list[str] = []
        self.anchor: int | None = None
        self.in_fence = False
        self.cut_frames: tuple[Frame, ...] = ()   # the last traceback that stopped before its exception line

    # -- tracebacks -----------------------------------------------------------------------------

    def _finish(self, key: tuple[str | None, int | None]) -> None:
        tb = self.open.pop(key, None)
        if tb is None:
            return
        self._close_segment(tb)
        if not tb.done or len(self.tracebacks) >= _MAX_TRACEBACKS:
            return
        chain = tuple(tb.done)
        self.tracebacks.append(Traceback(chain=chain, process=tb.process))
        # the chain's representative: the newest exception that is not a wrapper
        ranks = [1 if w else rank(e.type, e.message) for e, w in zip(chain, tb.wrapped, strict=True)]
        rep = max(range(len(chain)), key=lambda i: (ranks[i] >= 3, ranks[i] >= 2, i))
        for i, (exc, pos) in enumerate(zip(chain, tb.positions, strict=True)):
            r = ranks[i] if i == rep or ranks[i] < 3 else 2
            self.found.append(_Found(exc, pos, r))

    def _close_segment(self, tb: _Open) -> None:
        seg = tb.seg
        if seg.type is None:
            if seg.frames:
                self.cut_frames = tuple(seg.frames)
            tb.seg = _Segment()
            return
        message = "\n".join(seg.message).strip()
        exc = ExceptionInfo(type=seg.type, message=message, frames=tuple(seg.frames), source="traceback",
                            process=tb.process)
        tb.done.append(exc)
        tb.positions.append(seg.line)
        tb.wrapped.append(seg.ray)
        tb.seg = _Segment()

    def _start(self, key: tuple[str | None, int | None], entry: LogLine, i: int) -> _Open:
        tb = _Open(process=entry.process, level=entry.level, where=entry.where, start=i)
        self.open[key] = tb
        return tb

    def _same_record(self, tb: _Open, entry: LogLine) -> bool:
        """Does this line continue the record the traceback was printed in?"""
        return entry.level == tb.level and (entry.where == tb.where or tb.where is None or entry.where is None)

    def feed(self, i: int, entry: LogLine) -> None:
        text = entry.text[:_MAX_LINE] if len(entry.text) > _MAX_LINE else entry.text
        stripped = text.strip()
        key = (entry.process, entry.pid)   # entry.stream
        tb = self.open.get(key)
        if stripped.startswith(("```", "~~~")):
            self.in_fence = not self.in_fence
        if self.anchor is None and ("Engine" in stripped or "WorkerProc" in stripped) and has_anchor(stripped):
            self.anchor = i

        undecorated = stripped.lstrip(_DECOR)
        if undecorated.startswith(("Traceback (most recent call last)", "Exception Group Traceback")) or (
                "Traceback (most recent" in stripped and _IPYTHON_START.match(stripped)):
            if tb is not None and tb.state == "chain":
                tb.state, tb.gap = "frames", 0
            else:
                self._finish(key)
                tb = self._start(key, entry, i)
            return

        frame = _FRAME.match(undecorated) if undecorated.startswith("File ") else None
        if frame:
            if tb is None or tb.state not in ("frames", "chain"):
                self._finish(key)
                tb = self._start(key, entry, i)
            tb.state, tb.gap = "frames", 0
            file = frame.group("file") or frame.group("ipy_file")
            if len(tb.seg.frames) >= 2 * _MAX_FRAMES:  # deep recursion: keep the outermost and innermost
                del tb.seg.frames[_MAX_FRAMES // 4:-(3 * _MAX_FRAMES // 4)]
            tb.seg.frames.append(Frame(
                file=file, line=int(frame.group("line") or frame.group("ipy_line")),
                function=(frame.group("func") or frame.group("ipy_func") or "").strip() or None,
                is_vllm=is_vllm_file(file),
            ))
            return

        if tb is not None and tb.state in ("message", "after") and any(c in stripped for c in _CHAIN):
            self._close_segment(tb)
            tb.state, tb.gap = "chain", 0
            return

        if tb is not None:
            if tb.state == "frames":
                parsed = _parse_exc_line(_strip_decor(stripped), lenient=True) if stripped else None
                if parsed:
                    type_, msg, ray = parsed
                    tb.seg.type, tb.seg.line = type_, i
                    tb.seg.indent = len(text) - len(text.lstrip())
                    tb.seg.message = [msg] if msg else []
                    tb.seg.ray = ray
                    tb.state, tb.gap = "message", 0
                    return
                tb.gap += 1
                if tb.gap > _MAX_GAP:
                    self._finish(key)
                    self._idle(i, entry, stripped)
                return
            if tb.state == "message":
                if self._continues_message(tb, entry, stripped):
                    tb.seg.message.append(stripped)
                    return
                if not stripped:
                    tb.state, tb.gap = "after", 0
                    return
                self._finish(key)
            elif tb.state in ("after", "chain"):
                if not stripped and tb.gap < 3:
                    tb.gap += 1
                    return
                self._finish(key)
        self._idle(i, entry, stripped)

    def _continues_message(self, tb: _Open, entry: LogLine, stripped: str) -> bool:
        seg = tb.seg
        if not stripped or not self._same_record(tb, entry):
            return False
        if len(seg.message) >= _MAX_MESSAGE_LINES or sum(map(len, seg.message)) > _MAX_MESSAGE_CHARS:
            return False
        if stripped.startswith(("```", "#", "$ ", "<", "root@", ">>>")) or has_anchor(stripped):
            return False
        after_colon = bool(seg.message) and seg.message[-1].endswith(":")
        if not after_colon and _parse_exc_line(_strip_decor(stripped), lenient=False):
            return False
        if entry.level is None and tb.level is None and entry.process is None:
            # untagged text: inside a code block, or indented under the exception line
            if _is_error_line(stripped) and not after_colon:
                return False
            indent = len(entry.text) - len(entry.text.lstrip())
            return not seg.message or after_colon or indent > seg.indent or (self.in_fence and indent >= seg.indent)
        return True

    # -- lines outside tracebacks ------------------------------------------------------------------

    def _idle(self, i: int, entry: LogLine, stripped: str) -> None:
        if not stripped:
            return
        candidate = _strip_decor(stripped) if stripped[0] in _DECOR or stripped[-1] in _DECOR else stripped
        m = _PYTEST_E.match(candidate) if candidate.startswith("E ") else None
        if m:
            candidate = _strip_decor(candidate[m.end():])
        # without a colon or a parenthesis no line is an exception line outside a traceback (no message), nor with a
        # blank before both (the type runs up to one of them)
        parsed = None
        if ":" in candidate or "(" in candidate:
            sp = candidate.find(" ")
            if sp < 0 or candidate.find(":", 0, sp) >= 0 or candidate.find("(", 0, sp) >= 0:
                parsed = _parse_exc_line(candidate, lenient=False)
        if parsed:
            type_, msg, ray = parsed
            if not msg:
                msg = self._message_below(i, entry)
            exc = ExceptionInfo(type=type_, message=msg, source="line", process=entry.process)
            self.found.append(_Found(exc, i, 1 if ray else rank(type_, msg)))
            return
        if entry.level in ("ERROR", "CRITICAL", "FATAL") or _is_error_line(stripped):
            self._error_line(stripped)

    def _message_below(self, i: int, entry: LogLine) -> str:
        """`RuntimeError:` alone on its line: the message is the indented block right below."""
        parts: list[str] = []
        for j in range(i + 1, min(i + 1 + _MAX_MESSAGE_LINES, len(self.log))):
            nxt = self.log[j]
            text = nxt.text.strip()
            if not text or nxt.stream != entry.stream or (nxt.text[:1] not in " \t" and parts):
                break
            parts.append(text[:_MAX_LINE])
        return "\n".join(parts)

    def _error_line(self, text: str) -> None:
        if len(self.error_lines) >= _MAX_ERROR_LINES:
            return
        text = text[:500]
        if text not in self.error_lines:
            self.error_lines.append(text)

    def run(self) -> None:
        feed, idle, open_ = self.feed, self._idle, self.open
        for i, entry in enumerate(self.log):
            text = entry.text
            if (open_ or "File " in text or "Traceback" in text or "```" in text or "~~~" in text
                    or "Engine" in text or "WorkerProc" in text):
                feed(i, entry)
            else:
                # no traceback is open and this line opens none, moves no fence and is no anchor: what feed does
                idle(i, entry, (text[:_MAX_LINE] if len(text) > _MAX_LINE else text).strip())
        for key in list(self.open):
            self._finish(key)


def _key(exc: ExceptionInfo) -> tuple[str, str]:
    return short_type(exc.type), " ".join(exc.first_line.split())[:200].lower()


def _unquote(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "`\"*":
        text = text[1:-1].strip()
    return text.rstrip("`*\"” ").lstrip("`*\"“ ")


def _title_exceptions(title: str) -> list[ExceptionInfo]:
    """Exceptions the title names, as `Type: message`, `Type` or `Type("message")` (a repr)."""
    out: list[ExceptionInfo] = []
    text = title[:1000]
    found = [(m.start(), m.group("type"), _unquote(m.group("msg") or "")) for m in EXC_MENTION.finditer(text)]
    if "(" in text:
        found += [(m.start(), m.group("type"), repr_message(m)) for m in EXC_REPR.finditer(text)]
    for _, type_, msg in sorted(found):
        if looks_like_type(type_):
            out.append(ExceptionInfo(type=type_, message=msg, source="title"))
    return out


def _reprs(text: str, process: str | None) -> list[ExceptionInfo]:
    """Exceptions quoted by their repr inside a line: `... failed with ImportError('libcudart.so.12')`."""
    out = []
    for m in EXC_REPR.finditer(text):
        if looks_like_type(m.group("type")) and not _CODE_BEFORE.search(text[max(0, m.start() - 12):m.start()]):
            out.append(ExceptionInfo(type=m.group("type"), message=repr_message(m), source="mention",
                                     process=process))
    return out


def _mentions(log: tuple[LogLine, ...]) -> tuple[list[ExceptionInfo], list[ExceptionInfo]]:
    """Exception types quoted inside prose: (with a message, bare type only)."""
    with_msg: list[ExceptionInfo] = []
    bare: list[ExceptionInfo] = []
    for entry in log:
        text = entry.text[:_MAX_LINE]
        if not ("Error" in text or "Exception" in text or "Warning" in text or "Exit" in text
                or "Interrupt" in text or "Failed" in text or "Iteration" in text):
            continue
        for m in EXC_MENTION.finditer(text):
            type_ = m.group("type")
            if not looks_like_type(type_) or short_type(type_).endswith("Warning"):
                continue
            if _CODE_BEFORE.search(text[max(0, m.start() - 12):m.start()]):
                continue
            msg = (m.group("msg") or "").strip(" *`'\"“”.")
            exc = ExceptionInfo(type=type_, message=msg, source="mention", process=entry.process)
            (with_msg if msg else bare).append(exc)
        if "(" in text:
            with_msg.extend(_reprs(text, entry.process))
    return with_msg, bare


def _order(found: list[_Found], title: str, cascade: bool, anchor: int | None) -> tuple[ExceptionInfo, ...]:
    if not found:
        return ()
    found = sorted(found, key=lambda f: f.pos)
    # a full traceback is better evidence than a bare line of the same rank
    best = max((f.rank, f.exc.source == "traceback") for f in found)
    top = [f for f in found if (f.rank, f.exc.source == "traceback") == best]
    if best[0] >= 2 and title:
        # the reporter named the error in the title: trust it among the non-wrappers
        title_low = title.lower()
        named = [f for f in found if f.rank >= 2 and re.search(
            r"(?<![\w.])" + re.escape(short_type(f.exc.type).lower()) + r"(?!\w)", title_low)]
        if named:
            top = named
    if cascade:
        before = [f for f in top if anchor is None or f.pos < anchor]
        root = (before or top)[0]
    else:
        root = top[-1]
    root_key = _key(root.exc)
    seen: set[tuple[str, str]] = {root_key}
    rest: list[ExceptionInfo] = []
    for f in found:
        k = _key(f.exc)
        if k in seen:
            continue
        seen.add(k)
        rest.append(f.exc)
    return (*rest, root.exc)


def _merge_title(
    exceptions: tuple[ExceptionInfo, ...], titled: list[ExceptionInfo], *, as_root: bool
) -> tuple[ExceptionInfo, ...]:
    have = {short_type(e.type) for e in exceptions}
    extra = [t for t in titled if short_type(t.type) not in have]
    if not extra:
        return exceptions
    return (*exceptions, *extra) if as_root else (*extra, *exceptions)


@dataclass(frozen=True)
class Errors:
    tracebacks: tuple[Traceback, ...]
    exceptions: tuple[ExceptionInfo, ...]   # the root cause last
    error_lines: tuple[str, ...]            # outside tracebacks
    cut_frames: tuple[Frame, ...]           # a traceback that stops before its exception line (the last one)


def extract_errors(
    log: tuple[LogLine, ...], title: str
) -> tuple[tuple[Traceback, ...], tuple[ExceptionInfo, ...], tuple[str, ...]]:
    """Return (tracebacks, exceptions with the root cause last, error lines outside tracebacks)."""
    found = extract_all(log, title)
    return found.tracebacks, found.exceptions, found.error_lines


def extract_all(log: tuple[LogLine, ...], title: str) -> Errors:
    ex = _Extractor(log)
    ex.run()
    found = ex.found
    cascade = ex.anchor is not None or any(f.rank == 1 for f in found)
    exceptions = _order(found, title or "", cascade, ex.anchor)
    titled = _title_exceptions(title or "")
    if titled and found and max(f.rank for f in found) < 3:
        # the body shows only wrappers or warnings (often a cut excerpt): the title names the error
        exceptions = _merge_title(exceptions, titled, as_root=True)
    elif titled and exceptions:
        exceptions = _merge_title(exceptions, titled, as_root=False)
    if not exceptions:
        with_msg, bare = _mentions(log)
        fallback = [_Found(e, n, 3) for n, e in enumerate(with_msg or bare)]
        # for quotes in prose the first one named is what the report is about
        exceptions = _order(fallback, title or "", True, None)
        if titled:   # the body only quotes errors in prose: the title names the one the report is about
            exceptions = _merge_title(exceptions, titled, as_root=True)
    return Errors(tuple(ex.tracebacks), exceptions, tuple(ex.error_lines), ex.cut_frames)
