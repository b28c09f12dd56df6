"""The replay's HTML report in a real browser: every bar of the label chart is named, panels are as tall as their
content, no two columns share a heading, made-up sample issues link nowhere, and it fits a phone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.corpus import Generator
from bot.cli import main

from .browser import ROOT, WIDTHS, new_page, require_chromium, shot

require_chromium()


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, Path]:
    """Replay reports of the synthetic corpus (20 labels: more than the chart names at its old fixed height) and of
    the project's sample export (made-up issues)."""
    tmp = tmp_path_factory.mktemp("reports")
    corpus = tmp / "corpus.jsonl"
    with corpus.open("w") as f:
        for issue in Generator(1).issues(300):
            issue.pop("html_url", None)
            f.write(json.dumps(issue) + "\n")
    out = {}
    for name, export in (("corpus", corpus), ("samples", ROOT / "samples" / "issues.jsonl")):
        out[name] = tmp / f"{name}.html"
        assert main(["replay", str(export), "--out", str(tmp / f"{name}.jsonl"), "--html", str(out[name])]) == 0
    return out


@pytest.mark.parametrize("device", list(WIDTHS))
def test_label_chart_names_every_bar(reports, browser, device):
    context, page, watch = new_page(browser, width=WIDTHS[device])
    page.goto(reports["corpus"].as_uri())
    names, ticks, height = page.evaluate("""() => { const c = Chart.getChart('chart-label-counts');
      return [c.data.labels.length, c.scales.y.ticks.length, c.scales.y.height]; }""")
    assert names >= 15 and ticks == names, (names, ticks)
    assert height / names >= 14          # room for each name's line
    assert page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    shot(page, f"replay-report-corpus-{WIDTHS[device]}")
    assert watch.errors == [] and watch.dialogs == []
    context.close()


def test_panels_are_as_tall_as_their_content(reports, browser):
    context, page, _ = new_page(browser, width=WIDTHS["desktop"])
    for name in reports:
        page.goto(reports[name].as_uri())
        gap = page.evaluate("""() => { const p = document.getElementById('agreement-panel');
          return p.getBoundingClientRect().bottom - p.lastElementChild.getBoundingClientRect().bottom; }""")
        assert gap < 40, (name, gap)
    context.close()


def test_no_two_columns_share_a_heading(reports, browser):
    context, page, _ = new_page(browser, width=WIDTHS["desktop"])
    page.goto(reports["corpus"].as_uri())
    tables = page.evaluate("""() => [...document.querySelectorAll('table')].map(t =>
      [t.id, [...t.querySelectorAll('thead th')].map(th => th.textContent.trim()).filter(Boolean)])""")
    assert any(tid == "diagnoses" for tid, _ in tables)
    for tid, heads in tables:
        assert len(heads) == len(set(heads)), (tid, heads)
    context.close()


@pytest.mark.parametrize("device", list(WIDTHS))
def test_sample_issues_link_nowhere(reports, browser, device):
    context, page, watch = new_page(browser, width=WIDTHS[device])
    page.goto(reports["samples"].as_uri())
    links = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    assert [u for u in links if u.startswith("http")] == [], links   # made-up issues have no page anywhere
    assert "#101" in page.locator("#issues").inner_text()
    assert page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    shot(page, f"replay-report-samples-{WIDTHS[device]}")
    assert watch.errors == [] and watch.dialogs == []
    context.close()
