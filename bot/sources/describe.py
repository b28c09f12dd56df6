"""A site told to a reader (pure): its condition in words, the releases that raise it as runs of lines, its
permalink pinned to a release tag, and its neighbours (the same function, the same file, the same message)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.sources.index import SourceIndex
from bot.sources.model import Release, Site

# packages whose source is on GitHub under a `v<version>` tag for every release
REPOSITORIES = {"vllm": "https://github.com/vllm-project/vllm",
                "transformers": "https://github.com/huggingface/transformers"}


def permalink(package: str, version: str, path: str, line: int | None = None) -> str | None:
    """The file at that release's tag (`…/blob/v0.17.0/vllm/config/model.py#L1065`); None for a package whose
    repository is not known."""
    repo = REPOSITORIES.get(package)
    if repo is None:
        return None
    return f"{repo}/blob/v{version}/{path}" + (f"#L{line}" if line else "")


def code_span(text: str) -> str:
    """`text` as a Markdown code span whatever backticks it holds."""
    text = " ".join(text.split())
    run = longest = 0
    for c in text:
        run = run + 1 if c == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


Parts = tuple[tuple[str, bool], ...]   # a sentence as (text, is code) pieces


def markdown(parts: Parts) -> str:
    return "".join(code_span(text) if code else text for text, code in parts)


def what(site: Site) -> Parts:
    """What the statement does: "raised as `ValueError`", "logged at error level", "a failing `assert`"."""
    if site.kind == "log":
        return ((f"logged at {site.type} level" if site.type else "logged", False),)
    if site.kind == "assert":
        return (("raised by a failing ", False), ("assert", True), (" (an ", False), ("AssertionError", True),
                (")", False))
    return (("raised as ", False), (site.type, True)) if site.type else (("raised", False),)


def _where(site: Site) -> Parts:
    return ((" at import of the module", False),) if site.qualname == "<module>" else \
        ((" in ", False), (site.qualname, True))


def condition(site: Site) -> Parts:
    """The guarding condition in words, the code as code: "raised when `not model_cls.supports_pp` in
    `ModelConfig.verify_with_parallel_config`"."""
    verb = "logged" if site.kind == "log" else "raised"
    g = " ".join(site.guard.split()) if site.guard else None
    at = _where(site)
    kind = site.guard_kind
    if g and kind == "assert":
        return ((f"{verb} when the assertion ", False), (g, True), (" fails", False), *at)
    if g and kind == "if":
        return ((f"{verb} when ", False), (g, True), *at)
    if g and kind == "else":
        return ((f"{verb} when ", False), (g, True), (" is false (the ", False), ("else", True),
                (" of that ", False), ("if", True), (")", False), *at)
    if g and kind == "early-exit":
        return ((f"{verb} when ", False), (g, True), (" is false", False), *at,
                (" (an earlier ", False), ("if", True), (" leaves the block when it holds)", False))
    if g and kind == "except":
        return ((f"{verb} while handling ", False), (g, True), (" (in its ", False), ("except", True),
                (" clause)", False), *at)
    if g and kind == "case":
        return ((f"{verb} in the ", False), ("case " + g, True), (" of a ", False), ("match", True), *at)
    if site.qualname == "<module>":
        return ((verb, False), *at)
    return ((f"{verb} whenever ", False), (site.qualname, True),
            (" reaches this statement (no condition guards it)", False))


def guard_code(site: Site) -> str | None:
    """The guard as the line of code that holds it."""
    g = site.guard
    if not g:
        return None
    return {"if": f"if {g}:", "else": f"if {g}:  # false: the statement is in its else",
            "early-exit": f"if {g}:  # false: when true, the block is left before the statement",
            "except": f"except {g}:", "assert": f"assert {g}", "case": f"case {g}:"}.get(site.guard_kind or "", g)


@dataclass(frozen=True)
class Run:
    """Consecutive indexed releases that have the site at the same line."""

    first: Release
    last: Release
    line: int
    count: int

    @property
    def versions(self) -> str:
        return self.first.version if self.count == 1 else f"{self.first.version} – {self.last.version}"


def runs(index: SourceIndex, site: Site) -> list[Run]:
    """The releases that have the site, oldest first, grouped into runs of neighbouring releases (in the index's
    order) with the same line: 60 releases read as a handful of runs."""
    order = {r.id: i for i, r in enumerate(index.releases)}
    out: list[Run] = []
    previous = -2
    for release, line in index.lines_of(site):
        i = order[release.id]
        if out and i == previous + 1 and out[-1].line == line:
            last = out[-1]
            out[-1] = Run(last.first, release, line, last.count + 1)
        else:
            out.append(Run(release, release, line, 1))
        previous = i
    return out


@dataclass(frozen=True)
class Span:
    """Where a site is raised across the index: first and last release, and what lies outside them."""

    first: Release
    last: Release
    releases: int             # releases that have it
    gaps: int                 # releases between first and last that do not
    newest_indexed: Release
    next_after_last: Release | None   # the first indexed release after `last` (it no longer raises it there)


def span(index: SourceIndex, site: Site) -> Span | None:
    have = index.releases_of(site)
    if not have:
        return None
    order = {r.id: i for i, r in enumerate(index.releases)}
    lo, hi = order[have[0].id], order[have[-1].id]
    nxt = index.releases[hi + 1] if hi + 1 < len(index.releases) else None
    return Span(have[0], have[-1], len(have), hi - lo + 1 - len(have), index.releases[-1], nxt)


def line_at(index: SourceIndex, site: Site, version: str) -> tuple[Release, int, int] | None:
    release = index.by_version.get(version)
    if release is None:
        return None
    at = site.line_at(release.id)
    return (release, at[0], at[1]) if at is not None else None


def newest(index: SourceIndex, site: Site) -> tuple[Release, int, int] | None:
    """The newest release that raises it, with its line and end line."""
    have = index.releases_of(site)
    return line_at(index, site, have[-1].version) if have else None


def neighbours(index: SourceIndex, site: Site, release: Release, limit: int = 8) -> tuple[list[Site], list[Site]]:
    """(other sites of the same function, other sites of the same file nearest by line) at that release."""
    here = site.line_at(release.id)
    centre = here[0] if here else 0
    same_function, same_file = [], []
    for other in index.sites_in(site.file):
        if other.id == site.id:
            continue
        at = other.line_at(release.id)
        if at is None:
            continue
        (same_function if other.qualname == site.qualname else same_file).append((abs(at[0] - centre), at[0], other))
    pick = lambda found: [s for _, _, s in sorted(found, key=lambda x: (x[0], x[1]))[:limit]]  # noqa: E731
    return (sorted(pick(same_function), key=lambda s: s.line_at(release.id) or (0, 0)),
            sorted(pick(same_file), key=lambda s: s.line_at(release.id) or (0, 0)))
