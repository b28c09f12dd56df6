"""The error explainer pages and the paste-an-error search, on the dashboard's application (read like the catalog).

    GET  /dashboard/errors                 the search box (and ?q= for a short error), the index's state
    POST /dashboard/errors                 search a pasted error (CSRF, rate-limited per client): one site ->
                                           its page, several -> a list, none -> the catalog rules the text matches
    GET  /dashboard/errors/{id}            one site's explainer page (?release=0.17.0 picks the release shown)
    GET  /api/errors/{id}                  the same as JSON
    GET  /api/errors?q=…                   the search as JSON

`routes.setup` registers them with its own page renderer and access check (`Deps`), so this module does not
import routes (no cycle). Without the index every page answers and says how to build it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.dashboard.auth import LoginThrottle, check_csrf
from bot.dashboard.catalog import Catalog
from bot.dashboard.explainer import ErrorPage, IssueRef, build_page, chosen_release, ref
from bot.dashboard.settings import DashboardSettings
from bot.dashboard.siteindex import BUILD_COMMAND, Loaded, SiteIndexes
from bot.dashboard.sitelinks import coverage, page_of
from bot.isotime import epoch
from bot.report import parse
from bot.rules import RuleSet
from bot.sources.index import SiteMatch, SourceIndex
from bot.sources.search import MAX_PASTE, Found, search

SITE_ID = r"{site:[0-9a-f]{16}}"
MAX_QUERY = 4_000            # characters of an error in a URL (?q=)
MAX_VERSION = 40
SEARCHES_PER_MINUTE = 30     # per client: the search parses and fits untrusted text
MAX_LISTED = 20
MAX_ISSUES = 200


@dataclass
class Deps:
    """What the dashboard's routes lend these pages."""

    require_read: Callable[..., None]                          # (request, json_api=False)
    page: Callable[..., web.Response]                          # (request, template, status=200, **context)
    catalog: Callable[[], Awaitable[Catalog]]
    rules: Callable[[], Awaitable[RuleSet]]
    records: Callable[[web.Request], Awaitable[list[Any]]]     # the newest decision per issue
    client: Callable[[web.Request], str]
    sources: SiteIndexes
    throttle: LoginThrottle
    settings: DashboardSettings


DEPS = web.AppKey("error_pages", Deps)
WARMING = web.AppKey("error_pages_warming", asyncio.Task)
log = logging.getLogger("vllm_triage.dashboard")


def _deps(request: web.Request) -> Deps:
    return request.app[DEPS]


# ------------------------------------------------------------------------------------------------ issues

def site_ids(plan: Any) -> tuple[set[str], str | None]:
    """The raise sites a decision record names (`plan["decision"]["site"]`: its `id` and the `ids` of every
    site tied with it, bot/app/record.py site_detail), and the release it was resolved at."""
    decision = plan.get("decision") if isinstance(plan, dict) else None
    site = decision.get("site") if isinstance(decision, dict) else None
    if not isinstance(site, dict) or not site.get("id"):
        return set(), None
    tied = site.get("ids") if isinstance(site.get("ids"), list) else []
    ids = {str(site["id"])} | {str(i) for i in tied if isinstance(i, str) and i}
    release = site.get("release")
    return ids, str(release) if release else None


def matched_issues(records: list[Any], wanted: set[str]) -> tuple[list[IssueRef], bool]:
    """The issues whose newest decision resolved to one of `wanted`, newest first; and whether any decision records a
    raise site at all."""
    out, recorded = [], False
    for rec in records:
        ids, release = site_ids(rec.plan)
        recorded = recorded or bool(ids)
        if ids & wanted:
            issue = rec.plan.get("issue") if isinstance(rec.plan.get("issue"), dict) else {}
            out.append(IssueRef(rec.repo, rec.number, str(issue.get("title") or f"#{rec.number}"), issue.get("url"),
                                epoch(issue.get("created_at")) or rec.created_at, release))
    out.sort(key=lambda i: -i.opened)
    return out[:MAX_ISSUES], recorded


# ------------------------------------------------------------------------------------------------ the page

async def _coverage(deps: Deps) -> tuple[Catalog, dict[str, tuple[str, ...]]]:
    catalog = await deps.catalog()
    cover = await asyncio.get_running_loop().run_in_executor(None, coverage, catalog)
    return catalog, cover


async def build(request: web.Request, loaded: Loaded, index: SourceIndex, site_id: str) -> ErrorPage:
    deps = _deps(request)
    site = index.sites[site_id]
    version = request.query.get("release", "")[:MAX_VERSION] or None
    release, requested = chosen_release(index, site, version)
    text = await deps.sources.source(site.package, release.version, site.file)
    catalog, cover = await _coverage(deps)
    rule_ids = cover.get(site.id, ())
    entries = [e for e in (catalog.entry(rid) for rid in rule_ids) if e is not None]
    superseding: dict[str, str] = {}
    for e in entries:
        for rid in e.superseded_by:
            other = catalog.entry(rid)
            if other is not None and rid not in rule_ids:
                superseding[rid] = other.title
    wanted = {site.id} | {s.id for s in index.same_message(site)}
    issues, recorded = matched_issues(await deps.records(request), wanted)
    built = loaded.built.get(site.package, ())
    return build_page(index, site, release, requested, text, rules=entries, superseding=list(superseding.items()),
                      issues=issues, issues_recorded=recorded,
                      built_at=max((r.built_at for r in built), default=None))


async def _site(request: web.Request, *, json_api: bool) -> tuple[Loaded, SourceIndex, str]:
    deps = _deps(request)
    deps.require_read(request, json_api=json_api)
    loaded = await deps.sources.get()
    site_id = request.match_info["site"]
    found = loaded.site(site_id) if loaded is not None else None
    if found is None:
        why = (f"no raise-site index is built: run `{BUILD_COMMAND}`" if loaded is None
               else "no such error in the raise-site index")
        if json_api:
            raise web.HTTPNotFound(text=json.dumps({"error": why, "build": BUILD_COMMAND if loaded is None else None}),
                                   content_type="application/json")
        raise web.HTTPNotFound(text=why)
    return loaded, found[0], site_id


async def error_page(request: web.Request) -> web.Response:
    loaded, index, site_id = await _site(request, json_api=False)
    page = await build(request, loaded, index, site_id)
    return _deps(request).page(request, "explainer.html.j2", title=page.title, p=page)


async def api_error(request: web.Request) -> web.Response:
    loaded, index, site_id = await _site(request, json_api=True)
    page = await build(request, loaded, index, site_id)
    return web.json_response(page.as_json())


# ------------------------------------------------------------------------------------------------ search

@dataclass(frozen=True)
class Hit:
    match: SiteMatch
    releases: str
    page: str


async def _search(deps: Deps, loaded: Loaded, text: str, version: str | None) -> tuple[Found, list[Hit]]:
    def run() -> tuple[Found, list[Hit]]:
        for index in loaded.indexes.values():
            found = search(index, text, version)
            if found.matches:
                hits = []
                for m in found.matches[:MAX_LISTED]:
                    r = ref(index, m.site, m.release)
                    hits.append(Hit(m, r.releases, f"{page_of(m.site.id)}?release={m.release.version}"))
                return found, hits
        return Found(None, None, len(text) > MAX_PASTE), []

    return await asyncio.get_running_loop().run_in_executor(None, run)


async def _suggest(deps: Deps, text: str) -> list[tuple[str, str]]:
    """The catalog rules whose conditions match the pasted text as a report."""
    rules = await deps.rules()

    def run() -> list[tuple[str, str]]:
        report = parse("", text[-MAX_PASTE:])
        return [(f.rule, f.title) for f in rules.evaluate(report)][:MAX_LISTED]

    return await asyncio.get_running_loop().run_in_executor(None, run)


def _throttled(request: web.Request) -> bool:
    deps = _deps(request)
    client = deps.client(request)
    if deps.throttle.blocked(client):
        return True
    deps.throttle.failed(client)   # counts every search, not only failed ones
    return False


async def _answer(request: web.Request, text: str, version: str | None) -> web.Response:
    deps = _deps(request)
    loaded = await deps.sources.get()
    context: dict[str, Any] = {"title": "Errors", "loaded": _state(loaded), "build": BUILD_COMMAND, "q": text,
                               "version": version or "", "searched": True, "hits": [], "suggested": [],
                               "truncated": False, "of": None, "max_paste": MAX_PASTE, "release": None}
    if not text.strip():
        context["searched"] = False
        return deps.page(request, "errors.html.j2", **context)
    if _throttled(request):
        return deps.page(request, "errors.html.j2", status=429,
                         **{**context, "searched": False, "error": "Too many searches; wait a minute."})
    if loaded is not None:
        found, hits = await _search(deps, loaded, text, version)
        if len(hits) == 1:
            raise web.HTTPSeeOther(hits[0].page)
        release = found.resolution.release if found.resolution is not None else None
        context.update(hits=hits, truncated=found.truncated, of=found.of,
                       release=release.version if release is not None else None)
    if not context["hits"]:
        context["suggested"] = await _suggest(deps, text)
    return deps.page(request, "errors.html.j2", **context)


def _state(loaded: Loaded | None) -> dict[str, Any] | None:
    if loaded is None:
        return None
    return {p: {"releases": len(index.releases), "first": index.releases[0].version,
                "last": index.releases[-1].version, "sites": len(index)}
            for p, index in loaded.indexes.items() if index.releases}


async def errors_get(request: web.Request) -> web.Response:
    deps = _deps(request)
    deps.require_read(request)
    q = request.query.get("q", "")
    if len(q) > MAX_QUERY:
        raise web.HTTPRequestEntityTooLarge(MAX_QUERY, len(q), text="paste a long error in the form (POST)")
    return await _answer(request, q, request.query.get("version", "")[:MAX_VERSION].strip() or None)


async def errors_post(request: web.Request) -> web.Response:
    deps = _deps(request)
    deps.require_read(request)
    form = await check_csrf(request, deps.settings)
    text = form.get("error", "")[-MAX_PASTE * 2:]
    return await _answer(request, text, form.get("version", "")[:MAX_VERSION].strip() or None)


async def api_search(request: web.Request) -> web.Response:
    deps = _deps(request)
    deps.require_read(request, json_api=True)
    q = request.query.get("q", "")
    if not q.strip() or len(q) > MAX_QUERY:
        raise web.HTTPBadRequest(text=json.dumps({"error": f"q: an error of 1 to {MAX_QUERY} characters"}),
                                 content_type="application/json")
    if _throttled(request):
        raise web.HTTPTooManyRequests(text=json.dumps({"error": "too many searches; wait a minute"}),
                                      content_type="application/json")
    loaded = await deps.sources.get()
    if loaded is None:
        return web.json_response({"matches": [], "build": BUILD_COMMAND, "suggested_rules": [
            {"id": rid, "title": t, "page": f"/dashboard/rules/{rid}"} for rid, t in await _suggest(deps, q)]})
    version = request.query.get("version", "")[:MAX_VERSION].strip() or None
    found, hits = await _search(deps, loaded, q, version)
    out: dict[str, Any] = {"read_as": found.of, "matches": [
        {"id": h.match.site.id, "file": h.match.site.file, "qualname": h.match.site.qualname,
         "type": h.match.site.type, "release": h.match.release.version, "line": h.match.line,
         "at_release": h.match.at_release, "releases": h.releases, "page": h.page,
         "api": f"/api/errors/{h.match.site.id}"} for h in hits]}
    if not hits:
        out["suggested_rules"] = [{"id": rid, "title": t, "page": f"/dashboard/rules/{rid}"}
                                  for rid, t in await _suggest(deps, q)]
    return web.json_response(out)


async def warm(deps: Deps) -> bool:
    """Load the index and link the catalog's rules to its sites before anyone asks (with every release indexed
    that takes the first visitor tens of seconds otherwise). False when no index is built."""
    try:
        if await deps.sources.get() is None:
            return False
        await _coverage(deps)
    except Exception:   # the pages load it again on first use, and say what fails
        log.warning("error pages: could not load the raise-site index ahead of use", exc_info=True)
        return False
    return True


def setup(app: web.Application, deps: Deps) -> None:
    app[DEPS] = deps

    async def start_warming(app: web.Application) -> None:
        app[WARMING] = asyncio.create_task(warm(deps))

    async def stop_warming(app: web.Application) -> None:
        task = app.get(WARMING)
        if task is not None and not task.done():
            task.cancel()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    app.on_startup.append(start_warming)
    app.on_shutdown.append(stop_warming)
    r = app.router
    r.add_get("/dashboard/errors", errors_get)
    r.add_post("/dashboard/errors", errors_post)
    r.add_get(f"/dashboard/errors/{SITE_ID}", error_page)
    r.add_get("/api/errors", api_search)
    r.add_get(f"/api/errors/{SITE_ID}", api_error)
