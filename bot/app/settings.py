"""Server settings, read from environment variables only (README.md, "Configuration")."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.stores.database import is_postgres, postgres_driver_missing

MODES = ("dry-run", "shadow", "live")  # from most to least cautious
DEFAULT_SOURCES_BUILD = 10  # the newest releases the App builds into the raise-site index when it lacks them


class SettingsError(ValueError):
    """The environment does not describe a server that may start."""


def most_cautious(*modes: str) -> str:
    return min(modes, key=MODES.index)


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8080
    database_url: str = "sqlite:///var/vllm-triage.sqlite3"
    data_dir: Path = Path("var")
    webhook_secret: str | None = None
    app_id: str | None = None
    private_key: str | None = field(default=None, repr=False)
    github_api_url: str = "https://api.github.com"
    bot_login: str | None = None                 # e.g. "vllm-triage[bot]"; asked from GET /app when unset
    mode: str = "dry-run"                       # global ceiling; a repo's config can only be more cautious
    insecure_no_secret: bool = False
    api_token: str | None = field(default=None, repr=False)  # guards /api/* when set
    rules_dir: str | None = None
    core: str = "process"                       # where triage runs: process (default) | thread
    workers: int = 4
    intake_processes: int = 1                   # processes acknowledging webhooks on the port (bot/app/intake.py)
    max_attempts: int = 8                       # then the delivery is parked
    lease_seconds: float = 120.0
    retry_base_seconds: float = 2.0             # delivery retry backoff: base * 2**attempt, capped
    retry_max_seconds: float = 600.0
    max_inline_wait: float = 20.0               # longer rate-limit waits release the delivery instead of sleeping
    secondary_limit_wait: float = 60.0          # GitHub: wait at least a minute when a limit gives no hint
    http_retries: int = 4                       # per GitHub call, for 5xx / rate limits on idempotent calls
    http_backoff_seconds: float = 1.0
    http_timeout: float = 30.0
    comment_settle_seconds: float = 10.0        # after a comment POST's timeout + this, GitHub shows it or never will
    config_cache_seconds: float = 120.0
    max_body_bytes: int = 25 * 1024 * 1024
    poll_interval: float = 0.5
    sources_build: int = 0                      # newest releases built into the raise-site index in the background

    @property
    def has_credentials(self) -> bool:
        return bool(self.app_id and self.private_key)

    @property
    def uses_postgres(self) -> bool:
        return is_postgres(self.database_url)

    def check(self) -> None:
        """Refuse configurations that would run unverified or act without credentials."""
        if self.sources_build < 0:
            raise SettingsError(f"VLLM_TRIAGE_SOURCES_BUILD must be 0 or more, not {self.sources_build}")
        if self.core not in ("process", "thread"):
            raise SettingsError(f"VLLM_TRIAGE_CORE must be process or thread, not {self.core!r}")
        if not 1 <= self.intake_processes <= 64:
            raise SettingsError(f"VLLM_TRIAGE_INTAKE_PROCESSES must be between 1 and 64, not {self.intake_processes}")
        if self.mode not in MODES:
            raise SettingsError(f"VLLM_TRIAGE_MODE must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.mode != "dry-run" and not self.has_credentials:
            raise SettingsError(f"mode {self.mode} needs GITHUB_APP_ID and GITHUB_PRIVATE_KEY")
        if bool(self.app_id) != bool(self.private_key):
            raise SettingsError("set both GITHUB_APP_ID and GITHUB_PRIVATE_KEY (or neither, for dry-run)")
        if not self.webhook_secret:
            if self.mode != "dry-run" or self.has_credentials:
                raise SettingsError("GITHUB_WEBHOOK_SECRET is required: without it no delivery can be verified")
            if not self.insecure_no_secret:
                raise SettingsError("GITHUB_WEBHOOK_SECRET is not set; for a local dry-run on loopback pass "
                                    "--insecure-no-secret")
            if self.host not in ("127.0.0.1", "::1", "localhost"):
                raise SettingsError("--insecure-no-secret is only allowed when bound to loopback (HOST=127.0.0.1)")
        if self.uses_postgres and (problem := postgres_driver_missing()):
            raise SettingsError(problem)
        if not self.uses_postgres and not self.database_url.startswith("sqlite://"):
            raise SettingsError("DATABASE_URL must be sqlite:///PATH or postgresql://USER:PASSWORD@HOST/DB, not "
                                f"{self.database_url.split(':')[0]}:…")


def _env_float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, not {raw!r}") from None


def _private_key(env: Mapping[str, str]) -> str | None:
    key = env.get("GITHUB_PRIVATE_KEY") or None
    path = env.get("GITHUB_PRIVATE_KEY_PATH") or None
    if key is None and path:
        try:
            key = Path(path).read_text(encoding="utf-8")
        except OSError as e:
            raise SettingsError(f"GITHUB_PRIVATE_KEY_PATH: {e}") from None
    if key and "\\n" in key and "\n" not in key:
        key = key.replace("\\n", "\n")  # PEM pasted into a one-line env var
    return key


def from_env(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    env = os.environ if env is None else env
    app_id = env.get("GITHUB_APP_ID") or None
    key = _private_key(env)
    database_url = env.get("DATABASE_URL") or "sqlite:///var/vllm-triage.sqlite3"
    default_data_dir = "var"
    if database_url.startswith("sqlite:///") and len(database_url) > len("sqlite:///"):
        default_data_dir = str(Path(database_url[len("sqlite:///"):]).parent)
    values: dict[str, object] = dict(
        host=env.get("HOST") or "127.0.0.1",
        port=int(_env_float(env, "PORT", 8080)),
        database_url=database_url,
        data_dir=Path(env.get("VLLM_TRIAGE_DATA_DIR") or default_data_dir),
        webhook_secret=env.get("GITHUB_WEBHOOK_SECRET") or None,
        app_id=app_id,
        private_key=key,
        github_api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
        bot_login=env.get("VLLM_TRIAGE_BOT_LOGIN") or None,
        mode=env.get("VLLM_TRIAGE_MODE") or ("live" if app_id and key else "dry-run"),
        rules_dir=env.get("VLLM_TRIAGE_RULES_DIR") or None,
        core=env.get("VLLM_TRIAGE_CORE") or "process",
        api_token=env.get("VLLM_TRIAGE_API_TOKEN") or None,
        workers=int(_env_float(env, "VLLM_TRIAGE_WORKERS", 4)),
        intake_processes=int(_env_float(env, "VLLM_TRIAGE_INTAKE_PROCESSES", 1)),
        max_attempts=int(_env_float(env, "VLLM_TRIAGE_MAX_ATTEMPTS", 8)),
        lease_seconds=_env_float(env, "VLLM_TRIAGE_LEASE_SECONDS", 120.0),
        retry_base_seconds=_env_float(env, "VLLM_TRIAGE_RETRY_BASE_SECONDS", 2.0),
        retry_max_seconds=_env_float(env, "VLLM_TRIAGE_RETRY_MAX_SECONDS", 600.0),
        max_inline_wait=_env_float(env, "VLLM_TRIAGE_MAX_INLINE_WAIT", 20.0),
        secondary_limit_wait=_env_float(env, "VLLM_TRIAGE_SECONDARY_LIMIT_WAIT", 60.0),
        http_retries=int(_env_float(env, "VLLM_TRIAGE_HTTP_RETRIES", 4)),
        http_backoff_seconds=_env_float(env, "VLLM_TRIAGE_HTTP_BACKOFF_SECONDS", 1.0),
        http_timeout=_env_float(env, "VLLM_TRIAGE_HTTP_TIMEOUT", 30.0),
        comment_settle_seconds=_env_float(env, "VLLM_TRIAGE_COMMENT_SETTLE_SECONDS", 10.0),
        config_cache_seconds=_env_float(env, "VLLM_TRIAGE_CONFIG_CACHE_SECONDS", 120.0),
        poll_interval=_env_float(env, "VLLM_TRIAGE_POLL_INTERVAL", 0.5),
        sources_build=int(_env_float(env, "VLLM_TRIAGE_SOURCES_BUILD", DEFAULT_SOURCES_BUILD)),
    )
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]
