"""The dashboard in a real browser: Debian's /usr/bin/chromium driven by Playwright (never `playwright install`),
against a `vllm-triage serve` process filled by delivering an export as signed webhooks.

Screenshots go to test-artifacts/screenshots/ (printed at the end of the run).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bot.dashboard.feed import feed
from bot.replay import load_sorted

from .conftest import ALICE_TOKEN, REPO, SECRET, server_env
from .export import XSS_NUMBER, XSS_TITLE, write_export

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
ISSUE = "/dashboard/issues/vllm-project/vllm"

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium", pytrace=False)
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install -y chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    import json

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as resp:
                if json.loads(resp.read()).get("worker"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError("server did not become healthy")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("browser")
    port = free_port()
    env = {**os.environ, **server_env(tmp, port)}
    env.pop("VLLM_TRIAGE_MODE", None)
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT,
                            cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        issues = load_sorted(str(write_export(tmp / "export.jsonl")), [])
        feed(url, issues, REPO, SECRET, wait=120)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


class Watch:
    """Console errors, CSP violations and dialogs of one page: none may happen."""

    def __init__(self, page) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", self._dialog)
        page.on("response", lambda r: self.errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


def new_page(browser):
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    return context, page, Watch(page)


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def login(page, server: str, token: str = ALICE_TOKEN) -> None:
    page.goto(f"{server}/dashboard/login")
    page.fill("input[name=token]", token)
    page.click("form[action='/dashboard/login'] button[type=submit]")
    page.wait_for_url(f"{server}/dashboard/")


def test_every_page_loads(server, browser):
    context, page, watch = new_page(browser)
    pages = {"overview": "/dashboard/", "queue": "/dashboard/queue", "issue-105": f"{ISSUE}/105",
             "issue-xss": f"{ISSUE}/{XSS_NUMBER}", "catalog": "/dashboard/rules",
             "rule": "/dashboard/rules/pp-with-draft-model-without-pp", "login": "/dashboard/login",
             "queue-filtered": "/dashboard/queue?reason=needs+info&sort=oldest"}
    for name, path in pages.items():
        response = page.goto(server + path)
        assert response.ok, (path, response.status)
        assert page.locator("h1").first.is_visible()
        shot(page, name)
    page.goto(server + "/dashboard/")
    for canvas in ("chart-triaged", "chart-labels"):
        assert page.evaluate(f"() => !!Chart.getChart('{canvas}')"), canvas
    assert page.evaluate("() => Chart.getChart('chart-triaged').data.datasets[0].data.reduce((a, b) => a + b, 0)") > 0
    assert "pp-with-draft-model-without-pp" in page.inner_text("table.sortable")
    api = page.goto(server + "/api/rules")
    assert api.ok and len(api.json()) > 50
    assert watch.errors == [] and watch.dialogs == []
    context.close()


def test_click_through_the_queue_to_an_issue(server, browser):
    context, page, watch = new_page(browser)
    page.goto(server + "/dashboard/queue")
    first = page.locator("table.queue tbody tr").first
    title = first.locator("td.title").inner_text().split("\n")[0]
    first.locator("td a").first.click()
    page.wait_for_url(f"{server}{ISSUE}/*")
    assert page.locator("h1#issue-title").inner_text() == title
    assert page.locator("text=The parsed report").is_visible()
    shot(page, "queue-click-issue")
    assert watch.errors == [] and watch.dialogs == []
    context.close()


def test_not_a_duplicate_as_a_logged_in_maintainer(server, browser):
    context, page, watch = new_page(browser)
    login(page, server)
    assert page.locator(".who .user").inner_text() == "alice"
    page.goto(f"{server}{ISSUE}/105")
    button = page.locator("button.not-duplicate[data-target='101']")
    assert button.is_visible()
    shot(page, "issue-105-logged-in")
    # logged in but without the CSRF token: refused
    refused = context.request.post(f"{server}{ISSUE}/105/not-duplicate", form={"target": "101"})
    assert refused.status == 403
    button.click()
    page.wait_for_url(f"{server}{ISSUE}/105?done=not-duplicate")
    assert "Recorded: not a duplicate" in page.locator("p.ok").inner_text()
    assert page.locator("button.not-duplicate[data-target='101']").count() == 0
    assert "not-duplicate #101" in page.locator("#feedback").inner_text()
    assert "#101" in page.locator("#rejected").inner_text()
    shot(page, "issue-105-not-duplicate")
    assert watch.errors == [] and watch.dialogs == []
    context.close()


def test_actions_are_refused_when_logged_out(server, browser):
    context, page, watch = new_page(browser)
    page.goto(f"{server}{ISSUE}/109")
    assert page.locator("button.not-duplicate").count() == 0 and page.locator("#retriage").count() == 0
    page.goto(f"{server}/dashboard/login")
    anonymous_csrf = page.locator("input[name=csrf]").first.input_value()
    refused = context.request.post(f"{server}{ISSUE}/109/not-duplicate",
                                   form={"csrf": anonymous_csrf, "target": "108"})
    assert refused.status == 401
    # a form on another site posting to the dashboard: the SameSite=Strict cookie is not sent, so no session
    page.set_content(f'<form id="f" method="post" action="{server}{ISSUE}/109/not-duplicate">'
                     '<input name="target" value="108"></form>')
    with page.expect_navigation() as nav:
        page.evaluate("document.getElementById('f').submit()")
    assert nav.value.status == 403
    page.goto(f"{server}{ISSUE}/109")
    assert "108" in page.locator("table.candidates").inner_text()       # still suggested: nothing happened
    assert page.locator("#feedback").count() == 0
    shot(page, "issue-109-logged-out")
    assert watch.dialogs == []
    context.close()


def test_hostile_issue_renders_inert(server, browser):
    context, page, watch = new_page(browser)
    page.goto(f"{server}{ISSUE}/{XSS_NUMBER}")
    title = page.locator("h1#issue-title")
    assert title.inner_text() == XSS_TITLE
    assert title.locator("img").count() == 0 and page.locator("main img, main svg, main script").count() == 0
    assert page.locator(".comment img, .comment script").count() == 0
    assert "script>window" in page.locator(".comment").text_content()   # the error line, shown as text
    shot(page, "issue-xss")
    for path in ("/dashboard/", "/dashboard/queue?reason=no+diagnosis"):
        page.goto(server + path)
    cell = page.locator("td.title").filter(has_text=XSS_TITLE).first
    assert cell.inner_text().split("\n")[0] == XSS_TITLE
    assert cell.locator("img, script, svg").count() == 0
    shot(page, "queue-xss")
    assert page.evaluate("() => window.__xss") is None
    assert watch.dialogs == [], watch.dialogs
    assert watch.errors == []
    context.close()


def test_replay_report_opens_offline(tmp_path, browser):
    from bot.cli import main

    export = write_export(tmp_path / "export.jsonl")
    report = tmp_path / "report.html"
    assert main(["replay", str(export), "--out", str(tmp_path / "t.jsonl"), "--html", str(report)]) == 0
    context, page, watch = new_page(browser)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(report.as_uri())
    assert page.evaluate("() => !!Chart.getChart('chart-label-counts')")
    assert page.locator("#agreement").is_visible()
    cell = page.locator("#issues td.title").filter(has_text=XSS_TITLE).first
    assert cell.inner_text().split("\n")[0] == XSS_TITLE and cell.locator("img").count() == 0
    assert [u for u in requests if not u.startswith("file:")] == []
    shot(page, "replay-report")
    assert watch.errors == [] and watch.dialogs == []
    context.close()
