"""The dashboard over HTTP on the real App: access control, login, CSRF, security headers, pages, JSON, actions."""

from __future__ import annotations

import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from bot.app.server import create_app
from bot.app.settings import from_env
from bot.rules import load_rules

from .conftest import ALICE_TOKEN, csrf_of, fill, server_env
from .export import XSS_NUMBER, XSS_TITLE

pytestmark = pytest.mark.asyncio(loop_scope="module")
ISSUE = "/dashboard/issues/vllm-project/vllm"


async def start(tmp_path, monkeypatch, public: bool) -> TestClient:
    env = server_env(tmp_path, public=public)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = from_env(env, core="thread")
    client = TestClient(TestServer(create_app(settings)))
    await client.start_server()
    await fill(client)
    return client


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def public(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    client = await start(tmp_path_factory.mktemp("public"), mp, public=True)
    yield client
    await client.close()
    mp.undo()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def private(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    client = await start(tmp_path_factory.mktemp("private"), mp, public=False)
    yield client
    await client.close()
    mp.undo()


async def login(client: TestClient, token: str = ALICE_TOKEN, next_: str = "/dashboard/") -> int:
    page = await (await client.get("/dashboard/login")).text()
    resp = await client.post("/dashboard/login", data={"csrf": csrf_of(page), "token": token, "next": next_},
                             allow_redirects=False)
    return resp.status


async def logout(client: TestClient) -> None:
    page = await (await client.get("/dashboard/login")).text()
    await client.post("/dashboard/logout", data={"csrf": csrf_of(page)}, allow_redirects=False)


async def test_private_dashboard_needs_a_login(private):
    resp = await private.get("/dashboard/queue", allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"] == "/dashboard/login?next=/dashboard/queue"
    assert (await private.get("/api/rules")).status == 401
    assert await login(private, "wrong-token-wrong-token") == 401
    assert await login(private, next_="//evil.example/x") == 303
    resp = await private.get("/dashboard/login")
    assert "Log out" in await resp.text()
    assert (await private.get("/dashboard/queue")).status == 200
    assert (await private.get("/api/rules")).status == 200
    await logout(private)
    assert (await private.get("/dashboard/queue", allow_redirects=False)).status == 303


async def test_login_redirect_stays_on_the_dashboard(private):
    for target, expected in (("//evil.example/", "/dashboard/"), ("https://evil.example/", "/dashboard/"),
                             ("/dashboard/queue", "/dashboard/queue")):
        page = await (await private.get("/dashboard/login")).text()
        resp = await private.post("/dashboard/login", data={"csrf": csrf_of(page), "token": ALICE_TOKEN,
                                                            "next": target}, allow_redirects=False)
        assert resp.headers["Location"] == expected
    await logout(private)


async def test_security_headers_and_cookie(public):
    resp = await public.get("/dashboard/")
    csp = resp.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
    assert resp.headers["X-Content-Type-Options"] == "nosniff" and resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["Cache-Control"] == "no-store"
    cookie = resp.headers.get("Set-Cookie", "")
    assert "vt_session=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    static = await public.get("/dashboard/static/vendor/chart.umd.min.js")
    assert static.status == 200 and static.headers["X-Content-Type-Options"] == "nosniff"
    assert "Set-Cookie" not in static.headers
    assert (await public.get("/dashboard/static/../../settings.py")).status in (403, 404)


async def test_every_page_renders(public):
    for path in ("/dashboard/", "/dashboard/queue", "/dashboard/queue?reason=needs+info&sort=oldest&age=30",
                 f"{ISSUE}/105", f"{ISSUE}/{XSS_NUMBER}", "/dashboard/rules",
                 "/dashboard/rules/pp-with-draft-model-without-pp", "/dashboard/login"):
        resp = await public.get(path)
        assert resp.status == 200, (path, await resp.text())
        assert resp.content_type == "text/html"
    overview = await (await public.get("/dashboard/")).text()
    assert 'id="chart-data"' in overview and "pp-with-draft-model-without-pp" in overview
    assert (await public.get(f"{ISSUE}/99999")).status == 404
    assert (await public.get("/dashboard/rules/no-such-rule")).status == 404
    assert (await public.get("/dashboard/queue?age=soon")).status == 400
    assert (await public.get("/", allow_redirects=False)).headers["Location"] == "/dashboard/"


async def test_queue_lists_issues_that_need_a_human(public):
    html = await (await public.get("/dashboard/queue")).text()
    assert f"{ISSUE}/104" in html          # a usage question without environment: needs info
    assert f"{ISSUE}/{XSS_NUMBER}" in html   # a bug with a traceback no rule knows
    assert f"{ISSUE}/105\"" not in html     # diagnosed with high confidence
    assert f"{ISSUE}/108\"" not in html     # closed
    only = await (await public.get("/dashboard/queue?reason=no+diagnosis")).text()
    assert f"{ISSUE}/{XSS_NUMBER}" in only and f"{ISSUE}/104\"" not in only


async def test_issue_text_is_escaped_everywhere(public):
    for path in (f"{ISSUE}/{XSS_NUMBER}", "/dashboard/queue", "/dashboard/"):
        html = await (await public.get(path)).text()
        assert "<img src=x" not in html and "<script>window" not in html and "<svg onload" not in html
        assert 'href="javascript' not in html
    page = await (await public.get(f"{ISSUE}/{XSS_NUMBER}")).text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    rules = await (await public.get("/api/rules")).json()
    assert XSS_TITLE not in str(rules)


async def test_rules_api(public):
    rules = await (await public.get("/api/rules")).json()
    assert len(rules) == len(load_rules().rules)
    pp = next(r for r in rules if r["id"] == "pp-with-draft-model-without-pp")
    assert pp["matched_issues"] >= 2 and pp["page"] == "/dashboard/rules/pp-with-draft-model-without-pp"
    one = await (await public.get("/api/rules/pp-with-draft-model-without-pp")).json()
    assert {i["number"] for i in one["matched_issues"]} >= {101, 105}
    assert one["raised_in"] and one["solutions"] and one["example_fix"]["before"]
    missing = await public.get("/api/rules/no-such-rule")
    assert missing.status == 404 and (await missing.json())["error"] == "no such rule"


async def test_actions_need_login_and_csrf(public):
    page = await (await public.get(f"{ISSUE}/105")).text()
    assert "Not a duplicate" not in page
    anonymous = csrf_of(await (await public.get("/dashboard/login")).text())
    resp = await public.post(f"{ISSUE}/105/not-duplicate", data={"csrf": anonymous, "target": "101"},
                             allow_redirects=False)
    assert resp.status == 401
    assert await login(public) == 303
    resp = await public.post(f"{ISSUE}/105/not-duplicate", data={"target": "101"}, allow_redirects=False)
    assert resp.status == 403
    resp = await public.post(f"{ISSUE}/105/not-duplicate", data={"csrf": anonymous, "target": "101"},
                             allow_redirects=False)
    assert resp.status == 403                       # the anonymous session's token is not the logged-in one's
    page = await (await public.get(f"{ISSUE}/105")).text()
    resp = await public.post(f"{ISSUE}/105/not-duplicate", data={"csrf": csrf_of(page), "target": "101"},
                             headers={"Origin": "https://evil.example"}, allow_redirects=False)
    assert resp.status == 403
    decisions = await (await public.get("/api/decisions?number=105")).json()
    assert 101 in decisions[0]["plan"]["decision"]["duplicates"]      # nothing was recorded or re-run
    await logout(public)


async def test_not_duplicate_and_suppress_rule(public):
    assert await login(public) == 303
    page = await (await public.get(f"{ISSUE}/105")).text()
    assert 'data-target="101"' in page
    resp = await public.post(f"{ISSUE}/105/not-duplicate", data={"csrf": csrf_of(page), "target": "101"},
                             allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].endswith("/105?done=not-duplicate")
    page = await (await public.get(resp.headers["Location"])).text()
    assert "Recorded: not a duplicate" in page and 'data-target="101"' not in page
    assert "not-duplicate #101" in page and "dashboard:alice" in page
    decisions = await (await public.get("/api/decisions?number=105")).json()
    assert 101 not in decisions[0]["plan"]["decision"]["duplicates"]
    assert decisions[0]["reason"].startswith("dashboard: #101 is not a duplicate by alice")

    resp = await public.post(f"{ISSUE}/110/suppress-rule",
                             data={"csrf": csrf_of(page), "rule": "cuda-oom-loading-model"}, allow_redirects=False)
    assert resp.status == 303
    decisions = await (await public.get("/api/decisions?number=110")).json()
    assert "cuda-oom-loading-model" not in decisions[0]["plan"]["decision"]["findings"]
    overview = await (await public.get("/dashboard/")).text()
    assert "cuda-oom-loading-model" in overview    # still counted: the earlier hit and the disagreement
    resp = await public.post(f"{ISSUE}/110/suppress-rule", data={"csrf": csrf_of(page), "rule": "nope"},
                             allow_redirects=False)
    assert resp.status == 400
    resp = await public.post(f"{ISSUE}/105/retriage", data={"csrf": csrf_of(page)}, allow_redirects=False)
    assert resp.status == 303
    decisions = await (await public.get("/api/decisions?number=105")).json()
    assert decisions[0]["reason"] == "dashboard: re-run by alice"
    assert 101 not in decisions[0]["plan"]["decision"]["duplicates"]     # the rejection sticks
    await logout(public)


async def test_failed_logins_are_throttled(private):
    statuses = [await login(private, "not-the-token-at-all") for _ in range(11)]
    first = statuses.index(429)                      # an earlier test spent one attempt
    assert 9 <= first <= 10 and set(statuses[:first]) == {401} and set(statuses[first:]) == {429}
    assert await login(private) == 429               # even the right token, until the window passes


async def test_possibly_related_confirmed_and_rejected(public):
    """The panel lists the candidates just below the threshold; "Same issue" records /duplicate feedback, marks the
    index and re-triages (the confirmed issue is then linked), "Not related" records /not-duplicate."""
    page = await (await public.get(f"{ISSUE}/122")).text()
    assert 'id="related"' in page and "#121" in page and "confirm-duplicate" not in page   # logged out: no buttons
    decisions = await (await public.get("/api/decisions?number=122")).json()
    decision = decisions[0]["plan"]["decision"]
    assert decision["duplicates"] == [] and [c["number"] for c in decision["related"]] == [121]
    assert await login(public) == 303
    page = await (await public.get(f"{ISSUE}/122")).text()
    assert 'class="confirm-duplicate" data-target="121"' in page
    for bad in ("x", "122", "0"):
        resp = await public.post(f"{ISSUE}/122/duplicate", data={"csrf": csrf_of(page), "target": bad},
                                 allow_redirects=False)
        assert resp.status == 400, bad
    resp = await public.post(f"{ISSUE}/122/duplicate", data={"csrf": csrf_of(page), "target": "121"},
                             allow_redirects=False)
    assert resp.status == 303 and resp.headers["Location"].endswith("/122?done=duplicate")
    page = await (await public.get(resp.headers["Location"])).text()
    assert "Recorded: the same issue" in page and "duplicate #121" in page
    decision = (await (await public.get("/api/decisions?number=122")).json())[0]["plan"]["decision"]
    assert decision["duplicates"] == [121] and 121 not in [c["number"] for c in decision["related"]]
    assert decision["candidates"][0]["reason"].startswith("confirmed by a maintainer")

    page = await (await public.get(f"{ISSUE}/123")).text()
    assert 'class="secondary reject-related" data-target="122"' in page
    resp = await public.post(f"{ISSUE}/123/not-duplicate", data={"csrf": csrf_of(page), "target": "122"},
                             allow_redirects=False)
    assert resp.status == 303
    decision = (await (await public.get("/api/decisions?number=123")).json())[0]["plan"]["decision"]
    assert 122 not in [c["number"] for c in decision["related"]] + decision["duplicates"]
    await logout(public)
