"""docs/architecture.md's module map, enforced on the source: every import of every module under bot/ (late
imports inside functions included, read from the AST) must be one the map allows, and bot's modules import
each other without a cycle."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "bot"

# The map of docs/architecture.md: each part of bot and the parts of bot it may import (itself included).
# A module belongs to the longest prefix listed; a module outside every part but `bot` itself fails: place it.
CORE = ("bot.report", "bot.rules", "bot.decision", "bot.labels", "bot.subject", "bot.wording", "bot.literals",
        "bot.matchset", "bot.glossary", "bot.comment", "bot.neutralise", "bot.validtext", "bot.paths", "bot.isotime",
        "bot.triage", "bot.dupes", "bot.sources")
OFFLINE = ("bot.export", "bot.replay", "bot.explain", "bot.dupes.history", "bot.sources.sdists",
           "bot.sources.archive", "bot.sources.build")
PARTS: dict[str, tuple[str, ...]] = {
    **{name: CORE for name in CORE},
    **{name: CORE + OFFLINE for name in OFFLINE},
    "bot.stores": CORE + ("bot.stores",),
    "bot.app": CORE + OFFLINE + ("bot.stores", "bot.app"),
    "bot.app.server": CORE + OFFLINE + ("bot.stores", "bot.app", "bot.dashboard"),  # it mounts the dashboard
    "bot.dashboard": CORE + OFFLINE + ("bot.stores", "bot.dashboard", "bot.app.context", "bot.app.settings",
                                       "bot.app.service"),
    "bot.cli": ("bot",),
    "bot.__main__": ("bot.cli",),
    "bot": (),
}
# Libraries only adapters may use: a database driver, the web server and the GitHub client.
ADAPTER_LIBRARIES = ("sqlite3", "psycopg", "psycopg_pool", "aiohttp", "gidgethub")
# The Postgres driver is an optional extra: only the Postgres backends (and the migration runner) import it.
POSTGRES_MODULES = re.compile(r"bot\.stores\.(\w+\.postgres|migrations)$")


def module_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_of(p): p for p in sorted(BOT.rglob("*.py"))}


@cache
def imports(module: str) -> frozenset[str]:
    """Every module `module` imports anywhere in its file; `from package import name` counts as importing the
    submodule package.name when there is one."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            submodules = {f"{base}.{alias.name}" for alias in node.names} & MODULES.keys()
            found.update(submodules)
            if len(submodules) < len(node.names):  # names defined in the module `base` itself
                found.add(base)
    return frozenset(found)


def bot_imports(module: str) -> set[str]:
    return {m for m in imports(module) if m in MODULES and m != module}


def part_of(module: str) -> str:
    return max((p for p in PARTS if module == p or module.startswith(p + ".")), key=len)


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_every_import_is_one_the_module_map_allows():
    wrong = [f"{m} imports {i} ({part_of(m)} may import {', '.join(PARTS[part_of(m)]) or 'nothing of bot'})"
             for m in MODULES for i in sorted(bot_imports(m)) if not within(i, PARTS[part_of(m)])]
    assert wrong == []


def test_only_adapters_use_databases_the_web_or_github():
    pure = [m for m in MODULES if within(part_of(m), CORE + OFFLINE)]
    wrong = [f"{m} imports {i}" for m in pure for i in sorted(imports(m))
             if i.split(".")[0] in ADAPTER_LIBRARIES]
    assert wrong == []


def test_only_the_postgres_backends_import_psycopg():
    wrong = [m for m in MODULES if any(i.split(".")[0] in ("psycopg", "psycopg_pool") for i in imports(m))
             and not POSTGRES_MODULES.match(m)]
    assert wrong == []


def test_no_import_cycle_among_bot_modules():
    """Tarjan's strongly connected components over every import, late ones included."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in bot_imports(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            visit(module)
    assert cycles == []


def test_the_map_names_every_package_it_checks():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [p for p in PARTS if p != "bot" and f"`{p.replace('.', '/')}" not in text]
    assert missing == []
