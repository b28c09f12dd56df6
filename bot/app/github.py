"""GitHub clients: app JWT, cached installation tokens, and a retry policy for rate limits and outages.

Retries happen inside one call only when repeating it cannot duplicate an effect (reads, label adds,
edits, deletes, token requests). Creating a comment is never repeated blindly: the delivery fails, and
the next attempt re-reads the comments and finds the one that may have been created after all (or waits,
see Service._wait_for_an_unanswered_comment, while GitHub may still be creating it).
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import aiohttp
import gidgethub
import gidgethub.aiohttp
from gidgethub import apps

from bot.app.permissions import OPTIONAL, can_act, lacking
from bot.app.settings import Settings
from bot.isotime import epoch
from bot.validtext import valid_text

log = logging.getLogger("vllm_triage.github")
_JITTER = random.Random()  # retry jitter from its own generator, never the global one
USER_AGENT = "vllm-triage"
_SECONDARY = re.compile(r"secondary rate limit|abuse detection", re.IGNORECASE)
_IDEMPOTENT_POSTS = (re.compile(r"/issues/\d+/labels$"), re.compile(r"/access_tokens$"))


class RetryLater(Exception):
    """Waiting inside the worker would take too long (a rate limit, a write GitHub may still be carrying out):
    release the delivery until then, without counting a failed attempt."""

    def __init__(self, wait: float, why: str, outcome: str = "rate-limited") -> None:
        super().__init__(f"{why}: retry in {wait:.1f}s")
        self.wait = wait
        self.outcome = outcome


class TransientError(Exception):
    """A timeout or a broken connection talking to GitHub."""


def idempotent(method: str, url: str) -> bool:
    if method in ("GET", "HEAD", "PUT", "PATCH", "DELETE"):
        return True
    path = url.split("?", 1)[0]
    return method == "POST" and any(p.search(path) for p in _IDEMPOTENT_POSTS)


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        value = headers.get(name.title())
    return value


def retry_delay(status: int, headers: Mapping[str, str] | None, message: str, attempt: int, *,
                now: float, secondary_wait: float, backoff: float) -> float | None:
    """Seconds to wait before repeating a failed call, or None when repeating will not help.

    GitHub's rules: honour `retry-after`; else, when `x-ratelimit-remaining` is 0, wait until
    `x-ratelimit-reset`; a secondary limit without either arrives as a plain 403 (or a 429): wait at least
    a minute and back off exponentially. 5xx: exponential backoff with jitter.
    """
    retry_after = _header(headers, "retry-after")
    if status in (403, 429) and retry_after is not None:
        try:
            return max(0.0, float(retry_after))
        except ValueError:
            try:
                return max(0.0, datetime.strptime(retry_after, "%a, %d %b %Y %H:%M:%S %Z").timestamp() - now)
            except ValueError:
                return secondary_wait
    if status in (403, 429) and _header(headers, "x-ratelimit-remaining") == "0":
        reset = _header(headers, "x-ratelimit-reset")
        try:
            return max(0.0, float(reset) - now) + 1.0 if reset is not None else secondary_wait
        except ValueError:
            return secondary_wait
    if status == 429 or (status == 403 and _SECONDARY.search(message or "")):
        return secondary_wait * 2 ** (attempt - 1)
    if status >= 500:
        return backoff * 2 ** (attempt - 1) * (0.5 + _JITTER.random())
    return None


class GitHubClient(gidgethub.aiohttp.GitHubAPI):
    """gidgethub's aiohttp client plus the policy above (gidgethub 6 hooks)."""

    def __init__(self, session: aiohttp.ClientSession, *, settings: Settings, **kwargs: Any) -> None:
        super().__init__(session, USER_AGENT, base_url=settings.github_api_url, **kwargs)
        self.settings = settings
        self.calls = 0

    async def _request(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        attempt = 0
        while True:
            attempt += 1
            self.calls += 1
            try:
                return await asyncio.wait_for(super()._request(method, url, headers, body),
                                              self.settings.http_timeout)
            except (aiohttp.ClientError, TimeoutError) as e:
                what = f"{method} {url}: {type(e).__name__}: {e}"
                if not idempotent(method, url) or attempt > self.settings.http_retries:
                    raise TransientError(what) from e
                log.info("retrying after %s", what)
                await self.sleep(self.settings.http_backoff_seconds * 2 ** (attempt - 1) * _JITTER.random())

    async def _make_request(self, *args: Any, **kwargs: Any) -> tuple[Any, str | None, int]:
        data, more, status = await super()._make_request(*args, **kwargs)
        return valid_text(data), more, status

    async def manage_rate_limit(self, *, method: str, url: str) -> None:
        limit = self.rate_limit
        if limit is None or limit.remaining > 0:
            return
        wait = limit.reset_datetime.timestamp() - time.time() + 1.0
        if wait <= 0:
            return
        if wait > self.settings.max_inline_wait:
            raise RetryLater(wait, "primary rate limit used up")
        await self.sleep(wait)

    async def handle_rate_limit_error(self, *, method: str, url: str, exception: gidgethub.HTTPException,
                                      attempt: int) -> bool:
        message = " ".join(a for a in exception.args if isinstance(a, str))
        status = int(exception.status_code)
        wait = retry_delay(status, exception.headers, message, attempt, now=time.time(),
                           secondary_wait=self.settings.secondary_limit_wait,
                           backoff=self.settings.http_backoff_seconds)
        if wait is None:
            return False
        rate_limited = status in (403, 429)
        if attempt > self.settings.http_retries or (not rate_limited and not idempotent(method, url)):
            if rate_limited:
                raise RetryLater(wait, f"{method} {url}: {status}") from exception
            return False
        if wait > self.settings.max_inline_wait:
            raise RetryLater(wait, f"{method} {url}: {status}") from exception
        log.info("%s %s answered %s; retrying in %.2fs (attempt %d)", method, url, status, wait, attempt)
        await self.sleep(wait)
        return True


class GitHub:
    """One app-level client and one client per installation, with its token cached until shortly before
    it expires (tokens live an hour; minting one per delivery is what got other bots 401s and 403s)."""

    REFRESH_MARGIN = 300.0

    def __init__(self, settings: Settings, session: aiohttp.ClientSession) -> None:
        if not settings.has_credentials:
            raise ValueError("GitHub needs GITHUB_APP_ID and GITHUB_PRIVATE_KEY")
        self.settings = settings
        self.session = session
        self.app = GitHubClient(session, settings=settings, app_id=settings.app_id, private_key=settings.private_key)
        self._tokens: dict[int, tuple[str, float]] = {}
        self._clients: dict[int, GitHubClient] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._bot_login: str | None = settings.bot_login
        self.tokens_minted = 0
        self.granted: dict[int, dict[str, Any]] = {}  # installation id -> permissions its last token carried
        self.app_lacks: list[str] = []  # what GET /app says the App itself is not granted

    async def installation(self, installation_id: int) -> GitHubClient:
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            cached = self._tokens.get(installation_id)
            if cached is None or time.time() >= cached[1] - self.REFRESH_MARGIN:
                answer = await apps.get_installation_access_token(
                    self.app, installation_id=str(installation_id), app_id=str(self.settings.app_id),
                    private_key=self.settings.private_key or "")
                expires = epoch(answer.get("expires_at")) or time.time() + 3600
                cached = (answer["token"], expires)
                self._tokens[installation_id] = cached
                self.tokens_minted += 1
                self._note_grant(installation_id, answer.get("permissions"))
            client = self._clients.get(installation_id)
            if client is None:
                client = GitHubClient(self.session, settings=self.settings, oauth_token=cached[0])
                self._clients[installation_id] = client
            client.oauth_token = cached[0]
            return client

    def forget_token(self, installation_id: int) -> None:
        self._tokens.pop(installation_id, None)

    def _note_grant(self, installation_id: int, permissions: object) -> None:
        if not isinstance(permissions, dict):
            return
        before = self.granted.get(installation_id)
        self.granted[installation_id] = permissions
        if permissions != before and lacking(permissions):
            log.error("installation %s lacks %s: its issues are triaged in dry-run until an owner accepts "
                      "the App's permissions", installation_id, ", ".join(lacking(permissions)))

    def can_act(self, installation_id: int | None) -> bool:
        return installation_id is None or can_act(self.granted.get(installation_id))

    def permission_problems(self) -> dict[str, Any]:
        """What /healthz shows: what the App and each installation lack (empty when all is well)."""
        problems: dict[str, Any] = {}
        if self.app_lacks:
            problems["app"] = self.app_lacks
        lacks = {str(i): lacking(g) for i, g in self.granted.items() if lacking(g)}
        if lacks:
            problems["installations"] = lacks
        return problems

    async def check_app(self) -> list[str]:
        """At start-up: GET /app, the bot's login from its slug, and the permissions the App lacks (logged)."""
        info = await self.app.getitem("/app")
        if self._bot_login is None and info.get("slug"):
            self._bot_login = f"{info['slug']}[bot]"
        granted = info.get("permissions") if isinstance(info.get("permissions"), dict) else {}
        self.app_lacks = lacking(granted)
        if self.app_lacks:
            log.error("the GitHub App lacks %s (see app.yml): change its permissions on GitHub",
                      ", ".join(self.app_lacks))
        for missing in lacking(granted, OPTIONAL):
            log.warning("the GitHub App lacks %s: per-repository .github/vllm-triage.yml cannot be read, "
                        "the defaults apply", missing)
        return self.app_lacks

    async def bot_login(self) -> str:
        if self._bot_login is None:
            info = await self.app.getitem("/app")
            self._bot_login = f"{info['slug']}[bot]"
        return self._bot_login
