"""What an exception line looks like, and which exceptions are wrappers rather than causes.

Pure string helpers shared by the traceback extractor; every pattern is anchored or bounded.
"""

from __future__ import annotations

import builtins
import re

# `Type: message`, `module.Type: message`, `Type` alone, `ray.exceptions.RayTaskError(ValueError): …`
# (the type's words are possessive: giving back a word character can never let what follows match)
EXC_LINE = re.compile(
    r"(?P<type>[A-Za-z_]\w{0,120}+(?:\.[A-Za-z_]\w{0,120}+){0,10}+)"
    r"(?:\((?P<inner>[A-Za-z_][\w.]{0,200})\))?"
    r"(?::[ \t]?(?P<msg>.*)|[ \t]*)$"
)
# an exception type quoted inside prose: `RuntimeError`, torch.OutOfMemoryError, HarmonyError: msg
EXC_MENTION = re.compile(
    r"(?<![\w.])(?P<type>(?:[a-z_][a-z0-9_]{0,40}\.){0,6}[A-Z][A-Za-z0-9_]{0,80}"
    r"(?:Error|Exception|Warning|Exit|Interrupt|Failed|Iteration))(?![\w.(])(?::[ \t]{0,4}(?P<msg>[^`\"“”\n]{0,600}))?"
)

# an exception shown by its repr: `ValueError("type fp8e4nv not supported")`, `failed with ImportError('libcudart')`
EXC_REPR = re.compile(
    r"(?<![\w.])(?P<type>(?:[a-z_][a-z0-9_]{0,40}\.){0,6}[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception|Exit|Interrupt))"
    r"\(\s{0,4}[rbuf]?(?:\"(?P<dq>[^\"\n]{1,600})|'(?P<sq>[^'\n]{1,600}))"
)


def repr_message(m: re.Match[str]) -> str:
    """The message of an EXC_REPR match, up to its closing quote (the other quote may be inside it)."""
    return (m.group("dq") or m.group("sq") or "").strip()

KNOWN_TYPES = frozenset({
    "StopIteration", "StopAsyncIteration", "KeyboardInterrupt", "SystemExit", "GeneratorExit",
    "HarmonyError", "NotImplementedError", "BackendCompilerFailed", "InductorError", "OutOfResources",
    "Unsupported", "CancelledError", "EngineDeadError", "ProcessRaisedException", "ValidationError",
    "JSONDecodeError", "UnpicklingError", "CompilationError", "TorchRuntimeError", "ExceptionGroup",
    "BaseExceptionGroup",
})
_SUFFIXES = ("Error", "Exception", "Warning", "Exit", "Interrupt", "Failed", "Failure")
_NOT_TYPES = frozenset({"Error", "Warning", "Note", "Hint", "Failed", "Failure", "Exit", "Interrupt"})

# Exceptions that report someone else's failure: never the root cause when something else was raised.
WRAPPER_TYPES = frozenset({
    "EngineDeadError", "SystemExit", "KeyboardInterrupt", "CalledProcessError", "ChildProcessError",
    "CancelledError", "RayTaskError", "RayActorError", "ActorDiedError", "ProcessRaisedException",
    "BrokenProcessPool", "ExceptionGroup", "BaseExceptionGroup",
})
WRAPPER_MESSAGES = (
    "engine core initialization failed",
    "workerproc initialization failed",
    "worker failed with error",
    "engine process failed to start",
    "engine core proc",
    "engine core failed to start",
    "engine loop has died",
    "background loop has errored",
    "initialization failed due to an exception in a background process",
    "see root cause above",
    "see stack trace for the root cause",
    "failed core proc",
    "subprocess-exited-with-error",
)
# Errors that follow from another process dying.
CONSEQUENCE_TYPES = frozenset({
    "EOFError", "BrokenPipeError", "ConnectionResetError", "ConnectionRefusedError", "ConnectionAbortedError",
    "ZMQError", "ClosedResourceError", "EndOfStream", "RemoteDisconnected", "IncompleteRead",
})
# the client side of an HTTP call: the server's log, when pasted, holds the cause
CLIENT_MODULES = ("openai.", "requests.", "httpx.", "httpcore.", "aiohttp.", "urllib3.", "litellm.")
CLIENT_TYPES = frozenset({
    "InternalServerError", "APIConnectionError", "APITimeoutError", "APIStatusError", "RemoteProtocolError",
    "ReadTimeout", "ServerDisconnectedError", "ClientConnectorError", "ClientResponseError", "ChunkedEncodingError",
})
# Log lines that announce a fatal failure whose cause was logged earlier (or right after).
ANCHORS = (
    "Engine core initialization failed",
    "EngineCore failed to start",
    "WorkerProc failed to start",
    "EngineCore encountered a fatal error",
    "WorkerProc hit an exception",
    "Engine process failed to start",
)
def has_anchor(text: str) -> bool:
    # every anchor holds "Engine" or "WorkerProc": a cheap test before trying each one
    return ("Engine" in text or "WorkerProc" in text) and any(a in text for a in ANCHORS)


# Python's built-in exceptions, so that a lower-cased paste ("valueerror: …") is still recognised
BUILTIN_TYPES = {
    name.lower(): name
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException) and name[0].isupper()
}


def canonical_builtin(name: str) -> str | None:
    """`valueerror` → `ValueError` for built-in exception names typed in the wrong case."""
    return BUILTIN_TYPES.get(name.lower()) if "." not in name and len(name) < 40 else None


def short_type(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def looks_like_type(name: str, *, lenient: bool = False) -> bool:
    """Does `name` look like an exception class? Lenient: the line that closes a traceback."""
    short = short_type(name)
    if not short or short in _NOT_TYPES or not (short[0].isupper() or short[0] == "_"):
        return False
    if short in KNOWN_TYPES or short.endswith(_SUFFIXES):
        return True
    if lenient:
        # torch._dynamo.exc.Unsupported, triton.runtime.errors.OutOfResources, …: qualified CamelCase
        return "." in name and short[:1].isupper() and not short.isupper() and name[:1].islower()
    return False


def rank(type_: str, message: str) -> int:
    """3 a cause, 2 a consequence of another failure, 1 a wrapper, 0 a warning."""
    short = short_type(type_)
    if short.endswith("Warning"):
        return 0
    low = message[:400].lower()
    if short in WRAPPER_TYPES or any(m in low for m in WRAPPER_MESSAGES):
        return 1
    if short in CONSEQUENCE_TYPES or short in CLIENT_TYPES or type_.startswith(CLIENT_MODULES):
        return 2
    return 3
