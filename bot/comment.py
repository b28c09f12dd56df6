"""The one bot comment, rendered from templates/ with Jinja2; issue text in it is neutralised.

The template sees a *view* of the decision in which every string is already neutralised (`Safe`);
anything else that reaches `{{ … }}` goes through `neutralise.plain` on the way out (Jinja `finalize`),
so a template edit cannot print raw issue text by accident. The two parts that depend on the duplicates (the
first line and the list of duplicates) are built here from the same views, by plain string building, so the
template can be rendered before the duplicates are known (replay's workers do). The hidden `MARKER` is added
here, once, outside the template, so the bot can find (and later edit) its own comment.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from bot import neutralise as nz
from bot.decision import Candidate, Finding
from bot.paths import templates_dir
from bot.report.model import RaiseSite, Report
from bot.sources.locate import permalink, release_tag
from bot.sources.versions import base_version

MARKER = "<!-- vllm-triage:comment -->"
TEMPLATES_DIR = templates_dir()
TEMPLATE = "comment.md.j2"
CLEARED_TEMPLATE = "cleared.md.j2"
MIN_CONFIDENCE = 0.5          # findings below this are shown to maintainers only, never commented
MAX_FINDINGS = 3
MAX_DUPLICATES = 3
MAX_EVIDENCE = 6
MAX_COMMENT = 60_000          # GitHub refuses comments above 65,536 characters


class Safe(str):
    """A string that is already neutralised (or is trusted template/rule data): printed as is."""

    def __reduce__(self) -> tuple[type, tuple[str]]:   # pickled as Safe(text), not through copyreg
        return Safe, (str(self),)


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Safe):
        return value
    if isinstance(value, int) and len(text := str(value)) <= nz.MAX_INLINE:
        return text               # a number (an issue number, a count) is printed as plain would print it
    return nz.plain(value)


@lru_cache(maxsize=4)
def _environment(directory: str) -> Environment:
    # auto_reload off: the templates ship with the package, so a render need not stat them for changes
    return Environment(loader=FileSystemLoader(directory), autoescape=False, finalize=_finalize, auto_reload=False,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def commented_findings(findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    return tuple(f for f in findings if f.confidence >= MIN_CONFIDENCE)[:MAX_FINDINGS]


def _finding_view(f: Finding, number: int | None = None) -> dict[str, Any]:
    references = [r for r in f.references if not _self_reference(r, number)]
    return {
        "rule": Safe(nz.inline_code(f.rule, 80)),
        "title": Safe(nz.plain(f.title, 200)),
        "explanation": Safe(nz.markdown(f.explanation)),
        "workaround": Safe(nz.markdown(f.workaround)),
        "upgrade": Safe(nz.plain(f.upgrade, 300)) if f.upgrade else None,
        "references": [Safe(nz.reference(r)) for r in references[:5]],
        "confidence": int(round(f.confidence * 100)),
        "evidence": [
            {"where": Safe(nz.plain(e.where or "report", 20)), "condition": Safe(nz.inline_code(e.condition, 160)),
             "matched": Safe(nz.inline_code(e.matched, 200))}
            for e in f.evidence[:MAX_EVIDENCE]
        ],
    }


_TEMPLATE_ONLY_TITLE = re.compile(r"^\s*(\[[^\]]{0,30}\]\s*:?\s*)*$")


def _candidate_title(title: str | None) -> str | None:
    """The title to show; a bare template prefix ("[Bug]:") says nothing and would print as "[Bug]::"."""
    if not title or _TEMPLATE_ONLY_TITLE.match(title[:200]):
        return None
    return title.strip().rstrip(":").rstrip()


def _self_reference(ref: str, number: int | None) -> bool:
    """A rule reference to the very issue being triaged (rules cite well-known reports)."""
    if number is None:
        return False
    m = _ISSUE_REF.fullmatch(str(ref).strip())
    return bool(m) and int(m.group(1) or m.group(2)) == number


_ISSUE_REF = re.compile(r"vllm-project/vllm#(\d{1,9})|https://github\.com/vllm-project/vllm/issues/(\d{1,9})/?")


def _candidate_view(c: Candidate) -> dict[str, Any]:
    title = _candidate_title(c.title)
    return {
        "number": int(c.number),
        "title": Safe(nz.plain(title, 120)) if title else None,
        "state": Safe("closed" if c.state == "closed" else "open"),
        "reason": Safe(nz.plain(c.reason, 200)) if c.reason else None,
        "via": int(c.via) if c.via is not None else None,
    }


def _report_view(report: Report) -> dict[str, Any]:
    env = report.environment
    gpus: str | None = None
    if env.gpus:
        first = env.gpus[0]
        same = all(g == first for g in env.gpus)
        gpus = f"{len(env.gpus)} × {first}" if same and len(env.gpus) > 1 else ", ".join(env.gpus[:4])
    root = report.root_cause
    return {
        "vllm_version": Safe(nz.inline_code(env.vllm_version, 80)) if env.vllm_version else None,
        "version_source": Safe(nz.plain(env.vllm_version_source, 30)) if env.vllm_version_source else None,
        "platform": Safe(nz.plain(env.platform, 20)) if env.platform else None,
        "gpus": Safe(nz.plain(gpus, 200)) if gpus else None,
        "model": Safe(nz.inline_code(report.model, 150)) if report.model else None,
        "exception": Safe(nz.inline_code(f"{root.type}: {root.first_line}", 300)) if root else None,
    }


_VERBS = {"raise": "raises", "assert": "raises", "log": "logs"}  # an assert raises AssertionError


def shown_site(report: Report) -> RaiseSite | None:
    """The root cause's site the comment names: one resolved site, or the first of tied sites in one function.
    None for a wrapper ("EngineCore failed to start": its site is not the cause) or sites in several places."""
    sites = report.sites
    if not sites or any(s.wrapper for s in sites) or len({(s.file, s.qualname) for s in sites}) > 1:
        return None
    return min(sites, key=lambda s: s.line)


def _version_key(version: str) -> tuple[int, Any]:
    parsed = base_version(version)
    return (1, parsed) if parsed is not None else (0, version)


def _site_view(report: Report) -> dict[str, Any] | None:
    site = shown_site(report)
    if site is None:
        return None
    sites = report.sites
    # the releases that raise the message, from this place or another it moved to
    first = min((s.message_first or s.first for s in sites), key=_version_key)
    last = max((s.message_last or s.last for s in sites), key=_version_key)
    reporter = report.sites[0].reporter_release
    return {
        "link": Safe(f"[{nz.inline_code(f'{site.file}#L{site.line}', 200)}]({_url(permalink(site))})"),
        "qualname": Safe(nz.inline_code(site.qualname, 150)),
        "verb": Safe(_VERBS.get(site.kind, "raises")),
        "verb_plural": Safe(_VERBS.get(site.kind, "raises")[:-1]),
        "tag": Safe(nz.plain(release_tag(site.release), 40)),
        "at_release": site.at_release,
        "reporter": Safe(nz.plain(release_tag(reporter), 40)) if reporter else None,
        "first": Safe(nz.plain(release_tag(first), 40)),
        "last": Safe(nz.plain(release_tag(last), 40)),
        "tied": len(sites),
        "version_known": bool(report.environment.vllm_version),
        # no release after the reporter's raises it: a hint to upgrade, only when every tied site agrees
        "changed_since": all(s.changed_since for s in sites),
    }


def _url(url: str) -> str:
    """A link target that cannot end the Markdown link early (the path comes from the source index)."""
    return quote(url, safe=":/#+=-._~")


PRERENDERED = "prerendered"


def comment_context(report: Report, findings: tuple[Finding, ...], needs_info: tuple[str, ...],
                    number: int | None = None, prerender: bool = False) -> dict[str, Any]:
    """What the comment shows besides the duplicates: it needs only the issue (replay builds it in its workers).
    `number`: the issue's own number, which is left out of the references. With `prerender`, when the comment is
    made whatever the duplicates, the template (everything but the summary and the duplicates) is rendered
    here, and the context is only that text and what the summary reads (less to send between processes)."""
    context = {
        "findings": [_finding_view(f, number) for f in commented_findings(findings)],
        "needs_info": [Safe(nz.plain(k, 40)) for k in needs_info],
        "report": _report_view(report),
        "site": _site_view(report),
        "kind": Safe(nz.plain(report.kind, 20)),
        "environment_placeholder": report.environment_placeholder and not needs_info,
        # an environment was pasted (torch, GPUs) but it stops before the vLLM line: ask for the version only
        "version_only": bool(report.environment.torch_version and report.environment.gpus
                             and not report.environment.vllm_version and report.kind != "installation"),
    }
    if prerender and _says_something(context):
        return {PRERENDERED: _known_and_rest(context), "summary": _summary_facts(context)}
    return context


def _known_and_rest(context: dict[str, Any]) -> tuple[str, str]:
    """The template's two blocks: what is known (before the duplicates) and the rest (after them)."""
    template = _template()
    blocks = template.new_context(context)
    return "".join(template.blocks["known"](blocks)), "".join(template.blocks["rest"](blocks))


def _says_something(context: dict[str, Any]) -> bool:
    """Whether the comment is worth making without duplicates; a site alone only with something to do about it:
    no later release raises the message."""
    site = context["site"]
    return bool(context["findings"] or context["needs_info"] or (site and site["changed_since"]))


SummaryFacts = tuple[int, Safe | None, bool, bool]   # findings shown, the first one's title, needs info, a site


def _summary_facts(context: dict[str, Any]) -> SummaryFacts:
    findings = context["findings"]
    return len(findings), findings[0]["title"] if findings else None, bool(context["needs_info"]), bool(context["site"])


def _summary(facts: SummaryFacts, duplicates: list[dict[str, Any]]) -> str:
    """The comment's first line (its values are neutralised already)."""
    shown, first_title, needs_info, site = facts
    if shown:
        more = f" (and {shown - 1} more below)" if shown > 1 else ""
        again = " It may also have been reported before." if duplicates else ""
        return f"**vllm-triage:** this looks like a known problem: **{first_title}**{more}.{again}\n\n"
    if duplicates:
        numbers = ", ".join(f"#{d['number']}" for d in duplicates)
        return (f"**vllm-triage:** this may be the same problem as {numbers}; please have a look before digging "
                "further.\n\n\n")
    if not needs_info and site:
        return ("**vllm-triage:** no known problem matched this report, but the error is vLLM's own; where it comes "
                "from is below.\n\n\n")
    return ("**vllm-triage:** thanks for the report! Some information is missing before anyone can look into it "
            "(see below).\n\n\n")


def _duplicates(duplicates: list[dict[str, Any]]) -> str:
    """The list of earlier issues that may be the same problem (their values are neutralised already)."""
    if not duplicates:
        return ""
    items = []
    for d in duplicates:
        title = f" {d['title']}" if d["title"] else ""
        reason = f": {d['reason']}" if d["reason"] else ""
        via = f" (found through #{d['via']}, which was closed as its duplicate)" if d["via"] else ""
        items.append(f"- #{d['number']} ({d['state']}){title}{reason}{via}\n")
    return ("### Possibly the same problem\n\n" + "".join(items)
            + "\nIf one of them is your problem, a comment or a 👍 there helps more than a new issue.\n\n\n")


def _template() -> Any:
    return _environment(str(TEMPLATES_DIR)).get_template(TEMPLATE)


def render_comment(
    report: Report, findings: tuple[Finding, ...], duplicates: tuple[Candidate, ...], needs_info: tuple[str, ...],
    number: int | None = None, context: dict[str, Any] | None = None,
) -> str | None:
    """Markdown of the comment, or None when nothing useful is known. `number`: the issue's own number, which is
    left out of the references. `context`: comment_context of the same arguments, when already built.

    The comment is the summary, what is known (the template's `known` block), the duplicates, then the rest
    (its `rest` block): the template does not read the duplicates, so it can be rendered before they are known;
    the two parts that do are built here, from values neutralised already."""
    if context is None:
        context = comment_context(report, findings, needs_info, number)
    dups = tuple(duplicates)[:MAX_DUPLICATES]
    prerendered = context.get(PRERENDERED)
    if prerendered is None and not dups and not _says_something(context):
        return None
    views = [_candidate_view(c) for c in dups]
    if prerendered is None:
        known, rest = _known_and_rest(context)
        facts = _summary_facts(context)
    else:
        known, rest = prerendered
        facts = context["summary"]
    body = _tidy(_summary(facts, views) + known + _duplicates(views) + rest)
    if len(body) > MAX_COMMENT:
        body = body[:MAX_COMMENT].rsplit("\n", 1)[0] + "\n\n…"
    return f"{MARKER}\n{body}"


@lru_cache(maxsize=1)  # the same text every time: rendered once per process
def render_cleared() -> str:
    """What the bot comment is edited to when a re-triage has nothing to say any more (nothing from the issue)."""
    return f"{MARKER}\n" + _tidy(_environment(str(TEMPLATES_DIR)).get_template(CLEARED_TEMPLATE).render())


def _tidy(text: str) -> str:
    """At most one blank line in a row, no trailing spaces, one final newline."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if not line and out and not out[-1]:
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"
