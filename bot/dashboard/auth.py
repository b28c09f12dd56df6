"""Logins, sessions, CSRF and security headers for the dashboard.

* Login: a maintainer pastes a personal token listed in DASHBOARD_TOKENS (stored as SHA-256 digests); no GitHub
  OAuth round trip, so the dashboard works offline and behind a VPN. Failed logins are rate-limited per client.
* Session: a cookie `vt_session` = base64(JSON {sid, user, exp}) + "." + HMAC-SHA256, HttpOnly, SameSite=Strict,
  Secure over HTTPS. Every visitor gets an anonymous session first, so the login form itself carries a CSRF token;
  logging in issues a new session id (no fixation).
* CSRF: every POST must carry `csrf` = HMAC(secret, "csrf|" + sid) of the session cookie it came with
  (a double-submit token tied to the session), and an Origin header, when sent, must name this host.
* Headers: a CSP without 'unsafe-inline' (scripts and styles only from /dashboard/static), frame-ancestors 'none',
  nosniff, no referrer leaks outside the site; `Server-Timing: app;dur=<ms>` says how long the server took.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import web

from bot.dashboard.settings import DashboardSettings

COOKIE = "vt_session"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
MAX_FAILED_LOGINS = 10
FAILED_LOGIN_WINDOW = 600.0


@dataclass(frozen=True)
class Session:
    sid: str
    user: str | None
    exp: float

    @property
    def logged_in(self) -> bool:
        return self.user is not None


SESSION = web.RequestKey("vt_session", Session)
NEW_SESSION = web.RequestKey("vt_session_new", bool)
SESSION_OUT = web.RequestKey("vt_session_out", object)   # a Session to write, False to clear


def _sign(secret: bytes, data: bytes) -> str:
    return hmac.new(secret, data, hashlib.sha256).hexdigest()


def encode_session(secret: bytes, session: Session) -> str:
    data = base64.urlsafe_b64encode(json.dumps({"sid": session.sid, "user": session.user, "exp": session.exp},
                                               separators=(",", ":")).encode()).decode().rstrip("=")
    return f"{data}.{_sign(secret, data.encode())}"


def decode_session(secret: bytes, value: str | None, now: float | None = None) -> Session | None:
    if not value or len(value) > 1000 or value.count(".") != 1:
        return None
    data, sig = value.split(".")
    if not hmac.compare_digest(sig, _sign(secret, data.encode())):
        return None
    try:
        obj = json.loads(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
        session = Session(str(obj["sid"]), obj["user"] if isinstance(obj["user"], str) else None, float(obj["exp"]))
    except (ValueError, KeyError, TypeError):
        return None
    if session.exp < (time.time() if now is None else now):
        return None
    return session


def new_session(settings: DashboardSettings, user: str | None = None) -> Session:
    return Session(secrets.token_hex(16), user, time.time() + settings.session_seconds)


def csrf_token(settings: DashboardSettings, session: Session) -> str:
    return _sign(settings.secret, b"csrf|" + session.sid.encode())


def current_session(request: web.Request) -> Session:
    return request[SESSION]


def set_session(request: web.Request, session: Session | None) -> None:
    """Replace the request's session; the middleware writes (or clears) the cookie on the way out."""
    request[SESSION_OUT] = session if session is not None else False
    if session is not None:
        request[SESSION] = session


def same_origin(request: web.Request) -> bool:
    origin = request.headers.get("Origin")
    if origin is not None and origin != "null" and urlsplit(origin).netloc != request.host:
        return False
    return request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")


async def check_csrf(request: web.Request, settings: DashboardSettings) -> dict[str, str]:
    """The POSTed form, after the CSRF checks; raises 403 when they fail."""
    session: Session | None = request.get(SESSION)
    if session is None or request.get(NEW_SESSION):
        raise web.HTTPForbidden(text="CSRF check failed: no session cookie (reload the page and try again)")
    if not same_origin(request):
        raise web.HTTPForbidden(text="CSRF check failed: cross-origin request")
    form = await request.post()
    token = form.get("csrf")
    if not isinstance(token, str) or not hmac.compare_digest(token, csrf_token(settings, session)):
        raise web.HTTPForbidden(text="CSRF check failed: missing or wrong token (reload the page and try again)")
    return {k: v for k, v in form.items() if isinstance(v, str)}


class LoginThrottle:
    """At most `limit` events (failed logins, searches) per client in `window` seconds."""

    def __init__(self, limit: int = MAX_FAILED_LOGINS, window: float = FAILED_LOGIN_WINDOW) -> None:
        self.limit = limit
        self.window = window
        self._failures: dict[str, deque[float]] = defaultdict(deque)

    def blocked(self, client: str, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        q = self._failures[client]
        while q and q[0] < now - self.window:
            q.popleft()
        if not q:
            self._failures.pop(client, None)
        return len(q) >= self.limit

    def failed(self, client: str) -> None:
        if len(self._failures) > 10_000:   # bounded memory under a spray of clients
            self._failures.clear()
        self._failures[client].append(time.time())


def security_headers(response: web.StreamResponse, *, html: bool) -> None:
    h = response.headers
    h.setdefault("X-Content-Type-Options", "nosniff")
    h.setdefault("X-Frame-Options", "DENY")
    h.setdefault("Referrer-Policy", "same-origin")
    h.setdefault("Cross-Origin-Opener-Policy", "same-origin")
    h.setdefault("Content-Security-Policy", CSP if html else "default-src 'none'; frame-ancestors 'none'")
    if html:
        h.setdefault("Cache-Control", "no-store")


def session_middleware(settings: DashboardSettings, prefixes: tuple[str, ...]):
    """Attach the session to dashboard requests and write the cookie back; security headers on every response."""

    @web.middleware
    async def middleware(request: web.Request, handler):
        started = time.perf_counter()
        ours = request.path.startswith(prefixes)
        if ours:
            session = decode_session(settings.secret, request.cookies.get(COOKIE))
            if session is None:
                session = new_session(settings)
                request[NEW_SESSION] = True
                request[SESSION_OUT] = session
            request[SESSION] = session
        static = request.path.startswith("/dashboard/static/")

        def finish(response: web.StreamResponse) -> None:
            security_headers(response, html=ours and not static)
            if ours:   # the server's time for this page (benchmarks and browsers' network panels read it)
                response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
            out = request.get(SESSION_OUT) if ours and not static else None
            if out is False:
                response.del_cookie(COOKIE, path="/")
            elif out is not None:
                secure = settings.cookie_secure if settings.cookie_secure is not None else request.secure
                response.set_cookie(COOKIE, encode_session(settings.secret, out), path="/", httponly=True,
                                    samesite="Strict", secure=secure, max_age=int(settings.session_seconds))

        try:
            response = await handler(request)
        except web.HTTPException as e:
            finish(e)
            raise
        finish(response)
        return response

    return middleware
