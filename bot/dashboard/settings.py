"""Dashboard settings, from environment variables (docs/dashboard.md).

    DASHBOARD_PUBLIC=1         read-only pages (overview, queue, issues, catalog, /api/rules) need no login
    DASHBOARD_TOKENS=...       maintainers who may act: `name:sha256:<hex digest of the token>` (recommended) or
                               `name:<token>` (16+ characters), separated by commas or whitespace
    DASHBOARD_SECRET=...       signs session cookies; set it when several server processes share a hostname
                               (default: random per process, so a restart logs everyone out)
    DASHBOARD_COOKIE_SECURE=1  mark cookies Secure (default: only when the request came over HTTPS)
    DASHBOARD_SESSION_HOURS    how long a login lasts (default 12)
    DASHBOARD_LOW_CONFIDENCE   findings below this confidence put an issue in the queue (default 0.7)
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.app.settings import SettingsError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
_HEX = re.compile(r"[0-9a-f]{64}")
MIN_TOKEN = 16


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_tokens(raw: str) -> dict[str, str]:
    """`name:sha256:<hex>` / `name:<token>` entries -> {sha256 hex digest of the token: name}."""
    out: dict[str, str] = {}
    for entry in raw.replace(",", " ").split():
        name, sep, rest = entry.partition(":")
        if not sep or not _NAME.fullmatch(name):
            raise SettingsError(f"DASHBOARD_TOKENS: an entry must look like name:sha256:<hex> or name:<token>, "
                                f"not {entry[:20]!r}…")
        if rest.startswith("sha256:"):
            digest = rest[len("sha256:"):].lower()
            if not _HEX.fullmatch(digest):
                raise SettingsError(f"DASHBOARD_TOKENS: {name}: sha256: wants 64 hex digits")
        else:
            if len(rest) < MIN_TOKEN:
                raise SettingsError(f"DASHBOARD_TOKENS: {name}: a token needs at least {MIN_TOKEN} characters")
            digest = token_digest(rest)
        out[digest] = name
    return out


def _flag(env: Mapping[str, str], name: str) -> bool | None:
    raw = (env.get(name) or "").strip().lower()
    if not raw:
        return None
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be 1 or 0, not {raw!r}")


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, not {raw!r}") from None


@dataclass(frozen=True)
class DashboardSettings:
    public: bool = False
    tokens: dict[str, str] = field(default_factory=dict, repr=False)   # sha256(token) -> maintainer name
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    cookie_secure: bool | None = None        # None: Secure when the request is HTTPS
    session_seconds: float = 12 * 3600
    low_confidence: float = 0.7

    def maintainer(self, token: str) -> str | None:
        """The maintainer a presented token belongs to (digests compared in constant time)."""
        presented = token_digest(token)
        found = None
        for digest, name in self.tokens.items():
            if secrets.compare_digest(presented, digest):
                found = name
        return found


def dashboard_settings(env: Mapping[str, str] | None = None, **overrides: object) -> DashboardSettings:
    env = os.environ if env is None else env
    values: dict[str, object] = {
        "public": bool(_flag(env, "DASHBOARD_PUBLIC")),
        "tokens": parse_tokens(env.get("DASHBOARD_TOKENS") or ""),
        "cookie_secure": _flag(env, "DASHBOARD_COOKIE_SECURE"),
        "session_seconds": _number(env, "DASHBOARD_SESSION_HOURS", 12) * 3600,
        "low_confidence": _number(env, "DASHBOARD_LOW_CONFIDENCE", 0.7),
    }
    secret = env.get("DASHBOARD_SECRET")
    if secret:
        if len(secret) < MIN_TOKEN:
            raise SettingsError(f"DASHBOARD_SECRET needs at least {MIN_TOKEN} characters")
        values["secret"] = hashlib.sha256(b"vllm-triage-dashboard:" + secret.encode("utf-8")).digest()
    values.update(overrides)
    return DashboardSettings(**values)  # type: ignore[arg-type]
