"""Error signatures: exception type + normalised message (+ the innermost vLLM frames).

Two keys per exception, like Socorro's signature and Sentry's fingerprint variants:
  `msg:` type + normalised first line     -> "the same error"
  `frm:` type + innermost vLLM frames     -> "raised at the same place" (only when vLLM frames are visible)
and one per raise site of the root cause, when the source index resolved it (bot/sources/locate.py):
  `site:<file>:<qualname>:<digest of type + template>` -> "the same raise statement", whatever line it sits on in
  the reporter's release, whatever values fill the message's holes, whether quoted in a traceback, an error line
  or only the title.
Wrapper errors that only point at the real cause ("Engine core initialization failed. See root cause above")
carry no signature of their own.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from bot.dupes.normalise import normalise_message, short_type
from bot.dupes.text import is_error_text
from bot.report.model import ExceptionInfo, RaiseSite, Report

TOP_FRAMES = 3
MAX_EXCEPTIONS = 4   # root cause plus the few before it
MAX_ERROR_LINES = 3

# Messages that only say "something failed elsewhere": never a signature on their own.
_WRAPPERS = (
    "engine core initialization failed",
    "see root cause above",
    "please check the stack trace above",
    "see stack trace for root cause",
    "workerproc initialization failed",
    "engine process failed to start",
    "failed to start",
    "hit an exception",
    "encountered a fatal error",
    "initialization failed",
    "background process",
    "enginedeaderror",
    # pip's summary lines: the build error itself is further up
    "did not run successfully",
    "subprocess-exited-with-error",
    "failed building wheel",
    "could not build wheels",
    "failed to build installable wheels",
    "lines of output",
)
_WRAPPER_TYPES = {"EngineDeadError", "KeyboardInterrupt", "SystemExit", "CancelledError"}
_MIN_TEXT = 10  # letters outside placeholders: fewer ("<q>", "ERROR: <num>") say nothing
_PLACEHOLDER = re.compile(r"<[a-z]{1,6}>")


@dataclass(frozen=True)
class Signature:
    type: str             # short type, e.g. "NotImplementedError"
    message: str          # normalised first line
    frames: tuple[str, ...] = ()   # innermost vLLM frames, "file.py:function"
    display: str = ""     # the original first line, shortened, for reasons

    @cached_property
    def key(self) -> str:
        return "msg:" + _digest(f"{self.type}|{self.message}")

    @cached_property
    def frame_key(self) -> str | None:
        if not self.frames:
            return None
        return "frm:" + _digest(f"{self.type}|{'|'.join(self.frames)}")

    def keys(self) -> tuple[str, ...]:
        fk = self.frame_key
        return (self.key, fk) if fk else (self.key,)

    def describe(self, limit: int = 100) -> str:
        text = self.display or self.message
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        return f"{self.type}: {text}" if self.type else text


@lru_cache(maxsize=65536)   # the same signatures are compared with every query they are a candidate for
def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _frame_name(file: str, function: str | None) -> str:
    base = file.replace("\\", "/").rsplit("/vllm/", 1)[-1]
    return f"{base}:{function or '?'}"


def is_wrapper(exc_type: str, normalised: str) -> bool:
    if short_type(exc_type) in _WRAPPER_TYPES:
        return True
    low = normalised.lower()
    letters = sum(c.isalpha() for c in _PLACEHOLDER.sub("", low.removeprefix("error:")))
    return letters < _MIN_TEXT or any(w in low for w in _WRAPPERS)


def exception_signature(exc: ExceptionInfo) -> Signature | None:
    normalised = normalise_message(exc.message)
    if is_wrapper(exc.type, normalised):
        return None
    vllm_frames = [f for f in exc.frames if f.is_vllm]
    frames = tuple(_frame_name(f.file, f.function) for f in vllm_frames[-TOP_FRAMES:])
    display = exc.first_line[:200]
    return Signature(short_type(exc.type), normalised, frames, display)


def line_signature(line: str) -> Signature | None:
    """A signature for an error line outside a traceback ("fatal error: Python.h: No such file or directory")."""
    normalised = normalise_message(line)
    if is_wrapper("", normalised):
        return None
    return Signature("", normalised, (), line.strip()[:200])


def signatures(report: Report) -> tuple[Signature, ...]:
    """The report's signatures, root cause first, without repeats."""
    out: list[Signature] = []
    seen: set[str] = set()
    for exc in reversed(report.exceptions[-MAX_EXCEPTIONS:]):
        sig = exception_signature(exc)
        if sig is not None and sig.key not in seen:
            seen.add(sig.key)
            out.append(sig)
    for line in [e for e in report.error_lines if is_error_text(e)][:MAX_ERROR_LINES]:
        sig = line_signature(line)
        if sig is not None and sig.key not in seen:
            seen.add(sig.key)
            out.append(sig)
    return tuple(out)


SITE_PREFIX = "site:"


def site_key(site: RaiseSite) -> str:
    """The raise statement: its file and function in clear (for reasons), its type and message template digested."""
    return f"{SITE_PREFIX}{site.file}:{site.qualname}:{_digest(f'{site.kind}|{site.type}|{site.message}')}"


def site_keys(report: Report) -> tuple[str, ...]:
    """The root cause's raise sites as keys; none for a wrapper's site (it names no cause) or a log call's (a handler
    reporting what it caught)."""
    sites = report.sites
    if not sites or any(s.wrapper or s.kind == "log" for s in sites):
        return ()
    return tuple(dict.fromkeys(site_key(s) for s in sites))


def describe_site(key: str) -> str:
    """`vllm/config/model.py: ModelConfig.verify_with_parallel_config` from a site key."""
    file, _, rest = key.removeprefix(SITE_PREFIX).partition(":")
    return f"{file}: {rest.rpartition(':')[0]}"
