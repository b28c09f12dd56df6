"""The load-time error of a rule file."""

from __future__ import annotations


class RuleError(ValueError):
    """A rule file is wrong: names the file, the rule id and the field."""

    def __init__(self, file: str, rule_id: str | None, field: str, message: str) -> None:
        self.file, self.rule_id, self.field, self.message = file, rule_id, field, message
        super().__init__(f"{file}: rule {rule_id or '?'}: {field}: {message}")
