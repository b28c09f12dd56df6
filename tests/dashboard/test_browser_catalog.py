"""The error catalog, the overview's rule table and the queue's order in a real browser: the catalog shows the
error a rule matched (never a reporter's title) and an example with a command, filters as you type (and on the
server without script), tables sort from their headers, and the queue puts what a maintainer can act on first."""

from __future__ import annotations

import pytest

from bot.report import parse
from bot.rules import load_rules

from .browser import WIDTHS, new_page, require_chromium, shot

require_chromium()


def _no_command_rule() -> str:
    return next(r.id for r in load_rules().rules
                if not any(parse(x.title, x.body).commands for x in r.examples_match))


@pytest.mark.parametrize("device", list(WIDTHS))
def test_rule_page_shows_the_error_and_a_command(server, browser, device):
    context, page, watch = new_page(browser, width=WIDTHS[device])
    page.goto(server + "/dashboard/rules/pp-model-not-supported")
    message = page.locator("#error-message")
    assert "error" in message.get_attribute("class")
    assert message.inner_text().startswith("NotImplementedError: Pipeline parallelism is not supported")
    assert "SupportsPP" in message.inner_text()
    assert "--pipeline-parallel-size" in page.locator("#fix-before pre.cmd").inner_text()
    shot(page, f"rule-pp-model-not-supported-{WIDTHS[device]}")
    rule = _no_command_rule()
    page.goto(f"{server}/dashboard/rules/{rule}")
    assert page.locator("#fix-before pre.cmd").count() == 0
    assert "None of this rule's examples has a command line." in page.locator("#fix-before").inner_text()
    shot(page, f"rule-without-command-{WIDTHS[device]}")
    assert watch.errors == [] and watch.dialogs == []
    context.close()


def _visible_rule_ids(page) -> list[str]:
    return page.evaluate("() => [...document.querySelectorAll('#catalog tbody tr')]"
                         ".filter(tr => !tr.hidden).map(tr => tr.querySelector('code').textContent)")


def test_catalog_filters_as_you_type_and_by_label(server, browser):
    context, page, watch = new_page(browser, width=WIDTHS["desktop"])
    page.goto(server + "/dashboard/rules")
    total = len(_visible_rule_ids(page))
    assert total == len(load_rules().rules)
    page.fill("#catalog-filter input[name=q]", "supportspp")
    shown = _visible_rule_ids(page)
    assert {"pp-model-not-supported", "pp-with-draft-model-without-pp"} <= set(shown) and len(shown) < total
    assert page.locator("#catalog-count").inner_text() == str(len(shown))
    shot(page, "catalog-search-1400")
    page.fill("#catalog-filter input[name=q]", "")
    page.select_option("#catalog-filter select[name=label]", "lora")
    lora = _visible_rule_ids(page)
    assert lora and len(lora) < total
    rules = load_rules()
    assert all("lora" in rules.get(rid).labels for rid in lora)
    # the same filters on the server, for a browser without script (and for a link to a filtered catalog)
    page.goto(server + "/dashboard/rules?q=SupportsPP")
    assert _visible_rule_ids(page) == shown
    page.goto(server + "/dashboard/rules?label=lora")
    assert _visible_rule_ids(page) == lora
    assert watch.errors == [] and watch.dialogs == []
    context.close()


def _column(page, table: str, index: int) -> list[str]:
    return page.evaluate(f"() => [...document.querySelectorAll('{table} tbody tr')]"
                         f".map(tr => tr.cells[{index}].textContent.trim())")


def test_tables_sort_from_their_headers(server, browser):
    context, page, watch = new_page(browser, width=WIDTHS["desktop"])
    page.goto(server + "/dashboard/")
    hits = page.locator("#rule-stats thead th").nth(1)
    hits.locator("button").click()
    assert hits.get_attribute("aria-sort") == "descending"
    values = [int(v) for v in _column(page, "#rule-stats", 1)]
    assert values == sorted(values, reverse=True)
    hits.locator("button").click()
    assert hits.get_attribute("aria-sort") == "ascending"
    assert [int(v) for v in _column(page, "#rule-stats", 1)] == sorted(values)
    page.locator("#rule-stats thead th").first.locator("button").click()
    names = [n.split("\n")[0] for n in page.evaluate(
        "() => [...document.querySelectorAll('#rule-stats tbody tr td:first-child')].map(td => td.innerText)")]
    assert names == sorted(names, key=str.lower)
    shot(page, "overview-sorted-1400")
    page.goto(server + "/dashboard/rules")
    page.locator("#catalog thead th").nth(3).locator("button").click()
    counts = [int(v) for v in _column(page, "#catalog", 3)]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0
    assert watch.errors == [] and watch.dialogs == []
    context.close()


@pytest.mark.parametrize("device", list(WIDTHS))
def test_queue_puts_what_needs_a_maintainer_first(server, browser, device):
    context, page, watch = new_page(browser, width=WIDTHS[device])
    page.goto(server + "/dashboard/queue")
    tiers = page.evaluate("() => [...document.querySelectorAll('table.queue .prio')]"
                          ".map(el => parseInt(el.textContent))")
    assert tiers and tiers == sorted(tiers) and len(set(tiers)) > 1
    assert "waiting on the reporter" in page.locator("table.queue tbody tr").last.inner_text()
    help_ = page.locator("#priority-help")
    assert help_.is_visible() and page.locator("#priority-help ol.priorities li").count() == 5
    shot(page, f"queue-priority-{WIDTHS[device]}")
    assert watch.errors == [] and watch.dialogs == []
    context.close()
