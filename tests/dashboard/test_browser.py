"""The dashboard in a real browser (see tests/dashboard/browser.py): every page loads, a maintainer's actions, CSRF,
and issue text that tries to run script."""

from __future__ import annotations

from .browser import ISSUE, login, new_page, require_chromium, shot
from .export import XSS_NUMBER, XSS_TITLE, write_export

require_chromium()


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


def test_possibly_related_confirm_and_reject_in_one_click(server, browser):
    context, page, watch = new_page(browser)
    login(page, server)
    page.goto(f"{server}{ISSUE}/122")
    panel = page.locator("table#related")
    assert panel.is_visible() and "#121" in panel.inner_text()
    assert not any("#121" in t for t in page.locator("table.candidates:not(.related)").all_inner_texts())
    shot(page, "issue-122-possibly-related")
    page.locator("button.confirm-duplicate[data-target='121']").click()
    page.wait_for_url(f"{server}{ISSUE}/122?done=duplicate")
    assert "Recorded: the same issue" in page.locator("p.ok").inner_text()
    linked = page.locator("table.candidates:not(.related)")
    assert "#121" in linked.inner_text() and "confirmed by a maintainer" in linked.inner_text()
    assert page.locator("button.confirm-duplicate[data-target='121']").count() == 0
    assert "duplicate #121" in page.locator("#feedback").inner_text()
    shot(page, "issue-122-confirmed")

    page.goto(f"{server}{ISSUE}/123")
    assert page.locator("table#related tr[data-number='122']").count() == 1
    page.locator("button.reject-related[data-target='122']").click()
    page.wait_for_url(f"{server}{ISSUE}/123?done=not-duplicate")
    assert page.locator("table#related tr[data-number='122']").count() == 0
    assert "not-duplicate #122" in page.locator("#feedback").inner_text()
    assert "#122" in page.locator("#rejected").inner_text()
    shot(page, "issue-123-rejected")
    assert watch.errors == [] and watch.dialogs == []
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
