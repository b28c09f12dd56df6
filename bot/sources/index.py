"""The raise-site index in memory, and matching an error to the sites that raise it (pure).

`SourceIndex` holds the releases (oldest first) and the sites of one package. Candidates for a message come
from an inverted index over the templates' literal words: each distinct template is filed under its rarest
word and under the rarest of its first words (so a message cut short still finds it); a message's words pick
the candidates, which are then fitted (bot/sources/template.py). Nothing is scanned.

`match(query)` answers with the best sites at the reporter's release (or, when no release has it there, at the
nearest release that has it), ties broken by the innermost vLLM traceback frame or the log line's
`[file.py:line]`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bot.sources.model import LINE_FIELDS, Release, Site
from bot.sources.template import Compiled, Fit, fit_message, fit_within, key_words, letters, squash, words
from bot.sources.versions import release_for

MIN_CHARS = 16           # literal characters (whitespace aside) a message must show of a template
MIN_SHARE_CUT = 0.5      # a message cut short shows at least this share of the template's literal text ...
MIN_CHARS_CUT = 40       # ... or at least this many of its characters
MIN_CHARS_KNOWN_CUT = 20 # a text known to be cut (the first line of a longer message) needs only this many
MIN_CHARS_TEXT = 20      # a quote in free text (a title) shows at least this many literal characters ...
MIN_CHARS_PARTIAL = 40   # ... and one that stops matching before the text ends, this many
MIN_SHARE_PARTIAL = 0.6  # ... and this share of the template's literal text
MIN_CHARS_ELSEWHERE = 30 # a site only other releases have needs a more specific fit than one the release has
# Python's own messages: a template that says little beyond one of them is the interpreter's error as often as
# the package's, so it is matched only when a traceback frame lies in the site's file
INTERPRETER_PHRASES = tuple(squash(p) for p in (
    "object has no attribute", "is not defined", "No module named", "cannot import name", "from",
    "got an unexpected keyword argument", "missing required positional argument", "positional arguments but",
    "were given", "was given", "takes", "object is not subscriptable", "object is not callable",
    "object is not iterable", "index out of range", "unsupported operand type(s) for", "has no attribute",
))
LEAD_WORDS = 4           # a template is also filed under the rarest of its first words
LOG_ERROR_LEVELS = frozenset({"error", "exception", "critical"})
# exception types that carry another's message: pydantic wraps a validator's ValueError/AssertionError/TypeError
WRAPPERS = {"ValidationError": frozenset({"ValueError", "AssertionError", "TypeError"})}


class FrameLike(Protocol):
    file: str
    line: int | None
    function: str | None


@dataclass(frozen=True)
class Query:
    """An error to resolve. `text` is the exception's message, a log line's message, or free text (a title)."""

    text: str
    type: str | None = None          # the exception type as shown ("torch.OutOfMemoryError" is fine)
    level: str | None = None         # the log level when the text is a log line's ("ERROR", "warning")
    free_text: bool = False          # the error is quoted somewhere in the text, not the whole of it
    cut: bool = False                # the text is known to stop short (the first line of a longer message)
    frames: Sequence[FrameLike] = () # the traceback's frames, innermost last
    location: tuple[str, int] | None = None  # the log line's `[file.py:line]`
    version: str | None = None       # the reporter's version, as written
    created_at: str | None = None    # when the report was filed (ISO 8601): the version when none is known


@dataclass(frozen=True)
class SiteMatch:
    site: Site
    release: Release            # the release `line` is read at: the reporter's, or the nearest that has the site
    line: int
    end_line: int
    at_release: bool            # the reporter's release raises it here
    fit: Fit | None             # how the message fits the template (None: resolved by the frame alone)
    by: str                     # "message", "message+frame", "message+location", "frame"

    @property
    def file(self) -> str:
        return self.site.file


@dataclass(frozen=True)
class Resolution:
    release: Release | None      # the reporter's release as mapped (None: no version, no date)
    matches: tuple[SiteMatch, ...] = ()   # best first; several when they could not be told apart

    @property
    def site(self) -> SiteMatch | None:
        """The one site, when the error resolved to exactly one."""
        return self.matches[0] if len(self.matches) == 1 else None


class _Template:
    """One distinct template and its sites; prepared for fitting when first a candidate."""

    __slots__ = ("sites", "_compiled", "_interpreter")

    def __init__(self) -> None:
        self.sites: list[Site] = []
        self._compiled: Compiled | None = None
        self._interpreter: bool | None = None

    @property
    def compiled(self) -> Compiled:
        if self._compiled is None:
            self._compiled = Compiled.of(self.sites[0].template)
        return self._compiled

    @property
    def interpreter_like(self) -> bool:
        """The template says little beyond one of Python's own messages."""
        if self._interpreter is None:
            rest = "".join(p for p in self.compiled.pieces if p is not None)
            for phrase in INTERPRETER_PHRASES:
                rest = rest.replace(phrase, "")
            self._interpreter = letters(rest) < 12
        return self._interpreter


class SourceIndex:
    """Releases and sites of one package, with the word index that finds candidate templates."""

    def __init__(self, package: str, releases: Iterable[Release], sites: Iterable[Site]) -> None:
        self.package = package
        self.releases: list[Release] = sorted(releases, key=lambda r: r.key)
        self.by_version = {r.version: r for r in self.releases}
        self.by_id = {r.id: r for r in self.releases}
        self._order = {r.id: i for i, r in enumerate(self.releases)}
        self._release_cache: dict[tuple[str | None, str | None], Release | None] = {}
        self.sites: dict[str, Site] = {}
        templates: dict[str, _Template] = {}
        words: dict[str, list[str]] = {}
        self._by_file: dict[str, list[Site]] = defaultdict(list)
        self._by_message: dict[tuple[str, str | None, str], list[Site]] = defaultdict(list)
        for site in sites:
            self.sites[site.id] = site
            self._by_file[site.file].append(site)
            self._by_message[(site.kind, site.type, site.template_json)].append(site)
            entry = templates.get(site.template_json)
            if entry is None:
                entry = templates[site.template_json] = _Template()
                words[site.template_json] = (site.words.split() if site.words is not None
                                             else key_words(site.template))
            entry.sites.append(site)
        self._templates = templates
        self._postings = _postings([(templates[k], w) for k, w in words.items()])

    def __len__(self) -> int:
        return len(self.sites)

    def same_message(self, site: Site) -> list[Site]:
        """Every site that raises (or logs) what `site` does, the same way: itself, and the same statement in another
        file or function of some release (a module split, a moved function)."""
        return list(self._by_message.get((site.kind, site.type, site.template_json), (site,)))

    def sites_in(self, file: str) -> list[Site]:
        """The sites of one module (a path like `vllm/config/model.py`), in any release."""
        return list(self._by_file.get(file, ()))

    def prepare(self) -> None:
        """Prepare every template for fitting now rather than when first a candidate (a long-running process
        does this once after loading, so no query pays for it)."""
        for entries in self._postings.values():
            for entry in entries:
                entry.interpreter_like  # noqa: B018 - computes and caches compiled too

    # ---- releases ----
    def release_for(self, version: str | None, created_at: str | None = None) -> Release | None:
        key = (version, created_at[:19] if created_at else None)
        if key not in self._release_cache:
            if len(self._release_cache) > 4096:
                self._release_cache.clear()
            self._release_cache[key] = release_for(self.releases, version, created_at)
        return self._release_cache[key]

    def releases_of(self, site: Site) -> list[Release]:
        """The releases that have the site, oldest first."""
        return sorted((self.by_id[i] for i in site.release_ids() if i in self.by_id), key=lambda r: r.key)

    def lines_of(self, site: Site) -> list[tuple[Release, int]]:
        """(release, line) for every release that has the site, oldest first."""
        lines = site.lines
        out = [(self.by_id[lines[i]], lines[i + 1]) for i in range(0, len(lines), LINE_FIELDS)
               if lines[i] in self.by_id]
        return sorted(out, key=lambda p: p[0].key)

    def _nearest(self, site: Site, release: Release | None) -> tuple[Release, int, int] | None:
        """The site's release closest to `release` (the newest when none is given), its line and end line."""
        lines = site.lines
        best = None
        target = self._order[release.id] if release is not None else len(self.releases)
        for i in range(0, len(lines), LINE_FIELDS):
            order = self._order.get(lines[i])
            if order is None:
                continue
            # nearest first; at equal distance the later release (its code is what the reporter may move to)
            rank = (abs(order - target), -order)
            if best is None or rank < best[0]:
                best = (rank, self.releases[order], lines[i + 1], lines[i + 2])
        return best[1:] if best is not None else None

    # ---- candidates ----
    def candidates(self, text: str) -> list[_Template]:
        found: dict[int, _Template] = {}
        for word in words(text):
            for entry in self._postings.get(word, ()):
                found[id(entry)] = entry
        return list(found.values())

    # ---- matching ----
    def match(self, query: Query, limit: int = 8) -> Resolution:
        release = self.release_for(query.version, query.created_at)
        fits: list[tuple[Fit, Site]] = []
        squashed = squash(query.text)
        fitter = fit_within if query.free_text else fit_message
        for entry in self.candidates(query.text):
            compiled = entry.compiled
            if not compiled.specific():
                continue
            fit = fitter(query.text, compiled, squashed=squashed)
            if fit is None or not _enough(fit, compiled, query):
                continue
            for site in entry.sites:
                if not _type_ok(site, query):
                    continue
                if entry.interpreter_like and not self._in_frames(site, query):
                    continue
                if fit.chars < MIN_CHARS_ELSEWHERE and (release is None or site.line_at(release.id) is None):
                    continue
                fits.append((fit, site))
        if fits:
            best = max(f.rank for f, _ in fits)
            top = [(f, s) for f, s in fits if f.rank == best]
            matches = self._place(top, release)
            matches = self._break_ties(matches, query, release)
            return Resolution(release, tuple(matches[:limit]))
        by_frame = self._by_frame(query, release)
        return Resolution(release, tuple(by_frame[:limit]))

    def _in_frames(self, site: Site, query: Query) -> bool:
        return any(f.file and vllm_path(f.file, self.package) == site.file for f in query.frames)

    def _place(self, top: list[tuple[Fit, Site]], release: Release | None) -> list[SiteMatch]:
        """Each site at the reporter's release; when none has it there, only those of the nearest release."""
        here: list[SiteMatch] = []
        elsewhere: list[tuple[int, SiteMatch]] = []
        for fit, site in top:
            at = site.line_at(release.id) if release is not None else None
            if at is not None and release is not None:
                here.append(SiteMatch(site, release, at[0], at[1], True, fit, "message"))
                continue
            near = self._nearest(site, release)
            if near is None:
                continue
            rel, line, end = near
            distance = abs(self._order[rel.id] - (self._order[release.id] if release else len(self.releases)))
            elsewhere.append((distance, SiteMatch(site, rel, line, end, False, fit, "message")))
        if here:
            return sorted(here, key=_order_key)
        if not elsewhere:
            return []
        closest = min(d for d, _ in elsewhere)
        return sorted((m for d, m in elsewhere if d == closest), key=_order_key)

    def _break_ties(self, matches: list[SiteMatch], query: Query, release: Release | None) -> list[SiteMatch]:
        if len(matches) < 2:
            return matches
        frames = [f for f in query.frames if f.file and vllm_path(f.file, self.package)]
        for strict in (True, False):  # at the frame's line first, then anywhere in the frame's function
            for frame in reversed(frames):  # the innermost frame first
                path = vllm_path(frame.file, self.package)
                chosen = [m for m in matches if m.site.file == path
                          and (not frame.function or frame.function == m.site.function)
                          and (not strict or (frame.line is not None and m.line <= frame.line <= m.end_line))]
                if chosen:
                    return [_by(m, "message+frame") for m in chosen]
        if query.location is not None:
            name, line = query.location
            chosen = [m for m in matches if m.site.file.rsplit("/", 1)[-1] == name and m.line <= line <= m.end_line]
            if not chosen:
                chosen = [m for m in matches if m.site.file.rsplit("/", 1)[-1] == name]
            if chosen:
                return [_by(m, "message+location") for m in chosen]
        return matches

    def _by_frame(self, query: Query, release: Release | None) -> list[SiteMatch]:
        """Without a fitting message: the site the innermost frame points at, when that frame is the package's."""
        if not query.frames or release is None:
            return []
        frame = query.frames[-1]
        path = vllm_path(frame.file, self.package) if frame.file else None
        if path is None or frame.line is None:
            return []
        out = []
        for site in self._by_file.get(path, ()):
            at = site.line_at(release.id)
            if at is None or not at[0] <= frame.line <= at[1]:
                continue
            if frame.function and frame.function != site.function:
                continue
            if query.type and site.kind != "log" and not _same_type(site.type, query.type):
                continue
            out.append(SiteMatch(site, release, at[0], at[1], True, None, "frame"))
        return out


def _by(m: SiteMatch, by: str) -> SiteMatch:
    return SiteMatch(m.site, m.release, m.line, m.end_line, m.at_release, m.fit, by)


def _order_key(m: SiteMatch) -> tuple:
    return (m.site.file, m.line)


def _enough(fit: Fit, compiled: Compiled, query: Query) -> bool:
    if fit.chars < MIN_CHARS:
        return False
    if query.free_text:
        if fit.chars < MIN_CHARS_TEXT:
            return False
        if fit.how == "partial":
            return fit.chars >= MIN_CHARS_PARTIAL and fit.chars >= MIN_SHARE_PARTIAL * compiled.literal_chars
    if fit.how == "exact":
        return True
    if query.cut and fit.how == "cut" and fit.chars >= MIN_CHARS_KNOWN_CUT:
        return True
    return fit.chars >= MIN_CHARS_CUT or fit.chars >= MIN_SHARE_CUT * compiled.literal_chars


def short_type(name: str) -> str:
    return name.rsplit(".", 1)[-1].strip()


def _same_type(site_type: str | None, shown: str) -> bool:
    if site_type is None:
        return True
    shown = short_type(shown)
    return site_type == shown or site_type in WRAPPERS.get(shown, ())


def _type_ok(site: Site, query: Query) -> bool:
    if query.type:
        return site.kind != "log" and _same_type(site.type, query.type)
    if query.level:
        level = query.level.lower()
        if site.kind != "log":
            return level in LOG_ERROR_LEVELS  # an exception's message is often logged as an error
        if level in ("warning", "warn"):
            return site.type == "warning"
        return site.type in LOG_ERROR_LEVELS
    return True


def vllm_path(path: str, package: str = "vllm") -> str | None:
    """The package-relative path of a traceback's file (`…/site-packages/vllm/config/model.py` ->
    `vllm/config/model.py`), None when the file is not in the package."""
    p = path.replace("\\", "/")
    prefix = package + "/"
    for root in ("/site-packages/", "/dist-packages/"):
        i = p.rfind(root)
        if i >= 0:
            rel = p[i + len(root):]
            return rel if rel.startswith(prefix) else None
    if p.startswith(prefix):
        return p
    i = p.rfind("/" + prefix)  # a checkout: …/vllm/vllm/engine/x.py
    return p[i + 1:] if i >= 0 else None


def _postings(templates: list[tuple[_Template, list[str]]]) -> dict[str, list[_Template]]:
    """word -> templates filed under it: each under its rarest word, and under the rarest of its first words."""
    df: dict[str, int] = defaultdict(int)
    for _, ws in templates:
        for w in set(ws):
            df[w] += 1
    postings: dict[str, list[_Template]] = defaultdict(list)
    for entry, ws in templates:
        if not ws:
            continue
        rarest = min(ws, key=lambda w: (df[w], -len(w)))
        postings[rarest].append(entry)
        lead = min(ws[:LEAD_WORDS], key=lambda w: (df[w], -len(w)))
        if lead != rarest:
            postings[lead].append(entry)
    return dict(postings)
