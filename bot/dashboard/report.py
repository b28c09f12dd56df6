"""`vllm-triage replay … --html report.html`: a self-contained static report of a replay, from the dashboard's
templates (CSS, Chart.js and our script inlined; no request leaves the file).

Summary, per-label counts, diagnoses, duplicate clusters, every issue's triage, and — when the export carries the
maintainers' labels — precision/recall of the bot's labels against them, per topic. Only topics the maintainers
use in this export are scored (vLLM has no label for some topics; the bot is not marked wrong for those).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.dashboard.labelmap import topic_of
from bot.dashboard.render import asset, environment
from bot.export import IssueRecord
from bot.labels import NEEDS_INFO
from bot.replay import ReplaySummary
from bot.triage import Triage

MAX_ISSUE_ROWS = 5000


@dataclass(frozen=True)
class Row:
    number: int
    title: str
    url: str | None
    kind: str
    labels: tuple[str, ...]
    maintainer_labels: tuple[str, ...]
    diagnoses: tuple[tuple[str, str, float], ...]     # (rule, title, confidence)
    duplicates: tuple[tuple[int, float, str], ...]    # (number, score, reason)
    needs_info: tuple[str, ...]
    version: str | None
    error: str | None


@dataclass
class TopicScore:
    topic: str
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class Agreement:
    issues: int
    topics: list[TopicScore]
    total: TopicScore


def agreement(rows: list[Row]) -> Agreement | None:
    """Micro and per-topic precision/recall of the bot's topic labels against the maintainers' labels."""
    gold_sets = [{t for t in map(topic_of, r.maintainer_labels) if t} for r in rows]
    scored = set().union(*gold_sets) - {NEEDS_INFO} if gold_sets else set()
    if not scored:
        return None
    per = {t: TopicScore(t) for t in sorted(scored)}
    for row, gold in zip(rows, gold_sets, strict=True):
        got = {lb for lb in row.labels if lb in scored}
        for t in got & gold:
            per[t].tp += 1
        for t in got - gold:
            per[t].fp += 1
        for t in (gold & scored) - got:
            per[t].fn += 1
    total = TopicScore("all", sum(s.tp for s in per.values()), sum(s.fp for s in per.values()),
                       sum(s.fn for s in per.values()))
    topics = sorted(per.values(), key=lambda s: (-(s.tp + s.fn), s.topic))
    return Agreement(sum(1 for g in gold_sets if g & scored), topics, total)


def clusters(rows: list[Row]) -> list[list[Row]]:
    """Issues joined by the bot's duplicate links (connected components of two or more), largest first."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_number = {r.number: r for r in rows}
    for r in rows:
        for number, _, _ in r.duplicates:
            if number in by_number:
                parent[find(r.number)] = find(number)
    groups: dict[int, list[Row]] = defaultdict(list)
    for n in parent:
        groups[find(n)].append(by_number[n])
    out = [sorted(g, key=lambda r: r.number) for g in groups.values() if len(g) > 1]
    return sorted(out, key=lambda g: (-len(g), g[0].number))


@dataclass
class HtmlReport:
    export: str
    rows: list[Row] = field(default_factory=list)

    def add(self, issue: IssueRecord, result: Triage) -> None:
        d, r = result.decision, result.report
        root = r.root_cause
        self.rows.append(Row(
            number=issue.number, title=issue.title, url=issue.url, kind=r.kind, labels=d.labels,
            maintainer_labels=issue.labels,
            diagnoses=tuple((f.rule, f.title, f.confidence) for f in d.findings),
            duplicates=tuple((c.number, c.score, c.reason) for c in d.duplicates),
            needs_info=d.needs_info, version=r.environment.vllm_version,
            error=f"{root.type}: {root.first_line}"[:300] if root else None))

    def tee(self, sink: Callable[[IssueRecord, Triage], None]) -> Callable[[IssueRecord, Triage], None]:
        def both(issue: IssueRecord, result: Triage) -> None:
            sink(issue, result)
            self.add(issue, result)

        return both

    def context(self, summary: ReplaySummary) -> dict[str, Any]:
        label_counts = Counter(lb for r in self.rows for lb in r.labels)
        diagnoses: dict[str, dict[str, Any]] = {}
        for row in self.rows:
            for rule, title, _ in row.diagnoses:
                entry = diagnoses.setdefault(rule, {"rule": rule, "title": title, "issues": []})
                entry["issues"].append(row)
        has_labels = any(r.maintainer_labels for r in self.rows)
        return {
            "title": f"Replay of {Path(self.export).name}", "export": self.export, "summary": summary,
            "issues": len(self.rows), "diagnosed": sum(1 for r in self.rows if r.diagnoses),
            "label_counts": label_counts.most_common(),
            "diagnoses": sorted(diagnoses.values(), key=lambda e: (-len(e["issues"]), e["rule"])),
            "clusters": clusters(self.rows), "agreement": agreement(self.rows) if has_labels else None,
            "has_labels": has_labels, "rows": self.rows[:MAX_ISSUE_ROWS], "truncated": len(self.rows) > MAX_ISSUE_ROWS,
            "charts": {"label_counts": label_counts.most_common(25)},
        }

    def render(self, summary: ReplaySummary) -> str:
        return environment().get_template("report.html.j2").render(
            inline=True, inline_css=asset("dashboard.css"), inline_js=asset("dashboard.js"),
            inline_chartjs=asset("vendor/chart.umd.min.js"), path="", user=None, csrf="", public=True,
            mode="replay", **self.context(summary))

    def write(self, path: str | Path, summary: ReplaySummary) -> None:
        Path(path).write_text(self.render(summary), encoding="utf-8")
