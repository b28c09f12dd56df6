"""Where a Python module raises, asserts or logs an error: its raise sites, read with `ast` (pure: text in, sites out).

A site is a `raise X(...)`, an `assert cond, message`, or a logger call at level warning or above. For each:
the line, the enclosing qualified name, the exception type or log level, the message as a template (string
literals, f-strings, `%` and `.format` formatting, `+`, and a local variable's last assignment before the site
are followed; anything else is a hole), and the innermost condition that guards it (`if`, `else`, `except`, an
early `return`/`raise`/`continue`/`break` before it in the same block, or the assert's own test).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from bot.sources.template import Hole, Piece, Template, format_pieces, normalise, percent_pieces

EXTRACTOR_VERSION = 1   # raised when the extractor reads a module differently: built releases are then rebuilt
LOG_LEVELS = {
    "warning": "warning", "warn": "warning", "warning_once": "warning",
    "error": "error", "error_once": "error",
    "exception": "exception",
    "critical": "critical", "fatal": "critical",
}
MESSAGE_KEYWORDS = ("message", "msg", "detail", "reason", "text", "error")
MAX_GUARD = 300     # characters of a guard's source kept
MAX_DEPTH = 6       # local-variable assignments followed one from another


@dataclass(frozen=True, slots=True)
class RawSite:
    """One site as read from one release."""

    file: str
    line: int
    end_line: int
    qualname: str       # enclosing class/function path, Python-style (`A.f.<locals>.g`); "<module>" at top level
    kind: str           # "raise", "assert" or "log"
    type: str | None    # exception class name (last dotted part), "AssertionError", or the log level
    template: Template
    guard_kind: str | None  # "if", "else", "except", "early-exit", "assert", or None
    guard: str | None       # the guarding condition's source (for "else"/"early-exit": the condition that is false)

    @property
    def function(self) -> str:
        """What a traceback frame shows: the innermost function's name."""
        return self.qualname.rsplit(".", 1)[-1]


class ExtractError(ValueError):
    """The module could not be parsed."""


def extract(path: str, source: str) -> list[RawSite]:
    """The sites of one module; `path` as it should be recorded (e.g. `vllm/config/model.py`)."""
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError) as e:
        raise ExtractError(f"{path}: {e.__class__.__name__}: {e}") from None
    walker = _Walker(path)
    walker.block(tree.body, _Scope("", tree, None), ())
    return walker.sites


@dataclass(slots=True)
class _Scope:
    qualname: str                         # "" at module level
    node: ast.AST                         # the function, class or module
    assignments: dict[str, list[ast.stmt]] | None  # name -> assignments in the function, by position (lazy)

    def child(self, name: str, node: ast.AST) -> _Scope:
        if isinstance(self.node, ast.FunctionDef | ast.AsyncFunctionDef):
            qual = f"{self.qualname}.<locals>.{name}"
        else:
            qual = f"{self.qualname}.{name}" if self.qualname else name
        return _Scope(qual, node, None)


Guard = tuple[str, ast.AST | str]  # (kind, condition node or its text): unparsed only for a site


def _unparse(node: ast.AST, limit: int = MAX_GUARD) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - an exotic node ast cannot unparse is not worth failing a module for
        text = "…"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _guard_text(cond: ast.AST | str) -> str:
    return cond if isinstance(cond, str) else _unparse(cond)


def _exits(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], ast.Return | ast.Raise | ast.Continue | ast.Break)


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class _Walker:
    def __init__(self, path: str) -> None:
        self.path = path
        self.sites: list[RawSite] = []

    # ---- statements ----
    def block(self, stmts: list[ast.stmt], scope: _Scope, guards: tuple[Guard, ...]) -> None:
        early: Guard | None = None
        for stmt in stmts:
            self.stmt(stmt, scope, guards if early is None else guards + (early,))
            if isinstance(stmt, ast.If) and not stmt.orelse and _exits(stmt.body):
                early = ("early-exit", stmt.test)

    def stmt(self, node: ast.stmt, scope: _Scope, guards: tuple[Guard, ...]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.block(node.body, scope.child(node.name, node), ())
        elif isinstance(node, ast.If):
            test = node.test
            self.block(node.body, scope, guards + (("if", test),))
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):  # elif
                self.stmt(node.orelse[0], scope, guards + (("else", test),))
            elif node.orelse:
                self.block(node.orelse, scope, guards + (("else", test),))
        elif isinstance(node, ast.Try | ast.TryStar):
            self.block(node.body, scope, guards)
            for handler in node.handlers:
                caught = handler.type if handler.type is not None else "BaseException"
                self.block(handler.body, scope, guards + (("except", caught),))
            self.block(node.orelse, scope, guards)
            self.block(node.finalbody, scope, guards)
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While | ast.With | ast.AsyncWith):
            self.block(node.body, scope, guards)
            self.block(getattr(node, "orelse", []), scope, guards)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                self.block(case.body, scope, guards + (("case", case.pattern),))
        elif isinstance(node, ast.Raise):
            self.raise_site(node, scope, guards)
        elif isinstance(node, ast.Assert):
            if node.msg is not None:
                self.add(node, scope, "assert", "AssertionError", self.message(node.msg, scope, node),
                         ("assert", node.test))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.log_site(node, node.value, scope, guards)

    # ---- sites ----
    def add(self, node: ast.stmt, scope: _Scope, kind: str, type_: str | None, template: Template,
            guard: Guard | None) -> None:
        self.sites.append(RawSite(
            self.path, node.lineno, node.end_lineno or node.lineno, scope.qualname or "<module>", kind, type_,
            template, guard[0] if guard else None, _guard_text(guard[1]) if guard else None))

    def raise_site(self, node: ast.Raise, scope: _Scope, guards: tuple[Guard, ...]) -> None:
        exc = node.exc
        if exc is None:
            return  # a bare re-raise
        guard = guards[-1] if guards else None
        if isinstance(exc, ast.Call):
            name = _dotted(exc.func)
            last = name.rsplit(".", 1)[-1] if name else None
            type_ = last if last and last[:1].isupper() else None
            self.add(node, scope, "raise", type_, self.call_message(exc, scope, node), guard)
        else:
            name = _dotted(exc)
            last = name.rsplit(".", 1)[-1] if name else None
            if last and last[:1].isupper():  # `raise SomeError`; `raise err` re-raises what was caught
                self.add(node, scope, "raise", last, (), guard)

    def log_site(self, node: ast.Expr, call: ast.Call, scope: _Scope, guards: tuple[Guard, ...]) -> None:
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in LOG_LEVELS or not call.args:
            return
        receiver = _dotted(func.value)
        if receiver is None or "log" not in receiver.rsplit(".", 1)[-1].lower():
            return
        fmt, args = call.args[0], call.args[1:]
        if isinstance(fmt, ast.Constant) and isinstance(fmt.value, str) and args:
            arg_texts = [_unparse(a, 80) for a in args]
            template = normalise(percent_pieces(fmt.value, arg_texts))
        else:
            template = self.message(fmt, scope, node)
        self.add(node, scope, "log", LOG_LEVELS[func.attr], template, guards[-1] if guards else None)

    # ---- messages ----
    def call_message(self, call: ast.Call, scope: _Scope, site: ast.stmt) -> Template:
        args = [a for a in call.args if not isinstance(a, ast.Starred)]
        for arg in args[:3]:
            if _stringish(arg):
                return self.message(arg, scope, site)
        for kw in call.keywords:
            if kw.arg in MESSAGE_KEYWORDS and _stringish(kw.value):
                return self.message(kw.value, scope, site)
        if args:
            return self.message(args[0], scope, site)
        return ()

    def message(self, node: ast.expr, scope: _Scope, site: ast.stmt) -> Template:
        return normalise(self.pieces(node, scope, site.lineno, 0))

    def pieces(self, node: ast.expr, scope: _Scope, before: int, depth: int) -> list[Piece]:
        if isinstance(node, ast.Constant):
            return [node.value] if isinstance(node.value, str) else [Hole(_unparse(node, 80))]
        if isinstance(node, ast.JoinedStr):
            out: list[Piece] = []
            for v in node.values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    out.append(v.value)
                elif isinstance(v, ast.FormattedValue):
                    out.append(Hole(_unparse(v.value, 80)))
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.pieces(node.left, scope, before, depth) + self.pieces(node.right, scope, before, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, str):
            right = node.right
            items = right.elts if isinstance(right, ast.Tuple) else [right]
            return percent_pieces(node.left.value, [_unparse(e, 80) for e in items])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
                and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
            args = [_unparse(a, 80) for a in node.args]
            kwargs = {kw.arg: _unparse(kw.value, 80) for kw in node.keywords if kw.arg}
            found = format_pieces(node.func.value.value, args, kwargs)
            if found is not None:
                return found
        if isinstance(node, ast.Name) and depth < MAX_DEPTH:
            value = self.assigned(node.id, scope, before, depth)
            if value is not None:
                return value
        return [Hole(_unparse(node, 80))]

    def assigned(self, name: str, scope: _Scope, before: int, depth: int) -> list[Piece] | None:
        """The pieces of `name`'s last assignment in the scope before line `before` (following `+=`)."""
        if scope.assignments is None:
            scope.assignments = _assignments(scope.node)
        last = None
        for stmt in scope.assignments.get(name, ()):
            if stmt.lineno < before:
                last = stmt
        if last is None:
            return None
        if isinstance(last, ast.AugAssign):
            head = self.assigned(name, scope, last.lineno, depth + 1)
            if not isinstance(last.op, ast.Add):
                return None
            return (head if head is not None else [Hole(name)]) + \
                self.pieces(last.value, scope, last.lineno, depth + 1)
        value = last.value
        if value is None or not _stringish(value, allow_name=True):
            return None
        return self.pieces(value, scope, last.lineno, depth + 1)


def _stringish(node: ast.expr, allow_name: bool = True) -> bool:
    """Whether an expression looks like it builds a message (a string, an f-string, formatting, a name)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        return _stringish(node.left, allow_name) or _stringish(node.right, allow_name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return True
    return allow_name and isinstance(node, ast.Name)


def _assignments(scope_node: ast.AST) -> dict[str, list[ast.stmt]]:
    """name -> its simple assignments directly in this function or module (not in nested defs), by position."""
    found: dict[str, list[ast.stmt]] = {}
    body = getattr(scope_node, "body", [])
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.setdefault(node.targets[0].id, []).append(node)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            found.setdefault(node.target.id, []).append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                stack.append(child)
    for stmts in found.values():
        stmts.sort(key=lambda s: (s.lineno, s.col_offset))
    return found
