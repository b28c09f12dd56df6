"""Topic labels from findings and reliable signals in the Report (never from words in an env dump)."""

from __future__ import annotations

from bot.decision import Finding
from bot.report.model import Report


def topic_labels(report: Report, findings: tuple[Finding, ...]) -> tuple[str, ...]:
    labels: list[str] = []
    for finding in findings:
        for label in finding.labels:
            if label not in labels:
                labels.append(label)
    return tuple(labels)
