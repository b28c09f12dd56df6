"""The error explainer page and the paste-an-error search in a real browser (tests/dashboard/browser.py), at a phone's
width (390 px) and a desktop's (1,400 px), over an index built from the two test releases; screenshots under
test-artifacts/screenshots/errors-*.png."""

from __future__ import annotations

import re

import pytest

from bot.dashboard.feed import feed
from bot.export import issue_from_json

from .browser import WIDTHS, new_page, require_chromium, serve_filled, shot
from .conftest import REPO, SECRET
from .sites import PP, build_index, line_of, pp_report, site_of
from .test_browser_a11y import CONTRAST
from .test_browser_layout import OVERFLOWING

require_chromium()

TRACEBACK = f"""(EngineCore_DP0 pid=212) ERROR 06-02 10:00:00 [core.py:700] EngineCore failed to start.
Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/vllm/engine.py", line 11, in start_engine
    core = make_core(config)
  File "/usr/local/lib/python3.12/dist-packages/vllm/config/model.py", line 18, in verify_with_parallel_config
    raise NotImplementedError(
NotImplementedError: {PP}
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(URL of a server whose data directory holds the test index and that triaged two reports of the SupportsPP
    error, that index)."""
    tmp = tmp_path_factory.mktemp("errors-browser")
    index = build_index(tmp / "data", tmp / "sdists")
    for url in serve_filled(tmp, fill=False):
        reports = [pp_report(931, "2.0"), pp_report(932, "1.0", traceback=False)]
        feed(url, [issue_from_json(r) for r in reports], REPO, SECRET, wait=120)
        yield url, index


def looks_right(page, width: int) -> None:
    """No sideways scrolling, nothing overflowing its box, every text readable (WCAG AA contrast)."""
    sideways = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert sideways <= 0, f"{page.url} at {width} px scrolls {sideways} px sideways"
    assert page.evaluate(OVERFLOWING) == [], f"{page.url} at {width} px"
    assert page.evaluate(CONTRAST, None) == [], f"{page.url} at {width} px"


@pytest.mark.parametrize("device", list(WIDTHS))
def test_the_explainer_page(served, browser, device):
    indexed_server, index = served
    width = WIDTHS[device]
    context, page, watch = new_page(browser, width=width)
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    assert page.goto(f"{indexed_server}/dashboard/errors/{pp.id}").ok
    assert page.locator("h1#error-title").is_visible()
    assert page.locator("#error-type").inner_text() == "NotImplementedError"
    assert page.locator("#error-message").inner_text() == PP
    assert "pp-model-not-supported" in page.locator("#meaning").inner_text()
    line = line_of("2.0", "vllm/config/model.py", "Pipeline")
    marked = page.locator("#source-code .line.marked")
    assert marked.count() == 4 and marked.first.is_visible()
    assert marked.first.locator(".ln").inner_text() == str(line)
    assert "raise NotImplementedError(" in marked.first.inner_text()
    assert page.locator("#permalink").get_attribute("href") == \
        f"https://github.com/vllm-project/vllm/blob/v2.0/vllm/config/model.py#L{line}"
    assert page.locator("#solutions").is_visible() and page.locator("#related-same-message a").count() == 1
    matched = page.locator("#matched tbody tr")
    assert matched.count() == 2 and matched.first.is_visible()
    assert "vllm-project/vllm#932" in page.locator("#matched").inner_text()
    looks_right(page, width)
    shot(page, f"errors-page-{width}")
    # an issue that matched it, and back from its page
    page.locator("#matched a", has_text="#931").click()
    page.wait_for_url(f"{indexed_server}/dashboard/issues/{REPO}/931")
    assert "vllm/config/model.py" in page.locator("#raise-site").inner_text()
    looks_right(page, width)
    shot(page, f"errors-issue-site-{width}")
    page.click("#site-page")
    page.wait_for_url(f"{indexed_server}/dashboard/errors/{pp.id}")
    # the release picker: a site both releases raise, at the older one
    engine = site_of(index, "vllm/engine.py", "Engine core initialization failed")
    page.goto(f"{indexed_server}/dashboard/errors/{engine.id}")
    page.select_option("#release-picker", "1.0")
    page.click("form.picker button[type=submit]")
    page.wait_for_url(re.compile(r".*\?release=1\.0$"))
    old = line_of("1.0", "vllm/engine.py", "Engine core init")
    assert f"vllm/engine.py:{old}" in page.locator("#raised-at").inner_text()
    assert page.locator("#source-code .line.marked .ln").first.inner_text() == str(old)
    assert page.locator("#permalink").get_attribute("href").endswith(f"/blob/v1.0/vllm/engine.py#L{old}")
    looks_right(page, width)
    shot(page, f"errors-page-release-{width}")
    # the same message before it moved, one click away
    page.goto(f"{indexed_server}/dashboard/errors/{pp.id}")
    page.locator("#related-same-message a").first.click()
    page.wait_for_url(f"{indexed_server}/dashboard/errors/*")
    assert "vllm/config.py" in page.locator("#raised-at").inner_text()
    assert watch.errors == [] and watch.dialogs == []
    context.close()


@pytest.mark.parametrize("device", list(WIDTHS))
def test_paste_an_error_and_land_on_its_page(served, browser, device):
    indexed_server, index = served
    width = WIDTHS[device]
    context, page, watch = new_page(browser, width=width)
    page.goto(f"{indexed_server}/dashboard/errors")
    assert page.locator("#error-text").is_visible()
    looks_right(page, width)
    shot(page, f"errors-search-{width}")
    page.fill("#error-text", TRACEBACK)
    page.click("#error-search button[type=submit]")
    pp = site_of(index, "vllm/config/model.py", "Pipeline parallelism")
    page.wait_for_url(f"{indexed_server}/dashboard/errors/{pp.id}?release=2.0")
    assert page.locator("#error-message").inner_text() == PP
    # several sites: a list, each a link to its page
    page.goto(f"{indexed_server}/dashboard/errors")
    page.fill("#error-text", "ValueError: Unsupported checkpoint format bin for this loader")
    page.click("#error-search button[type=submit]")
    rows = page.locator("#hits tbody tr")
    assert rows.count() == 2
    looks_right(page, width)
    shot(page, f"errors-search-several-{width}")
    rows.nth(1).locator("a").first.click()
    page.wait_for_url(f"{indexed_server}/dashboard/errors/*")
    assert "vllm/models/b.py" in page.locator("#raised-at").inner_text()
    # none: the catalog's rules that match the text, and from a rule page back to its sites
    page.goto(f"{indexed_server}/dashboard/errors")
    page.fill("#error-text", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                             "total capacity of 79.15 GiB of which 1.19 MiB is free.")
    page.click("#error-search button[type=submit]")
    assert "No indexed error matches" in page.locator("#results").inner_text()
    assert page.locator("#suggested a").count() >= 1
    looks_right(page, width)
    shot(page, f"errors-search-none-{width}")
    page.goto(f"{indexed_server}/dashboard/rules/pp-model-not-supported")
    page.locator("#raised-at a").first.click()
    page.wait_for_url(f"{indexed_server}/dashboard/errors/{pp.id}")
    shot(page, f"errors-rule-to-site-{width}")
    assert watch.errors == [] and watch.dialogs == []
    context.close()
