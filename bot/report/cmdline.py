"""Command lines (vllm serve, api_server, docker, compose, LLM(...)), flags and `non-default args`.

Python snippets and dict reprs are read with `ast` (parse / literal_eval), never evaluated.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable
from typing import Any

import yaml

from bot.report.model import Command
from bot.report.shell import OPERATOR, parse_flags, tokenize

_MAX_LOGICAL = 20_000     # characters of one command after joining continuations
_MAX_COMMANDS = 30
_MAX_CALL = 20_000        # characters of one LLM(...) call
_MAX_CALLS = 200          # LLM(...) calls looked at
_MAX_REPR = 50_000        # characters of one `non-default args` / `Namespace(...)` repr
_MAX_CUTS = 40            # attempts at closing a cut repr

_PROMPT = re.compile(
    r"(?:\([\w.-]{1,64}\)[ \t]{0,4})?"
    r"(?:[\w.-]{1,64}@[\w.-]{1,64}:[^\s#$]{0,300}[ \t]?[#$][ \t]?|\$[ \t]"
    r"|PS [^>]{0,300}>[ \t]?|[A-Z]:\\[^>]{0,300}>[ \t]?)"
)
_WINDOWS_PATH = re.compile(r"(?<![\w])[A-Za-z]:\\")
_MORE = re.compile(r"^More\? ?")
# (pattern, entrypoint, words of which every match contains one: lines without any skip the search). Each pattern
# starts with its first word and asks what precedes the word after it (`vllm(?<![\w./-]vllm)` is
# `(?<![\w./-])vllm`): a pattern that starts with a literal is searched for by that literal, one starting with a
# lookbehind is tried at every position of the line.
_STARTS = (
    (re.compile(r"vllm(?<![\w./-]vllm)[ \t]+serve(?![\w-])"), "vllm-serve", ("serve",)),
    (re.compile(r"-m[ \t]+vllm\.entrypoints\.cli\.main[ \t]+serve(?![\w-])"), "vllm-serve", ("cli.main",)),
    (re.compile(r"vllm(?<![\w./-]vllm)[ \t]+bench[ \t]+[\w-]{1,40}"), "vllm-bench", ("bench",)),
    (re.compile(r"vllm(?<![\w./-]vllm)\.entrypoints\.(?:openai\.)?api_server(?![\w.])"), "api-server",
     ("api_server",)),
    (re.compile(r"benchmark_(?<![\w-]benchmark_)(?:serving|throughput|latency|prefix_caching)\.py(?![\w.])"),
     "vllm-bench", ("benchmark_",)),
    (re.compile(r"vllm(?<![\w./-]vllm)[ \t]+(?:chat|complete|run-batch)(?![\w-])"), "other",
     ("chat", "complete", "run-batch")),
    (re.compile(r"vllm(?<![\w./-]vllm)\.entrypoints\.openai\.run_batch(?![\w.])"), "other", ("run_batch",)),
    (re.compile(r"(?:docker(?<![\w./-]docker)|podman(?<![\w./-]podman)|nerdctl(?<![\w./-]nerdctl))"
                r"[ \t]+(?:container[ \t]+)?run(?![\w-])"), "docker", ("docker", "podman", "nerdctl")),
)
_CALL = re.compile(r"(?<![\w])(?:vllm\.)?(?P<name>LLM|AsyncEngineArgs|EngineArgs)\(")
_ASSIGN = re.compile(r"^[ \t]*(?P<name>[A-Za-z_]\w{0,60})[ \t]*=[ \t]*(?P<value>['\"\d\[{(].{0,2000})$")
_YAML_KEY = re.compile(
    r"^(?P<indent>[ \t]*)(?:-[ \t]+)?(?P<key>command|args|entrypoint):[ \t]*(?P<rest>.*)$"
    r"|^(?P<dindent>[ \t]*)(?P<dkey>ENTRYPOINT|CMD)[ \t]+(?P<drest>\[.*)$"  # Dockerfile exec form
)
_YAML_ITEM = re.compile(r"^(?P<indent>[ \t]*)-[ \t]+(?P<item>.*)$")
_NDA = "non-default args:"
_NAMESPACE = "Namespace("
_ENGINE_MODEL = re.compile(
    r"Initializing an? (?:V1 )?LLM engine.{0,80}?with config: model=['\"](?P<model>[^'\"]{1,500})['\"]")
_LOGO_MODEL = re.compile(r"[█▀▄].{0,80}?\bmodel[ \t]{1,20}(?P<model>\S{1,500})[ \t]*$")
_SERVING_MODEL = re.compile(r"vLLM server version \S{1,80}, serving model (?P<model>\S{1,500})")
_ARCH = re.compile(r"Resolved architecture: (?P<arch>[A-Za-z_]\w{0,200})")

_DOCKER_VALUE_OPTS = frozenset({
    "-p", "--publish", "-v", "--volume", "-e", "--env", "--env-file", "--name", "--gpus", "--shm-size", "--ipc",
    "--network", "--net", "--runtime", "-w", "--workdir", "--device", "--entrypoint", "--mount", "--ulimit",
    "--cpuset-cpus", "--memory", "-m", "--user", "-u", "--group-add", "--security-opt", "--cap-add", "--label",
    "-l", "--hostname", "-h", "--platform", "--pull", "--restart", "--add-host", "--log-driver", "--log-opt",
    "--cpus", "--memory-swap", "--tmpfs", "--cgroupns", "--pid", "--uts", "--userns", "--expose", "--dns",
    "--device-cgroup-rule", "--stop-signal", "--health-cmd", "--oom-score-adj", "--cidfile", "--volumes-from",
})


# -- logical lines --------------------------------------------------------------------------------

def _logical_lines(lines: list[str]) -> list[str]:
    """Join shell continuations (`\\`, Windows `^`, PowerShell backtick) and drop prompts."""
    out: list[str] = []
    buf: list[str] = []
    size = 0
    for raw in lines:
        line = raw.rstrip()
        cont = line.endswith(("\\", " ^", " `")) and not line.endswith("\\\\")
        if cont:
            line = line[:-1].rstrip()
        if not buf and ("$" in line or "#" in line or ">" in line):  # every prompt shape ends in one of these
            m = _PROMPT.match(line.lstrip())
            if m:
                line = line.lstrip()[m.end():]
        if not buf and not cont:
            out.append(line)   # a line on its own (most of them)
            continue
        buf.append(_MORE.sub("", line.strip()) if buf else line)
        size += len(line)
        if not cont or size > _MAX_LOGICAL or len(buf) > 300:
            out.append(" ".join(buf))
            buf, size = [], 0
    if buf:
        out.append(" ".join(buf))
    return out


def _command_text(line: str, start: int) -> str:
    """From `start` to the end of the command: a closing backtick/quote when it was quoted inline."""
    before = line[:start].rstrip()
    text = line[start:start + _MAX_LOGICAL]
    if before.endswith(("`", '"', "'")):
        q = before[-1]
        end = text.find(q)
        if end != -1:
            text = text[:end]
    elif "`" in text:
        text = text.split("`", 1)[0]
    return text


def _until_operator(tokens: list[str | None]) -> list[str]:
    out: list[str] = []
    for tok in tokens:
        if tok is OPERATOR:
            break
        out.append(tok)
    return out


# -- shell commands -------------------------------------------------------------------------------

def _serve_command(raw: str, entrypoint: str, tokens: list[str]) -> Command:
    positional, flags = parse_flags(tokens)
    model = flags.get("model") if isinstance(flags.get("model"), str) else None
    if model is None and entrypoint == "vllm-serve" and positional and _model_like(positional[0]):
        model = positional[0]
        flags.setdefault("model", model)
    if model is not None and model.startswith("<") and model.endswith(">"):
        model = None   # `vllm serve <your-model>`: the reporter did not say
        flags.pop("model", None)
    return Command(raw=raw, entrypoint=entrypoint, model=model, flags=flags)


def _docker_command(raw: str, tokens: list[str]) -> Command | None:
    i, n = 0, len(tokens)
    image: int | None = None
    while i < n:
        tok = tokens[i]
        if tok.startswith("-"):
            i += 2 if (tok in _DOCKER_VALUE_OPTS and "=" not in tok) else 1
            continue
        image = i
        break
    if image is None:
        return None
    # a wrapper image name without "vllm": take the first positional that names vLLM, if any
    if "vllm" not in tokens[image].lower():
        later = [j for j in range(image + 1, n) if "vllm" in tokens[j].lower() and not tokens[j].startswith("-")]
        if not later and "--model" not in tokens:
            return None
        if later and "/" in tokens[later[0]] and not tokens[later[0]].startswith("vllm."):
            image = later[0]
    args = tokens[image + 1:]
    if args[:2] == ["vllm", "serve"]:
        args = args[2:]
    elif len(args) >= 3 and args[0].startswith("python") and args[1] == "-m":
        args = args[3:]
    positional, flags = parse_flags(args)
    model = flags.get("model") if isinstance(flags.get("model"), str) else None
    if model is None and positional:
        model = positional[0]
        flags.setdefault("model", model)
    return Command(raw=raw, entrypoint="docker", model=model, flags=flags)


def _model_like(text: str) -> bool:
    """A model argument (`org/name`, a path, `gpt2`, `$MODEL`), not a word of prose."""
    return any(c in text for c in "/-._:$~\\") or any(c.isdigit() for c in text)


def _shell_commands(logical: list[str]) -> list[Command]:
    out: list[Command] = []
    for line in logical:
        if len(out) >= _MAX_COMMANDS:
            break
        if "vllm" not in line and "docker" not in line and "podman" not in line and "benchmark_" not in line:
            continue
        for pattern, entrypoint, words in _STARTS:
            for word in words:
                if word in line:
                    break
            else:
                continue
            m = pattern.search(line)
            if not m:
                continue
            text = _command_text(line, m.start())
            rest = text[m.end() - m.start():]
            tokens = _until_operator(tokenize(rest, posix=not _WINDOWS_PATH.search(rest)))
            raw = " ".join(text.split())[:2000]
            if entrypoint == "docker":
                cmd = _docker_command(raw, [t for t in tokens if t])
                if cmd is None:
                    continue
            else:
                cmd = _serve_command(raw, entrypoint, [t for t in tokens if t])
                if not cmd.flags:
                    continue  # "vllm serve" named in prose
            out.append(cmd)
            break
    return out


# -- docker compose / kubernetes YAML -------------------------------------------------------------

def _yaml_items(lines: list[str], start: int, indent: int) -> list[str]:
    items: list[str] = []
    for line in lines[start:start + 300]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _YAML_ITEM.match(line)
        if not m or len(m.group("indent")) < indent:
            break
        item = m.group("item").split(" #", 1)[0].strip()
        if len(item) >= 2 and item[0] == item[-1] and item[0] in "'\"":
            items.append(item[1:-1])
        elif item.startswith("-") and " " in item:
            # `- --model Qwen/X`: one argv element in YAML, but meant as flag and value
            items.extend(item.split(None, 1))
        else:
            items.append(item)
    return items


def _yaml_block(lines: list[str], start: int, indent: int) -> str:
    parts: list[str] = []
    for line in lines[start:start + 300]:
        if not line.strip():
            continue
        if len(line) - len(line.lstrip()) <= indent:
            break
        parts.append(line.strip().rstrip("\\").strip())
    return " ".join(parts)


def _yaml_tokens(rest: str, lines: list[str], i: int, indent: int) -> list[str]:
    rest = rest.split(" #", 1)[0].strip()
    if not rest:
        # a list of arguments, or one plain scalar over the more indented lines (`command:` then `--model X` lines)
        return _yaml_items(lines, i + 1, indent) or \
            [t for t in _until_operator(tokenize(_yaml_block(lines, i + 1, indent))) if t]
    if rest[0] in ">|":
        return [t for t in _until_operator(tokenize(_yaml_block(lines, i + 1, indent))) if t]
    if rest[0] == "[":
        text = rest
        j = i + 1
        while "]" not in text and j < len(lines) and j < i + 200:
            text += " " + lines[j].strip()
            j += 1
        try:
            value = yaml.safe_load(text[:_MAX_LOGICAL])
        except yaml.YAMLError:
            value = None
        if isinstance(value, list):
            return [str(v) for v in value if v is not None]
        return []
    if len(rest) >= 2 and rest[0] == rest[-1] and rest[0] in "'\"":
        rest = rest[1:-1]
    return [t for t in _until_operator(tokenize(rest)) if t]


# an argument list's item that is nothing but a flag (`- --max-model-len=8192`, `- '--enforce-eager'`) or a value
# after one; an item holding more ("- --max-model-len: the longest prompt") is prose, not an argument
_ARG_ITEM = re.compile(r"^[ \t]*-[ \t]+['\"]?--[A-Za-z][\w.-]{0,80}(=[^\s'\"]{0,500})?['\"]?[ \t]*$")
_VALUE_ITEM = re.compile(r"^[ \t]*-[ \t]+['\"]?[^\s'\"#:]{1,500}['\"]?[ \t]*$")
_MIN_BARE_FLAGS = 2
# a YAML key whose value follows on the next lines (`ports:`, `- env:`): the items after it are its own
_KEY_LINE = re.compile(r"^[ \t]*(?:-[ \t]+)?[\w.-]{1,80}:[ \t]*$")


def _bare_argument_lists(lines: list[str]) -> list[tuple[int, int]]:
    """Where an argument list stands without its `args:` / `command:` key (the reporter pasted only the items): runs of
    list items that are flags or a value right after a flag, starting with a flag after a line that is no list item
    nor YAML key, holding two flags or more. Each run as its first line and the line after it."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(lines) and len(runs) < _MAX_COMMANDS:
        if "--" not in lines[i] or not _ARG_ITEM.match(lines[i]):
            i += 1
            continue
        previous = next((ln for ln in reversed(lines[max(0, i - 3):i]) if ln.strip()), "")
        flags, j = 0, i
        while j < len(lines) and j < i + 300:
            if _ARG_ITEM.match(lines[j]):
                flags += 1
            elif j == i or not _VALUE_ITEM.match(lines[j]) or not _ARG_ITEM.match(lines[j - 1]):
                break
            j += 1
        if flags >= _MIN_BARE_FLAGS and not _YAML_ITEM.match(previous) and not _KEY_LINE.match(previous) \
                and not _YAML_KEY.match(previous):
            runs.append((i, j))
        i = j
    return runs


def _argument_lists(lines: list[str]) -> list[tuple[list[str], bool]]:
    """The argument lists of the YAML in `lines`, in order: each `command:` / `args:` / `entrypoint:` value (and a
    Dockerfile's exec form), and each list of arguments pasted without its key; with whether it is a Dockerfile's."""
    found: list[tuple[int, list[str], bool]] = []
    for i, line in enumerate(lines):
        if ":" not in line and "[" not in line:
            continue
        m = _YAML_KEY.match(line)
        if not m:
            continue
        dockerfile = m.group("dkey") is not None
        rest, indent = (m.group("drest"), m.group("dindent")) if dockerfile else (m.group("rest"), m.group("indent"))
        found.append((i, _yaml_tokens(rest, lines, i, len(indent)), dockerfile))
    for start, end in _bare_argument_lists(lines):
        found.append((start, _yaml_items(lines[start:end], 0, 0), False))
    return [(tokens, dockerfile) for _, tokens, dockerfile in sorted(found, key=lambda f: f[0])]


def _compose_commands(lines: list[str]) -> list[Command]:
    out: list[Command] = []
    for tokens, dockerfile in _argument_lists(lines):
        if len(out) >= _MAX_COMMANDS:
            break
        if not tokens or not any(t.startswith("--") for t in tokens) and "serve" not in tokens:
            continue
        # drop the program part: `vllm serve`, `python3 -m vllm.entrypoints.openai.api_server`, `/bin/sh -c`
        for k, tok in enumerate(tokens[:6]):
            if tok == "serve" or tok.startswith("vllm.entrypoints"):
                tokens = tokens[k + 1:]
                break
        if tokens and tokens[0] in ("/bin/sh", "/bin/bash", "sh", "bash"):
            continue
        raw = " ".join(tokens)[:2000]
        positional, flags = parse_flags(tokens)
        model = flags.get("model") if isinstance(flags.get("model"), str) else None
        if model is None and positional:
            model = positional[0]
            flags.setdefault("model", model)
        out.append(Command(raw=raw, entrypoint="docker" if dockerfile else "compose", model=model, flags=flags))
    return out


# -- Python LLM(...) / EngineArgs(...) ------------------------------------------------------------

# the characters _paren_matches acts on: every other character is skipped
_PAREN_EVENT = re.compile(r"[\\'\"#()\[\]{}\n]")


def _paren_matches(text: str, opens: list[int], limit: int = _MAX_CALL) -> dict[int, int]:
    """Closing index for each `(` in `opens`, quote-aware, in one pass over the windows after them."""
    matches: dict[int, int] = {}
    wanted = set(opens)
    stack: list[int] = []
    quote: str | None = None
    pos = 0
    for start in opens:
        if start >= pos:  # a fresh window: forget the state of the previous one
            pos, stack, quote = start, [], None
        end = min(len(text), start + limit)
        i = pos
        while i < end:
            event = _PAREN_EVENT.search(text, i, end)
            if event is None:
                break
            i = event.start()
            c = text[i]
            if quote:
                if c == "\\":
                    i += 2
                    continue
                if c == quote or c == "\n":  # one-line strings; a stray apostrophe ends with its line
                    quote = None
            elif c in "'\"":
                quote = c
            elif c == "#":
                nl = text.find("\n", i, end)
                i = nl if nl != -1 else end
                continue
            elif c in "([{":
                stack.append(i)
            elif c in ")]}" and stack:
                o = stack.pop()
                if o in wanted:
                    matches[o] = i
            i += 1
        pos = max(pos, end)
    return matches


def _literal(node: ast.AST, names: dict[str, Any]) -> tuple[bool, Any]:
    if isinstance(node, ast.Name) and node.id in names:
        return True, names[node.id]
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Name) and node.id in ("True", "False", "None"):
        return True, {"True": True, "False": False, "None": None}[node.id]
    try:
        return True, ast.unparse(node)[:500]
    except (ValueError, TypeError, AttributeError, RecursionError):
        return False, None


def _assignments(lines: list[str]) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for line in lines:
        if "=" not in line or len(line) > 2000:
            continue
        m = _ASSIGN.match(line)
        if not m:
            continue
        try:
            names[m.group("name")] = ast.literal_eval(m.group("value").split("  #", 1)[0].strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return names


def _python_commands(lines: list[str]) -> list[Command]:
    text = "\n".join(lines)
    if "LLM(" not in text and "EngineArgs(" not in text:   # dropping the prompts below cannot make one
        return []
    text = "\n".join(line[4:] if line.startswith(("... ", ">>> ")) else line for line in lines)
    names = _assignments(lines)
    out: list[Command] = []
    calls = list(itertools.islice(_CALL.finditer(text), _MAX_CALLS))
    closing = _paren_matches(text, [m.end() - 1 for m in calls])
    for m in calls:
        if len(out) >= _MAX_COMMANDS:
            break
        close = closing.get(m.end() - 1)
        if close is None:
            continue
        src = text[m.end() - 1:close + 1]
        try:
            tree = ast.parse("f" + src, mode="eval")
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        call = tree.body
        if not isinstance(call, ast.Call):
            continue
        flags: dict[str, Any] = {}
        for kw in call.keywords:
            if kw.arg is None:
                continue
            ok, value = _literal(kw.value, names)
            if ok:
                flags[kw.arg] = value
        model = flags.get("model") if isinstance(flags.get("model"), str) else None
        if model is None and call.args:
            ok, value = _literal(call.args[0], names)
            if ok and isinstance(value, str):
                model = value
                flags["model"] = value
        if not flags:
            continue
        raw = " ".join((m.group(0)[:-1] + src).split())[:2000]
        out.append(Command(raw=raw, entrypoint="python-llm", model=model, flags=flags))
    return out


def extract_commands(body: str, lines: tuple[str, ...]) -> tuple[Command, ...]:
    source = list(lines) if lines else (body or "").splitlines()
    commands = _shell_commands(_logical_lines(source)) + _compose_commands(source) + _python_commands(source)
    seen: set[tuple[str, str | None, str]] = set()
    out: list[Command] = []
    for cmd in commands:
        key = (cmd.entrypoint, cmd.model, repr(sorted(cmd.flags.items(), key=lambda kv: kv[0]))[:4000])
        if key in seen:
            continue
        seen.add(key)
        out.append(cmd)
    return tuple(out[:_MAX_COMMANDS])


# -- log lines ------------------------------------------------------------------------------------

def _literal_prefix(text: str, closer: str) -> Any:
    """literal_eval of a dict repr, or of its longest parseable prefix when the line was cut."""
    text = text.strip()[:_MAX_REPR]
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    # cut after the last complete `key: value` and close the dict
    cuts = [m.start() for m in re.finditer(r", '", text)]
    for cut in reversed(cuts[-_MAX_CUTS:]):
        try:
            return ast.literal_eval(text[:cut] + closer)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return None


def _namespace(text: str) -> dict[str, Any] | None:
    src = text.strip()[:_MAX_REPR]
    tree = None
    try:
        tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        for cut in reversed([m.start() for m in re.finditer(r", [a-z_]", src)][-_MAX_CUTS:]):
            try:
                tree = ast.parse(src[:cut] + ")", mode="eval")
                break
            except (SyntaxError, ValueError, MemoryError, RecursionError):
                continue
    if tree is None or not isinstance(tree.body, ast.Call):
        return None
    out: dict[str, Any] = {}
    for kw in tree.body.keywords:
        if kw.arg is None:
            continue
        try:
            value = ast.literal_eval(kw.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if value is not None:
            out[kw.arg] = value
    return out or None


def parse_non_default_args(lines: tuple[str, ...]) -> dict[str, Any] | None:
    namespace: dict[str, Any] | None = None
    for line in lines:
        if _NDA in line:
            value = _literal_prefix(line.split(_NDA, 1)[1], "}")
            if isinstance(value, dict) and value:
                return value
        elif namespace is None and "args: Namespace(" in line:
            namespace = _namespace(line[line.index(_NAMESPACE):])
    return namespace


_SERVING = frozenset({"vllm-serve", "api-server", "docker", "compose", "python-llm"})


def merge_flags(commands: tuple[Command, ...], non_default_args: dict[str, Any] | None, *,
                where: Callable[[], tuple[tuple[int, ...], int | None]] | None = None) -> dict[str, Any]:
    """The flags of the run the report is about; `non-default args` (that run's own log) win.

    Several serving commands are usually several attempts ("this fails … this works"), so only one of them counts:
    the one that agrees most with `non-default args`, else the last one pasted before the error, else the last one.
    Other commands (ray start, pip) add their flags in order. `where` returns (the commands' offsets in the body,
    -1 unknown; the offset of the first traceback or error), and is called only when they are needed."""
    nda = non_default_args or {}
    serving = [i for i, c in enumerate(commands) if c.entrypoint in _SERVING and c.flags]
    chosen: int | None = None
    if len(serving) > 1:
        if nda:
            agree = [sum(1 for k, v in commands[i].flags.items() if k in nda and nda[k] == v) for i in serving]
            if max(agree) > 0:
                chosen = max((a, i) for a, i in zip(agree, serving, strict=True))[1]
        positions, error_at = where() if chosen is None and where is not None else ((), None)
        if chosen is None and error_at is not None and len(positions) == len(commands):
            before = [i for i in serving if 0 <= positions[i] < error_at]
            chosen = before[-1] if before else None
        if chosen is None:
            chosen = serving[-1]
    flags: dict[str, Any] = {}
    for i, command in enumerate(commands):
        if chosen is None or i == chosen or i not in serving:
            flags.update(command.flags)
    flags.update(nda)
    return flags


def model_and_architectures(
    lines: tuple[str, ...], commands: tuple[Command, ...], non_default_args: dict[str, Any] | None
) -> tuple[str | None, tuple[str, ...]]:
    model: str | None = None
    nda = non_default_args or {}
    for key in ("model", "model_tag"):
        if isinstance(nda.get(key), str) and nda[key]:
            model = nda[key]
            break
    if model is None:
        model = next((c.model for c in commands if c.model), None)
    architectures: list[str] = []
    for line in lines:
        if "Resolved architecture:" in line:
            m = _ARCH.search(line)
            if m and m.group("arch") not in architectures:
                architectures.append(m.group("arch"))
        if model is None and len(line) < 20_000:
            m = None
            if "LLM engine" in line:
                m = _ENGINE_MODEL.search(line)
            elif "model" in line and ("█" in line or "▀" in line or "▄" in line):
                m = _LOGO_MODEL.search(line)
            elif "serving model" in line:
                m = _SERVING_MODEL.search(line)
            if m:
                model = m.group("model")
    return model, tuple(architectures)
