"""Making issue text safe to quote in the bot's comment.

Everything the comment shows that came from an issue (titles, error messages, flags, rule output that
interpolates captures) passes through one of the functions below. The guarantees hold wherever the text
lands, inside or outside code, so they do not depend on guessing how GitHub will parse the Markdown:

* no live `@mention`: `@name` becomes `@\u200bname` (a zero-width space after the `@`);
* no raw HTML: `<` followed by a tag-ish character (`<details>`, `</x>`, `<!--`, `<?`) gets the same
  zero-width space, so it is text, never a tag or an HTML comment (a reporter cannot fake the bot's marker);
* no character references that decode to `@` or `<` (`&#64;`): `&` before `#` or a letter is broken the
  same way, except the harmless `&lt;` `&gt;` `&amp;` `&quot;` the rule renderer emits;
* no `#123` / `GH-123` auto-links (they would put a back-reference on an unrelated issue);
* no control characters or bidirectional overrides;
* bounded length; code never breaks out of its fence (the fence is longer than any backtick run inside).
"""

from __future__ import annotations

import re

ZWSP = "\u200b"

# every pattern below is a single character class or a fixed string: linear time on any input
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff]")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_ISSUE_REF = re.compile(r"#(?=[0-9])")
_GH_REF = re.compile(r"(?i)\b(gh)-(?=[0-9])")
_ENTITY = re.compile(r"&(?=[#A-Za-z])(?!(?:lt|gt|amp|quot);)")
# a character every step of defuse but the GH- one needs: a text without it (and without "h-") is left as it is
_TOUCHED = re.compile("[\r\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff<@#&]")
_BACKTICK_RUN = re.compile(r"`+")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

MAX_INLINE = 300
MAX_BLOCK = 4_000
MAX_BLOCK_LINES = 40
MAX_MARKDOWN = 4_000


def defuse(text: object) -> str:
    """The common core: no mentions, tags, HTML comments, entities, issue links or control characters."""
    s = "" if text is None else str(text)
    if not _TOUCHED.search(s) and not (("h-" in s or "H-" in s) and _GH_REF.search(s)):
        return s
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    s = _CONTROL.sub("", s)
    s = _TAG_START.sub("<" + ZWSP, s)
    s = _MENTION.sub("@" + ZWSP, s)
    s = _ISSUE_REF.sub("#" + ZWSP, s)
    s = _GH_REF.sub(lambda m: m.group(1) + "-" + ZWSP, s)
    return _ENTITY.sub("&" + ZWSP, s)


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _one_line(text: object) -> str:
    return " ".join(("" if text is None else str(text)).split())


# a bare link to an issue would auto-link and back-reference it; "github<ZWSP>.com" stays readable
_GITHUB_URL = re.compile(r"(?i)(github)(\.com)")
# Markdown's emphasis/link/table/code characters get a backslash; < and > become entities (one C-level pass)
_PLAIN_ESCAPES = str.maketrans({**{c: "\\" + c for c in "\\`*_[]|~"}, "<": "&lt;", ">": "&gt;"})


def plain(text: object, limit: int = MAX_INLINE) -> str:
    """One line of prose: defused, Markdown emphasis/link/table/code characters escaped, bounded."""
    s = _truncate(_one_line(text), limit)
    s = s.translate(_PLAIN_ESCAPES)
    if "b." in s or "B." in s:
        s = _GITHUB_URL.sub(lambda m: m.group(1) + ZWSP + m.group(2), s)
    return defuse(s)


def inline_code(text: object, limit: int = MAX_INLINE) -> str:
    """A code span that cannot be closed early by backticks in the text."""
    s = defuse(_truncate(_one_line(text), limit))
    if not s:
        return ""
    longest = max((len(m.group()) for m in _BACKTICK_RUN.finditer(s)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def code_block(text: object, limit: int = MAX_BLOCK, max_lines: int = MAX_BLOCK_LINES, lang: str = "") -> str:
    """A fenced block longer than any backtick run inside; keeps the head and the tail when too long."""
    s = defuse(text).strip("\n")
    lines = s.split("\n")
    if len(lines) > max_lines:
        head = max_lines // 2
        lines = [*lines[:head], "…", *lines[-(max_lines - head - 1):]]
    s = "\n".join(line if len(line) <= 500 else line[:499] + "…" for line in lines)
    if len(s) > limit:
        s = s[: limit // 2] + "\n…\n" + s[-(limit // 2):]
    longest = max((len(m.group()) for m in _BACKTICK_RUN.finditer(s)), default=0)
    fence = "`" * max(3, longest + 1)
    lang = re.sub(r"[^A-Za-z0-9_+-]", "", lang)[:20]
    return f"{fence}{lang}\n{s}\n{fence}"


def markdown(text: object, limit: int = MAX_MARKDOWN) -> str:
    """Rule output (Markdown written by a rule author, with values from the issue interpolated).

    Formatting is kept; the result is defused, images are turned into plain links (no tracking pixels
    from interpolated text), it is bounded at a line boundary and an unclosed code fence is closed, so
    nothing after it (the rest of the comment) is swallowed into a code block.
    """
    s = defuse(text).strip("\n")
    s = s.replace("![", "!\\[")
    if len(s) > limit:
        cut = s.rfind("\n", 0, limit)
        s = s[: cut if cut > 0 else limit].rstrip() + "\n…"
    open_fence: str | None = None
    for line in s.split("\n"):
        m = _FENCE.match(line)
        if not m:
            continue
        run = m.group(1)
        if open_fence is None:
            open_fence = run
        elif run[0] == open_fence[0] and len(run) >= len(open_fence) and not line.strip()[len(run):].strip():
            open_fence = None
    if open_fence is not None:
        s += "\n" + open_fence
    return s


def reference(ref: object) -> str:
    """A rule reference: `owner/repo#N` and http(s) URLs become links, anything else plain text."""
    s = _one_line(ref)
    m = re.fullmatch(r"([A-Za-z0-9_.-]{1,100})/([A-Za-z0-9_.-]{1,100})#([0-9]{1,9})", s)
    if m:
        owner, repo, num = m.groups()
        return f"[{owner}/{repo}#{num}](https://github.com/{owner}/{repo}/issues/{num})"
    if re.fullmatch(r"https?://[A-Za-z0-9._~:/?#%+=&;,!$*'-]{1,400}", s):
        shown = plain(s.split("://", 1)[1], limit=80)
        return f"[{shown}]({s})"
    return plain(s)
