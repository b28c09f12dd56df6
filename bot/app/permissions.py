"""The GitHub App permissions the bot needs (app.yml's `default_permissions`) and what a grant lacks.

GitHub reports the granted permissions on `GET /app` (what the App asks for) and on every installation access
token (what that installation accepted; an owner may not have accepted a newer request yet).
"""

from __future__ import annotations

from collections.abc import Mapping

LEVELS = ("none", "read", "write", "admin")

# Without these the bot cannot act: labels and the comment need issues: write.
REQUIRED: dict[str, str] = {"issues": "write", "metadata": "read"}
# Without this the bot works with the default settings (it reads .github/vllm-triage.yml from the repository).
OPTIONAL: dict[str, str] = {"contents": "read"}


def _level(value: object) -> int:
    return LEVELS.index(value) if value in LEVELS else 0


def lacking(granted: Mapping[str, object], wanted: Mapping[str, str] = REQUIRED) -> list[str]:
    """'issues: write (granted: read)' for each wanted permission the grant does not reach."""
    return [f"{name}: {level} (granted: {granted.get(name) or 'none'})" for name, level in wanted.items()
            if _level(granted.get(name)) < _level(level)]


def can_act(granted: Mapping[str, object] | None) -> bool:
    """Whether labels and comments can be written; an unknown grant (None) is given the benefit of the doubt."""
    return granted is None or _level(granted.get("issues")) >= _level("write")
