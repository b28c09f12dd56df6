"""The dashboard's layout in a real browser at a phone's width (390 px) and a desktop's (1,400 px): no page scrolls
sideways, nothing overflows its panel, wide tables scroll inside their own box (on a phone only) or stack their
rows, and the queue's titles keep a readable width."""

from __future__ import annotations

import pytest

from .browser import ISSUE, WIDTHS, new_page, require_chromium, shot
from .export import XSS_NUMBER

require_chromium()

PAGES = {
    "overview": "/dashboard/", "queue": "/dashboard/queue",
    "queue-filtered": "/dashboard/queue?reason=needs+info&sort=oldest",
    "issue-105": f"{ISSUE}/105", "issue-101": f"{ISSUE}/101", "issue-xss": f"{ISSUE}/{XSS_NUMBER}",
    "catalog": "/dashboard/rules", "rule": "/dashboard/rules/pp-model-not-supported",
    "rule-no-command": "/dashboard/rules/nccl-collective-timeout", "login": "/dashboard/login",
}

# elements whose content is wider than their box without a scrollbar of their own to show it
OVERFLOWING = """() => {
  const out = [];
  for (const el of document.querySelectorAll('main, .panel, main table, .table-wrap')) {
    const style = getComputedStyle(el);
    const scrolls = style.overflowX === 'auto' || style.overflowX === 'scroll';
    if (!scrolls && el.scrollWidth > el.clientWidth + 1) {
      out.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} > ${el.clientWidth}`);
    }
  }
  return out;
}"""
# boxes that scroll sideways because their table does not fit
SCROLLING = """() => [...document.querySelectorAll('.table-wrap')]
  .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.querySelector('table').className || 'table')"""


@pytest.mark.parametrize("device", list(WIDTHS))
def test_no_page_scrolls_sideways(server, browser, device):
    width = WIDTHS[device]
    context, page, watch = new_page(browser, width=width)
    for name, path in PAGES.items():
        assert page.goto(server + path).ok, path
        shot(page, f"{name}-{width}")
        sideways = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert sideways <= 0, f"{path} at {width} px scrolls {sideways} px sideways"
        assert page.evaluate(OVERFLOWING) == [], f"{path} at {width} px"
        if device == "desktop":
            assert page.evaluate(SCROLLING) == [], f"{path} at {width} px: a table does not fit its panel"
    assert watch.errors == [] and watch.dialogs == []
    context.close()


@pytest.mark.parametrize("device,least", [("phone", 0.75), ("desktop", 0.3)])
def test_queue_titles_keep_a_readable_width(server, browser, device, least):
    width = WIDTHS[device]
    context, page, _ = new_page(browser, width=width)
    page.goto(server + "/dashboard/queue")
    widths = page.evaluate("() => [...document.querySelectorAll('table.queue td.title')]"
                           ".map(td => td.getBoundingClientRect().width)")
    assert widths and min(widths) >= least * width, (device, widths[:5])
    context.close()


def test_history_fits_its_panel_on_a_desktop(server, browser):
    context, page, _ = new_page(browser, width=WIDTHS["desktop"])
    page.goto(f"{server}{ISSUE}/105")
    table, panel = page.evaluate("""() => {
      const t = document.querySelector('#history');
      const p = t.closest('.panel');
      return [t.getBoundingClientRect().right, p.getBoundingClientRect().right];
    }""")
    assert table <= panel, (table, panel)
    context.close()
