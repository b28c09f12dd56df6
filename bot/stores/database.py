"""DATABASE_URL: which backend it names, and the Postgres driver, which is an optional extra."""

from __future__ import annotations

import importlib

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
POSTGRES_EXTRA = "pip install 'vllm-triage[postgres]'"


class MissingDriver(RuntimeError):
    """DATABASE_URL names Postgres but psycopg is not installed."""


def is_postgres(database_url: str) -> bool:
    return database_url.startswith(POSTGRES_SCHEMES)


def sqlite_path(database_url: str) -> str:
    """The file of a sqlite:///relative/path or sqlite:////absolute/path URL (empty: in memory)."""
    for prefix in ("sqlite:///", "sqlite://"):
        if database_url.startswith(prefix):
            return database_url[len(prefix):] or ":memory:"
    raise ValueError(f"DATABASE_URL must be sqlite:///PATH or postgresql://…, not {database_url.split(':')[0]}:…")


def postgres_driver_missing() -> str | None:
    """A one-line explanation when psycopg (the `postgres` extra) cannot be imported, else None."""
    for module in ("psycopg", "psycopg_pool"):
        try:
            importlib.import_module(module)
        except ImportError:
            return f"DATABASE_URL is postgresql:// but {module} is not installed: {POSTGRES_EXTRA}"
    return None


def require_postgres_driver() -> None:
    """Call before importing a Postgres backend."""
    problem = postgres_driver_missing()
    if problem is not None:
        raise MissingDriver(problem)
