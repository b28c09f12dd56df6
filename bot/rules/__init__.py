"""Diagnosis rules: YAML files under rules/, validated at load, evaluated against a Report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.decision import Finding
from bot.report.model import Report

DEFAULT_RULES_DIR = Path(__file__).resolve().parent.parent.parent / "rules"


class RuleError(ValueError):
    """A rule file is wrong: names the file, the rule id and the field."""

    def __init__(self, file: str, rule_id: str | None, field: str, message: str) -> None:
        self.file, self.rule_id, self.field, self.message = file, rule_id, field, message
        super().__init__(f"{file}: rule {rule_id or '?'}: {field}: {message}")


@dataclass(frozen=True)
class RuleSet:
    rules: tuple = ()

    def evaluate(self, report: Report) -> tuple[Finding, ...]:
        return ()


def load_rules(directory: Path | str = DEFAULT_RULES_DIR) -> RuleSet:
    return RuleSet()
