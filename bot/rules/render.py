"""Sandboxed Jinja2 for a rule's `explanation` and `workaround`.

Values interpolated from the issue (`{{ flags.x }}`, `{{ captures.y }}`) are untrusted: `finalize` flattens them onto
one bounded line and neutralises mentions, HTML and code-span breaks. Missing values render empty, and attribute
chains on missing values (`flags.speculative_config.method`) never raise.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from typing import Any

from jinja2 import ChainableUndefined, Template, TemplateSyntaxError, nodes
from jinja2.sandbox import SandboxedEnvironment

from bot.neutralise import defuse
from bot.report.model import ExceptionInfo, Report
from bot.rules.gpu import compute_capability
from bot.rules.texts import decode_json_value

CONTEXT_NAMES = frozenset({"flags", "env", "captures", "exception", "report"})
MAX_VALUE = 300
MAX_OUTPUT = 4_000


def _clean(value: Any) -> Any:
    if value is None or isinstance(value, ChainableUndefined):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return value
    text = json.dumps(value, default=str) if isinstance(value, dict | list | tuple) else str(value)
    text = " ".join(text.split())
    if len(text) > MAX_VALUE:
        text = text[: MAX_VALUE - 1] + "…"
    # defused here too (not only in the comment): rule texts are also shown by `explain` and the dashboard.
    # No HTML entities: inside a code span GitHub would show "&lt;" literally.
    return defuse(text).replace("`", "'")


def _make_env() -> SandboxedEnvironment:
    env = SandboxedEnvironment(undefined=ChainableUndefined, autoescape=False, finalize=_clean,
                               trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)
    env.filters["tojson"] = lambda v: json.dumps(v, default=str)
    return env


ENV = _make_env()


FORBIDDEN = (nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)


def compile_template(source: object) -> tuple[Any, str | None]:
    """(template, error) — error says why `source` cannot be a rule template."""
    if not isinstance(source, str):
        return None, f"must be a string, not {type(source).__name__}"
    if not source.strip():
        return None, "must not be empty"
    try:
        ast = ENV.parse(source)
    except TemplateSyntaxError as e:
        return None, f"template does not parse (line {e.lineno}): {e.message}"
    # one walk of the syntax tree (jinja2.meta would generate the template's whole code to find the names):
    # names a template assigns anywhere (`set`, `for`, macro arguments) count as declared, even inside a branch
    loaded, declared = set(), set()
    for node in ast.find_all((nodes.Name, nodes.For, nodes.Macro, nodes.CallBlock, *FORBIDDEN)):
        if isinstance(node, FORBIDDEN):
            return None, "templates cannot extend, include or import"
        if isinstance(node, nodes.Name):
            (loaded if node.ctx == "load" else declared).add(node.name)
        elif isinstance(node, nodes.For):
            declared.add("loop")
        else:
            declared.update(("caller", "varargs", "kwargs"))
    unknown = loaded - CONTEXT_NAMES - set(ENV.globals) - declared
    if unknown:
        return None, (f"unknown template variable(s) {', '.join(sorted(unknown))}; "
                      f"available: {', '.join(sorted(CONTEXT_NAMES))}")
    return LazyTemplate(ast), None


class LazyTemplate:
    """A validated template whose Python code is generated on its first render: code generation is most of the
    cost of loading the rules, and most rules never fire in a given process."""

    __slots__ = ("_ast", "_template")

    def __init__(self, ast: nodes.Template) -> None:
        self._ast = ast
        self._template: Template | None = None

    def compile(self) -> Template:
        if self._template is None:
            self._template = ENV.from_string(self._ast)
        return self._template

    def render(self, context: dict[str, Any]) -> str:
        return (self._template or self.compile()).render(context)


def template_context(report: Report, flags: dict[str, Any], captures: dict[str, str],
                     exception: ExceptionInfo | None) -> dict[str, Any]:
    env = report.environment
    env_ctx = env.as_dict()
    env_ctx["env_vars"] = dict(env.env_vars)
    env_ctx["gpu"] = env.gpus[0] if env.gpus else None
    ccs = [c for c in (compute_capability(g) for g in env.gpus) if c is not None]
    env_ctx["compute_capability"] = f"{min(ccs):.1f}" if ccs else None
    exc = exception or report.root_cause
    exc_ctx: dict[str, Any] = ExceptionContext(exc) if exc is not None else {}
    return {
        "flags": {k: decode_json_value(v) for k, v in flags.items()},
        "env": env_ctx,
        "captures": dict(captures),
        "exception": exc_ctx,
        "report": report,
    }


class ExceptionContext(dict[str, Any]):
    """`dataclasses.asdict` of an exception, with `short_type` and `first_line`; its frames, which templates
    seldom read, are converted when first read."""

    def __init__(self, exc: ExceptionInfo) -> None:
        super().__init__((f.name, getattr(exc, f.name)) for f in fields(exc) if f.name != "frames")
        self._frames = exc.frames
        self["short_type"] = exc.short_type
        self["first_line"] = exc.first_line

    def __missing__(self, key: str) -> Any:
        if key != "frames":
            raise KeyError(key)
        self["frames"] = value = type(self._frames)(asdict(f) for f in self._frames)
        return value


def render(template: Any, context: dict[str, Any]) -> str:
    text = template.render(context).strip()
    if len(text) > MAX_OUTPUT:
        text = text[: MAX_OUTPUT - 1] + "…"
    return text


MAX_KEY = 120


def duplicate_key(template: Any, context: dict[str, Any]) -> str | None:
    """A rule's `duplicate_key`, normalised so that two reports of the same root cause agree: case, quotes,
    brackets and spacing do not count. None when it renders empty (the captures it names were not found)."""
    text = template.render(context)
    text = "".join(ch if ch.isalnum() or ch in "._-/+:=" else " " for ch in text.lower())
    text = " ".join(text.split())[:MAX_KEY]
    return text or None
