"""The dashboard's routes on the App's aiohttp application.

    GET  /dashboard/                      overview: triaged per day, labels over time, top causes, rule precision
    GET  /dashboard/queue                 issues that need a human (filters: repo, label, reason, age; sort)
    GET  /dashboard/issues/{owner}/{repo}/{number}
    POST /dashboard/issues/{owner}/{repo}/{number}/{retriage|duplicate|not-duplicate|suppress-rule}   (login + CSRF)
    GET  /dashboard/rules, /dashboard/rules/{id}        the error catalog
    GET  /api/rules, /api/rules/{id}                     the same as JSON
    GET|POST /dashboard/errors, GET /dashboard/errors/{id}, GET /api/errors[/{id}]
                                                         error explainer pages and search (bot/dashboard/errors.py)
    GET|POST /dashboard/login, POST /dashboard/logout
    GET  /dashboard/static/...                           CSS, JS and the vendored Chart.js
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from bot.app.context import SERVICE, STORE, client_address
from bot.app.service import Service
from bot.app.settings import Settings
from bot.dashboard import data, errors
from bot.dashboard.auth import (
    SESSION,
    LoginThrottle,
    Session,
    check_csrf,
    csrf_token,
    current_session,
    new_session,
    session_middleware,
    set_session,
)
from bot.dashboard.catalog import Catalog
from bot.dashboard.render import STATIC_DIR, environment
from bot.dashboard.settings import DashboardSettings, dashboard_settings
from bot.dashboard.siteindex import SiteIndexes
from bot.dashboard.sitelinks import IndexSites
from bot.dashboard.views import issue_view
from bot.rules import DEFAULT_RULES_DIR, RuleSet, load_rules
from bot.stores.deliveries import DeliveryStore

log = logging.getLogger("vllm_triage.dashboard")
PREFIXES = ("/dashboard", "/api/rules", "/api/errors")
MAX_ROWS = 20_000
CLOCK_SKEW = 120.0   # seconds: replicas' clocks may differ when they write decisions
DONE_MESSAGES = {
    "retriage": "Triage ran again; the newest decision is shown below.",
    "not-duplicate": "Recorded: not a duplicate. The link will not be suggested again and the triage ran again.",
    "duplicate": "Recorded: the same issue. It is linked as a duplicate from now on and the triage ran again.",
    "suppress-rule": "Recorded: the rule is suppressed for this issue and the triage ran again.",
}


@dataclass
class Dashboard:
    settings: DashboardSettings
    app_settings: Settings
    throttle: LoginThrottle = field(default_factory=LoginThrottle)
    sources: SiteIndexes | None = None      # the raise-site index, when one is built
    _rules: RuleSet | None = None
    _catalog: Catalog | None = None
    _catalog_key: tuple | None = None       # the index the catalog was built with
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # newest decision per issue, for the error pages (bot/dashboard/errors.py), kept between requests: each request
    # reads only what was decided since. The overview, queue and catalog read the store's read model instead.
    _records: dict[tuple[str, int], Any] = field(default_factory=dict)
    _watermark: float | None = None
    _records_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def latest(self, store: Any) -> list[Any]:
        async with self._records_lock:
            since = None if self._watermark is None else self._watermark - CLOCK_SKEW
            for rec in await store.latest_decisions(since=since, limit=MAX_ROWS):
                key = (rec.repo, rec.number)
                current = self._records.get(key)
                if current is None or rec.id > current.id:
                    self._records[key] = rec
                self._watermark = max(self._watermark or rec.created_at, rec.created_at)
            return sorted(self._records.values(), key=lambda r: -r.id)

    async def rules(self) -> RuleSet:
        if self._rules is None:
            async with self._lock:
                if self._rules is None:
                    directory = self.app_settings.rules_dir or DEFAULT_RULES_DIR
                    self._rules = await asyncio.get_running_loop().run_in_executor(None, load_rules, directory)
        return self._rules

    async def catalog(self) -> Catalog:
        """The catalog, with its rules linked to their raise sites when the index is built (rebuilt when the
        index gains releases)."""
        loaded = await self.sources.get() if self.sources is not None else None
        key = loaded.signature if loaded is not None else None
        if self._catalog is None or key != self._catalog_key:
            sites = IndexSites(loaded.indexes) if loaded is not None else None
            self._catalog, self._catalog_key = Catalog(await self.rules(), sites), key
        return self._catalog


DASHBOARD = web.AppKey("dashboard", Dashboard)


def _store(request: web.Request) -> DeliveryStore:
    return request.app[STORE]


def _service(request: web.Request) -> Service:
    return request.app[SERVICE]


def _page(request: web.Request, template: str, status: int = 200, **context: Any) -> web.Response:
    dash = request.app[DASHBOARD]
    session: Session = current_session(request)
    html = environment().get_template(template).render(
        inline=False, user=session.user, csrf=csrf_token(dash.settings, session), public=dash.settings.public,
        path=request.path, mode=dash.app_settings.mode, now=time.time(), **context)
    return web.Response(text=html, content_type="text/html", charset="utf-8", status=status)


ERROR_HEADINGS = {400: "Bad request", 401: "Log in first", 403: "Refused", 404: "Not found",
                  405: "Method not allowed", 409: "Nothing to do", 429: "Too many requests", 502: "The triage failed"}
_KEEP_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate")


def _error_message(e: web.HTTPException) -> str:
    text = (e.text or "").strip()
    return "" if not text or text.startswith(f"{e.status}:") else text


def error_pages(prefix: str = "/dashboard"):
    """A dashboard page that fails with 4xx (no such issue or rule, a bad filter, a refused action) answers with
    an HTML page in the dashboard's layout, navigation included, with the same status; the JSON API and static
    files keep their plain answers."""

    @web.middleware
    async def middleware(request: web.Request, handler):
        try:
            return await handler(request)
        except web.HTTPException as e:
            if e.status < 400 or not request.path.startswith(prefix) or request.path.startswith(
                    f"{prefix}/static/") or request.get(SESSION) is None:
                raise
            response = _page(request, "error.html.j2", status=e.status,
                             title=ERROR_HEADINGS.get(e.status, e.reason), status_code=e.status,
                             message=_error_message(e))
            for name in _KEEP_HEADERS:
                if name in e.headers:
                    response.headers[name] = e.headers[name]
            return response

    return middleware


def _api_token_ok(request: web.Request) -> bool:
    token = request.app[DASHBOARD].app_settings.api_token
    return bool(token) and request.headers.get("Authorization") == f"Bearer {token}"


def _require_read(request: web.Request, *, json_api: bool = False) -> None:
    dash = request.app[DASHBOARD]
    if dash.settings.public or current_session(request).logged_in or _api_token_ok(request):
        return
    if json_api:
        raise web.HTTPUnauthorized(text="log in on /dashboard/login or set Authorization: Bearer <API token>")
    raise web.HTTPSeeOther(f"/dashboard/login?next={request.path}")


# ------------------------------------------------------------------------------------------------ pages

CAUSE_ISSUES = 5     # issues named per root cause (the page shows 4, then …)


async def overview(request: web.Request) -> web.Response:
    _require_read(request)
    store, dash = _store(request), request.app[DASHBOARD]
    now = time.time()
    counts = await store.dashboard_counts()
    anchor = data.anchor_time(await store.newest_opened(), now)
    day_rows = await store.days(*data.day_range(anchor, 30))   # per-day counters, not the issues of 30 days
    top = {days: data.ranked_causes(day_rows, anchor, days) for days in (7, 30)}
    bounds = {days: data.day_range(anchor, days) for days in top}
    wanted = [(c.key, bounds[days][0] * data.DAY, (bounds[days][1] + 1) * data.DAY)
              for days, causes in top.items() for c in causes]
    found = iter(await store.cause_issues(wanted, CAUSE_ISSUES))   # one statement for both windows
    top = {days: data.with_issues(causes, [next(found) for _ in causes]) for days, causes in top.items()}
    disagreement = await store.disagreement()   # one small table of counters
    deliveries = await store.delivery_counts(done=False)
    return _page(
        request, "overview.html.j2", title="Overview",
        totals={"issues": counts.get("issues", 0), "diagnosed": counts.get("diagnosed", 0),
                "needs_info": counts.get("needs_info", 0), "with_duplicates": counts.get("with_candidates", 0),
                "queue": counts.get("queue", 0), "parked": deliveries.get("parked", 0),
                "config_errors": len(await store.config_errors())},
        charts=data.chart_data(day_rows, anchor), top7=top[7], top30=top[30],
        anchor=anchor if anchor != now else None,
        rule_stats=data.rule_stats(counts, disagreement, await dash.rules()),
        dupes=data.duplicate_stats(counts, disagreement), deliveries=deliveries)


def _number(raw: str | None, what: str = "age must be a number of days") -> float | None:
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise web.HTTPBadRequest(text=what) from None
    return value if value >= 0 else None


QUEUE_PAGE = 50


@dataclass(frozen=True)
class QueueForm:
    """The queue's filters as the page's form shows them."""

    repo: str | None
    label: str | None
    reason: str | None
    age: str
    sort: str
    page: int

    def url(self, page: int) -> str:
        params = {k: v for k, v in (("repo", self.repo), ("label", self.label), ("reason", self.reason),
                                    ("age", self.age), ("sort", self.sort)) if v}
        return "/dashboard/queue?" + urlencode({**params, "page": page})


async def queue(request: web.Request) -> web.Response:
    _require_read(request)
    store = _store(request)
    q = request.query
    age = _number(q.get("age"))
    page = int(_number(q.get("page"), "page must be a number") or 1)
    form = QueueForm(repo=q.get("repo") or None, label=q.get("label") or None,
                     reason=q.get("reason") if q.get("reason") in data.QUEUE_REASONS else None,
                     age=q.get("age", "") if age is not None else "",
                     sort=q.get("sort") if q.get("sort") in data.QUEUE_SORTS else "priority", page=max(1, page))
    query = data.QueueQuery(repo=form.repo, label=form.label, reason=form.reason,
                            opened_since=time.time() - age * data.DAY if age is not None else None, sort=form.sort,
                            limit=QUEUE_PAGE, offset=(form.page - 1) * QUEUE_PAGE)
    items, total = await store.queue(query)
    counts = await store.dashboard_counts()
    return _page(
        request, "queue.html.j2", title="Queue", items=items, total=total, flt=form,
        pages=max(1, -(-total // QUEUE_PAGE)), first=query.offset + 1,
        repos=sorted(name[len("repo:"):] for name in counts if name.startswith("repo:")),
        labels=sorted(name[len("label:"):] for name in counts if name.startswith("label:")),
        reasons=data.QUEUE_REASONS, sorts=data.QUEUE_SORTS, priorities=data.PRIORITIES,
        parked=await store.deliveries("parked", 100), config_errors=await store.config_errors())


def _issue_key(request: web.Request) -> tuple[str, int]:
    info = request.match_info
    return f"{info['owner']}/{info['name']}", int(info["number"])


async def issue_page(request: web.Request) -> web.Response:
    _require_read(request)
    repo, number = _issue_key(request)
    store, dash = _store(request), request.app[DASHBOARD]
    records = await store.decisions(repo, number, 50)
    if not records:
        raise web.HTTPNotFound(text=f"no decision recorded for {repo}#{number}")
    view = issue_view(records, await store.issue_state(repo, number), await store.feedback(repo, number),
                      await store.issue_deliveries(repo, number), await dash.rules(),
                      await store.issue_summary(repo, number))
    done = DONE_MESSAGES.get(request.query.get("done", ""))
    return _page(request, "issue.html.j2", title=f"{repo}#{number}", v=view, done=done)


async def catalog_index(request: web.Request) -> web.Response:
    _require_read(request)
    catalog = await request.app[DASHBOARD].catalog()
    hits = data.rule_hits(await _store(request).dashboard_counts())
    entries = [catalog.entry(rid) for rid in catalog.ids()]
    query = request.query.get("q", "")[:200]
    labels = sorted({lb for e in entries for lb in e.labels})
    label = request.query.get("label") if request.query.get("label") in labels else None
    shown = [e for e in entries if e.matches(query, label)]
    return _page(request, "catalog.html.j2", title="Error catalog", entries=shown, total=len(entries), hits=hits,
                 query=query, label=label, labels=labels)


MAX_MATCHED = 200


async def catalog_rule(request: web.Request) -> web.Response:
    _require_read(request)
    entry = (await request.app[DASHBOARD].catalog()).entry(request.match_info["rule"])
    if entry is None:
        raise web.HTTPNotFound(text="no such rule")
    store = _store(request)
    hits = data.rule_hits(await store.dashboard_counts()).get(entry.id, 0)
    return _page(request, "rule.html.j2", title=entry.title, e=entry, hits=hits,
                 matched=await store.rule_issues(entry.id, MAX_MATCHED))


def _issue_json(row: data.IssueSummary) -> dict[str, Any]:
    return {"repo": row.repo, "number": row.number, "title": row.title, "url": row.url,
            "dashboard": f"/dashboard/issues/{row.repo}/{row.number}", "opened": row.opened, "state": row.state}


async def api_rules(request: web.Request) -> web.Response:
    _require_read(request, json_api=True)
    catalog = await request.app[DASHBOARD].catalog()
    hits = data.rule_hits(await _store(request).dashboard_counts())
    out = []
    for rid in catalog.ids():
        e = catalog.entry(rid)
        out.append({"id": e.id, "title": e.title, "labels": list(e.labels), "confidence": e.confidence,
                    "message": e.message, "raised_in": e.raised_in, "affects": e.affects, "fixed_in": e.fixed_in,
                    "matched_issues": hits.get(e.id, 0), "url": f"/api/rules/{e.id}",
                    "page": f"/dashboard/rules/{e.id}"})
    return web.json_response(out)


async def api_rule(request: web.Request) -> web.Response:
    _require_read(request, json_api=True)
    entry = (await request.app[DASHBOARD].catalog()).entry(request.match_info["rule"])
    if entry is None:
        raise web.HTTPNotFound(text=json.dumps({"error": "no such rule"}), content_type="application/json")
    rows = await _store(request).rule_issues(entry.id, MAX_MATCHED)
    return web.json_response(entry.as_json([_issue_json(r) for r in rows]))


# ------------------------------------------------------------------------------------------------ login

def _safe_next(target: str | None) -> str:
    if target and target.startswith("/dashboard") and "//" not in target and "\\" not in target:
        return target
    return "/dashboard/"


async def login_form(request: web.Request) -> web.Response:
    dash = request.app[DASHBOARD]
    return _page(request, "login.html.j2", title="Log in", next=_safe_next(request.query.get("next")),
                 configured=bool(dash.settings.tokens), error=None)


async def login(request: web.Request) -> web.Response:
    dash = request.app[DASHBOARD]
    form = await check_csrf(request, dash.settings)
    client = client_address(request)
    target = _safe_next(form.get("next"))
    if dash.throttle.blocked(client):
        return _page(request, "login.html.j2", status=429, title="Log in", next=target, configured=True,
                     error="Too many failed attempts; wait a few minutes.")
    user = dash.settings.maintainer(form.get("token", "")[:1000]) if form.get("token") else None
    if user is None:
        dash.throttle.failed(client)
        return _page(request, "login.html.j2", status=401, title="Log in", next=target,
                     configured=bool(dash.settings.tokens), error="Unknown token.")
    set_session(request, new_session(dash.settings, user))
    log.info("dashboard: %s logged in from %s", user, client)
    raise web.HTTPSeeOther(target)


async def logout(request: web.Request) -> web.Response:
    dash = request.app[DASHBOARD]
    await check_csrf(request, dash.settings)
    set_session(request, new_session(dash.settings))
    raise web.HTTPSeeOther("/dashboard/")


# ------------------------------------------------------------------------------------------------ actions

async def _maintainer(request: web.Request) -> tuple[str, dict[str, str]]:
    form = await check_csrf(request, request.app[DASHBOARD].settings)
    session = current_session(request)
    if not session.logged_in:
        raise web.HTTPUnauthorized(text="log in on /dashboard/login to act on issues")
    return str(session.user), form


async def _retriage(request: web.Request, repo: str, number: int, user: str, why: str) -> None:
    store = _store(request)
    source = next((d for d in await store.issue_deliveries(repo, number)
                   if isinstance(d.data().get("issue"), dict)), None)
    if source is None:
        raise web.HTTPConflict(text=f"no delivery of {repo}#{number} is stored: nothing to triage again from")
    try:
        await _service(request).triage_issue(
            repo=repo, number=number, installation_id=source.installation_id,
            payload_issue=source.data()["issue"], delivery_id=None, reason=f"dashboard: {why} by {user}", force=True)
    except web.HTTPException:
        raise
    except Exception as e:
        log.warning("dashboard re-triage of %s#%s failed: %r", repo, number, e)
        raise web.HTTPBadGateway(text=f"the triage failed: {type(e).__name__}") from None


async def act(request: web.Request) -> web.Response:
    user, form = await _maintainer(request)
    repo, number = _issue_key(request)
    action = request.match_info["action"]
    store = _store(request)
    if not await store.decisions(repo, number, 1):
        raise web.HTTPNotFound(text=f"no decision recorded for {repo}#{number}")
    delivery = f"dashboard:{uuid.uuid4().hex}"
    if action in ("not-duplicate", "duplicate"):
        try:
            target = int(form.get("target", ""))
        except ValueError:
            raise web.HTTPBadRequest(text="target must be an issue number") from None
        if target == number or not 0 < target < 10**9:
            raise web.HTTPBadRequest(text="target must be another issue")
        # the same feedback as the /duplicate #N and /not-duplicate #N commands of the App
        await store.add_feedback(repo, number, action, target, f"dashboard:{user}", delivery)
        if action == "duplicate":
            await _service(request).mark_duplicate(repo, number, target)
        why = f"#{target} is {'the same issue' if action == 'duplicate' else 'not a duplicate'}"
        await _retriage(request, repo, number, user, why)
    elif action == "suppress-rule":
        rule = form.get("rule", "")
        if (await request.app[DASHBOARD].rules()).get(rule) is None:
            raise web.HTTPBadRequest(text="no such rule")
        await store.add_feedback(repo, number, data.SUPPRESS_RULE + rule, None, f"dashboard:{user}", delivery)
        await _retriage(request, repo, number, user, f"rule {rule} suppressed")
    elif action == "retriage":
        await _retriage(request, repo, number, user, "re-run")
    else:
        raise web.HTTPNotFound()
    log.info("dashboard: %s did %s on %s#%s", user, action, repo, number)
    raise web.HTTPSeeOther(f"/dashboard/issues/{repo}/{number}?done={action}")


async def root(request: web.Request) -> web.Response:
    raise web.HTTPFound("/dashboard/")


async def favicon(request: web.Request) -> web.Response:
    return web.FileResponse(STATIC_DIR / "favicon.svg", headers={"Content-Type": "image/svg+xml",
                                                                 "Cache-Control": "public, max-age=86400"})


def setup(app: web.Application, settings: Settings, *, dashboard: DashboardSettings | None = None) -> None:
    """Register the dashboard on the App's application (call before the app starts)."""
    dash_settings = dashboard or dashboard_settings()
    sources = SiteIndexes(settings.database_url, settings.data_dir)
    dash = app[DASHBOARD] = Dashboard(dash_settings, settings, sources=sources)

    async def records(request: web.Request) -> list[Any]:
        return await dash.latest(_store(request))

    async def close_sources(_app: web.Application) -> None:
        sources.close()

    app.on_cleanup.append(close_sources)
    errors.setup(app, errors.Deps(
        require_read=_require_read, page=_page, catalog=dash.catalog, rules=dash.rules, records=records,
        client=client_address, sources=sources, settings=dash_settings,
        throttle=LoginThrottle(errors.SEARCHES_PER_MINUTE, 60.0)))
    app.middlewares.append(session_middleware(dash_settings, PREFIXES))

    async def queue_threshold(app: web.Application) -> None:
        # the store computes each issue's queue reasons when it records a decision, with this threshold
        moved = await app[STORE].set_low_confidence(dash_settings.low_confidence)
        if moved:
            log.info("dashboard: %d issues moved in or out of the queue (low confidence below %s)", moved,
                     dash_settings.low_confidence)

    app.on_startup.append(queue_threshold)
    app.middlewares.append(error_pages())   # inside the session middleware: the page needs the session
    r = app.router
    r.add_get("/", root)
    r.add_get("/dashboard", root)
    r.add_get("/favicon.ico", favicon)
    r.add_get("/dashboard/", overview)
    r.add_get("/dashboard/queue", queue)
    r.add_get(r"/dashboard/issues/{owner:[\w.-]+}/{name:[\w.-]+}/{number:\d{1,9}}", issue_page)
    r.add_post(r"/dashboard/issues/{owner:[\w.-]+}/{name:[\w.-]+}/{number:\d{1,9}}/"
               r"{action:retriage|duplicate|not-duplicate|suppress-rule}", act)
    r.add_get("/dashboard/rules", catalog_index)
    r.add_get(r"/dashboard/rules/{rule:[a-z0-9-]{1,100}}", catalog_rule)
    r.add_get("/api/rules", api_rules)
    r.add_get(r"/api/rules/{rule:[a-z0-9-]{1,100}}", api_rule)
    r.add_get("/dashboard/login", login_form)
    r.add_post("/dashboard/login", login)
    r.add_post("/dashboard/logout", logout)
    r.add_static("/dashboard/static/", STATIC_DIR, append_version=False)
