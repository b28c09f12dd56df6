"""Accessibility and the pages around the dashboard, in a real browser: text contrast meets WCAG AA (computed
here from the rendered colours), a skip link leads past the navigation, 404 and 400 answers are pages with the
dashboard's navigation, and a rule suppressed on its only hit has 0 % precision, not "—"."""

from __future__ import annotations

import re

import pytest

from .browser import ISSUE, WIDTHS, login, new_page, require_chromium, shot

require_chromium()

# Every text node's colour against the background it is drawn on (ancestors' backgrounds composited), as WCAG 2
# defines contrast: (L1 + 0.05) / (L2 + 0.05) with relative luminance L; 4.5:1 for text, 3:1 for large text.
CONTRAST = r"""(root) => {
  const rgba = c => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, base) => [0, 1, 2].map(i => top[i] * top[3] + base[i] * (1 - top[3]));
  const lum = rgb => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
  };
  const background = el => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let base = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const out = [], seen = new Set();
  const walker = document.createTreeWalker(root || document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || seen.has(el) || el.closest('script, style, canvas')) continue;
    seen.add(el);
    const s = getComputedStyle(el), box = el.getBoundingClientRect();
    if (s.visibility === 'hidden' || !el.getClientRects().length) continue;
    if (box.width < 2 || box.height < 2 || box.bottom < 0) continue;     // clipped away or above the page
    const bg = background(el), fg = over(rgba(s.color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05), size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const what = `${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 30)}"`;
    if (ratio < need) out.push(`${what} ${ratio.toFixed(2)}:1 < ${need}`);
  }
  return out;
}"""

# every chip, badge and coloured text the stylesheet defines, some of which the test data never shows
SWATCHES = """
<section class="cards">
  <div class="card"><div class="num">15</div><div>issues</div></div>
  <a class="card warn" href="#"><div class="num">4</div><div>in the queue</div></a>
  <a class="card bad" href="#"><div class="num">2</div><div>parked</div></a>
</section>
<section class="panel">
  <span class="label">memory</span><span class="label removed">rocm</span><span class="reason">needs info</span>
  <span class="conf high">90%</span><span class="conf low">40%</span><span class="mode mode-live">live</span>
  <span class="mode mode-shadow">shadow</span><span class="mode mode-dry-run">dry-run</span>
  <span class="state state-open">open</span><span class="state state-closed">closed</span>
  <span class="state state-deleted">deleted</span><span class="count">3</span>
  <div class="prio prio-0">1. the bot could not act</div><div class="prio prio-3">4. details missing</div>
  <p class="hint">hint</p><p class="empty">empty</p><div class="sub">sub</div><p class="ok">done</p>
  <p class="error">error</p><pre class="error">ValueError: x</pre><pre class="cmd">vllm serve m</pre>
  <pre class="pattern">ValueError: /x/</pre><table><thead><tr><th>head</th></tr></thead><tbody><tr>
  <td class="pattern">pattern</td></tr></tbody></table>
  <button>Log in</button><button class="secondary">Not a dup</button>
  <p class="meta">meta</p><p class="crumbs">crumbs <a href="#">link</a></p><span class="op">any of</span>
</section>"""

PAGES = {"overview": "/dashboard/", "queue": "/dashboard/queue", "issue": f"{ISSUE}/105",
         "catalog": "/dashboard/rules", "rule": "/dashboard/rules/pp-model-not-supported",
         "login": "/dashboard/login", "not-found": "/dashboard/rules/no-such-rule"}


def test_text_contrast_meets_wcag_aa(server, browser):
    context, page, watch = new_page(browser, width=WIDTHS["desktop"], allow_status=(404,))
    for name, path in PAGES.items():
        page.goto(server + path)
        assert page.evaluate(CONTRAST, None) == [], name
    login(page, server)
    page.goto(f"{server}{ISSUE}/105")
    assert page.evaluate(CONTRAST, None) == [], "issue, logged in"
    page.evaluate("html => { document.querySelector('main').innerHTML = html; }", SWATCHES)
    assert page.locator("main .conf.high").count() == 1
    assert page.evaluate(CONTRAST, None) == []
    shot(page, "contrast-swatches-1400")
    assert watch.errors == [] and watch.dialogs == []
    context.close()


@pytest.mark.parametrize("device", list(WIDTHS))
def test_a_skip_link_leads_past_the_navigation(server, browser, device):
    context, page, watch = new_page(browser, width=WIDTHS[device])
    for path in ("/dashboard/", f"{ISSUE}/105", "/dashboard/rules"):
        page.goto(server + path)
        page.keyboard.press("Tab")
        focused = page.evaluate("() => [document.activeElement.className, document.activeElement.textContent]")
        assert focused == ["skip", "Skip to content"], path
        box = page.locator("a.skip").bounding_box()
        assert box and box["y"] >= 0 and box["x"] >= 0 and box["width"] > 20, path   # on screen while focused
        assert page.evaluate(CONTRAST, None) == []
        if path == "/dashboard/":
            shot(page, f"skip-link-{WIDTHS[device]}")
        page.keyboard.press("Enter")
        assert page.evaluate("() => document.activeElement.id") == "main"
        page.keyboard.press("Tab")
        assert page.evaluate("() => !!document.activeElement.closest('main')"), path   # next stop is in the page
    page.goto(server + "/dashboard/")
    assert page.locator("a.skip").bounding_box()["y"] < 0                              # hidden until focused
    assert watch.errors == [] and watch.dialogs == []
    context.close()


@pytest.mark.parametrize("device", list(WIDTHS))
def test_error_answers_are_pages_with_navigation(server, browser, device):
    context, page, watch = new_page(browser, width=WIDTHS[device], allow_status=(400, 404))
    cases = {"no-issue": (f"{ISSUE}/99999", 404, "no decision recorded for vllm-project/vllm#99999"),
             "no-rule": ("/dashboard/rules/no-such-rule", 404, "no such rule"),
             "no-page": ("/dashboard/no-such-page", 404, ""),
             "bad-filter": ("/dashboard/queue?age=soon", 400, "age must be a number of days")}
    for name, (path, status, message) in cases.items():
        response = page.goto(server + path)
        assert response.status == status, path
        assert response.headers["content-type"].startswith("text/html")
        assert page.locator("h1").inner_text().startswith(f"{status} · ")
        assert message in page.locator("#error-page").inner_text()
        nav = page.locator("header.top nav a")
        assert [nav.nth(i).inner_text() for i in range(nav.count())] == ["Overview", "Queue", "Error catalog", "Errors"]
        assert page.locator("#error-page a[href='/dashboard/queue']").count() == 1
        sideways = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert sideways <= 0
        shot(page, f"error-{name}-{WIDTHS[device]}")
    api = page.goto(server + "/api/rules/no-such-rule")
    assert api.status == 404 and api.json() == {"error": "no such rule"}
    assert watch.errors == [] and watch.dialogs == []
    context.close()


def _rule_stat(page, rule: str) -> dict[str, str]:
    row = page.locator("#rule-stats tbody tr").filter(has=page.locator(f"a[href='/dashboard/rules/{rule}']"))
    cells = row.locator("td")
    return {cells.nth(i).get_attribute("data-label"): cells.nth(i).inner_text() for i in range(1, 6)}


def test_suppressing_a_rules_only_hit_gives_zero_precision(server, browser):
    context, page, watch = new_page(browser, width=WIDTHS["desktop"])
    login(page, server)
    page.goto(server + "/dashboard/")
    only = page.evaluate("""() => [...document.querySelectorAll('#rule-stats tbody tr')]
      .filter(tr => tr.cells[1].textContent.trim() === '1' && tr.cells[3].textContent.trim() === '0')
      .map(tr => tr.querySelector('a').getAttribute('href').split('/').pop())""")
    assert only, "no rule with exactly one hit in the test data"
    rule = only[0]
    page.goto(f"{server}/dashboard/rules/{rule}")
    issue = page.locator("#matched a").first.get_attribute("href")
    page.goto(server + issue)
    page.locator(f"form[action$='/suppress-rule']:has(input[value='{rule}']) button").click()
    page.wait_for_url(re.compile(r".*\?done=suppress-rule$"))
    assert page.locator("#history tbody tr").count() >= 2
    for device, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        table, panel = page.evaluate("""() => { const t = document.querySelector('#history');
          return [t.getBoundingClientRect().right, t.closest('.panel').getBoundingClientRect().right]; }""")
        assert table <= panel, (device, table, panel)
        shot(page, f"issue-suppressed-{width}")
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
    page.goto(server + "/dashboard/")
    stat = _rule_stat(page, rule)
    assert (stat["hits"], stat["suppressed"], stat["precision"]) == ("1", "1", "0%"), stat
    shot(page, "overview-suppressed-1400")
    assert watch.errors == [] and watch.dialogs == []
    context.close()
