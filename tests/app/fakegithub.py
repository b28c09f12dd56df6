"""One stateful fake of GitHub's REST API for the whole suite: an aiohttp app on loopback that the bot
talks to through gidgethub's `base_url`.

It keeps repositories (labels, issues, comments, files), installations and their tokens, checks app JWTs
against the App's public key and tokens against their installation, paginates with `Link` headers, sends
rate-limit headers, records every call, and injects faults: 5xx (before or after the write took effect),
429 with `retry-after`, secondary-limit 403s, primary-limit 403s, timeouts, connection resets, and
targeted 404 / 410 / 422 answers.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.comment import MARKER

APP_ID = 4242
APP_SLUG = "vllm-triage-test"
BOT_LOGIN = f"{APP_SLUG}[bot]"


def make_private_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@dataclass
class Comment:
    id: int
    body: str
    login: str
    type: str = "User"
    association: str = "NONE"

    def api(self, repo: str, number: int) -> dict[str, Any]:
        return {"id": self.id, "body": self.body, "user": {"login": self.login, "type": self.type},
                "author_association": self.association,
                "html_url": f"https://github.com/{repo}/issues/{number}#issuecomment-{self.id}"}


@dataclass
class Issue:
    number: int
    title: str
    body: str
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    comments: list[Comment] = field(default_factory=list)
    pull_request: bool = False
    user: str = "reporter"
    created_at: str = "2025-01-01T00:00:00Z"

    def api(self, repo: str) -> dict[str, Any]:
        data = {"number": self.number, "title": self.title, "body": self.body, "state": self.state,
                "labels": [{"name": name, "color": "ededed"} for name in self.labels],
                "user": {"login": self.user, "type": "User"}, "created_at": self.created_at,
                "updated_at": self.created_at, "comments": len(self.comments),
                "html_url": f"https://github.com/{repo}/issues/{self.number}",
                "url": f"https://api.github.com/repos/{repo}/issues/{self.number}"}
        if self.pull_request:
            data["pull_request"] = {"url": f"https://api.github.com/repos/{repo}/pulls/{self.number}"}
        return data


@dataclass
class Repo:
    full_name: str
    labels: list[str] = field(default_factory=list)
    issues: dict[int, Issue] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    installation_id: int = 1

    def bot_comments(self, number: int) -> list[Comment]:
        """The App's triage comments (its login and the hidden marker)."""
        return [c for c in self.issues[number].comments if c.login == BOT_LOGIN and MARKER in c.body]


@dataclass
class Faults:
    rate: float = 0.0                   # share of calls that fail
    kinds: tuple[str, ...] = ("500", "502", "503", "429", "403-secondary")
    after_effect: float = 0.5           # share of failing writes whose effect happens before the error
    retry_after: str = "0"
    timeout_sleep: float = 2.0
    seed: int = 1


@dataclass
class Call:
    method: str
    path: str
    status: int
    body: Any = None
    fault: str | None = None


class FakeGitHub:
    def __init__(self, private_key: str | None = None) -> None:
        self.private_key = private_key or make_private_key()
        self.public_key = serialization.load_pem_private_key(self.private_key.encode(), None).public_key()
        self.repos: dict[str, Repo] = {}
        self.tokens: dict[str, tuple[int, float]] = {}
        self.token_lifetime = 3600.0
        self.calls: list[Call] = []
        self.faults = Faults()
        self._rng = random.Random(1)
        self._targeted: list[tuple[str, re.Pattern[str], str, int]] = []  # method, path, kind, times left
        self._ids = itertools.count(1000)
        self.hook_deliveries: list[dict[str, Any]] = []
        self.redelivered: list[int] = []
        # what GET /app and each installation's tokens report as granted (GitHub's shapes)
        self.app_permissions: dict[str, str] = {"issues": "write", "metadata": "read", "contents": "read"}
        self.installation_permissions: dict[int, dict[str, str]] = {}
        self.runner: web.AppRunner | None = None
        self.base_url = ""

    # -- test API -------------------------------------------------------------------------------------

    def add_repo(self, full_name: str, labels: list[str] | None = None, installation_id: int = 1,
                 config: str | None = None) -> Repo:
        repo = Repo(full_name, list(labels or []), installation_id=installation_id)
        if config is not None:
            repo.files[".github/vllm-triage.yml"] = config
        self.repos[full_name] = repo
        return repo

    def add_issue(self, repo: str, number: int, title: str, body: str, labels: list[str] | None = None) -> Issue:
        issue = Issue(number, title, body, list(labels or []))
        self.repos[repo].issues[number] = issue
        return issue

    def add_comment(self, repo: str, number: int, body: str, login: str = "alice", association: str = "MEMBER",
                    type: str = "User") -> Comment:
        comment = Comment(next(self._ids), body, login, type, association)
        self.repos[repo].issues[number].comments.append(comment)
        return comment

    def set_faults(self, **kwargs: Any) -> None:
        self.faults = Faults(**kwargs)
        self._rng = random.Random(self.faults.seed)

    def fail(self, method: str, path_pattern: str, kind: int | str, times: int = 1) -> None:
        """The next `times` calls matching method and path (a regex) fail with `kind`: a status code, one of
        the fault kinds ("429", "403-secondary", "timeout", "reset", ...), or "<5xx>-after" for a write that
        takes effect before the error."""
        self._targeted.append((method, re.compile(path_pattern), str(kind), times))

    def writes(self) -> list[Call]:
        """Successful writes to repositories (token requests are not writes)."""
        return [c for c in self.calls if c.method != "GET" and c.status < 300 and c.path.startswith("/repos/")]

    # -- server ---------------------------------------------------------------------------------------

    async def start(self) -> str:
        app = web.Application(middlewares=[self._middleware])
        r = app.router
        r.add_get("/app", self.get_app)
        r.add_post("/app/installations/{id}/access_tokens", self.access_token)
        r.add_get("/app/hook/deliveries", self.list_deliveries)
        r.add_post("/app/hook/deliveries/{id}/attempts", self.redeliver)
        r.add_get("/repos/{owner}/{repo}/installation", self.repo_installation)
        r.add_get("/repos/{owner}/{repo}/issues", self.list_issues)
        r.add_get("/repos/{owner}/{repo}/issues/{number:\\d+}", self.get_issue)
        r.add_patch("/repos/{owner}/{repo}/issues/{number:\\d+}", self.edit_issue)
        r.add_get("/repos/{owner}/{repo}/issues/{number:\\d+}/comments", self.list_comments)
        r.add_post("/repos/{owner}/{repo}/issues/{number:\\d+}/comments", self.create_comment)
        r.add_patch("/repos/{owner}/{repo}/issues/comments/{id:\\d+}", self.edit_comment)
        r.add_delete("/repos/{owner}/{repo}/issues/comments/{id:\\d+}", self.delete_comment)
        r.add_post("/repos/{owner}/{repo}/issues/{number:\\d+}/labels", self.add_labels)
        r.add_delete("/repos/{owner}/{repo}/issues/{number:\\d+}/labels/{name}", self.remove_label)
        r.add_get("/repos/{owner}/{repo}/labels", self.list_labels)
        r.add_get("/repos/{owner}/{repo}/contents/{path:.+}", self.contents)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = f"http://127.0.0.1:{port}"
        return self.base_url

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    # -- plumbing -------------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        return {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999", "x-ratelimit-used": "1",
                "x-ratelimit-reset": str(int(time.time()) + 3600), "x-ratelimit-resource": "core"}

    def _json(self, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
        return web.json_response(data, status=status, headers={**self._headers(), **(headers or {})})

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
        return self._json({"message": message, "documentation_url": "https://docs.github.com/rest"}, status,
                          headers)

    def _pick_fault(self, request: web.Request) -> tuple[str | None, bool]:
        """(fault kind, whether a write takes effect before the error is answered)."""
        for i, (method, pattern, kind, left) in enumerate(self._targeted):
            if method == request.method and pattern.search(request.path):
                if left <= 1:
                    self._targeted.pop(i)
                else:
                    self._targeted[i] = (method, pattern, kind, left - 1)
                return kind.removesuffix("-after"), kind.endswith("-after")
        if self.faults.rate and self._rng.random() < self.faults.rate:
            kind = self._rng.choice(self.faults.kinds)
            after = request.method != "GET" and kind in ("500", "502", "503") \
                and self._rng.random() < self.faults.after_effect
            return kind, after
        return None, False

    def _fault_response(self, kind: str) -> web.Response:
        if kind in ("500", "502", "503"):
            return self._error(int(kind), "Server Error")
        if kind == "429":
            return self._error(429, "Too Many Requests", {"retry-after": self.faults.retry_after})
        if kind == "403-secondary":
            return self._error(403, "You have exceeded a secondary rate limit. Please wait a few minutes "
                                    "before you try again.")
        if kind == "403-primary":
            return self._error(403, "API rate limit exceeded for installation.",
                               {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 1)})
        if kind == "404":
            return self._error(404, "Not Found")
        if kind == "410":
            return self._error(410, "Issues are disabled for this repo")
        if kind == "422":
            return self._json({"message": "Validation Failed",
                               "errors": [{"resource": "Label", "code": "invalid", "field": "name"}]}, 422)
        return self._error(int(kind), "Fault")

    @web.middleware
    async def _middleware(self, request: web.Request, handler) -> web.StreamResponse:
        fault, after = self._pick_fault(request)
        body = None
        if request.can_read_body:
            try:
                body = await request.json()
            except ValueError:
                body = None
        if fault == "reset":
            self.calls.append(Call(request.method, request.path, 0, body, fault))
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        if fault == "timeout":
            await asyncio.sleep(self.faults.timeout_sleep)
            fault = None
        if fault is not None and not after:
            self.calls.append(Call(request.method, request.path, int(fault.split("-")[0]), body, fault))
            return self._fault_response(fault)
        try:
            response = await handler(request)
        except web.HTTPException as e:
            self.calls.append(Call(request.method, request.path, e.status, body))
            raise
        if after:
            self.calls.append(Call(request.method, request.path, response.status, body, "applied"))
            self.calls.append(Call(request.method, request.path, int(fault), body, fault + " after effect"))
            return self._fault_response(fault)
        self.calls.append(Call(request.method, request.path, response.status, body))
        return response

    def _app_auth(self, request: web.Request) -> None:
        auth = request.headers.get("Authorization", "")
        if not auth.startswith("bearer ") and not auth.startswith("Bearer "):
            raise web.HTTPUnauthorized(text='{"message": "A JSON web token could not be decoded"}',
                                       content_type="application/json")
        try:
            claims = jwt.decode(auth.split(" ", 1)[1], self.public_key, algorithms=["RS256"])
        except jwt.PyJWTError as e:
            raise web.HTTPUnauthorized(text=f'{{"message": "bad JWT: {e}"}}',
                                       content_type="application/json") from e
        if str(claims.get("iss")) != str(APP_ID):
            raise web.HTTPUnauthorized(text='{"message": "wrong issuer"}', content_type="application/json")

    def _repo(self, request: web.Request) -> Repo:
        name = f"{request.match_info['owner']}/{request.match_info['repo']}"
        repo = self.repos.get(name)
        if repo is None:
            raise web.HTTPNotFound(text='{"message": "Not Found"}', content_type="application/json")
        auth = request.headers.get("Authorization", "")
        token = auth.split(" ", 1)[1] if auth.lower().startswith("token ") else None
        known = self.tokens.get(token or "")
        if known is None or known[1] < time.time() or known[0] != repo.installation_id:
            raise web.HTTPUnauthorized(text='{"message": "Bad credentials"}', content_type="application/json")
        return repo

    def _issue(self, request: web.Request) -> tuple[Repo, Issue]:
        repo = self._repo(request)
        issue = repo.issues.get(int(request.match_info["number"]))
        if issue is None:
            raise web.HTTPNotFound(text='{"message": "Not Found"}', content_type="application/json")
        return repo, issue

    def _page(self, request: web.Request, items: list[Any]) -> web.Response:
        per_page = min(int(request.query.get("per_page", "30")), 100)
        page = int(request.query.get("page", "1"))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            query = dict(request.query)
            query["page"] = str(page + 1)
            nxt = request.url.with_query(query)
            headers["Link"] = f'<{self.base_url}{nxt.path_qs}>; rel="next"'
        return self._json(chunk, headers=headers)

    # -- endpoints ------------------------------------------------------------------------------------

    async def get_app(self, request: web.Request) -> web.Response:
        self._app_auth(request)
        return self._json({"id": APP_ID, "slug": APP_SLUG, "name": "vllm-triage (test)",
                           "permissions": self.app_permissions, "events": ["issues", "issue_comment"]})

    async def access_token(self, request: web.Request) -> web.Response:
        self._app_auth(request)
        installation = int(request.match_info["id"])
        if not any(r.installation_id == installation for r in self.repos.values()):
            return self._error(404, "Not Found")
        token = f"ghs_{next(self._ids)}"
        expires = time.time() + self.token_lifetime
        self.tokens[token] = (installation, expires)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expires))
        granted = self.installation_permissions.get(installation, self.app_permissions)
        return self._json({"token": token, "expires_at": stamp, "permissions": granted}, 201)

    async def repo_installation(self, request: web.Request) -> web.Response:
        self._app_auth(request)
        repo = self.repos.get(f"{request.match_info['owner']}/{request.match_info['repo']}")
        if repo is None:
            return self._error(404, "Not Found")
        return self._json({"id": repo.installation_id, "app_id": APP_ID})

    async def list_deliveries(self, request: web.Request) -> web.Response:
        self._app_auth(request)
        return self._page(request, self.hook_deliveries)

    async def redeliver(self, request: web.Request) -> web.Response:
        self._app_auth(request)
        self.redelivered.append(int(request.match_info["id"]))
        return self._json({}, 202)

    async def list_issues(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        state = request.query.get("state", "open")
        items = [i.api(repo.full_name) for _, i in sorted(repo.issues.items())
                 if state == "all" or i.state == state]
        return self._page(request, items)

    async def get_issue(self, request: web.Request) -> web.Response:
        repo, issue = self._issue(request)
        return self._json(issue.api(repo.full_name))

    async def edit_issue(self, request: web.Request) -> web.Response:
        repo, issue = self._issue(request)
        data = await request.json()
        for key in ("title", "body", "state"):
            if key in data:
                setattr(issue, key, data[key])
        return self._json(issue.api(repo.full_name))

    async def list_comments(self, request: web.Request) -> web.Response:
        repo, issue = self._issue(request)
        return self._page(request, [c.api(repo.full_name, issue.number) for c in issue.comments])

    async def create_comment(self, request: web.Request) -> web.Response:
        repo, issue = self._issue(request)
        data = await request.json()
        comment = Comment(next(self._ids), str(data["body"]), BOT_LOGIN, "Bot", "NONE")
        issue.comments.append(comment)
        return self._json(comment.api(repo.full_name, issue.number), 201)

    def _find_comment(self, repo: Repo, comment_id: int) -> tuple[Issue, Comment]:
        for issue in repo.issues.values():
            for comment in issue.comments:
                if comment.id == comment_id:
                    return issue, comment
        raise web.HTTPNotFound(text='{"message": "Not Found"}', content_type="application/json")

    async def edit_comment(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        issue, comment = self._find_comment(repo, int(request.match_info["id"]))
        if comment.login != BOT_LOGIN:
            return self._error(403, "Resource not accessible by integration")
        comment.body = str((await request.json())["body"])
        return self._json(comment.api(repo.full_name, issue.number))

    async def delete_comment(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        issue, comment = self._find_comment(repo, int(request.match_info["id"]))
        if comment.login != BOT_LOGIN:
            return self._error(403, "Resource not accessible by integration")
        issue.comments.remove(comment)
        return web.Response(status=204, headers=self._headers())

    async def add_labels(self, request: web.Request) -> web.Response:
        repo, issue = self._issue(request)
        data = await request.json()
        names = data.get("labels") if isinstance(data, dict) else data
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            return self._json({"message": "Validation Failed",
                               "errors": [{"resource": "Label", "code": "invalid", "field": "labels"}]}, 422)
        for name in names:
            if name not in repo.labels:
                repo.labels.append(name)  # GitHub creates unknown labels
            if name not in issue.labels:
                issue.labels.append(name)
        return self._json([{"name": n} for n in issue.labels])

    async def remove_label(self, request: web.Request) -> web.Response:
        repo, issue = self._issue(request)
        name = request.match_info["name"]
        if name not in issue.labels:
            return self._error(404, "Label does not exist")
        issue.labels.remove(name)
        return self._json([{"name": n} for n in issue.labels])

    async def list_labels(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        return self._page(request, [{"name": n, "color": "ededed"} for n in repo.labels])

    async def contents(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        path = request.match_info["path"]
        if path not in repo.files:
            return self._error(404, "Not Found")
        text = repo.files[path].encode()
        return self._json({"type": "file", "name": path.rsplit("/", 1)[-1], "path": path, "encoding": "base64",
                           "content": base64.b64encode(text).decode(), "size": len(text)})
