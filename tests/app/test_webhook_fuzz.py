"""The webhook endpoint on arbitrary input (Hypothesis): any body, any headers, signed or not, answers a 2xx or
a 4xx, never a 5xx; the server keeps serving, and the worker survives whatever a signed payload holds.

The real server (create_app, dry run, the stand-in triage) runs on loopback in a thread of its own; each example
is one raw HTTP request, so header values and bodies reach aiohttp exactly as sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import http.client
import json
import threading
import time
import urllib.parse

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app.server import create_app

from .conftest import SECRET, issue_payload, make_settings
from .faketriage import fake_triage

EVENTS = ["issues", "issue_comment", "installation", "installation_repositories", "ping", "push", "pull_request"]
ACTIONS = ["opened", "edited", "reopened", "closed", "deleted", "unlabeled", "created", "labeled", None]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fuzz")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    # the triage core in its own process, as deployed: in a thread it would parse reports (ast.literal_eval of
    # pasted Python) while Hypothesis imports modules lazily in this one, and CPython 3.11 counts the AST
    # constructor's depth in state its threads share ("SystemError: AST constructor recursion depth mismatch")
    runner = web.AppRunner(create_app(make_settings(tmp, max_attempts=2, core="process"), triage_fn=fake_triage))

    async def start() -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    port = asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    yield port
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def request(port: int, body: bytes, headers: dict[str, str], path: str = "/webhook",
            method: str = "POST") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


header_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20)


@st.composite
def payloads(draw) -> bytes:
    """Valid JSON in GitHub's shape with any field replaced by anything, or any JSON, or any bytes."""
    kind = draw(st.sampled_from(["shaped", "json", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=2000))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    payload = issue_payload("o/r", draw(st.integers(min_value=-5, max_value=10**12)), draw(st.text(max_size=80)),
                            draw(st.text(max_size=300)), action=draw(st.sampled_from(ACTIONS)) or "opened")
    for _ in range(draw(st.integers(0, 4))):
        path = draw(st.sampled_from([("action",), ("issue",), ("issue", "number"), ("issue", "labels"),
                                     ("repository",), ("repository", "full_name"), ("installation",),
                                     ("installation", "id"), ("sender",), ("comment",), ("changes",),
                                     ("issue", "body"), ("issue", "user")]))
        target = payload
        for key in path[:-1]:
            target = target.setdefault(key, {}) if isinstance(target.get(key), dict) else {}
        target[path[-1]] = draw(json_values)
    return json.dumps(payload).encode()


@st.composite
def deliveries(draw) -> tuple[bytes, dict[str, str], str | None]:
    body = draw(payloads())
    content_type = draw(st.sampled_from(["application/json", "application/x-www-form-urlencoded", "text/plain",
                                         "application/json; charset=utf-8", "", None]))
    if content_type == "application/x-www-form-urlencoded" and draw(st.booleans()):
        body = urllib.parse.urlencode({"payload": body.decode("utf-8", "replace")}).encode()
    headers: dict[str, str] = {}
    if content_type is not None:
        headers["Content-Type"] = content_type
    event = draw(st.one_of(st.sampled_from(EVENTS), header_text, st.none()))
    if event is not None:
        headers["X-GitHub-Event"] = event
    delivery = draw(st.one_of(st.uuids().map(str), header_text, st.none()))
    if delivery is not None:
        headers["X-GitHub-Delivery"] = delivery
    signature = draw(st.sampled_from(["valid", "valid", "wrong", "garbage", "sha1", None]))
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    if signature == "valid":
        headers["X-Hub-Signature-256"] = "sha256=" + digest
    elif signature == "wrong":
        headers["X-Hub-Signature-256"] = "sha256=" + digest[::-1]
    elif signature == "garbage":
        headers["X-Hub-Signature-256"] = draw(header_text)
    elif signature == "sha1":
        headers["X-Hub-Signature"] = "sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1).hexdigest()
    return body, headers, signature


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(delivery=deliveries())
def test_any_delivery_gets_a_2xx_or_4xx(server, delivery):
    body, headers, signature = delivery
    status, answer = request(server, body, headers)
    assert status in (200, 202) or 400 <= status < 500, (status, answer[:300], headers)
    if status in (200, 202):  # only a correct HMAC (gidgethub also accepts the legacy SHA-1 header) gets in
        assert signature in ("valid", "sha1"), (status, headers)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(["/webhook", "/healthz", "/metrics", "/api/deliveries", "/api/decisions", "/nope"]),
       method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]), query=header_text)
def test_other_routes_and_methods_never_answer_5xx(server, path, method, query):
    status, answer = request(server, b"", {}, path=f"{path}?{urllib.parse.quote(query, safe='=&')}", method=method)
    assert status < 500, (status, answer[:300])


def test_server_and_worker_survive_the_fuzzing(server):
    deadline = time.monotonic() + 30
    while True:  # signed deliveries with any payload were queued: the worker settles each, done or parked
        status, answer = request(server, b"", {}, path="/healthz", method="GET")
        assert status == 200, answer
        counts = json.loads(answer)["deliveries"]
        if counts["queued"] == 0 and counts["running"] == 0:
            break
        assert time.monotonic() < deadline, counts
        time.sleep(0.1)
