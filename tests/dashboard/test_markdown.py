"""Markdown rendering of the bot's comment and of rule texts: nothing from an issue becomes live HTML."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.comment import MARKER
from bot.dashboard.markdown import to_html


def test_raw_html_is_escaped_and_the_comment_tags_stay():
    html = to_html(f"{MARKER}\n**hi** <img src=x onerror=alert(1)>\n\n<details>\n<summary>What</summary>\n\n"
                   "- a <script>alert(1)</script>\n\n</details>\n<details open onclick=x>\n\n<sub>bye</sub>")
    assert "<img" not in html and "<script" not in html and "onclick=x>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<details>" in html and "<summary>What</summary>" in html and "<sub>bye</sub>" in html
    assert "vllm-triage:comment" not in html
    assert "<strong>hi</strong>" in html


def test_dangerous_links_are_not_links():
    html = to_html("[a](javascript:alert(1)) [b](vbscript:x) [c](data:text/html,<script>) [ok](https://docs.vllm.ai)")
    assert 'href="javascript' not in html and 'href="vbscript' not in html and 'href="data' not in html
    assert '<a href="https://docs.vllm.ai">ok</a>' in html


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/=\"' abcdeiklmnoprstuvx()[]:!`*\n&;#")), max_size=200))
def test_no_tag_with_attributes_or_script_survives(text):
    html = to_html(text)
    lowered = html.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<svg" not in lowered and "<iframe" not in lowered
    assert 'href="javascript' not in lowered
    # every tag in the output is one markdown-it or the allow-list writes, without event handlers
    tags = [part.split(">", 1)[0] for part in lowered.split("<")[1:]]
    assert not [t for t in tags if " on" in t and not t.startswith("a href")]
