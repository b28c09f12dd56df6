"""`vllm-triage explain`: the Report and the findings of one issue, readable, for rule authors."""

from __future__ import annotations

from bot.decision import Finding
from bot.report import parse
from bot.rules import RuleSet


def _value(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 200 else text[:197] + "..."


def explain(title: str, body: str, rules: RuleSet) -> str:
    report = parse(title, body)
    out: list[str] = [f"title:        {report.title!r}", f"kind:         {report.kind} (from {report.kind_source})"]
    out.append("sections:")
    out += [f"  ### {s.heading}{'  (empty)' if s.empty else ''}" for s in report.sections] or ["  (none)"]
    placeholder = "  (section holds the template placeholder)" if report.environment_placeholder else ""
    out.append("environment:" + placeholder)
    for key, value in report.environment.as_dict().items():
        if value not in (None, [], 0):
            out.append(f"  {key:22s} {_value(value)}")
    out.append(f"model:        {report.model}")
    out.append(f"architectures: {', '.join(report.architectures) or '-'}")
    out.append("flags:")
    out += [f"  {k:30s} {_value(v)}" for k, v in sorted(report.flags.items())] or ["  (none)"]
    out.append("commands:")
    out += [f"  [{c.entrypoint}] {c.raw[:160]}" for c in report.commands] or ["  (none)"]
    out.append("tracebacks:")
    for i, tb in enumerate(report.tracebacks, 1):
        out.append(f"  #{i}{' in ' + tb.process if tb.process else ''}:")
        for exc in tb.chain:
            vllm_frames = [f for f in exc.frames if f.is_vllm][-3:]
            out.append(f"    {exc.type}: {exc.first_line[:160]}")
            out += [f"      at {f.file}:{f.line} in {f.function}" for f in vllm_frames]
    out.append("exceptions (root cause last):")
    out += [f"  {e.type}: {e.first_line[:160]}  [{e.source}]" for e in report.exceptions] or ["  (none)"]
    if report.error_lines:
        out.append("error lines:")
        out += [f"  {line[:160]}" for line in report.error_lines[:10]]
    out.append(f"needs_info:   {', '.join(report.needs_info) or '-'}")
    out += explain_findings(rules.evaluate(report))
    return "\n".join(out)


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
