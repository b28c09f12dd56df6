"""The neutraliser: issue text quoted in the bot's comment can never ping, inject HTML or break out of code."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import neutralise as nz
from bot.comment import MARKER

LIVE_MENTION = re.compile(r"(?<![A-Za-z0-9_`])@[A-Za-z0-9]")
TAG = re.compile(r"<[A-Za-z/!?]")
ENTITY = re.compile(r"&(?!(?:lt|gt|amp|quot);)[#A-Za-z]")
ISSUE_LINK = re.compile(r"(?<![A-Za-z0-9_&])#[0-9]|\bGH-[0-9]", re.IGNORECASE)

# text that looks like what a hostile or careless reporter pastes
hostile = st.lists(
    st.sampled_from([
        "@octocat", "@vllm-project/maintainers", "<details>", "</details>", "<img src=x onerror=alert(1)>",
        "<script>", MARKER, "<!--", "-->", "```", "````", "`", "~~~", "#123", "GH-7", "&#64;bot", "&commat;x",
        "\u202e", "\x00", "\n", "\r\n", " ", "![pixel](http://x/p.png)", "[link](javascript:alert(1))", "|", "*",
        "_", "\\", "<", ">", "&", "word", "vllm serve", "ValueError: bad", "ąć中文", "\u200b",
    ]),
    max_size=40,
).map("".join)
any_text = st.one_of(st.text(max_size=300), hostile)


def assert_safe(out: str) -> None:
    assert not LIVE_MENTION.search(out), out
    assert not TAG.search(out), out
    assert not ENTITY.search(out), out
    assert not ISSUE_LINK.search(out), out
    assert "\u202e" not in out and "\x00" not in out


@settings(max_examples=300)
@given(any_text)
def test_every_function_output_is_safe(text: str) -> None:
    for out in (nz.defuse(text), nz.plain(text), nz.inline_code(text), nz.code_block(text), nz.markdown(text)):
        assert_safe(out)
        assert MARKER not in out


@given(any_text)
def test_inline_code_cannot_be_closed_early(text: str) -> None:
    out = nz.inline_code(text)
    if not out:
        return
    ticks = re.match(r"`+", out).group()
    inner = out[len(ticks):-len(ticks)]
    assert out.endswith(ticks) and "\n" not in out
    assert all(len(run) < len(ticks) for run in re.findall(r"`+", inner))


@given(any_text)
def test_code_block_fence_is_longer_than_any_run_inside(text: str) -> None:
    out = nz.code_block(text)
    lines = out.split("\n")
    fence = lines[0]
    assert set(fence) == {"`"} and len(fence) >= 3 and lines[-1] == fence
    assert all(len(run) < len(fence) for line in lines[1:-1] for run in re.findall(r"`+", line))


@given(any_text)
def test_markdown_never_leaves_a_fence_open(text: str) -> None:
    out = nz.markdown(text)
    open_fence = None
    for line in out.split("\n"):
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if not m:
            continue
        if open_fence is None:
            open_fence = m.group(1)
        elif m.group(1)[0] == open_fence[0] and len(m.group(1)) >= len(open_fence) \
                and not line.strip()[len(m.group(1)):].strip():
            open_fence = None
    assert open_fence is None


def test_mentions_are_broken_with_an_invisible_space() -> None:
    assert nz.defuse("cc @octocat and @vllm-project/team") == "cc @\u200boctocat and @\u200bvllm-project/team"
    assert nz.plain("thanks @alice").endswith("@\u200balice")


def test_a_reporters_fake_marker_is_not_a_marker() -> None:
    out = nz.code_block(f"log line\n{MARKER}\nmore")
    assert MARKER not in out
    assert "<\u200b!-- vllm-triage:comment -->" in out


def test_html_is_text_in_prose_and_inert_in_code() -> None:
    assert nz.plain("<b>bold</b> & co") == "&lt;b&gt;bold&lt;/b&gt; & co"
    assert nz.inline_code("<details>") == "`<\u200bdetails>`"
    assert nz.markdown("Use <img src=x> here") == "Use <\u200bimg src=x> here"


def test_entities_that_could_spell_a_mention_are_broken_but_escapes_stay() -> None:
    assert nz.defuse("&#64;bot &commat;bot") == "&\u200b#\u200b64;bot &\u200bcommat;bot"
    assert nz.defuse("a &lt; b &amp;&gt;") == "a &lt; b &amp;&gt;"


def test_issue_references_do_not_autolink() -> None:
    assert nz.plain("see #123 and GH-45") == "see #\u200b123 and GH-\u200b45"
    assert "github\u200b.com" in nz.plain("https://github.com/vllm-project/vllm/issues/1")


def test_plain_escapes_markdown_and_flattens_lines() -> None:
    assert nz.plain("max_model_len *is* [x](y)\n| t |") == r"max\_model\_len \*is\* \[x\](y) \| t \|"


def test_backticks_get_a_longer_fence() -> None:
    assert nz.inline_code("a ``b`` c") == "```a ``b`` c```"
    assert nz.inline_code("`x`") == "`` `x` ``"
    assert nz.code_block("```\nboom\n```").startswith("````\n")


def test_lengths_are_bounded() -> None:
    assert len(nz.plain("x" * 10_000)) <= nz.MAX_INLINE
    assert len(nz.inline_code("x" * 10_000)) <= nz.MAX_INLINE + 2
    block = nz.code_block("\n".join(f"line {i}" for i in range(1000)))
    assert block.count("\n") <= nz.MAX_BLOCK_LINES + 2
    assert "line 0" in block and "line 999" in block and "…" in block
    assert len(nz.markdown("word\n" * 5_000)) <= nz.MAX_MARKDOWN + 2


def test_markdown_closes_an_unclosed_fence_and_disarms_images() -> None:
    out = nz.markdown("Run:\n```sh\nvllm serve x")
    assert out.endswith("\n```")
    assert nz.markdown("![p](http://t/p.png)") == "!\\[p](http://t/p.png)"


def test_references() -> None:
    assert nz.reference("vllm-project/vllm#36643") == \
        "[vllm-project/vllm#36643](https://github.com/vllm-project/vllm/issues/36643)"
    assert nz.reference("https://docs.vllm.ai/en/latest/").startswith("[docs.vllm.ai/en/latest/](https://")
    assert nz.reference("see @me") == "see @\u200bme"


def _defuse_every_step(text: str) -> str:
    """defuse without its shortcut for texts it leaves alone: every substitution, always."""
    s = text.replace("\r\n", "\n").replace("\r", "\n")
    s = nz._CONTROL.sub("", s)
    s = nz._TAG_START.sub("<" + nz.ZWSP, s)
    s = nz._MENTION.sub("@" + nz.ZWSP, s)
    s = nz._ISSUE_REF.sub("#" + nz.ZWSP, s)
    s = nz._GH_REF.sub(lambda m: m.group(1) + "-" + nz.ZWSP, s)
    return nz._ENTITY.sub("&" + nz.ZWSP, s)


@settings(max_examples=500)
@given(st.one_of(any_text, st.text(alphabet="gGhH-0123456789 #@<&/!?aA\r\n\x7f\u2066", max_size=30)))
def test_defuse_shortcut_returns_what_every_step_would(text: str) -> None:
    assert nz.defuse(text) == _defuse_every_step(text)


def _plain_every_step(text: str, limit: int) -> str:
    """plain as one regular-expression substitution per step, without shortcuts."""
    s = nz._truncate(nz._one_line(text), limit)
    s = re.sub(r"([\\`*_\[\]|~])", r"\\\1", s)
    s = s.replace("<", "&lt;").replace(">", "&gt;")
    s = re.sub(r"(?i)(github)(\.com)", lambda m: m.group(1) + nz.ZWSP + m.group(2), s)
    return _defuse_every_step(s)


@settings(max_examples=500)
@given(st.one_of(any_text, st.text(alphabet="gGhHbB.-0123456789 #@<>&/!?aA\\`*_[]|~cCoOmMuUiItT\r\n", max_size=40)),
       st.sampled_from([5, 40, 300]))
def test_plain_returns_what_every_step_would(text: str, limit: int) -> None:
    assert nz.plain(text, limit) == _plain_every_step(text, limit)
    assert nz.plain("see GitHub.com/x and github.COM", limit) == _plain_every_step("see GitHub.com/x and github.COM",
                                                                                      limit)
