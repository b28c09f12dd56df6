"""`vllm-triage explain`: the Report and the findings of one issue, readable, for rule authors."""

from __future__ import annotations

import textwrap

from bot.decision import Finding
from bot.report.model import ExceptionInfo, RaiseSite, Report
from bot.rules import RuleSet
from bot.sources.index import SourceIndex
from bot.sources.locate import is_wrapper
from bot.triage import analyse

WIDTH = 120


def _value(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 200 else text[:197] + "..."


def explain(title: str, body: str, rules: RuleSet, sources: SourceIndex | None = None,
            created_at: str | None = None) -> str:
    """`sources`: the raise-site index (the root cause's site, and a type inferred from it); None: shown as absent."""
    analysis = analyse(title, body, rules, sources, created_at)
    report = analysis.report
    out: list[str] = [f"title:        {report.title!r}", f"kind:         {report.kind} (from {report.kind_source})"]
    out.append("sections:")
    out += [f"  ### {s.heading}{'  (empty)' if s.empty else ''}" for s in report.sections] or ["  (none)"]
    placeholder = "  (section holds the template placeholder)" if report.environment_placeholder else ""
    out.append("environment:" + placeholder)
    for key, value in report.environment.as_dict().items():
        if value not in (None, [], 0):
            out.append(f"  {key:22s} {_value(value)}")
    out.append(f"model:        {report.model or '-'}")
    out.append(f"architectures: {', '.join(report.architectures) or '-'}")
    out.append("flags:")
    out += [f"  {k:30s} {_value(v)}" for k, v in sorted(report.flags.items())] or ["  (none)"]
    out.append("commands:")
    for c in report.commands:  # whole, wrapped between words: a flag is never cut
        out += textwrap.wrap(c.raw, WIDTH, initial_indent=f"  [{c.entrypoint}] ", subsequent_indent="      ",
                             break_long_words=False, break_on_hyphens=False)
    if not report.commands:
        out.append("  (none)")
    out.append("tracebacks:")
    for i, tb in enumerate(report.tracebacks, 1):
        out.append(f"  #{i}{' in ' + tb.process if tb.process else ''}:")
        for exc in tb.chain:
            vllm_frames = [f for f in exc.frames if f.is_vllm][-3:]
            out.append(f"    {exc.type}: {exc.first_line[:160]}")
            out += [f"      at {f.file}:{f.line} in {f.function}" for f in vllm_frames]
    if report.cut_frames:
        out.append("traceback cut before its exception line:")
        out += [f"  at {f.file}:{f.line} in {f.function}" for f in report.cut_frames[-3:]]
    out += _exceptions(report)
    out += explain_sites(report, sources is not None)
    if report.error_lines:
        out.append("error lines:")
        out += [f"  {line[:160]}" for line in report.error_lines[:10]]
    out.append(f"needs_info:   {', '.join(report.needs_info) or '-'}")
    out += explain_findings(analysis.findings)
    return "\n".join(out)


def _exceptions(report: Report) -> list[str]:
    """The root cause the rules read first, the exceptions of its own chain, the wrappers that only report a
    failure elsewhere, then every other error apart: two unrelated tracebacks are two failures, not one's causes."""
    root = report.root_cause
    if root is None:
        return ["root cause:   (none)"]

    def line(e: ExceptionInfo) -> str:
        where = next((f"traceback #{i}" for i, tb in enumerate(report.tracebacks, 1) if e in tb.chain), e.source)
        inferred = ", type inferred from the raise site" if e.inferred else ""
        return f"{e.type}: {e.first_line[:160]}  [{where}{' in ' + e.process if e.process else ''}{inferred}]"

    chain = next((tb.chain for tb in report.tracebacks if root in tb.chain), (root,))
    out = [f"root cause:   {line(root)}"]
    causes = [e for e in chain if e != root]
    if causes:
        out.append("  raised while handling (oldest first):")
        out += [f"    {line(e)}" for e in causes]
    rest = [e for e in report.exceptions if e not in chain]
    wrappers = [e for e in rest if is_wrapper(e.type, e.message)]
    if wrappers:
        out.append("wrapper errors (report a failure elsewhere, such as the engine's):")
        out += [f"  {line(e)}" for e in wrappers]
    others = [e for e in rest if e not in wrappers]
    if others:
        out.append("other errors (separate from the root cause, not its chain):")
        out += [f"  {line(e)}" for e in others]
    return out


def explain_sites(report: Report, indexed: bool) -> list[str]:
    if not indexed:
        return ["raise site:   (no source index)"]
    if not report.sites:
        return ["raise site:   (not found in the source index)"]
    head = "raise site:" if len(report.sites) == 1 else f"raise sites ({len(report.sites)}, tied):"
    return [head] + [line for s in report.sites for line in _site_lines(s)]


def _site_lines(s: RaiseSite) -> list[str]:
    kind = f"{s.kind} {s.type}" if s.type else s.kind
    where = "at the reporter's release" if s.at_release else "at the nearest release that has it"
    mapped = s.reporter_release or "unknown"
    lines = [f"  {s.file}:{s.line} in {s.qualname}  ({kind}; {where}, {s.release}; reporter's release {mapped})",
             f"    message: {s.message[:160]}",
             f"    raised in {s.releases} releases, {s.first} .. {s.last} (newest indexed: {s.newest})"
             + ("; not raised after the reporter's release" if s.changed_since else ""),
             f"    resolved from the {s.of} by {s.by}; id {s.id}" + ("; a wrapper error" if s.wrapper else "")]
    return lines


def explain_findings(findings: tuple[Finding, ...]) -> list[str]:
    """Each finding with the evidence of every condition that matched, its captures and its rendered texts."""
    out = ["findings:"]
    if not findings:
        return out + ["  (none)"]
    for f in findings:
        out.append(f"  {f.rule} ({f.confidence:.2f}) {f.title}  labels: {', '.join(f.labels) or '-'}")
        out.append("    evidence:")
        out += [f"      - [{ev.where}] {ev.condition}" + (f"\n          => {ev.matched!r}" if ev.matched else "")
                for ev in f.evidence]
        if f.captures:
            out.append("    captures: " + ", ".join(f"{k}={_value(v)}" for k, v in sorted(f.captures.items())))
        if f.upgrade:
            out.append(f"    upgrade: {f.upgrade}")
        for name, text in (("explanation", f.explanation), ("workaround", f.workaround)):
            out.append(f"    {name}:")
            out += [f"      {line}" for line in text.splitlines()] or ["      (empty)"]
        if f.references:
            out.append("    references: " + ", ".join(f.references))
    return out
